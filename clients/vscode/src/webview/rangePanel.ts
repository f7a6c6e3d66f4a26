/* The area selection's panel: the range's start, end and duration, and the
 * analyses of that window (analysis/run with start/end): kernels and GPU busy
 * time with the top kernels (top_kernels), compute/communication overlap and
 * idle time (overlap), idle gaps (gpu_idle_gaps), launches and their API time
 * (kernel_launch_overhead). "Zoom to selection" fits the view to it. */
import { formatNs } from '../client/format';
import type { Int } from '../protocol/types';
import { h } from './dom';

/** The analyses of a selected range and the params that ask for no more than the panel
 * shows (docs/protocol.md, analysis/run): five top kernels, the summaries of the others
 * (whatever `limit`, a summary covers every gap and kernel; overlap without its
 * per-iteration rows, most of its reply and time on a large range). */
const AREA_ANALYSES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['top_kernels', { limit: 5 }], ['overlap', { perIteration: false }],
  ['gpu_idle_gaps', { limit: 1 }], ['kernel_launch_overhead', { limit: 1 }],
];

/** An analysis/run result, the parts shown here. */
interface Run { rows?: Array<Record<string, unknown>>; summary?: Record<string, unknown> }

export class RangePanel {
  readonly el = h('section', { class: 'range-panel' }, h('p', { class: 'muted' }, 'Drag on the time axis (or Shift+drag) to select a time range.'));
  private token = 0;

  constructor(
    private readonly run: (name: string, params: Record<string, unknown>) => Promise<Run>,
    /** An offset of the timeline → the profile's clock (exact). */
    private readonly abs: (t: number) => Int,
    /** A time as the axis shows it (an offset from the profile's start). */
    private readonly label: (t: number) => string,
    private readonly zoomTo: () => void,
  ) {}

  async show(r: { start: number; end: number } | undefined): Promise<void> {
    const token = ++this.token;
    if (!r) { this.el.replaceChildren(h('p', { class: 'muted' }, 'No range selected.')); delete this.el.dataset.loaded; return; }
    const zoom = h('button', { 'aria-label': 'Zoom to selection (F)', title: 'Zoom to selection (F)' }, 'Zoom to selection');
    zoom.addEventListener('click', this.zoomTo);
    const stats = h('table', { class: 'kv range-stats' });
    const top = h('div', { class: 'range-top' }, h('p', { class: 'muted' }, 'Loading the analyses of this range…'));
    this.el.replaceChildren(h('h2', {}, `Range ${formatNs(r.end - r.start)}`), h('p', {}, `${this.label(r.start)} → ${this.label(r.end)} `, zoom), stats, top);
    this.el.dataset.duration = String(r.end - r.start);
    delete this.el.dataset.loaded;
    const win = { start: this.abs(r.start), end: this.abs(r.end) };
    const [tk, ov, gaps, launch] = await Promise.allSettled(AREA_ANALYSES.map(([name, p]) => this.run(name, { ...win, ...p })));
    if (token !== this.token) return;
    const row = (k: string, v: string) => stats.append(h('tr', {}, h('th', {}, k), h('td', {}, v)));
    const sum = (x: PromiseSettledResult<Run>) => (x.status === 'fulfilled' ? x.value.summary ?? {} : undefined);
    const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0));
    const s1 = sum(tk), s2 = sum(ov), s3 = sum(gaps), s4 = sum(launch);
    if (s1) row('Kernels', `${num(s1.kernelCount).toLocaleString('en-US')} · ${formatNs(num(s1.totalKernelNs))} kernel time · GPU busy ${formatNs(num(s1.gpuBusyNs))}`);
    const total = s2?.total as Record<string, unknown> | undefined;
    if (total) row('Overlap', `compute only ${formatNs(num(total.computeOnlyNs))} · communication only ${formatNs(num(total.commOnlyNs))} · both ${formatNs(num(total.overlapNs))} · idle ${formatNs(num(total.idleNs))}`);
    const devs = (s3?.devices as Array<Record<string, unknown>> | undefined) ?? [];
    if (s3) row('Idle gaps', `${devs.reduce((a, d) => a + num(d.gapCount), 0).toLocaleString('en-US')} gaps · ${formatNs(devs.reduce((a, d) => a + num(d.gapIdleNs), 0))}`);
    if (s4) row('Launches', `${num(s4.launchedKernels).toLocaleString('en-US')} kernels launched · ${formatNs(num(s4.totalApiNs))} in launch calls`);
    const failed = [tk, ov, gaps, launch].find((x) => x.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) row('Error', String((failed.reason as Error)?.message ?? failed.reason));
    const rows = tk.status === 'fulfilled' ? tk.value.rows ?? [] : [];
    top.replaceChildren(rows.length ? h('table', { class: 'range-top-kernels' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Top kernels in the range'), h('th', { class: 'num' }, 'Count'), h('th', { class: 'num' }, 'Time'))),
      h('tbody', {}, ...rows.map((k) => h('tr', {}, h('td', { class: 'name' }, String(k.name)), h('td', { class: 'num' }, String(k.count)), h('td', { class: 'num' }, formatNs(num(k.totalNs)))))))
      : h('p', { class: 'muted' }, 'No kernels in this range.'));
    this.el.dataset.loaded = 'true';
    this.el.dataset.kernels = String(s1 ? num(s1.kernelCount) : '');
  }
}
