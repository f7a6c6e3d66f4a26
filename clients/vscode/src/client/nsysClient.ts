/* Typed requests to nsys-ai serve. Every method maps to one protocol method;
 * progress ($/progress) and cancellation ($/cancelRequest) are plumbed through
 * vscode-jsonrpc. After a server restart the client re-initializes and reopens
 * the profiles it had open, reporting old → new profile ids. */
import { CancellationTokenSource, ProgressType, ResponseError, type CancellationToken, type MessageConnection } from 'vscode-jsonrpc/node';
import type { Logger } from './logger';
import { ServerProcess, type ServerProcessOptions } from './serverProcess';
import type * as P from '../protocol/types';
import { ErrorCode, Method, type ParamsOf, type RequestName, type ResultOf } from '../protocol/methods';
import type { AnalysisRunParams } from '../protocol/generated/analysis.run.params';
import type { NvtxTreeParams } from '../protocol/generated/nvtx.tree.params';

export type { CancellationToken };
export { CancellationTokenSource, ResponseError };

const workDone = new ProgressType<P.WorkDoneProgress>();
let nextToken = 1;

export interface OpenOptions {
  onProgress?: (p: P.WorkDoneProgress) => void;
  token?: CancellationToken;
}

/** Methods a webview may call through the host's bridge (read-only ones). */
export const WEBVIEW_METHODS: ReadonlySet<string> = new Set([
  'timeline/tracks', 'timeline/range', 'nvtx/tree', 'kernel/details', 'kernel/explain',
  'analysis/run', 'analysis/list', 'report/generate', 'search', 'profile/info',
]);

export class NsysClient {
  readonly server: ServerProcess;
  private ready: Promise<P.InitializeResult> | undefined;
  private open = new Map<string, string>(); /* profileId -> path */
  private reopenListeners: Array<(ids: Map<string, string>) => void> = [];
  private initResult: P.InitializeResult | undefined;

  constructor(opts: ServerProcessOptions, private readonly logger: Logger = opts.logger) {
    this.server = new ServerProcess(opts);
    let restarting = false;
    this.server.onEvent((e) => {
      if (e.type === 'crashed') {
        restarting = e.willRestart;
        if (!e.willRestart) this.ready = undefined; /* a later start() begins afresh */
      } else if (restarting) {
        restarting = false;
        this.afterRestart().catch((err) => this.logger.error(`re-initialize after restart failed: ${String(err)}`));
      }
    });
  }

  /** Starts the server (once) and answers `initialize`. */
  start(): Promise<P.InitializeResult> {
    if (!this.ready) {
      this.server.start();
      this.ready = this.initialize();
    }
    return this.ready;
  }

  get capabilities(): string[] { return this.initResult?.capabilities.methods ?? []; }

  private async initialize(): Promise<P.InitializeResult> {
    const conn = this.conn();
    const res = await conn.sendRequest<P.InitializeResult>('initialize', { processId: process.pid, clientInfo: { name: 'nsys-ai-vscode' }, capabilities: {} });
    await conn.sendNotification('initialized', {});
    this.initResult = res;
    this.logger.info(`server ${res.serverInfo?.name} ${res.serverInfo?.version ?? ''}: ${res.capabilities?.methods?.length ?? 0} methods`);
    return res;
  }

  private async afterRestart(): Promise<void> {
    this.ready = this.initialize();
    await this.ready;
    const remap = new Map<string, string>();
    const old = [...this.open];
    this.open.clear();
    for (const [oldId, path] of old) {
      try {
        const r = await this.openProfile(path);
        remap.set(oldId, r.profileId);
      } catch (e) {
        this.logger.error(`could not reopen ${path} after restart: ${String(e)}`);
      }
    }
    for (const l of this.reopenListeners) l(remap);
  }

  onProfilesReopened(fn: (ids: Map<string, string>) => void): void { this.reopenListeners.push(fn); }

  private conn(): MessageConnection {
    const c = this.server.connection;
    if (!c) throw new Error('nsys-ai server is not running');
    return c;
  }

  /** A protocol request, its params and result typed by the generated method
   * map (src/protocol/methods.ts, from protocol/methods.json and the schemas). */
  request<M extends RequestName>(method: M, params: ParamsOf<M>, token?: CancellationToken): Promise<ResultOf<M>> {
    return this.requestUntyped<ResultOf<M>>(method, params, { token });
  }

