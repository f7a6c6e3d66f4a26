/* Webview entry: builds the layout and routes host messages (one union keyed
 * on `type`; unknown types are logged). All data comes through the host bridge. */
import { FIRST_FRAME, answerIdOf, fromEnvelope, type Envelope, type HostToWebview } from '../protocol/messages';
import { absTime, clockOrigin, relTime, type Int } from '../client/exactJson';
import { rebaseColumns } from '../client/timelineModel';
import { LEGEND } from '../client/trackTree';
import { colorFor } from './colors';
import { profileSpan } from '../protocol/types';
import type { NvtxNode, NvtxTreeResult, ProfileInfo, RangeReply, ReportResult, TimelineTracksResult, TopKernelsResult } from '../protocol/types';
import type { RequestName } from '../protocol/methods';
import { HostBridge } from './rpc';
import { h } from './dom';
import { TimelineView, firstViewOf } from './timelineView';
import type { FirstTile } from '../client/firstTiles';
import { DetailsPanel } from './detailsPanel';
import { PromiseCache } from './promiseCache';
import type { PageExplain } from '../client/pageExplain';
import { NvtxTreeView } from './nvtxTreeView';
import { TopKernelsTable } from './topKernelsTable';
import { renderFindings } from './findingsView';
import { SearchBar } from './searchBar';
import { RangePanel } from './rangePanel';
import { helpOverlay } from './helpOverlay';
import type { Match, MatchPage } from '../client/timelineNav';
import { formatCursor } from '../client/timeAxis';

/* when the bundle started running (the bench splits the first frame at it) */
window.__nsysPerf = { ...window.__nsysPerf, frames: [], inputToFrame: [], inputToComplete: [], hovers: [], scriptAt: performance.now() };
/* tasks over 50 ms on this page's thread (the bench: was an answer's wait in the page's queue?); `name`: 'self', or the
 * frame that ran it ('same-origin-ancestor', ...: VS Code's frames when they share the thread) */
const longTasks: Array<{ start: number; ms: number; name: string }> = (window.__nsysPerf.longTasks = []);
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longTasks.push({ start: e.startTime, ms: e.duration, name: e.name });
    if (longTasks.length > 2000) longTasks.splice(0, 1000);
  }).observe({ type: 'longtask', buffered: true });
} catch { /* no longtask entries in this browser */ }
const bridge = new HostBridge();
let profileId = '';
let timeline: TimelineView | undefined;
let pendingReveal: Extract<HostToWebview, { type: 'reveal' }> | undefined;
/** Times on the profile's clock -> the timeline's offsets (exact; client/exactJson). */
let rel: (t: Int) => number = Number;
const app = document.getElementById('app')!;

/** Tabs; a panel's `load` runs the first time its tab is shown (heavy requests wait until wanted). */
function tabs(panels: Array<[string, HTMLElement, (() => void)?]>): HTMLElement {
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const box = h('div', { class: 'panels' });
  const loaded = new Set<HTMLElement>();
  panels.forEach(([name, panel, load], i) => {
    const id = `tab-${name.toLowerCase().replace(/\W+/g, '-')}`;
    const tab = h('button', { role: 'tab', id, 'aria-selected': String(i === 0), tabindex: i === 0 ? '0' : '-1' }, name);
    panel.setAttribute('role', 'tabpanel');
    panel.setAttribute('aria-labelledby', id);
    panel.hidden = i !== 0;
    const activate = () => {
      bar.querySelectorAll('[role=tab]').forEach((t) => { t.setAttribute('aria-selected', 'false'); (t as HTMLElement).tabIndex = -1; });
      tab.setAttribute('aria-selected', 'true'); tab.tabIndex = 0; tab.focus();
      panels.forEach(([, p]) => (p.hidden = p !== panel));
      if (load && !loaded.has(panel)) { loaded.add(panel); load(); }
    };
    tab.addEventListener('click', activate);
    tab.addEventListener('keydown', (ev) => {
      if (ev.key !== 'ArrowRight' && ev.key !== 'ArrowLeft') return;
      const all = [...bar.querySelectorAll<HTMLElement>('[role=tab]')];
      all[(all.indexOf(tab) + (ev.key === 'ArrowRight' ? 1 : all.length - 1)) % all.length]!.click();
    });
    bar.append(tab);
    box.append(panel);
  });
  return h('div', { class: 'bottom' }, bar, box);
}

