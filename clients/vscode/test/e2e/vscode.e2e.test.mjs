/* The nsys-ai extension inside a real VS Code: code-server (Node 24) with the
 * built .vsix installed, driven headless through Playwright + Chromium.
 * Opens a generated profile with the nsys-ai profile editor, checks the
 * timeline canvas paints, hovers a mapped Python line and checks the hover
 * lists the kernels and time the server attributes to it, and screenshots.
 * Run through ./run.sh (it installs Node 24 and code-server first).
 * Screenshots: $E2E_OUT (default test-results/): e2e-timeline.png, e2e-hover.png,
 * e2e-failure-*.png on failure. E2E_KEEP=1 keeps the temp dir (user data, logs). */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HERE, REPO, CHROMIUM, CODE_SERVER, step, writeSettings as writeQuietSettings, codeServerArgs as argsFor, installExtension,
  startCodeServer, launchChromium, commandPalette as paletteIn, webviewFrame } from './codeServer.mjs';

const BIN = process.env.NSYS_AI_BIN ?? path.join(REPO, 'build', 'nsys-ai');
const VSIX = process.env.NSYS_AI_VSIX ?? path.join(REPO, 'clients', 'vscode', 'nsys-ai.vsix');
/* NSYS_AI_E2E_BUNDLED=1 (the package suite, with a platform VSIX): no serverPath setting and no
 * nsys-ai on code-server's PATH, so the extension must run the server its VSIX bundles. */
const BUNDLED = process.env.NSYS_AI_E2E_BUNDLED === '1';
const OUT = process.env.E2E_OUT ?? path.join(HERE, 'test-results');
/* the Python file and line the hover is checked on: --source-tags tags the mlp ranges model.py:74 */
const PY_FILE = 'model.py';
const PY_LINE = 74;
const PY_DEFS = { 61: 'def attention(x):', 74: 'def mlp(x):', 88: 'def layer(x):' };

/* (count, total ns, names) of the kernels launched innermost inside NVTX ranges tagged FILE:LINE */
const INDEPENDENT_TAG_TOTAL = `
import json, sqlite3, sys
con = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
ranges = {}
for s, e, tid, text in con.execute("SELECT start, end, globalTid, text FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL AND text IS NOT NULL"):
    ranges.setdefault(tid, []).append((s, e, text.split(" ", 1)[0]))
rt = {(tid & ~0xFFFFFF, corr): (start, tid) for start, tid, corr in con.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
count, total, names = 0, 0, set()
for start, end, pid, corr, name in con.execute("SELECT k.start, k.end, k.globalPid, k.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"):
    r = rt.get((pid, corr))
    if not r:
        continue
    best = None
    for s, e, tag in ranges.get(r[1], ()):
        if s <= r[0] <= e and (best is None or s >= best[0]):
            best = (s, tag)
    if best and best[1] == sys.argv[2]:
        count += 1; total += end - start; names.add(name)
print(json.dumps({"count": count, "totalNs": total, "names": sorted(names)}))
`;

const missing = [[BIN, 'the server (ninja -C build)'], [VSIX, 'the .vsix (cd clients/vscode && npm run package)'],
  [CHROMIUM, 'chromium (apt-get install -y chromium)'], [CODE_SERVER, 'code-server (./run.sh installs it)']]
  .filter(([p]) => !fs.existsSync(p)).map(([p, what]) => `${p} is missing: ${what}`);
const skip = missing.length ? missing.join('; ') : false;

/* The guided flow needs the real nsys (CPU-side tracing: NVTX + OS runtime; Debian's non-free
 * nsight-systems with its QdstrmImporter, and libnvToolsExt.so.1 for the fixture's ctypes NVTX). */
