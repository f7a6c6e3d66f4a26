/* The webview's side of the host bridge: requests become `rpc` messages and
 * `rpcResult` / `rpcError` messages settle them. */
import { toEnvelope, type Envelope, type HostToWebview, type WebviewToHost } from '../protocol/messages';
import type { ParamsOf, RequestName, ResultOf } from '../protocol/methods';

interface VsCodeApi { postMessage(m: Envelope): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

/** An answer's way into the page: `posted` the sender's Date.now() after encoding it (epoch ms),
 * `received` / `parsed` performance.now() when its message event began / its text was parsed. */
export interface PageTimes { posted?: number; received: number; parsed: number;
  /** The message's text length (the bench relates the relay's wait to it). */
  bytes?: number }

export class RpcError extends Error {
  constructor(readonly code: number, message: string) { super(message); }
}

export class HostBridge {
  private readonly api: VsCodeApi = acquireVsCodeApi();
  private next = 1;
  private pending = new Map<number, { resolve: (v: unknown, host?: { received: number; answered: number }, page?: PageTimes) => void; reject: (e: unknown) => void }>();
  /** Answers dropped unparsed: their request was cancelled before they came (the view they were for was left). */
  dropped = 0;
  sent: Array<{ method: string; params: Record<string, unknown> }> = [];
  /** When each recent request was sent and settled (performance.now(); perf marks for the bench), and whether it was cancelled. */
  readonly timings: Array<{ id?: number; method: string; params: Record<string, unknown>; sent: number; settled?: number; cancelled?: boolean; host?: { received: number; answered: number }; page?: PageTimes }> = [];

  /** Messages posted in this task, sent as one `batch` when it ends (one message through VS Code's relay
   * for a zoom step's tile requests, not one per tile). */
  private queued: WebviewToHost[] = [];
  private readonly flusher = new MessageChannel();
  constructor() { this.flusher.port1.onmessage = () => this.flush(); }

  post(m: WebviewToHost): void {
    this.queued.push(m);
    /* after this task and its microtasks (the tile requests of a step go out in microtasks: coalescingFetch) */
    if (this.queued.length === 1) this.flusher.port2.postMessage(0);
  }

  private flush(): void {
    const q = this.queued;
    this.queued = [];
    if (q.length) this.api.postMessage(toEnvelope(q.length === 1 ? q[0]! : { type: 'batch', messages: q }));
  }

  /** A request typed by the generated method map (protocol/methods.ts), like the extension's NsysClient.request. */
  request<M extends RequestName>(method: M, params: ParamsOf<M>, signal?: AbortSignal): Promise<ResultOf<M>>;
  /** A method of the generated map whose result the caller reads through a narrower
   * view derived from the generated types (protocol/types.ts: RangeColumns, ...). */
  request<R>(method: RequestName, params: Record<string, unknown>, signal?: AbortSignal): Promise<R>;
  /** `signal` aborted: the host cancels the request (`cancel`: the server stops it) and it rejects with -32800. */
  request(method: string, params: object, signal?: AbortSignal): Promise<unknown> {
    const id = this.next++;
    const p = params as Record<string, unknown>;
    this.sent.push({ method, params: p });
    if (this.sent.length > 500) this.sent.splice(0, 250);
    const timing: HostBridge['timings'][number] = { id, method, params: p, sent: performance.now() };
    this.timings.push(timing);
    if (this.timings.length > 500) this.timings.splice(0, 250);
    return new Promise<unknown>((resolve, reject) => {
      const done = () => { timing.settled = performance.now(); };
      if (signal?.aborted) { reject(new RpcError(-32800, 'cancelled')); return; }
      this.pending.set(id, { resolve: (v, host, page) => { done(); timing.host = host; timing.page = page; resolve(v); }, reject: (e) => { done(); reject(e); } });
      this.post({ type: 'rpc', id, method, params: p });
      signal?.addEventListener('abort', () => {
        const q = this.pending.get(id);
        if (!q) return;
        this.pending.delete(id);
        this.post({ type: 'cancel', id });
        timing.cancelled = true;
        q.reject(new RpcError(-32800, 'cancelled'));
      }, { once: true });
    });
  }

  /** Whether request `id` still waits for its answer. */
  waits(id: number): boolean { return this.pending.has(id); }

  /** Settles a pending request; returns false when the message is not an RPC answer. */
  settle(m: HostToWebview, page?: PageTimes): boolean {
    if (m.type !== 'rpcResult' && m.type !== 'rpcError') return false;
    const p = this.pending.get(m.id);
    if (!p) return true;
    this.pending.delete(m.id);
    if (m.type === 'rpcResult') p.resolve(m.result, m.host, page);
    else p.reject(new RpcError(m.error.code, m.error.message));
    return true;
  }

  log(level: 'info' | 'warn' | 'error', message: string): void { this.post({ type: 'log', level, message }); }
}
