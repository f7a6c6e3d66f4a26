/* Work that can wait until a profile's timeline has drawn its first frame
 * (the findings' report/generate: seconds of server CPU on a large profile)
 * waits here, so that it does not compete with the first frame's
 * timeline/range requests on the server and the machine. A profile shown in
 * no timeline (opened for an agent, say) is waited for `timeoutMs` at most. */

export class FirstFrameGate {
  private readonly gates = new Map<string, { drawn: boolean; done: Promise<void>; open: () => void }>();

  private gate(key: string) {
    let g = this.gates.get(key);
    if (!g) {
      let open = () => {};
      const done = new Promise<void>((r) => { open = r; });
      g = { drawn: false, done, open };
      this.gates.set(key, g);
    }
    return g;
  }

  /** The timeline of `key` has drawn its first complete frame. */
  drawn(key: string): void {
    const g = this.gate(key);
    g.drawn = true;
    g.open();
  }

  /** Resolves once `key` has drawn (at once if it has), or after `timeoutMs`. */
  wait(key: string, timeoutMs: number): Promise<void> {
    const g = this.gate(key);
    if (g.drawn) return Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([g.done, new Promise<void>((r) => { timer = setTimeout(r, timeoutMs); })]).finally(() => clearTimeout(timer));
  }

  /** `key` was closed: a later open waits for its own first frame. */
  forget(key: string): void {
    this.gates.get(key)?.open();
    this.gates.delete(key);
  }
}
