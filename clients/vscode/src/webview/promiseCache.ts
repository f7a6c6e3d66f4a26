/* Answers kept by key: the most recent `max` asked, in flight or settled. A
 * request asked again while on its way is not sent twice; a failed one is
 * forgotten, so the next ask sends it again. */
export class PromiseCache<K, V> {
  private readonly held = new Map<K, Promise<V>>();

  constructor(private readonly ask: (k: K) => Promise<V>, private readonly max: number) {}

  get(k: K): Promise<V> {
    let p = this.held.get(k);
    if (p) return p;
    p = this.ask(k);
    this.held.set(k, p);
    p.catch(() => { if (this.held.get(k) === p) this.held.delete(k); });
    if (this.held.size > this.max) this.held.delete(this.held.keys().next().value as K);
    return p;
  }
}
