/* The NVTX tree: collapsible rows (a tree with aria roles, arrow keys move,
 * Right/Left expand and collapse, Enter reveals in the timeline) with a bar
 * showing each range's kernel time against the largest root. Each level is
 * one nvtx/tree request (`parent` = the node's id), made when the node is
 * expanded: a 1M-kernel profile's tree stays a few kilobytes per step. */
import { formatNs } from '../client/format';
import type { NvtxNode } from '../protocol/types';
import { h } from './dom';

type Item = HTMLElement & { node?: NvtxNode; level?: number };

export class NvtxTreeView {
  readonly el = h('div', { class: 'nvtx-tree', role: 'tree', 'aria-label': 'NVTX ranges' });
  private max = 1;

  constructor(
    private readonly reveal: (n: NvtxNode) => void,
    /** The children of a node (one nvtx/tree request with the node's id as `parent`). */
    private readonly loadChildren: (n: NvtxNode) => Promise<NvtxNode[]>,
  ) {
    this.el.addEventListener('keydown', (ev) => this.onKey(ev));
  }

  render(roots: NvtxNode[], total = roots.length): void {
    this.max = Math.max(1, ...roots.map((r) => r.kernelNs || 0));
    this.el.replaceChildren();
    if (!roots.length) { this.el.append(h('p', { class: 'muted' }, 'This profile has no NVTX ranges.')); return; }
    const sorted = [...roots].sort((a, b) => (b.kernelNs || 0) - (a.kernelNs || 0));
    const group = h('ul', { role: 'group' });
    for (const r of sorted.slice(0, 500)) group.append(this.item(r, 1));
    this.el.append(group);
    if (total > 500) this.el.append(h('p', { class: 'muted' }, `${total - 500} more roots not shown`));
    const first = this.el.querySelector<HTMLElement>('[role=treeitem]');
    if (first) first.tabIndex = 0;
  }

  private expandable(n: NvtxNode): boolean {
    return (n.childCount ?? n.children?.length ?? 0) > 0;
  }

  private item(n: NvtxNode, level: number): HTMLElement {
    const bar = h('span', { class: 'bar' });
    bar.style.width = `${Math.round(((n.kernelNs || 0) / this.max) * 100)}%`;
    const inst = typeof (n as { instances?: number }).instances === 'number' ? ` · ×${(n as { instances?: number }).instances}` : '';
    const label = h('div', { class: 'row' },
      h('span', { class: 'twisty' }, this.expandable(n) ? '▸' : ' '),
      h('span', { class: 'name', title: n.name }, n.name),
      h('span', { class: 'num' }, `${formatNs(n.kernelNs || 0)} GPU · ${n.opCount} ops${inst}`),
      h('span', { class: 'barbox' }, bar));
    const li: Item = h('li', { role: 'treeitem', 'aria-level': String(level), tabindex: '-1' }, label);
    if (this.expandable(n)) li.setAttribute('aria-expanded', 'false');
    label.addEventListener('click', () => { void this.toggle(li); li.focus(); });
    label.addEventListener('dblclick', () => this.reveal(n));
    li.node = n;
    li.level = level;
    return li;
  }

  private async toggle(li: Item, open?: boolean): Promise<void> {
    const n = li.node!, level = li.level!;
    if (!li.hasAttribute('aria-expanded')) return;
    const expanded = li.getAttribute('aria-expanded') === 'true';
    const want = open ?? !expanded;
    if (want === expanded) return;
    li.setAttribute('aria-expanded', String(want));
    li.querySelector('.twisty')!.textContent = want ? '▾' : '▸';
    if (!want) { li.querySelector(':scope > ul')?.remove(); return; }
    let kids = n.children ?? [];
    if (!kids.length) {
      try { kids = n.children = await this.loadChildren(n); } catch { kids = []; }
      if (!kids.length) { li.removeAttribute('aria-expanded'); li.querySelector('.twisty')!.textContent = ' '; return; }
    }
    const g = h('ul', { role: 'group' });
    for (const c of [...kids].sort((a, b) => (b.kernelNs || 0) - (a.kernelNs || 0)).slice(0, 500)) g.append(this.item(c, level + 1));
    li.append(g);
  }

  private onKey(ev: KeyboardEvent): void {
    const items = [...this.el.querySelectorAll<Item>('[role=treeitem]')];
    const cur = document.activeElement as Item;
    const i = items.indexOf(cur);
    if (i < 0) return;
    const move = (j: number) => { const t = items[Math.max(0, Math.min(items.length - 1, j))]!; cur.tabIndex = -1; t.tabIndex = 0; t.focus(); };
    if (ev.key === 'ArrowDown') move(i + 1);
    else if (ev.key === 'ArrowUp') move(i - 1);
    else if (ev.key === 'ArrowRight') void this.toggle(cur, true);
    else if (ev.key === 'ArrowLeft') void this.toggle(cur, false);
    else if (ev.key === 'Enter') this.reveal(cur.node!);
    else return;
    ev.preventDefault();
  }
}