async function init(id: string, title: string, info: ProfileInfo, initTracks: TimelineTracksResult | undefined, initTiles: FirstTile[] | undefined): Promise<void> {
  const openedAt = performance.now();
  profileId = id;
  const rpc = <R>(method: RequestName, params: Record<string, unknown>, signal?: AbortSignal) => bridge.request<R>(method, { profileId, ...params }, signal);
  const tracks = initTracks ?? await rpc<TimelineTracksResult>('timeline/tracks', {});
  const span = profileSpan(info);
  if (!span) { app.replaceChildren(h('p', { class: 'muted' }, 'This profile has no timed activity.')); return; }
  /* timed rows but none the timeline draws (CPU samples only, a capture without CUDA): said, not an empty canvas */
  if (!tracks.tracks.length) { app.replaceChildren(h('p', { class: 'muted' }, 'Nothing to draw: this profile has no GPU, NVTX or CUDA API activity.')); return; }
  /* the timeline draws in offsets from an origin (0 on small clocks): exact where the profile's clock passes 2^53 */
  const origin = clockOrigin(span.start, span.end);
  rel = (t: Int) => relTime(t, origin);
  const start = rel(span.start), end = rel(span.end);
  const details = (kernelId: number) => rpc<Record<string, unknown>>('kernel/details', { kernelId });
  /* by op id, asked when the user is about to click an op (timeline.onIntent) and when Details shows it */
  const explained = new PromiseCache((kernelId: number) => rpc<PageExplain>('kernel/explain', { kernelId }), 200);
  const explain = (kernelId: number) => explained.get(kernelId);
  /* the Details panel reads kernel/details through the timeline's cache (a hovered kernel's are there already) */
  const panel = new DetailsPanel((kernelId) => timeline!.kernelDetails(kernelId), explain, (name) => rpc<PageExplain>('kernel/explain', { name }), span.start);
  const range = (p: Record<string, unknown> & { start: number; end: number }, signal?: AbortSignal) =>
    rpc<RangeReply>('timeline/range', { ...p, start: absTime(p.start, origin), end: absTime(p.end, origin) }, signal).then((r) => rebaseColumns(r, origin));
  timeline = new TimelineView(tracks.tracks, { start, end }, range, details, (hit) => {
    activateTab('Details');
    void panel.show(hit);
  }, rel);
  timeline.onIntent = (hit) => { void explain(hit.id).catch(() => { /* Details asks again on the click */ }); };
  const TREE_PAGE = 500;
  /* aggregated (equal name paths merged across iterations and threads), one level at a time:
   * a node's children are asked for by its path id when it is expanded */
  const level = (parent?: number) => rpc<NvtxTreeResult>('nvtx/tree', { mode: 'aggregate', limit: TREE_PAGE, topKernels: 0, ...(parent === undefined ? {} : { parent }) });
  const tree = new NvtxTreeView((n: NvtxNode) => timeline!.reveal(rel(n.gpuStart ?? n.start), rel(n.gpuEnd ?? n.end)),
    async (n) => (await level(n.id)).nodes);
  const top = new TopKernelsTable((r) => {
    activateTab('Details');
    void panel.showName(r.name).then(async (x) => {
      const id = x?.stats?.longestKernelId;
      if (id === undefined || id === null) return;
      const d = await details(id);
      timeline!.reveal(rel(d.start as Int), rel(d.end as Int), id);
    }).catch(() => { /* the panel shows the error */ });
  });
  const findings = h('div', { class: 'findings-panel' }, h('p', { class: 'muted' }, 'Loading findings…'));
  /* search: every match in time order (search's instances), times as the timeline's offsets */
  type SearchReply = { instances?: { total: number; offset: number; names: string[]; items: Array<{ kind: string; id: number; track: string; start: Int; end: Int; name: number }> } };
  const toPage = (r: SearchReply): MatchPage => {
    const i = r.instances ?? { total: 0, offset: 0, names: [], items: [] };
    return { total: Number(i.total), offset: Number(i.offset),
      items: i.items.map((m): Match => ({ kind: m.kind, id: Number(m.id), track: m.track, start: rel(m.start), end: rel(m.end), name: i.names[m.name] ?? '' })) };
  };
  const search = new SearchBar(
    async (p) => toPage(await rpc<SearchReply>('search', { query: p.query, limit: 1, instances: p.instances, kinds: search.kinds,
      ...(p.at !== undefined ? { at: absTime(Math.round(p.at), origin) } : { offset: p.offset ?? 0 }) })),
    (query) => async (s, e, limit) => toPage(await rpc<SearchReply>('search', { query, limit: 1, instances: limit, kinds: search.kinds,
      start: absTime(Math.floor(s), origin), end: absTime(Math.ceil(e), origin) })),
    (now, inView, zoom) => {
      if (now && zoom) { timeline!.zoomTo(now.start, now.end); timeline!.scrollToTrack(now.track); }
      timeline!.setMatches(now, inView.length ? inView : now ? [now] : []);
    },
    () => timeline!.currentView.start);
  const axisLabel = (t: number) => formatCursor(t, start, Math.max(1, (timeline!.currentView.end - timeline!.currentView.start) / 1000));
  const rangePanel = new RangePanel((name, params) => rpc('analysis/run', { name, params }), (t) => absTime(Math.round(t), origin), axisLabel, () => timeline!.fit());
  const help = helpOverlay();
  timeline.addViewListener((v) => search.viewChanged(v));
  timeline.onRange = (r) => { if (r) activateTab('Range'); void rangePanel.show(r); };
  timeline.onCommand = (c) => {
    if (c === 'search') search.focus();
    else if (c === 'next' || c === 'prev') { if (!search.active) return false; void search.step(c === 'next' ? 1 : -1); }
    else if (c === 'help') help.hidden = !help.hidden;
    else if (c === 'escape') { if (!help.hidden) help.hidden = true; else if (search.active) search.clear(); else return false; }
    return true;
  };
  document.addEventListener('keydown', (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') { ev.preventDefault(); search.focus(); }
    else if (ev.key === 'Escape' && !help.hidden) help.hidden = true;
  });
  const unhide = button('Show hidden rows', 'Show hidden', () => timeline!.changeRows('unhide'));
  unhide.hidden = true;
  timeline.onRowsChanged = () => {
    const n = timeline!.treeState.hidden.size;
    unhide.hidden = n === 0;
    unhide.textContent = `Show hidden (${n})`;
  };
  const toolbar = h('div', { class: 'toolbar' },
    h('span', { class: 'title' }, title), legend(), search.el, unhide,
    button('Zoom in', '+', () => timeline!.zoom(1 / 1.5)),
    button('Zoom out', '−', () => timeline!.zoom(1.5)),
    button('Reset zoom', 'Fit', () => timeline!.setView({ start, end, width: timeline!.currentView.width })),
    button('Keyboard and mouse (?)', '?', () => { help.hidden = !help.hidden; }));
  /* each panel asks the server the first time its tab opens: on large profiles the
   * report and the NVTX tree take seconds and should not compete with the timeline */
  const loadTree = () => level().then((r) => tree.render(r.nodes, r.total), (e) => tree.el.replaceChildren(errorText('NVTX tree', e)));
  const loadTop = () => rpc<TopKernelsResult>('analysis/run', { name: 'top_kernels', params: {} }).then((r) => top.render(r.rows ?? []), (e) => top.el.replaceChildren(errorText('Top kernels', e)));
  const loadFindings = () => rpc<ReportResult>('report/generate', {}).then((r) => renderFindings(findings, r, (w) => showWindow(w.start, w.end)), (e) => findings.replaceChildren(errorText('Report', e)));
  tree.el.append(h('p', { class: 'muted' }, 'Loading NVTX ranges…'));
  top.el.append(h('p', { class: 'muted' }, 'Loading top kernels…'));
  app.replaceChildren(toolbar, help, timeline.el, tabs([['Details', panel.el], ['Range', rangePanel.el], ['NVTX tree', tree.el, loadTree], ['Top kernels', top.el, loadTop], ['Findings', findings, loadFindings]]));
  /* the bench harness's hook: it names methods as strings (checked by the server) */
  timeline.perf.rpc = (method, params) => bridge.request(method as RequestName, params);
  timeline.perf.rpcTimings = bridge.timings;
  timeline.perf.answersDropped = () => bridge.dropped;
  timeline.perf.show = (s, e) => timeline!.setView({ start: rel(BigInt(s)), end: rel(BigInt(e)), width: timeline!.currentView.width });
  timeline.onFirstFrame = (ms) => bridge.post({ type: 'perf', name: FIRST_FRAME, ms });
  /* the first frame's tiles came with init (asked by the host while this page loaded): no round trip before it */
  if (initTiles) timeline.seed(initTiles.map((t) => ({ ...t, result: rebaseColumns(t.result, origin) })));
  timeline.start(openedAt);
  if (pendingReveal) { applyReveal(pendingReveal); pendingReveal = undefined; }

}

