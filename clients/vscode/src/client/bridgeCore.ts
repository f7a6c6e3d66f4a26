/* The host side of the webview protocol, free of vscode imports: the
 * extension wires it to a WebviewPanel, the UI-test harness to a browser page.
 * Read-only methods are forwarded to the server; everything else is refused. */
import type { Answer, Envelope, HostToWebview, WebviewToHost } from '../protocol/messages';
import { FIRST_FRAME, fromEnvelope, isWebviewToHost, toEnvelope } from '../protocol/messages';
import type { ProfileInfo, RangeReply, TimelineTracksResult } from '../protocol/types';
import { packTimes } from './tileColumns';
import { pageExplain } from './pageExplain';
import { DEFAULT_FIRST_VIEW, asFirstView, covers, planFirstTiles, type FirstPlan, type FirstTile, type FirstView } from './firstTiles';
import { ErrorCode } from '../protocol/methods';
import type { Logger } from './logger';
import { CancellationTokenSource, ResponseError, WEBVIEW_METHODS, type NsysClient } from './nsysClient';

export interface BridgeContext {
  client: () => Promise<NsysClient>;
  profile: () => { profileId: string; title: string; info: ProfileInfo };
  /** Delivers `envelope` (the message `m` as exact JSON text) to the webview. */
  post: (envelope: Envelope, m: HostToWebview) => void;
  logger: Logger;
  /** A message to deliver right after `init` (e.g. a pending reveal). */
  takePending?: () => HostToWebview | undefined;
  /** The page drew its first complete frame (its `perf` message "first frame"). */
  onFirstFrame?: () => void;
  /** The timeline size the last page reported (kept across pages: the next page's first tiles are asked for it before it reports its own). */
  firstView?: { get(): FirstView | undefined; set(v: FirstView): void };
  /** Observes every forwarded request (tests use it). */
  onRequest?: (method: string, params: Record<string, unknown>) => void;
}

/** Forwards a webview's `rpc` messages to the server, read-only methods
 * (`allowed`) only, with the params the caller resolved; `cancel` stops one.
 * A `batch`'s requests (the page's messages of one task: a zoom step's tiles)
 * are answered each as it comes, not held for the slowest: VS Code's relay
 * carries bytes at a rate (bench/README.md, branch vsc13b), so a step's first
 * tile goes into it while the server answers the others.
 * The profile view's bridge and the views over several profiles
 * (client/viewBridge) share it. */
export function createForwarder(ctx: Pick<BridgeContext, 'client' | 'onRequest'>, post: (m: HostToWebview) => void, allowed: ReadonlySet<string> = WEBVIEW_METHODS) {
  const inflight = new Map<number, CancellationTokenSource>();
  const answer = async (m: Extract<WebviewToHost, { type: 'rpc' }>, params: Record<string, unknown>): Promise<Answer> => {
    if (!allowed.has(m.method)) return { type: 'rpcError', id: m.id, error: { code: ErrorCode.MethodNotFound, message: `${m.method} is not available to the webview` } };
    const src = new CancellationTokenSource();
    const received = Date.now();
    inflight.set(m.id, src);
    ctx.onRequest?.(m.method, params);
    try {
      const client = await ctx.client();
      const result = await client.requestUntyped(m.method, params, { token: src.token });
      /* the page cancelled it while the server answered: the page drops it anyway, so no reply text to encode and carry */
      if (src.token.isCancellationRequested) return { type: 'rpcError', id: m.id, error: { code: ErrorCode.Cancelled, message: 'cancelled' } };
      /* fewer bytes through VS Code's relay: a tile's event times as steps and durations (client/tileColumns),
       * an explanation's fields the page shows (client/pageExplain) */
      const sent = m.method === 'timeline/range' ? packTimes(result) : m.method === 'kernel/explain' ? pageExplain(result) : result;
      return { type: 'rpcResult', id: m.id, result: sent, host: { received, answered: Date.now() } };
    } catch (e) {
      const code = e instanceof ResponseError ? e.code : ErrorCode.Internal;
      return { type: 'rpcError', id: m.id, error: { code, message: (e as Error)?.message ?? String(e) } };
    } finally {
      inflight.delete(m.id);
    }
  };
  return {
    async rpc(m: Extract<WebviewToHost, { type: 'rpc' }>, params: Record<string, unknown>): Promise<void> { post(await answer(m, params)); },
    cancel(id: number): void { inflight.get(id)?.cancel(); },
  };
}

