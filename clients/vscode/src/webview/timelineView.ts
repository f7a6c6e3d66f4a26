/* The timeline canvas: rows of GPU streams and NVTX ranges, drawn from the
 * TimelineModel's cached tiles. Input as in Nsight Systems and Perfetto
 * (client/timelineNav's KEYS): Ctrl+wheel or W/S zoom at the cursor, wheel,
 * drag or A/D pan, a drag on the time axis (or Shift+drag) selects a range,
 * double-click zooms to a slice, F fits, Home resets, n/p step through
 * kernels, Enter selects. Search matches are outlined. Frames are timed with
 * performance marks (window.__nsysPerf collects them for tests). */
import { TimelineModel, isCancelled, zoomNeighbourTiles, byTrack, bucketsLacking, coalescingFetch, forEachItem, shortestItem, panView, zoomView, tileRequest, type View, resolutionFor, tilesFor, type Tile, type TrackPart, type TrackRangeParams, type RangeRequest } from '../client/timelineModel';
import { BUCKET_DETAIL_FIELDS, attachLongest } from '../client/tileColumns';
import { formatNs } from '../client/format';
import { formatCursor, timeAxis } from '../client/timeAxis';
import type { BucketColumns, Int, RangeColumns, Track } from '../protocol/types';
import { colorFor, cssToRgb } from './colors';
import { TileBitmaps } from './tileBitmaps';
import { cssVar, h, onThemeChange } from './dom';
import { bucketKind, isGpuId, type Row } from './tracks';
import { newTreeState, toggle, trackTree, visibleRows, type TreeNode, type TreeState } from '../client/trackTree';
import { tracksBehind } from '../client/tracksBehind';
import { dragWindow, frameSpan, type Match } from '../client/timelineNav';
import { ROW_BLOCK, type FirstTile, type FirstView } from '../client/firstTiles';
import { carriedTiles, carryInto, withCarried, type Carried, type SomeCarried } from './tileCarry';

/** The label gutter's default width (drag its edge to resize). */
/** How long a view rests before the timeline asks for what the next input would want. */
const IDLE_MS = 60;
/** After the idle prefetch, how long a view rests before its buckets' count and longest op are asked (askViewLongest). */
const LONGEST_IDLE_MS = 300;
/** How long a frame may spend rendering tile bitmaps itself (the rest render in idle time,
 * coarser bitmaps under them meanwhile): a zoom step or a pan whose tiles are held then
 * completes in its first frame. */
const SYNC_RENDER_MS = 8;
/** How long the pointer rests on a GPU op after its tooltip has its details before `onIntent` asks what a click on it would show. */
const INTENT_REST_MS = 50;
const GUTTER = 210;
const INDENT = 12;
const ROW_H = 22;
const AXIS_H = 22;
const PAN_ZOOM_KEYS = new Set(['+', '=', 'w', 'W', '-', '_', 's', 'S', 'ArrowLeft', 'a', 'A', 'ArrowRight', 'd', 'D', 'Home', '0', 'f', 'F']);
/** Search matches: the current one, and the others in view. */
const MATCH_NOW = '#ff9f1c';
const MATCH = '#ffd75e';

/** The timeline's size in a window of this size before it is laid out (the
 * host asks the first tiles for it): the full width less the label gutter, and
 * the rows under the axis in the timeline's max-height (webview.css: 55vh). */
export function firstViewOf(width: number, height: number): FirstView {
  return { plotWidth: Math.max(1, Math.max(200, width) - GUTTER), rows: Math.max(1, Math.ceil((0.55 * height - AXIS_H) / ROW_H)) };
}

/** A time range (the timeline's offsets). */
export interface Span { start: number; end: number }
/** What the keyboard asks of the page around the timeline (main.ts): it returns whether it handled it. */
export type KeyCommand = 'search' | 'next' | 'prev' | 'help' | 'escape';

/** A launch: an API call and the GPU ops it launched (times as the timeline's offsets). */
interface FlowOp { id: number; trackId: string; start: number; end: number }
interface Flow { api: FlowOp; ops: FlowOp[] }

/** Something drawn: an event, or a bucket's longest item (dur is the item's own duration). */
export interface Hit { id: number; name: string; kind: string; start: number; end: number; dur: number; trackId: string; gpu: boolean; count?: number }

/** Performance marks for tests and the bench: the first complete frame after
 * open, every frame's draw() time, input-to-frame latency of pan/zoom input,
 * hover-to-details latency (from the mousemove event), and probes. */
export interface Perf {
  firstFrameMs?: number; frames: number[]; inputToFrame: number[];
  /** The oldest input not yet shown completely (pan, zoom, a row opened) → the first complete frame after it. */
  inputToComplete: number[];
  /** Called after every frame (the bench times what a frame shows). */
  onFrame?: () => void;
  /** performance.now() when the webview's script started (main.ts). */
  scriptAt?: number;
  /** hover: mousemove event (its timestamp) → tooltip with details. */
  hovers: number[];
  redraw?: () => number;
  /** The kernel (GPU op) id whose details a hover at canvas point (px, py) would show (bench and tests pick targets with it). */
  probe?: (px: number, py: number) => number | undefined;
  /** A raw bridge request (bench: empty round trips). */
  rpc?: (method: string, params: Record<string, unknown>) => Promise<unknown>;
  /** Idle prefetches (TimelineView.prefetchIdle): planned (a view's tiles held), and run (no newer view came). */
  idle?: { planned: number; ran: number };
  /** Bucket columns of tooltips and clicks (client/tileColumns BUCKET_DETAIL_FIELDS): requests sent
   *  (after a view is drawn, or for the bucket under the pointer) and bucket tracks given them. */
  longest?: { asked: number; merged: number };
  /** tests: true, a drawn view does not ask its buckets' columns (only a pointer on a bucket does) */
  noViewLongest?: boolean;
  /** tests: what a pointer at (px, py) hits, and how many bucket tracks there lack their count and longest op */
  hit?: (px: number, py: number) => Hit | undefined;
  lacking?: (px: number, py: number) => number;
  /** Recent bridge requests: sent and settled (performance.now()). */
  /** `host`: the extension host's receive and answer times (epoch ms; rpcResult's `host`). */
  /** `page`: the answer's message event began / was parsed (performance.now()), and when its sender posted it (epoch ms). */
  rpcTimings?: Array<{ id?: number; method: string; params: Record<string, unknown>; sent: number; settled?: number; cancelled?: boolean; host?: { received: number; answered: number }; page?: { posted?: number; received: number; parsed: number } }>;
  /** When recent frames ended (performance.now(); the bench finds the frame that drew an answer). */
  frameEnds?: number[];
  /** Tasks over 50 ms on the page's thread (performance.now(), ms; `name`: the PerformanceLongTaskTiming's, 'self' when ours). */
  longTasks?: Array<{ start: number; ms: number; name: string }>;
  /** How many answers came for requests already cancelled (dropped unparsed). */
  answersDropped?: () => number;
  /** Track ids of every row, and of the rows in the blocks scrolled into view. */
  rowIds?: () => string[];
  /** Every row: its key, whether it is an open or closed group (undefined: a leaf), its top y on the canvas (scrolled) and its tracks. */
  rowsAt?: () => Array<{ key: string; open: boolean | undefined; y: number; ids: string[] }>;
  visibleRowIds?: () => string[];
  /** draw() time of the first complete frame (its bitmaps rendered synchronously). */
  firstFrameDrawMs?: number;
  /** performance.now() when the view opened (the clock of firstFrameMs). */
  openedAt?: number;
  /** Shows [start, end] on the profile's clock (decimal strings: exact on epoch clocks). */
  show?: (start: string, end: string) => void;
  /** The view (the timeline's offsets). */
  view?: () => { start: number; end: number };
  /** Search step latencies (Enter in the search box → match shown; ms). */
  searchSteps?: number[];
}
declare global { interface Window { __nsysPerf: Perf } }

/** Where a frame drew things, for an overlay (views built on the timeline: diff, ranks). */
export interface OverlayGeometry {
  /** The plot's x of a time (offsets on the timeline's clock). */
  x: (ns: number) => number;
  /** The rows in view: their tracks and top y. */
  rows: Array<{ key: string; ids: string[]; y: number }>;
  rowH: number;
  view: View;
}