  /** The same with work-done progress ($/progress under a fresh token) and cancellation. */
  requestWithProgress<M extends RequestName>(method: M, params: Omit<ParamsOf<M>, 'workDoneToken'>,
    opts: OpenOptions = {}): Promise<ResultOf<M>> {
    return this.requestUntyped<ResultOf<M>>(method, params, { ...opts, onProgress: opts.onProgress ?? (() => {}) });
  }

  /** Any method by name, unchecked: for the webview bridge (it forwards what a
   * webview asked for, after checking the name against WEBVIEW_METHODS) and for
   * tests of methods outside the map (test/*, unknown names). With
   * opts.onProgress, asks for work-done progress under a fresh token. */
  async requestUntyped<R = unknown>(method: string, params: unknown, opts: OpenOptions = {}): Promise<R> {
    await this.start();
    const conn = this.conn();
    const send = (p: unknown) => opts.token ? conn.sendRequest<R>(method, p, opts.token) : conn.sendRequest<R>(method, p);
    if (!opts.onProgress) return send(params);
    const workDoneToken = `nsys-ai-${nextToken++}`;
    const sub = conn.onProgress(workDone, workDoneToken, opts.onProgress);
    try {
      return await send({ ...(params as Record<string, unknown>), workDoneToken });
    } finally {
      sub.dispose();
    }
  }

  async openProfile(path: string, opts: OpenOptions = {}): Promise<P.ProfileOpenResult> {
    const res = await this.requestWithProgress('profile/open', { path }, opts);
    this.open.set(res.profileId, path);
    return res;
  }

  async closeProfile(profileId: string): Promise<void> {
    this.open.delete(profileId);
    await this.request('profile/close', { profileId });
  }

  tracks(profileId: string): Promise<P.TimelineTracksResult> {
    return this.request('timeline/tracks', { profileId });
  }
  range(params: P.RangeParams & { format: 'columns' }, token?: CancellationToken): Promise<P.RangeReply>;
  range(params: P.RangeParams, token?: CancellationToken): Promise<P.RangeResult>;
  range(params: P.RangeParams, token?: CancellationToken): Promise<P.RangeResult | P.RangeReply> {
    /* columns: those `fields` lists, as they come (client/tileColumns decodes them for the timeline) */
    return this.request('timeline/range', params, token) as Promise<P.RangeResult | P.RangeReply>;
  }
  nvtxTree(profileId: string, extra: Omit<NvtxTreeParams, 'profileId'> = {}): Promise<P.NvtxTreeResult> {
    return this.request('nvtx/tree', { profileId, ...extra });
  }
  kernelDetails(profileId: string, kernelId: number): Promise<P.KernelDetails> {
    return this.request('kernel/details', { profileId, kernelId });
  }
  explain(profileId: string, what: { name: string } | { kernelId: number }): Promise<P.KernelExplain> {
    return this.request('kernel/explain', { profileId, ...what });
  }
  topKernels(profileId: string, params: AnalysisRunParams['params'] = {}): Promise<P.TopKernelsResult> {
    /* top_kernels' rows are its branch of the schema (TopKernelsRow) */
    return this.request('analysis/run', { profileId, name: 'top_kernels', params }) as Promise<P.TopKernelsResult>;
  }
  report(profileId: string): Promise<P.ReportResult> {
    return this.request(Method.ReportGenerate, { profileId });
  }
  /** `line` is 1-based. */
  kernelsAt(profileId: string, file: string, line: number, workspaceRoot?: string, token?: CancellationToken): Promise<P.KernelsAtResult> {
    return this.request('source/kernelsAt', { profileId, file, line, ...(workspaceRoot ? { workspaceRoot } : {}) }, token);
  }
  /** Every candidate location of a kernel, ranked, each with its evidence. */
  locate(profileId: string, name: string, workspaceRoot?: string, token?: CancellationToken): Promise<P.LocateResult> {
    return this.request('source/locate', { profileId, name, ...(workspaceRoot ? { workspaceRoot } : {}) }, token);
  }
  sourceMap(profileId: string, workspaceRoot: string): Promise<P.SourceMapResult> {
    return this.request('source/map', { profileId, workspaceRoot });
  }
  annotate(params: P.AnnotateParams): Promise<P.AnnotateResult> {
    return this.request('source/annotate', params);
  }
  unannotate(params: P.UnannotateParams): Promise<P.UnannotateResult> {
    return this.request('source/unannotate', params);
  }

  async dispose(): Promise<void> {
    await this.server.stop();
    this.ready = undefined;
  }
}

export function isMethodNotFound(e: unknown): boolean {
  return e instanceof ResponseError && e.code === ErrorCode.MethodNotFound;
}
