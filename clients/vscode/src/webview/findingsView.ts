/* Report findings: the report method's findings (or its markdown). */
import type { ReportResult } from '../protocol/types';
import { h } from './dom';
import { renderMarkdown } from './markdown';

export function renderFindings(el: HTMLElement, r: ReportResult): void {
  el.replaceChildren();
  const findings = r.findings ?? [];
  if (findings.length) {
    const list = h('ul', { class: 'findings' });
    for (const f of findings) {
      const sev = String(f.severity ?? 'info');
      list.append(h('li', { class: `finding sev-${sev}` },
        h('span', { class: 'badge' }, sev), ' ',
        h('strong', {}, String(f.title ?? f.id ?? 'finding')),
        renderMarkdown(String(f.markdown ?? f.message ?? f.detail ?? ''))));
    }
    el.append(list);
  } else if (typeof r.markdown === 'string') {
    el.append(renderMarkdown(r.markdown));
  } else {
    el.append(h('p', { class: 'muted' }, 'No findings.'));
  }
}