export class TimelineView {
  readonly el: HTMLElement;
  /** As tall as the timeline's viewport (sticky at its top): a frame rasterizes
   * and composites only the rows in view, and the time axis stays on screen. */
  private canvas: HTMLCanvasElement;
  /** Below the canvas: the rest of the rows' height, so the element scrolls. */
  private spacer: HTMLElement;
  private tooltip: HTMLElement;
  private rows: Row[] = [];
  private readonly tree: TreeNode[];
  /** collapsed/expanded groups, hidden and pinned rows (client/trackTree) */
  readonly treeState: TreeState = newTreeState();
  private readonly trackById: Map<string, Track>;
  private readonly fetchTiles: (p: TrackRangeParams, signal?: AbortSignal) => Promise<RangeColumns>;
  /** The fetch as given (not coalesced): the bucket columns a tooltip and a click need go through it. */
  private readonly fetchRange: (p: TrackRangeParams, signal?: AbortSignal) => Promise<RangeColumns>;
  /** Per bucket track's columns, the request for its count and longest op (one each; dropped when it failed). */
  private longestAsked = new WeakMap<BucketColumns, Promise<void>>();
  /** The view's after-draw request for its buckets' columns: the next view aborts it. */
  private longestCtl: AbortController | undefined;
  /** Where the pointer is over the canvas (a tooltip waiting for a bucket's columns shows only if it stays). */
  private pointer: { px: number; py: number } | undefined;
  /** The label gutter's width (its edge drags). */
  private gutter = GUTTER;
  /** Called when the rows change (hidden count for the toolbar). */
  onRowsChanged: () => void = () => {};
  /** Called with every new view (pan, zoom, reveal, resize), in the order added: linked views
   *  keep each other in step, the search outlines its matches in view. */
  private readonly viewListeners: Array<(v: View) => void> = [];
  /** Drawn over the rows after the selection, clipped to the plot (views built on the timeline mark things with it). */
  overlay: ((ctx: CanvasRenderingContext2D, g: OverlayGeometry) => void) | undefined;
  /** Rows in blocks of ROW_BLOCK: each block asks timeline/range only for its own
   * tracks and only while it is scrolled into view, with its own tile cache;
   * the requests of the visible blocks for one tile are merged into one. */
  private blocks: Array<{ first: number; rows: Row[]; model: TimelineModel; bitmaps: TileBitmaps }>;
  private view: View;
  /** The tracks the closed groups in view would show when opened (client/trackTree's
   * tracksBehind), held at the view's tiles while idle: an expand starts from them. */
  private held: { sig: string; model: TimelineModel } | undefined;
  /** The last relayout's replaced blocks' tile caches (the next held set starts from them). */
  private retired: TimelineModel[] = [];
  /** Counts views: an idle prefetch is for the view it was planned for only. */
  private viewToken = 0;
  private idlePlanned = 0;
  /** What the last frame drew bitmaps with (tiles that arrive for the next input render in idle time with it). */
  private look: { theme: { bg: [number, number, number]; grid: [number, number, number] }; dpr: number } | undefined;
  private frameData = new Map<string, TrackPart[]>();
  private bitmapsComplete = false;
  private hover: Hit | undefined;
  private selected: number | undefined;
  /** The selection's launch flow (API call ↔ GPU ops), when known. */
  private flow: Flow | undefined;
  private flowToken = 0;
  private frameQueued = false;
  private t0 = performance.now();
  private detailsCache = new Map<number, Promise<Record<string, unknown>>>();
  /** Row labels fitted to the gutter (measureText per row per frame adds up). */
  private fitted = new Map<string, string>();
  readonly perf: Perf = (window.__nsysPerf = { ...window.__nsysPerf, frames: [], inputToFrame: [], inputToComplete: [], hovers: [], firstFrameMs: undefined });
  /** performance.now() of the oldest pan/zoom input not yet drawn. */
  private inputAt: number | undefined;
  /** performance.now() of the oldest input not yet shown by a complete frame. */
  private incompleteSince: number | undefined;
  /** The pointer's x over the plot (its time is shown on the axis), if any. */
  private cursorPx: number | undefined;
  /** The area selection (a drag on the axis or Shift+drag), if any. */
  private range: Span | undefined;
  /** Called once, with the first complete frame (ms after the view opened). */
  onFirstFrame: (ms: number) => void = () => {};
  /** Called when the area selection changes (undefined: cleared). */
  onRange: (r: Span | undefined) => void = () => {};
  /** Keys the page handles (search, help): returns true when it did. */
  onCommand: (c: KeyCommand) => boolean = () => false;
  /** A GPU op the user is about to click: the pointer rested on it (INTENT_REST_MS after its tooltip's details) or pressed on it.
   * The page asks its explanation here, so that the click finds it on its way or held. */
  onIntent: (hit: Hit) => void = () => {};
  private intentTimer: ReturnType<typeof setTimeout> | undefined;
  /** Search matches: the current one and those in the view, outlined. */
  private matchNow: Match | undefined;
  private matches: Match[] = [];
  /** The selected slice's span (F fits it when there is no range). */
  private selectedSpan: Span | undefined;

  constructor(
    tracks: Track[],
    private readonly bounds: { start: number; end: number },
    /** `signal`: aborted when the tile is no longer wanted (pass it on to cancel the request). */
    fetchRange: (p: TrackRangeParams, signal?: AbortSignal) => Promise<RangeColumns>,
    private readonly details: (kernelId: number) => Promise<Record<string, unknown>>,
    private readonly onSelect: (hit: Hit) => void,
    /** A time of a reply (kernel/details) as the timeline's offset. */
    private readonly rel: (t: Int) => number = Number,
    /** The rows' tree (default: client/trackTree's, Nsight's arrangement). */
    tree?: TreeNode[],
  ) {
    this.tree = tree ?? trackTree(tracks);
    this.trackById = new Map(tracks.map((t) => [t.id, t]));
    this.blocks = [];
    this.fetchRange = fetchRange;
    this.fetchTiles = coalescingFetch(fetchRange); /* the visible blocks' requests for a tile go as one */
    this.canvas = h('canvas', { tabindex: '0', role: 'application', 'aria-label': 'Timeline. Plus and minus zoom, arrows pan, Page Up and Page Down scroll the rows, Home resets, n and p step through kernels, Enter selects.' });
    this.tooltip = h('div', { class: 'tooltip', role: 'tooltip', hidden: '' });
    this.spacer = h('div', { class: 'timeline-spacer' });
    this.el = h('div', { class: 'timeline' }, this.canvas, this.spacer, this.tooltip);
    this.layoutRows();
    this.view = { start: bounds.start, end: bounds.end, width: 1000 };
    this.attach();
    onThemeChange(() => { this.fitted.clear(); this.queueFrame(); });
  }

  /** The rows of the track tree as its state says, in blocks of ROW_BLOCK rows with their own tile caches. */
  private layoutRows(): void {
    this.rows = visibleRows(this.tree, this.treeState);
    /* a new block (a group opened or closed, a row hidden or pinned shifts the blocks after it)
     * starts with its tracks' parts of the replaced blocks' tiles: the same data, no round trip */
    let carried: Carried | undefined;
    const previous = this.blocks;
    const old = new Map(previous.map((b) => [b.rows.map((r) => `${r.key}=${r.ids.join(',')}`).join('|'), b]));
    this.blocks = [];
    for (let first = 0; first < this.rows.length; first += ROW_BLOCK) {
      const rows = this.rows.slice(first, first + ROW_BLOCK);
      const sig = rows.map((r) => `${r.key}=${r.ids.join(',')}`).join('|');
      const ids = [...new Set(rows.flatMap((r) => r.ids))];
      const reuse = old.get(sig); /* a block whose rows did not change keeps its tiles and bitmaps */
      if (reuse) { /* a block whose rows did not change keeps its tiles and bitmaps (and takes the view's it lacks) */
        old.delete(sig);
        this.blocks.push({ ...reuse, first });
        if (this.view && ids.length && !reuse.model.holds(tilesFor(this.view, 0, this.bounds))) carryInto(reuse.model, ids, (carried ??= this.carried(previous)));
        continue;
      }
      carried ??= this.carried(previous);
      const partial: SomeCarried = new Map();
      const fetch = ids.length ? withCarried((p, signal) => this.fetchTiles(p, signal), ids, partial) : (p: RangeRequest) => Promise.resolve(emptyTile(p));
      const bitmaps = new TileBitmaps(ROW_H, () => this.queueFrame(), 32);
      const model = new TimelineModel((p, signal) => fetch(p, signal), (tile) => this.tileArrived(rows, bitmaps, tile), 128, this.bounds);
      if (ids.length) for (const [k, v] of carryInto(model, ids, carried)) partial.set(k, v);
      this.blocks.push({ first, rows, model, bitmaps });
    }
    for (const b of old.values()) { b.model.abandon(); b.bitmaps.drop(); } /* the replaced blocks' requests still on their way, and their bitmaps waiting to render */
    this.retired = [...old.values()].map((b) => b.model); /* their tiles: tracks no row draws now (behind a group just closed) */
    this.fitted.clear();
    this.el.dataset.rows = String(this.rows.length);
    this.el.dataset.hidden = String(this.treeState.hidden.size);
  }