const NSYS = (process.env.PATH ?? '').split(path.delimiter).map((d) => path.join(d, 'nsys')).find((p) => fs.existsSync(p));
const NVTX_LIBS = ['/usr/lib/x86_64-linux-gnu/libnvToolsExt.so.1', '/usr/lib/aarch64-linux-gnu/libnvToolsExt.so.1'];
const flowSkip = skip || (BUNDLED ? 'the guided flow runs in the vscode-e2e suite, not with the bundled server'
  : !NSYS || !fs.existsSync('/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter')
    ? 'nsys is not installed: apt-get install nsight-systems libnvtoolsext1 (Debian non-free)'
    : !NVTX_LIBS.some((p) => fs.existsSync(p)) ? 'libnvToolsExt.so.1 is not installed (apt-get install libnvtoolsext1)' : false);
/* the program the flow profiles, and the ctypes stand-in for the nvtx package it imports once annotated */
const FLOW_FIXTURE = path.join(REPO, 'tests', 'fixtures', 'workspace', 'e2e');
const FLOW_SCRIPT = 'prog.py';

let tmp, ws, userDir, codeServer, codeServerLog = '', context, page, nsysWrapper;
const pageLog = [];

function writeWorkspace() {
  fs.mkdirSync(ws, { recursive: true });
  execFileSync('python3', [path.join(REPO, 'tools', 'gen_profile.py'), '--preset', 'small', '--source-tags',
    '-o', path.join(ws, 'tagged.sqlite')], { stdio: 'pipe', timeout: 60_000 });
  const lines = ['import torch', ''];
  while (lines.length < 98) {
    const def = PY_DEFS[lines.length + 1];
    if (def) lines.push(def, '    a = proj(x)', '    b = torch.relu(a)', '    return out(a + b)');
    else lines.push('');
  }
  fs.writeFileSync(path.join(ws, PY_FILE), lines.join('\n') + '\n');
  for (const f of fs.readdirSync(FLOW_FIXTURE)) fs.copyFileSync(path.join(FLOW_FIXTURE, f), path.join(ws, f));
}

/** The real nsys through tests/fixtures/nsys_isolated.sh (fresh mount + PID namespaces where
 * unshare works, killed after 150 s, a failed `nsys profile` run once more; tests/protocol/test_capture.py
 * uses it too). */
function writeNsysWrapper() {
  const w = path.join(tmp, 'nsys');
  fs.writeFileSync(w, `#!/bin/sh\nexec sh '${path.join(REPO, 'tests', 'fixtures', 'nsys_isolated.sh')}' '${NSYS}' "$@"\n`, { mode: 0o755 });
  return w;
}

function writeSettings() {
  writeQuietSettings(userDir, BUNDLED ? {} : { 'nsys-ai.serverPath': BIN });
}

function codeServerArgs(extDir) {
  return argsFor(tmp, userDir, extDir);
}

/** PATH less the directories that hold an nsys-ai (BUNDLED mode), else PATH. */
function codeServerPath() {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  return BUNDLED ? dirs.filter((d) => d && !fs.existsSync(path.join(d, 'nsys-ai'))).join(path.delimiter) : process.env.PATH;
}

/** The executables of the running nsys-ai processes (Linux /proc). */
function runningServers() {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try { const exe = fs.readlinkSync(`/proc/${pid}/exe`); if (path.basename(exe) === 'nsys-ai') out.push(exe); } catch { /* gone or not ours */ }
  }
  return out;
}

