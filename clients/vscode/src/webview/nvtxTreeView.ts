/* The NVTX tree: collapsible rows (a tree with aria roles, arrow keys move,
 * Right/Left expand and collapse, Enter reveals in the timeline) with a bar
 * showing each range's kernel time against the largest root. */
import { formatNs } from '../client/format';
import type { NvtxNode } from '../protocol/types';
import { h } from './dom';

export class NvtxTreeView {
  readonly el = h('div', { class: 'nvtx-tree', role: 'tree', 'aria-label': 'NVTX ranges' });
  private max = 1;

  constructor(private readonly reveal: (n: NvtxNode) => void) {
    this.el.addEventListener('keydown', (ev) => this.onKey(ev));
  }

  render(roots: NvtxNode[]): void {
    this.max = Math.max(1, ...roots.map((r) => r.kernelNs || 0));
    this.el.replaceChildren();
    if (!roots.length) { this.el.append(h('p', { class: 'muted' }, 'This profile has no NVTX ranges.')); return; }
    const group = h('ul', { role: 'group' });
    for (const r of roots.slice(0, 500)) group.append(this.item(r, 1));
    this.el.append(group);
    const first = this.el.querySelector<HTMLElement>('[role=treeitem]');
    if (first) first.tabIndex = 0;
  }

  private item(n: NvtxNode, level: number): HTMLElement {
    const kids = n.children ?? [];
    const bar = h('span', { class: 'bar' });
    bar.style.width = `${Math.round(((n.kernelNs || 0) / this.max) * 100)}%`;
    const label = h('div', { class: 'row' },
      h('span', { class: 'twisty' }, kids.length ? '▸' : ' '),
      h('span', { class: 'name' }, n.name),
      h('span', { class: 'num' }, `${formatNs(n.kernelNs || 0)} GPU · ${n.opCount} ops · ${formatNs(n.end - n.start)} CPU`),
      h('span', { class: 'barbox' }, bar));
    const li = h('li', { role: 'treeitem', 'aria-level': String(level), tabindex: '-1' }, label);
    if (kids.length) li.setAttribute('aria-expanded', 'false');
    label.addEventListener('click', () => { this.toggle(li, n, level); li.focus(); });
    label.addEventListener('dblclick', () => this.reveal(n));
    (li as HTMLElement & { node?: NvtxNode }).node = n;
    return li;
  }

  private toggle(li: HTMLElement, n: NvtxNode, level: number, open?: boolean): void {
    if (!n.children?.length) return;
    const expanded = li.getAttribute('aria-expanded') === 'true';
    const want = open ?? !expanded;
    if (want === expanded) return;
    li.setAttribute('aria-expanded', String(want));
    li.querySelector('.twisty')!.textContent = want ? '▾' : '▸';
    if (want) {
      const g = h('ul', { role: 'group' });
      for (const c of n.children.slice(0, 500)) g.append(this.item(c, level + 1));
      li.append(g);
    } else li.querySelector(':scope > ul')?.remove();
  }

  private onKey(ev: KeyboardEvent): void {
    const items = [...this.el.querySelectorAll<HTMLElement>('[role=treeitem]')];
    const cur = document.activeElement as HTMLElement & { node?: NvtxNode };
    const i = items.indexOf(cur);
    if (i < 0) return;
    const n = cur.node!;
    const level = Number(cur.getAttribute('aria-level'));
    const move = (j: number) => { const t = items[Math.max(0, Math.min(items.length - 1, j))]!; cur.tabIndex = -1; t.tabIndex = 0; t.focus(); };
    if (ev.key === 'ArrowDown') move(i + 1);
    else if (ev.key === 'ArrowUp') move(i - 1);
    else if (ev.key === 'ArrowRight') this.toggle(cur, n, level, true);
    else if (ev.key === 'ArrowLeft') this.toggle(cur, n, level, false);
    else if (ev.key === 'Enter') this.reveal(n);
    else return;
    ev.preventDefault();
  }
}