/** A window on the profile's clock (a finding's evidence): zoomed to, and marked as the area selection. */
function showWindow(s: Int, e: Int): void {
  const a = rel(s), b = rel(e);
  timeline!.zoomTo(a, b);
  timeline!.setRange({ start: a, end: Math.max(b, a + 1) });
}

function applyReveal(m: Extract<HostToWebview, { type: 'reveal' }>): void {
  if (m.window) showWindow(m.window.start, m.window.end);
  if (m.start !== undefined && m.end !== undefined) timeline!.reveal(rel(m.start), rel(m.end), m.kernelId);
  /* the revealed kernel is selected: its details and explanation fill the Details tab */
  if (m.kernelId !== undefined) void timeline!.selectKernel(m.kernelId).catch(() => { /* the timeline still shows it */ });
}

function activateTab(name: string): void {
  const tab = [...document.querySelectorAll<HTMLElement>('[role=tab]')].find((t) => t.textContent === name);
  if (tab && tab.getAttribute('aria-selected') !== 'true') {
    const active = document.activeElement as HTMLElement | null;
    tab.click();
    active?.focus();
  }
}

/** What each colour means (client/trackTree's LEGEND in this palette). */
function legend(): HTMLElement {
  const colour: Record<string, string> = { compute: colorFor('', 'kernel'), communication: colorFor('nccl', 'kernel'), memcpy: colorFor('', 'memcpy'),
    memset: colorFor('', 'memset'), nvtx: colorFor('', 'nvtx'), api: colorFor('', 'api') };
  return h('span', { class: 'legend', 'aria-label': 'Colour legend' },
    ...LEGEND.map((l) => {
      const swatch = h('i', {});
      swatch.style.background = colour[l.kind]!; /* CSSOM: the page's CSP allows no inline style attributes */
      return h('span', { class: 'legend-item', 'data-kind': l.kind }, swatch, l.label);
    }));
}

