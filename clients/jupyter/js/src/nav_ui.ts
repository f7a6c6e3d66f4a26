// The widget's navigation controls (the VS Code webview's searchBar/rangePanel/helpOverlay in
// this widget's DOM): the search box stepping through matches (client/timelineNav MatchCursor, search's
// instances through the Python side), the `?` overlay of KEYS, and the area selection's panel
// with the analyses of the range (analysis/run through the Python side).
import { fmtDur } from "./format";
import { el } from "./dom";
import { KEYS, Match, MatchCursor, MatchFetch, WindowCache, WindowFetch } from "nsys-views/client/timelineNav";

export const NAV_CSS = `
.nsys-tl-search { display: inline-flex; gap: 3px; align-items: center; }
.nsys-tl-search input { width: 14em; font: inherit; padding: 0 4px; }
.nsys-tl-search select { font: inherit; }
.nsys-tl-count { min-width: 7em; font-size: 11px; color: var(--jp-ui-font-color2, #666); white-space: nowrap; }
.nsys-tl-help { position: absolute; right: 8px; top: 30px; z-index: 3; background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #999); padding: 6px 10px; font-size: 12px; }
.nsys-tl-help th { text-align: left; padding-right: 10px; white-space: nowrap; }
.nsys-tl-range { border-top: 1px solid var(--jp-border-color2, #ddd); padding: 4px 10px; font-size: 12px; }
.nsys-tl-range table { border-collapse: collapse; width: 100%; }
.nsys-tl-range th, .nsys-tl-range td { text-align: left; padding: 1px 6px; vertical-align: top; }
.nsys-tl-range td:first-child { word-break: break-all; }
`;

/** What the search box looks for: search's `kinds` (undefined: the server's default, kernels and NVTX). */
export const SEARCH_KINDS: ReadonlyArray<readonly [string, string[] | undefined]> = [
  ["kernels, NVTX", undefined], ["all", ["kernel", "nvtx", "memcpy", "memset", "api"]], ["kernels", ["kernel"]],
  ["NVTX", ["nvtx"]], ["memcpy", ["memcpy"]], ["memset", ["memset"]], ["CUDA API", ["api"]],
];

/** The search box: Enter / Shift+Enter (or ↓ ↑) step through every match; the current match and
 *  the counter go to `show`; the matches in view are asked for after each view change. A
 *  select picks the kinds searched (SEARCH_KINDS). */
export class SearchBox {
  readonly el = el("span", "nsys-tl-search");
  readonly input = el("input");
  readonly kindSelect = el("select", "nsys-tl-kinds");
  private count = el("span", "nsys-tl-count");
  private cursor: MatchCursor;
  private now: Match | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private token = 0;
  /** the matches around the view: a view change inside the window fetched asks nothing */
  readonly around = new WindowCache();
  /** search step latencies (ms), for the bench */
  readonly steps: number[] = [];

  constructor(fetch: MatchFetch,
              private inWindow: (query: string) => WindowFetch,
              private show: (now: Match | undefined, inView: Match[], zoom: boolean) => void,
              private viewNow: () => { start: number; end: number }) {
    this.cursor = new MatchCursor(fetch);
    this.input.type = "search";
    this.input.placeholder = "search (/)";
    SEARCH_KINDS.forEach(([label], i) => this.kindSelect.append(new Option(label, String(i))));
    this.kindSelect.title = "what to search";
    this.kindSelect.onchange = () => { this.around.clear(); if (this.input.value.trim()) void this.begin(); };
    this.input.title = "Enter: next match, Shift+Enter: previous, Esc: clear";
    const prev = el("button", "nsys-tl-prev", "↑");
    const next = el("button", "nsys-tl-next", "↓");
    prev.title = "previous match (Shift+Enter)";
    next.title = "next match (Enter)";
    prev.onclick = () => void this.step(-1);
    next.onclick = () => void this.step(1);
    this.el.append(this.kindSelect, this.input, this.count, prev, next);
    this.input.addEventListener("keydown", (ev) => {
      ev.stopPropagation(); // JupyterLab's own shortcuts (e.g. Enter runs a cell) stay out of the box
      if (ev.key === "Enter") {
        ev.preventDefault();
        if (this.input.value.trim() !== this.cursor.query) void this.begin();
        else void this.step(ev.shiftKey ? -1 : 1);
      } else if (ev.key === "Escape") {
        ev.preventDefault();
        this.clear();
      }
    });
  }

