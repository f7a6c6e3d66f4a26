// The timeline widget: a canvas with one row per track. Input as in Nsight Systems and
// Perfetto, the same as the VS Code webview (client/timelineNav KEYS): Ctrl+wheel or W/S zoom at the
// cursor, the wheel, drag or A/D pan, a drag on the time axis (or Shift+drag) selects a range
// (its analyses below the plot), double-click zooms to a slice (elsewhere: the whole profile),
// F fits, `/` searches (Enter / Shift+Enter step through the matches), `?` lists the keys.
// The view and the range are synced with Python (`view`, `selection`). Each view change asks the Python side
// for `timeline/range` at the canvas's pixel width (at most one request in flight,
// the latest view wins). Counters sit on the root element as data-* attributes.
import { RenderProps } from "./anywidget";
import { el, ownKeys } from "./dom";
import { formatCursor, timeAxis } from "nsys-views/client/timeAxis";
import { eventColor, fmtDur, trackHue } from "./format";
import { RangeClient, RangeData, TrackData, gridResolution, inflateNative, nameAt } from "./range_client";
import { BucketCols } from "./bucket_cols";
import { relTime } from "nsys-views/client/exactJson";
import { LEGEND, TreeNode, TreeRow, TreeState, newTreeState, toggle, trackTree, visibleRows } from "nsys-views/client/trackTree";
import { Match, MatchPage, dragWindow, frameSpan } from "nsys-views/client/timelineNav";
import { AREA_PARAMS, AreaPart, NAV_CSS, SearchBox, fillRange, helpBox } from "./nav_ui";
import { MARKS_CSS, MARK_COLOR, MarkEntry, MarksPanel } from "./marks";

interface Track {
  id: string;
  kind: string;
  name: string;
  streamClass?: string;
  device?: number;
  stream?: number;
  pid?: number;
  tid?: number;
  depth?: number;
  threadName?: string;
}

/** One view change: from the input (wheel, drag, button) to the end of the frame drawn with its data. */
interface Sample {
  seq: number;
  inputToDrawMs: number;
  /** request sent -> reply decoded */
  roundTripMs: number;
  /** the Python side's time (timeline/range + forwarding) */
  pythonMs: number;
  decodeMs: number;
  drawMs: number;
  bytes: number;
  /** the reply's JSON size (inflated) */
  rawBytes: number;
  items: number;
  upMs: number;
  kernelMs: number;
  downMs: number;
  rpcMs: number;
  pyDecodeMs: number;
  packMs: number;
  /** reply layout / server format, e.g. "bin/columns" */
  format: string;
  /** whether a frame showed this view (drawn from the data already there) before its data came */
  previewed: boolean;
}

interface Window {
  start: number;
  end: number;
}

interface Model {
  /** the area selection (offsets; {} when none), set here and read from Python (`selection`) */
  _selection: Partial<Window>;
  tracks: Track[];
  /** times are offsets from this (decimal ns: exact on epoch clocks) */
  origin: string;
  span: Window;
  /** the window shown (offsets), both ways: Python's `view` */
  _view: Window;
  height: number;
  title: string;
  /** rows shown from Python (`w.show(rows)`): their kernels / NVTX ranges are outlined */
  _marks: MarkEntry[];
  /** wall-clock ms of the Python side's first-frame stages (open, opened, show, tracks) */
  _stamps: Record<string, number>;
  /** the first view's data, answered by Python at show() (a range reply's buffer; empty: none) */
  _first: DataView | ArrayBuffer | null;
  /** its reply fields, plus the plot width it was asked for (`width`) */
  _first_meta: Record<string, unknown>;
}

/** when this module was evaluated (wall clock ms): the first-frame breakdown's "module loaded" */
const MODULE_AT = performance.timeOrigin + performance.now();
const wallNow = () => performance.timeOrigin + performance.now();

const LABEL_W = 210;
const AXIS_H = 22;
const ROW_H = 16;
const MIN_SPAN_NS = 10;
/** area selections whose analyses' answers are held (areaAnalyses) */
const AREA_HELD = 8;
/** a pointer resting this long (ms) on a GPU op asks for its details ahead of a click (detailsAhead):
 *  a real rest, not a pointer passing over (at 30 ms the bench's hovers asked ahead each time and
 *  the reply, with the kernel's busy/idle messages, reached the page during the next hover) */
const DETAILS_DWELL_MS = 60;
/** ops whose details are held for a click (the latest asked ahead) */
const DETAILS_HELD = 64;

const CSS = `
.nsys-tl { position: relative; }
.nsys-tl { font: 12px system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; background: var(--jp-layout-color0, #fff); }
/* one line at every width: the legend, the status, the search box and the title give room (shrink weighted so
   that the title keeps the most), the buttons never do, so "?" stays on the line (it wrapped onto a second one when narrow) */
.nsys-tl-bar { display: flex; flex-wrap: nowrap; gap: 6px; align-items: center; padding: 4px 6px; overflow: hidden;
  border-bottom: 1px solid var(--jp-border-color2, #ddd); }
.nsys-tl-bar b { margin-right: auto; font-weight: 600; flex: 1 1 12em; min-width: 0; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; } /* its text (the window) changes with the view: its width must not (no reflow, no wrap) */
.nsys-tl-bar button { font: inherit; padding: 0 8px; cursor: pointer; flex: none; white-space: nowrap; }
.nsys-tl-bar .nsys-tl-legend { flex: 0 3 auto; min-width: 0; overflow: hidden; }
.nsys-tl-bar .nsys-tl-search { flex: 0 1 auto; min-width: 0; }
.nsys-tl-bar .nsys-tl-search input { flex: 0 1 14em; min-width: 4em; }
.nsys-tl-status { color: var(--jp-ui-font-color2, #666); font-variant-numeric: tabular-nums; display: inline-block;
  flex: 0 2 36ch; min-width: 0; height: 16px; line-height: 16px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;
  text-align: right; contain: strict; }
.nsys-tl-scroll { overflow-y: auto; overflow-x: hidden; position: relative; }
.nsys-tl-sizer { position: relative; }
.nsys-tl canvas { display: block; cursor: grab; position: sticky; top: 0; }
.nsys-tl canvas.dragging { cursor: grabbing; }
.nsys-tl-tip { position: absolute; pointer-events: none; background: rgba(20,20,20,.9); color: #fff; padding: 3px 6px;
  border-radius: 3px; white-space: pre; font-size: 11px; display: none; z-index: 2; max-width: 520px; overflow: hidden; }
.nsys-tl-err { color: #b00; }
.nsys-tl-details { border-top: 1px solid var(--jp-border-color2, #ddd); padding: 4px 10px; max-height: 260px; overflow: auto;
  position: relative; font-size: 12px; }
.nsys-tl-details table { border-collapse: collapse; margin: 4px 0; }
.nsys-tl-details td, .nsys-tl-details th { border: 1px solid var(--jp-border-color2, #ddd); padding: 1px 6px; text-align: left; }
.nsys-tl-details p { margin: 4px 0; }
.nsys-tl-details.nsys-tl-loading { opacity: 0.5; }
.nsys-tl-details h1, .nsys-tl-details h2, .nsys-tl-details h3 { font-size: 13px; margin: 6px 0 2px; }
.nsys-tl-close { position: absolute; right: 6px; top: 2px; cursor: pointer; }
.nsys-tl-legend { display: inline-flex; gap: 6px; font-size: 11px; color: var(--jp-ui-font-color2, #666); }
.nsys-tl-legend-item { display: inline-flex; gap: 3px; align-items: center; white-space: nowrap; }
.nsys-tl-legend-item i { display: inline-block; width: 9px; height: 9px; border-radius: 2px; }
`;

class Timeline {
  private root = el("div", "nsys-tl");
  private canvas = el("canvas");
  private scroll = el("div", "nsys-tl-scroll");
  /** as tall as every row: gives the scroll range; the canvas (sticky) only covers the view */
  private sizer = el("div", "nsys-tl-sizer");
  private maxH = 420;
  private status = el("span", "nsys-tl-status", "loading…");
  private tip = el("div", "nsys-tl-tip");
  private details = el("div", "nsys-tl-details");
  private client: RangeClient;
  private tracks: Track[];
  /** the rows drawn (client track tree: GPU › utilisation › streams, process › thread › NVTX, API) */
  private rows: TreeRow[] = [];
  private tree: TreeNode[] = [];
  private treeState: TreeState = newTreeState();
  private trackById = new Map<string, Track>();
  /** the label column's width (its edge drags) */
  private labelW = LABEL_W;
  private unhide = el("button", "nsys-tl-unhide", "");
  private span: Window;
  private view: Window;
  private data: RangeData | null = null;
  /** the bucket columns a tooltip and a click need, asked after each view's data (bucket_cols.ts) */
  private bucketCols!: BucketCols;
  /** The pointer's x over the plot (its time is shown on the axis), or null. */
  private cursorX: number | null = null;
  private inflight = false;
  private dirty = false;
  private width = 600;
  private drawQueued = false;
  /** the latest data whose window covers the whole profile (the first view's, or a later
   *  whole-profile answer): drawn, coarse, where the current data does not reach */
  private coarse: RangeData | null = null;
  /** the latest view a frame showed before its own data came */
  private shownEarly = 0;
  /** row labels clipped to the label column */
  private labels = new Map<string, string>();
  private resize: ResizeObserver;
  private visibility: IntersectionObserver;
  /** the plot width the shown data was asked for */
  private dataWidth = 0;
  // latency bookkeeping: each view change (zoom, pan, reset) gets a sequence number and its
  // input time; the frame that first draws data answered for that view (or a later one) ends it
  private viewSeq = 0;
  private inputAt = new Map<number, number>();
  private drawnSeq = 0;
  private dataSeq = 0;
  /** measured view changes, newest last (at most 1000): for the benchmark and tests */
  readonly samples: Sample[] = [];

  /** the area selection (offsets), or null */
  private range: Window | null = null;
  /** search matches: the current one and those in view (outlined) */
  private matchNow: Match | undefined;
  private matches: Match[] = [];
  private search!: SearchBox;
  private marks!: MarksPanel;
  private help = helpBox();
  private rangeBox = el("div", "nsys-tl-range");
  private model!: RenderProps<Model>["model"];
  private titleEl = el("b");
  private syncTimer: ReturnType<typeof setTimeout> | undefined;
  /** views written to Python whose echo has not come back (at most 16) */
  private sentViews = new Set<string>();

  /** wall-clock stamps (ms) of the first frame's stages, on the root as data-first-* (bench_widget_ux.py) */
  private first: Record<string, number> = {};

  private stamp(name: string): void {
    if (this.first[name] !== undefined) return;
    this.first[name] = wallNow();
    this.root.dataset[`first${name[0].toUpperCase()}${name.slice(1)}`] = this.first[name].toFixed(1);
  }