function codeServerEnv() {
  return { ...process.env, PATH: codeServerPath(), XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'), XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
    XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'), NSYS_AI_CACHE_DIR: path.join(tmp, 'nsys-ai-cache'),
    ...(nsysWrapper ? { NSYS_AI_NSYS: nsysWrapper } : {}) };
}

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-e2e-'));
  ws = path.join(tmp, 'ws');
  userDir = path.join(tmp, 'user');
  const extDir = path.join(tmp, 'extensions');
  fs.mkdirSync(OUT, { recursive: true });
  writeWorkspace();
  writeSettings();
  if (!flowSkip) nsysWrapper = writeNsysWrapper();
  const installed = installExtension(codeServerArgs(extDir), VSIX, codeServerEnv());
  assert.match(installed, /nsys-ai/, `install-extension said: ${installed}`);

  let port;
  ({ proc: codeServer, port } = await startCodeServer(codeServerArgs(extDir), ws, codeServerEnv(), (d) => { codeServerLog += d; }));
  ({ context, page } = await launchChromium(path.join(tmp, 'chromium')));
  page.on('console', (m) => { if (m.type() === 'error') pageLog.push(`console.error ${m.text()}`); });
  page.on('pageerror', (e) => pageLog.push(`pageerror ${e.message}`));
  await step('the workbench loads', 90_000, async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.explorer-folders-view').getByText('tagged.sqlite').waitFor({ timeout: 60_000 });
  });
});

after(async () => {
  await context?.close().catch(() => {});
  codeServer?.kill('SIGTERM');
  if (tmp && !process.env.E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The failure's context: page errors, the extension host log and the nsys-ai output channel. */
function diagnostics() {
  const logs = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/exthost|nsys-ai|remoteagent/i.test(p)) {
        /* less nsys export's progress bars, which would fill the tail */
        const text = fs.readFileSync(p, 'utf8').split('\n').filter((l) => !/Exporting \d+ events|^[\s\d:. -]*(\[info\])?\s*=*\d*%?\s*\]?$/.test(l)).join('\n');
        logs.push(`--- ${p}\n${text.slice(-3000)}`);
      }
    }
  };
  try { walk(path.join(userDir, 'logs')); } catch { /* no logs yet */ }
  return [...pageLog.slice(-20), codeServerLog.slice(-2000), ...logs].join('\n');
}

async function withDiagnostics(name, fn) {
  try { await fn(); } catch (e) {
    const shot = path.join(OUT, `e2e-failure-${name}.png`);
    await page?.screenshot({ path: shot }).catch(() => {});
    console.log(`# failure screenshot: ${shot}\n${diagnostics().replace(/^/gm, '# ')}`);
    throw e;
  }
}

const commandPalette = (text) => paletteIn(page, text);

/** Picks ws/NAME in code-server's open dialog (VS Code's simple, quick-input file dialog). */
async function pickInOpenDialog(name) {
  /* the dialog sets its own value when its listing arrives, so wait for the listing before typing the path */
  const input = page.locator('.quick-input-widget input');
  const target = path.join(ws, name);
  await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: name }).first().waitFor({ timeout: 20_000 });
  for (let i = 0; ; i++) {
    await input.fill(target);
    await page.waitForTimeout(300);
    if (await input.inputValue() === target) {
      await page.keyboard.press('Enter');
      try { await input.waitFor({ state: 'hidden', timeout: 5_000 }); return; } catch (e) { if (i >= 4) throw e; }
    } else if (i >= 4) {
      throw new Error(`the open dialog shows ${await input.inputValue()}, not ${target}`);
    }
  }
}

/** The webview frame holding the nsys-ai timeline, once it has drawn. */
const timelineFrame = (timeoutMs) => webviewFrame(page, '.timeline[data-rendered="true"]', timeoutMs);

