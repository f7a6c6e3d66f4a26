/* The UI-test harness of the views over several profiles (diff, ranks): the
 * real views bundle (dist/views.js) in headless Chromium, and the host side
 * the extension uses (client/viewBridge, client/viewLoad) forwarding to a
 * real `nsys-ai serve`. Messages cross as JSON text over the Chrome DevTools
 * Protocol, as harness.ts's default bridge does. */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { NsysClient } from '../../src/client/nsysClient';
import { collectingLogger } from '../../src/client/logger';
import { createViewBridge } from '../../src/client/viewBridge';
import { renderWebviewHtml, makeNonce } from '../../src/client/webviewHtml';
import type { ViewInit } from '../../src/protocol/viewMessages';
import { CLIENT_ROOT } from '../helpers';
import { CHROMIUM, FLAGS } from './harness';

export interface ViewHarness {
  page: Page;
  client: NsysClient;
  requests: Array<{ method: string; params: Record<string, unknown> }>;
  logs: string[];
  close(): Promise<void>;
}

/** Starts a server, makes the view's data with `init` (viewLoad) and shows it. */
export async function startViewHarness(bin: string, init: (c: NsysClient) => Promise<ViewInit>, size = { width: 1280, height: 800 }): Promise<ViewHarness> {
  const logs: string[] = [];
  const client = new NsysClient({ command: bin, logger: collectingLogger(logs), maxRestarts: 0 });
  await client.start();
  const dist = path.join(CLIENT_ROOT, 'dist');
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(renderWebviewHtml({ nonce: makeNonce(), cspSource: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, scriptUri: '/views.js', styleUri: '/views.css', title: 'view' }));
    } else if (url === '/views.js' || url === '/views.css') {
      res.writeHead(200, { 'content-type': url.endsWith('.js') ? 'text/javascript' : 'text/css' });
      res.end(fs.readFileSync(path.join(dist, url.slice(1))));
    } else { res.writeHead(404); res.end(); }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-view-'));
  const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: size });
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => logs.push(`console.${m.type()} ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror ${e.message}`));
  const requests: ViewHarness['requests'] = [];
  const bridge = createViewBridge({
    client: async () => client, init: () => init(client), logger: collectingLogger(logs),
    post: (e) => void page.evaluate((tx) => (globalThis as unknown as { postMessage(m: unknown, o: string): void }).postMessage(JSON.parse(tx), '*'), JSON.stringify(e)).catch(() => {}),
    onRequest: (method, params) => requests.push({ method, params }),
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Runtime.enable');
  await cdp.send('Runtime.addBinding', { name: '__nsysHostPost' });
  cdp.on('Runtime.bindingCalled', (ev) => { if (ev.name === '__nsysHostPost') void bridge.handle(JSON.parse(ev.payload)); });
  await page.addInitScript(() => {
    const w = globalThis as unknown as { acquireVsCodeApi: () => unknown; __nsysHostPost: (m: string) => void };
    let state: unknown;
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__nsysHostPost(JSON.stringify(m)), getState: () => state, setState: (s: unknown) => { state = s; } });
  });
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return {
    page, client, requests, logs,
    async close() {
      await context.close();
      server.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
      await client.dispose();
    },
  };
}

/** Whether canvas `index` (document order) has a pixel of colour `rgb` (±24 per channel) in the CSS-pixel box [x0, x1] × [y0, y1]. */
export function hasColour(page: Page, index: number, rgb: [number, number, number], box: { x0: number; x1: number; y0: number; y1: number }): Promise<boolean> {
  return page.evaluate(({ index, rgb, box }) => {
    const c = document.querySelectorAll('canvas')[index]!;
    const dpr = window.devicePixelRatio || 1;
    const x0 = Math.max(0, Math.floor(box.x0 * dpr)), y0 = Math.max(0, Math.floor(box.y0 * dpr));
    const w = Math.max(1, Math.min(c.width - x0, Math.ceil((box.x1 - box.x0) * dpr))), hgt = Math.max(1, Math.min(c.height - y0, Math.ceil((box.y1 - box.y0) * dpr)));
    const d = c.getContext('2d')!.getImageData(x0, y0, w, hgt).data;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i]! - rgb[0]) <= 24 && Math.abs(d[i + 1]! - rgb[1]) <= 24 && Math.abs(d[i + 2]! - rgb[2]) <= 24) return true;
    return false;
  }, { index, rgb, box });
}

/** Waits until the next two animation frames have run (a queued draw is done). */
export function frames(page: Page): Promise<void> {
  return page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}