  constructor({ model, el: host }: RenderProps<Model>) {
    this.model = model;
    this.root.dataset.firstModule = MODULE_AT.toFixed(1);
    this.root.dataset.pyStamps = JSON.stringify(model.get("_stamps") ?? {});
    this.stamp("render");
    this.client = new RangeClient(model as never);
    this.bucketCols = new BucketCols(this.client, () => {
      this.root.dataset.bucketCols = `${this.bucketCols.asked}:${this.bucketCols.merged}`;
    });
    this.client.origin = BigInt(model.get("origin") || "0");
    this.root.dataset.origin = String(this.client.origin);
    this.tracks = model.get("tracks") ?? [];
    this.tree = trackTree(this.tracks);
    this.trackById = new Map(this.tracks.map((t) => [t.id, t]));
    this.rows = visibleRows(this.tree, this.treeState);
    this.span = { ...model.get("span") };
    this.view = { ...model.get("_view") };
    if (!(this.span.end > this.span.start)) this.span = { start: this.span.start, end: this.span.start + 1e6 };
    if (!(this.view.end > this.view.start)) this.view = { ...this.span };
    this.takeInitial(model.get("_first"), model.get("_first_meta"));

    const style = el("style");
    style.textContent = CSS + NAV_CSS + MARKS_CSS;
    const bar = el("div", "nsys-tl-bar");
    this.titleEl.textContent = model.get("title") || "timeline";
    bar.append(this.titleEl);
    const zoomOut = el("button", "nsys-tl-zoom-out", "−");
    const zoomIn = el("button", "nsys-tl-zoom-in", "+");
    const reset = el("button", "nsys-tl-reset", "reset");
    zoomOut.title = "zoom out";
    zoomIn.title = "zoom in (or wheel over the timeline)";
    reset.title = "whole profile (or double-click)";
    zoomIn.onclick = () => this.zoom(0.5, 0.5);
    zoomOut.onclick = () => this.zoom(2, 0.5);
    reset.onclick = () => this.setView({ ...this.span });
    this.unhide.title = "show the hidden rows";
    this.unhide.style.display = "none";
    this.unhide.onclick = () => this.changeRows("unhide");
    this.search = new SearchBox(
      async (p) => this.toPage(await this.client.ask("search", { query: p.query, instances: p.instances, kinds: this.search.kinds,
        ...(p.at !== undefined ? { at: Math.round(p.at) } : { offset: p.offset ?? 0 }) })),
      (query) => async (s0, e0, limit) => this.toPage(await this.client.ask("search", { query, instances: limit,
        kinds: this.search.kinds, start: Math.floor(s0), end: Math.ceil(e0) })),
      (now, inView, zoom) => this.setMatches(now, inView, zoom),
      () => this.view);
    this.marks = new MarksPanel(
      async (e, p) => this.toPage(await this.client.ask("search", { query: e.name, exact: true, kinds: [e.kind], ...p })),
      () => this.view,
      (m) => {
        const now = this.marks.now;
        this.root.dataset.markNow = now ? `${now.kind}:${now.id}` : "";
        if (m) this.reveal(m);
        this.queueDraw();
      });
    model.on("change:_marks", () => this.marks.set(model.get("_marks") ?? []));
    const helpBtn = el("button", "nsys-tl-helpbtn", "?");
    helpBtn.title = "keyboard and mouse (?)";
    helpBtn.onclick = () => this.toggleHelp();
    bar.append(legend(), this.search.el, this.status, this.unhide, zoomOut, zoomIn, reset, helpBtn);
    this.rangeBox.style.display = "none";
    this.maxH = model.get("height") || 420;
    this.scroll.style.maxHeight = `${this.maxH}px`;
    // the plot's height before it is laid out, as its first frame draws it (paint): that frame, drawn
    // in the layout's ResizeObserver callback (drawNow), then changes no size (a size changed there
    // would be observed again in the same frame)
    const totalH = AXIS_H + Math.max(1, this.rows.length) * ROW_H + 4;
    this.sizer.style.height = `${totalH}px`;
    this.canvas.style.height = `${Math.min(totalH, this.maxH)}px`;
    this.sizer.append(this.canvas, this.tip);
    this.scroll.append(this.sizer);
    this.details.style.display = "none";
    this.root.append(style, bar, this.marks.el, this.help, this.scroll, this.rangeBox, this.details);
    if (!this.tracks.length) { // timed rows but none a timeline draws (CPU samples only, no CUDA): said, not an empty plot
      this.scroll.style.display = "none";
      this.scroll.before(el("p", "nsys-tl-empty", "Nothing to draw: this profile has no GPU, NVTX or CUDA API activity."));
    }
    ownKeys(this.root); // the focusable parts are marked by el() (dom.ts)
    this.canvas.tabIndex = 0;
    this.canvas.addEventListener("keydown", (ev) => this.onKey(ev));
    // Python sets the view (w.view = (start, end)): shown here
    model.on("change:_view", () => {
      const v = model.get("_view");
      // the kernel's echo of a view this widget wrote (ipywidgets 8 echoes state updates): not a
      // move from Python; applying it would jump back to a view the user has since left
      if (v && this.sentViews.delete(`${v.start}|${v.end}`)) return;
      if (v && v.end > v.start && (v.start !== this.view.start || v.end !== this.view.end)) this.setView({ start: v.start, end: v.end }, true);
    });
    (this.root as unknown as { __nsysNav: unknown }).__nsysNav = {
      asked: () => ({ ...this.client.asked }),
      // the legs of the last answered request per kind (the bench's round-trip breakdown)
      legs: () => ({ ...this.client.legs }),
      // tests: the bucket columns off (what was merged removed: the tooltip and a click ask per
      // bucket, the fallback) or on again (asked for the view held)
      bucketCols: (on: boolean) => {
        this.bucketCols.off = !on;
        if (on) this.askBucketCols();
        else {
          this.bucketCols.drop();
          for (const t of this.data?.tracks.values() ?? []) {
            if (!t.bk) continue;
            for (const k of ["count", "longestId", "longestDur", "busyNs", "longestNamed"] as const) delete t.bk[k];
          }
        }
        return { off: this.bucketCols.off };
      },
      bucketColsState: () => ({ asked: this.bucketCols.asked, merged: this.bucketCols.merged, pending: !!(this.data && this.bucketCols.pending(this.data)) }),
      // the latest view a frame showed before its own data came
      shownEarly: () => this.shownEarly,
      ask: (kind: string, fields: Record<string, unknown>) => this.client.ask(kind, fields),
      // tests: the GPU bucket at canvas (x, y), or null
      bucketAt: (x: number, y: number) => {
        const hit = this.hitAt(this.rows[this.rowAt(y)], x);
        if (!hit || !hit.d.bk || hit.track.kind !== "gpu") return null;
        return { track: hit.d.id, start: itemSpan(hit.d, hit.i)[0], resolution: hit.d.resolution };
      },
      hold: (on: boolean) => (on ? this.client.hold() : this.client.release()),
      view: () => ({ ...this.view }), range: () => this.range, steps: this.search.steps, labelW: () => this.labelW,
      fetches: () => ({ search: this.search.around.fetches, marks: this.marks.fetches }),
      seq: () => this.viewSeq,
      rows: () => this.rows.map((r) => ({ key: r.key, open: r.open, kind: r.kind, ids: r.ids.length, tracks: r.ids })),
      // tests: the item at canvas (x, y) as a tooltip or a click names it (a bucket: its longest op, once held), or null
      hit: (x: number, y: number) => {
        const h = this.hitAt(this.rows[this.rowAt(y)], x), f = h && opFirst(h.track, h.d, h.i);
        return h && f ? { name: f.name, kind: f.kind, id: f.opId, gpu: h.track.kind === "gpu", bucket: !h.d.ev } : null;
      },
      scrollTop: () => this.scroll.scrollTop,
    };
    host.append(this.root);
    if (model.get("_marks")?.length) this.marks.set(model.get("_marks")); // shown before this view rendered
    this.bindPointer();
    this.scroll.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // counters from the start (a first frame drawn from the data sent with the widget asks nothing)
    Object.assign(this.root.dataset, { served: "0", requests: "0", answered: "0", failed: "0" });
    // for tests: one empty request/reply through the widget's messages, in ms
    const hook = this.root as unknown as { __nsysPing: (pad?: number) => Promise<{ ms: number; upMs: number; downMs: number }>; __nsysSamples: Sample[];
      __nsysSetWire: (w?: string) => void };
    hook.__nsysPing = async (pad?: number) => {
      const t0 = performance.now();
      const w0 = performance.timeOrigin + t0;
      const m = await this.client.ask("ping", pad ? { pad } : {});
      const t1 = performance.now();
      return { ms: t1 - t0, upMs: Number(m.recvAt) - w0, downMs: performance.timeOrigin + t1 - Number(m.sentAt) };
    };
    hook.__nsysSamples = this.samples;
    hook.__nsysSetWire = (w?: string) => (this.client.wire = w);
    // for tests: show [start, end] given on the profile's clock (decimal strings: exact)
    (this.root as unknown as { __nsysShow: (s: string, e: string) => void }).__nsysShow = (s, e) =>
      this.setView({ start: relTime(BigInt(s), this.client.origin), end: relTime(BigInt(e), this.client.origin) });
    // what is shown is fetched whenever the widget becomes visible or changes size (an output
    // area laid out after Run All, a collapsed output expanded, a tab switched back to)
    this.resize = new ResizeObserver(() => this.onResize());
    this.resize.observe(this.root);
    this.resize.observe(this.scroll);
    this.visibility = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.onResize();
    });
    this.visibility.observe(this.root);
    (this.root as unknown as { __nsysRows: () => string[] }).__nsysRows = () => this.rows.map((r) => r.key);
    this.onResize();
  }

  /** The first view's data, sent with the widget (Python answered it at show()): drawn in the
   *  first frame with no round trip. Asked for at a guessed plot width; when this plot's width
   *  puts the view on another grid it is drawn (coarse) until this width's answer comes. */
  private takeInitial(buf: DataView | ArrayBuffer | null | undefined, meta: Record<string, unknown> | undefined): void {
    if (!buf || !buf.byteLength || !meta || !(Number(meta.width) > 0)) return;
    const take = (d: RangeData) => {
      this.initialData = d;
      this.data = d;
      this.dataWidth = Number(meta.width);
      this.dataSeq = 0;
      this.noteCoarse(d);
      this.stamp("initial");
      this.root.dataset.initial = `${buf.byteLength}|${d.resolution}|${this.dataWidth}`;
      this.root.dataset.initialTracks = `${d.tracks.size}/${this.tracks.length}`;
      this.status.textContent = `${fmtDur(this.view.end - this.view.start)} · ${fmtDur(d.resolution)}/px · sent with the widget`;
    };
    const failed = (e: unknown) => console.warn("nsys-ai: the widget's first view could not be decoded", e);
    if (meta.format !== "jsonz" || typeof DecompressionStream !== "function") {
      try {
        take(this.client.initial(meta, buf));
      } catch (e) {
        failed(e);
      }
      return;
    }
    // inflated natively (the first call of fflate's inflate, unoptimised code, took ~80 ms for the
    // 500 KB of a 1M-kernel profile's first view; the browser's own, ~2 ms); range requests wait
    // for it (as for one in flight), then what the view needs is asked for
    this.inflight = true;
    inflateNative(buf)
      .then((raw) => take(this.client.initial({ ...meta, format: "json" }, raw)))
      .catch(failed)
      .finally(() => {
        this.inflight = false;
        // asked for meanwhile only because there was no data yet (no view change since): what
        // the view needs now is decided by the data (onResize)
        if (this.viewSeq === 0) this.dirty = false;
        this.onResize();
        this.queueDraw();
        this.askBucketCols();
      });
  }


  /** the first view's data sent with the widget (it may hold only the tracks of the rows the
   *  first frame shows: the rest is asked right after that frame, fetchRest) */
  private initialData: RangeData | null = null;

  /** After the first complete frame: the tracks the first view's data left out (Python sent
   *  only the rows in view, _first_rows.py), asked for that data's own window and width and
   *  merged into it and into whatever holds the same answer (the view's data, the coarse
   *  whole-profile picture), so that every row is drawn as when all came with the widget. */
  private fetchRest(): void {
    const d0 = this.initialData;
    const a = d0?.asked;
    const missing = this.restMissing();
    if (!d0 || !a || !missing.length) {
      this.root.dataset.requests = String(this.client.sent);
      return;
    }
    this.client
      .request(a.start, a.end, a.width, missing, true)
      .then((d) => {
        if (d.resolution !== d0.resolution || d.start !== d0.start) return; // (the same request: never)
        const same = (x: RangeData | null) => !!x && (x === d0 || (x.asked?.start === a.start && x.asked?.end === a.end &&
          x.asked?.width === a.width && x.resolution === d0.resolution));
        for (const into of new Set([d0, this.data, this.coarse])) {
          if (!same(into)) continue;
          for (const [id, t] of d.tracks) if (!into!.tracks.has(id)) into!.tracks.set(id, t);
        }
        this.root.dataset.restTracks = String(d.tracks.size);
        this.queueDraw();
        this.askBucketCols();
      })
      .catch((e: Error) => { if (!this.client.closed) console.warn("nsys-ai: the first view's other rows could not be fetched", e); })
      .finally(() => {
        this.root.dataset.requests = String(this.client.sent);
        this.root.dataset.answered = String(this.client.answered);
        this.root.dataset.failed = String(this.client.failed);
      });
    this.root.dataset.requests = String(this.client.sent);
  }

  /** The tracks the first view's data left out (none without its window). */
  private restMissing(): string[] {
    const d0 = this.initialData;
    return d0?.asked ? this.tracks.map((t) => t.id).filter((id) => !d0.tracks.has(id)) : [];
  }

  /** Keeps `d` as the coarse picture when it covers the whole profile. */
  private noteCoarse(d: RangeData): void {
    if (d.start <= this.span.start && d.end >= this.span.end) this.coarse = d;
  }

  /** Whether `d` is the answer for the view at this plot width: asked at it, or on the same grid. */
  private fitsWidth(d: RangeData): boolean {
    const pw = this.plotWidth();
    return this.dataWidth === pw || d.resolution === gridResolution(this.view.start, this.view.end, pw);
  }

  destroy(): void {
    this.resize.disconnect();
    this.visibility.disconnect();
    this.client.dispose();
  }

  /** Resizes the label column (at least 80 px, leaving the plot 120). */
  setLabelWidth(px: number): void {
    this.labelW = Math.round(Math.max(80, Math.min(this.width - 120, px)));
    this.root.dataset.labelWidth = String(this.labelW);
    this.labels.clear();
    this.queueDraw();
    this.fetch();
  }

  // -- view and requests ---------------------------------------------------------
  private plotWidth(): number {
    return Math.max(50, this.width - this.labelW);
  }

  /** A new view: drawn in the next frame from the data already here (the last answer shifted
   *  and scaled to the view, the coarse whole-profile picture where it does not reach), and
   *  asked for (at most one request in flight; the newest view replaces a queued one). */
  private setView(v: Window, fromPython = false): void {
    const fullSpan = this.span.end - this.span.start;
    let len = Math.max(MIN_SPAN_NS, Math.min(v.end - v.start, fullSpan * 1.5));
    let start = v.start;
    const lo = this.span.start - fullSpan * 0.25;
    const hi = this.span.end + fullSpan * 0.25;
    if (start < lo) start = lo;
    if (start + len > hi) start = Math.max(lo, hi - len);
    len = Math.min(len, hi - lo);
    this.view = { start, end: start + len };
    this.viewSeq++;
    this.inputAt.set(this.viewSeq, performance.now());
    // asked before the title's text is written: fetch() reads the layout (the plot's size, the
    // rows in view), which after a write is a forced layout of the whole page in the input's task
    this.fetch();
    this.viewChanged(fromPython);
    this.queueDraw();
  }

  // -- navigation: search, range, keys, Python sync -------------------------------
  /** After every view change: the matches in view, the title's window, and Python's `view`
   *  (debounced; not echoed back when Python set it). */
  private viewChanged(fromPython: boolean): void {
    this.search?.viewChanged();
    this.marks?.viewChanged();
    this.titleEl.textContent = `${this.model.get("title") || "timeline"} · ${formatCursor(this.view.start, this.span.start, 1)} – ${formatCursor(this.view.end, this.span.start, 1)}`;
    if (fromPython) return;
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => {
      const v = { start: Math.round(this.view.start), end: Math.round(this.view.end) };
      this.model.set("_view", v);
      this.model.save_changes();
      this.sentViews.add(`${v.start}|${v.end}`); // after set: its own change event has passed
      if (this.sentViews.size > 16) this.sentViews.delete(this.sentViews.values().next().value as string);
    }, 150);
  }

  /** A "search" reply: its instances with names (times: offsets, as the Python side sends them). */
  private toPage(m: Record<string, unknown>): MatchPage {
    const names = (m.names as string[]) ?? [];
    const items = ((m.items as Array<Record<string, unknown>>) ?? []).map((x) => ({ kind: String(x.kind), id: Number(x.id),
      track: String(x.track), start: Number(x.start), end: Number(x.end), name: names[Number(x.name)] ?? "" }));
    return { total: Number(m.total ?? 0), offset: Number(m.offset ?? 0), items };
  }

  private setMatches(now: Match | undefined, inView: Match[], zoom: boolean): void {
    this.matchNow = now;
    this.matches = inView;
    this.root.dataset.match = now ? `${now.kind}:${now.id}` : "";
    this.root.dataset.matches = String(inView.length);
    if (now && zoom) this.reveal(now);
    this.queueDraw();
  }

  /** Zooms to a match (a search step, a shown row's instance) and scrolls its row into view. */
  private reveal(m: Match): void {
    this.zoomTo(m.start, m.end);
    const r = this.rowOfTrack(m.track);
    const h = this.scroll.clientHeight - AXIS_H;
    if (r >= 0 && (r * ROW_H < this.scroll.scrollTop || (r + 1) * ROW_H > this.scroll.scrollTop + h)) this.scroll.scrollTop = Math.max(0, r * ROW_H - h / 2);
  }

  /** Shows [start, end] with a margin (a match, a double-clicked slice). */
  zoomTo(start: number, end: number): void {
    this.setView(frameSpan(start, end, this.span));
  }

  /** F: the view fits the range, else the selected op. */
  fit(): void {
    const r = this.range ?? this.selectedSpan;
    if (r) this.setView({ start: r.start, end: Math.max(r.end, r.start + MIN_SPAN_NS) });
  }

  private selectedSpan: Window | null = null;

  /** Sets or clears the area selection: shaded on the plot, its analyses below it, and `selection` in Python. */
  setRange(r: Window | null): void {
    this.range = r;
    this.root.dataset.range = r ? JSON.stringify(r) : "";
    this.queueDraw();
    if (!r) {
      this.rangeBox.style.display = "none";
      this.syncSelection();
      return;
    }
    this.rangeBox.style.display = "block";
    const win = { start: Math.round(r.start), end: Math.round(r.end) };
    // Python's `selection` is written once the analyses are shown: written first, its state message
    // went up ahead of the analyses' request and the kernel's replies to it (status, ipywidgets'
    // echo) came down among their answers, through the same kernel, server and page (bench_widget_ux.py:
    // area -> stats, the [up] and [down] legs)
    void fillRange(this.rangeBox, r, (t) => formatCursor(t, this.span.start, Math.max(1, (this.view.end - this.view.start) / 1000)),
      (part) => this.areaAnalyses(win, part), () => this.fit()).finally(() => this.syncSelection());
  }

  /** Writes the area selection to Python (`selection`); the latest one, when several were made
   *  while analyses were on their way. */
  private syncSelection(): void {
    const r = this.range;
    const sel = r ? { start: Math.round(r.start), end: Math.round(r.end) } : {};
    const now = this.model.get("_selection") as { start?: number; end?: number } | undefined;
    if (now?.start === (sel as { start?: number }).start && now?.end === (sel as { end?: number }).end) return;
    this.model.set("_selection", sel);
    this.model.save_changes();
  }

  /** the area analyses' answers per window asked before ("start:end"), the last AREA_HELD */
  private areaHeld = new Map<string, AreaPart[]>();

  /** The area selection's analyses (AREA_PARAMS) over `win`: one "analyses" message, each
   *  answer handed to `part` as it comes (the Python side runs them side by side); a window
   *  answered before (e.g. a drag over the whole profile) from the answers held, with no request. */
  private async areaAnalyses(win: Window, part: (p: AreaPart) => void): Promise<void> {
    const key = `${win.start}:${win.end}`;
    const held = this.areaHeld.get(key);
    if (held) {
      for (const p of held) part(p);
      return;
    }
    const got: AreaPart[] = [];
    const names = Object.keys(AREA_PARAMS);
    await this.client.askParts("analyses", { ...win, names, params: AREA_PARAMS }, names.length, (m) => {
      const p = { name: String(m.name), summary: m.summary as AreaPart["summary"], rows: m.rows as AreaPart["rows"],
        ...(m.error !== undefined ? { error: m.code != null ? `[${String(m.code)}] ${String(m.error)}` : String(m.error) } : {}) };
      got.push(p);
      part(p);
    });
    if (got.every((p) => p.error === undefined)) {
      this.areaHeld.delete(key);
      this.areaHeld.set(key, got);
      if (this.areaHeld.size > AREA_HELD) this.areaHeld.delete(this.areaHeld.keys().next().value as string);
    }
  }

  private toggleHelp(show?: boolean): void {
    const on = show ?? this.help.style.display === "none";
    this.help.style.display = on ? "block" : "none";
  }

  /** The time at canvas x. */
  private timeAt(x: number): number {
    return this.view.start + ((x - this.labelW) / this.plotWidth()) * (this.view.end - this.view.start);
  }

  /** The row drawing track `id`: its own row, else the row that merges it; -1 if none. */
  private rowOfTrack(id: string): number {
    const own = this.rows.findIndex((r) => r.ids.length === 1 && r.ids[0] === id);
    return own >= 0 ? own : this.rows.findIndex((r) => r.ids.includes(id));
  }

  private onKey(ev: KeyboardEvent): void {
    const k = ev.key;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const len = this.view.end - this.view.start;
    const at = this.cursorX !== null ? this.cursorX / this.plotWidth() : 0.5; // W/S at the cursor
    if (k === "w" || k === "W" || k === "+" || k === "=") this.zoom(1 / 1.5, at);
    else if (k === "s" || k === "S" || k === "-") this.zoom(1.5, at);
    else if (k === "a" || k === "A" || k === "ArrowLeft") this.setView({ start: this.view.start - len * 0.1, end: this.view.end - len * 0.1 });
    else if (k === "d" || k === "D" || k === "ArrowRight") this.setView({ start: this.view.start + len * 0.1, end: this.view.end + len * 0.1 });
    else if (k === "0" || k === "Home") this.setView({ ...this.span });
    else if (k === "f" || k === "F") this.fit();
    else if (k === "/") this.search.focus();
    else if (k === "?") this.toggleHelp();
    else if (k === "Enter" && this.search.active) void this.search.step(ev.shiftKey ? -1 : 1);
    else if (k === "Escape") {
      if (this.help.style.display !== "none") this.toggleHelp(false);
      else if (this.range) this.setRange(null);
      else if (this.search.active) this.search.clear();
      else return;
    } else return;
    ev.preventDefault();
    ev.stopPropagation(); // not JupyterLab's command mode shortcuts (A/D/S insert, delete, save cells)
  }

  /** The range (shaded) and the search matches (outlined) on the plot. */
  private paintNav(g: CanvasRenderingContext2D, top: number, scale: number, h: number): void {
    const x = (t: number) => this.labelW + (t - this.view.start) * scale;
    g.save();
    g.beginPath();
    g.rect(this.labelW, AXIS_H, this.width - this.labelW, h - AXIS_H);
    g.clip();
    const one = (m: Match, color: string, w: number) => {
      if (m.end < this.view.start || m.start > this.view.end) return;
      const r = this.rowOfTrack(m.track);
      if (r < 0) return;
      const a = x(m.start);
      g.strokeStyle = color;
      g.lineWidth = w;
      g.strokeRect(a - 1, AXIS_H + r * ROW_H - top + 1, Math.max(x(m.end), a + 2) - a + 2, ROW_H - 2);
    };
    for (const m of this.marks.inView) one(m, MARK_COLOR, 1);
    if (this.marks.now) one(this.marks.now, MARK_COLOR, 3);
    for (const m of this.matches) one(m, MATCH_COLOR, 1);
    if (this.matchNow) one(this.matchNow, MATCH_NOW_COLOR, 3);
    if (this.range) {
      const a = Math.max(this.labelW, x(this.range.start)), b = Math.min(this.width, x(this.range.end));
      if (b >= a) {
        g.fillStyle = "rgba(0,127,212,0.18)";
        g.fillRect(a, AXIS_H, Math.max(1, b - a), h - AXIS_H);
        g.fillStyle = RANGE_COLOR;
        g.fillRect(a, AXIS_H, 1, h - AXIS_H);
        g.fillRect(b - 1, AXIS_H, 1, h - AXIS_H);
      }
    }
    g.restore();
  }

  /** Zooms by `factor` (< 1 zooms in) keeping the point at fraction `at` of the plot fixed. */
  zoom(factor: number, at: number): void {
    const len = this.view.end - this.view.start;
    const pivot = this.view.start + at * len;
    const nlen = len * factor;
    this.setView({ start: pivot - at * nlen, end: pivot - at * nlen + nlen });
  }

  /** Whether the widget is laid out (a hidden output has no size: nothing to fetch for yet). */
  private laidOut(): boolean {
    return this.root.isConnected && this.root.clientWidth > 0 && this.scroll.clientHeight > 0;
  }

  private fetch(): void {
    if (!this.laidOut()) {
      this.dirty = true; // fetched when it is shown (onResize)
      return;
    }
    if (this.inflight) {
      this.dirty = true;
      return;
    }
    this.inflight = true;
    this.dirty = false;
    const v = { ...this.view };
    const seq = this.viewSeq;
    const width = this.plotWidth();
    let want = this.rowTracks(true);
    // the same view (rows scrolled, expanded or collapsed): only the tracks not held yet, merged
    // into the data held (a collapsed row keeps its data)
    const a = this.data?.asked;
    const base = a && a.start === Math.floor(v.start) && a.end === Math.ceil(v.end) && a.width === Math.max(1, Math.round(width))
      && this.dataSeq === seq ? this.data : null;
    if (base) {
      want = (want ?? this.tracks.map((t) => t.id)).filter((id) => !base.tracks.has(id));
      if (!want.length) {
        this.inflight = false;
        this.queueDraw();
        return;
      }
    }
    this.stamp("sent");
    this.client
      .request(v.start, v.end, width, want)
      .then((d) => {
        this.stamp("decoded");
        if (base && this.data === base) for (const [id, t] of base.tracks) if (!d.tracks.has(id)) d.tracks.set(id, t);
        this.data = d;
        this.noteCoarse(d);
        this.dataWidth = width;
        this.root.dataset.dataWidth = String(width);
        this.dataSeq = seq;
        this.root.dataset.served = String(d.served);
        this.root.dataset.lastFormat = d.format;
        this.status.classList.remove("nsys-tl-err");
        this.status.textContent = `${fmtDur(v.end - v.start)} · ${fmtDur(d.resolution)}/px · ${d.roundTripMs.toFixed(1)} ms`;
      })
      .catch((e: Error) => {
        this.status.classList.add("nsys-tl-err");
        this.status.textContent = e.message;
        this.status.title = e.message;
      })
      .finally(() => {
        this.inflight = false;
        this.root.dataset.requests = String(this.client.sent);
        this.root.dataset.answered = String(this.client.answered);
        this.root.dataset.failed = String(this.client.failed);
        if (this.data) {
          this.root.dataset.lastRoundTripMs = this.data.roundTripMs.toFixed(3);
          this.root.dataset.lastServerMs = this.data.serverMs.toFixed(3);
          this.root.dataset.lastDecodeMs = this.data.decodeMs.toFixed(3);
        }
        this.root.dataset.viewSeq = String(this.viewSeq);
        this.queueDraw();
        if (this.dirty) this.fetch();
        else this.askBucketCols();
      });
    this.root.dataset.requests = String(this.client.sent);
    this.root.dataset.viewSeq = String(this.viewSeq);
  }

  /** Ids of the rows in (or near) the scrolled viewport; undefined when every row shows. */
  private visibleTracks(): string[] | undefined {
    return this.rowTracks(false);
  }

  /** Ids of the tracks of the rows in view with two rows of margin each side, or (`held`) what a
   *  range request asks for: also a screenful of rows below (a collapse above them brings as many
   *  into view) and the tracks the rows of each collapsed group in view would show, so that a
   *  collapse or expand is drawn at once from the data held. Undefined when that is every track. */
  private rowTracks(held: boolean): string[] | undefined {
    const top = this.scroll.scrollTop;
    const h = this.scroll.clientHeight || Number(this.scroll.style.maxHeight.replace("px", "")) || 420;
    const first = Math.max(0, Math.floor(top / ROW_H) - 2); // two rows of margin each side
    const shown = Math.min(this.rows.length, Math.ceil((top + h - AXIS_H) / ROW_H) + 2);
    const last = held ? Math.min(this.rows.length, shown + Math.ceil(h / ROW_H)) : shown;
    const ids = new Set(this.rows.slice(first, last).flatMap((r) => r.ids));
    if (held) for (const r of this.rows.slice(first, shown)) if (r.open === false) for (const id of this.innerTracks(r.key)) ids.add(id);
    return ids.size === this.tracks.length ? undefined : [...ids];
  }

  /** The tracks a group's children's rows draw when it is opened (each child collapsed or not). */
  private innerTracks(key: string): string[] {
    if (!this.nodeByKey) {
      this.nodeByKey = new Map();
      const walk = (n: TreeNode) => { this.nodeByKey!.set(n.key, n); n.children.forEach(walk); };
      this.tree.forEach(walk);
    }
    const all = (n: TreeNode): string[] => [...n.ids, ...n.children.flatMap(all)];
    return this.nodeByKey.get(key)?.children.flatMap(all) ?? [];
  }

  private nodeByKey: Map<string, TreeNode> | null = null;

  private onScroll(): void {
    this.queueDraw();
    const ids = this.visibleTracks() ?? this.tracks.map((t) => t.id);
    if (this.data && ids.some((id) => !this.data!.tracks.has(id))) this.fetch();
    else this.askBucketCols();
  }

  /** The tooltip's and a click's bucket columns of the GPU rows in view, once their view's data
   *  is here and no newer view is waiting (bucket_cols.ts). */
  private askBucketCols(): void {
    if (!this.data || this.dirty || this.inflight || this.canvas.classList.contains("dragging")) return;
    const ids = (this.visibleTracks() ?? this.tracks.map((t) => t.id)).filter((id) => this.trackById.get(id)?.kind === "gpu");
    this.bucketCols.want(this.data, ids);
    this.root.dataset.bucketCols = `${this.bucketCols.asked}:${this.bucketCols.merged}`;
  }

  /** the plot's size at the last resize handled: "width x height" */
  private sized = "";

  private onResize(): void {
    if (!this.laidOut()) return;
    this.stamp("layout");
    const w = Math.floor(this.root.clientWidth);
    // the widget grew or shrank below the plot (the details panel filled or emptied): nothing to
    // draw again, only what is missing to ask for
    const sized = `${w}x${this.scroll.clientHeight}`;
    if (sized === this.sized && this.data) {
      const ids = this.visibleTracks() ?? this.tracks.map((t) => t.id);
      if (this.dirty || ids.some((id) => !this.data!.tracks.has(id))) this.fetch();
      return;
    }
    this.sized = sized;
    this.width = w;
    this.drawNow();
    // the data must cover the rows in view at this width (the view may have grown taller)
    const ids = this.visibleTracks() ?? this.tracks.map((t) => t.id);
    // (a new width whose grid is the data's draws the data as is)
    if (this.dirty || !this.data || !this.fitsWidth(this.data) || ids.some((id) => !this.data!.tracks.has(id))) this.fetch();
  }


  // -- pointer ---------------------------------------------------------------------
  private bindPointer(): void {
    const c = this.canvas;
    c.addEventListener(
      "wheel",
      (ev: WheelEvent) => {
        const x = ev.offsetX - this.labelW;
        if (x < 0) return; // over the labels: let the page scroll
        ev.preventDefault();
        const dy = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
        if (ev.ctrlKey || ev.metaKey) { // Ctrl+wheel (a trackpad's pinch) zooms at the cursor
          this.zoom(Math.exp(Math.max(-1, Math.min(1, dy * 0.002))), x / this.plotWidth());
          return;
        }
        if (ev.shiftKey) { // Shift+wheel scrolls the rows
          this.scroll.scrollTop += dy || ev.deltaX;
          return;
        }
        const d = (Math.abs(ev.deltaX) > Math.abs(dy) ? ev.deltaX : dy) * (this.view.end - this.view.start) / this.plotWidth();
        this.setView({ start: this.view.start + d, end: this.view.end + d }); // the wheel pans
      },
      { passive: false },
    );
    let dragX: number | null = null;
    let dragView: Window | null = null;
    let resizing: { x: number; w: number } | null = null;
    // an area selection being dragged (a drag on the time axis, or Shift+drag)
    let area: { t0: number; onAxis: boolean; prev: Window | null } | null = null;
    const areaTo = (x: number) => dragWindow(area!.t0, this.timeAt(Math.max(this.labelW, Math.min(x, this.labelW + this.plotWidth()))),
      (this.view.end - this.view.start) / this.plotWidth());
    const onEdge = (x: number) => x >= this.labelW - 5 && x < this.labelW;
    c.addEventListener("pointerdown", (ev: PointerEvent) => {
      if (onEdge(ev.offsetX)) {
        resizing = { x: ev.clientX, w: this.labelW };
        c.setPointerCapture(ev.pointerId);
        return;
      }
      if (ev.offsetX >= this.labelW && (ev.offsetY < AXIS_H || ev.shiftKey)) {
        area = { t0: this.timeAt(ev.offsetX), onAxis: ev.offsetY < AXIS_H, prev: this.range };
        c.setPointerCapture(ev.pointerId);
        return;
      }
      if (ev.offsetX < this.labelW) {
        this.click(ev.offsetX, ev.offsetY, ev); // a label
        return;
      }
      // a press on a GPU op: its details asked now, a click (the pointerup) then draws them
      // from what came or is coming (a person's press lasts 50-150 ms)
      this.detailsAheadAt(ev.offsetX, ev.offsetY, 0);
      dragX = ev.clientX;
      dragView = { ...this.view };
      c.setPointerCapture(ev.pointerId);
      c.classList.add("dragging");
    });
    c.addEventListener("pointermove", (ev: PointerEvent) => {
      if (resizing) {
        this.setLabelWidth(resizing.w + ev.clientX - resizing.x);
        return;
      }
      const cursor = onEdge(ev.offsetX) ? "col-resize" : "";
      if (c.style.cursor !== cursor) c.style.cursor = cursor; // (a write dirties the style hover() reads after)
      if (area) {
        const r = areaTo(ev.offsetX);
        if (r) {
          this.range = r;
          this.queueDraw();
        }
        return;
      }
      if (dragX !== null && dragView) {
        const nsPerPx = (dragView.end - dragView.start) / this.plotWidth();
        const d = (dragX - ev.clientX) * nsPerPx;
        this.setView({ start: dragView.start + d, end: dragView.end + d });
        this.tip.style.display = "none";
        return;
      }
      this.setCursor(ev.offsetX >= this.labelW ? ev.offsetX - this.labelW : null);
      this.hover(ev.offsetX, ev.offsetY);
    });
    const end = (ev: PointerEvent) => {
      resizing = null;
      if (area) {
        const r = ev.type === "pointerup" ? areaTo(ev.offsetX) : undefined;
        const { onAxis, prev } = area;
        area = null;
        if (c.hasPointerCapture(ev.pointerId)) c.releasePointerCapture(ev.pointerId);
        this.range = prev;
        if (r) this.setRange(r);
        else if (onAxis && ev.type === "pointerup") this.setRange(null); // a click on the axis clears it
        else if (ev.type === "pointerup") this.click(ev.offsetX, ev.offsetY, ev); // a Shift+click
        this.queueDraw();
        return;
      }
      if (dragX !== null && Math.abs(ev.clientX - dragX) < 3 && ev.type === "pointerup") this.click(ev.offsetX, ev.offsetY, ev);
      dragX = null;
      dragView = null;
      if (c.hasPointerCapture(ev.pointerId)) c.releasePointerCapture(ev.pointerId);
      c.classList.remove("dragging");
      this.askBucketCols(); // (not asked while the drag panned)
    };
    c.addEventListener("pointerup", end);
    c.addEventListener("pointercancel", end);
    c.addEventListener("pointerleave", () => {
      this.tip.style.display = "none";
      this.aheadLeft();
      this.setCursor(null);
    });
    c.addEventListener("dblclick", (ev: MouseEvent) => { // a slice: zoom to it; elsewhere the whole profile
      const hit = this.hitAt(this.rows[this.rowAt(ev.offsetY)], ev.offsetX);
      if (hit) {
        const [s0, e0] = itemSpan(hit.d, hit.i);
        this.zoomTo(s0, e0);
      } else this.setView({ ...this.span });
    });
  }

  /** A click on a GPU op (or a bucket's longest op) shows kernel/details + kernel/explain. */
  /** The row under canvas y (the canvas stays at the top of the scrolled view); -1 on the axis. */
  private rowAt(y: number): number {
    return y < AXIS_H ? -1 : Math.floor((y + this.scroll.scrollTop - AXIS_H) / ROW_H);
  }

  /** The item of row `row` at canvas x (within 2 px): its track's data and index, or null. */
  private hitAt(row: TreeRow | undefined, x: number): { track: Track; d: TrackData; i: number } | null {
    if (!row || x < this.labelW || !this.data) return null;
    const t = this.view.start + ((x - this.labelW) / this.plotWidth()) * (this.view.end - this.view.start);
    const slop = (2 * (this.view.end - this.view.start)) / this.plotWidth();
    let best: { track: Track; d: TrackData; i: number } | null = null;
    for (const id of row.ids) {
      const d = this.data.tracks.get(id), track = this.trackById.get(id);
      if (!d || !track) continue;
      const i = indexAt(d, t, slop);
      if (i < 0) continue;
      const [s, e] = itemSpan(d, i);
      if (!best || (s <= t && t <= e)) best = { track, d, i };
      if (s <= t && t <= e) break;
    }
    return best;
  }

  /** A label click opens or closes a group, Shift+click pins, Alt+click hides; 'unhide' shows every hidden row. */
  changeRows(what: "open" | "hidden" | "pinned" | "unhide", key = ""): void {
    if (what === "unhide") this.treeState.hidden.clear();
    else toggle(this.treeState, what, key);
    this.rows = visibleRows(this.tree, this.treeState);
    this.labels.clear();
    const n = this.treeState.hidden.size;
    this.unhide.textContent = `show hidden (${n})`;
    this.unhide.style.display = n ? "" : "none";
    this.root.dataset.rows = String(this.rows.length);
    this.queueDraw();
    this.onScroll();
  }

  private click(x: number, y: number, ev?: PointerEvent): void {
    const row = this.rows[this.rowAt(y)];
    if (row && x < this.labelW) {
      if (ev?.altKey) this.changeRows("hidden", row.key);
      else if (ev?.shiftKey) this.changeRows("pinned", row.key);
      else if (row.open !== undefined) this.changeRows("open", row.key);
      return;
    }
    const hit = this.hitAt(row, x);
    if (hit && hit.track.kind === "api" && hit.d.ev) {
      this.launchedBy(hit.track.id, hit.d, hit.i);
      return;
    }
    if (!hit || hit.track.kind !== "gpu") return;
    const { d, i } = hit;
    const [ss, se] = itemSpan(d, i);
    this.selectedSpan = { start: ss, end: se };
    if (d.bk && !d.bk.longestId && this.data) this.bucketCols.take(this.data); // the bucket's longest op, if held
    if (d.ev) this.showDetails({ opId: d.ev.id[i] }, opFirst(hit.track, d, i));
    else if (d.bk?.longestId) {
      if (d.bk.longestId[i] >= 0) this.showDetails({ opId: d.bk.longestId[i] }, opFirst(hit.track, d, i));
    } else {
      // a bucket: its longest op's details in one round trip (the Python side finds the op),
      // unless a hover's "bucket" answer has already named it
      const known = this.bucketKnown.get(bucketKey(d, i));
      if (known) {
        if (known.longestId >= 0) this.showDetails({ opId: known.longestId }, opFirst(hit.track, d, i, known));
      } else this.showDetails({ bucket: { track: d.id, start: ss, resolution: d.resolution } });
    }
  }

  /** The selection's launch flow: an API call and the GPU ops it launched (offsets), or null. */
  private flow: Flow | null = null;

  private setFlow(f: Flow | null): void {
    this.flow = f;
    this.root.dataset.flow = f ? JSON.stringify(f) : "";
    this.queueDraw();
  }

  /** A click on an API call: the GPU ops it launched (found by the Python side, `launched`). */
  private launchedBy(trackId: string, d: TrackData, i: number): void {
    const ev = d.ev as NonNullable<TrackData["ev"]>;
    const [start, end] = itemSpan(d, i);
    this.root.dataset.detailsFor = "";
    this.client.ask("launched", { apiId: ev.id[i], apiTrack: trackId, start, end })
      .then((m) => this.setFlow((m.flow as Flow | null) ?? null))
      .catch((e: Error) => {
        this.status.classList.add("nsys-tl-err");
        this.status.textContent = e.message;
      });
  }

  /** The flow on the rows: the API call and each op outlined, an arrow from the call's end to
   *  each op's start (a track inside a collapsed group: the group's row). */
  private paintFlow(g: CanvasRenderingContext2D, f: Flow, top: number, scale: number): void {
    const rowOf = (id: string) => {
      const own = this.rows.findIndex((r) => r.ids.length === 1 && r.ids[0] === id);
      return own >= 0 ? own : this.rows.findIndex((r) => r.ids.includes(id));
    };
    const x = (t: number) => this.labelW + (t - this.view.start) * scale;
    const y = (r: number) => AXIS_H + r * ROW_H - top;
    g.save();
    g.beginPath();
    g.rect(this.labelW, AXIS_H, this.width - this.labelW, this.canvas.height);
    g.clip();
    g.strokeStyle = FLOW_COLOR;
    g.fillStyle = FLOW_COLOR;
    g.lineWidth = 2;
    const box = (r: number, s: number, e: number) => {
      const a = x(s);
      g.strokeRect(a - 1, y(r) + 1, Math.max(x(e), a + 2) - a + 2, ROW_H - 2);
    };
    const ar = rowOf(f.api.track);
    if (ar >= 0) box(ar, f.api.start, f.api.end);
    for (const op of f.ops) {
      const kr = rowOf(op.track);
      if (kr < 0) continue;
      box(kr, op.start, op.end);
      if (ar < 0) continue;
      const ax = x(f.api.end), ay = y(ar) + (kr < ar ? 1 : ROW_H - 1);
      const kx = x(op.start), ky = y(kr) + (kr < ar ? ROW_H - 1 : 1);
      g.beginPath();
      g.moveTo(ax, ay);
      g.bezierCurveTo(ax, (ay + ky) / 2, kx, (ay + ky) / 2, kx, ky);
      g.stroke();
      const dir = ky > ay ? 1 : -1;
      g.beginPath();
      g.moveTo(kx, ky);
      g.lineTo(kx - 4, ky - 7 * dir);
      g.lineTo(kx + 4, ky - 7 * dir);
      g.closePath();
      g.fill();
    }
    g.restore();
  }

  /** the details replies of ops asked ahead of a click (opId -> reply), the last DETAILS_HELD */
  private detailsHeld = new Map<number, Record<string, unknown>>();
  /** the one details request asked ahead and in flight, and the latest op wanted after it */
  private detailsAsking: { opId: number; done: Promise<Record<string, unknown>> } | null = null;
  private detailsWanted: number | null = null;
  /** the op the pointer rests on ("op:<id>", "" when none) and its dwell's timer */
  private aheadAt = "";
  private aheadTimer: ReturnType<typeof setTimeout> | undefined;

  /** The GPU op a click at (x, y) would show (its id), or null: an op, or a bucket's longest op
   *  when known here (its bucket columns held, or a hover's "bucket" answer). */
  private opAt(x: number, y: number): number | null {
    const hit = this.hitAt(this.rows[this.rowAt(y)], x);
    if (!hit || hit.track.kind !== "gpu") return null;
    const { d, i } = hit;
    if (d.ev) return d.ev.id[i];
    if (d.bk && !d.bk.longestId && this.data) this.bucketCols.take(this.data);
    const id = d.bk?.longestId ? d.bk.longestId[i] : this.bucketKnown.get(bucketKey(d, i))?.longestId;
    return id !== undefined && id >= 0 ? id : null;
  }

  /** While the pointer rests `dwellMs` on a GPU op (the tooltip shows it), or at once on a press,
   *  its details (no explanation) are asked ahead, so that a click draws them from held data. */
  private detailsAheadAt(x: number, y: number, dwellMs: number): void {
    const op = this.opAt(x, y);
    const at = op === null ? "" : `op:${op}`;
    if (at !== this.aheadAt || !dwellMs) clearTimeout(this.aheadTimer);
    const moved = at !== this.aheadAt;
    this.aheadAt = at;
    if (op === null) return;
    if (!dwellMs) this.detailsAhead(op);
    else if (moved) this.aheadTimer = setTimeout(() => { if (this.aheadAt === at) this.detailsAhead(op); }, dwellMs);
  }

  /** The pointer left the op it rested on (another row, a label, the axis, outside): the dwell's
   *  request is not asked (one already sent is kept: its reply is held for a click). */
  private aheadLeft(): void {
    clearTimeout(this.aheadTimer);
    this.aheadAt = "";
  }

  /** Asks op's details ahead: one request in flight; asked while one is, the latest op waits for it
   *  (the ones it superseded are never asked); held ones are not asked again. */
  private detailsAhead(op: number): void {
    // (not while a click's own request is on its way, nor for the op it shows: those are held)
    const clicked = this.root.dataset.detailsFor;
    if (this.detailsHeld.has(op) || this.detailsAsking?.opId === op || clicked === "?" || clicked === String(op)) return;
    if (this.detailsAsking) {
      this.detailsWanted = op;
      return;
    }
    const done = this.client.ask("details", { opId: op, explain: false });
    this.detailsAsking = { opId: op, done };
    this.root.dataset.detailsAheadAsks = String(Number(this.root.dataset.detailsAheadAsks || 0) + 1);
    done.then((m) => {
      this.hold(op, m);
      this.root.dataset.detailsHeld = String(op);
    }).catch(() => undefined).finally(() => {
      this.detailsAsking = null;
      const next = this.detailsWanted;
      this.detailsWanted = null;
      if (next !== null && this.aheadAt === `op:${next}`) this.detailsAhead(next); // still under the pointer
    });
  }

  /** Holds op's details reply (the last DETAILS_HELD). */
  private hold(op: number, m: Record<string, unknown>): void {
    this.detailsHeld.delete(op);
    this.detailsHeld.set(op, m);
    if (this.detailsHeld.size > DETAILS_HELD) this.detailsHeld.delete(this.detailsHeld.keys().next().value as number);
  }

  /** the explanation asked for the details shown (cancelled when another op is clicked) */
  private explaining: { id: number; opId: number; done: Promise<Record<string, unknown>> } | null = null;

  /** kernel/details of one op in the panel under the plot, then its kernel/explain below them:
   *  the details from those held or asked ahead (no request) when there, else asked (ms); the
   *  explanation (0.1-1.5 s for a kernel not explained before, at 10M kernels) asked once they are
   *  shown, the previous click's cancelled. */
  private showDetails(which: { opId: number } | { bucket: { track: string; start: number; resolution: number } }, first?: OpFirst): void {
    // a bucket's op is known with the reply ("?" until then)
    const asked = (this.root.dataset.detailsFor = "opId" in which ? String(which.opId) : "?");
    this.root.dataset.detailsBy = "opId" in which ? "op" : "bucket";
    delete this.root.dataset.explained;
    delete this.root.dataset.detailsFirst;
    const held = "opId" in which ? this.detailsHeld.get(which.opId) : undefined;
    if (held) {
      this.root.dataset.detailsFrom = "held";
      this.details.style.display = "block";
      this.detailsShown(asked, held);
      return;
    }
    // the panel keeps what it shows (dimmed) until the reply replaces it: emptying it and filling
    // it again resized the notebook's cell twice per click (JupyterLab lays the notebook out again)
    // or, when the page holds the op's name and duration (its row's data or bucket columns), the
    // panel's first lines drawn from them in the click's own task, the rest filled by the reply
    if (first) this.drawFirst(first);
    else if (this.details.style.display === "none") this.details.textContent = "loading…";
    this.details.style.display = "block";
    this.details.classList.add("nsys-tl-loading");
    const ahead = "opId" in which && this.detailsAsking?.opId === which.opId ? this.detailsAsking.done : null;
    this.root.dataset.detailsFrom = ahead ? "ahead" : "asked";
    (ahead ?? this.client.ask("details", { ...which, explain: false }))
      .then((m) => this.detailsShown(asked, m))
      .catch((e: Error) => {
        if (this.root.dataset.detailsFor !== asked) return;
        this.details.classList.remove("nsys-tl-loading");
        this.details.style.minHeight = "";
        this.details.style.boxSizing = "";
        this.details.textContent = e.message;
        this.closeButton();
      });
  }

  /** The panel's first lines from what the page holds of the op (its details' first line: name,
   *  kind, duration, row), dimmed until the reply replaces them; the panel keeps its height until
   *  then (one resize of the notebook's cell per click, as when it kept the last op's details). */
  private drawFirst(f: OpFirst): void {
    const shown = this.details.style.display !== "none";
    const h = shown ? this.details.offsetHeight : 0;
    const p = el("p");
    p.append(el("strong", "", f.name ?? "?"), ` · ${[f.kind, fmtDur(f.durNs), f.row].filter((x) => x).join(" · ")}`);
    this.details.replaceChildren(p, el("p", "", "…"));
    this.details.style.boxSizing = "border-box";
    this.details.style.minHeight = shown ? `${h}px` : "";
    this.root.dataset.detailsFirst = String(f.opId);
  }

  /** A details reply drawn in the panel (unless another click came since), then its explanation asked. */
  private detailsShown(asked: string, m: Record<string, unknown>): void {
    if (this.root.dataset.detailsFor !== asked) return; // another click since
    this.details.classList.remove("nsys-tl-loading");
    this.details.style.minHeight = "";
    this.details.style.boxSizing = "";
    const opId = Number(m.opId);
    if (!(opId >= 0)) { // an empty bucket (no op starts in it)
      this.details.style.display = "none";
      delete this.root.dataset.detailsFor;
      return;
    }
    this.root.dataset.detailsFor = String(opId);
    this.hold(opId, m);
    this.details.innerHTML = String(m.html ?? ""); // escaped HTML rendered by the Python side
    this.root.dataset.detailsShown = String(opId);
    this.setFlow((m.flow as Flow | null) ?? null);
    this.closeButton();
    const ex = el("div", "nsys-tl-explain", "explaining…");
    this.details.append(ex);
    // the explanation is asked once the details are shown: its server work (0.1-1.5 s at 10M
    // kernels, the first time a kernel is explained) then never competes with theirs, nor with
    // their way to the page on a machine with few cores; another op's explanation still asked is
    // cancelled (the Python side cancels it on the server), the same op's is waited for
    if (this.explaining && this.explaining.opId !== opId) {
      this.client.cancel(this.explaining.id);
      this.root.dataset.explainsCancelled = String(Number(this.root.dataset.explainsCancelled || 0) + 1);
      this.explaining = null;
    }
    if (!this.explaining) {
      const { id, done } = this.client.askWithId("explain", { opId });
      const mine = (this.explaining = { id, opId, done });
      done.catch(() => undefined).finally(() => { if (this.explaining === mine) this.explaining = null; });
    }
    this.explaining.done.then((x) => {
      if (!ex.isConnected) return; // another op's details since
      ex.innerHTML = String(x.html ?? "");
      this.root.dataset.explained = String(opId);
    }).catch((e: Error) => {
      if (ex.isConnected) ex.textContent = e.message;
    });
  }

  private closeButton(): void {
    const close = el("span", "nsys-tl-close", "×");
    close.title = "close";
    close.onclick = () => (this.details.style.display = "none");
    this.details.prepend(close);
  }

  /** What a zoom reply leaves out of bucket i (count, longest op's id and duration): asked for
   *  once per (track, resolution, bucket) and kept (bucket edges do not move). */
  private bucketCache = new Map<string, Promise<BucketInfo>>();
  /** the answered ones */
  private bucketKnown = new Map<string, BucketInfo>();

  private bucketInfo(d: TrackData, i: number): Promise<BucketInfo> {
    const start = d.start + (d.bk as NonNullable<TrackData["bk"]>).index[i] * d.resolution;
    const key = bucketKey(d, i);
    let p = this.bucketCache.get(key);
    if (!p) {
      if (this.bucketCache.size > 4096) {
        this.bucketCache.clear();
        this.bucketKnown.clear();
      }
      p = this.client.ask("bucket", { track: d.id, start, resolution: d.resolution }) as unknown as Promise<BucketInfo>;
      this.bucketCache.set(key, p);
      p.then((b) => this.bucketKnown.set(key, b), () => this.bucketCache.delete(key));
    }
    return p;
  }

  /** what the tooltip shows now (hover replies for another item are dropped) */
  private tipKey = "";
  /** the bucket whose details the tooltip waits for, and whether a "bucket" request for the
   *  tooltip is in flight */
  private tipWanted: { d: TrackData; i: number; key: string; name: string } | null = null;
  private tipAsking = false;

  /** Completes the tooltip with its bucket's details: asked for at once (a round trip, ~20 ms,
   *  instead of after a 40 ms rest: 65-80 ms to a complete tooltip at 10M kernels), with at most one
   *  request in flight, so a sweep across a row asks for one bucket per round trip (the latest
   *  hovered when the previous answer comes), not one per bucket crossed. */
  private askTip(want: { d: TrackData; i: number; key: string; name: string } | null = null): void {
    if (want) this.tipWanted = want;
    if (this.tipAsking || !this.tipWanted) return;
    const w = this.tipWanted;
    this.tipWanted = null;
    if (this.tipKey !== w.key) return; // the pointer has left it
    this.tipAsking = true;
    this.root.dataset.tipAsks = String(Number(this.root.dataset.tipAsks || 0) + 1);
    this.bucketInfo(w.d, w.i).then((b) => {
      if (this.tipKey === w.key) this.tipDone(w, b);
    }).catch(() => undefined).finally(() => {
      this.tipAsking = false;
      this.askTip();
    });
  }

  private hover(x: number, y: number): void {
    const top = this.scroll.scrollTop; // read before the tooltip is written (no forced layout)
    const row = this.rows[this.rowAt(y)];
    if (row && x < this.labelW) {
      this.tipKey = "";
      this.aheadLeft();
      const how = row.open === undefined ? "Shift+click pins, Alt+click hides" : `click ${row.open ? "collapses" : "expands"}; Shift+click pins, Alt+click hides`;
      this.tip.textContent = `${row.title}\n${row.ids.length > 1 ? `${row.ids.length} tracks merged` : row.ids[0] ?? ""}\n${how}`;
      this.tip.style.display = "block";
      this.tip.style.left = `${x + 12}px`;
      this.tip.style.top = `${top + y + 14}px`;
      return;
    }
    const hit = this.hitAt(row, x);
    if (!hit) {
      this.tipKey = "";
      this.tip.style.display = "none";
      this.aheadLeft();
      return;
    }
    const { track, d, i } = hit;
    const key = `${d.id}|${d.resolution}|${d.start}|${i}|${d.type}`;
    this.tipKey = key;
    // (first: a bucket's held columns merged here complete the tooltip below in this task)
    if (track.kind === "gpu") this.detailsAheadAt(x, y, DETAILS_DWELL_MS);
    else this.aheadLeft();
    this.tip.textContent = `${track.name}\n${describeAt(d, i)}`;
    this.tip.style.display = "block";
    this.root.dataset.tipShown = `${key}|${d.bk && !d.bk.count ? 0 : 1}`;
    this.tip.style.left = `${Math.min(x + 12, this.width - 300)}px`;
    this.tip.style.top = `${top + y + 14}px`;
    if (!d.bk || d.bk.count) return;
    if (this.data && this.bucketCols.take(this.data) && d.bk.count) {
      this.tipDone({ d, i, key, name: track.name });
      return;
    }
    // the bucket columns of the rows in view on their way: wait for them, else ask for the bucket
    const want = { d, i, key, name: track.name };
    const coming = this.data && this.bucketCols.pending(this.data);
    if (!coming) this.askTip(want);
    else coming.then(() => {
      if (this.tipKey !== key) return;
      if (this.data) this.bucketCols.take(this.data);
      if (!d.bk?.count) this.askTip(want);
      else this.tipDone(want);
    });
  }

  /** The tooltip of a bucket whose columns are now held, complete. */
  private tipDone(w: { d: TrackData; i: number; key: string; name: string }, b?: BucketInfo): void {
    this.tip.textContent = `${w.name}\n${describeAt(w.d, w.i, b)}`;
    this.root.dataset.tipBucket = w.key;
    this.root.dataset.tipShown = `${w.key}|1`;
    // its longest op known only now (the columns or the "bucket" answer came after the hover):
    // its details asked ahead once the pointer has rested on it, as for a hover (detailsAheadAt)
    const op = w.d.bk?.longestId ? w.d.bk.longestId[w.i] : b?.longestId;
    const at = `op:${op}`;
    if (op !== undefined && op >= 0 && this.tipKey === w.key && this.aheadAt !== at) {
      clearTimeout(this.aheadTimer);
      this.aheadAt = at;
      this.aheadTimer = setTimeout(() => { if (this.aheadAt === at) this.detailsAhead(op); }, DETAILS_DWELL_MS);
    }
  }


  // -- drawing -----------------------------------------------------------------------
  private queueDraw(): void {
    this.stale = true;
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      if (this.stale) this.draw();
    });
  }

  /** Draws in this task (onResize: the widget laid out or resized). Called from the widget's
   *  ResizeObserver, it runs in the rendering steps of the frame about to be shown, so that frame
   *  shows the plot at its new size (a requestAnimationFrame there waits for the next frame: up to
   *  ~16 ms more to the first frame, and a resized canvas stays blank or stale for a frame). A draw
   *  queued before with nothing new since is then skipped. */
  private drawNow(): void {
    this.draw();
  }

  /** something changed since the last draw (a queued draw with nothing new draws nothing) */
  private stale = false;

  private draw(): void {
    this.stale = false;
    const t0 = performance.now();
    this.paint();
    const complete = this.complete();
    if (this.first.drawn === undefined && complete) {
      this.stamp("drawn");
      // tests: how many range requests the first complete frame waited for (0: the data sent with
      // the widget) and its resolution
      this.root.dataset.firstRequests = String(this.client.sent);
      this.root.dataset.firstResolution = String(this.data?.resolution);
      // the rows the first view's data left out, asked once this frame is shown (counted as
      // asked from now: what waits for every request to be answered waits for it too)
      if (this.restMissing().length) {
        this.root.dataset.requests = String(this.client.sent + 1);
        setTimeout(() => this.fetchRest(), 0);
      }
    }
    // what the last frame showed: rows, whether complete, for which view (the bench's "expand")
    const painted = `${this.rows.length}:${complete ? 1 : 0}:${this.viewSeq}`;
    if (this.root.dataset.painted !== painted) this.root.dataset.painted = painted;
    if (this.data && this.dataSeq > this.drawnSeq) this.measured(this.dataSeq, t0, performance.now());
  }

  /** Whether the frame just painted shows every visible row from data answered for exactly this
   *  view at this plot width (the first such frame is the first complete frame). */
  private complete(): boolean {
    const d = this.data;
    if (!d || !this.fitsWidth(d) || this.dataSeq !== this.viewSeq) return false;
    const ids = this.visibleTracks() ?? this.tracks.map((t) => t.id);
    return ids.every((id) => d.tracks.has(id));
  }

  /** Records the latency of every view change up to `seq`, now drawn with answered data. */
  private measured(seq: number, drawStart: number, now: number): void {
    const d = this.data as RangeData;
    const tIn = this.inputAt.get(seq);
    if (tIn !== undefined) {
      const s: Sample = { seq, inputToDrawMs: now - tIn, roundTripMs: d.roundTripMs, pythonMs: d.serverMs,
        decodeMs: d.decodeMs, drawMs: now - drawStart, bytes: d.bytes, rawBytes: d.rawBytes, items: d.items, upMs: d.upMs,
        kernelMs: d.kernelMs, downMs: d.downMs, rpcMs: d.timing?.rpc ?? NaN, pyDecodeMs: d.timing?.decode ?? NaN,
        packMs: d.timing?.pack ?? NaN, format: d.format, previewed: this.shownEarly >= seq };
      this.samples.push(s);
      if (this.samples.length > 1000) this.samples.shift();
      this.root.dataset.lastInputToDrawMs = s.inputToDrawMs.toFixed(3);
    }
    for (const k of this.inputAt.keys()) if (k <= seq) this.inputAt.delete(k);
    this.drawnSeq = seq;
    this.root.dataset.drawnSeq = String(seq);
  }

  private paint(): void {
    const dpr = window.devicePixelRatio || 1;
    const w = this.width;
    // the canvas covers the visible rows only (less to clear, raster and composite)
    const totalH = AXIS_H + Math.max(1, this.rows.length) * ROW_H + 4;
    const h = Math.min(totalH, this.maxH);
    if (this.sizer.style.height !== `${totalH}px`) this.sizer.style.height = `${totalH}px`;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = `${w}px`;
      this.canvas.style.height = `${h}px`;
    }
    const g = this.canvas.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { fg } = this.colors();
    g.clearRect(0, 0, w, h);
    const pw = this.plotWidth();
    const v = this.view;
    const scale = pw / (v.end - v.start);

    // rows: zebra background, labels, content
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    // only the rows scrolled into view (a scroll redraws)
    const top = this.scroll.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - 1);
    const last = Math.min(this.rows.length, Math.ceil((top + h - AXIS_H) / ROW_H) + 1);
    const batch = new Batch();
    // the parts of the plot the data does not cover (pixels)
    const gaps: [number, number][] = [];
    if (this.coarse && this.coarse !== this.data) {
      const x0 = this.labelW, x1 = this.labelW + pw;
      const xa = this.data ? Math.max(x0, Math.min(x1, x0 + (this.data.start - v.start) * scale)) : x1;
      const xb = this.data ? Math.max(x0, Math.min(x1, x0 + (this.data.end - v.start) * scale)) : x1;
      if (xa > x0) gaps.push([x0, xa]);
      if (xb < x1 && xb > xa) gaps.push([xb, x1]);
    }
    for (let i = first; i < last; i++) {
      const row = this.rows[i];
      const tr = this.trackById.get(row.ids[0] ?? "");
      const y = AXIS_H + i * ROW_H - top;
      if (i % 2 === 0) {
        g.fillStyle = "rgba(128,128,128,0.07)";
        g.fillRect(0, y, w, ROW_H);
      }
      const x0 = 8 + row.level * 10;
      if (tr && row.open === undefined) {
        g.fillStyle = `hsl(${trackHue(tr.streamClass ?? tr.kind)}, 45%, 45%)`;
        g.fillRect(x0 - 6, y + 3, 3, ROW_H - 6);
      }
      g.fillStyle = fg;
      let text = this.labels.get(row.key);
      if (text === undefined) {
        const s = `${row.open === undefined ? "" : row.open ? "▾ " : "▸ "}${row.pinned ? `★ ${row.title}` : row.label}`;
        this.labels.set(row.key, (text = clip(g, s, this.labelW - 4 - x0)));
      }
      g.fillText(text, x0, y + ROW_H / 2);
      for (const id of row.ids) { // several tracks (a GPU's utilisation, a collapsed group): drawn merged
        const t = this.trackById.get(id);
        if (!t) continue;
        const kind = t.streamClass ?? t.kind;
        const d = this.data?.tracks.get(id);
        const c = this.coarse !== this.data ? this.coarse?.tracks.get(id) : undefined;
        // the coarse picture where the data does not reach (a pan or zoom out before its answer)
        if (c && !d) drawTrack(batch, c, kind, v.start, scale, this.labelW, pw, y + 2, ROW_H - 4);
        else if (c) for (const [a, b] of gaps) drawTrack(batch, c, kind, v.start + (a - this.labelW) / scale, scale, a, b - a, y + 2, ROW_H - 4);
        if (d) drawTrack(batch, d, kind, v.start, scale, this.labelW, pw, y + 2, ROW_H - 4);
      }
    }
    batch.flush(g);
    if (this.flow) this.paintFlow(g, this.flow, top, scale);
    this.paintNav(g, top, scale, h);

    this.paintAxis(g, w, h);
    if (this.dataSeq < this.viewSeq) this.shownEarly = this.viewSeq;
  }

  /** the theme's text and background colours, read at most once a second (a forced style
   *  recalculation of the notebook per frame otherwise) */
  private themeColors = { fg: "#222", bg: "#fff", at: -Infinity };

  private colors(): { fg: string; bg: string } {
    const now = performance.now();
    if (now - this.themeColors.at > 1000) {
      const st = getComputedStyle(this.root);
      this.themeColors = { fg: st.color || "#222",
        bg: st.backgroundColor && st.backgroundColor !== "rgba(0, 0, 0, 0)" ? st.backgroundColor : "#fff", at: now };
    }
    return this.themeColors;
  }

  /** The time axis: ticks as offsets from the profile's start with the precision of their
   * step (or from a base shown over the labels when zoomed in far from the start), the view's
   * span at the right and the pointer's time; and the label column's edge. What was drawn is
   * kept in data-axis (tests). */
  private paintAxis(g: CanvasRenderingContext2D, w: number, h: number): void {
    const { fg, bg } = this.colors();
    const pw = this.plotWidth();
    const v = this.view;
    const scale = pw / (v.end - v.start);
    g.fillStyle = bg;
    g.fillRect(0, 0, w, AXIS_H);
    g.strokeStyle = "rgba(128,128,128,0.5)";
    g.beginPath();
    g.moveTo(0, AXIS_H - 0.5);
    g.lineTo(w, AXIS_H - 0.5);
    g.stroke();
    const ax = timeAxis(v.start, v.end, this.span.start, Math.max(2, Math.floor(pw / 110)));
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "alphabetic";
    // the span (right end) and the pointer's time take their place first; tick labels
    // that would overlap them are left out
    const spanW = g.measureText(ax.span).width;
    const taken: Array<[number, number]> = [[w - spanW - 10, w]];
    let cursor = "";
    let cursorBox: [number, number] | null = null;
    if (this.cursorX !== null && this.data) {
      cursor = formatCursor(v.start + this.cursorX / scale, this.span.start, ax.step);
      const cw = g.measureText(cursor).width + 8;
      const bx = Math.max(this.labelW, Math.min(this.labelW + this.cursorX + 1, w - spanW - 10 - cw));
      cursorBox = [bx, bx + cw];
      taken.push(cursorBox);
    }
    const drawn: string[] = [];
    g.fillStyle = fg;
    for (const tk of ax.ticks) {
      const x = this.labelW + (tk.t - v.start) * scale;
      g.fillRect(Math.round(x), AXIS_H - 6, 1, 6);
      const a = x + 3;
      const b = a + g.measureText(tk.label).width;
      if (taken.some(([l, r]) => a < r && b > l)) continue;
      g.fillText(tk.label, a, AXIS_H - 8);
      drawn.push(tk.label);
    }
    g.fillText(ax.span, w - spanW - 5, AXIS_H - 8);
    if (cursorBox) {
      g.fillStyle = "rgba(128,128,128,0.25)";
      g.fillRect(cursorBox[0], 1, cursorBox[1] - cursorBox[0], AXIS_H - 3);
      g.fillStyle = fg;
      g.fillText(cursor, cursorBox[0] + 4, AXIS_H - 8);
    }
    g.fillText(this.data ? (ax.base ? `${clip(g, ax.base, this.labelW - 24)} +` : "") : "loading…", 8, AXIS_H - 8);
    g.fillStyle = "rgba(128,128,128,0.35)";
    g.fillRect(this.labelW - 1, AXIS_H, 1, h - AXIS_H);
    this.root.dataset.axis = JSON.stringify({ base: ax.base, labels: ax.ticks.map((t) => t.label), drawn, span: ax.span, cursor });
  }

  /** The pointer's x over the plot (its time is shown on the axis), or null. */
  private setCursor(x: number | null): void {
    if (x === this.cursorX) return;
    this.cursorX = x;
    const g = this.canvas.getContext("2d");
    if (!g) return;
    const dpr = window.devicePixelRatio || 1;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.paintAxis(g, this.width, this.canvas.height / dpr);
  }
}