  get active(): boolean { return this.cursor.query !== ""; }

  /** search's `kinds` for the selected entry (undefined: the default) */
  get kinds(): string[] | undefined { return SEARCH_KINDS[Number(this.kindSelect.value) || 0][1]; }

  focus(): void { this.input.focus(); this.input.select(); }

  async begin(): Promise<void> {
    const q = this.input.value.trim();
    try {
      const m = await this.cursor.begin(q, this.viewNow().start);
      if (q === this.cursor.query) this.setNow(m);
    } catch (e) {
      this.count.textContent = (e as Error).message;
    }
  }

  async step(dir: 1 | -1): Promise<void> {
    if (!this.active) return this.begin();
    const t0 = performance.now();
    const m = await this.cursor.step(dir);
    this.setNow(m);
    this.steps.push(performance.now() - t0);
  }

  clear(): void {
    this.input.value = "";
    void this.cursor.begin("", 0);
    this.now = undefined;
    this.count.textContent = "";
    this.el.dataset.counter = "";
    this.show(undefined, [], false);
  }

  /** after a view change: the matches in view, debounced */
  viewChanged(): void {
    if (!this.active) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 120);
  }

  private async refresh(): Promise<void> {
    const q = this.cursor.query, v = this.viewNow();
    if (!q) return;
    const token = ++this.token;
    try {
      const inView = await this.around.inView(`${this.kindSelect.value}|${q}`, v.start, v.end, this.inWindow(q));
      if (token === this.token && q === this.cursor.query) this.show(this.now, inView, false);
    } catch { /* outlines are optional */ }
  }

  private setNow(m: Match | undefined): void {
    this.now = m;
    this.count.textContent = this.cursor.counter();
    this.el.dataset.counter = this.count.textContent;
    this.show(m, m ? [m] : [], true);
    if (m) void this.refresh();
  }
}

export function helpBox(): HTMLElement {
  const box = el("div", "nsys-tl-help");
  const t = el("table");
  for (const [k, what] of KEYS) {
    const tr = el("tr");
    tr.append(el("th", undefined, k), el("td", undefined, what));
    t.append(tr);
  }
  box.append(el("b", undefined, "Keyboard and mouse"), t, el("div", undefined, "Esc or ? closes this."));
  box.style.display = "none";
  box.onclick = () => (box.style.display = "none");
  return box;
}

/** analysis/run's parts shown for a range */
export interface RunReply { summary?: Record<string, unknown>; rows?: Array<Record<string, unknown>> }

/** The params of the area selection's analyses: no more than the panel shows (docs/protocol.md,
 * analysis/run): five top kernels, the summaries of the others (a summary covers every gap and
 * kernel whatever `limit`; overlap without its per-iteration rows, most of its reply and time). */
export const AREA_PARAMS: Record<string, { limit?: number; perIteration?: boolean }> = {
  top_kernels: { limit: 5 }, overlap: { perIteration: false }, gpu_idle_gaps: { limit: 1 }, kernel_launch_overhead: { limit: 1 },
};

/** One analysis of the area selection as it comes ("analyses" parts): its name and reply, or error. */
export interface AreaPart extends RunReply { name: string; error?: string }

const AREA_ROWS: Array<[string, string]> = [["top_kernels", "kernels"], ["overlap", "overlap"], ["gpu_idle_gaps", "idle gaps"],
  ["kernel_launch_overhead", "launches"]];

