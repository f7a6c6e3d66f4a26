/* The NVTX tree: collapsible rows (a tree with aria roles, arrow keys move,
 * Right/Left expand and collapse, Enter reveals in the timeline) with a bar
 * showing each range's kernel time against the largest root. Levels below the
 * first fetch are loaded when expanded (large profiles have 100k+ ranges). */
import { formatNs } from '../client/format';
import type { NvtxNode } from '../protocol/types';
import { h } from './dom';

type Item = HTMLElement & { node?: NvtxNode; path?: string[] };

export class NvtxTreeView {
  readonly el = h('div', { class: 'nvtx-tree', role: 'tree', 'aria-label': 'NVTX ranges' });
  private max = 1;

  constructor(
    private readonly reveal: (n: NvtxNode) => void,
    /** Children of the node at `path` (names from a root), or undefined when the first fetch already has them. */
    private readonly loadChildren: (path: string[], n: NvtxNode) => Promise<NvtxNode[]>,
    private readonly loadedDepth: number,
  ) {
    this.el.addEventListener('keydown', (ev) => this.onKey(ev));
  }

  render(roots: NvtxNode[]): void {
    this.max = Math.max(1, ...roots.map((r) => r.kernelNs || 0));
    this.el.replaceChildren();
    if (!roots.length) { this.el.append(h('p', { class: 'muted' }, 'This profile has no NVTX ranges.')); return; }
    const sorted = [...roots].sort((a, b) => (b.kernelNs || 0) - (a.kernelNs || 0));
    const group = h('ul', { role: 'group' });
    for (const r of sorted.slice(0, 500)) group.append(this.item(r, [r.name]));
    this.el.append(group);
    if (roots.length > 500) this.el.append(h('p', { class: 'muted' }, `${roots.length - 500} more roots not shown`));
    const first = this.el.querySelector<HTMLElement>('[role=treeitem]');
    if (first) first.tabIndex = 0;
  }

  private expandable(n: NvtxNode, path: string[]): boolean {
    return (n.children?.length ?? 0) > 0 || (path.length >= this.loadedDepth && n.opCount > 0);
  }

  private item(n: NvtxNode, path: string[]): HTMLElement {
    const bar = h('span', { class: 'bar' });
    bar.style.width = `${Math.round(((n.kernelNs || 0) / this.max) * 100)}%`;
    const inst = typeof (n as { instances?: number }).instances === 'number' ? ` · ×${(n as { instances?: number }).instances}` : '';
    const label = h('div', { class: 'row' },
      h('span', { class: 'twisty' }, this.expandable(n, path) ? '▸' : ' '),
      h('span', { class: 'name', title: n.name }, n.name),
      h('span', { class: 'num' }, `${formatNs(n.kernelNs || 0)} GPU · ${n.opCount} ops${inst}`),
      h('span', { class: 'barbox' }, bar));
    const li: Item = h('li', { role: 'treeitem', 'aria-level': String(path.length), tabindex: '-1' }, label);
    if (this.expandable(n, path)) li.setAttribute('aria-expanded', 'false');
    label.addEventListener('click', () => { void this.toggle(li); li.focus(); });
    label.addEventListener('dblclick', () => this.reveal(n));
    li.node = n;
    li.path = path;
    return li;
  }

  private async toggle(li: Item, open?: boolean): Promise<void> {
    const n = li.node!, path = li.path!;
    if (!li.hasAttribute('aria-expanded')) return;
    const expanded = li.getAttribute('aria-expanded') === 'true';
    const want = open ?? !expanded;
    if (want === expanded) return;
    li.setAttribute('aria-expanded', String(want));
    li.querySelector('.twisty')!.textContent = want ? '▾' : '▸';
    if (!want) { li.querySelector(':scope > ul')?.remove(); return; }
    let kids = n.children ?? [];
    if (!kids.length) {
      try { kids = n.children = await this.loadChildren(path, n); } catch { kids = []; }
      if (!kids.length) { li.removeAttribute('aria-expanded'); li.querySelector('.twisty')!.textContent = ' '; return; }
    }
    const g = h('ul', { role: 'group' });
    for (const c of [...kids].sort((a, b) => (b.kernelNs || 0) - (a.kernelNs || 0)).slice(0, 500)) g.append(this.item(c, [...path, c.name]));
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