function clip(g: CanvasRenderingContext2D, s: string, max: number): string {
  if (g.measureText(s).width <= max) return s;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (g.measureText(s.slice(0, mid) + "…").width <= max) lo = mid;
    else hi = mid - 1;
  }
  return s.slice(0, lo) + "…";
}

/** Colour strings of a reply's track, cached by key (kinds and names are table indexes). */
function colorCache(d: TrackData): Map<number, string> {
  const c = d as TrackData & { colors?: Map<number, string> };
  if (!c.colors) c.colors = new Map();
  return c.colors;
}

/** The rectangles of a frame grouped by colour, drawn at the end with one fillStyle per
 *  colour (parsing a colour string costs more than the rectangle), then the event names. */
class Batch {
  private rects = new Map<string, number[]>();
  private labels: [string, number, number, number][] = [];

  rect(color: string, x: number, y: number, w: number, h: number): void {
    let r = this.rects.get(color);
    if (!r) this.rects.set(color, (r = []));
    r.push(x, y, w, h);
  }

  label(text: string, x: number, y: number, maxW: number): void {
    this.labels.push([text, x, y, maxW]);
  }

  flush(g: CanvasRenderingContext2D): void {
    for (const [color, r] of this.rects) {
      g.fillStyle = color;
      for (let k = 0; k < r.length; k += 4) g.fillRect(r[k], r[k + 1], r[k + 2], r[k + 3]);
    }
    if (this.labels.length) {
      g.fillStyle = "#fff";
      g.textBaseline = "middle";
      g.font = "10px system-ui, sans-serif";
      for (const [text, x, y, maxW] of this.labels) g.fillText(clip(g, text, maxW), x, y);
    }
    this.rects.clear();
    this.labels = [];
  }
}

