/* The diff view: the base and new profiles' timelines on one aligned clock
 * (client/diffModel), their pans and zooms linked, the kernel deltas ranked
 * beside them (a click moves both timelines to the delta's evidence windows,
 * outlined), and profile/diff's summary on top. A kernel clicked in either
 * timeline selects its delta. */
import { alignment, onSharedClock, rankedDeltas, statusText, viewOver, type Alignment, type Delta } from '../client/diffModel';
import { formatNs } from '../client/format';
import type { Int, KernelExplain } from '../protocol/types';
import { profileSpan } from '../protocol/types';
import type { DiffResult, ViewProfile } from '../protocol/viewMessages';
import { h } from './dom';
import type { HostBridge } from './rpc';
import { linkViews, profileTimeline } from './profileTimeline';
import type { TimelineView } from './timelineView';
import type { RanksViewHooks } from './ranksView';

/** The evidence windows' outline (a colour the palette does not use; tests look for it). */
export const EVIDENCE = '#ff00ff';

type Side = 'base' | 'compare';
/** A delta's evidence on one side: a kernel of that name and its window (shared clock). */
interface Evidence { kernelId: number; start: number; end: number }

export interface DiffViewHooks { views(): Array<{ start: number; end: number; width: number }>; evidence(): Partial<Record<Side, Evidence>>; pick(i: number): Promise<void> }
declare global { interface Window { __nsysViews?: { diff?: DiffViewHooks; ranks?: RanksViewHooks } } }

export class DiffView {
  readonly el: HTMLElement;
  private readonly timelines: Record<Side, TimelineView>;
  private readonly align: Alignment;
  private readonly deltas: Delta[];
  private readonly table = h('tbody', {});
  private evidence: Partial<Record<Side, Evidence>> = {};
  private readonly bounds: { start: number; end: number };
  private picked = -1;

