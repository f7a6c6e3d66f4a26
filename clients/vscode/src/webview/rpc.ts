/* The webview's side of the host bridge: requests become `rpc` messages and
 * `rpcResult` / `rpcError` messages settle them. */
import type { HostToWebview, WebviewToHost } from '../protocol/messages';

interface VsCodeApi { postMessage(m: WebviewToHost): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

export class RpcError extends Error {
  constructor(readonly code: number, message: string) { super(message); }
}

export class HostBridge {
  private readonly api: VsCodeApi = acquireVsCodeApi();
  private next = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  sent: Array<{ method: string; params: Record<string, unknown> }> = [];

  post(m: WebviewToHost): void { this.api.postMessage(m); }

  request<R>(method: string, params: Record<string, unknown>): Promise<R> {
    const id = this.next++;
    this.sent.push({ method, params });
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post({ type: 'rpc', id, method, params });
    });
  }

  /** Settles a pending request; returns false when the message is not an RPC answer. */
  settle(m: HostToWebview): boolean {
    if (m.type !== 'rpcResult' && m.type !== 'rpcError') return false;
    const p = this.pending.get(m.id);
    if (!p) return true;
    this.pending.delete(m.id);
    if (m.type === 'rpcResult') p.resolve(m.result);
    else p.reject(new RpcError(m.error.code, m.error.message));
    return true;
  }

  log(level: 'info' | 'warn' | 'error', message: string): void { this.post({ type: 'log', level, message }); }
}