  /** A block's tile came: drawn if the view wants it; else, for a block in view (the ring around
   * the view, the next zoom level), its bitmap renders in idle time, so the input that wants it
   * completes in its first frame. */
  private tileArrived(rows: Row[], bitmaps: TileBitmaps, tile: Tile): void {
    this.queueFrame();
    if (this.look && this.perf.firstFrameMs !== undefined && this.visibleBlocks().some((b) => b.bitmaps === bitmaps)) bitmaps.request(tile, rows, this.look.theme, this.look.dpr, false, true);
  }

  /** At the view: the blocks' tiles, the held ones (of the tracks behind closed groups) and the last replaced blocks'. */
  private carried(blocks: TimelineView['blocks']): Carried {
    const models = blocks.map((b) => b.model).concat(this.retired);
    if (this.held) models.push(this.held.model);
    return carriedTiles(models, this.view ? tilesFor(this.view, 1, this.bounds) : []);
  }

  /** Opens or closes a group, hides or pins a row (client/trackTree), or shows every hidden row ('unhide'). */
  changeRows(what: 'open' | 'hidden' | 'pinned' | 'unhide', key = ''): void {
    if (what === 'unhide') this.treeState.hidden.clear(); else toggle(this.treeState, what, key);
    this.layoutRows();
    this.onRowsChanged();
    this.resize();
  }

  /** Resizes the label gutter (at least 80 px, and leaves the plot 120 px). */
  setGutter(px: number): void {
    const w = Math.max(200, this.el.clientWidth);
    this.gutter = Math.round(Math.max(80, Math.min(w - 120, px)));
    this.el.dataset.gutter = String(this.gutter);
    this.fitted.clear();
    this.resize();
  }

  /** Caches tiles asked elsewhere (the first tiles, sent with init; times as the
   * timeline's offsets) in every block whose tracks they hold: call before start(). */
  seed(tiles: Array<Omit<FirstTile, 'result'> & { result: RangeColumns }>): void {
    for (const b of this.blocks) {
      const ids = new Set(b.rows.flatMap((r) => r.ids));
      if (!ids.size) continue;
      for (const t of tiles) {
        const have = new Set(t.tracks);
        if ([...ids].every((id) => have.has(id))) b.model.seed(t.key, { ...t.result, tracks: t.result.tracks.filter((x) => ids.has(x.id)) });
      }
    }
  }

  /** Call once the element is in the document. */
  start(openedAt = performance.now()): void {
    this.perf.redraw = () => { const t = performance.now(); this.draw(); return performance.now() - t; };
    this.perf.probe = (px, py) => { const hit = this.hitAt(px, py); return hit?.gpu ? hit.id : undefined; };
    this.perf.hit = (px, py) => this.hitAt(px, py);
    this.perf.lacking = (px, py) => this.lackingAt(px, py).length;
    this.perf.rowIds = () => this.rows.map((r) => r.key);
    this.perf.rowsAt = () => this.rows.map((r, i) => ({ key: r.key, open: r.open, y: AXIS_H + i * ROW_H - this.el.scrollTop, ids: r.ids }));
    this.perf.view = () => ({ start: this.view.start, end: this.view.end });
    this.perf.visibleRowIds = () => [...new Set(this.visibleBlocks().flatMap((b) => b.rows.flatMap((r) => r.ids)))];
    this.t0 = openedAt;
    this.perf.openedAt = openedAt;
    performance.mark('nsys-open', { startTime: openedAt });
    new ResizeObserver(() => this.resize()).observe(this.el);
    this.resize();
  }