  constructor(private readonly bridge: HostBridge, private readonly base: ViewProfile, private readonly compare: ViewProfile, private readonly diff: DiffResult) {
    const bs = profileSpan(base.info), cs = profileSpan(compare.info);
    if (!bs || !cs) throw new Error(`${bs ? compare.title : base.title} has no timed activity`);
    this.align = alignment(bs.start, cs.start);
    const b = onSharedClock(bs, this.align.base), c = onSharedClock(cs, this.align.compare);
    const bounds = this.bounds = { start: Math.min(b.start, c.start), end: Math.max(b.end, c.end) }; /* one range: pans and zooms clamp alike */
    const onSelect = (hit: { name: string }) => this.selectName(hit.name);
    this.timelines = {
      base: profileTimeline(bridge, base, this.align.base, bounds, onSelect),
      compare: profileTimeline(bridge, compare, this.align.compare, bounds, onSelect),
    };
    for (const side of ['base', 'compare'] as const) this.timelines[side].overlay = (ctx, g) => {
      const e = this.evidence[side];
      if (!e || !g.rows.length) return;
      const x0 = g.x(e.start), x1 = Math.max(g.x(e.end), x0 + 2);
      const top = g.rows[0]!.y, bottom = g.rows[g.rows.length - 1]!.y + g.rowH;
      ctx.strokeStyle = EVIDENCE;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 2, top + 1, x1 - x0 + 4, bottom - top - 2);
    };
    linkViews([this.timelines.base, this.timelines.compare]);
    this.deltas = rankedDeltas(diff);
    this.el = h('div', { class: 'view-diff' },
      this.header(),
      h('div', { class: 'view-body' },
        h('div', { class: 'view-timelines' },
          h('div', { class: 'side-label' }, `Base · ${base.title}`), this.timelines.base.el,
          h('div', { class: 'side-label' }, `New · ${compare.title}`), this.timelines.compare.el),
        h('div', { class: 'view-side deltas' }, h('table', { 'aria-label': 'Kernel deltas, largest first' },
          h('thead', {}, h('tr', {}, ...['Kernel', 'Change', 'Δ time', 'Δ %', 'Calls'].map((t, i) => h('th', { class: i > 1 ? 'num' : '' }, t)))),
          this.table))));
    this.renderDeltas();
    window.__nsysViews = { ...window.__nsysViews, diff: {
      views: () => [this.timelines.base.currentView, this.timelines.compare.currentView],
      evidence: () => this.evidence,
      pick: (i) => this.pick(i),
    } };
  }

  /** Call once the element is in the document. */
  start(): void {
    this.timelines.base.start();
    this.timelines.compare.start();
  }

  private header(): HTMLElement {
    const s = this.diff.summary;
    const pct = (x: { deltaPct: number }) => `${x.deltaPct > 0 ? '+' : ''}${x.deltaPct}%`;
    const facts = [
      `iteration median ${formatNs(s.iterationMedianNs.base)} → ${formatNs(s.iterationMedianNs.compare)} (${pct(s.iterationMedianNs)})`,
      `kernel time ${formatNs(s.kernelNs.base)} → ${formatNs(s.kernelNs.compare)} (${pct(s.kernelNs)})`,
      `idle ${formatNs(s.idleNs.base)} → ${formatNs(s.idleNs.compare)}`,
      `clocks aligned on each ${this.align.how}`,
    ];
    return h('div', { class: 'view-header' },
      h('div', { class: 'verdict' }, s.text),
      h('div', { class: 'facts' }, facts.join(' · ')),
      this.zoomButtons());
  }

  private zoomButtons(): HTMLElement {
    const tl = this.timelines.base; /* the other follows */
    const b = (label: string, text: string, fn: () => void) => { const e = h('button', { 'aria-label': label, title: label }, text); e.addEventListener('click', fn); return e; };
    return h('span', { class: 'toolbar' },
      b('Zoom in', '+', () => tl.zoom(1 / 1.5)), b('Zoom out', '−', () => tl.zoom(1.5)),
      b('Reset zoom', 'Fit', () => tl.setView({ ...this.bounds, width: tl.currentView.width })));
  }

  private renderDeltas(): void {
    this.table.replaceChildren(...this.deltas.map((d, i) => {
      const sign = d.deltaNs > 0 ? '+' : '';
      const tr = h('tr', { tabindex: '0', class: `delta ${d.status}`, 'data-index': String(i), title: d.name },
        h('td', { class: 'name' }, d.name), h('td', {}, statusText(d)),
        h('td', { class: 'num' }, `${sign}${formatNs(d.deltaNs)}`),
        h('td', { class: 'num' }, d.deltaPct === null ? '—' : `${sign}${d.deltaPct}%`),
        h('td', { class: 'num' }, `${d.baseCount} → ${d.compareCount}`));
      if (i === this.picked) tr.setAttribute('aria-selected', 'true');
      tr.addEventListener('click', () => void this.pick(i));
      tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') void this.pick(i); });
      return tr;
    }));
  }

  /** The delta of a kernel clicked in a timeline. */
  private selectName(name: string): void {
    const i = this.deltas.findIndex((d) => d.name === name);
    if (i < 0) return;
    this.picked = i;
    this.renderDeltas();
    this.table.children[i]?.scrollIntoView({ block: 'nearest' });
  }

  /** Delta `i`: both timelines move to its evidence windows (each side's longest kernel of that name). */
  async pick(i: number): Promise<void> {
    const d = this.deltas[i];
    if (!d) return;
    this.picked = i;
    this.renderDeltas();
    const found: Partial<Record<Side, Evidence>> = {};
    await Promise.all((['base', 'compare'] as const).map(async (side) => {
      if ((side === 'base' ? d.baseCount : d.compareCount) === 0) return;
      const p = side === 'base' ? this.base : this.compare;
      const x = await this.bridge.request<KernelExplain>('kernel/explain', { profileId: p.profileId, name: d.name });
      const id = x.stats?.longestKernelId;
      if (id === undefined || id === null) return;
      const k = await this.bridge.request<{ start: Int; end: Int }>('kernel/details', { profileId: p.profileId, kernelId: id });
      found[side] = { kernelId: id, ...onSharedClock(k, side === 'base' ? this.align.base : this.align.compare) };
    }));
    if (i !== this.picked) return; /* another delta was picked meanwhile */
    this.evidence = found;
    const w = viewOver(Object.values(found));
    if (!w) return;
    /* the same window on both (identical bounds): each selects its own evidence kernel */
    for (const side of ['base', 'compare'] as const) {
      const tl = this.timelines[side];
      tl.setView({ ...w, width: tl.currentView.width });
      const e = found[side];
      if (e) void tl.selectKernel(e.kernelId).catch(() => { /* the outline still shows it */ });
    }
    this.el.dataset.evidence = String(i);
  }
}
