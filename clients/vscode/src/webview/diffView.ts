/* The diff view: the base and new profiles' timelines on one aligned clock
 * (client/diffModel), their pans and zooms linked; profile/diff's verdict,
 * comparability and components on top; its ranked deltas beside the
 * timelines (a click moves both to the delta's evidence windows, outlined in
 * each). A kernel clicked in either timeline selects its delta. */
import { alignment, changeText, componentText, evidenceOf, headline, onSharedClock, viewOver, type Alignment, type Delta } from '../client/diffModel';
import { formatNs } from '../client/format';
import { profileSpan } from '../protocol/types';
import type { DiffResult, ViewProfile } from '../protocol/viewMessages';
import { h } from './dom';
import { linkViews, profileTimeline, type ViewRpc } from './profileTimeline';
import type { TimelineView } from './timelineView';
import type { RanksViewHooks } from './ranksView';

/** The evidence windows' outline (a colour the palette does not use; tests look for it). */
export const EVIDENCE = '#ff00ff';

type Side = 'base' | 'compare';
type Span = { start: number; end: number };

export interface DiffViewHooks { views(): Array<Span & { width: number }>; evidence(): Partial<Record<Side, Span>>; alignment(): Alignment; pick(i: number): void }
declare global { interface Window { __nsysViews?: { diff?: DiffViewHooks; ranks?: RanksViewHooks } } }

export class DiffView {
  readonly el: HTMLElement;
  private readonly timelines: Record<Side, TimelineView>;
  private readonly align: Alignment;
  private readonly deltas: Delta[];
  private readonly table = h('tbody', {});
  private evidence: Partial<Record<Side, Span>> = {};
  private readonly bounds: Span;
  private picked = -1;

  constructor(bridge: ViewRpc, base: ViewProfile, compare: ViewProfile, private readonly diff: DiffResult) {
    const bs = profileSpan(base.info), cs = profileSpan(compare.info);
    if (!bs || !cs) throw new Error(`${bs ? compare.title : base.title} has no timed activity`);
    this.align = alignment(diff, bs.start, cs.start);
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
    this.deltas = diff.deltas; /* ranked by the server (impact first) */
    const more = diff.deltasTotal > diff.deltas.length ? ` (top ${diff.deltas.length} of ${diff.deltasTotal})` : '';
    this.el = h('div', { class: 'view-diff' },
      this.header(),
      h('div', { class: 'view-body' },
        h('div', { class: 'view-timelines' },
          h('div', { class: 'side-label' }, `Base · ${base.title}`), this.timelines.base.el,
          h('div', { class: 'side-label' }, `New · ${compare.title}`), this.timelines.compare.el),
        h('div', { class: 'view-side deltas' },
          h('div', { class: 'side-label' }, `Where it changed${more}: per steady-state iteration`),
          h('table', { 'aria-label': 'Deltas, largest impact first' },
            h('thead', {}, h('tr', {}, ...['What', 'Change', 'Δ / iter', 'Δ %', 'Count'].map((t, i) => h('th', { class: i > 1 ? 'num' : '' }, t)))),
            this.table),
          this.components())));
    this.renderDeltas();
    window.__nsysViews = { ...window.__nsysViews, diff: {
      views: () => [this.timelines.base.currentView, this.timelines.compare.currentView],
      evidence: () => this.evidence,
      alignment: () => this.align,
      pick: (i) => this.pick(i),
    } };
  }

  /** Call once the element is in the document. */
  start(): void {
    this.timelines.base.start();
    this.timelines.compare.start();
  }

  private header(): HTMLElement {
    const top = headline(this.diff);
    const c = this.diff.comparability;
    const facts = [
      `comparability ${c.score.toFixed(2)}${c.reasons.length ? `: ${c.reasons.map((r) => r.message).join('; ')}` : ''}`,
      `steady iterations ${this.diff.base.steady} → ${this.diff.compare.steady}`,
      `clocks aligned on each ${this.align.how}`,
    ];
    return h('div', { class: 'view-header' },
      h('div', { class: `verdict ${top.tone}`, role: 'status' }, top.text),
      h('div', { class: 'facts' }, facts.join(' · ')),
      this.zoomButtons());
  }

  /** The components (step first): medians per steady iteration, Δ, noise floor, verdict. */
  private components(): HTMLElement {
    return h('table', { class: 'components', 'aria-label': 'Components: median per steady-state iteration' },
      h('thead', {}, h('tr', {}, ...['Component', 'Base', 'New', 'Δ', 'Noise', 'Verdict'].map((t, i) => h('th', { class: i ? 'num' : '' }, t)))),
      h('tbody', {}, ...this.diff.components.map((x) => h('tr', { class: `component ${x.verdict}` },
        h('td', {}, componentText(x)), h('td', { class: 'num' }, formatNs(x.base.medianNs)), h('td', { class: 'num' }, formatNs(x.compare.medianNs)),
        h('td', { class: 'num' }, `${x.deltaNs > 0 ? '+' : ''}${formatNs(x.deltaNs)}`), h('td', { class: 'num' }, `±${formatNs(x.noiseNs)}`),
        h('td', { class: 'num' }, x.verdict.replace('_', ' '))))));
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
      const tr = h('tr', { tabindex: '0', class: `delta ${d.change}`, 'data-index': String(i), title: `${d.kind}: ${d.key}` },
        h('td', { class: 'name' }, `${d.kind === 'kernel' ? '' : `${d.kind} · `}${d.label}`), h('td', {}, changeText(d)),
        h('td', { class: 'num' }, `${sign}${formatNs(d.deltaNs)}`),
        h('td', { class: 'num' }, d.deltaPct === null ? '—' : `${sign}${d.deltaPct}%`),
        h('td', { class: 'num' }, `${d.baseCount} → ${d.compareCount}`));
      if (i === this.picked) tr.setAttribute('aria-selected', 'true');
      tr.addEventListener('click', () => this.pick(i));
      tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') this.pick(i); });
      return tr;
    }));
  }

  /** The delta of a kernel clicked in a timeline. */
  private selectName(name: string): void {
    const i = this.deltas.findIndex((d) => d.kind === 'kernel' && d.key === name);
    if (i < 0) return;
    this.picked = i;
    this.renderDeltas();
    this.table.children[i]?.scrollIntoView({ block: 'nearest' });
  }

  /** Delta `i`: both timelines move to the window showing its evidence in both runs, outlined in each. */
  pick(i: number): void {
    const d = this.deltas[i];
    if (!d) return;
    this.picked = i;
    this.renderDeltas();
    this.evidence = evidenceOf(d, this.align);
    const w = viewOver(Object.values(this.evidence));
    if (w) {
      const tl = this.timelines.base; /* the other follows (linkViews) */
      tl.setView({ ...w, width: tl.currentView.width });
    }
    this.timelines.base.refresh();
    this.timelines.compare.refresh();
    this.el.dataset.evidence = String(i);
  }
}
