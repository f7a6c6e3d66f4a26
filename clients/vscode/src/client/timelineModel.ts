/* The timeline's view-model: which `timeline/range` tiles the view needs at
 * its power-of-two resolution (ns per pixel), which to prefetch around it,
 * and a cache of answers keyed by resolution and tile edges. Tiles are
 * aligned to multiples of their span, so bucket edges stay stable across pans
 * and a tile fetched once is reused for every view that touches it.
 * Free of DOM and vscode imports: the webview and the unit tests use it. */
import type { BucketColumns, RangeColumns, RangeReply, TrackColumns } from '../protocol/types';
import { relTime, type Int } from './exactJson';
import { TILE_FIELDS, decodeTracks } from './tileColumns';

export const TILE_PX = 512;

export interface View { start: number; end: number; width: number }
export interface TileKey { resolution: number; start: number; end: number }
/** A cached tile: its answer (always the columns format). */
export interface Tile extends TileKey { key: string; result: RangeColumns }

/** `fields`: the tiles ask what drawing needs (client/tileColumns TILE_FIELDS), the bucket columns of a
 * tooltip and a click come after (absent: every column). */
export type RangeRequest = { start: number; end: number; width: number; maxEvents: number; format: 'columns'; fields?: readonly string[] };
/** `signal`: aborted when the tile is no longer wanted (the fetch may then reject with CANCELLED). */
export type FetchRange = (p: RangeRequest, signal?: AbortSignal) => Promise<RangeColumns>;

/** A tile request the model cancelled (its view moved on): what it rejects with. */
export const CANCELLED = 'tile no longer wanted';
/** Whether `e` is a cancellation (the model's, or the server's -32800 answer to it), not a failure. */
export function isCancelled(e: unknown): boolean {
  return (e as Error)?.message === CANCELLED || (e as { code?: number })?.code === -32800 || (e as Error)?.name === 'AbortError';
}

/** Per tile, individual events up to this many (else buckets): about one per 2 px. */
export const MAX_EVENTS = TILE_PX / 2;

/** A tile's timeline/range request (offsets; the fetch moves them to the profile's clock). */
export function tileRequest(k: TileKey): RangeRequest {
  return { start: k.start, end: k.end, width: TILE_PX, maxEvents: MAX_EVENTS, format: 'columns', fields: TILE_FIELDS };
}

/** Smallest power of two ≥ ns per pixel (at least 1). */
export function resolutionFor(spanNs: number, widthPx: number): number {
  const per = Math.max(1, spanNs / Math.max(1, widthPx));
  return 2 ** Math.ceil(Math.log2(per) - 1e-9);
}

export function tileKey(t: TileKey): string {
  return `${t.resolution}:${t.start}:${t.end}`;
}

/** Aligned tiles covering the view, plus `prefetch` tiles on each side. */
export function tilesFor(view: View, prefetch = 1, bounds?: { start: number; end: number }): TileKey[] {
  const resolution = resolutionFor(view.end - view.start, view.width);
  const span = resolution * TILE_PX;
  const first = Math.floor(view.start / span) - prefetch;
  const last = Math.floor((view.end - 1) / span) + prefetch;
  const out: TileKey[] = [];
  for (let i = first; i <= last; i++) {
    const start = i * span;
    const end = start + span;
    if (bounds && (end <= bounds.start || start >= bounds.end)) continue;
    out.push({ resolution, start, end });
  }
  /* visible tiles first, prefetch after */
  const mid = (view.start + view.end) / 2;
  const visible = (t: TileKey) => t.end > view.start && t.start < view.end;
  return out.sort((a, b) => Number(visible(b)) - Number(visible(a)) || Math.abs(a.start - mid) - Math.abs(b.start - mid));
}

/** The tiles a zoom-in step from `view` at `anchor` (the pointer, else the
 * view's centre: where Ctrl+wheel, W/S and + zoom) needs at the next level
 * (half the ns per pixel). A step in by any factor that reaches that level
 * shows at most `width` px of it (its span is at most half the resolution's
 * reach), placed so that the anchor keeps its fraction of the view, clamped
 * into bounds as zoomView clamps: about a view's width of tiles, where the
 * whole view at the next level is twice that (branch vsc11 asked that: its
 * round trips were slower than a step's own, bench/README.md, branch vsc12).
 * Asked while the view is idle, so that Ctrl+wheel finds its next level held.
 * (Not the level out: a zoom out mostly returns to levels held already.) */
