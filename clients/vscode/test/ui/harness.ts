/* The UI-test harness: serves the real webview bundle on 127.0.0.1, stands in
 * for VS Code's postMessage bridge, and forwards to a real `nsys-ai serve`
 * through the same bridge logic the extension uses (client/bridgeCore).
 * The stand-in carries JSON text as VS Code does (its webview messages are
 * JSON-serialized between the extension host and the renderer). By default
 * (`bridgeKind: 'cdp'`) it goes over the Chrome DevTools Protocol: the page's
 * acquireVsCodeApi().postMessage calls a one-way CDP binding, and the host's
 * messages are parsed in the page (playwright evaluate) and delivered with
 * window.postMessage. `bridgeKind: 'http'` instead POSTs to this server and
 * streams back over Server-Sent Events (slower per message: Chromium's
 * network process is in the path). */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createBridge } from '../../src/client/bridgeCore';
import { NsysClient } from '../../src/client/nsysClient';
import { collectingLogger } from '../../src/client/logger';
import { renderWebviewHtml, makeNonce } from '../../src/client/webviewHtml';
import { fromEnvelope, toEnvelope, type Envelope, type HostToWebview, type WebviewToHost } from '../../src/protocol/messages';
import type { ProfileOpenResult } from '../../src/protocol/types';
import { before, after } from 'node:test';
import { CLIENT_ROOT, serverBinary, smallProfile, NO_SERVER, NO_PROFILE } from '../helpers';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Harness {
  page: Page;
  client: NsysClient;
  opened: ProfileOpenResult;
  /** Every forwarded request: when, server + stdio time (ms), then the post of its answer to the page (postMs: JSON text over CDP), its size. */
  requests: Array<{ method: string; params: Record<string, unknown>; at: number; ms?: number; postMs?: number; bytes?: number }>;
  logs: string[];
  /** Every message the host posted to the page: its type, the request id it answers (`rpcResult` / `rpcError`), its text's length. */
  posted: Array<{ type: string; ids: number[]; bytes: number }>;
  /** Every message the page posted to the host: its type, the ids of the requests it carries (`rpc`: one; `batch`: each). */
  received: Array<{ type: string; ids: number[] }>;
  /** Posts a message to the webview as the extension host does (e.g. a reveal). */
  post(m: HostToWebview): void;
  /** How many times the bridge was told the page drew its first frame (BridgeContext.onFirstFrame). */
  firstFrames: () => number;
  /** Holds the answers of `method` (the page waits) until the returned function is called. */
  hold(method: string): () => void;
  /** Opens another profile on the same server and reloads the page on it (the same browser; the records restart). */
  reopen(profilePath: string): Promise<void>;
  close(): Promise<void>;
}

/** How the bridge stand-in reaches the page: see the file's comment. */
export type BridgeKind = 'cdp' | 'http' | 'mixed';

/** A test file's harness on the small generated profile: started before its
 * tests (call at the file's top level), closed after them. `skip` says why
 * its tests cannot run (no Chromium, no server, no profile). */
export function harnessPerFile(size?: { width: number; height: number }): { readonly hx: Harness | undefined; readonly skip: string | false } {
  const bin = serverBinary();
  let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
  let hx: Harness | undefined;
  before(async () => {
    if (skip) return;
    const profile = smallProfile();
    if (!profile) { skip = NO_PROFILE; return; }
    hx = await startHarness(bin!, profile, size);
  });
  after(async () => { await hx?.close(); });
  return { get hx() { return hx; }, get skip() { return skip; } };
}

