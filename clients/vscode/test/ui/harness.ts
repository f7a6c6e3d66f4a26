/* The UI-test harness: serves the real webview bundle on 127.0.0.1, stands in
 * for VS Code's postMessage bridge (acquireVsCodeApi → exposeFunction), and
 * forwards to a real `nsys-ai serve` through the same bridge logic the
 * extension uses (client/bridgeCore). */
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
import type { HostToWebview } from '../../src/protocol/messages';
import type { ProfileOpenResult } from '../../src/protocol/types';
import { CLIENT_ROOT } from '../helpers';

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
  close(): Promise<void>;
}

export async function startHarness(bin: string, profilePath: string, size = { width: 1280, height: 800 }): Promise<Harness> {
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const client = new NsysClient({ command: bin, logger, maxRestarts: 0 });
  await client.start();
  const opened = await client.openProfile(profilePath);
  const dist = path.join(CLIENT_ROOT, 'dist');
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') {
      const port = (server.address() as AddressInfo).port;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(renderWebviewHtml({ nonce: makeNonce(), cspSource: `http://127.0.0.1:${port}`, scriptUri: '/webview.js', styleUri: '/webview.css', title: path.basename(profilePath) }));
    } else if (url === '/webview.js' || url === '/webview.css') {
      res.writeHead(200, { 'content-type': url.endsWith('.js') ? 'text/javascript' : 'text/css' });
      res.end(fs.readFileSync(path.join(dist, url.slice(1))));
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
  const post = (m: HostToWebview) => {
    const t0 = performance.now();
    const text = JSON.stringify(m);
    const rec = m.type === 'rpcResult' && typeof m.result === 'object' && m.result ? answered.get(m.result) : undefined;
    void page.evaluate((tx) => (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(JSON.parse(tx), '*'), text)
      .then(() => { if (rec) { rec.postMs = performance.now() - t0; rec.bytes = text.length; } }, () => {});
  };
  const timed = Object.create(client) as NsysClient;
  timed.request = async <R>(method: string, params: unknown, token?: unknown): Promise<R> => {
    const rec = requests.find((r) => r.params === params);
    const t0 = performance.now();
    try {
      const r = await client.request<R>(method, params, token as never);
      if (rec && typeof r === 'object' && r) answered.set(r, rec);
      return r;
    } finally { if (rec) rec.ms = performance.now() - t0; }
  };
  const bridge = createBridge({
    client: async () => timed,
    profile: () => ({ profileId: opened.profileId, title: path.basename(profilePath), info: opened.info }),
    post, logger,
    onRequest: (method, params) => requests.push({ method, params, at: Date.now() }),
  });
  page.on('console', (m) => logs.push(`console.${m.type()} ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror ${e.message}`));
  await page.exposeFunction('__nsysHostPost', (text: string) => bridge.handle(JSON.parse(text)));
  await page.addInitScript(() => {
    const w = globalThis as unknown as { acquireVsCodeApi: () => unknown; __nsysHostPost: (m: string) => void };
    let state: unknown;
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__nsysHostPost(JSON.stringify(m)), getState: () => state, setState: (s: unknown) => { state = s; } });
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  return {
    page, client, opened, requests, logs,
    async close() {
      await context.close();
      server.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
      await client.dispose();
    },
  };
}
