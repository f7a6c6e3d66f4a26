/* Shows a view over several profiles (diff, ranks) in `host` from its data
 * (protocol/viewMessages): the VS Code panel (viewMain) and the Jupyter
 * widget (clients/jupyter/js/src/views.ts) both render through it. */
import type { ViewInit } from '../protocol/viewMessages';
import { h } from './dom';
import { DiffView } from './diffView';
import { RanksView } from './ranksView';
import type { ViewRpc } from './profileTimeline';

/** Renders `m` (false for a message that is no view). */
export function renderView(host: HTMLElement, rpc: ViewRpc, m: ViewInit): boolean {
  try {
    switch (m.type) {
      case 'diffInit': { const v = new DiffView(rpc, m.base, m.compare, m.diff); host.replaceChildren(v.el); v.start(); return true; }
      case 'ranksInit': { const v = new RanksView(rpc, m.set, m.profiles); host.replaceChildren(v.el); v.start(); return true; }
      case 'viewError': host.replaceChildren(h('p', { class: 'error' }, `This view is unavailable: ${m.message}`)); return true;
      default: return false;
    }
  } catch (e) {
    host.replaceChildren(h('p', { class: 'error' }, `This view is unavailable: ${(e as Error)?.message ?? String(e)}`));
    return true;
  }
}