test('"nsys-ai: Open Profile" opens the .sqlite in the profile editor and the timeline canvas paints', async (t) => {
  if (skip) return t.skip(skip);
  await withDiagnostics('open-profile', async () => {
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } });
    /* the remote extension host has registered the extension: its activity-bar view container shows */
    await step('the extension is registered', 60_000, () =>
      page.locator('.activitybar [aria-label*="nsys-ai"]').first().waitFor({ timeout: 55_000 }));
    await step('run "nsys-ai: Open Profile" from the command palette', 30_000, () => commandPalette('nsys-ai: Open Profile'));
    await step('pick the .sqlite in the open dialog', 45_000, () => pickInOpenDialog('tagged.sqlite'));
    const frame = await step('the webview renders the timeline', 90_000, () => timelineFrame(85_000));
    const colours = await frame.evaluate(() => {
      const c = document.querySelector('.timeline canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    });
    assert.ok(colours > 5, `the timeline canvas has ${colours} colours`);
    const text = await frame.textContent('body');
    for (const want of ['NVTX tree', 'Top kernels']) assert.ok(text.includes(want), `webview shows "${want}"`);
    const tab = page.locator('.tabs-container .tab').filter({ hasText: 'tagged.sqlite' });
    assert.equal(await tab.count(), 1, 'one editor tab for the profile');
    await page.screenshot({ path: path.join(OUT, 'e2e-timeline.png') });
    if (BUNDLED) {
      const servers = runningServers();
      const ext = path.join(tmp, 'extensions');
      assert.ok(servers.some((exe) => exe.startsWith(ext + path.sep) && exe.endsWith(path.join('server', 'nsys-ai'))),
        `the server that runs is the VSIX's (under ${ext}): ${servers.join(', ') || 'none'}`);
    }
  });
});

test(`hovering ${PY_FILE}:${PY_LINE} shows the kernels the server maps to it, with their time`, async (t) => {
  if (skip) return t.skip(skip);
  const expected = JSON.parse(execFileSync(BIN, ['call', 'source/kernelsAt',
    JSON.stringify({ file: PY_FILE, line: PY_LINE, workspaceRoot: ws }), '--profile', path.join(ws, 'tagged.sqlite')],
    { encoding: 'utf8', env: codeServerEnv() }));
  assert.ok(expected.count > 0 && expected.kernels.length > 0, `the generated profile maps kernels to ${PY_FILE}:${PY_LINE}`);
  /* independently, by brute force over the export: kernels whose launch lies innermost in a "model.py:74 ..." range */
  const sql = JSON.parse(execFileSync('python3', ['-c', INDEPENDENT_TAG_TOTAL, path.join(ws, 'tagged.sqlite'), `${PY_FILE}:${PY_LINE}`],
    { encoding: 'utf8', timeout: 60_000 }));
  assert.deepEqual({ count: expected.count, totalNs: expected.totalNs, names: expected.kernels.map((k) => k.name).sort() },
    { count: sql.count, totalNs: sql.totalNs, names: sql.names }, 'server source/kernelsAt vs brute-force SQL');
  await withDiagnostics('hover', async () => {
    await step(`open ${PY_FILE}:${PY_LINE} with Quick Open`, 45_000, async () => {
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'hidden', timeout: 10_000 });
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill(`${PY_FILE}:${PY_LINE}`);
      await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: PY_FILE }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab.active').filter({ hasText: PY_FILE }).waitFor({ timeout: 15_000 });
    });
    const word = page.locator('.monaco-editor .view-line').filter({ hasText: PY_DEFS[PY_LINE] }).getByText('mlp', { exact: true });
    await step(`${PY_FILE} shows line ${PY_LINE}`, 30_000, () => word.waitFor({ timeout: 25_000 }));
    const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'nsys-ai' });
    await step('the hover appears', 60_000, async () => {
      /* the extension activates on the Python file and asks the server; hover again until it answers */
      for (let i = 0; ; i++) {
        await page.mouse.move(5, 5);
        await word.hover();
        try { await hover.first().waitFor({ state: 'visible', timeout: 5_000 }); return; } catch (e) { if (i >= 9) throw e; }
      }
    });
    /* the hover may show a finding's diagnostic (which also names nsys-ai) before the source map answers */
    let text = '';
    await step('the hover lists the line\'s kernels', 30_000, async () => {
      for (const until = Date.now() + 25_000; ; await page.waitForTimeout(250)) {
        text = (await hover.first().innerText()).replace(/\s+/g, ' ');
        if (/launch(es)? of \d+ kernels?/.test(text) || Date.now() > until) return;
      }
    });
    assert.match(text, new RegExp(`${expected.count} launch(es)? of ${expected.kernels.length} kernels?`), text);
    for (const k of expected.kernels.slice(0, 3)) {
      assert.ok(text.includes(k.name.slice(0, 40)), `hover names ${k.name}: ${text}`);
    }
    const time = /launch(?:es)? of \d+ kernels? · ([\d.]+) (s|ms|µs|ns) ·/.exec(text);
    assert.ok(time, `hover shows the total time: ${text}`);
    const ns = Number(time[1]) * { s: 1e9, ms: 1e6, 'µs': 1e3, ns: 1 }[time[2]];
    assert.ok(Math.abs(ns - expected.totalNs) <= 0.01 * expected.totalNs, `hover time ${time[0]} vs server ${expected.totalNs} ns`);
    assert.match(text, /Show in timeline/);
    /* the CodeLens and gutter heat of the same source map are there too */
    const lenses = await page.locator('.monaco-editor .codelens-decoration').allInnerTexts();
    assert.ok(lenses.some((l) => /^\d+ kernels? · .+ · .+% GPU$/.test(l.trim())), `CodeLens: ${JSON.stringify(lenses)}`);
  });
});

