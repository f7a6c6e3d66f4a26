/* A page that loads while its profile opens: what it sends meanwhile (its
 * `ready`) is held, then handed, in order and before anything later, to the
 * handler made once the profile is open; dropped when opening fails or the
 * page closes first. Free of vscode imports (the profile editor uses it). */

export interface Disposable { dispose(): void }

/**
 * subscribe: listens to the page's messages (returns the subscription);
 * opening: resolves to the open profile, or undefined when opening failed;
 * connect: makes the handler of later messages from the open profile and the held ones;
 * failed: what to do instead when opening failed.
 * Returns a disposable for the page closing (nothing is connected after it).
 */
export function holdWhileOpening<P>(
  subscribe: (listener: (m: unknown) => void) => Disposable,
  opening: Promise<P | undefined>,
  connect: (profile: P, held: readonly unknown[]) => void,
  failed: () => void,
): Disposable {
  const held: unknown[] = [];
  const hold = subscribe((m) => held.push(m));
  let closed = false;
  void opening.then((profile) => {
    hold.dispose();
    if (closed) return;
    if (profile === undefined) failed(); else connect(profile, held);
  });
  return { dispose: () => { closed = true; hold.dispose(); } };
}
