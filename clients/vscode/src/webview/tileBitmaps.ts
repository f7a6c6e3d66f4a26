/* Each timeline tile rendered once (in idle time after the first frame), at its own resolution, into a bitmap of
 * all rows; frames then blit bitmaps (scaled by resolution / ns-per-pixel),
 * so a pan or zoom frame costs a few drawImage calls whatever the number of
 * kernels. Rectangles are written straight into pixels (tens of thousands of
 * 1-px buckets cost milliseconds this way, not canvas calls). */
import type { Tile } from '../client/timelineModel';
import { TILE_PX } from '../client/timelineModel';
import { alphaLevel, blend, colorKey, pixelOf } from './colors';
import { bucketKind, type Row } from './tracks';

export interface Theme { bg: [number, number, number]; grid: [number, number, number] }

/** Every TileBitmaps with tiles waiting: idle time renders them in slices of at most SLICE_MS
 * across all of them (a row block each), every tile a frame asked for before any for the next
 * input, and yields to input between slices. */
const SLICE_MS = 4;
const waiting = new Set<TileBitmaps>();
let sliceQueued = false;

function queueSlice(): void {
  if (sliceQueued) return;
  sliceQueued = true;
  setTimeout(runSlice, 0);
}

function runSlice(): void {
  sliceQueued = false;
  const t0 = performance.now(), drew = new Set<TileBitmaps>();
  outer: for (const later of [false, true]) {
    for (const b of waiting) {
      for (;;) {
        if (performance.now() - t0 > SLICE_MS) break outer;
        if (!b.renderOne(later)) break;
        if (!later) drew.add(b);
      }
    }
  }
  for (const b of [...waiting]) if (!b.busy) { waiting.delete(b); drew.add(b); }
  for (const b of drew) b.ready();
  if (waiting.size) queueSlice();
}

export class TileBitmaps {
  private cache = new Map<string, { tile: Tile; canvas: HTMLCanvasElement }>();
  private pixels = new Map<number, number>();
  private stamp = '';
  /** Tiles a frame asked for, then tiles for the next input: rendered in idle time in this order. */
  private queue = new Map<string, { tile: Tile; rows: Row[]; theme: Theme; dpr: number }>();
  private laterQueue = new Map<string, { tile: Tile; rows: Row[]; theme: Theme; dpr: number }>();

  /** `onReady` is called after bitmaps were rendered in idle time. */
  constructor(private readonly rowH: number, private readonly onReady: () => void, private readonly maxTiles = 48) {}

  /** Drops every bitmap when what they depend on changes (theme, rows, dpr). */
  invalidate(stamp: string): void {
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.cache.clear();
    this.pixels.clear();
    this.queue.clear();
    this.laterQueue.clear();
  }

  peek(tile: Tile): HTMLCanvasElement | undefined {
    const hit = this.cache.get(tile.key);
    if (!hit) return undefined;
    this.cache.delete(tile.key);
    this.cache.set(tile.key, hit);
    return hit.canvas;
  }

  /** Bitmaps of any resolution overlapping [start, end) (to fill gaps while exact ones render). */
  overlapping(start: number, end: number): Array<{ tile: Tile; canvas: HTMLCanvasElement }> {
    return [...this.cache.values()].filter((b) => b.tile.end > start && b.tile.start < end);
  }

  /** Renders the tile now (first frame, or within a frame's budget) or in idle time (pans and
   * zooms stay cheap). `later`: a tile for the next input (prefetched), rendered after every
   * tile a frame asked for. */
  request(tile: Tile, rows: Row[], theme: Theme, dpr: number, now: boolean, later = false): HTMLCanvasElement | undefined {
    if (now) { this.laterQueue.delete(tile.key); return this.store(tile, this.render(tile, rows, theme, dpr)); }
    const job = { tile, rows, theme, dpr };
    if (!later) { this.laterQueue.delete(tile.key); this.queue.set(tile.key, job); }
    else if (!this.queue.has(tile.key) && !this.cache.has(tile.key)) this.laterQueue.set(tile.key, job);
    waiting.add(this);
    queueSlice();
    return undefined;
  }

  /** Renders one queued tile (a frame's, or with `later` one for the next input); false when there is none. */
  renderOne(later: boolean): boolean {
    const q = later ? this.laterQueue : this.queue;
    const first = q.entries().next();
    if (first.done) return false;
    const [key, j] = first.value;
    q.delete(key);
    if (!this.cache.has(key)) this.store(j.tile, this.render(j.tile, j.rows, j.theme, j.dpr));
    return true;
  }

  /** Whether tiles wait to be rendered. */
  get busy(): boolean { return this.queue.size + this.laterQueue.size > 0; }

  /** Forgets the tiles waiting (the block was replaced). */
  drop(): void { this.queue.clear(); this.laterQueue.clear(); waiting.delete(this); }

