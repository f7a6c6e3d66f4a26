// The bucket columns a tooltip and a click need beyond drawing's, asked for once a view's data
// is drawn: hovering a GPU bucket then shows its count, exact busy time and longest op from
// data the page holds (no request, no round trip), and a click on it asks for that op's
// details directly. A zoom step's own reply stays as small as drawing needs (FIELDS); these
// columns (count, busyNs, longestId, longestDur, longestName: ~40-80 KB deflated for a screen
// of GPU rows at 10M kernels, 10-20x the drawing's) follow it in a reply of their own.
import { BUCKET_FIELDS, RangeClient, RangeData, mergeBucketCols } from "./range_client";

export class BucketCols {
  /** the data whose columns are asked for now, and the reply's promise */
  private asking: { d: RangeData; done: Promise<void> } | null = null;
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
    if (!need.length || !d.asked) return;
    if (this.asking) {
      if (this.asking.d !== d) this.next = { d, ids: need };
      return;
    }
    const a = d.asked;
    this.asked++;
    const done = this.client
      .ask("buckets", { start: a.start, end: a.end, width: a.width, tracks: need, fields: BUCKET_FIELDS, inflate: true })
      .then((m) => {
        const n = mergeBucketCols(d, m);
        this.merged += n;
        if (n) this.onMerged(d);
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

  /** The reply in flight for `d`'s columns, if any (a hover waits for it rather than asking). */
  pending(d: RangeData): Promise<void> | null {
    return this.asking?.d === d ? this.asking.done : null;
  }
}
