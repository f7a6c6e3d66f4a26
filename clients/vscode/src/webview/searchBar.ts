/* The timeline's search (Ctrl+F or /): kernels and NVTX ranges by name
 * (search's substring or glob; a select adds copies, sets and CUDA API calls), Enter / Shift+Enter step through every match
 * in time order ("3 of 1,204") and zoom to each; the matches in view are
 * outlined (a windowed search after each view change, debounced; the window
 * fetched is three views wide and reused while the view stays inside it). */
import { MatchCursor, WindowCache, type Match, type MatchFetch, type WindowFetch } from '../client/timelineNav';
import type { View } from '../client/timelineModel';
import type { SearchParams } from '../protocol/generated/search.params';
import { h } from './dom';

/** What the search looks for: search's `kinds` (undefined: the server's default, kernels, NVTX and CUDA graph launches). */
export const SEARCH_KINDS: ReadonlyArray<readonly [string, SearchParams['kinds']]> = [
  ['kernels, NVTX', undefined], ['all', ['kernel', 'nvtx', 'graph', 'memcpy', 'memset', 'api']], ['kernels', ['kernel']],
  ['NVTX', ['nvtx']], ['CUDA graphs', ['graph']], ['memcpy', ['memcpy']], ['memset', ['memset']], ['CUDA API', ['api']],
];

/** How many matches in view are outlined at most. */
const IN_VIEW = 2000;

export class SearchBar {
  readonly el: HTMLElement;
  readonly input: HTMLInputElement;
  /** Picks the kinds searched (SEARCH_KINDS). */
  readonly kindSelect: HTMLSelectElement;
  private readonly count: HTMLElement;
  private readonly cursor: MatchCursor;
  private viewTimer: ReturnType<typeof setTimeout> | undefined;
  private viewToken = 0;
  private lastView: View | undefined;
  private now: Match | undefined;
  /** The matches around the view: a view change inside the window fetched asks nothing. */
  readonly around = new WindowCache(IN_VIEW);

  constructor(
    fetch: MatchFetch,
    /** The query's matches overlapping [start, end] (at most `limit`, with how many overlap). */
    private readonly inWindow: (query: string) => WindowFetch,
    private readonly show: (now: Match | undefined, inView: Match[], zoom: boolean) => void,
    private readonly viewStart: () => number,
  ) {
    this.cursor = new MatchCursor(fetch);
    this.input = h('input', { type: 'search', class: 'search-input', placeholder: 'Search (Ctrl+F)', 'aria-label': 'Search kernels, NVTX ranges, copies, sets and CUDA API calls' });
    this.kindSelect = h('select', { class: 'search-kinds', title: 'What to search', 'aria-label': 'What to search' });
    SEARCH_KINDS.forEach(([label], i) => this.kindSelect.append(new Option(label, String(i))));
    this.kindSelect.addEventListener('change', () => { this.around.clear(); if (this.input.value.trim()) void this.begin(); });
    this.count = h('span', { class: 'search-count', 'aria-live': 'polite' });
    const prev = h('button', { 'aria-label': 'Previous match (Shift+Enter)', title: 'Previous match (Shift+Enter)' }, '↑');
    const next = h('button', { 'aria-label': 'Next match (Enter)', title: 'Next match (Enter)' }, '↓');
    prev.addEventListener('click', () => void this.step(-1));
    next.addEventListener('click', () => void this.step(1));
    this.el = h('span', { class: 'search' }, this.kindSelect, this.input, this.count, prev, next);
    let typed: ReturnType<typeof setTimeout> | undefined;
    this.input.addEventListener('input', () => { clearTimeout(typed); typed = setTimeout(() => void this.begin(), 250); });
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        clearTimeout(typed);
        if (this.input.value.trim() !== this.cursor.query) void this.begin(); else void this.step(ev.shiftKey ? -1 : 1);
      } else if (ev.key === 'Escape') { ev.preventDefault(); this.clear(); }
    });
  }

  get active(): boolean { return this.cursor.query !== ''; }

  /** search's `kinds` for the selected entry (undefined: the default). */
  get kinds(): SearchParams['kinds'] { return SEARCH_KINDS[Number(this.kindSelect.value) || 0][1]; }

  focus(): void { this.input.focus(); this.input.select(); }

  /** A new query from the input: its first match at or after the view's start. */
  async begin(): Promise<void> {
    const q = this.input.value.trim();
    try {
      const m = await this.cursor.begin(q, this.viewStart());
      if (this.cursor.query !== q) return;
      this.setNow(m, true);
    } catch (e) {
      this.count.textContent = (e as Error).message;
      this.count.classList.add('error');
    }
  }

  /** Next (1) or previous (-1) match; zooms to it. */
  async step(dir: 1 | -1): Promise<void> {
    if (!this.active) { await this.begin(); return; }
    const t0 = performance.now();
    const m = await this.cursor.step(dir);
    this.setNow(m, true);
    (window.__nsysPerf.searchSteps ??= []).push(performance.now() - t0);
  }

  clear(): void {
    this.input.value = '';
    void this.cursor.begin('', 0);
    this.setNow(undefined, false);
  }

  /** After a view change: the matches in view (debounced). */
  viewChanged(v: View): void {
    this.lastView = v;
    if (!this.active) return;
    clearTimeout(this.viewTimer);
    this.viewTimer = setTimeout(() => void this.refreshInView(), 120);
  }

  private async refreshInView(): Promise<void> {
    const v = this.lastView, q = this.cursor.query;
    if (!v || !q) return;
    const token = ++this.viewToken;
    try {
      const inView = await this.around.inView(`${this.kindSelect.value}|${q}`, v.start, v.end, this.inWindow(q));
      this.el.dataset.fetches = String(this.around.fetches);
      if (token === this.viewToken && q === this.cursor.query) this.show(this.now, inView, false);
    } catch { /* the outlines are optional */ }
  }

  private setNow(m: Match | undefined, zoom: boolean): void {
    this.now = m;
    this.count.classList.remove('error');
    this.count.textContent = this.cursor.counter();
    this.el.dataset.counter = this.count.textContent;
    this.show(m, [], zoom);
    if (m) void this.refreshInView();
  }
}
