/* Entry of the views over several profiles (dist/views.js): the host sends
 * the view's data (protocol/viewMessages), the page shows the diff view or
 * the multi-rank view (viewRender); requests go through the host bridge as
 * in the profile view. */
import { answerIdOf, fromEnvelope } from '../protocol/messages';
import type { HostToWebview } from '../protocol/messages';
import type { ViewHostToWebview, ViewInit } from '../protocol/viewMessages';
import { HostBridge } from './rpc';
import { h } from './dom';
import { renderView } from './viewRender';

const bridge = new HostBridge();
const app = document.getElementById('app')!;
let shown = false;

window.addEventListener('message', (ev: MessageEvent<unknown>) => {
  const answers = answerIdOf(ev.data);
  if (answers !== undefined && !bridge.waits(answers)) { bridge.dropped++; return; } /* its request was cancelled: not parsed */
  const m = fromEnvelope(ev.data) as ViewHostToWebview;
  if (bridge.settle(m as HostToWebview)) return;
  if (shown) return; /* a second init (the host re-sent it): the view stays */
  shown = renderView(app, bridge, m as ViewInit);
  if (!shown) bridge.log('warn', `unknown message type ${(m as { type?: string }).type}`);
});

app.replaceChildren(h('p', { class: 'muted' }, 'Opening profiles…'));
bridge.post({ type: 'ready' });
