/* Top kernels: a table sorted by any column (click or Enter on a header). */
import { formatNs, formatPct } from '../client/format';
import type { TopKernelRow } from '../protocol/types';
import { h } from './dom';

type Col = { key: keyof TopKernelRow; label: string; fmt: (r: TopKernelRow) => string; numeric: boolean };
const COLS: Col[] = [
  { key: 'name', label: 'Kernel', fmt: (r) => r.name, numeric: false },
  { key: 'count', label: 'Count', fmt: (r) => String(r.count), numeric: true },
  { key: 'totalNs', label: 'Total', fmt: (r) => formatNs(r.totalNs), numeric: true },
  { key: 'avgNs', label: 'Average', fmt: (r) => formatNs(r.avgNs), numeric: true },
  { key: 'pctOfGpu', label: '% GPU', fmt: (r) => formatPct(r.pctOfGpu), numeric: true },
];

export class TopKernelsTable {
  readonly el = h('div', { class: 'top-kernels' });
  private rows: TopKernelRow[] = [];
  private sortKey: keyof TopKernelRow = 'totalNs';
  private desc = true;

  constructor(private readonly onPick: (r: TopKernelRow) => void) {}

  render(rows: TopKernelRow[]): void { this.rows = rows; this.draw(); }

  sortBy(key: keyof TopKernelRow): void {
    if (this.sortKey === key) this.desc = !this.desc; else { this.sortKey = key; this.desc = key !== 'name'; }
    this.draw();
  }

  private draw(): void {
    const k = this.sortKey, dir = this.desc ? -1 : 1;
    const sorted = [...this.rows].sort((a, b) => {
      const x = a[k], y = b[k];
      return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * dir;
    });
    const head = h('tr', {}, ...COLS.map((c) => {
      const btn = h('button', { class: 'sort', 'data-key': String(c.key) }, c.label + (c.key === k ? (this.desc ? ' ▼' : ' ▲') : ''));
      btn.addEventListener('click', () => this.sortBy(c.key));
      const th = h('th', { 'aria-sort': c.key === k ? (this.desc ? 'descending' : 'ascending') : 'none', class: c.numeric ? 'num' : '' }, btn);
      return th;
    }));
    const body = sorted.map((r) => {
      const tr = h('tr', { tabindex: '0' }, ...COLS.map((c) => h('td', { class: c.numeric ? 'num' : 'name' }, c.fmt(r))));
      tr.addEventListener('click', () => this.onPick(r));
      tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') this.onPick(r); });
      return tr;
    });
    this.el.replaceChildren(h('table', {}, h('thead', {}, head), h('tbody', {}, ...body)));
  }
}
