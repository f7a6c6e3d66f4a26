/* The selection panel: a kernel's details (kernel/details) and its
 * explanation (kernel/explain markdown), or an NVTX range's span. */
import { formatNs } from '../client/format';
import type { KernelExplain } from '../protocol/types';
import { h } from './dom';
import { renderMarkdown } from './markdown';
import type { Hit } from './timelineView';

export class DetailsPanel {
  readonly el = h('section', { class: 'details', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Click a kernel (or press n, then Enter) to see its details and explanation.'));
  private token = 0;

  constructor(
    private readonly details: (id: number) => Promise<Record<string, unknown>>,
    private readonly explain: (id: number) => Promise<KernelExplain>,
    private readonly explainName: (name: string) => Promise<KernelExplain>,
  ) {}

  /** A kernel by name (from the top-kernels table): its explanation only. */
  async showName(name: string): Promise<KernelExplain | undefined> {
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

  private fillExplain(box: HTMLElement, e: KernelExplain): void {
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
    const explainBox = h('div', { class: 'explain' }, h('p', { class: 'muted' }, 'Explaining…'));
    this.el.append(explainBox, h('h3', {}, 'Details'), table);
    const [d, x] = await Promise.allSettled([this.details(hit.id), this.explain(hit.id)]);
    if (token !== this.token) return;
    if (x.status === 'fulfilled') {
      this.fillExplain(explainBox, x.value);
    } else {
      explainBox.replaceChildren(h('p', { class: 'error' }, `No explanation: ${String((x.reason as Error)?.message ?? x.reason)}`));
    }
    if (d.status === 'fulfilled') {
      for (const [k, v] of flatten(d.value)) table.append(h('tr', {}, h('th', {}, k), h('td', {}, v)));
    } else {
      table.append(h('tr', {}, h('td', { class: 'error' }, `No details: ${String((d.reason as Error)?.message ?? d.reason)}`)));
    }
  }
}

function flatten(o: Record<string, unknown>, prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(o)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...flatten(v as Record<string, unknown>, key));
    else if (Array.isArray(v)) out.push([key, v.map((x) => (typeof x === 'object' && x ? (x as { name?: string }).name ?? JSON.stringify(x) : String(x))).join(' › ')]);
    else out.push([key, /Ns$/.test(k) && typeof v === 'number' ? `${formatNs(v)} (${v})` : String(v)]);
  }
  return out;
}
