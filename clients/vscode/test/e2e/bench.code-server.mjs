/* The timeline's speed in real code-server (a benchmark, not a test: CI does not run it).
 *
 *   npm run bench:code-server -- [--profile P1M] [--big P10M] [--opens N] [--cold N]
 *                                [--baseline-vsix OLD.vsix] [--no-big] [--json FILE] [--only select,area]
 *
 * code-server with the built .vsix, headless Debian chromium on its workbench
 * (codeServer.mjs, as the e2e test). Every time is taken on one clock: the
 * epoch in milliseconds, performance.timeOrigin + an event's timeStamp or
 * performance.now() in each frame (the workbench page, VS Code's webview host
 * frame, our page inside it), Date.now() in the extension host.
 *
 * First frame (P1M, default /tmp/nsys-ai-bench/default-1000000-s1.sqlite):
 * "nsys-ai: Open Profile" from the command palette, the path typed in the open
 * dialog; from the dialog's Enter (keydown) to the end of the first complete
 * frame drawn in the webview (every visible row from exact-resolution tiles),
 * the editor closed between opens. Cached: the server's index cache is the
 * user's (NSYS_AI_CACHE_DIR, else $XDG_CACHE_HOME/nsys-ai, else ~/.cache/nsys-ai).
 * Cold: another code-server whose NSYS_AI_CACHE_DIR is emptied before each open
 * (the file itself stays in the OS page cache). Each session's first open is a
 * warm-up, not counted: it also pays the extension's activation and VS Code
 * installing its webview service worker (seconds).
 * Each open is split into: VS Code creating the webview (Enter → its host frame
 * navigates), the host frame making our page (→ our document navigates), our
 * page loading (→ our bundle runs: HTML, CSS and JS through VS Code's service
 * worker, parse), the extension host (→ init arrives: the profile open, held
 * page messages, timeline/tracks), and init → first complete frame
 * (timeline/range round trips, drawing). The extension host logs when its
 * profile/open started and ended (the nsys-ai output channel).
 *
 * Interactions (P10M, default /tmp/nsys-ai-bench/default-10000000-s1.sqlite, its
 * index cached): pan (drag, keys), zoom (Ctrl+wheel, +/-), expand (a group's
 * label clicked), hover (mousemove → tooltip with kernel/details), select (a
 * kernel clicked → Details filled with details + explanation; → the launch flow
 * drawn), area selection (a drag on the axis → the range drawn; → its analyses
 * in the Range tab), each from the input event's timeStamp in the webview.
 * Pan/zoom/expand: "→ frame" is the first frame drawn after the input (what
 * tiles are cached, coarser ones under missing ones), "→ complete" the first
 * frame drawn entirely from exact tiles. Discrete inputs are spaced so that
 * each is shown before the next.
 *
 * Floor (unless --no-floor): VS Code's own cost, measured beside ours in every
 * first-frame session. A test-only extension (floor/: built here with vsce)
 * whose custom editor's webview is a static page with an inline script that
 * posts `ready`, answered with `init` at once, is opened the same way (its
 * command, the same path in the open dialog, vscode.openWith) after each of
 * our opens: Enter → its host frame navigates → its page navigates → its
 * script runs → `init` arrives. Nothing of nsys-ai runs in it.
 *
 * --baseline-vsix runs the first-frame opens with an older package too, in the
 * same run (sessions alternate), so before/after are read side by side.
 * Prints one table and the JSON (also written to --json, default
 * test-results/bench-code-server.json), with the load average (uptime). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { HERE, REPO, CHROMIUM, CODE_SERVER, step, writeSettings, codeServerArgs, installExtension, startCodeServer,
  launchChromium, commandPalette, webviewFrame } from './codeServer.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt; };
const BIN = path.resolve(process.env.NSYS_AI_BIN ?? path.join(REPO, 'build', 'nsys-ai'));
const VSIX = path.resolve(process.env.NSYS_AI_VSIX ?? path.join(REPO, 'clients', 'vscode', 'nsys-ai.vsix'));
const BASELINE = arg('--baseline-vsix', '') && path.resolve(arg('--baseline-vsix', ''));
const P1M = path.resolve(arg('--profile', '/tmp/nsys-ai-bench/default-1000000-s1.sqlite'));
const P10M = path.resolve(arg('--big', '/tmp/nsys-ai-bench/default-10000000-s1.sqlite'));
const OPENS = Number(arg('--opens', '5'));
const COLD = Number(arg('--cold', '3'));
const BIG = !process.argv.includes('--no-big');
const FLOOR = !process.argv.includes('--no-floor');
/** --only select,area: the interactions whose names contain one of these words (the others skipped; a shorter run). */
const ONLY = arg('--only', '').split(',').filter(Boolean);
const wants = (name) => !ONLY.length || ONLY.some((w) => name.includes(w));
const OUT = path.resolve(arg('--json', path.join(HERE, 'test-results', 'bench-code-server.json')));
const USER_CACHE = process.env.NSYS_AI_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'nsys-ai');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const [p, what] of [[BIN, 'the server (ninja -C build)'], [VSIX, 'the .vsix (cd clients/vscode && npm run package)'],
  [CHROMIUM, 'chromium'], [CODE_SERVER, 'code-server (./bench.sh installs it)'], [P1M, 'the 1M-kernel profile (bench/README.md)'],
  ...(BIG ? [[P10M, 'the 10M-kernel profile (bench/README.md), or --no-big']] : []), ...(BASELINE ? [[BASELINE, '--baseline-vsix']] : [])]) {
  if (!fs.existsSync(p)) { console.error(`${p} is missing: ${what}`); process.exit(2); }
}