/** One row straight from the reply's typed columns, into the frame's batch. Rectangles of one
 *  colour that touch (within half a pixel) are merged, so a row costs at most about one
 *  rectangle per pixel column whatever the number of events; all stay inside the row and
 *  the plot [x0, x0 + pw] (no clipping needed). */
function drawTrack(batch: Batch, d: TrackData, kind: string, v0: number, scale: number,
                   x0: number, pw: number, y: number, h: number): void {
  const colors = colorCache(d);
  const xMax = x0 + pw;
  let run = "";
  let rx0 = 0;
  let rx1 = -Infinity;
  let ry = 0;
  let rh = 0;
  const flush = () => {
    if (run && rx1 > rx0) batch.rect(run, rx0, ry, rx1 - rx0, rh);
  };
  if (d.ev) {
    const { start, end, name, kind: ekind } = d.ev;
    const shift = x0 + (d.base - v0) * scale;
    for (let i = 0; i < d.n; i++) {
      const xa = shift + start[i] * scale;
      const xb = shift + end[i] * scale;
      if (xb < x0 || xa > xMax) continue;
      const key = ekind[i] * 4294967296 + name[i];
      let color = colors.get(key);
      if (color === undefined) {
        const ek = nameAt(d, ekind, i);
        color = eventColor(ek === "memcpy" || ek === "memset" ? ek : kind, nameAt(d, name, i));
        colors.set(key, color);
      }
      const a = Math.max(xa, x0);
      const b = Math.min(Math.max(xb, a + 1), xMax);
      if (color === run && a <= rx1 + 0.5) {
        if (b > rx1) rx1 = b;
      } else {
        flush();
        run = color;
        rx0 = a;
        rx1 = b;
        ry = y;
        rh = h;
      }
      // names on top, once every rectangle is drawn
      if (b - a > 40) {
        const nm = nameAt(d, name, i);
        if (nm) batch.label(nm, a + 2, y + h / 2, b - a - 4);
      }
    }
    flush();
  } else if (d.bk) {
    const { index, busy, longestName } = d.bk;
    const R = d.resolution;
    const bw = R * scale;
    const shift = x0 + (d.start - v0) * scale;
    for (let i = 0; i < d.n; i++) {
      const xa = shift + index[i] * bw;
      if (xa + bw < x0 || xa > xMax) continue;
      // busy fraction in 8 steps: height and opacity
      const level = Math.max(0, Math.min(7, Math.floor((busy[i] / R) * 8)));
      const key = longestName[i] * 8 + level;
      let color = colors.get(key);
      if (color === undefined) {
        const frac = Math.max(0.12, (level + 1) / 8);
        color = eventColor(kind, nameAt(d, longestName, i), 0.25 + 0.75 * frac);
        colors.set(key, color);
      }
      const a = Math.max(xa, x0);
      const b = Math.min(Math.max(xa + bw, a + 1), xMax);
      if (color === run && a <= rx1 + 0.5) {
        if (b > rx1) rx1 = b;
      } else {
        flush();
        const bh = Math.max(2, h * Math.max(0.12, (level + 1) / 8));
        run = color;
        rx0 = a;
        rx1 = b;
        ry = y + h - bh;
        rh = bh;
      }
    }
    flush();
  }
}