export function zoomNeighbourTiles(view: View, bounds?: { start: number; end: number }, anchor = (view.start + view.end) / 2): TileKey[] {
  const r = resolutionFor(view.end - view.start, view.width);
  if (r <= 1) return [];
  const span = view.end - view.start;
  let reach = (r / 2) * view.width; /* the widest view at the next level */
  if (bounds) reach = Math.min(reach, bounds.end - bounds.start);
  const frac = Math.max(0, Math.min(1, (anchor - view.start) / span));
  let lo = anchor - frac * reach;
  if (bounds) lo = Math.max(bounds.start, Math.min(lo, bounds.end - reach));
  return tilesAt(r / 2, lo - 1, lo + reach + 1, bounds); /* 1 ns each side: an edge on a tile's edge in floating point */
}

/** The aligned tiles of `resolution` covering [lo, hi), within bounds. */
function tilesAt(resolution: number, lo: number, hi: number, bounds?: { start: number; end: number }): TileKey[] {
  const span = resolution * TILE_PX, out: TileKey[] = [];
  if (bounds) { lo = Math.max(lo, bounds.start); hi = Math.min(hi, bounds.end); }
  for (let i = Math.floor(lo / span); i * span < hi; i++) out.push({ resolution, start: i * span, end: (i + 1) * span });
  return out;
}

export class TimelineModel {
  private cache = new Map<string, Tile>();
  private inflight = new Map<string, { p: Promise<Tile | undefined>; ctl: AbortController }>();
  private generation = 0;
  requests = 0;

  constructor(
    private readonly fetch: FetchRange,
    private readonly onTile: (t: Tile) => void = () => {},
    private readonly maxTiles = 256,
    readonly bounds?: { start: number; end: number },
  ) {}

  /** Fetches the view's missing tiles first, then (without waiting for them)
   * the prefetch ring around it; resolves when the visible tiles are cached. */
  async ensure(view: View, prefetch = 1): Promise<void> {
    const keys = tilesFor(view, prefetch, this.bounds);
    /* requests for tiles this view does not want are cancelled: a zoom's steps would otherwise queue each step's tiles before the last one's */
    const wanted = new Set(keys.map(tileKey));
    for (const [key, f] of this.inflight) if (!wanted.has(key)) { this.inflight.delete(key); f.ctl.abort(); }
    const isVisible = (k: TileKey) => k.end > view.start && k.start < view.end;
    await Promise.all(keys.filter(isVisible).map((k) => this.load(k)));
    for (const k of keys.filter((x) => !isVisible(x))) this.load(k).catch(() => { /* prefetch is best effort */ });
  }

  /** Asks for `keys` not held, best effort (a later view's ensure cancels those it does not want). */
  prefetch(keys: TileKey[]): void {
    for (const k of keys) this.load(k).catch(() => { /* prefetch is best effort */ });
  }

  /** Whether every one of `keys` is held. */
  holds(keys: TileKey[]): boolean { return keys.every((k) => this.cache.has(tileKey(k))); }

  private load(k: TileKey): Promise<Tile | undefined> {
    const key = tileKey(k);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit); /* LRU: most recent last */
      return Promise.resolve(hit);
    }
    const pending = this.inflight.get(key);
    if (pending) return pending.p;
    const gen = this.generation;
    this.requests++;
    const ctl = new AbortController();
    const mine = () => this.inflight.get(key)?.ctl === ctl;
    const p = this.fetch(tileRequest(k), ctl.signal)
      .then((answer) => {
        if (ctl.signal.aborted) throw new Error(CANCELLED);
        if (mine()) this.inflight.delete(key);
        if (gen !== this.generation) return undefined;
        const tile: Tile = { ...k, key, result: answer };
        this.cache.set(key, tile);
        while (this.cache.size > this.maxTiles) this.cache.delete(this.cache.keys().next().value as string);
        this.onTile(tile);
        return tile;
      })
      .catch((e) => {
        if (mine()) this.inflight.delete(key);
        throw ctl.signal.aborted ? new Error(CANCELLED) : e;
      });
    this.inflight.set(key, { p, ctl });
    return p;
  }

  /** Cancels every request on its way (the block left the view, or was replaced). */
  abandon(): void {
    for (const f of this.inflight.values()) f.ctl.abort();
    this.inflight.clear();
  }

  /** The cached tiles. */
  tiles(): IterableIterator<Tile> { return this.cache.values(); }

  has(k: TileKey): boolean { return this.cache.has(tileKey(k)); }

  /** Caches a tile asked elsewhere (the first tiles, which the host sends with init). */
  seed(k: TileKey, result: RangeColumns): void {
    const key = tileKey(k);
    if (this.cache.has(key)) return;
    this.cache.set(key, { resolution: k.resolution, start: k.start, end: k.end, key, result });
    while (this.cache.size > this.maxTiles) this.cache.delete(this.cache.keys().next().value as string);
  }

  /** Cached tiles to draw for the view: the exact resolution where present,
   * else the nearest cached resolution covering the gap (so pans never blank). */
  tilesToDraw(view: View): Tile[] {
    const exact = tilesFor(view, 0, this.bounds);
    const out: Tile[] = [];
    for (const k of exact) {
      const t = this.cache.get(tileKey(k));
      if (t) { out.push(t); continue; }
      let best: Tile | undefined;
      for (const c of this.cache.values()) {
        if (c.end > k.start && c.start < k.end && (!best || Math.abs(Math.log2(c.resolution / k.resolution)) < Math.abs(Math.log2(best.resolution / k.resolution)))) best = c;
      }
      if (best) for (const c of this.cache.values()) if (c.resolution === best.resolution && c.end > k.start && c.start < k.end && !out.includes(c)) out.push(c);
    }
    return out;
  }

  /** Drops everything (new profile id after a restart). */
  clear(): void {
    this.generation++;
    this.cache.clear();
    this.abandon();
  }

  get size(): number { return this.cache.size; }
}

