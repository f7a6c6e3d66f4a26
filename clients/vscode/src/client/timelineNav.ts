/* Navigation both timelines share: stepping through search matches (search's
 * `instances`, paged), the keyboard map shown by the `?` overlay, the view
 * that frames a span, and an area selection's window. Free of DOM: the
 * Jupyter widget imports it too (its build's `nsys-views` alias). */

/** One match as the timeline draws it (times: the timeline's offsets). */
export interface Match { kind: string; id: number; track: string; start: number; end: number; name: string }

/** A page of search's `instances`, times already the timeline's offsets. */
export interface MatchPage { total: number; offset: number; items: Match[] }

/** Asks search for a page: from rank `offset`, or from the first match starting at or after `at`. */
export type MatchFetch = (p: { query: string; instances: number; offset?: number; at?: number }) => Promise<MatchPage>;

/** Next/previous over every match of a query, in time order: "3 of 1,204". A
 * page of PAGE matches is kept; a step out of it asks for the next page. */
export class MatchCursor {
  static readonly PAGE = 500;
  query = '';
  total = 0;
  /** The current match's rank (0-based), -1 before the first step. */
  index = -1;
  private page: MatchPage = { total: 0, offset: 0, items: [] };
  private token = 0;

  constructor(private readonly fetch: MatchFetch) {}

  /** A new query: the current match is the first one starting at or after `at` (the view's start), else the last. */
  async begin(query: string, at: number): Promise<Match | undefined> {
    const token = ++this.token;
    this.query = query;
    if (!query) { this.total = 0; this.index = -1; this.page = { total: 0, offset: 0, items: [] }; return undefined; }
    let page = await this.fetch({ query, instances: MatchCursor.PAGE, at });
    if (token !== this.token) return undefined;
    const past = page.offset >= page.total; /* every match starts before `at`: the last one */
    if (page.total > 0 && past) page = await this.fetch({ query, instances: MatchCursor.PAGE, offset: Math.max(0, page.total - MatchCursor.PAGE) });
    if (token !== this.token) return undefined;
    this.page = page;
    this.total = page.total;
    this.index = !page.total ? -1 : past ? page.total - 1 : page.offset;
    return this.current();
  }

  /** The match at the current rank, when its page is loaded. */
  current(): Match | undefined {
    return this.page.items[this.index - this.page.offset];
  }

  /** Moves to the next (dir 1) or previous (-1) match, wrapping at the ends. */
  async step(dir: 1 | -1): Promise<Match | undefined> {
    if (!this.total) return undefined;
    const token = this.token;
    const i = (this.index + dir + this.total) % this.total;
    if (i < this.page.offset || i >= this.page.offset + this.page.items.length) {
      const offset = dir > 0 ? i : Math.max(0, i - MatchCursor.PAGE + 1);
      const page = await this.fetch({ query: this.query, instances: MatchCursor.PAGE, offset });
      if (token !== this.token) return undefined;
      this.page = page;
      this.total = page.total;
    }
    this.index = i;
    return this.current();
  }

  /** "3 of 1,204", "no matches", or "" without a query. */
  counter(): string {
    if (!this.query) return '';
    if (!this.total) return 'no matches';
    return `${(this.index + 1).toLocaleString('en-US')} of ${this.total.toLocaleString('en-US')}`;
  }
}

/** Asks search for the matches overlapping [start, end] (at most `limit` of them, in time order; `total`: how many overlap). */
export type WindowFetch = (start: number, end: number, limit: number) => Promise<MatchPage>;

/** The matches of one query around the view, so that the outlines of a view change inside the
 * window already fetched ask nothing. A miss asks for the view widened by its span on each side
 * (three views). When that window holds more than `limit` matches, its first `limit` by start
 * still hold every match starting before the last one's start: kept when that covers the
 * view; else the view alone is asked for (kept only when complete), and, while the query stays
 * that dense, later misses ask for the view alone at once (one request per change, as before). */
export class WindowCache {
  /** requests made (for tests and the bench) */
  fetches = 0;
  private key = '';
  private win: { start: number; end: number } | undefined;
  private items: Match[] = [];
  private dense = false;

  constructor(private readonly limit = 2000) {}

  clear(): void { this.key = ''; this.win = undefined; this.items = []; this.dense = false; }

  /** The matches of query `key` overlapping [start, end] (as the server: starting before end, ending at or after start). */
  async inView(key: string, start: number, end: number, fetch: WindowFetch): Promise<Match[]> {
    const w = this.win;
    if (this.key !== key || !w || start < w.start || end > w.end) {
      const len = Math.max(end - start, 1);
      let s = Math.floor(start - len), e = Math.ceil(end + len);
      let page: MatchPage | undefined;
      let complete = false;
      if (!this.dense || this.key !== key) {
        page = await fetch(s, e, this.limit);
        this.fetches++;
        complete = page.items.length >= page.total;
        const last = page.items[page.items.length - 1];
        if (!complete && last && last.start >= end) { e = last.start; complete = true; }
      }
      if (!page || !complete) {
        s = Math.floor(start);
        e = Math.ceil(end);
        page = await fetch(s, e, this.limit);
        this.fetches++;
        complete = page.items.length >= page.total;
      }
      this.key = key;
      this.items = page.items;
      this.dense = !complete;
      this.win = complete ? { start: s, end: e } : undefined;
    }
    return this.items.filter((m) => m.start < end && m.end >= start);
  }
}

/** A view showing [start, end] with a margin (a fifth of the span each side,
 * at least `minSpan` in all), kept inside the profile. */
export function frameSpan(start: number, end: number, bounds: { start: number; end: number }, minSpan = 1000): { start: number; end: number } {
  const len = Math.max(end - start, 0);
  const pad = Math.max(len * 0.2, (minSpan - len) / 2, 0);
  let s = start - pad, e = end + pad;
  if (s < bounds.start) { e = Math.min(bounds.end, e + bounds.start - s); s = bounds.start; }
  if (e > bounds.end) { s = Math.max(bounds.start, s - (e - bounds.end)); e = bounds.end; }
  return { start: s, end: Math.max(e, s + 1) };
}

/** An area selection from a drag between two times (either order), or undefined when it is too short to mean one. */
export function dragWindow(a: number, b: number, nsPerPx: number): { start: number; end: number } | undefined {
  const start = Math.min(a, b), end = Math.max(a, b);
  return end - start >= 3 * nsPerPx ? { start, end } : undefined;
}

/** The keys both timelines take (the `?` overlay lists them). */
export const KEYS: ReadonlyArray<readonly [string, string]> = [
  ['W / S', 'zoom in / out at the cursor (or the centre)'],
  ['A / D', 'pan left / right'],
  ['Ctrl + wheel', 'zoom at the cursor'],
  ['wheel', 'pan (Shift + wheel: scroll the rows)'],
  ['drag', 'pan'],
  ['drag on the time axis, Shift + drag', 'select a time range'],
  ['double-click a slice', 'zoom to it'],
  ['F', 'fit the selection (the range, else the selected slice)'],
  ['0 / Home', 'the whole profile'],
  ['Ctrl + F, /', 'search kernels and NVTX'],
  ['Enter / Shift + Enter', 'next / previous match'],
  ['N / P', 'step through the kernels in view'],
  ['Esc', 'clear the range, close the search or this help'],
  ['?', 'this help'],
];
