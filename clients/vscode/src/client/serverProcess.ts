/* Runs `nsys-ai serve` as a child process and keeps a JSON-RPC connection to
 * it over stdio. When the process dies unexpectedly it is restarted, at most
 * `maxRestarts` times within `restartWindowMs`; listeners hear about every
 * restart and about giving up, so the UI can say so. stderr goes to the logger. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type Message, type MessageConnection } from 'vscode-jsonrpc/node';
import { parseExact, stringifyExact } from './exactJson';
import { lastFrame } from './progressFold';
import type { Logger } from './logger';

export interface ServerProcessOptions {
  command: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  logger: Logger;
  maxRestarts?: number;
  restartWindowMs?: number;
}

export type ServerEvent =
  | { type: 'started'; connection: MessageConnection; pid: number | undefined }
  | { type: 'crashed'; code: number | null; signal: string | null; willRestart: boolean; restarts: number };

export class ServerProcess {
  private child: ChildProcess | undefined;
  private conn: MessageConnection | undefined;
  private stopping = false;
  private crashTimes: number[] = [];
  private listeners: Array<(e: ServerEvent) => void> = [];
  private readonly maxRestarts: number;
  private readonly windowMs: number;

  constructor(private readonly opts: ServerProcessOptions) {
    this.maxRestarts = opts.maxRestarts ?? 3;
    this.windowMs = opts.restartWindowMs ?? 3 * 60_000;
  }

  get connection(): MessageConnection | undefined { return this.conn; }
  get pid(): number | undefined { return this.child?.pid; }

  onEvent(fn: (e: ServerEvent) => void): () => void {
    this.listeners.push(fn);
    return () => { this.listeners = this.listeners.filter((l) => l !== fn); };
  }

  start(): MessageConnection {
    this.stopping = false;
    const args = this.opts.args ?? ['serve'];
    this.opts.logger.info(`starting ${this.opts.command} ${args.join(' ')}`);
    const child = spawn(this.opts.command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: this.opts.env ?? process.env });
    this.child = child;
    let stderrBuf = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderrBuf += chunk;
      let nl: number;
      while ((nl = stderrBuf.indexOf('\n')) >= 0) {
        this.opts.logger.info(`[server] ${lastFrame(stderrBuf.slice(0, nl))}`); /* nsys export's progress bars: the last frame */
        stderrBuf = stderrBuf.slice(nl + 1);
      }
    });
    /* integers beyond ±2^53 (epoch clocks) travel as BigInt both ways (client/exactJson) */
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!, { charset: 'utf-8', contentTypeDecoder: EXACT_JSON }),
      new StreamMessageWriter(child.stdin!, { charset: 'utf-8', contentTypeEncoder: EXACT_JSON }));
    conn.onError(([err]) => this.opts.logger.warn(`connection error: ${err.message}`));
    conn.listen();
    this.conn = conn;
    child.on('error', (err) => this.opts.logger.error(`could not run ${this.opts.command}: ${err.message}`));
    child.on('exit', (code, signal) => this.onExit(child, conn, code, signal));
    this.emit({ type: 'started', connection: conn, pid: child.pid });
    return conn;
  }

  private onExit(child: ChildProcess, conn: MessageConnection, code: number | null, signal: string | null): void {
    conn.dispose();
    if (this.child !== child) return;
    this.child = undefined;
    this.conn = undefined;
    if (this.stopping) {
      this.opts.logger.info(`server exited (code ${code})`);
      return;
    }
    const now = Date.now();
    this.crashTimes = this.crashTimes.filter((t) => now - t < this.windowMs);
    this.crashTimes.push(now);
    const willRestart = this.crashTimes.length <= this.maxRestarts;
    this.opts.logger.error(`server died (code ${code}, signal ${signal}); ${willRestart ? 'restarting' : 'giving up after ' + this.maxRestarts + ' restarts'}`);
    this.emit({ type: 'crashed', code, signal, willRestart, restarts: this.crashTimes.length });
    if (willRestart) this.start();
  }

  /** Polite shutdown (shutdown request, exit notification), then a kill after `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    const conn = this.conn;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      if (conn) {
        await Promise.race([conn.sendRequest('shutdown'), delay(graceMs)]);
        await conn.sendNotification('exit');
      }
    } catch {
      /* the server may already be gone */
    }
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private emit(e: ServerEvent): void {
    for (const l of this.listeners) l(e);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The wire's JSON with exact integers (the server prints every int64 exactly). */
const EXACT_JSON = {
  name: 'application/json',
  decode: (buffer: Uint8Array): Promise<Message> => Promise.resolve(parseExact(utf8.decode(buffer)) as Message),
  encode: (msg: Message): Promise<Uint8Array> => Promise.resolve(Buffer.from(stringifyExact(msg), 'utf8')),
};
const utf8 = new TextDecoder('utf-8');