test('screenshot of the workbench with the hover: written, not blank', async (t) => {
  if (skip) return t.skip(skip);
  await withDiagnostics('screenshot', async () => {
    const file = path.join(OUT, 'e2e-hover.png');
    const png = await page.screenshot({ path: file });
    assert.ok(png.length > 20_000, `screenshot is ${png.length} bytes`);
    const colours = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, png.toString('base64'));
    assert.ok(colours > 50, `screenshot has ${colours} colours`);
    console.log(`# screenshot: ${file}`);
  });
});

test('a file that is not a profile: the editor shows the server\'s message and actions, and a notification says it', async (t) => {
  if (skip) return t.skip(skip);
  /* a SQLite database, but not an nsys export */
  execFileSync('python3', ['-c', 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE t(x)"); c.commit()',
    path.join(ws, 'not-a-profile.sqlite')]);
  await withDiagnostics('open-error', async () => {
    await step('run "nsys-ai: Open Profile" from the command palette', 30_000, () => commandPalette('nsys-ai: Open Profile'));
    await step('pick not-a-profile.sqlite in the open dialog', 45_000, () => pickInOpenDialog('not-a-profile.sqlite'));
    const frame = await step('the editor shows the error page', 60_000, async () => {
      for (const until = Date.now() + 55_000; Date.now() < until; await page.waitForTimeout(250)) {
        for (const f of page.frames()) if (await f.$('#open-error').catch(() => null)) return f;
      }
      throw new Error('no webview frame with #open-error');
    });
    const text = (await frame.textContent('body')).replace(/\s+/g, ' ');
    assert.match(text, /This file is not an Nsight Systems export/);
    assert.match(text, /not-a-profile\.sqlite/);
    assert.match(text, /not an Nsight Systems export/i, `the server's own message: ${text}`);
    assert.deepEqual(await frame.locator('button[data-action]').allInnerTexts(), ['Try Again', 'Show Log', 'Open with Default Editor']);
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: 'not an Nsight Systems export' });
    await step('a notification with the same actions', 20_000, () => toast.first().waitFor({ timeout: 15_000 }));
    assert.match(await toast.first().innerText(), /Show Log/);
    await page.screenshot({ path: path.join(OUT, 'e2e-open-error.png') });
    await step('"Show Log" opens the nsys-ai output with the failure', 30_000, async () => {
      await frame.locator('button[data-action="showLog"]').click();
      await page.locator('.output-view, .panel').filter({ hasText: 'not-a-profile.sqlite failed' }).first().waitFor({ timeout: 25_000 });
    });
  });
});

/* ---------------------------------------------------------------- the guided flow, with the real nsys
 * profile → diagnose → annotate → profile again → refine, each run from the command palette as a
 * user would, on tests/fixtures/workspace/e2e/prog.py; checked at each step against what VS Code
 * shows (the Runs view's runs and steps, the step's document, the file) and the history database. */