/** The area selection's panel: duration, kernels, overlap, gaps, launches and the top kernels,
 *  each row filled as its analysis comes (`run` hands each part to its callback, in any order;
 *  its promise settles after the last). A newer fill of the same box makes this one's parts no-ops. */
export async function fillRange(box: HTMLElement, r: { start: number; end: number }, label: (t: number) => string,
                                run: (part: (p: AreaPart) => void) => Promise<void>, zoom: () => void): Promise<void> {
  const seq = String(Number(box.dataset.seq || 0) + 1);
  box.dataset.seq = seq;
  const head = el("p");
  const b = el("button", "nsys-tl-zoomsel", "zoom to selection");
  b.title = "F";
  b.onclick = zoom;
  head.append(el("b", undefined, `range ${fmtDur(r.end - r.start)}`), ` ${label(r.start)} → ${label(r.end)} `, b);
  const stats = el("table");
  const cells = new Map<string, HTMLElement>();
  for (const [name, title] of AREA_ROWS) {
    const tr = el("tr"), td = el("td", undefined, "…");
    tr.dataset.analysis = name;
    tr.append(el("th", undefined, title), td);
    stats.append(tr);
    cells.set(name, td);
  }
  const top = el("div");
  box.replaceChildren(head, stats, top);
  box.dataset.duration = String(r.end - r.start);
  box.dataset.shown = "";
  delete box.dataset.loaded;
  delete box.dataset.kernels;
  const num = (v: unknown) => (typeof v === "number" ? v : Number(v ?? 0));
  const shown: string[] = [];
  const fill = (p: AreaPart) => {
    const td = cells.get(p.name);
    if (box.dataset.seq !== seq || !td) return; // another selection since
    const s = p.summary;
    if (p.error !== undefined || !s) td.textContent = `error: ${p.error ?? "no answer"}`;
    else if (p.name === "top_kernels") {
      td.textContent = `${num(s.kernelCount).toLocaleString("en-US")} · ${fmtDur(num(s.totalKernelNs))} kernel time · GPU busy ${fmtDur(num(s.gpuBusyNs))}`;
      box.dataset.kernels = String(num(s.kernelCount));
      const rows = p.rows ?? [];
      if (rows.length) {
        const t = el("table");
        const h = el("tr");
        h.append(el("th", undefined, "top kernels in the range"), el("th", undefined, "count"), el("th", undefined, "time"));
        t.append(h);
        for (const k of rows) {
          const tr = el("tr");
          tr.append(el("td", undefined, String(k.name)), el("td", undefined, String(k.count)), el("td", undefined, fmtDur(num(k.totalNs))));
          t.append(tr);
        }
        top.replaceChildren(t);
      }
    } else if (p.name === "overlap") {
      const tot = (s.total as Record<string, unknown> | undefined) ?? {};
      td.textContent = `compute only ${fmtDur(num(tot.computeOnlyNs))} · communication only ${fmtDur(num(tot.commOnlyNs))} · both ${fmtDur(num(tot.overlapNs))} · idle ${fmtDur(num(tot.idleNs))}`;
    } else if (p.name === "gpu_idle_gaps") {
      const devs = (s.devices as Array<Record<string, unknown>> | undefined) ?? [];
      td.textContent = `${devs.reduce((a, d) => a + num(d.gapCount), 0)} gaps · ${fmtDur(devs.reduce((a, d) => a + num(d.gapIdleNs), 0))}`;
    } else td.textContent = `${num(s.launchedKernels).toLocaleString("en-US")} kernels launched · ${fmtDur(num(s.totalApiNs))} in launch calls`;
    shown.push(p.name);
    box.dataset.shown = shown.join(","); // the order the parts were shown in (tests)
  };
  try {
    await run(fill);
  } catch (e) {
    for (const [name] of AREA_ROWS) if (!shown.includes(name)) fill({ name, error: (e as Error).message });
  }
  if (box.dataset.seq === seq) box.dataset.loaded = "true";
}