/** [start, end] in ns of item i (an event, or a bucket's window). */
function itemSpan(d: TrackData, i: number): [number, number] {
  if (d.ev) return [d.base + d.ev.start[i], d.base + d.ev.end[i]];
  const s = d.start + (d.bk as NonNullable<TrackData["bk"]>).index[i] * d.resolution;
  return [s, s + d.resolution];
}

/** The event or bucket at time t (within slop), preferring one that contains t; -1 if none. */
function indexAt(d: TrackData, t: number, slop: number): number {
  let best = -1;
  for (let i = 0; i < d.n; i++) {
    const [s, e] = itemSpan(d, i);
    if (s - slop <= t && t <= e + slop) {
      best = i;
      if (s <= t && t <= e) break;
    }
  }
  return best;
}

/** The tooltip's text for item i; a bucket's count and longest op come from its columns or,
 *  when the zoom reply left them out, from `info` (a "bucket" request; "…" until it comes). */
function describeAt(d: TrackData, i: number, info?: BucketInfo): string {
  const [s, e] = itemSpan(d, i);
  if (d.ev) {
    const k = nameAt(d, d.ev.kind, i);
    return `${nameAt(d, d.ev.name, i) ?? "?"}\n${fmtDur(e - s)}${k === "kernel" ? "\n(click: details and explanation)" : ""}`;
  }
  const b = d.bk as NonNullable<TrackData["bk"]>;
  const count = info ? String(info.count) : b.count ? String(b.count[i]) : "…";
  const dur = info ? fmtDur(info.longestDur) : b.longestDur ? fmtDur(b.longestDur[i]) : "…";
  const named = b.longestNamed;
  const name = info ? info.longestName : named ? (named.names[named.name[i]] ?? null) : nameAt(d, b.longestName, i);
  // the zoom reply's busy time is to the percent (busyPct); the bucket columns' and the "bucket"
  // reply's are exact
  return `${count} ops, ${fmtDur(info ? info.busyNs : b.busyNs ? b.busyNs[i] : b.busy[i])} busy in ${fmtDur(e - s)}\nlongest: ${name ?? "?"} (${dur})`;
}