function stats(a) {
  const s = a.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  const at = (p) => (s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] : NaN);
  const r = (x) => Math.round(x * 10) / 10;
  return { n: s.length, p50: r(at(0.5)), p90: r(at(0.9)), max: r(s.length ? s[s.length - 1] : NaN) };
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-bench-cs-'));

/** The floor extension (floor/) packaged into tmpRoot with the client's vsce. */
function floorVsix() {
  const src = path.join(tmpRoot, 'floor-src'), out = path.join(tmpRoot, 'floor.vsix');
  fs.cpSync(path.join(HERE, 'floor'), src, { recursive: true });
  execFileSync(process.execPath, [path.join(REPO, 'clients', 'vscode', 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '--no-dependencies',
    '--allow-missing-repository', '--skip-license', '-o', out], { cwd: src, stdio: 'ignore' });
  return out;
}
const FLOOR_VSIX = FLOOR ? floorVsix() : undefined;

/** A code-server with `vsix` installed and the server's index cache in `cacheDir`, chromium on its workbench. */
async function session(name, vsix, cacheDir, fn) {
  const tmp = path.join(tmpRoot, name);
  const ws = path.join(tmp, 'ws'), userDir = path.join(tmp, 'user'), extDir = path.join(tmp, 'extensions');
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, 'README.txt'), 'nsys-ai code-server bench\n');
  writeSettings(userDir, { 'nsys-ai.serverPath': BIN, 'workbench.editor.enablePreview': false });
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'), XDG_DATA_HOME: path.join(tmp, 'xdg-data'), NSYS_AI_CACHE_DIR: cacheDir };
  const args = codeServerArgs(tmp, userDir, extDir);
  installExtension(args, vsix, env);
  if (FLOOR_VSIX) installExtension(args, FLOOR_VSIX, env);
  const cs = await startCodeServer(args, ws, env);
  const { context, page } = await launchChromium(path.join(tmp, 'chromium'));
  page.on('crash', () => console.error('   the workbench page crashed'));
  context.on('close', () => console.error('   chromium closed'));
  try {
    await step('the workbench loads', 90_000, async () => {
      await page.goto(`http://127.0.0.1:${cs.port}/?folder=${encodeURIComponent(ws)}`, { timeout: 60_000 });
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await page.locator('.activitybar [aria-label*="nsys-ai"]').first().waitFor({ timeout: 60_000 });
    });
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } });
    await fn({ page, userDir });
  } catch (e) {
    await page.screenshot({ path: path.join(path.dirname(OUT), `bench-failure-${name}.png`) }).catch(() => {});
    throw e;
  } finally {
    await context.close().catch(() => {});
    cs.proc.kill('SIGTERM');
  }
}

/** The extension host's last "opened NAME in N ms (…: T0 → T1)" line (epoch ms). */
function hostOpen(userDir, name) {
  let best;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/nsys-ai/i.test(e.name)) {
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/opened (\S+) in \d+ ms \([^:]*: (\d+) → (\d+)\)/g)) {
          if (m[1] === name && (!best || Number(m[2]) > best.start)) best = { start: Number(m[2]), end: Number(m[3]) };
        }
      }
    }
  };
  try { walk(path.join(userDir, 'logs')); } catch { /* no logs yet */ }
  return best;
}

/** The floor's page: opened like a profile, by the floor extension's command; done when `init` arrived. */
const FLOOR_OPEN = { command: 'nsys-ai bench: Open Floor Page', done: 'body[data-floor="init"]' };

/** Opens `file` the way a user does, times it, and closes the editor; returns the open's phases (ms after Enter).
 * `floor`: with the floor extension instead (FLOOR_OPEN). */
