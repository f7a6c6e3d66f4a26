/* The selection panel: a kernel's details (kernel/details) and its
 * explanation (kernel/explain markdown), each shown as soon as it arrives, or
 * an NVTX range's span. */
import { formatNs } from '../client/format';
import { columnRows, detailRows, type DetailRow } from '../client/detailRows';
import type { Int } from '../protocol/types';
import type { PageExplain } from '../client/pageExplain';
import { h } from './dom';
import { renderMarkdown } from './markdown';
import type { Hit } from './timelineView';

export class DetailsPanel {
  readonly el = h('section', { class: 'details', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Click a kernel (or press n, then Enter) to see its details and explanation.'));
  private token = 0;

  constructor(
    private readonly details: (id: number) => Promise<Record<string, unknown>>,
    private readonly explain: (id: number) => Promise<PageExplain>,
    private readonly explainName: (name: string) => Promise<PageExplain>,
    /** The profile's start: times read as offsets from it, as on the timeline's axis. */
    private readonly origin: Int,
  ) {}

  /** A kernel by name (from the top-kernels table): its explanation only. */
  async showName(name: string): Promise<PageExplain | undefined> {
    const token = ++this.token;
    const box = h('div', { class: 'explain' }, h('p', { class: 'muted' }, 'Explaining…'));
    this.el.replaceChildren(h('h2', {}, name), box);
    try {
      const e = await this.explainName(name);
      if (token === this.token) this.fillExplain(box, e);
      return e;
    } catch (err) {
      if (token === this.token) box.replaceChildren(h('p', { class: 'error' }, `No explanation: ${(err as Error).message}`));
      return undefined;
    }
  }

  private fillExplain(box: HTMLElement, e: PageExplain): void {
    box.replaceChildren(
      h('p', { class: 'badges' }, h('span', { class: 'badge' }, e.origin), ' ', h('span', { class: 'badge' }, e.category), ' ', h('strong', {}, e.displayName)),
      renderMarkdown(e.markdown ?? ''),
    );
    box.dataset.loaded = 'true';
  }

  async show(hit: Hit): Promise<void> {
    const token = ++this.token;
    const head = h('h2', {}, hit.name);
    const summary = h('p', {}, `${hit.kind} · ${formatNs(hit.dur)}${hit.count && hit.count > 1 ? ` · the longest of ${hit.count} starting in this pixel` : ''}`);
    this.el.replaceChildren(head, summary);
    this.el.dataset.kernelId = String(hit.id);
    if (!hit.gpu) return;
    const table = h('table', { class: 'kv' });
    const all = h('details', { class: 'all-columns' });
    const explainBox = h('div', { class: 'explain' }, h('p', { class: 'muted' }, 'Explaining…'));
    this.el.append(explainBox, h('h3', {}, 'Details'), table, all);
    /* each part as soon as it arrives: kernel/details is quick (and often cached from the hover),
     * kernel/explain can take a second on a large profile */
    const fillDetails = this.details(hit.id).then((d) => {
      if (token !== this.token) return;
      table.append(...kvRows(detailRows(d, this.origin)));
      const cols = columnRows(d);
      if (cols.length) all.append(h('summary', {}, `All columns (${cols.length})`), h('table', { class: 'kv' }, ...kvRows(cols)));
    }, (e: unknown) => {
      if (token === this.token) table.append(h('tr', {}, h('td', { class: 'error' }, `No details: ${String((e as Error)?.message ?? e)}`)));
    });
    const fillExplain = this.explain(hit.id).then((x) => {
      if (token === this.token) this.fillExplain(explainBox, x);
    }, (e: unknown) => {
      if (token === this.token) explainBox.replaceChildren(h('p', { class: 'error' }, `No explanation: ${String((e as Error)?.message ?? e)}`));
    });
    await Promise.all([fillDetails, fillExplain]);
  }
}

function kvRows(rows: DetailRow[]): HTMLElement[] {
  return rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)));
}