export async function startHarness(bin: string, profilePath: string, size = { width: 1280, height: 800 }, bridgeKind: BridgeKind = 'cdp'): Promise<Harness> {
  const sseIn = bridgeKind !== 'cdp', bindingOut = bridgeKind !== 'http';
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const client = new NsysClient({ command: bin, logger, maxRestarts: 0 });
  await client.start();
  let opened = await client.openProfile(profilePath);
  const dist = path.join(CLIENT_ROOT, 'dist');
  let handle: (m: unknown) => Promise<void> = async () => {};
  /* host → page: one event stream (the latest page's), messages queued until it is open */
  let stream: http.ServerResponse | undefined;
  const queued: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') {
      const port = (server.address() as AddressInfo).port;
      res.writeHead(200, { 'content-type': 'text/html' });
      /* the bridge stand-in's own connection; VS Code's postMessage is not subject to the page's CSP */
      /* inlined as the extension does (ext/profileEditor) */
      const inline = { script: fs.readFileSync(path.join(dist, 'webview.js'), 'utf8'), style: fs.readFileSync(path.join(dist, 'webview.css'), 'utf8') };
      res.end(renderWebviewHtml({ nonce: makeNonce(), cspSource: `http://127.0.0.1:${port}`, inline, title: path.basename(profilePath) })
        .replace("default-src 'none'", `default-src 'none'; connect-src http://127.0.0.1:${port}`));
    } else if (url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.flushHeaders();
      stream?.end();
      stream = res;
      req.on('close', () => { if (stream === res) stream = undefined; });
      for (const text of queued.splice(0)) res.write(`data: ${text}\n\n`);
    } else if (url === '/post' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { res.writeHead(204); res.end(); void handle(JSON.parse(Buffer.concat(chunks).toString('utf8'))); });
    } else if (url === '/webview.js' || url === '/webview.css') {
      res.writeHead(200, { 'content-type': url.endsWith('.js') ? 'text/javascript' : 'text/css' });
      res.end(fs.readFileSync(path.join(dist, url.slice(1))));
    } else if (url === '/favicon.ico') {
      res.writeHead(204); res.end(); /* VS Code's webviews ask none; Chromium's console would log a 404 */
    } else {
      res.writeHead(404); res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-ui-'));
  const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: size,
  });
  const page = context.pages()[0] ?? await context.newPage();
  const requests: Harness['requests'] = [];
  /* JSON text crosses the CDP boundary much faster than a structured object */
  const answered = new WeakMap<object, Harness['requests'][number]>();
  const posted: Harness['posted'] = [];
  const post = (e: Envelope, m: HostToWebview) => {
    const t0 = performance.now();
    const text = JSON.stringify(e);
    const rec = m.type === 'rpcResult' && typeof m.result === 'object' && m.result ? answered.get(m.result) : undefined;
    if (rec) rec.bytes = text.length;
    posted.push({ type: m.type, ids: m.type === 'rpcResult' || m.type === 'rpcError' ? [m.id] : [], bytes: text.length });
    const done = () => { if (rec) rec.postMs = performance.now() - t0; };
    if (sseIn) {
      if (stream) stream.write(`data: ${text}\n\n`); else queued.push(text);
      done();
      return;
    }
    void page.evaluate((tx) => (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(JSON.parse(tx), '*'), text)
      .then(done, () => {});
  };
  const timed = Object.create(client) as NsysClient;
  const held = new Map<string, Promise<void>>();
  let firstFrames = 0;
  timed.requestUntyped = async <R>(method: string, params: unknown, opts?: unknown): Promise<R> => {
    const rec = requests.find((r) => r.params === params);
    const t0 = performance.now();
    try {
      const r = await client.requestUntyped<R>(method, params, opts as never);
      await held.get(method);
      if (rec && typeof r === 'object' && r) answered.set(r, rec);
      return r;
    } finally { if (rec) rec.ms = performance.now() - t0; }
  };
  const bridge = createBridge({
    client: async () => timed,
    profile: () => ({ profileId: opened.profileId, title: path.basename(profilePath), info: opened.info }),
    post, logger,
    onRequest: (method, params) => requests.push({ method, params, at: Date.now() }),
    onFirstFrame: () => { firstFrames++; },
  });
  page.on('console', (m) => logs.push(`console.${m.type()} ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror ${e.message}`));
  const received: Harness['received'] = [];
  handle = (raw) => {
    const m = fromEnvelope(raw) as WebviewToHost;
    const each = m?.type === 'batch' ? m.messages : [m];
    received.push({ type: m?.type, ids: each.flatMap((x) => (x?.type === 'rpc' ? [x.id] : [])) });
    return bridge.handle(raw);
  };
  if (bindingOut) {
    /* a raw one-way binding (exposeFunction would add a CDP round trip per message to return a value) */
    const cdp = await context.newCDPSession(page);
    await cdp.send('Runtime.enable');
    await cdp.send('Runtime.addBinding', { name: '__nsysHostPost' });
    cdp.on('Runtime.bindingCalled', (ev) => { if (ev.name === '__nsysHostPost') void handle(JSON.parse(ev.payload)); });
  }
  await page.addInitScript((kind: { sseIn: boolean; bindingOut: boolean }) => {
    const w = globalThis as unknown as { acquireVsCodeApi: () => unknown; __nsysHostPost: (m: string) => void; postMessage(m: unknown, o: string): void };
    let state: unknown;
    if (kind.sseIn) new EventSource('/events').onmessage = (ev: MessageEvent<string>) => w.postMessage(JSON.parse(ev.data), '*');
    const out = kind.bindingOut ? (text: string) => w.__nsysHostPost(text) : (text: string) => { void fetch('/post', { method: 'POST', body: text, keepalive: true }); };
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => out(JSON.stringify(m)), getState: () => state, setState: (s: unknown) => { state = s; } });
  }, { sseIn, bindingOut });
  await page.goto(`http://127.0.0.1:${port}/`);
  const hx: Harness = {
    page, client, opened, requests, logs, posted, received,
    post: (m) => post(toEnvelope(m), m),
    firstFrames: () => firstFrames,
    hold(method) {
      let release = () => {};
      held.set(method, new Promise<void>((r) => { release = r; }));
      return () => { held.delete(method); release(); };
    },
    async reopen(next) {
      opened = hx.opened = await client.openProfile(next);
      profilePath = next;
      for (const a of [requests, logs, posted, received] as unknown[][]) a.length = 0;
      firstFrames = 0;
      await page.goto(`http://127.0.0.1:${port}/`);
    },
    async close() {
      stream?.end();
      await context.close();
      server.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
      await client.dispose();
    },
  };
  return hx;
}