async function timedOpen({ page, userDir }, file, timeoutMs, floor = false) {
  const name = path.basename(file);
  const before = new Set(page.frames());
  await page.evaluate(() => {
    window.__benchEnter = undefined;
    if (!window.__benchHooked) {
      window.__benchHooked = true;
      window.addEventListener('keydown', (e) => { if (e.key === 'Enter') window.__benchEnter = performance.timeOrigin + e.timeStamp; }, true);
    }
  });
  const command = floor ? FLOOR_OPEN.command : 'nsys-ai: Open Profile';
  await step(`run "${command}"`, 30_000, () => commandPalette(page, command));
  await step(`type ${file} in the open dialog`, 45_000, async () => {
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 20_000 });
    for (let i = 0; ; i++) {
      await input.fill(file);
      await page.waitForTimeout(300);
      if (await input.inputValue() === file) {
        await page.keyboard.press('Enter');
        try { await input.waitFor({ state: 'hidden', timeout: 5_000 }); return; } catch (e) { if (i >= 4) throw e; }
      } else if (i >= 4) throw new Error(`the open dialog shows ${await input.inputValue()}, not ${file}`);
    }
  });
  const enter = await page.evaluate(() => window.__benchEnter);
  const doneSel = floor ? FLOOR_OPEN.done : '.timeline[data-rendered="true"]';
  const frame = await step(floor ? 'the floor page has init' : 'the first complete frame', timeoutMs, async () => {
    for (const until = Date.now() + timeoutMs; Date.now() < until; await page.waitForTimeout(50)) {
      for (const f of page.frames()) {
        if (before.has(f)) continue;
        if (await f.$(doneSel).catch(() => null)) return f;
      }
    }
    throw new Error(`no new webview frame with ${doneSel}`);
  });
  const r = (t) => (t === undefined ? null : Math.round((t - enter) * 10) / 10);
  const hostNavOf = async () => { const hf = frame.parentFrame(); return hf ? hf.evaluate(() => performance.timeOrigin).catch(() => undefined) : undefined; };
  if (floor) {
    const f = await frame.evaluate(() => ({ navStart: performance.timeOrigin, scriptAt: performance.timeOrigin + window.__floor.scriptAt, initAt: performance.timeOrigin + window.__floor.initAt }));
    return { frame, phases: { webviewHostNav: r(await hostNavOf()), pageNav: r(f.navStart), bundleRuns: r(f.scriptAt), init: r(f.initAt) } };
  }
  const inner = await frame.evaluate(() => {
    const p = window.__nsysPerf, o = performance.timeOrigin;
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource').filter((e) => /webview\.(js|css)/.test(e.name))
      .map((e) => ({ name: e.name.replace(/[?#].*$/, '').split('/').pop(), start: o + e.startTime, end: o + e.responseEnd, bytes: e.encodedBodySize || e.decodedBodySize }));
    const initAt = o + p.openedAt, frameAt = initAt + p.firstFrameMs;
    const ranges = (p.rpcTimings ?? []).filter((x) => x.method === 'timeline/range' && o + x.sent <= frameAt);
    return {
      navStart: o, htmlEnd: nav ? o + nav.responseEnd : undefined, scriptAt: p.scriptAt === undefined ? undefined : o + p.scriptAt,
      initAt, frameAt, firstDrawMs: p.firstFrameDrawMs, resources: res,
      ranges: ranges.map((x) => ({ sent: o + x.sent, settled: x.settled === undefined ? undefined : o + x.settled })),
    };
  });
  const hostNav = await hostNavOf();
  const host = hostOpen(userDir, name);
  const lastRange = inner.ranges.reduce((a, x) => Math.max(a, x.settled ?? 0), 0);
  return {
    frame,
    phases: {
      webviewHostNav: r(hostNav), pageNav: r(inner.navStart), pageHtml: r(inner.htmlEnd), bundleRuns: r(inner.scriptAt), init: r(inner.initAt),
      firstRangeSent: r(inner.ranges[0]?.sent), lastRangeSettled: lastRange ? r(lastRange) : null, firstFrame: r(inner.frameAt),
      firstFrameDrawMs: inner.firstDrawMs === undefined ? null : Math.round(inner.firstDrawMs * 10) / 10, rangeRequests: inner.ranges.length,
      hostOpenStart: host ? r(host.start) : null, hostOpenEnd: host ? r(host.end) : null,
      resources: inner.resources.map((x) => ({ name: x.name, start: r(x.start), end: r(x.end), bytes: x.bytes })),
    },
  };
}

async function closeEditors(page, frame) {
  /* the command palette can miss F1 while focus is still in the webview (seen under load): retried */
  for (let i = 0; ; i++) {
    await page.locator('.tabs-container .tab.active').first().click().catch(() => {});
    try { await commandPalette(page, 'View: Close All Editors'); break; } catch (e) {
      if (i >= 2) throw e;
      await page.keyboard.press('Escape').catch(() => {});
      await page.locator('.monaco-workbench .part.sidebar').first().click({ position: { x: 50, y: 300 } }).catch(() => {});
    }
  }
  for (const until = Date.now() + 20_000; !frame.isDetached() && Date.now() < until;) await sleep(100);
  await sleep(3000); /* the document is disposed, the server closes the profile, what the open started settles */
}

/** `n` timed opens of `file` (after `warm` untimed ones); `beforeEach` runs before each. With `floor`,
 * each open of ours is followed by one of the floor's page (FLOOR_OPEN), returned as `floor`. */
async function opens(s, file, n, warm, beforeEach = () => {}, floor = false) {
  const out = [], floors = [];
  for (let i = 0; i < warm + n; i++) {
    beforeEach();
    const { frame, phases } = await timedOpen(s, file, 300_000);
    if (i >= warm) out.push(phases);
    console.log(`   ${i < warm ? 'warm-up' : 'open'} ${i + 1}: first frame ${phases.firstFrame} ms after Enter (init ${phases.init}, bundle runs ${phases.bundleRuns})`);
    await closeEditors(s.page, frame);
    if (!floor) continue;
    const f = await timedOpen(s, file, 60_000, true);
    if (i >= warm) floors.push(f.phases);
    console.log(`   ${i < warm ? 'warm-up' : 'open'} ${i + 1}: floor page's init ${f.phases.init} ms after Enter (its script runs ${f.phases.bundleRuns})`);
    await closeEditors(s.page, f.frame);
  }
  return floor ? { ours: out, floor: floors } : out;
}

/* ---------- interactions at 10M ---------- */

/** Arms the webview to time what follows the next `eventType` (its timeStamp): each of `names` is a
 * condition on what the page shows, checked after every DOM change and every frame (those
 * marked "drawn" only after a frame); `armed` returns ms from the event to each. `id`: the kernel
 * a click selects. (Conditions live here, not as strings: the webview's CSP forbids eval.) */
async function arm(frame, eventType, names, id) {
  await frame.evaluate(({ eventType, names, id }) => {
    const tl = () => document.querySelector('.timeline'), details = () => document.querySelector('.details');
    const flowHas = () => { try { return JSON.parse(tl().dataset.flow || 'null')?.ops?.some((o) => o.id === id) ?? false; } catch { return false; } };
    const all = {
      shown: () => details()?.dataset.kernelId === String(id),
      details: () => details()?.dataset.kernelId === String(id) && !!details().querySelector(':scope > table.kv tr'),
      explained: () => details()?.dataset.kernelId === String(id) && details().querySelector('.explain')?.dataset.loaded === 'true',
      flow: (drawn) => drawn && flowHas(),
      range: (drawn) => drawn && !!tl().dataset.range,
      stats: () => document.querySelector('.range-panel')?.dataset.loaded === 'true',
      frame: (drawn) => drawn,
    };
    const b = window.__bench = { at: undefined, done: {}, id0: (window.__nsysPerf.rpcTimings ?? []).reduce((a, x) => Math.max(a, x.id ?? 0), 0) };
    const check = (drawn) => {
      if (b.at === undefined) return;
      for (const k of names) if (b.done[k] === undefined && all[k](drawn)) b.done[k] = performance.now() - b.at;
    };
    window.addEventListener(eventType, (e) => { b.at = e.timeStamp; }, { capture: true, once: true });
    b.obs = new MutationObserver(() => check(false));
    b.obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    window.__nsysPerf.onFrame = () => check(true);
  }, { eventType, names, id });
}

async function armed(frame, names, timeoutMs = 60_000) {
  await frame.waitForFunction((names) => names.every((k) => window.__bench.done[k] !== undefined), names, { timeout: timeoutMs, polling: 20 }).catch(() => {});
  return frame.evaluate((names) => {
    const b = window.__bench;
    b.obs.disconnect();
    window.__nsysPerf.onFrame = undefined;
    return Object.fromEntries(names.map((k) => [k, b.done[k] ?? NaN]));
  }, names);
}

/** The requests the page sent since `arm`, or before it and settled after the input (rpcTimings; packages from vsc13b on for every leg), each split into
 * legs on the epoch clock, ms: input → sent (the page's work before it asks), page → host (sent → the host
 * received it), server (host received → answered: the server, its queue, the stdio pipe), host encodes (answered →
 * posted), relay (posted → VS Code's host frame forwards it), host frame → the page's message event, parse, and
 * `render`: parsed → the page showed it (`doneKey`'s time after the input); `kb`: the message's text. */
async function requestLegs(frame, doneKey) {
  return frame.evaluate((doneKey) => {
    const b = window.__bench, o = performance.timeOrigin, fwd = window.__nsysForwarded ?? new Map();
    const shown = b.at === undefined || b.done[doneKey] === undefined ? NaN : b.at + b.done[doneKey];
    /* those sent since `arm`, and those sent before it and still on their way at the input (asked ahead: negative input → sent) */
    const mine = (x) => x.id > b.id0 || (b.at !== undefined && (x.settled === undefined || x.settled > b.at) && x.method !== 'timeline/range');
    return (window.__nsysPerf.rpcTimings ?? []).filter(mine).map((x) => ({
      method: x.method, name: x.params?.name, cancelled: !!x.cancelled,
      inputToSent: b.at === undefined ? NaN : x.sent - b.at,
      total: x.settled === undefined ? NaN : x.settled - x.sent,
      pageToHost: x.host ? x.host.received - (o + x.sent) : NaN,
      server: x.host ? x.host.answered - x.host.received : NaN,
      encode: x.host && x.page?.posted !== undefined ? x.page.posted - x.host.answered : NaN,
      relay: x.page?.posted !== undefined && fwd.has(x.id) ? o + fwd.get(x.id) - x.page.posted : NaN,
      hostFrameToEvent: x.page && fwd.has(x.id) ? x.page.received - fwd.get(x.id) : NaN,
      parse: x.page ? x.page.parsed - x.page.received : NaN,
      render: x.page ? shown - x.page.parsed : NaN,
      kb: x.page?.bytes !== undefined ? x.page.bytes / 1024 : NaN,
    }));
  }, doneKey);
}
const LEGS = [['inputToSent', 'input → request sent'], ['pageToHost', 'page → host'], ['server', 'host → server → host'], ['encode', 'host encodes'],
  ['relay', 'posted → VS Code\'s host frame forwards'], ['hostFrameToEvent', 'host frame → page event'], ['parse', 'page parses'],
  ['render', 'parsed → shown (page renders)'], ['kb', 'host → page KB']];
/** Adds `legs` (requestLegs of one input each) to `into` per method (and analysis name): `${label}: ${method} ${leg}`. */
function addLegs(into, label, legs) {
  const by = Object.groupBy(legs.flat().filter((x) => !x.cancelled), (x) => x.method + (x.name ? ` ${x.name}` : ''));
  for (const [m, xs] of Object.entries(by)) for (const [k, what] of LEGS) into[`${label}: ${m} ${what}`] = xs.map((x) => x[k]);
}

async function interactions(s, file) {
  const { page } = s;
  const { frame, phases } = await timedOpen(s, file, 600_000);
  const canvas = frame.locator('.timeline canvas');
  const box = await canvas.boundingBox();
  const gutter = Number(await frame.evaluate(() => document.querySelector('.timeline').dataset.gutter ?? 210));
  const plotX = (f) => box.x + gutter + (box.width - gutter) * f;
  const AXIS = 22, ROW = 22;
  const cy = box.y + Math.min(AXIS + ROW * 3 + 11, box.height - 11);
  const perfReset = () => frame.evaluate(() => { const p = window.__nsysPerf; p.inputToFrame.length = 0; p.inputToComplete.length = 0; p.hovers.length = 0; });
  const perfTake = () => frame.evaluate(() => ({ frame: [...window.__nsysPerf.inputToFrame], complete: [...window.__nsysPerf.inputToComplete], hovers: [...window.__nsysPerf.hovers] }));
  const settle = async () => { await sleep(400); await frame.waitForFunction(() => document.querySelector('.timeline')?.dataset.rendered === 'true', undefined, { timeout: 30_000 }).catch(() => {}); };
  const home = async () => { await canvas.focus(); await page.keyboard.press('Home'); await sleep(1500); };
  const res = {};
  /* when VS Code's webview host frame forwards each answer to our page (its contentWindow.postMessage, same origin: our
   * own window's postMessage, wrapped here), keyed by the request id in the envelope's head */
  await frame.evaluate(() => {
    const seen = (window.__nsysForwarded = new Map());
    const post = window.postMessage.bind(window);
    window.postMessage = (m, ...rest) => {
      const j = m && typeof m.json === 'string' ? /^\{"type":"rpc(?:Result|Error)","id":(\d+)/.exec(m.json.slice(0, 64)) : null;
      if (j) seen.set(Number(j[1]), performance.now());
      return post(m, ...rest);
    };
  });
  /* the split of "→ complete": each timeline/range the page sent meanwhile, sent → settled (the
   * bridge through code-server, the extension host and the server), and how many it cancelled */
  const rangesFrom = () => frame.evaluate(() => window.__nsysPerf.rpcTimings?.length ?? 0);
  /* and its legs, on the epoch clock (the page's timeOrigin + performance.now(), the host's Date.now(), from rpcResult's
   * `host`; absent with packages before vsc12): page sent → host received, host received → the server's answer
   * back in the host (the server, its queue and the stdio pipe), host posted → the page settled (postMessage through
   * VS Code's webview frames, the page's JSON parse) */
  /* the last leg's parts (packages from vsc13 on: the envelope's `posted`, the page's `page` times): the host's encode
   * (answered → posted), VS Code's relay and the page's task queue (posted → the message event begins, epoch clock),
   * the page's parse (event → parsed), and parsed → the end of the next frame drawn (the wait for it and its draw) */
  const rangesSince = (n) => frame.evaluate((n) => {
    const ends = window.__nsysPerf.frameEnds ?? [];
    const frameAfter = (t) => { const e = ends.find((x) => x >= t); return e === undefined ? NaN : e - t; };
    /* ms of [a, b] (page clock) inside long tasks on the page's thread: its own ('self'), and other frames' */
    const tasks = window.__nsysPerf.longTasks;
    const fwd = window.__nsysForwarded ?? new Map();
    const busy = (a, b, own) => tasks ? tasks.filter((t) => (t.name === 'self') === own).reduce((s, t) => s + Math.max(0, Math.min(b, t.start + t.ms) - Math.max(a, t.start)), 0) : NaN;
    return (window.__nsysPerf.rpcTimings ?? []).slice(n).filter((x) => x.method === 'timeline/range')
      .map((x) => ({ ms: x.settled === undefined ? NaN : x.settled - x.sent, cancelled: !!x.cancelled,
        /* what it asked (packages from vsc14 on): a tile's drawing columns, or a bucket track's count and longest op after drawing */
        asks: Array.isArray(x.params.fields) && x.params.fields.includes('longestId') ? 'bucket columns' : Array.isArray(x.params.fields) ? 'tile (drawing columns)' : 'tile (every column)',
        legs: x.host && x.settled !== undefined ? [x.host.received - (performance.timeOrigin + x.sent), x.host.answered - x.host.received, performance.timeOrigin + x.settled - x.host.answered] : undefined,
        page: x.host && x.page && x.page.posted !== undefined && x.settled !== undefined ? [x.page.posted - x.host.answered, performance.timeOrigin + x.page.received - x.page.posted, x.page.parsed - x.page.received, frameAfter(x.settled),
          busy(x.page.posted - performance.timeOrigin, x.page.received, true), busy(x.page.posted - performance.timeOrigin, x.page.received, false),
          fwd.has(x.id) ? performance.timeOrigin + fwd.get(x.id) - x.page.posted : NaN, fwd.has(x.id) ? x.page.received - fwd.get(x.id) : NaN,
          x.page.bytes ?? NaN, inFlight(x.page.posted)] : undefined }));
    /* what the relay's wait grows with: each message's size (its text; packages from vsc13b on) and the messages
     * posted before it and not yet forwarded by the host frame when it was posted (those the page took; dropped ones unseen) */
    function inFlight(posted) {
      const msgs = new Map();
      for (const y of window.__nsysPerf.rpcTimings ?? []) if (y.page?.posted !== undefined && fwd.has(y.id)) msgs.set(`${y.page.posted}:${fwd.get(y.id)}`, [y.page.posted, performance.timeOrigin + fwd.get(y.id)]);
      let k = 0;
      for (const [p, f] of msgs.values()) if (p < posted && f > posted) k++;
      return k;
    }
  }, n);
  /* posted → host frame forwards, by the message's size and by the messages in flight when it was posted */
  const relayBy = (page) => {
    const msgs = page.map((x) => x.page).filter((m) => !Number.isNaN(m[6]));
    const by = (label, f) => Object.fromEntries(Object.entries(Object.groupBy(msgs, f)).map(([k, v]) => [`  relay wait by ${label} ${k}`, v.map((m) => m[6])]));
    return { 'host → page message KB': msgs.map((m) => m[8] / 1024),
      ...by('size', (m) => (Number.isNaN(m[8]) ? '(unknown)' : m[8] <= 65536 ? '≤ 64 KB' : m[8] <= 262144 ? '64-256 KB' : '> 256 KB')),
      ...by('messages in flight', (m) => (m[9] === 0 ? '0' : m[9] <= 2 ? '1-2' : '≥ 3')) };
  };
  const droppedNow = () => frame.evaluate(() => window.__nsysPerf.answersDropped?.() ?? NaN);
  const kind = async (name, fn) => {
    if (!wants(name)) return;
    await perfReset();
    const n = await rangesFrom();
    const d0 = await droppedNow();
    await fn();
    await sleep(1500);
    const p = await perfTake();
    const ranges = await rangesSince(n);
    const kept = ranges.filter((x) => !x.cancelled), legs = kept.filter((x) => x.legs), page = kept.filter((x) => x.page);
    res[name] = { frame: p.frame, complete: p.complete, 'timeline/range sent → settled': kept.map((x) => x.ms),
      'timeline/range leg: page → host': legs.map((x) => x.legs[0]), 'timeline/range leg: host → server → host': legs.map((x) => x.legs[1]), 'timeline/range leg: host → page settled': legs.map((x) => x.legs[2]),
      '  host → page: host encodes (answered → posted)': page.map((x) => x.page[0]), '  host → page: VS Code relay + page queue (posted → event)': page.map((x) => x.page[1]),
      '  host → page: page parses (event → parsed)': page.map((x) => x.page[2]), 'timeline/range: parsed → next frame drawn': page.map((x) => x.page[3]),
      '  posted → event: in the page\'s long tasks (own)': page.map((x) => x.page[4]), '  posted → event: in long tasks of other frames on its thread': page.map((x) => x.page[5]),
      '  posted → VS Code\'s host frame forwards it to the page': page.map((x) => x.page[6]), '  host frame forwards → the page\'s message event': page.map((x) => x.page[7]),
      ...relayBy(page),
      ...Object.fromEntries(Object.entries(Object.groupBy(page, (x) => x.asks)).map(([k, v]) => [`host → page message KB: ${k}`, v.map((x) => x.page[8] / 1024)])) };
    const dropped = (await droppedNow()) - d0;
    console.log(`   ${name}: ${ranges.length} timeline/range sent, ${ranges.filter((x) => x.cancelled).length} cancelled${Number.isNaN(dropped) ? '' : `, ${dropped} answers dropped unparsed`}`);
  };
  await home();
  /* zoom in a little first so that pans move over data at a useful scale */
  await kind('zoom: Ctrl+wheel', async () => {
    await page.mouse.move(plotX(0.4), cy);
    for (let i = 0; i < 24; i++) {
      await page.keyboard.down('Control'); await page.mouse.wheel(0, i < 16 ? -240 : 240); await page.keyboard.up('Control');
      await sleep(250);
    }
  });
  await kind('zoom: + / - keys', async () => {
    await canvas.focus();
    for (let i = 0; i < 16; i++) { await page.keyboard.press(['+', '+', '-', 'w', 's', '=', '-', 'W'][i % 8]); await sleep(250); }
  });
  await kind('pan: drag', async () => {
    for (const dir of [-1, 1, -1]) {
      await page.mouse.move(plotX(0.5), cy);
      await page.mouse.down();
      for (let i = 1; i <= 40; i++) { await page.mouse.move(plotX(0.5) + dir * i * 10, cy); await sleep(16); }
      await page.mouse.up();
      await sleep(400);
    }
  });
  await kind('pan: keys', async () => {
    await canvas.focus();
    for (let i = 0; i < 16; i++) { await page.keyboard.press(['d', 'ArrowRight', 'a', 'ArrowLeft'][i % 4]); await sleep(250); }
  });
  await kind('pan: wheel', async () => {
    await page.mouse.move(plotX(0.5), cy);
    for (let i = 0; i < 16; i++) { await page.mouse.wheel(0, i % 8 < 4 ? 240 : -240); await sleep(250); }
  });
  await home();
  await kind('expand: a group\'s label clicked', async () => {
    for (let i = 0; i < 12; i++) {
      const rows = await frame.evaluate(() => window.__nsysPerf.rowsAt());
      const g = rows.filter((r) => r.open !== undefined && r.y > AXIS && r.y + ROW < box.height);
      const target = g[i % Math.max(1, g.length)];
      if (!target) break;
      await page.mouse.click(box.x + 40, box.y + target.y + ROW / 2);
      await settle();
      await sleep(200);
    }
  });
  await home();
  /* hover: distinct kernels at the full range, then zoomed in */
  const pickTargets = (n) => frame.evaluate(({ n, gutter, w, AXIS, ROW }) => {
    const seen = new Set(), out = [];
    const rows = window.__nsysPerf.rowsAt();
    for (let step = 0; out.length < n && step < 6000; step++) {
      const px = gutter + 5 + ((step * 97) % (w - gutter - 10)), r = rows[step % rows.length];
      if (!r || r.y < AXIS || r.y + ROW > document.querySelector('.timeline canvas').clientHeight) continue;
      const py = r.y + ROW / 2;
      const id = window.__nsysPerf.probe(px, py);
      if (id !== undefined && !seen.has(id)) { seen.add(id); out.push([px, py, id]); }
    }
    return out;
  }, { n, gutter, w: box.width, AXIS, ROW });
  const hovers = [];
  const hoverAll = async (targets) => {
    await perfReset();
    for (const [px, py] of targets) {
      const before = await frame.evaluate(() => window.__nsysPerf.hovers.length);
      await page.mouse.move(box.x + px, box.y + py);
      await frame.waitForFunction((b) => window.__nsysPerf.hovers.length > b, before, { timeout: 5000, polling: 5 }).catch(() => {});
      await sleep(40);
    }
    hovers.push(...(await perfTake()).hovers);
  };
  if (wants('hover')) await hoverAll(await pickTargets(20));
  const zoomIn = async (n) => {
    await page.mouse.move(plotX(0.5), box.y + AXIS + 11);
    await page.keyboard.down('Control');
    for (let i = 0; i < n; i++) await page.mouse.wheel(0, -100);
    await page.keyboard.up('Control');
    await settle(); await sleep(1500);
  };
  await zoomIn(40);
  if (wants('hover')) {
    await hoverAll(await pickTargets(20));
    res['hover: mousemove → tooltip with details'] = { shown: hovers };
  }
  /* select: a kernel clicked (zoomed in: single kernels) */
  const selDetails = [], selExplained = [], selFlow = [], selFrame = [], selLegs = [];
  for (const [px, py, id] of await pickTargets(15)) {
    await page.mouse.move(box.x + px, box.y + py);
    await sleep(100);
    await arm(frame, 'mouseup', ['shown', 'details', 'explained', 'flow'], id);
    await page.mouse.down(); await page.mouse.up();
    const t = await armed(frame, ['shown', 'details', 'explained', 'flow'], 30_000);
    selFrame.push(t.shown); selDetails.push(t.details); selExplained.push(t.explained); selFlow.push(t.flow);
    selLegs.push(await requestLegs(frame, 'explained'));
    await sleep(150);
  }
  res['select: click → Details panel shows it'] = { shown: selFrame };
  res['select: click → its details in the panel'] = { shown: selDetails };
  res['select: click → its explanation in the panel'] = { shown: selExplained };
  res['select: click → launch flow drawn'] = { shown: selFlow };
  res['select: the requests of a click, their legs'] = {};
  addLegs(res['select: the requests of a click, their legs'], 'click', selLegs);
  /* area selection: a drag on the time axis, zoomed in and at the full range */
  const area = async (label, fracs) => {
    const drawn = [], stats = [], legs = [];
    for (const [a, b] of fracs) {
      await frame.evaluate(() => { document.querySelector('.timeline').dataset.range = ''; delete document.querySelector('.range-panel')?.dataset.loaded; });
      await arm(frame, 'mouseup', ['range', 'stats']);
      await page.mouse.move(plotX(a), box.y + AXIS / 2);
      await page.mouse.down();
      for (let i = 1; i <= 6; i++) { await page.mouse.move(plotX(a + (b - a) * i / 6), box.y + AXIS / 2); await sleep(16); }
      await page.mouse.up();
      const t = await armed(frame, ['range', 'stats'], 120_000);
      drawn.push(t.range); stats.push(t.stats);
      legs.push(await requestLegs(frame, 'stats'));
      await sleep(200);
    }
    res[`area (${label}): drag on the axis → range drawn`] = { shown: drawn };
    res[`area (${label}): → its stats in the Range tab`] = { shown: stats };
    addLegs(res[`area (${label}): → its stats in the Range tab`], 'legs', legs);
  };
  const spans = Array.from({ length: 8 }, (_, i) => [0.1 + 0.05 * i, 0.3 + 0.05 * i]);
  await area('zoomed in', spans);
  await home();
  await area('full range', spans.slice(0, 5));
  /* for reference: postMessage round trips through VS Code's webview and the extension host */
  const bridge = await frame.evaluate(async () => {
    const rpc = window.__nsysPerf.rpc;
    const time = async (m) => { const out = []; for (let i = 0; i < 30; i++) { const t = performance.now(); await rpc(m, {}).catch(() => {}); out.push(performance.now() - t); } return out; };
    /* the relay's floor for a tile's bytes: the last timeline/range the page kept (the full range's view, after Home),
     * asked again 10 times while nothing else is under way; its posted → the page's message event from the bridge's timings */
    const timings = window.__nsysPerf.rpcTimings ?? [];
    const last = [...timings].reverse().find((x) => x.method === 'timeline/range' && x.host && !x.cancelled);
    const tile = { total: [], relay: [], kb: NaN };
    for (let i = 0; last && i < 10; i++) {
      const t = performance.now();
      const r = await rpc('timeline/range', last.params).catch(() => undefined);
      tile.total.push(performance.now() - t);
      const x = timings[timings.length - 1];
      if (x?.page?.posted !== undefined) tile.relay.push(performance.timeOrigin + x.page.received - x.page.posted);
      if (r) tile.kb = JSON.stringify(r).length / 1024;
    }
    return { empty: await time('bench/none'), info: await time('profile/info'), tile };
  });
  res['bridge: empty round trip (refused by the host)'] = { shown: bridge.empty };
  res['bridge: profile/info round trip'] = { shown: bridge.info };
  res['bridge: a tile\'s round trip, idle'] = { shown: bridge.tile.total };
  res['bridge: that tile\'s KB (its result as JSON)'] = { shown: [bridge.tile.kb] };
  res['bridge: that tile: posted → the page\'s message event, idle'] = { shown: bridge.tile.relay };
  await page.screenshot({ path: path.join(path.dirname(OUT), 'bench-code-server-10m.png') });
  await closeEditors(page, frame);
  return { open: phases, kinds: res };
}

/* ---------- the run ---------- */

const PHASES = [['webviewHostNav', 'VS Code creates the webview (Enter → its host frame navigates)'], ['pageNav', 'host frame → our page navigates'],
  ['bundleRuns', 'our page loads (→ our bundle runs)'], ['init', 'extension host (→ init arrives)'], ['firstFrame', 'init → first complete frame']];

/** The floor page's phases (ms after Enter): VS Code's alone. */
const FLOOR_PHASES = [['webviewHostNav', 'VS Code creates the webview (Enter → its host frame navigates)'], ['pageNav', 'host frame → the page navigates'],
  ['bundleRuns', 'the page loads (→ its inline script runs)'], ['init', 'ready → extension host → init arrives']];

function summarizeFloor(runs) {
  const parts = FLOOR_PHASES.map(([k], i) => [k, stats(runs.map((r) => (r[k] ?? NaN) - (i ? r[FLOOR_PHASES[i - 1][0]] ?? NaN : 0)))]);
  return { total: stats(runs.map((r) => r.init ?? NaN)), parts: Object.fromEntries(parts), runs };
}

function summarize(runs) {
  const col = (k) => stats(runs.map((r) => r[k] ?? NaN));
  const total = col('firstFrame');
  const parts = PHASES.map(([k], i) => [k, stats(runs.map((r) => (r[k] ?? NaN) - (i ? r[PHASES[i - 1][0]] ?? NaN : 0)))]);
  return { total, parts: Object.fromEntries(parts), hostOpen: stats(runs.map((r) => (r.hostOpenEnd ?? NaN) - (r.hostOpenStart ?? NaN))),
    rangeRoundTrips: stats(runs.map((r) => (r.lastRangeSettled ?? NaN) - (r.firstRangeSent ?? NaN))), runs };
}

(async () => {
  const load0 = uptime();
  console.log(`== ${load0}`);
  const packages = [['after', VSIX], ...(BASELINE ? [['before', BASELINE]] : [])];
  const firstFrame = {};
  const coldDir = path.join(tmpRoot, 'cold-cache');
  const big = {};
  const floor = {};
  /* sessions alternate between the packages, cached then cold */
  for (const [label, vsix] of packages) {
    console.log(`== ${label}: cached index (${USER_CACHE}), ${OPENS} opens of ${P1M}`);
    await session(`${label}-cached`, vsix, USER_CACHE, async (s) => {
      const o = await opens(s, P1M, OPENS, 1, () => {}, !!FLOOR_VSIX);
      firstFrame[`${label} cached`] = summarize(FLOOR_VSIX ? o.ours : o);
      if (FLOOR_VSIX) floor[label] = summarizeFloor(o.floor);
      if (BIG) { console.log(`== ${label}: interactions at ${P10M}`); big[label] = await interactions(s, P10M); }
    });
  }
  for (const [label, vsix] of packages) {
    if (!COLD) break;
    console.log(`== ${label}: cold (empty NSYS_AI_CACHE_DIR before each open), ${COLD} opens`);
    await session(`${label}-cold`, vsix, coldDir, async (s) => {
      /* one warm-up open (cold too): a session's first webview also installs VS Code's webview service worker */
      firstFrame[`${label} cold`] = summarize(await opens(s, P1M, COLD, 1, () => { fs.rmSync(coldDir, { recursive: true, force: true }); fs.mkdirSync(coldDir, { recursive: true }); }));
    });
  }
  const load1 = uptime();
  const report = { when: new Date().toISOString(), uptimeBefore: load0, uptimeAfter: load1, cpus: os.cpus().length, chromium: CHROMIUM,
    codeServer: JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', 'code-server', 'package.json'), 'utf8')).version,
    profile1M: P1M, profile10M: BIG ? P10M : null, vsix: VSIX, baselineVsix: BASELINE || null, firstFrame,
    floor: FLOOR_VSIX ? floor : null,
    interactions: Object.fromEntries(Object.entries(big).map(([label, b]) => [label, { open: b.open,
      kinds: Object.fromEntries(Object.entries(b.kinds).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([m, a]) => [m, { ...stats(a), samples: a.map((x) => Math.round(x * 10) / 10) }]))])) }])) };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(report, null, 2));
  const fmt = (s) => `${String(s.p50).padStart(8)} ${String(s.p90).padStart(8)} ${String(s.max).padStart(8)} ${String(s.n).padStart(4)}`;
  console.log(`\n${load0}\n${load1}   (${report.cpus} cpus, code-server ${report.codeServer})`);
  console.log(`${'first frame of the 1M-kernel profile (ms after Enter)'.padEnd(64)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'max'.padStart(8)} ${'n'.padStart(4)}   target`);
  for (const [k, v] of Object.entries(firstFrame)) {
    console.log(`${`${k}: Enter → first complete frame`.padEnd(64)} ${fmt(v.total)}   ${/cold/.test(k) ? '≤ 1500' : '≤ 200'}`);
    for (const [pk, what] of PHASES) console.log(`${`  ${what}`.padEnd(64)} ${fmt(v.parts[pk])}`);
    console.log(`${'  (extension host: server + profile/open)'.padEnd(64)} ${fmt(v.hostOpen)}`);
    console.log(`${'  (first timeline/range sent → last settled)'.padEnd(64)} ${fmt(v.rangeRoundTrips)}`);
  }
  for (const [label, f] of Object.entries(report.floor ?? {})) {
    console.log(`${`floor (${label} cached session): a static page, opened the same way`.padEnd(64)} ${fmt(f.total)}`);
    for (const [pk, what] of FLOOR_PHASES) console.log(`${`  ${what}`.padEnd(64)} ${fmt(f.parts[pk])}`);
  }
  const labels = Object.keys(report.interactions);
  if (labels.length) {
    console.log(`\n${'interactions at 10M kernels (ms after the input event)'.padEnd(64)} ${labels.map((l) => `${l.padStart(8)} p50      p90      max    n`).join('  |')}   target`);
    console.log(`${'  (open: Enter → first complete frame)'.padEnd(64)} ${labels.map((l) => String(report.interactions[l].open.firstFrame).padStart(8)).join(' '.repeat(28))}`);
    for (const [k, v] of Object.entries(report.interactions[labels[0]].kinds)) {
      for (const m of Object.keys(v)) {
        const name = m === 'shown' ? k : `${k} → ${m}`;
        console.log(`${name.padEnd(64)} ${labels.map((l) => { const x = report.interactions[l].kinds[k]?.[m]; return x ? `${' '.repeat(8)}${fmt(x)}` : ''; }).join('  |')}   ${/^bridge/.test(k) ? '' : 'p90 ≤ 50'}`);
      }
    }
  }
  console.log(`\nJSON: ${OUT}`);
  console.log(JSON.stringify(report));
  if (!process.env.BENCH_KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
})().catch((e) => { console.error(e); process.exit(1); });
