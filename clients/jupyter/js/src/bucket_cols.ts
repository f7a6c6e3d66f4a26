// The bucket columns a tooltip and a click need beyond drawing's, asked for once a view's data
// is drawn (not while a drag pans) and decoded when first needed: hovering a GPU bucket then shows its count, exact busy time and longest op from
// data the page holds (no request, no round trip), and a click on it asks for that op's
// details directly. A zoom step's own reply stays as small as drawing needs (FIELDS); these
// columns (count, busyNs, longestId, longestDur, longestName: ~40-80 KB deflated for a screen
// of GPU rows at 10M kernels, 10-20x the drawing's) follow it in a reply of their own.
import { BUCKET_FIELDS, RangeClient, RangeData, mergeBucketCols } from "./range_client";

export class BucketCols {
  /** the data whose columns are asked for now, and the reply's promise */
  private asking: { d: RangeData; done: Promise<void> } | null = null;
  /** the last reply, decoded only when a hover or a click needs it (decoding ~100-250 KB of JSON
   *  after every view change would take the page's main thread from the next pan or zoom) */
  private held: { d: RangeData; m: Record<string, unknown> } | null = null;
  /** the newest data to ask for when the request in flight returns */
  private next: { d: RangeData; ids: string[] } | null = null;
  /** requests sent and tracks merged (tests, bench) */
  asked = 0;
  merged = 0;

  constructor(private client: RangeClient, private onMerged: (d: RangeData) => void) {}

  /** Asks for the bucket columns of `ids` (GPU bucket tracks of `d` that lack them) in d's
   *  window and width; one request in flight, the newest data asked next (older data is dropped). */
  want(d: RangeData, ids: string[]): void {
    const need = ids.filter((id) => {
      const t = d.tracks.get(id);
      return t?.bk && !t.bk.count && t.n > 0;
    });
    if (!need.length || !d.asked || this.off) return;
    if (this.asking) {
      if (this.asking.d !== d) this.next = { d, ids: need };
      return;
    }
    if (this.held && this.held.d !== d) this.held = null; // another view's
    const a = d.asked;
    this.asked++;
    const done = this.client
      .ask("buckets", { start: a.start, end: a.end, width: a.width, tracks: need, fields: BUCKET_FIELDS, inflate: true })
      .then((m) => {
        this.held = { d, m };
      })
      .catch(() => undefined) // the tooltip asks for its bucket then ("bucket")
      .finally(() => {
        this.asking = null;
        const nx = this.next;
        this.next = null;
        if (nx) this.want(nx.d, nx.ids);
      });
    this.asking = { d, done };
  }

  /** Merges the columns held for `d` into it (once); whether any track got them. */
  take(d: RangeData): boolean {
    if (this.held?.d !== d) return false;
    const { m } = this.held;
    this.held = null;
    let n = 0;
    try {
      n = mergeBucketCols(d, m);
    } catch (e) {
      console.warn("nsys-ai: bad bucket columns", e);
    }
    this.merged += n;
    if (n) this.onMerged(d);
    return n > 0;
  }

  /** tests: off, nothing is asked (and what is held is dropped), so the tooltip asks "bucket" */
  off = false;

  drop(): void {
    this.held = null;
    this.next = null;
  }

  /** The reply in flight for `d`'s columns, if any (a hover waits for it rather than asking). */
  pending(d: RangeData): Promise<void> | null {
    return this.asking?.d === d ? this.asking.done : null;
  }
}