/** What the page holds of the op a click shows: the op itself (a row of events) or a bucket's
 *  longest op (its bucket columns, or a hover's "bucket" answer); its details' first line. */
interface OpFirst {
  opId: number;
  name: string | null;
  kind: string | null;
  durNs: number;
  row: string;
}

function opFirst(track: Track, d: TrackData, i: number, info?: BucketInfo): OpFirst | undefined {
  if (d.ev) {
    const [s, e] = itemSpan(d, i);
    return { opId: d.ev.id[i], name: nameAt(d, d.ev.name, i), kind: nameAt(d, d.ev.kind, i), durNs: e - s, row: track.name };
  }
  const b = d.bk;
  if (info) return { opId: info.longestId, name: info.longestName, kind: null, durNs: info.longestDur, row: track.name };
  if (!b?.longestId || !b.longestDur) return undefined;
  const named = b.longestNamed;
  const name = named ? (named.names[named.name[i]] ?? null) : nameAt(d, b.longestName, i);
  return { opId: b.longestId[i], name, kind: null, durNs: b.longestDur[i], row: track.name };
}

/** A bucket's identity across replies: track, resolution and start (bucket edges do not move). */
function bucketKey(d: TrackData, i: number): string {
  return `${d.id}|${d.resolution}|${d.start + (d.bk as NonNullable<TrackData["bk"]>).index[i] * d.resolution}`;
}