/** The workspace's run history as the server reads it (runs newest first). */
function history() {
  return JSON.parse(execFileSync(BIN, ['call', 'runs/list', JSON.stringify({ workspaceRoot: ws })],
    { encoding: 'utf8', env: codeServerEnv() })).runs;
}

const normalize = (t) => t.replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim();

/** The rows of the Runs view (label and description, whitespace collapsed). */
async function runsRows() {
  const pane = page.locator('.pane').filter({ has: page.locator('.pane-header h3.title', { hasText: /^Runs$/ }) });
  const parts = await pane.locator('.monaco-list-row').evaluateAll((rows) => rows.map((r) =>
    [r.querySelector('.label-name'), r.querySelector('.label-description')].map((e) => e?.textContent ?? '')));
  return parts.map(([label, description]) => normalize(`${label} ${description}`));
}

/** Waits until the Runs view has a row matching each pattern; returns the rows. */
async function runsViewShows(what, patterns, ms = 60_000) {
  let rows = [];
  await step(`the Runs view shows ${what}`, ms + 5_000, async () => {
    for (const until = Date.now() + ms; ; await page.waitForTimeout(300)) {
      rows = await runsRows();
      if (patterns.every((p) => rows.some((r) => p.test(r)))) return;
      if (Date.now() > until) throw new Error(`the Runs view shows ${JSON.stringify(rows)}, wanted ${patterns.join(', ')}`);
    }
  });
  return rows;
}

/** The text of the editor whose text matches `pattern` (the step's markdown document). */
async function editorText(what, pattern, ms = 60_000) {
  let text = '';
  await step(`the editor shows ${what}`, ms + 5_000, async () => {
    for (const until = Date.now() + ms; ; await page.waitForTimeout(300)) {
      for (const t of await page.locator('.monaco-editor .view-lines').allInnerTexts()) {
        if (pattern.test(normalize(t))) { text = t.replace(/\u00a0/g, ' '); return; }
      }
      if (Date.now() > until) throw new Error(`no editor shows ${pattern}`);
    }
  });
  return text;
}

/** Answers the input box titled `title` (showInputBox) with `text`. */
async function answerInputBox(title, text) {
  await page.locator('.quick-input-widget .quick-input-title').filter({ hasText: title }).waitFor({ timeout: 20_000 });
  await page.locator('.quick-input-widget input').fill(text);
  await page.keyboard.press('Enter');
}

async function showRunsView() {
  const pane = page.locator('.pane-header h3.title', { hasText: /^Runs$/ });
  if (!(await pane.isVisible())) await page.locator('.activitybar [aria-label*="nsys-ai"]').first().click();
  await pane.waitFor({ timeout: 20_000 });
}

