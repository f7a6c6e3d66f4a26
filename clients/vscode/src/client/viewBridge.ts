/* The host side of the views over several profiles (diff, ranks), free of
 * vscode imports: `ready` gets the view's data (viewLoad), and the webview's
 * requests are forwarded (client/bridgeCore's forwarder, the read-only
 * methods of the profile view, and set/collectives) when every profile they
 * name is one of the view's, or the set they name is the view's. The
 * extension wires it to a WebviewPanel, the UI tests to a page. */
import { fromEnvelope, isWebviewToHost, type Envelope, type HostToWebview, type WebviewToHost } from '../protocol/messages';
import { viewEnvelope, viewProfileIds, viewSetIds, type ViewHostToWebview, type ViewInit } from '../protocol/viewMessages';
import { ErrorCode } from '../protocol/methods';
import { createForwarder } from './bridgeCore';
import type { Logger } from './logger';
import { WEBVIEW_METHODS, type NsysClient } from './nsysClient';

export interface ViewBridgeContext {
  client: () => Promise<NsysClient>;
  /** The view's data (asked once, on the first `ready`). */
  init: () => Promise<ViewInit>;
  post: (envelope: Envelope) => void;
  logger: Logger;
  onRequest?: (method: string, params: Record<string, unknown>) => void;
}

/** Params naming profiles: profileId, or profile/diff's base and compare. */
const PROFILE_PARAMS = ['profileId', 'base', 'compare'];

/** What a view may ask: the profile view's methods, and a collective of its rank set as the server matched it. */
export const VIEW_METHODS: ReadonlySet<string> = new Set([...WEBVIEW_METHODS, 'set/collectives']);

/** Whether a request names only the view's own profiles, or only its own set. */
function namesOwn(params: Record<string, unknown>, ids: Set<string>, sets: Set<string>): boolean {
  const named = PROFILE_PARAMS.map((k) => params[k]).filter((v) => v !== undefined);
  if (params.setId !== undefined) return !named.length && typeof params.setId === 'string' && sets.has(params.setId);
  return named.length > 0 && named.every((v) => typeof v === 'string' && ids.has(v));
}

export function createViewBridge(ctx: ViewBridgeContext): { handle: (raw: unknown) => Promise<void> } {
  const post = (m: ViewHostToWebview) => ctx.post(viewEnvelope(m));
  const forward = createForwarder(ctx, (m: HostToWebview) => post(m as ViewHostToWebview), VIEW_METHODS);
  let data: Promise<ViewInit> | undefined;
  let ids = new Set<string>();
  let sets = new Set<string>();
  const handle = async (raw: unknown): Promise<void> => {
    const m = fromEnvelope(raw);
    if (!isWebviewToHost(m)) { ctx.logger.warn('view sent a malformed message'); return; }
    return one(m);
  };
  const one = async (m: WebviewToHost): Promise<void> => {
    switch (m.type) {
      /* the page's messages of one task: each answered on its own (the views ask few requests at once) */
      case 'batch': await Promise.all((Array.isArray(m.messages) ? m.messages : []).filter((x) => isWebviewToHost(x) && x.type !== 'batch').map((x) => one(x))); return;
      case 'ready': {
        data ??= ctx.init().catch((e: unknown) => ({ type: 'viewError' as const, message: (e as Error)?.message ?? String(e) }));
        const init = await data;
        ids = viewProfileIds(init);
        sets = viewSetIds(init);
        post(init);
        return;
      }
      case 'rpc': {
        if (!namesOwn(m.params, ids, sets)) {
          post({ type: 'rpcError', id: m.id, error: { code: ErrorCode.InvalidParams, message: `${m.method}: the request names no profile of this view` } });
          return;
        }
        return forward.rpc(m, m.params);
      }
      case 'cancel': forward.cancel(m.id); return;
      case 'log': ctx.logger[m.level](`[view] ${m.message}`); return;
      case 'perf': ctx.logger.info(`[view] ${m.name}: ${m.ms.toFixed(1)} ms`); return;
      default: ctx.logger.warn(`unknown view message ${(m as { type?: string }).type}`);
    }
  };
  return { handle };
}
