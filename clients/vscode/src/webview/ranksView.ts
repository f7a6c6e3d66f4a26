/* The multi-rank view: every rank's GPU on the set's clock (client/ranksModel),
 * one utilisation row per rank (click a rank to see its streams), the
 * straggler table beside it. A click on a collective (an NCCL kernel) links
 * it across ranks as the server matched it (set/collectives: the instances
 * the straggler analysis measured): its instance on every rank is outlined,
 * and the last arriver (the rank the others waited for) is marked at its
 * start. */
import { clockOrigin, relTime, type Int } from '../client/exactJson';
import { formatNs } from '../client/format';
import { collectiveAt, isCollective, linksOf, mergedRange, onSetClock, rankTrackId, rankTracks, ranksOf, splitId, splitTrackId, stragglers, type CollectiveLink, type CollectiveRow, type Rank } from '../client/ranksModel';
import type { RangeReply } from '../protocol/types';
import type { OpenSetResult, ViewProfile } from '../protocol/viewMessages';
import { h } from './dom';
import { TimelineView, type Hit } from './timelineView';
import type { ViewRpc } from './profileTimeline';

/** A linked collective's outline, and the last arriver's mark (colours the palette does not use; tests look for them). */
export const LINKED = '#00e5ff';
export const LAST = '#ff2d55';

/** Events asked around a collective to find each instance's stream. */
const LINK_EVENTS = 100_000;

export interface RanksViewHooks { links(): CollectiveLink[]; last(): CollectiveLink | undefined; view(): { start: number; end: number; width: number }; setView(start: number, end: number): void; rows(): string[] }

export class RanksView {
  readonly el: HTMLElement;
  readonly timeline: TimelineView;
  private readonly ranks: Rank[];
  private readonly origin: bigint;
  private readonly range: ReturnType<typeof mergedRange>;
  private readonly trackIds: string[];
  private links: CollectiveLink[] = [];
  private last: CollectiveLink | undefined;
  private readonly info = h('div', { class: 'collective', 'aria-live': 'polite' });
  private token = 0;

  private readonly setId: string;