/** One track's part of one tile. */
export interface TrackPart { tile: Tile; tr: TrackColumns }

/** Per track id, its part in every tile (drawing order). */
export function byTrack(tiles: Tile[]): Map<string, TrackPart[]> {
  const m = new Map<string, TrackPart[]>();
  for (const tile of tiles) for (const tr of tile.result.tracks) {
    const l = m.get(tr.id);
    if (l) l.push({ tile, tr }); else m.set(tr.id, [{ tile, tr }]);
  }
  return m;
}

/** Something drawn: an event, or a bucket's longest item (start/end are the
 * bucket's, dur the item's own duration; count the bucket's items). */
export interface Item { id: number; name: string; kind: string; start: number; end: number; dur: number; count?: number }

/** Calls `fn` with every item of `parts` touching [lo, hi] (bucket items only when
 * the bucket has a longest item). Returns early when `fn` returns true. */
export function forEachItem(parts: TrackPart[], lo: number, hi: number, bucketKind: string, fn: (it: Item) => boolean | void): void {
  for (const { tile, tr } of parts) {
    const names = tile.result.names;
    if ('events' in tr) {
      const e = tr.events;
      for (let i = 0; i < e.id.length; i++) {
        if (e.start[i]! > hi || e.end[i]! < lo) continue;
        if (fn({ id: e.id[i]!, name: names[e.name[i]!] ?? '', kind: names[e.kind[i]!] ?? '', start: e.start[i]!, end: e.end[i]!, dur: e.end[i]! - e.start[i]! })) return;
      }
    } else {
      const b = tr.buckets, L = b.longest, S = tile.result.start, R = tile.result.resolution;
      if (!L) continue; /* asked after drawing (bucketsLacking) */
      for (let i = 0; i < b.index.length; i++) {
        const start = S + b.index[i]! * R, end = start + R;
        if (start > hi || end < lo || L.id[i]! < 0) continue;
        if (fn({ id: L.id[i]!, name: L.names[L.name[i]!] ?? '', kind: bucketKind, start, end, dur: L.dur[i]!, count: L.count[i]! })) return;
      }
    }
  }
}

/** The bucket tracks of `parts` with a bucket touching [lo, hi] whose count and longest op
 * (client/tileColumns BUCKET_DETAIL_FIELDS) are not held yet. */
export function bucketsLacking(parts: TrackPart[], lo: number, hi: number): Array<{ tile: Tile; id: string; buckets: BucketColumns }> {
  const out: Array<{ tile: Tile; id: string; buckets: BucketColumns }> = [];
  for (const { tile, tr } of parts) {
    if (!('buckets' in tr) || tr.buckets.longest) continue;
    const b = tr.buckets, S = tile.result.start, R = tile.result.resolution;
    if (b.index.some((ix) => S + ix * R <= hi && S + (ix + 1) * R >= lo)) out.push({ tile, id: tr.id, buckets: b });
  }
  return out;
}