  /** Tells the timeline that bitmaps it asked for are ready. */
  ready(): void { this.onReady(); }

  private store(tile: Tile, canvas: HTMLCanvasElement): HTMLCanvasElement {
    this.cache.set(tile.key, { tile, canvas });
    while (this.cache.size > this.maxTiles) this.cache.delete(this.cache.keys().next().value as string);
    return canvas;
  }

  private pix(key: number, lvl: number, bg: Theme['bg']): number {
    const id = key * 8 + lvl;
    let p = this.pixels.get(id);
    if (p === undefined) { p = pixelOf(key, lvl, bg); this.pixels.set(id, p); }
    return p;
  }

  private render(tile: Tile, rows: Row[], theme: Theme, dpr: number): HTMLCanvasElement {
    const W = Math.round(TILE_PX * dpr), H = Math.max(1, Math.round(rows.length * this.rowH * dpr));
    const canvas = document.createElement('canvas');
    canvas.width = W; canvas.height = H;
    const ctx = canvas.getContext('2d')!;
    const img = ctx.createImageData(W, H);
    const px = new Uint32Array(img.data.buffer);
    px.fill(blend(theme.bg, 1, theme.bg));
    const gridPx = blend(theme.grid, 1, theme.bg);
    const fill = (x0: number, y0: number, w: number, hh: number, color: number) => {
      const c0 = Math.max(0, Math.round(x0 * dpr)), c1 = Math.min(W, Math.max(c0 + 1, Math.round((x0 + w) * dpr)));
      const r0 = Math.max(0, Math.round(y0 * dpr)), r1 = Math.min(H, Math.round((y0 + hh) * dpr));
      if (c1 <= c0) return;
      if (c1 - c0 <= 4) {
        for (let r = r0, o = r0 * W; r < r1; r++, o += W) for (let c = c0; c < c1; c++) px[o + c] = color;
      } else {
        for (let r = r0; r < r1; r++) px.fill(color, r * W + c0, r * W + c1);
      }
    };
    const res = tile.resolution, t0 = tile.start, RH = this.rowH;
    const x = (ns: number) => (ns - t0) / res;
    const r = tile.result, names = r.names;
    const byId = new Map(r.tracks.map((tr) => [tr.id, tr]));
    /* palette keys per (name, kind) index pair of this tile's names table */
    const keys = new Map<number, number>();
    const keyOf = (ni: number, kind: string, ki = -1) => { /* ki < 0: the kind is `kind` (kernel, nvtx or api) */
      const id = ni * (names.length + 3) + (ki >= 0 ? ki + 3 : kind === 'nvtx' ? 1 : kind === 'api' ? 2 : 0);
      let k = keys.get(id);
      if (k === undefined) { k = colorKey(names[ni] ?? '', ki >= 0 ? names[ki] ?? '' : kind); keys.set(id, k); }
      return k;
    };
    rows.forEach((row, i) => {
      const y = i * RH;
      fill(0, y + RH - 1, TILE_PX, 1, gridPx);
      for (const id of row.ids) { /* several tracks (a GPU's utilisation, a collapsed group): drawn merged */
      const tr = byId.get(id);
      if (!tr) continue;
      if ('events' in tr) {
        const e = tr.events;
        for (let j = 0; j < e.id.length; j++) {
          const x0 = Math.max(0, x(e.start[j]!)), x1 = Math.min(TILE_PX, Math.max(x(e.end[j]!), x0 + 1));
          if (x1 <= 0 || x0 >= TILE_PX) continue;
          fill(x0, y + 2, x1 - x0, RH - 5, this.pix(keyOf(e.name[j]!, '', e.kind[j]!), 3, theme.bg));
        }
      } else {
        const b = tr.buckets, kind = bucketKind(id);
        /* bucket j covers [r.start + index*R, +R); R is this tile's resolution */
        const bx = (r.start - t0) / res, bw = r.resolution / res;
        /* in the track's colour (its kind's): the tile has its buckets' busy share, not their ops' names (client/tileColumns) */
        const key = colorKey('', kind);
        for (let j = 0; j < b.index.length; j++) {
          const pct = b.busyPct[j]!;
          if (pct <= 0) continue;
          const x0 = Math.max(0, bx + b.index[j]! * bw), x1 = Math.min(TILE_PX, Math.max(x0 + bw, x0 + 1));
          const busy = Math.min(1, pct / 100);
          const bh = Math.max(3, (RH - 5) * Math.max(0.25, busy));
          fill(x0, y + RH - 3 - bh, x1 - x0, bh, this.pix(key, alphaLevel(busy), theme.bg));
        }
      }
      }
    });
    ctx.putImageData(img, 0, 0);
    return canvas;
  }
}
