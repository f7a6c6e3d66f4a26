/* What the end-to-end test (vscode.e2e.test.mjs) and the code-server bench
 * (bench.code-server.mjs) share: code-server with the built .vsix installed,
 * headless Debian chromium on its workbench, and the workbench's own ways in
 * (the command palette, the simple open dialog, the webview frame). */
import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../../../..');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CODE_SERVER = path.join(HERE, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Runs `fn`, failing with `what` if it takes longer than `ms`. */
export function step(what, ms, fn) {
  let timer;
  return Promise.race([
    fn().finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`step timed out after ${ms / 1000} s: ${what}`)), ms); }),
  ]);
}

export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** The user settings of a quiet workbench (no tips, updates, telemetry, AI, git), plus `extra`. */
export function writeSettings(userDir, extra) {
  const settings = {
    ...extra,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'editor.hover.delay': 150,
    'editor.hover.sticky': true,
    'chat.disableAIFeatures': true,
    'git.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  fs.mkdirSync(path.join(userDir, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
}

export function codeServerArgs(tmp, userDir, extDir) {
  return [CODE_SERVER, '--user-data-dir', userDir, '--extensions-dir', extDir, '--config', path.join(tmp, 'config.yaml'),
    '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override'];
}

/** Installs `vsix` into `extDir` with code-server's own --install-extension; returns what it said. */
export function installExtension(args, vsix, env) {
  return execFileSync(process.execPath, [...args, '--install-extension', vsix], { encoding: 'utf8', env, timeout: 120_000 });
}

/** Starts code-server on a free 127.0.0.1 port; resolves once it listens. `onLog` sees its output. */
export async function startCodeServer(args, ws, env, onLog) {
  const port = await freePort();
  const proc = spawn(process.execPath, [...args, '--bind-addr', `127.0.0.1:${port}`, '--ignore-last-opened', ws],
    { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  await step('code-server starts listening', 60_000, () => new Promise((resolve, reject) => {
    const onData = (d) => {
      log += d.toString();
      onLog?.(d.toString());
      if (/HTTP server listening on/.test(log)) resolve();
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${log}`)));
  }));
  return { proc, port };
}

/** Headless chromium with a fresh profile in `dir` (Playwright passes it as --user-data-dir). */
export async function launchChromium(dir, viewport = { width: 1400, height: 900 }) {
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport });
  return { context, page: context.pages()[0] ?? await context.newPage() };
}

/** Runs `text` from the command palette (F1), retrying while the extension's commands register. */
export async function commandPalette(page, text) {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: text }).first();
  for (let i = 0; ; i++) {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(`>${text}`);
    try { await row.waitFor({ timeout: 5_000 }); break; } catch (e) {
      if (i >= 2) throw e;
      await page.keyboard.press('Escape');
    }
  }
  await page.keyboard.press('Enter');
}

/** The webview frame holding `selector` (code-server nests it: iframe.webview > iframe#active-frame). */
export async function webviewFrame(page, selector, timeoutMs, pollMs = 250) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    for (const f of page.frames()) {
      const hit = await f.$(selector).catch(() => null);
      if (hit) return f;
    }
    await page.waitForTimeout(pollMs);
  }
  throw new Error(`no webview frame with ${selector}`);
}
