/* Report findings (report/generate): severity, title, time at stake and the
 * recommendation, in the server's order (severity, then impact). */
import { formatNs } from '../client/format';
import type { ReportResult } from '../protocol/types';
import { h } from './dom';

export function renderFindings(el: HTMLElement, r: ReportResult): void {
  const findings = r.findings ?? [];
  if (!findings.length) { el.replaceChildren(h('p', { class: 'muted' }, 'No findings: nothing in this profile trips a rule.')); return; }
  const list = h('ul', { class: 'findings' });
  for (const f of findings) {
    const item = h('li', { class: `finding sev-${f.severity}`, tabindex: '0' },
      h('span', { class: 'badge' }, f.severity), ' ',
      h('strong', {}, f.title));
    if (f.impactNs) item.append(h('span', { class: 'muted' }, ` · ${formatNs(f.impactNs)} at stake`));
    if (f.recommendation) item.append(h('p', {}, f.recommendation));
    list.append(item);
  }
  el.replaceChildren(list);
}
