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

/** The columns of a zoom or pan step's tiles; the Jupyter widget's zoom steps ask the same
 * (its `FIELDS`, clients/jupyter/js/src/range_client.ts, imports this list).
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

/** A reply's tracks with their bucket columns decoded (decodeBuckets) and their events' times restored (unpackTimes). */
export function decodeTracks(r: RangeReply): RangeColumns {
  unpackTimes(r);
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

/* The event times' trip through VS Code's relay (extension host → webview): its wait grows
 * with a message's bytes (bench/README.md, branch vsc13b), and a profile's clock takes 10-19
 * digits per time. The host re-encodes each events track of a columns reply (packTimes):
 * `startStep` (start[0] − the reply's start, then start[i] − start[i−1]) and `dur`
 * (end[i] − start[i]) instead of `start` and `end`; the page restores them (unpackTimes)
 * before anything reads the reply. Exact: BigInt arithmetic wherever a value is one. */
type Int = number | bigint;
const SAFE = 9007199254740991n;
const narrow = (x: bigint): Int => (x >= -SAFE && x <= SAFE ? Number(x) : x);
const sub = (a: Int, b: Int): Int => (typeof a === 'number' && typeof b === 'number' ? a - b : narrow(BigInt(a) - BigInt(b)));
const add = (a: Int, b: Int): Int => (typeof a === 'number' && typeof b === 'number' ? a + b : narrow(BigInt(a) + BigInt(b)));

type PackedEvents = { startStep?: Int[]; dur?: Int[] };

/** `r` (a columns reply) with its events' times as steps and durations (in place: the reply the
 * host just parsed, about to be posted; anything else is unchanged). */
export function packTimes<R>(r: R): R {
  const x = r as unknown as RangeReply;
  if (x?.format !== 'columns' || !Array.isArray(x.tracks)) return r;
  for (const t of x.tracks) {
    if (!('events' in t)) continue;
    const e = t.events as PackedEvents & { start?: Int[]; end?: Int[] };
    if (!e.start || !e.end) continue;
    const { start, end } = e, n = start.length, startStep = new Array<Int>(n), dur = new Array<Int>(n);
    let prev: Int = x.start as Int;
    for (let i = 0; i < n; i++) { startStep[i] = sub(start[i]!, prev); dur[i] = sub(end[i]!, start[i]!); prev = start[i]!; }
    delete e.start; delete e.end;
    e.startStep = startStep; e.dur = dur;
  }
  return r;
}

/** `r` with its events' `start` and `end` restored from packTimes' steps and durations (in place; a reply not packed is unchanged). */
export function unpackTimes<R>(r: R): R {
  const x = r as unknown as RangeReply;
  if (!Array.isArray(x?.tracks)) return r;
  for (const t of x.tracks) {
    if (!('events' in t)) continue;
    const e = t.events as PackedEvents & { start?: Int[]; end?: Int[] };
    if (!e.startStep || !e.dur) continue;
    const n = e.startStep.length, start = new Array<Int>(n), end = new Array<Int>(n);
    let at: Int = x.start as Int;
    for (let i = 0; i < n; i++) { at = add(at, e.startStep[i]!); start[i] = at; end[i] = add(at, e.dur[i]!); }
    e.start = start; e.end = end;
    delete e.startStep; delete e.dur;
  }
  return r;
}