  constructor(private readonly bridge: ViewRpc, set: OpenSetResult, private readonly profiles: ViewProfile[]) {
    this.ranks = ranksOf(set);
    this.setId = set.setId;
    if (!this.ranks.length) throw new Error('the set has no ranks');
    const files = profiles.length;
    this.origin = clockOrigin(set.window.start, set.window.end);
    const rel = (t: Int) => relTime(t, this.origin);
    const bounds = { start: rel(set.window.start), end: rel(set.window.end) };
    const { tracks, tree } = rankTracks(this.ranks, profiles);
    this.trackIds = tracks.map((t) => t.id);
    this.range = mergedRange(this.ranks, files, this.origin, (profileId, p) => bridge.request<RangeReply>('timeline/range', { ...p, profileId }));
    this.timeline = new TimelineView(tracks, bounds, this.range, (id) => this.details(id), (hit) => void this.onSelect(hit), rel, tree);
    this.timeline.overlay = (ctx, g) => {
      if (!this.links.length) return;
      for (const l of this.links) for (const row of g.rows.filter((r) => (l.trackId === undefined ? r.key === `rank:${l.index}` : r.ids.includes(l.trackId)))) { /* its rank's row, and its stream's when open */
        const x0 = g.x(l.start), x1 = Math.max(g.x(l.end), x0 + 2);
        ctx.strokeStyle = LINKED;
        ctx.lineWidth = 2;
        ctx.strokeRect(x0 - 1, row.y + 2, x1 - x0 + 2, g.rowH - 5);
        if (l === this.last) {
          ctx.fillStyle = LAST;
          ctx.fillRect(x0 - 3, row.y + 1, 4, g.rowH - 3);
        }
      }
    };
    const s = stragglers(set);
    const causes = s.rows.some((r) => r.cause !== undefined);
    const table = h('table', { 'aria-label': 'Stragglers: how often each rank was the last to start a collective' },
      h('thead', {}, h('tr', {}, ...['Rank', 'Last', 'Last %', 'Avg late', ...(causes ? ['Cause'] : [])].map((t, i) => h('th', { class: i && i < 4 ? 'num' : '' }, t)))),
      h('tbody', {}, ...s.rows.map((r) => {
        const tr = h('tr', { tabindex: '0', class: r.rank === s.straggler ? 'straggler' : '', title: 'Show or hide this rank\'s streams' },
          h('td', {}, `${r.rank}${r.rank === s.straggler ? ' (straggler)' : ''}`), h('td', { class: 'num' }, String(r.lastCount)),
          h('td', { class: 'num' }, `${r.lastPct}%`), h('td', { class: 'num' }, formatNs(r.avgLateNs)), ...(causes ? [h('td', {}, r.cause ?? '—')] : []));
        const open = () => { const k = this.ranks.find((x) => x.rank === r.rank); if (k) this.timeline.changeRows('open', `rank:${k.index}`); };
        tr.addEventListener('click', open);
        tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(); });
        return tr;
      })));
    const note = s.straggler === null ? 'no straggler' : `rank ${s.straggler} is the straggler`;
    this.el = h('div', { class: 'view-ranks' },
      h('div', { class: 'view-header' },
        h('div', { class: 'verdict' }, `${this.ranks.length} ranks · ${note} (last in ${s.matched ? Math.max(...s.rows.map((r) => r.lastCount)) : 0} of ${s.matched} matched collectives)`),
        h('div', { class: 'facts' }, `${set.aligned ? 'clocks aligned' : 'clocks NOT aligned'} · click a rank to see its streams, a collective (NCCL kernel) to link it across ranks`)),
      h('div', { class: 'view-body' },
        h('div', { class: 'view-timelines' }, this.timeline.el),
        h('div', { class: 'view-side' }, table, this.info)));
    window.__nsysViews = { ...window.__nsysViews, ranks: {
      links: () => this.links, last: () => this.last, view: () => this.timeline.currentView,
      setView: (start, end) => this.timeline.setView({ start, end, width: this.timeline.currentView.width }),
      rows: () => window.__nsysPerf.rowIds?.() ?? [],
    } satisfies RanksViewHooks };
  }

  start(): void { this.timeline.start(); }

  /** kernel/details of a merged kernel id, its times on the set's clock and its track the merged one. */
  private async details(id: number): Promise<Record<string, unknown>> {
    const { file, local } = splitId(id, this.profiles.length);
    const p = this.profiles[file]!;
    const d = await this.bridge.request<Record<string, unknown>>('kernel/details', { profileId: p.profileId, kernelId: local });
    const mine = this.ranks.filter((r) => r.file === file);
    const rank = mine.find((r) => r.device === d.device) ?? mine[0]!;
    const move = (o: Record<string, unknown>) => ({ ...o, start: onSetClock(o.start as Int, rank.offsetNs), end: onSetClock(o.end as Int, rank.offsetNs) });
    const api = d.api && typeof d.api === 'object' ? { api: move(d.api as Record<string, unknown>) } : {};
    return { ...move(d), ...api, track: typeof d.track === 'string' ? rankTrackId(d.track, rank) : d.track };
  }

  /** A collective clicked: the server's collective holding that kernel, its instances' streams from the kernels around them. */
  private async onSelect(hit: Hit): Promise<void> {
    const token = ++this.token;
    const rank = this.ranks[splitTrackId(hit.trackId).index];
    if (!hit.gpu || !isCollective(hit.name) || !rank) { this.show([], undefined, hit.name); return; }
    const res = await this.bridge.request<{ rows: CollectiveRow[] }>('set/collectives', collectiveAt(this.setId, rank, hit.start, this.origin));
    if (token !== this.token) return;
    const row = res.rows[0];
    if (!row) { this.show([], undefined, hit.name); return; } /* not matched on every rank of its communicator */
    const starts = row.startsNs.filter((x) => x !== null).map((x) => relTime(x, this.origin));
    const ends = row.startsNs.map((x, r) => (x === null ? -Infinity : relTime(x, this.origin) + Number(row.durationsNs[r] ?? 0)));
    const answer = await this.range({ start: Math.min(...starts), end: Math.max(...ends) + 1, width: 1000, maxEvents: LINK_EVENTS, format: 'columns', tracks: this.ranks.filter((r) => row.startsNs[r.rank] !== null).flatMap((r) => this.trackIds.filter((id) => splitTrackId(id).index === r.index)) });
    if (token !== this.token) return;
    const { links, last } = linksOf(row, this.ranks, this.origin, answer);
    this.show(links, last, `${hit.name} (${row.type} #${row.id})`);
  }

  private show(links: CollectiveLink[], last: CollectiveLink | undefined, name: string): void {
    this.links = links;
    this.last = last;
    const first = Math.min(...links.map((l) => l.start));
    this.info.replaceChildren(...(links.length ? [h('p', {}, `${name}: on ${links.length} of ${this.ranks.length} ranks`),
      h('ul', {}, ...links.map((l) => h('li', { class: l === last ? 'last' : '' },
        `rank ${l.rank}: starts +${formatNs(l.start - first)}, ${formatNs(l.end - l.start)}${l === last ? ' — last to arrive' : ''}`)))]
      : isCollective(name) ? [h('p', {}, `${name}: not matched across ranks`)] : []));
    this.el.dataset.linked = String(links.length);
    this.timeline.refresh();
  }
}