/** A launch: the API call and the GPU ops it launched (times: the widget's offsets). */
interface FlowItem {
  id: number;
  track: string;
  start: number;
  end: number;
}
interface Flow {
  api: FlowItem;
  ops: FlowItem[];
}
const FLOW_COLOR = "#ff00c8";
/** search matches (the current one thicker) and the area selection, as in the VS Code webview */
const MATCH_NOW_COLOR = "#ff9f1c";
const MATCH_COLOR = "#ffd75e";
const RANGE_COLOR = "#007fd4";

/** A "bucket" reply: what a zoom reply's buckets leave out. */
interface BucketInfo {
  count: number;
  busyNs: number;
  longestId: number;
  longestName: string | null;
  longestDur: number;
}

/** What each colour means (the track tree's LEGEND in this palette). */
function legend(): HTMLElement {
  const box = el("span", "nsys-tl-legend");
  box.title = "colour legend";
  for (const l of LEGEND) {
    const item = el("span", "nsys-tl-legend-item", l.label);
    item.dataset.kind = l.kind;
    const sw = el("i");
    sw.style.background = eventColor(l.kind, null); // what the rows draw (a name shifts the hue a little)
    item.prepend(sw);
    box.append(item);
  }
  return box;
}

export default {
  render(props: RenderProps<Model>): () => void {
    const t = new Timeline(props);
    return () => t.destroy();
  },
};