test('the guided flow with the real nsys: profile, diagnose, annotate, profile again, refine; the Runs view and the history follow', async (t) => {
  if (flowSkip) return t.skip(flowSkip);
  const script = path.join(ws, FLOW_SCRIPT);
  /* what the server proposes for a first pass (every function of the script), asked on the unannotated file */
  const proposed = JSON.parse(execFileSync(BIN, ['call', 'source/annotate', JSON.stringify({ file: FLOW_SCRIPT, workspaceRoot: ws,
    scope: 'file', granularity: 'function', includeText: true })], { encoding: 'utf8', env: codeServerEnv() }));
  const tags = proposed.added.map((a) => a.tag);
  assert.deepEqual(tags, ['prog.py:7 work', 'prog.py:15 step', 'prog.py:23 main'], 'source/annotate proposes the three functions');
  await withDiagnostics('flow', async () => {
    await step(`open ${FLOW_SCRIPT}`, 45_000, async () => {
      const input = page.locator('.quick-input-widget input');
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill(FLOW_SCRIPT);
      await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: FLOW_SCRIPT }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab.active').filter({ hasText: FLOW_SCRIPT }).waitFor({ timeout: 15_000 });
    });
    await showRunsView();

    /* 1. profile: the hypothesis asked, nsys run, the run listed with its doctor verdict */
    await step('run "Guided Flow: Profile the Script"', 30_000, () => commandPalette('nsys-ai: Guided Flow: Profile the Script'));
    await answerInputBox('Profile this script', 'step() is slow');
    await runsViewShows('run r1, captured, with its doctor verdict', [/^r1 ok · doctor broken\b/], 120_000);
    let h = history();
    assert.deepEqual(h.map((r) => [r.name, r.status, r.before]), [['r1', 'ok', null]]);
    assert.deepEqual(h[0].command, ['python3', script]);
    assert.deepEqual(h[0].notes.map((n) => [n.kind, n.text]), [['hypothesis', 'step() is slow']]);
    assert.ok(fs.existsSync(h[0].report) && h[0].report.startsWith(path.join(ws, '.nsys-ai', 'runs', 'r1') + path.sep), h[0].report);
    /* CPU-side tracing: no kernel, so doctor says broken and names the rule */
    assert.deepEqual(h[0].summary.rules, ['no_gpu_activity']);
    await page.locator('.notifications-toasts .notification-toast').filter({ hasText: 'Run r1: doctor broken' }).first()
      .waitFor({ timeout: 20_000 });
    await runsViewShows('the next step: diagnose', [/^1\. Profile the script 1 run, latest r1$/, /^2\. Diagnose \(doctor \+ report\) next · /]);

    /* 2. diagnose: doctor's findings with their flags in a document, a decision note on r1 */
    await step('run "Guided Flow: Diagnose the Latest Run"', 30_000, () => commandPalette('nsys-ai: Guided Flow: Diagnose the Latest Run'));
    const doctor = JSON.parse(execFileSync(BIN, ['doctor', h[0].report, '--format', 'json'], { encoding: 'utf8', env: codeServerEnv() }));
    const diagnosis = await editorText('the diagnosis of r1', /# r1: diagnosis/);
    assert.match(diagnosis, /Capture health: \*\*broken\*\*/);
    for (const f of doctor.findings) assert.ok(normalize(diagnosis).includes(normalize(`**${f.severity}** ${f.title}`)), `the diagnosis shows "${f.title}": ${diagnosis}`);
    assert.ok(diagnosis.includes('--trace=cuda,nvtx,osrt'), `the diagnosis names the flags: ${diagnosis}`);
    await runsViewShows('diagnose done, annotate next', [/^2\. Diagnose \(doctor \+ report\) doctor broken, \d+ findings?/, /^3\. Annotate the hot code with NVTX next · /]);
    h = history();
    const diagnoseNote = h[0].notes.find((n) => n.text.startsWith('flow diagnose: '));
    assert.equal(diagnoseNote?.kind, 'decision', JSON.stringify(h[0].notes));
    assert.match(diagnoseNote.text, /^flow diagnose: doctor broken, \d+ findings?/);

    /* 3. annotate: the proposed targets picked, the server's NVTX edits applied to the file and saved */
    await step('run "Guided Flow: Annotate the Hot Code"', 30_000, () => commandPalette('nsys-ai: Guided Flow: Annotate the Hot Code'));
    await step('accept the proposed targets', 30_000, async () => {
      await page.locator('.quick-input-widget .quick-input-title').filter({ hasText: 'Annotate for the run after r1' }).waitFor({ timeout: 20_000 });
      await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: FLOW_SCRIPT }).first().waitFor({ timeout: 10_000 });
      await page.keyboard.press('Enter');
    });
    await step(`${FLOW_SCRIPT} is annotated and saved`, 30_000, async () => {
      while (fs.readFileSync(script, 'utf8') !== proposed.text) await page.waitForTimeout(300);
    });
    await editorText(`the annotated ${FLOW_SCRIPT}`, /with nvtx\.annotate\("prog\.py:7 work"\): # nsys-ai/);
    await runsViewShows('annotate done, profile again next', [/^3\. Annotate the hot code with NVTX prog\.py \(function\)$/, /^4\. Profile again next · /]);
    assert.deepEqual(history()[0].notes.map((n) => n.text).slice(-1), ['flow annotate: prog.py (function)']);

    /* 4. profile again: the after of r1, its report holds the new ranges */
    await step('run "Guided Flow: Profile Again"', 30_000, () => commandPalette('nsys-ai: Guided Flow: Profile Again'));
    await answerInputBox('Profile again (after r1)', 'each function wrapped');
    await runsViewShows('run r2, the after of r1', [/^r2 ok · doctor broken · after r1$/, /^r1 ok · doctor broken/], 120_000);
    h = history();
    assert.deepEqual(h.map((r) => [r.name, r.status, r.before]), [['r2', 'ok', 'r1'], ['r1', 'ok', null]]);
    assert.deepEqual(h[0].notes.map((n) => [n.kind, n.text]), [['hypothesis', 'each function wrapped']]);
    const nvtx = JSON.parse(execFileSync('python3', ['-c',
      'import json, sqlite3, sys; c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True); ' +
      'print(json.dumps([t for (t,) in c.execute("SELECT text FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start")]))', h[0].report],
    { encoding: 'utf8' }));
    /* main() once, step() three times, work() twice per step */
    assert.deepEqual(tags.map((tag) => nvtx.filter((x) => x === tag).length), [6, 3, 1], `NVTX ranges of r2: ${nvtx}`);
    await runsViewShows('refine next', [/^5\. Refine: what changed next · /]);

    /* 5. refine: runs/compare of r1 → r2 shown, convergence and coverage over time, a decision note on r2 */
    await step('run "Guided Flow: Refine"', 30_000, () => commandPalette('nsys-ai: Guided Flow: Refine'));
    const compare = JSON.parse(execFileSync(BIN, ['call', 'runs/compare', JSON.stringify({ workspaceRoot: ws, before: 'r1', after: 'r2' })],
      { encoding: 'utf8', env: codeServerEnv() }));
    assert.deepEqual(compare.rangesAdded.map((r) => r.tag).sort(), [...tags].sort());
    assert.equal(compare.converged, false);
    const refined = normalize(await editorText('the refinement r1 → r2', /# r1 → r2/));
    const pct = (x) => `${x.toFixed(1)}%`;
    for (const s of [compare.before, compare.after]) {
      assert.ok(refined.includes(`| ${s.run} | ${pct(s.coverage)} | ${pct(s.taggedPct)} | ${s.tags} | ${s.split} | ${s.kernels} |`), `row of ${s.run}: ${refined}`);
    }
    assert.equal(compare.after.tags, 3);
    assert.ok(refined.includes('Converged: **no**'), refined);
    for (const tag of tags) assert.ok(refined.includes(`\`${tag}\``), `ranges added name ${tag}: ${refined}`);
    assert.ok(refined.includes(`### Coverage over time - r1: ${pct(compare.history[0].coverage)} - r2: ${pct(compare.history[1].coverage)}`), refined);
    const refineNote = `vs r1, coverage ${pct(compare.before.coverage)} → ${pct(compare.after.coverage)}, ${compare.after.split} split`;
    await runsViewShows('refine done, and the loop back to annotate', [
      new RegExp(`^5\\. Refine: what changed ${refineNote.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
      /^3\. Annotate the hot code with NVTX next · /]);
    h = history();
    assert.deepEqual(h[0].notes.slice(-1).map((n) => [n.kind, n.text]), [['decision', `flow refine: ${refineNote}`]]);
    assert.ok(h[0].stats && h[0].stats.coverage === compare.after.coverage, JSON.stringify(h[0].stats));
    await page.screenshot({ path: path.join(OUT, 'e2e-flow.png') });
  });
});
