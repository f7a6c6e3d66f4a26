/* Entry of the views over several profiles (dist/views.js): the host sends
 * the view's data (protocol/viewMessages), the page shows the diff view or
 * the multi-rank view; requests go through the host bridge as in the
 * profile view. */
import { fromEnvelope } from '../protocol/messages';
import type { HostToWebview } from '../protocol/messages';
import type { ViewHostToWebview } from '../protocol/viewMessages';
import { HostBridge } from './rpc';
import { h } from './dom';
import { DiffView } from './diffView';
import { RanksView } from './ranksView';

const bridge = new HostBridge();
const app = document.getElementById('app')!;
let shown = false;

window.addEventListener('message', (ev: MessageEvent<unknown>) => {
  const m = fromEnvelope(ev.data) as ViewHostToWebview;
  if (bridge.settle(m as HostToWebview)) return;
  if (shown) return; /* a second init (the host re-sent it): the view stays */
  try {
    switch (m.type) {
      case 'diffInit': { const v = new DiffView(bridge, m.base, m.compare, m.diff); app.replaceChildren(v.el); v.start(); break; }
      case 'ranksInit': { const v = new RanksView(bridge, m.set, m.profiles); app.replaceChildren(v.el); v.start(); break; }
      case 'viewError': app.replaceChildren(h('p', { class: 'error' }, `This view is unavailable: ${m.message}`)); break;
      default: bridge.log('warn', `unknown message type ${(m as { type?: string }).type}`); return;
    }
    shown = true;
  } catch (e) {
    app.replaceChildren(h('p', { class: 'error' }, `This view is unavailable: ${(e as Error)?.message ?? String(e)}`));
  }
});

app.replaceChildren(h('p', { class: 'muted' }, 'Opening profiles…'));
bridge.post({ type: 'ready' });
