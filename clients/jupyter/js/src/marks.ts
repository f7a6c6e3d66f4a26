// Rows shown from Python on the timeline (`w.show(p.top_kernels().head(5))`, widget.py): each
// entry names kernels or NVTX ranges by their exact name (search's `exact`), its instances in view
// are outlined, and a small list under the bar steps through them (a click zooms to the entry's
// next instance after the last one shown, wrapping to the first).
import { el } from "./dom";
import { fmtDur } from "./format";
import { Match, MatchPage, WindowCache, WindowFetch } from "nsys-views/client/timelineNav";

/** One row shown: what the Python side sends (`_marks`). */
export interface MarkEntry { kind: string; name: string; count: number; totalNs: number }

/** Asks search for an entry's instances: a page from `at`/`offset`, or those overlapping [start, end]. */
export type MarkFetch = (e: MarkEntry, p: { instances: number; at?: number; offset?: number; start?: number; end?: number }) => Promise<MatchPage>;

export const MARKS_CSS = `
.nsys-tl-marks { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; padding: 3px 6px; font-size: 11px;
  border-bottom: 1px solid var(--jp-border-color2, #ddd); }
.nsys-tl-marks button { font: inherit; padding: 0 6px; cursor: pointer; max-width: 28em; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; border: 1px solid #2bbf0f; background: transparent; color: inherit; }
.nsys-tl-marks button.now { background: rgba(57,255,20,0.25); }
`;

/** Outlines of the entries' instances; the one last stepped to is thicker. */
export const MARK_COLOR = "#39ff14";

export class MarksPanel {
  readonly el = document.createElement("div");
  /** the entries' instances overlapping the view (outlined) */
  inView: Match[] = [];
  /** the instance the last click zoomed to */
  now: Match | undefined;
  private entries: MarkEntry[] = [];
  private caches: WindowCache[] = [];
  private last = new Map<number, number>(); // entry -> rank of the instance last zoomed to
  private timer: ReturnType<typeof setTimeout> | undefined;
  private token = 0;

  constructor(private fetch: MarkFetch, private viewNow: () => { start: number; end: number },
              private changed: (zoomTo: Match | undefined) => void) {
    this.el.className = "nsys-tl-marks";
    this.el.style.display = "none";
    this.el.dataset.marks = "0";
  }

  /** A new list from Python (empty: cleared). */
  set(entries: MarkEntry[]): void {
    this.entries = entries;
    this.caches = entries.map(() => new WindowCache(Math.max(200, Math.floor(4000 / Math.max(1, entries.length)))));
    this.last.clear();
    this.now = undefined;
    this.inView = [];
    this.el.replaceChildren();
    this.el.style.display = entries.length ? "flex" : "none";
    this.el.dataset.marks = String(entries.length);
    if (entries.length) this.el.append(document.createTextNode("shown:"));
    entries.forEach((e, i) => {
      const b = el("button", undefined, `${e.name} (${e.count.toLocaleString("en-US")})`);
      b.title = `${e.kind} ${e.name}: ${e.count.toLocaleString("en-US")} instances, ${fmtDur(e.totalNs)}; click: the next one`;
      b.dataset.kind = e.kind;
      b.onclick = () => void this.next(i);
      this.el.append(b);
    });
    this.changed(undefined);
    void this.refresh();
  }

  /** after a view change: the instances in view, debounced (a view inside the windows fetched asks nothing) */
  viewChanged(): void {
    if (!this.entries.length) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 60);
  }

  /** requests made for the outlines so far (tests, bench) */
  get fetches(): number { return this.caches.reduce((a, c) => a + c.fetches, 0); }

  private async refresh(): Promise<void> {
    const token = ++this.token, v = this.viewNow(), entries = this.entries;
    try {
      const got = await Promise.all(entries.map((e, i) => {
        const win: WindowFetch = (start, end, limit) => this.fetch(e, { instances: limit, start, end });
        return this.caches[i].inView(`${e.kind}\0${e.name}`, v.start, v.end, win);
      }));
      if (token !== this.token || entries !== this.entries) return;
      this.inView = got.flat();
      this.el.dataset.inView = String(this.inView.length);
      this.el.dataset.fetches = String(this.fetches);
      this.changed(undefined);
    } catch { /* outlines are optional */ }
  }

  /** Zooms to entry i's next instance: the one after the last shown, at first the first starting at
   *  or after the view's start; after the last, the first. */
  async next(i: number): Promise<void> {
    const e = this.entries[i];
    if (!e) return;
    const last = this.last.get(i);
    let page = await this.fetch(e, last === undefined ? { instances: 1, at: Math.floor(this.viewNow().start) } : { instances: 1, offset: last + 1 });
    if (!page.items.length && page.total) page = await this.fetch(e, { instances: 1, offset: 0 });
    const m = page.items[0];
    if (e !== this.entries[i] || !m) return;
    this.last.set(i, page.offset);
    this.now = m;
    this.el.querySelectorAll("button").forEach((b, k) => b.classList.toggle("now", k === i));
    this.el.dataset.now = `${m.kind}:${m.id}`;
    this.changed(m);
  }
}
