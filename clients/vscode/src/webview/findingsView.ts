/* Report findings (report/generate): severity, title, time at stake and the
 * recommendation, in the server's order (severity, then impact). A finding's
 * "Show in timeline" (or Enter on it) opens its evidence window on the timeline. */
import { formatNs } from '../client/format';
import type { Int, ReportResult } from '../protocol/types';
import { h } from './dom';

export function renderFindings(el: HTMLElement, r: ReportResult, reveal?: (w: { start: Int; end: Int }, id: string) => void): void {
  const findings = r.findings ?? [];
  if (!findings.length) { el.replaceChildren(h('p', { class: 'muted' }, 'No findings: nothing in this profile trips a rule.')); return; }
  const list = h('ul', { class: 'findings' });
  for (const f of findings) {
    const item = h('li', { class: `finding sev-${f.severity}`, tabindex: '0' },
      h('span', { class: 'badge' }, f.severity), ' ',
      h('strong', {}, f.title));
    if (f.impactNs) item.append(h('span', { class: 'muted' }, ` · ${formatNs(f.impactNs)} at stake`));
    if (f.recommendation) item.append(h('p', {}, f.recommendation));
    const w = f.evidence?.window as { start: Int; end: Int } | undefined;
    if (reveal && w) {
      const go = h('button', { class: 'finding-show', 'aria-label': `Show ${f.title} in the timeline` }, 'Show in timeline');
      go.addEventListener('click', () => reveal(w, f.id));
      item.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && ev.target === item) reveal(w, f.id); });
      item.append(go);
    }
    list.append(item);
  }
  el.replaceChildren(list);
}