  private resize(): void {
    const w = Math.max(200, this.el.clientWidth);
    const total = AXIS_H + this.rows.length * ROW_H + 4;
    /* the element is min(content, its max-height) tall: measure it with the spacer alone */
    this.canvas.style.height = '0px';
    this.spacer.style.height = `${total}px`;
    const hgt = Math.max(AXIS_H + ROW_H, Math.min(total, this.el.clientHeight || total));
    this.spacer.style.height = `${Math.max(0, total - hgt)}px`;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.floor(w * dpr);
    this.canvas.height = Math.floor(hgt * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${hgt}px`;
    this.setView({ ...this.view, width: Math.max(1, w - this.gutter) });
  }

  get currentView(): View { return this.view; }

  /** Calls `f` with every new view from now on; returns what removes it. */
  addViewListener(f: (v: View) => void): () => void {
    this.viewListeners.push(f);
    return () => { const i = this.viewListeners.indexOf(f); if (i >= 0) this.viewListeners.splice(i, 1); };
  }

  setView(v: View): void {
    this.view = v;
    this.longestCtl?.abort(); /* the last view's buckets: its tooltips are not shown now */
    this.longestCtl = undefined;
    this.queueFrame();
    for (const f of this.viewListeners) f(v);
    /* a block's requests for tiles this view no longer needs are cancelled (TimelineModel.ensure),
     * and those of blocks scrolled out of view: they would hold the server's threads before the wanted ones */
    const visible = new Set(this.visibleBlocks());
    const token = ++this.viewToken;
    this.held?.model.abandon();
    const waits: Array<Promise<void>> = [];
    for (const b of this.blocks) {
      if (!visible.has(b)) { b.model.abandon(); continue; }
      waits.push(b.model.ensure(v, 1).then(() => this.queueFrame(), (e) => { if (!isCancelled(e)) console.warn('timeline/range failed', e); }));
    }
    /* once the view's tiles are held and no new view came for IDLE_MS, hold what the next input would want */
    void Promise.all(waits).then(() => this.planIdle(token));
  }

  /** Plans the idle prefetch for view `token` once (its tiles held, or a complete frame drawn). */
  private planIdle(token: number): void {
    if (token !== this.viewToken || this.idlePlanned === token) return;
    this.idlePlanned = token;
    (this.perf.idle ??= { planned: 0, ran: 0 }).planned++;
    setTimeout(() => this.prefetchIdle(token), IDLE_MS);
  }

  /** While the view rests: the next zoom level in for the visible rows (Ctrl+wheel,
   * W/S, +), the view's tiles for the row blocks a screen above and below (a scroll, or
   * rows shifted by a collapse) and for the tracks behind the closed groups in view (an
   * expand). The next setView cancels what it does not want. */
  private prefetchIdle(token: number): void {
    if (token !== this.viewToken) return;
    this.perf.idle!.ran++;
    const v = this.view, here = tilesFor(v, 0, this.bounds);
    const visible = this.visibleBlocks();
    /* the view's buckets' count and longest op once it has rested a little longer: between the steps of a
     * Ctrl+wheel zoom (~250 ms) their replies would wait in VS Code's relay ahead of the next step's tiles */
    setTimeout(() => { if (token === this.viewToken) this.askViewLongest(); }, LONGEST_IDLE_MS);
    this.prefetchZoomIn();
    const screen = Math.max(this.el.clientHeight - AXIS_H, ROW_H), top = this.el.scrollTop - screen, bottom = this.el.scrollTop + 2 * screen;
    for (const b of this.blocks) {
      if (!visible.includes(b) && (b.first + b.rows.length) * ROW_H > top && b.first * ROW_H < bottom) b.model.prefetch(here);
    }
    const closed = new Set(visible.flatMap((b) => b.rows.filter((r) => r.open === false).map((r) => r.key)));
    const ids = closed.size ? tracksBehind(this.tree, this.treeState, closed) : [];
    const sig = ids.join(',');
    if (this.held?.sig !== sig) { /* a new set: it starts with what the rows' and the old set's tiles hold of it */
      const carried = ids.length ? this.carried(this.blocks) : undefined;
      this.held?.model.abandon();
      this.held = undefined;
      if (carried) {
        const model = new TimelineModel((p, signal) => this.fetchTiles({ ...p, tracks: ids }, signal), () => {}, 64, this.bounds);
        carryInto(model, ids, carried);
        this.held = { sig, model };
      }
    }
    this.held?.model.prefetch(here);
  }

  /** Where the next zoom-in step anchors: the pointer over the plot, else the view's centre (onKey, the wheel). */
  private zoomAnchor(): number {
    const v = this.view;
    return this.cursorPx !== undefined ? v.start + (this.cursorPx / v.width) * (v.end - v.start) : (v.start + v.end) / 2;
  }

  /** The next zoom level in around the zoom's anchor, for the visible rows (client/timelineModel's zoomNeighbourTiles). */
  private prefetchZoomIn(): void {
    const near = zoomNeighbourTiles(this.view, this.bounds, this.zoomAnchor());
    for (const b of this.visibleBlocks()) b.model.prefetch(near);
  }

  reveal(start: number, end: number, kernelId?: number): void {
    const pad = Math.max(1000, (end - start) * 2);
    if (kernelId !== undefined) this.selected = kernelId;
    this.setView({ start: Math.max(this.bounds.start, start - pad), end: Math.min(this.bounds.end, end + pad), width: this.view.width });
  }

  zoom(factor: number, anchor = (this.view.start + this.view.end) / 2): void {
    this.setView(zoomView(this.view, factor, anchor, this.bounds));
  }

  /** Shows [start, end] with a margin (a match, a double-clicked slice, a finding's window). */
  zoomTo(start: number, end: number): void {
    this.setView({ ...frameSpan(start, end, this.bounds), width: this.view.width });
  }

  /** F: the view fits the area selection, else the selected slice. */
  fit(): void {
    const r = this.range ?? this.selectedSpan;
    if (r) this.setView({ start: r.start, end: Math.max(r.end, r.start + 10), width: this.view.width });
  }

  get currentRange(): Span | undefined { return this.range; }

  /** Sets or clears the area selection. */
  setRange(r: Span | undefined): void {
    this.range = r;
    this.el.dataset.range = r ? JSON.stringify(r) : '';
    this.queueFrame();
    this.onRange(r);
  }

  /** The current search match and the matches in view (outlined; the current one thicker). */
  setMatches(now: Match | undefined, inView: Match[]): void {
    this.matchNow = now;
    this.matches = inView;
    this.el.dataset.matches = String(inView.length);
    this.el.dataset.match = now ? `${now.kind}:${now.id}` : '';
    this.queueFrame();
  }

  /** Scrolls the rows so that the row drawing track `id` is in view. */
  scrollToTrack(id: string): void {
    const r = this.rowOfTrack(id);
    if (r < 0) return;
    const top = r * ROW_H, h = Math.max(ROW_H, this.el.clientHeight - AXIS_H);
    if (top < this.el.scrollTop || top + ROW_H > this.el.scrollTop + h) this.el.scrollTop = Math.max(0, top - h / 2);
  }

  /** The time at canvas x `px` (the plot starts at the gutter). */
  private timeAt(px: number): number {
    return this.view.start + ((px - this.gutter) / this.view.width) * (this.view.end - this.view.start);
  }

  /** The row drawing track `id`: its own row, else the (collapsed or utilisation) row that merges it; -1 if none. */
  private rowOfTrack(id: string): number {
    const own = this.rows.findIndex((r) => r.ids.length === 1 && r.ids[0] === id);
    return own >= 0 ? own : this.rows.findIndex((r) => r.ids.includes(id));
  }
  /** Draws again on the next frame (an overlay's data changed). */
  refresh(): void { this.queueFrame(); }

  private queueFrame(): void {
    if (this.frameQueued) return;
    this.frameQueued = true;
    requestAnimationFrame(() => { this.frameQueued = false; this.draw(); });
  }

  /** Blocks with a row inside the scrolled viewport of the timeline. */
  private visibleBlocks(): TimelineView['blocks'] {
    const top = this.el.scrollTop, bottom = top + Math.max(this.el.clientHeight - AXIS_H, ROW_H);
    return this.blocks.filter((b) => (b.first + b.rows.length) * ROW_H > top && b.first * ROW_H < bottom);
  }

  private complete(): boolean {
    const keys = tilesFor(this.view, 0, this.bounds);
    return this.bitmapsComplete && this.visibleBlocks().every((b) => keys.every((k) => b.model.has(k)));
  }

  draw(): void {
    const t = performance.now();
    const ctx = this.canvas.getContext('2d')!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const W = this.canvas.width / dpr, H = this.canvas.height / dpr;
    const sy = this.el.scrollTop; /* rows are drawn scrolled by this much under the fixed axis */
    const rowY = (i: number) => AXIS_H + i * ROW_H - sy;
    const first = Math.max(0, Math.floor(sy / ROW_H)), last = Math.min(this.rows.length, Math.ceil((sy + H - AXIS_H) / ROW_H));
    const fg = cssVar('--vscode-editor-foreground', '#ccc');
    const bg = cssVar('--vscode-editor-background', '#1e1e1e');
    const grid = cssVar('--vscode-editorWidget-border', '#444');
    const sel = cssVar('--vscode-focusBorder', '#007fd4');
    const v = this.view;
    const nsPerPx = (v.end - v.start) / v.width;
    const x = (ns: number) => this.gutter + (ns - v.start) / nsPerPx;
    const theme = { bg: cssToRgb(ctx, bg), grid: cssToRgb(ctx, grid) };
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, W, H);
    ctx.save();
    ctx.beginPath(); ctx.rect(this.gutter, AXIS_H, W - this.gutter, H - AXIS_H); ctx.clip();
    ctx.imageSmoothingEnabled = false;
    /* until the first complete frame, bitmaps render synchronously; afterwards for up to
     * SYNC_RENDER_MS, the rest in idle time, with whatever bitmaps overlap (other resolutions) filling in */
    const now = this.perf.firstFrameMs === undefined;
    const exact = resolutionFor(v.end - v.start, v.width);
    const data = new Map<string, TrackPart[]>();
    let missing = false;
    for (const block of this.visibleBlocks()) {
      const tiles = block.model.tilesToDraw(v);
      for (const [id, l] of byTrack(tiles)) data.set(id, l);
      block.bitmaps.invalidate(`${theme.bg}|${theme.grid}|${dpr}`);
      this.look = { theme, dpr };
      const y0 = rowY(block.first), hh = block.rows.length * ROW_H;
      const blit = (tile: { start: number; end: number }, bmp: HTMLCanvasElement) =>
        ctx.drawImage(bmp, x(tile.start), y0, (tile.end - tile.start) / nsPerPx, hh);
      const ready: Array<[Tile, HTMLCanvasElement]> = [];
      let blockMissing = false;
      for (const tile of tiles) {
        const bmp = block.bitmaps.peek(tile) ?? block.bitmaps.request(tile, block.rows, theme, dpr, now || (tile.resolution === exact && performance.now() - t < SYNC_RENDER_MS));
        if (bmp) ready.push([tile, bmp]); else blockMissing = true;
      }
      if (blockMissing || ready.some(([tl]) => tl.resolution !== exact)) {
        const under = block.bitmaps.overlapping(v.start, v.end).filter((bm) => bm.tile.resolution !== exact)
          .sort((p, q) => Math.abs(Math.log2(q.tile.resolution / exact)) - Math.abs(Math.log2(p.tile.resolution / exact)));
        for (const bm of under.slice(-12)) blit(bm.tile, bm.canvas);
      }
      for (const [tile, bmp] of ready) if (tile.resolution === exact) blit(tile, bmp);
      missing ||= blockMissing;
    }
    this.frameData = data;
    this.bitmapsComplete = !missing;
    /* the selection, outlined on top */
    if (this.selected !== undefined) {
      ctx.strokeStyle = sel;
      ctx.lineWidth = 2;
      for (let i = first; i < last; i++) {
        const row = this.rows[i]!;
        const outline = (s0: number, e0: number) => {
          const x0 = x(s0), x1 = Math.max(x(e0), x0 + 2);
          ctx.strokeRect(x0 - 1, rowY(i) + 1, x1 - x0 + 2, ROW_H - 3);
        };
        for (const id of row.ids) if (isGpuId(id)) forEachItem(data.get(id) ?? [], v.start, v.end, 'GPU op', (it) => { if (it.id === this.selected) outline(it.start, it.end); });
      }
    }
    if (this.flow) this.drawFlow(ctx, this.flow, x, rowY, sel);
    this.drawMatches(ctx, x, rowY);
    if (this.range) { /* the area selection: shaded, edged */
      const x0 = Math.max(this.gutter, x(this.range.start)), x1 = Math.min(W, x(this.range.end));
      if (x1 >= x0) {
        ctx.fillStyle = 'rgba(0,127,212,0.18)';
        ctx.fillRect(x0, AXIS_H, Math.max(1, x1 - x0), H - AXIS_H);
        ctx.fillStyle = sel;
        ctx.fillRect(x0, AXIS_H, 1, H - AXIS_H);
        ctx.fillRect(x1 - 1, AXIS_H, 1, H - AXIS_H);
      }
    }
    if (this.overlay) {
      const rows: OverlayGeometry['rows'] = [];
      for (let i = first; i < last; i++) rows.push({ key: this.rows[i]!.key, ids: this.rows[i]!.ids, y: rowY(i) });
      this.overlay(ctx, { x, rows, rowH: ROW_H, view: v });
    }
    ctx.restore();
    /* labels of events wide enough to read, in view coordinates */
    const labels: Array<[string, number, number, number]> = [];
    for (let i = first; i < last; i++) {
      const row = this.rows[i]!;
      const seen = new Set<number>(); /* an event crossing tile edges comes in each tile */
      if (row.ids.length !== 1) continue; /* merged rows: no names */
      for (const { tile, tr } of data.get(row.ids[0]!) ?? []) {
        if (!('events' in tr)) continue;
        const e = tr.events;
        for (let j = 0; j < e.id.length; j++) {
          if (e.end[j]! < v.start || e.start[j]! > v.end || seen.has(e.id[j]!)) continue;
          const x0 = Math.max(this.gutter, x(e.start[j]!)), x1 = Math.min(W, x(e.end[j]!));
          if (x1 - x0 <= 40) continue;
          seen.add(e.id[j]!);
          labels.push([tile.result.names[e.name[j]!] ?? '', x0, x1, rowY(i)]);
        }
      }
    }
    ctx.font = `12px ${cssVar('--vscode-font-family', 'sans-serif')}`;
    ctx.textBaseline = 'middle';
    ctx.save();
    ctx.beginPath(); ctx.rect(0, AXIS_H, W, H - AXIS_H); ctx.clip();
    ctx.fillStyle = '#fff';
    for (const [name, x0, x1, y] of labels) {
      ctx.save(); ctx.beginPath(); ctx.rect(x0, y, x1 - x0, ROW_H); ctx.clip();
      ctx.fillText(name, x0 + 3, y + ROW_H / 2);
      ctx.restore();
    }
    ctx.fillStyle = fg;
    for (let i = first; i < last; i++) {
      const row = this.rows[i]!;
      const x0 = 6 + row.level * INDENT;
      const text = `${row.open === undefined ? '' : row.open ? '▾ ' : '▸ '}${row.pinned ? `★ ${row.title}` : row.label}`;
      let label = this.fitted.get(row.key);
      if (label === undefined) { label = fit(ctx, text, this.gutter - 10 - x0); this.fitted.set(row.key, label); }
      if (row.open === undefined && row.ids.length) { /* a swatch of what the row draws */
        ctx.fillStyle = colorFor('', row.kind === 'api' ? 'api' : row.kind === 'nvtx' ? 'nvtx' : 'kernel');
        ctx.fillRect(x0 - 4, rowY(i) + 6, 2, ROW_H - 12);
        ctx.fillStyle = fg;
      }
      ctx.fillText(label, x0, rowY(i) + ROW_H / 2);
    }
    ctx.restore();
    this.drawAxis(ctx, { fg, bg, grid }, W, H);
    const ms = performance.now() - t;
    this.perf.frames.push(ms);
    const ends = (this.perf.frameEnds ??= []);
    ends.push(performance.now());
    if (ends.length > 4000) ends.splice(0, 2000);
    if (this.inputAt !== undefined) { this.perf.inputToFrame.push(performance.now() - this.inputAt); this.incompleteSince ??= this.inputAt; this.inputAt = undefined; }
    const complete = (this.perf.firstFrameMs === undefined || this.incompleteSince !== undefined) && this.complete();
    if (this.idlePlanned !== this.viewToken && this.complete()) this.planIdle(this.viewToken);
    if (complete && this.incompleteSince !== undefined) { this.perf.inputToComplete.push(performance.now() - this.incompleteSince); this.incompleteSince = undefined; }
    if (this.perf.firstFrameMs === undefined && complete) {
      this.perf.firstFrameMs = performance.now() - this.t0;
      this.perf.firstFrameDrawMs = performance.now() - t;
      performance.measure('nsys-first-frame', 'nsys-open');
      this.el.dataset.rendered = 'true';
      this.onFirstFrame(this.perf.firstFrameMs);
    }
    this.el.dataset.resolution = String(resolutionFor(v.end - v.start, v.width));
    this.perf.onFrame?.();
  }

  /** Search matches in view outlined on their rows, the current one thicker and on top. */
  private drawMatches(ctx: CanvasRenderingContext2D, x: (ns: number) => number, rowY: (i: number) => number): void {
    const v = this.view;
    const one = (m: Match, color: string, w: number) => {
      if (m.end < v.start || m.start > v.end) return;
      const r = this.rowOfTrack(m.track);
      if (r < 0) return;
      const x0 = x(m.start), x1 = Math.max(x(m.end), x0 + 2);
      ctx.strokeStyle = color;
      ctx.lineWidth = w;
      ctx.strokeRect(x0 - 1, rowY(r) + 1, x1 - x0 + 2, ROW_H - 3);
    };
    for (const m of this.matches) one(m, MATCH, 1);
    if (this.matchNow) one(this.matchNow, MATCH_NOW, 3);
  }

  /** The launch flow: the API call outlined on its row, an arrow from its end to each op's start
   * (rows inside a collapsed group: the group's row). */
  private drawFlow(ctx: CanvasRenderingContext2D, f: Flow, x: (ns: number) => number, rowY: (i: number) => number, color: string): void {
    /* the track's own row, else the (collapsed or utilisation) row that merges it */
    const rowOf = (id: string) => this.rowOfTrack(id);
    const ar = rowOf(f.api.trackId);
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 2;
    if (ar >= 0) {
      const x0 = x(f.api.start), x1 = Math.max(x(f.api.end), x0 + 2);
      ctx.strokeRect(x0 - 1, rowY(ar) + 1, x1 - x0 + 2, ROW_H - 3);
    }
    for (const op of f.ops) {
      const kr = rowOf(op.trackId);
      if (ar < 0 || kr < 0) continue;
      const ax = x(f.api.end), ay = rowY(ar) + (kr < ar ? 2 : ROW_H - 2);
      const kx = x(op.start), ky = rowY(kr) + (kr < ar ? ROW_H - 2 : 2);
      const x0 = x(op.start), x1 = Math.max(x(op.end), x0 + 2);
      ctx.strokeRect(x0 - 1, rowY(kr) + 1, x1 - x0 + 2, ROW_H - 3);
      ctx.beginPath();
      ctx.moveTo(ax, ay);
      ctx.bezierCurveTo(ax, (ay + ky) / 2, kx, (ay + ky) / 2, kx, ky);
      ctx.stroke();
      const dir = ky > ay ? 1 : -1; /* the arrowhead at the op */
      ctx.beginPath();
      ctx.moveTo(kx, ky);
      ctx.lineTo(kx - 4, ky - 7 * dir);
      ctx.lineTo(kx + 4, ky - 7 * dir);
      ctx.closePath();
      ctx.fill();
    }
  }

  /** The time axis: ticks as offsets from the profile's start with the
   * precision of their step (or from a base shown in the gutter when zoomed
   * in far from the start), the view's span at the right, and the cursor's
   * time with its hairline. What was drawn is kept in data-axis (tests). */
  private drawAxis(ctx: CanvasRenderingContext2D, colors: { fg: string; bg: string; grid: string }, W: number, H: number): void {
    const { fg, bg, grid } = colors;
    const sel = cssVar('--vscode-focusBorder', '#007fd4');
    const v = this.view;
    const span = v.end - v.start;
    const ax = timeAxis(v.start, v.end, this.bounds.start, Math.max(2, Math.floor(v.width / 90)));
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, W, AXIS_H - 1);
    ctx.fillStyle = fg;
    ctx.textBaseline = 'middle';
    ctx.save(); ctx.beginPath(); ctx.rect(this.gutter, 0, W - this.gutter, AXIS_H); ctx.clip();
    /* the span (right end) and the cursor's time take their place first; tick labels that would overlap them are left out */
    const spanW = ctx.measureText(ax.span).width;
    const taken: Array<[number, number]> = [[W - spanW - 10, W]];
    let cursor = '';
    let cursorBox: [number, number] | undefined;
    if (this.cursorPx !== undefined) {
      cursor = formatCursor(v.start + (this.cursorPx / v.width) * span, this.bounds.start, ax.step);
      const w = ctx.measureText(cursor).width + 8;
      const bx = Math.max(this.gutter, Math.min(this.gutter + this.cursorPx + 1, W - spanW - 10 - w));
      cursorBox = [bx, bx + w];
      taken.push(cursorBox);
    }
    const drawn: string[] = [];
    for (const tk of ax.ticks) {
      const px = this.gutter + ((tk.t - v.start) / span) * v.width;
      ctx.fillStyle = grid;
      ctx.fillRect(px, AXIS_H - 6, 1, 6);
      const a = px + 3, b = a + ctx.measureText(tk.label).width;
      if (taken.some(([l, r]) => a < r && b > l)) continue;
      ctx.fillStyle = fg;
      ctx.fillText(tk.label, a, AXIS_H / 2);
      drawn.push(tk.label);
    }
    ctx.fillStyle = fg;
    ctx.fillText(ax.span, W - spanW - 5, AXIS_H / 2);
    if (this.range) { /* the range's extent on the axis, its duration inside */
      const x0 = this.gutter + ((this.range.start - v.start) / span) * v.width, x1 = this.gutter + ((this.range.end - v.start) / span) * v.width;
      ctx.fillStyle = 'rgba(0,127,212,0.45)';
      ctx.fillRect(x0, 2, Math.max(1, x1 - x0), AXIS_H - 4);
      const label = formatNs(this.range.end - this.range.start);
      const lw = ctx.measureText(label).width;
      const lx = Math.max(this.gutter + 2, Math.min((x0 + x1 - lw) / 2, W - spanW - lw - 14));
      ctx.fillStyle = sel; /* over the tick labels under it */
      ctx.fillRect(lx - 4, 2, lw + 8, AXIS_H - 4);
      ctx.fillStyle = '#fff';
      ctx.fillText(label, lx, AXIS_H / 2);
    }
    if (cursorBox) {
      ctx.fillStyle = cssVar('--vscode-editorHoverWidget-background', '#252526');
      ctx.fillRect(cursorBox[0], 1, cursorBox[1] - cursorBox[0], AXIS_H - 3);
      ctx.fillStyle = fg;
      ctx.fillText(cursor, cursorBox[0] + 4, AXIS_H / 2);
    }
    ctx.restore();
    if (ax.base) ctx.fillText(`${fit(ctx, ax.base, this.gutter - 30)} +`, 6, AXIS_H / 2);
    ctx.fillStyle = grid;
    ctx.fillRect(0, AXIS_H - 1, W, 1);
    if (this.cursorPx !== undefined) ctx.fillRect(this.gutter + this.cursorPx, AXIS_H, 1, H - AXIS_H); /* the cursor's hairline */
    this.el.dataset.axis = JSON.stringify({ base: ax.base, labels: ax.ticks.map((t) => t.label), drawn, span: ax.span, cursor });
  }

  /** The row at canvas y `py` (none over the axis). */
  private rowIndexAt(py: number): Row | undefined {
    return py < AXIS_H ? undefined : this.rows[Math.floor((py - AXIS_H + this.el.scrollTop) / ROW_H)];
  }

  /** The row under a point in the label gutter (its full name goes in the tooltip). */
  private rowAt(px: number, py: number): Row | undefined {
    return px < this.gutter ? this.rowIndexAt(py) : undefined;
  }

  /** The row and the times [lo, hi] a pointer at (px, py) points at (2 px either side). */
  private pointAt(px: number, py: number): { row: Row; lo: number; hi: number } | undefined {
    const row = this.rowIndexAt(py);
    if (!row || px < this.gutter) return undefined;
    const v = this.view;
    const ns = v.start + ((px - this.gutter) / v.width) * (v.end - v.start);
    const slop = ((v.end - v.start) / v.width) * 2;
    return { row, lo: ns - slop, hi: ns + slop };
  }

  private hitAt(px: number, py: number): Hit | undefined {
    const at = this.pointAt(px, py);
    return at && this.hitsNear(at.row, at.lo, at.hi);
  }

  /** The bucket tracks under a pointer at (px, py) whose count and longest op are not held. */
  private lackingAt(px: number, py: number): ReturnType<typeof bucketsLacking> {
    const at = this.pointAt(px, py);
    return at ? at.row.ids.flatMap((id) => bucketsLacking(this.frameData.get(id) ?? [], at.lo, at.hi)) : [];
  }

  /** Asks the count and longest op (client/tileColumns BUCKET_DETAIL_FIELDS) of the bucket tracks
   * `lacking`, one request per tile for its tracks (the tile's own request, other fields: the same
   * buckets); resolves when each is given them, or its request failed. */
  private askLongest(lacking: ReturnType<typeof bucketsLacking>, signal?: AbortSignal): Promise<void> {
    const waits: Array<Promise<void>> = [];
    const byTile = new Map<string, { tile: Tile; items: typeof lacking }>();
    for (const l of lacking) {
      const asked = this.longestAsked.get(l.buckets);
      if (asked) { waits.push(asked); continue; }
      let g = byTile.get(l.tile.key);
      if (!g) byTile.set(l.tile.key, (g = { tile: l.tile, items: [] }));
      g.items.push(l);
    }
    const counts = (this.perf.longest ??= { asked: 0, merged: 0 });
    for (const { tile, items } of byTile.values()) {
      counts.asked++;
      const ids = [...new Set(items.map((it) => it.id))];
      const done = this.fetchRange({ ...tileRequest(tile), fields: BUCKET_DETAIL_FIELDS, tracks: ids }, signal).then((r) => {
        const got = new Map(r.tracks.flatMap((t) => ('buckets' in t ? [[t.id, t.buckets] as const] : [])));
        for (const it of items) {
          const from = got.get(it.id);
          if (from && attachLongest(it.buckets, from)) counts.merged++;
          else this.longestAsked.delete(it.buckets);
        }
        if (this.selected !== undefined) this.queueFrame(); /* its outline, when it is in one of these buckets */
      }, (e) => {
        for (const it of items) this.longestAsked.delete(it.buckets);
        if (!isCancelled(e)) console.warn('timeline/range (bucket columns) failed', e);
      });
      for (const it of items) this.longestAsked.set(it.buckets, done);
      waits.push(done);
    }
    return Promise.all(waits).then(() => undefined);
  }

  /** Once a view is drawn: the count and longest op of its buckets (hover and click then need no
   * request), a row block's tile at a time, the block under the pointer first: each reply waits in
   * VS Code's relay ahead of whatever the next input asks, so at most one small one is on its way
   * (a view's whole set at 10M kernels is ~300 KB per tile of 24 rows). The next view stops it. */
  private askViewLongest(): void {
    if (this.perf.noViewLongest) return;
    const v = this.view, exact = resolutionFor(v.end - v.start, v.width);
    const under = this.pointer && this.rowIndexAt(this.pointer.py);
    const blocks = this.visibleBlocks().sort((a, b) => Number(!!under && b.rows.includes(under)) - Number(!!under && a.rows.includes(under)));
    const groups: Array<ReturnType<typeof bucketsLacking>> = [];
    for (const b of blocks) {
      const byTile = new Map<string, ReturnType<typeof bucketsLacking>>();
      for (const id of new Set(b.rows.flatMap((r) => r.ids))) {
        for (const l of bucketsLacking((this.frameData.get(id) ?? []).filter((p) => p.tile.resolution === exact), v.start, v.end)) {
          const g = byTile.get(l.tile.key);
          if (g) g.push(l); else byTile.set(l.tile.key, [l]);
        }
      }
      groups.push(...byTile.values());
    }
    if (!groups.length) return;
    this.longestCtl?.abort();
    const ctl = (this.longestCtl = new AbortController());
    void (async () => {
      for (const g of groups) {
        if (ctl.signal.aborted) return;
        await this.askLongest(g, ctl.signal);
      }
    })();
  }

  /** The hit under (px, py) once its buckets' count and longest op are held (asked if not:
   * an answer aborted by a new view is asked again, without the view's signal). */
  private async hitWhenHeld(px: number, py: number): Promise<Hit | undefined> {
    const at = this.pointAt(px, py);
    if (!at) return undefined;
    const lacking = () => at.row.ids.flatMap((id) => bucketsLacking(this.frameData.get(id) ?? [], at.lo, at.hi));
    let l = lacking();
    if (l.length) await this.askLongest(l);
    if ((l = lacking()).length) await this.askLongest(l);
    return this.hitsNear(at.row, at.lo, at.hi);
  }

  /** The shortest item (event, or bucket's longest) on `row` touching [lo, hi]. */
  private hitsNear(row: Row, lo: number, hi: number): Hit | undefined {
    let best: Hit | undefined;
    for (const id of row.ids) {
      const gpu = isGpuId(id), kind = bucketKind(id);
      const it = shortestItem(this.frameData.get(id) ?? [], lo, hi, gpu ? 'GPU op' : kind === 'api' ? 'CUDA API call' : 'NVTX range');
      if (it && (!best || it.end - it.start < best.end - best.start)) best = { ...it, trackId: id, gpu };
    }
    return best;
  }

  /** Everything hit-testable in the view (keyboard stepping), GPU rows only. */
  private gpuHitsInView(): Hit[] {
    const out: Hit[] = [];
    const v = this.view;
    for (const id of new Set(this.rows.flatMap((r) => r.ids.filter(isGpuId)))) {
      forEachItem(this.frameData.get(id) ?? [], v.start, v.end, 'GPU op', (it) => { out.push({ ...it, trackId: id, gpu: true }); });
    }
    return out;
  }

  private attach(): void {
    const c = this.canvas;
    let drag: { x: number; view: View; moved: boolean } | undefined;
    /* an area selection being dragged: where it started (a time) and whether it started on the axis */
    let area: { t0: number; onAxis: boolean; prev: Span | undefined } | undefined;
    c.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      this.inputAt ??= ev.timeStamp;
      if (ev.shiftKey) { this.el.scrollTop += ev.deltaY || ev.deltaX; return; } /* shift+wheel scrolls the rows */
      const rect = c.getBoundingClientRect();
      const px = ev.clientX - rect.left - this.gutter;
      const dy = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
      if (ev.ctrlKey || ev.metaKey) { /* Ctrl+wheel (and a trackpad's pinch) zooms at the cursor */
        this.zoom(Math.pow(1.2, dy / 100), this.view.start + (px / this.view.width) * (this.view.end - this.view.start));
        return;
      }
      const d = Math.abs(ev.deltaX) > Math.abs(dy) ? ev.deltaX : dy; /* the wheel pans */
      this.setView(panView(this.view, d * (this.view.end - this.view.start) / this.view.width, this.bounds));
    }, { passive: false });
    c.addEventListener('dblclick', (ev) => { /* a slice: zoom to it */
      const rect = c.getBoundingClientRect();
      const hit = this.hitAt(ev.clientX - rect.left, ev.clientY - rect.top);
      if (hit) { this.inputAt ??= ev.timeStamp; this.zoomTo(hit.start, hit.end); }
    });
    /* the gutter's edge drags to resize it */
    let resizing: { x: number; gutter: number } | undefined;
    const onEdge = (px: number) => px >= this.gutter - 5 && px < this.gutter; /* the plot starts at the gutter: its clicks stay clicks */
    c.addEventListener('mousedown', (ev) => {
      const px = ev.clientX - c.getBoundingClientRect().left;
      if (onEdge(px)) { resizing = { x: ev.clientX, gutter: this.gutter }; ev.preventDefault(); return; }
      const py = ev.clientY - c.getBoundingClientRect().top;
      if (px >= this.gutter && (py < AXIS_H || ev.shiftKey)) { /* a drag on the axis, or Shift+drag: a range */
        area = { t0: this.timeAt(px), onAxis: py < AXIS_H, prev: this.range };
        ev.preventDefault();
        return;
      }
      drag = { x: ev.clientX, view: this.view, moved: false };
      const hit = this.hitAt(px, py);
      if (hit?.gpu) this.onIntent(hit); /* a press on an op: its click (mouseup) comes next */
    });
    const areaTo = (clientX: number) => {
      const px = Math.max(this.gutter, Math.min(clientX - c.getBoundingClientRect().left, this.gutter + this.view.width));
      return dragWindow(area!.t0, this.timeAt(px), (this.view.end - this.view.start) / this.view.width);
    };
    window.addEventListener('mousemove', (ev) => {
      if (area) { const r = areaTo(ev.clientX); if (r) { this.range = r; this.queueFrame(); } return; }
      if (!resizing) return;
      this.setGutter(resizing.gutter + ev.clientX - resizing.x);
    });
    window.addEventListener('mouseup', (ev) => {
      if (resizing) { resizing = undefined; return; }
      if (area) {
        const r = areaTo(ev.clientX), { onAxis, prev } = area;
        area = undefined;
        if (r) { this.setRange(r); return; }
        this.range = prev; /* too short for a range */
        if (onAxis) { this.setRange(undefined); return; } /* a click on the axis clears the range */
        drag = { x: ev.clientX, view: this.view, moved: false }; /* a Shift+click on the plot: a click */
      }
      if (drag && !drag.moved && ev.composedPath()[0] === c) { /* composedPath: the canvas also inside a shadow root (the Jupyter views widget) */
        const rect = c.getBoundingClientRect();
        const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
        const row = this.rowAt(px, py);
        if (row) { /* a label: click opens or closes a group, Shift+click pins, Alt+click hides */
          if (ev.altKey || ev.shiftKey || row.open !== undefined) this.inputAt ??= ev.timeStamp;
          if (ev.altKey) this.changeRows('hidden', row.key);
          else if (ev.shiftKey) this.changeRows('pinned', row.key);
          else if (row.open !== undefined) this.changeRows('open', row.key);
        } else if (this.lackingAt(px, py).length) { /* a bucket whose longest op is not held yet: asked, then selected */
          void this.hitWhenHeld(px, py).then((hit) => { if (hit) this.select(hit); });
        } else {
          const hit = this.hitAt(px, py);
          if (hit) this.select(hit);
        }
      }
      drag = undefined;
    });
    /* pointerrawupdate comes with each pointer sample, before the frame-aligned
     * mousemove: the hovered kernel's details are asked from there (one request
     * at a time), so the tooltip's answer is often on its way when mousemove runs */
    let early: Promise<unknown> | undefined;
    c.addEventListener('pointerrawupdate' as 'pointermove', (ev: PointerEvent) => {
      if (drag || early) return;
      const rect = c.getBoundingClientRect();
      const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
      if (this.rowAt(px, py)) return;
      const hit = this.hitAt(px, py);
      if (!hit && this.lackingAt(px, py).length) { void this.askLongest(this.lackingAt(px, py)); return; } /* the bucket's longest op, for mousemove's tooltip */
      if (!hit?.gpu || this.detailsCache.has(hit.id)) return;
      early = this.detailsFor(hit.id).catch(() => {}).finally(() => { early = undefined; });
    });
    c.addEventListener('mousemove', (ev) => {
      const rect = c.getBoundingClientRect();
      if (drag) {
        const dx = ev.clientX - drag.x;
        if (Math.abs(dx) > 2) drag.moved = true;
        if (drag.moved) {
          this.inputAt ??= ev.timeStamp;
          const nsPerPx = (drag.view.end - drag.view.start) / drag.view.width;
          this.setView(panView(drag.view, -dx * nsPerPx, this.bounds));
        }
        return;
      }
      const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
      c.style.cursor = onEdge(px) ? 'col-resize' : '';
      this.setCursor(px >= this.gutter ? px - this.gutter : undefined);
      const row = this.rowAt(px, py);
      this.pointer = { px, py };
      if (row) this.showLabel(row, px, py);
      else if (this.lackingAt(px, py).length) { /* a bucket whose count and longest op are not held yet: shown when they come, if the pointer stays */
        const t0 = ev.timeStamp;
        void this.hitWhenHeld(px, py).then((hit) => { if (this.pointer?.px === px && this.pointer.py === py) this.showTooltip(hit, px, py, t0); });
      } else this.showTooltip(this.hitAt(px, py), px, py, ev.timeStamp);
    });
    c.addEventListener('mouseleave', () => { this.pointer = undefined; this.setCursor(undefined); this.showTooltip(undefined, 0, 0); });
    c.addEventListener('blur', () => this.showTooltip(undefined, 0, 0));
    c.addEventListener('keydown', (ev) => this.onKey(ev));
    this.el.addEventListener('scroll', () => this.setView(this.view)); /* newly visible row blocks fetch their tiles */
  }

  private setCursor(px: number | undefined): void {
    if (px === this.cursorPx) return;
    this.cursorPx = px;
    this.queueFrame();
  }

  private onKey(ev: KeyboardEvent): void {
    const span = this.view.end - this.view.start;
    const k = ev.key;
    if (ev.altKey || ((ev.ctrlKey || ev.metaKey) && k !== 'f')) return; /* the editor's own shortcuts */
    if (PAN_ZOOM_KEYS.has(k)) this.inputAt ??= ev.timeStamp;
    /* W/S zoom at the cursor when it is over the plot (Nsight Systems, Perfetto), else at the centre */
    const anchor = this.cursorPx !== undefined ? this.view.start + (this.cursorPx / this.view.width) * span : undefined;
    if ((ev.ctrlKey || ev.metaKey) && k === 'f') { if (!this.onCommand('search')) return; }
    else if (k === '+' || k === '=' || k === 'w' || k === 'W') this.zoom(1 / 1.5, anchor);
    else if (k === '-' || k === '_' || k === 's' || k === 'S') this.zoom(1.5, anchor);
    else if (k === 'ArrowLeft' || k === 'a' || k === 'A') this.setView(panView(this.view, -span * 0.1, this.bounds));
    else if (k === 'ArrowRight' || k === 'd' || k === 'D') this.setView(panView(this.view, span * 0.1, this.bounds));
    else if (k === 'PageDown' || k === 'PageUp') this.el.scrollTop += (k === 'PageDown' ? 1 : -1) * this.el.clientHeight * 0.8;
    else if (k === 'Home' || k === '0') this.setView({ start: this.bounds.start, end: this.bounds.end, width: this.view.width });
    else if (k === 'f' || k === 'F') this.fit();
    else if (k === 'n' || k === 'p') this.step(k === 'n' ? 1 : -1);
    else if (k === 'Enter' && this.hover && !ev.shiftKey) this.select(this.hover);
    else if (k === 'Enter') { if (!this.onCommand(ev.shiftKey ? 'prev' : 'next')) return; }
    else if (k === 'Escape') { if (this.range) this.setRange(undefined); else if (!this.onCommand('escape')) return; }
    else if (k === '?') { if (!this.onCommand('help')) return; }
    else if (k === '/') { if (!this.onCommand('search')) return; }
    else return;
    ev.preventDefault();
  }

  /** Keyboard: move the hover to the next/previous kernel in the view. */
  private step(dir: number): void {
    const all = this.gpuHitsInView().sort((a, b) => a.start - b.start || a.id - b.id);
    if (!all.length) return;
    const i = this.hover ? all.findIndex((hh) => hh.id === this.hover!.id) : -1;
    const next = all[(i + dir + all.length) % all.length]!;
    const row = this.rows.findIndex((r) => r.ids.includes(next.trackId));
    const v = this.view;
    const px = this.gutter + ((Math.max(next.start, v.start) - v.start) / (v.end - v.start)) * v.width;
    this.showTooltip(next, px, AXIS_H + row * ROW_H + ROW_H - this.el.scrollTop);
  }

  select(hit: Hit): void {
    this.selected = hit.gpu ? hit.id : undefined;
    this.selectedSpan = { start: hit.start, end: hit.end };
    this.flow = undefined;
    this.showTooltip(undefined, 0, 0); /* the Details panel shows it now */
    this.queueFrame();
    this.onSelect(hit);
    const token = ++this.flowToken;
    const done = (f: Flow | undefined) => {
      if (token !== this.flowToken) return;
      this.flow = f;
      this.el.dataset.flow = f ? JSON.stringify(f) : '';
      this.queueFrame();
    };
    if (hit.gpu) void this.launchOf(hit.id).then(done, () => done(undefined));
    else if (hit.trackId.startsWith('api:') && hit.count === undefined) void this.kernelsOf(hit).then(done, () => done(undefined)); /* a call, not a bucket */
  }

  /** A GPU op's launching API call (kernel/details' api): the flow from the call to the op. */
  private async launchOf(id: number): Promise<Flow | undefined> {
    const d = await this.detailsFor(id);
    const api = d.api as Record<string, unknown> | null | undefined;
    if (!api || typeof api !== 'object') return undefined;
    return {
      api: { id: Number(api.id), trackId: `api:${String(api.pid)}:${String(api.tid)}`, start: this.rel(api.start as Int), end: this.rel(api.end as Int) },
      ops: [{ id, trackId: String(d.track ?? ''), start: this.rel(d.start as Int), end: this.rel(d.end as Int) }],
    };
  }

  /** The GPU ops an API call launched. A stream runs its ops in launch order and kernelIds number
   * each GPU track's ops by start (timeline/tracks order, `count` each; docs/protocol.md), so on
   * each of the process's GPU tracks a binary search on the launching call's start (kernel/details'
   * api) finds the first op launched at or after the call, and the call's ops follow it:
   * O(log n) kernel/details per track. (The protocol has no API → ops method.) */
  private async kernelsOf(call: Hit): Promise<Flow | undefined> {
    const pid = call.trackId.split(':')[1];
    const launchedAt = async (op: number) => { const f = await this.launchOf(op); return f ? f.api.start : this.rel((await this.detailsFor(op)).start as Int); };
    const ops: FlowOp[] = [];
    let base = 0;
    for (const t of this.trackById.values()) {
      if (t.kind !== 'gpu') continue;
      const n = Number(t.count ?? 0);
      let lo = base, hi = base + n;
      base += n;
      if (String(t.pid) !== pid || n === 0) continue;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (await launchedAt(mid) < call.start) lo = mid + 1; else hi = mid;
      }
      for (let op = lo; op < Math.min(lo + 64, base); op++) { /* a graph launch puts many ops on a stream */
        const f = await this.launchOf(op);
        if (!f || f.api.start !== call.start) break;
        if (f.api.id === call.id && f.api.trackId === call.trackId) ops.push(f.ops[0]!);
      }
    }
    return { api: { id: call.id, trackId: call.trackId, start: call.start, end: call.end }, ops };
  }


  /** Selects GPU op `id` as a click on it would ("Show in timeline", top kernels): its details come from the server. */
  async selectKernel(id: number): Promise<void> {
    const d = await this.detailsFor(id);
    const start = this.rel(d.start as Int), end = this.rel(d.end as Int);
    this.select({ id, name: String(d.displayName ?? d.name ?? ''), kind: String(d.kind ?? 'kernel'), start, end, dur: end - start, trackId: String(d.track ?? ''), gpu: true });
  }

  private showLabel(row: Row, px: number, py: number): void {
    this.hover = undefined;
    const t = this.trackById.get(row.ids[0] ?? '') ?? ({} as Partial<Track>);
    const extra = [row.ids.length > 1 ? `${row.ids.length} tracks merged` : '',t.streamClass ? String(t.streamClass) : '', typeof t.busyNs === 'number' ? `busy ${formatNs(t.busyNs)}` : '', typeof t.count === 'number' ? `${t.count} items` : ''].filter(Boolean).join(' · ');
    this.tooltip.hidden = false;
    this.tooltip.style.left = `${px + 12}px`;
    this.tooltip.style.top = `${py + this.el.scrollTop + 14}px`; /* in the scrolled element's coordinates */
    const how = row.open === undefined ? 'Shift+click pins, Alt+click hides' : `click ${row.open ? 'collapses' : 'expands'}; Shift+click pins, Alt+click hides`;
    this.tooltip.replaceChildren(h('div', { class: 'tip-name' }, row.title), h('div', {}, extra), h('div', { class: 'tip-extra' }, how));
  }

  /** kernel/details of GPU op `id` from the cache the hovers fill (the Details panel asks it too). */
  kernelDetails(id: number): Promise<Record<string, unknown>> { return this.detailsFor(id); }

  /** kernel/details, cached (the most recent 2000). */
  private detailsFor(id: number): Promise<Record<string, unknown>> {
    let p = this.detailsCache.get(id);
    if (p) return p;
    p = this.details(id);
    this.detailsCache.set(id, p);
    p.catch(() => this.detailsCache.delete(id));
    if (this.detailsCache.size > 2000) this.detailsCache.delete(this.detailsCache.keys().next().value as number);
    return p;
  }

  private showTooltip(hit: Hit | undefined, px: number, py: number, t0 = performance.now()): void {
    if (hit && this.hover && hit.id === this.hover.id && !this.tooltip.hidden) { /* same item: the tooltip follows, no new request */
      this.tooltip.style.left = `${Math.min(px + 12, this.el.clientWidth - 320)}px`;
      this.tooltip.style.top = `${py + this.el.scrollTop + 14}px`; /* in the scrolled element's coordinates */
      return;
    }
    this.hover = hit;
    clearTimeout(this.intentTimer);
    const tip = this.tooltip;
    delete tip.dataset.details;
    if (!hit) { tip.hidden = true; return; }
    tip.hidden = false;
    tip.style.left = `${Math.min(px + 12, this.el.clientWidth - 320)}px`;
    tip.style.top = `${py + this.el.scrollTop + 14}px`;
    tip.replaceChildren(
      h('div', { class: 'tip-name' }, hit.name),
      h('div', {}, hit.count && hit.count > 1 ? `${hit.count} here · longest ${formatNs(hit.dur)}` : `${formatNs(hit.dur)} · ${hit.kind}`),
    );
    if (!hit.gpu) return;
    this.detailsFor(hit.id).then((d) => {
      if (this.hover !== hit) return;
      const api = (d.api ?? d.launch ?? d.apiCall) as Record<string, unknown> | undefined;
      const extra: string[] = [];
      if (d.durNs !== undefined || d.dur !== undefined) extra.push(`duration ${formatNs(Number(d.durNs ?? d.dur))}`);
      if (api && typeof api === 'object') {
        if (api.name) extra.push(`launched by ${String(api.name)}`);
        if (api.queueDelayNs !== undefined || d.queueDelayNs !== undefined) {
          /* negative: the op started before its API call returned (a blocking call such as cudaMemcpy) */
          const q = Number(api.queueDelayNs ?? d.queueDelayNs);
          extra.push(q >= 0 ? `queue delay ${formatNs(q)}` : `started ${formatNs(-q)} before the call returned`);
        }
      }
      if (d.nvtxPath && Array.isArray(d.nvtxPath) && d.nvtxPath.length) extra.push(`NVTX ${d.nvtxPath.map((x) => (typeof x === 'string' ? x : (x as { name?: string }).name)).join(' › ')}`);
      tip.append(h('div', { class: 'tip-extra' }, extra.join(' · ') || 'details loaded'));
      tip.dataset.details = 'true';
      this.perf.hovers.push(performance.now() - t0);
      /* the pointer rests on the tooltip, complete: a sweep across ops asks nothing more, a rest asks what a click shows */
      this.intentTimer = setTimeout(() => { if (this.hover === hit && !tip.hidden) this.onIntent(hit); }, INTENT_REST_MS);
    }, () => { /* details are optional in the tooltip */ });
  }
}

function fit(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid; else hi = mid - 1;
  }
  return text.slice(0, lo) + '…';
}

/** A tile of a block with no tracks to draw (a row of a group that draws nothing itself). */
function emptyTile(p: { start: number; end: number; width: number }): RangeColumns {
  return { resolution: Math.max(1, (p.end - p.start) / p.width), start: p.start, end: p.end, format: 'columns', names: [], tracks: [] } as unknown as RangeColumns;
}