function button(label: string, text: string, fn: () => void): HTMLElement {
  const b = h('button', { 'aria-label': label, title: label }, text);
  b.addEventListener('click', fn);
  return b;
}

function errorText(what: string, e: unknown): HTMLElement {
  return h('p', { class: 'error' }, `${what} unavailable: ${(e as Error)?.message ?? String(e)}`);
}

window.addEventListener('message', (ev: MessageEvent<unknown>) => {
  const received = performance.now();
  /* an answer to a request already cancelled (a view left) is dropped before its parse */
  const answers = answerIdOf(ev.data);
  if (answers !== undefined && !bridge.waits(answers)) { bridge.dropped++; return; }
  const m = fromEnvelope(ev.data) as HostToWebview;
  if (bridge.settle(m, { posted: (ev.data as Envelope).posted, received, parsed: performance.now(), bytes: (ev.data as Envelope).json?.length })) return;
  switch (m.type) {
    case 'init':
      init(m.profileId, m.title, m.info, m.tracks, m.tiles).catch((e) => app.replaceChildren(errorText('Profile', e)));
      break;
    case 'reveal':
      if (timeline) applyReveal(m); else pendingReveal = m;
      break;
    case 'profileReopened':
      profileId = m.profileId;
      break;
    default:
      console.warn('nsys-ai webview: unknown message', m);
      bridge.log('warn', `unknown message type ${(m as { type?: string }).type}`);
  }
});

app.replaceChildren(h('p', { class: 'muted' }, 'Opening profile…'));
bridge.post({ type: 'ready', view: firstViewOf(document.documentElement.clientWidth, window.innerHeight) });