export function createBridge(ctx: BridgeContext): { handle: (raw: unknown) => Promise<void> } {
  const post = (m: HostToWebview) => ctx.post(toEnvelope(m), m);
  const forward = createForwarder(ctx, post);
  /* the timeline's first request, asked as soon as the bridge exists (while the
   * webview's page loads) and handed over with init; per profile id (restarts change it) */
  const tracks = new Map<string, Promise<TimelineTracksResult | undefined>>();
  const tracksOf = (profileId: string) => {
    let t = tracks.get(profileId);
    if (!t) {
      t = ctx.client().then((c) => c.request('timeline/tracks', { profileId })).catch(() => undefined);
      tracks.clear();
      tracks.set(profileId, t);
    }
    return t;
  };
  /* the first frame's tiles (client/firstTiles), asked right after the tracks for the
   * last reported size, again at ready if the page's own size needs other tiles */
  type First = { profileId: string; plan: Promise<FirstPlan | undefined>; tiles: Promise<FirstTile[] | undefined> };
  const planOf = (profileId: string, info: ProfileInfo, view: FirstView) =>
    tracksOf(profileId).then((t) => (t ? planFirstTiles(info, t.tracks, view) : undefined));
  const askFirst = (profileId: string, info: ProfileInfo, view: FirstView, why: string): First => {
    const plan = planOf(profileId, info, view);
    const t0 = Date.now();
    const tiles = plan.then(async (p) => {
      if (!p) return undefined;
      const t1 = Date.now();
      const client = await ctx.client();
      const results = await Promise.all(p.params.map((q) => {
        const params = { ...q, profileId };
        ctx.onRequest?.('timeline/range', params);
        return client.requestUntyped<RangeReply>('timeline/range', params).then(packTimes);
      }));
      ctx.logger.info(`first tiles (${why}, ${Math.round(view.plotWidth)} px × ${view.rows} rows): ${p.keys.length} × ${p.tracks.length} tracks, tracks ${t1 - t0} ms + ranges ${Date.now() - t1} ms`);
      return p.keys.map((key, i) => ({ key, tracks: p.tracks, result: results[i]! }));
    }).catch(() => undefined);
    return { profileId, plan, tiles };
  };
  const p0 = ctx.profile();
  void tracksOf(p0.profileId);
  let first = askFirst(p0.profileId, p0.info, ctx.firstView?.get() ?? DEFAULT_FIRST_VIEW, ctx.firstView?.get() ? 'the last page\'s size' : 'a default size');
  /** The tiles for a page of size `view` (the ones asked already when they serve it). */
  const firstFor = async (p: { profileId: string; info: ProfileInfo }, view: FirstView | undefined): Promise<FirstTile[] | undefined> => {
    if (first.profileId !== p.profileId) first = askFirst(p.profileId, p.info, view ?? DEFAULT_FIRST_VIEW, 'a restarted server');
    else if (view) {
      const [have, need] = await Promise.all([first.plan, planOf(p.profileId, p.info, view)]);
      if (have && need && !covers(have, need)) first = askFirst(p.profileId, p.info, view, 'this page\'s size, at ready');
    }
    const t0 = Date.now();
    const tiles = await first.tiles;
    ctx.logger.info(`ready → first tiles: waited ${Date.now() - t0} ms`);
    return tiles;
  };
  const handle = async (raw: unknown): Promise<void> => {
    const msg = fromEnvelope(raw);
    if (!isWebviewToHost(msg)) { ctx.logger.warn('webview sent a malformed message'); return; }
    return one(msg);
  };
  const one = async (m: WebviewToHost): Promise<void> => {
    switch (m.type) {
      case 'batch': await Promise.all((Array.isArray(m.messages) ? m.messages : []).filter((x) => isWebviewToHost(x) && x.type !== 'batch').map((x) => one(x))); return;
      case 'ready': {
        const p = ctx.profile();
        const view = asFirstView(m.view);
        if (view) ctx.firstView?.set(view);
        const [tracks, tiles] = await Promise.all([tracksOf(p.profileId), firstFor(p, view)]);
        const init: HostToWebview = { type: 'init', profileId: p.profileId, title: p.title, info: p.info, tracks, tiles };
        const env = toEnvelope(init);
        ctx.post(env, init);
        ctx.logger.info(`init posted: ${Math.round(env.json.length / 1024)} KB`);
        const pending = ctx.takePending?.();
        if (pending) post(pending);
        return;
      }
      case 'rpc': return forward.rpc(m, { ...m.params, profileId: ctx.profile().profileId });
      case 'cancel': forward.cancel(m.id); return;
      case 'log': ctx.logger[m.level](`[webview] ${m.message}`); return;
      case 'perf':
        ctx.logger.info(`[webview] ${m.name}: ${m.ms.toFixed(1)} ms`);
        if (m.name === FIRST_FRAME) ctx.onFirstFrame?.();
        return;
      default: ctx.logger.warn(`unknown webview message ${(m as { type?: string }).type}`);
    }
  };
  return { handle };
}