/** The shortest item touching [lo, hi] (what a pointer there points at). */
export function shortestItem(parts: TrackPart[], lo: number, hi: number, bucketKind: string): Item | undefined {
  let best: Item | undefined;
  forEachItem(parts, lo, hi, bucketKind, (it) => { if (!best || it.end - it.start < best.end - best.start) best = it; });
  return best;
}

/** Zoom the view by `factor` (< 1 zooms in) around `anchorNs`, clamped to bounds. */
export function zoomView(view: View, factor: number, anchorNs: number, bounds?: { start: number; end: number }, minSpan = 10): View {
  let span = Math.max(minSpan, (view.end - view.start) * factor);
  if (bounds) span = Math.min(span, bounds.end - bounds.start);
  const frac = (anchorNs - view.start) / (view.end - view.start);
  let start = anchorNs - frac * span;
  return clampView({ start, end: start + span, width: view.width }, bounds);
}

export function panView(view: View, deltaNs: number, bounds?: { start: number; end: number }): View {
  return clampView({ start: view.start + deltaNs, end: view.end + deltaNs, width: view.width }, bounds);
}

function clampView(v: View, bounds?: { start: number; end: number }): View {
  if (!bounds) return v;
  const span = v.end - v.start;
  let start = Math.max(bounds.start, Math.min(v.start, bounds.end - span));
  return { start, end: start + span, width: v.width };
}

export type TrackRangeParams = RangeRequest & { tracks: string[] };

/** Merges the range requests for one tile that the row blocks make in the same
 * tick into a single request for all their tracks (one server call, one bridge
 * crossing, one names table), and hands each block the tracks it asked for. */
export function coalescingFetch<R extends { tracks: Array<{ id: string }> }>(fetch: (p: TrackRangeParams, signal?: AbortSignal) => Promise<R>): (p: TrackRangeParams, signal?: AbortSignal) => Promise<R> {
  type Waiter = { ids: string[]; resolve: (r: R) => void; reject: (e: unknown) => void };
  type Group = { p: TrackRangeParams; tracks: Set<string>; waiters: Waiter[]; ctl: AbortController };
  const groups = new Map<string, Group>();
  return (p, signal) => new Promise<R>((resolve, reject) => {
    if (signal?.aborted) { reject(new Error(CANCELLED)); return; }
    const key = `${p.start}:${p.end}:${p.width}:${p.maxEvents}`;
    let g = groups.get(key);
    if (!g) {
      const group: Group = { p, tracks: new Set<string>(), waiters: [], ctl: new AbortController() };
      groups.set(key, (g = group));
      queueMicrotask(() => {
        groups.delete(key);
        if (!group.waiters.length) return; /* every block cancelled before it went */
        fetch({ ...group.p, tracks: [...group.tracks] }, group.ctl.signal).then((r) => {
          if (group.waiters.length === 1) { group.waiters[0]!.resolve(r); return; }
          for (const w of group.waiters) {
            const want = new Set(w.ids);
            w.resolve({ ...r, tracks: r.tracks.filter((t) => want.has(t.id)) });
          }
        }, (e) => { for (const w of group.waiters) w.reject(e); });
      });
    }
    for (const id of p.tracks) g.tracks.add(id);
    const w: Waiter = { ids: p.tracks, resolve, reject };
    const group = g;
    group.waiters.push(w);
    /* a block that no longer wants the tile leaves the request; the last one to leave cancels it */
    signal?.addEventListener('abort', () => {
      const i = group.waiters.indexOf(w);
      if (i < 0) return;
      group.waiters.splice(i, 1);
      reject(new Error(CANCELLED));
      if (!group.waiters.length) group.ctl.abort();
    }, { once: true });
  });
}

/** A columns reply with its times (the grid's start and end, events' start and
 * end) as offsets from `origin` (client/exactJson: exact where the reply has
 * BigInt), its bucket columns decoded (client/tileColumns). Bucket columns are
 * durations, percents and grid indexes: not moved. */
export function rebaseColumns(raw: RangeReply, origin: bigint): RangeColumns {
  const r = decodeTracks(raw);
  if (origin === 0n && typeof r.start === 'number' && typeof r.end === 'number') return r;
  const rel = (t: Int) => relTime(t, origin);
  const times = (a: Int[]) => { const out = new Array<number>(a.length); for (let i = 0; i < a.length; i++) out[i] = rel(a[i]!); return out; };
  return {
    ...r, start: rel(r.start), end: rel(r.end),
    tracks: r.tracks.map((t) => ('events' in t ? { ...t, events: { ...t.events, start: times(t.events.start), end: times(t.events.end) } } : t)),
  };
}
