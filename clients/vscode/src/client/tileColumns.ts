/* Which timeline/range columns the timeline asks for, and how a reply's
 * bucket columns become what it holds. A zoom or pan step asks only what
 * drawing needs (TILE_FIELDS: the events' columns, and per bucket its grid
 * step and busy percent); what a tooltip and a click need on a bucket (its
 * count and longest op) is asked afterwards, per tile and track
 * (BUCKET_DETAIL_FIELDS): for the view once it is drawn, or for the bucket
 * under the pointer. VS Code's relay (extension host → webview) waits longer
 * the more bytes a message carries, so the step's own replies stay small.
 * Free of DOM and vscode imports: the webview and the unit tests use it. */
import type { BucketColumns, BucketLongest, RangeColumns, RangeReply, TrackColumns } from '../protocol/types';

/** The columns of a zoom or pan step's tiles: the same list as the Jupyter widget's
 * `FIELDS` (clients/jupyter/js/src/range_client.ts; a separate package, so mirrored here).
 * No `depth` (rows are drawn flat) and no bucket name: a bucket is drawn in its track's
 * colour, its height and opacity from its busy share. */
export const TILE_FIELDS: readonly string[] = ['id', 'start', 'end', 'name', 'kind', 'indexStep', 'busyPct'];

/** The bucket columns a tooltip and a click need (the Jupyter widget's `BUCKET_FIELDS` less
 * `busyNs`: the tooltip shows the longest op, not the exact busy time). `indexStep` checks
 * that the buckets are the tile's own. */
export const BUCKET_DETAIL_FIELDS: readonly string[] = ['indexStep', 'count', 'longestId', 'longestDur', 'longestName'];

type RawBuckets = Extract<RangeReply['tracks'][number], { buckets: unknown }>['buckets'];

/** A reply's bucket columns as the timeline holds them: `index` (from `indexStep`, or the
 * reply's `index`), `busyPct` (the reply's, else from `busyNs` as the server computes it:
 * whole percent of the resolution, rounded up), and `longest` when the reply has it (its
 * `longestName` indexes into `names`, the reply's table). */
export function decodeBuckets(b: RawBuckets, resolution: number, names: string[]): BucketColumns {
  let index = b.index;
  if (!index && b.indexStep) {
    index = new Array<number>(b.indexStep.length);
    let at = 0;
    for (let j = 0; j < index.length; j++) index[j] = at += b.indexStep[j]!;
  }
  let busyPct = b.busyPct;
  if (!busyPct && b.busyNs) {
    const R = Math.max(1, resolution);
    busyPct = b.busyNs.map((ns) => (Number(ns) <= 0 ? 0 : Math.min(100, Math.ceil((Number(ns) * 100) / R))));
  }
  const out: BucketColumns = { index: index ?? [], busyPct: busyPct ?? [] };
  if (b.longestId && b.count && b.longestDur && b.longestName) out.longest = { count: b.count, id: b.longestId, dur: b.longestDur, name: b.longestName, names };
  return out;
}

/** A reply's tracks with their bucket columns decoded (decodeBuckets); events as they are. */
export function decodeTracks(r: RangeReply): RangeColumns {
  const names = r.names as string[];
  const tracks = r.tracks.map((t): TrackColumns => ('buckets' in t
    ? { id: t.id, buckets: decodeBuckets(t.buckets, r.resolution, names) }
    : t as TrackColumns));
  return { ...r, tracks } as RangeColumns;
}

/** Gives `target` (a tile's bucket track) the `longest` columns of `from` (the same track of
 * a reply for the same tile asked with BUCKET_DETAIL_FIELDS) when both have the same buckets;
 * whether it did. */
export function attachLongest(target: BucketColumns, from: BucketColumns): boolean {
  const L: BucketLongest | undefined = from.longest;
  if (!L || from.index.length !== target.index.length || L.id.length !== target.index.length) return false;
  for (let j = 0; j < from.index.length; j++) if (from.index[j] !== target.index[j]) return false;
  target.longest = L;
  return true;
}
