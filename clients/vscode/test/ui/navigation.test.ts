/* Navigation like Nsight Systems and Perfetto, in headless Chromium against a
 * real server, asserting on what is drawn: search steps through every match
 * in time order (the counter, the view, the current match outlined), a drag
 * on the time axis selects a range whose analyses equal analysis/run's, the
 * search kinds find CUDA API calls and copies (outlines cached by window), the
 * wheel pans and Ctrl+wheel zooms at the cursor, W/A, double-click zooms to a
 * slice, F fits, `?` lists the keys, and a finding's "Show in timeline" marks
 * its evidence window. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHarness, CHROMIUM, type Harness } from './harness';
import { serverBinary, smallProfile, NO_SERVER, NO_PROFILE, CLIENT_ROOT } from '../helpers';

const bin = serverBinary();
const RESULTS = path.join(CLIENT_ROOT, 'test-results');
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: Harness | undefined;
const GUTTER = 210, AXIS_H = 22;

before(async () => {
  if (skip) return;
  const profile = smallProfile();
  if (!profile) { skip = NO_PROFILE; return; }
  hx = await startHarness(bin!, profile, { width: 1280, height: 900 });
  fs.mkdirSync(RESULTS, { recursive: true });
  await hx.page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
});
after(async () => { await hx?.close(); });

const view = () => hx!.page.evaluate(() => window.__nsysPerf.view!());
const settle = () => hx!.page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(r)), 150)));
/** Canvas pixels within `tol` of colour `rgb` (in device pixels, plot area only). */
const pixels = (rgb: [number, number, number], tol = 40) => hx!.page.evaluate(([c0, tl]) => {
  const c = document.querySelector('.timeline canvas') as HTMLCanvasElement, g = c.getContext('2d')!, dpr = window.devicePixelRatio || 1;
  const d = g.getImageData(Math.round(210 * dpr), Math.round(22 * dpr), c.width - Math.round(210 * dpr), c.height - Math.round(22 * dpr)).data;
  let n = 0;
  for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k]! - c0![0]) + Math.abs(d[k + 1]! - c0![1]) + Math.abs(d[k + 2]! - c0![2]) < tl!) n++;
  return n;
}, [rgb, tol] as const);
const home = async () => { await hx!.page.locator('.timeline canvas').focus(); await hx!.page.keyboard.press('Home'); await settle(); };

test('search: Enter / Shift+Enter step through every match in time order, zoom to it and outline it', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  await home();
  const ref = await client.requestUntyped<{ matches: number; instances: { total: number; items: Array<{ id: number; kind: string; start: number; end: number }> } }>(
    'search', { profileId: opened.profileId, query: 'nccl', limit: 1, instances: 3 });
  assert.ok(ref.instances.total > 3, 'the small profile has NCCL kernels');
  const n = ref.instances.total.toLocaleString('en-US');
  await page.keyboard.press('Control+f');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'search-input', 'Ctrl+F focuses the search');
  await page.keyboard.type('nccl');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`.search[data-counter="1 of ${n}"]`, { timeout: 15_000 });
  for (const [i, key] of [[1, 'Enter'], [2, 'Enter'], [1, 'Shift+Enter']] as const) {
    await page.keyboard.press(key);
    await page.waitForSelector(`.search[data-counter="${i + 1} of ${n}"]`, { timeout: 15_000 });
    const m = ref.instances.items[i]!;
    assert.equal(await page.getAttribute('.timeline', 'data-match'), `${m.kind}:${m.id}`);
    const v = await view();
    assert.ok(v.start <= m.start && m.end <= v.end && v.end - v.start < (m.end - m.start) * 3 + 2000, `zoomed to the match: ${JSON.stringify(v)} ${m.start}..${m.end}`);
  }
  await settle();
  await page.waitForFunction(() => Number((document.querySelector('.timeline') as HTMLElement).dataset.matches) >= 1);
  await settle();
  const now = await pixels([255, 159, 28]);
  assert.ok(now > 30, `the current match is outlined (${now} px)`);
  await page.screenshot({ path: path.join(RESULTS, 'search-match.png') });
  /* a query with no match says so; Escape clears the outlines */
  await page.fill('.search-input', 'no_such_kernel_zz');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.search[data-counter="no matches"]', { timeout: 15_000 });
  await page.keyboard.press('Escape');
  await settle();
  assert.equal(await pixels([255, 159, 28]), 0, 'no match outlined after Escape');
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});

test('search kinds: CUDA API calls and copies are found, zoomed to and outlined; pans inside the window fetched ask nothing', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  await home();
  for (const [label, kind, query] of [['CUDA API', 'api', 'cudaMemcpy'], ['memcpy', 'memcpy', 'HtoD']] as const) {
    const ref = await client.requestUntyped<{ instances: { total: number; items: Array<{ id: number; kind: string; start: number; end: number; track: string }> } }>(
      'search', { profileId: opened.profileId, query, kinds: [kind], limit: 1, instances: 2 });
    assert.ok(ref.instances.total >= 2, `the small profile has ${kind} ${query}`);
    await page.selectOption('.search-kinds', { label });
    await page.fill('.search-input', query);
    await page.press('.search-input', 'Enter');
    const n = ref.instances.total.toLocaleString('en-US');
    await page.waitForSelector(`.search[data-counter="1 of ${n}"]`, { timeout: 15_000 });
    await page.press('.search-input', 'Enter');
    await page.waitForSelector(`.search[data-counter="2 of ${n}"]`, { timeout: 15_000 });
    const m = ref.instances.items[1]!;
    assert.equal(await page.getAttribute('.timeline', 'data-match'), `${kind}:${m.id}`);
    const v = await view();
    assert.ok(v.start <= m.start && m.end <= v.end, `zoomed to the ${kind}: ${JSON.stringify(v)} ${m.start}..${m.end}`);
    await page.waitForFunction(() => Number((document.querySelector('.timeline') as HTMLElement).dataset.matches) >= 1);
    await settle();
    const now = await pixels([255, 159, 28]);
    assert.ok(now > 30, `the current ${kind} is outlined (${now} px)`);
    if (kind === 'api') await page.screenshot({ path: path.join(RESULTS, 'search-api.png') });
  }
  /* the outlines of views inside the window fetched (three views wide) ask nothing */
  await settle();
  const fetches = () => page.evaluate(() => Number((document.querySelector('.search') as HTMLElement).dataset.fetches));
  const before = await fetches();
  assert.ok(before >= 1, `the outlines were fetched (${before})`);
  await page.locator('.timeline canvas').focus();
  for (const k of ['d', 'a', 'a']) { await page.keyboard.press(k); await settle(); }
  assert.equal(await fetches(), before, 'pans inside the cached window ask nothing');
  await page.selectOption('.search-kinds', { index: 0 });
  await page.fill('.search-input', '');
  await page.press('.search-input', 'Escape');
  await settle();
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});

test('a drag on the time axis selects a range: shaded, its duration, and the analyses of that window', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  await home();
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const v = await view();
  const x0 = GUTTER + 200, x1 = GUTTER + 520;
  await page.mouse.move(box.x + x0, box.y + 10);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(box.x + x0 + ((x1 - x0) * i) / 8, box.y + 10);
  await page.mouse.up();
  const r = JSON.parse((await page.getAttribute('.timeline', 'data-range'))!) as { start: number; end: number };
  const per = (v.end - v.start) / (box.width - GUTTER);
  assert.ok(Math.abs(r.start - (v.start + 200 * per)) <= per && Math.abs(r.end - (v.start + 520 * per)) <= per, JSON.stringify(r));
  await page.waitForSelector('.range-panel[data-loaded="true"]', { timeout: 20_000 });
  const want = await client.requestUntyped<{ summary: { kernelCount: number } }>('analysis/run',
    { profileId: opened.profileId, name: 'top_kernels', params: { start: Math.round(r.start), end: Math.round(r.end), limit: 5 } });
  assert.equal(await page.getAttribute('.range-panel', 'data-kernels'), String(want.summary.kernelCount));
  assert.ok(want.summary.kernelCount > 0, 'the range has kernels');
  const text = (await page.textContent('.range-panel'))!;
  for (const w of ['Kernels', 'Overlap', 'Idle gaps', 'Launches', 'Top kernels in the range']) assert.ok(text.includes(w), w);
  /* the panel asks for summaries only (limit 1, no per-iteration rows): its numbers are those of the full analyses */
  const full = (name: string) => client.requestUntyped<{ summary: Record<string, unknown> }>('analysis/run',
    { profileId: opened.profileId, name, params: { start: Math.round(r.start), end: Math.round(r.end) } });
  const gaps = (await full('gpu_idle_gaps')).summary.devices as Array<{ gapCount: number }>;
  const launched = Number((await full('kernel_launch_overhead')).summary.launchedKernels);
  assert.ok(text.includes(`${gaps.reduce((a, d) => a + Number(d.gapCount), 0).toLocaleString('en-US')} gaps`), text);
  assert.ok(launched > 0 && text.includes(`${launched.toLocaleString('en-US')} kernels launched`), text);
  await settle();
  assert.ok(await pixels([0, 127, 212], 60) > 200, 'the range is shaded and edged');
  await page.screenshot({ path: path.join(RESULTS, 'range.png') });
  /* F fits the view to the range; Esc clears it */
  await page.locator('.timeline canvas').focus();
  await page.keyboard.press('f');
  const f = await view();
  assert.ok(Math.abs(f.start - r.start) < 1 && Math.abs(f.end - r.end) < 1, `F fits: ${JSON.stringify(f)}`);
  await page.keyboard.press('Escape');
  assert.equal(await page.getAttribute('.timeline', 'data-range'), '');
});

test('input: the wheel pans, Ctrl+wheel zooms at the cursor, W/A, double-click zooms to a slice, ? lists the keys', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  await home();
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const px = GUTTER + 300, y = box.y + AXIS_H + 11;
  await page.mouse.move(box.x + px, y);
  /* zoom first (Ctrl+wheel), keeping the time under the cursor */
  const v0 = await view();
  const at0 = v0.start + ((px - GUTTER) / (box.width - GUTTER)) * (v0.end - v0.start);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -400);
  await page.keyboard.up('Control');
  await settle();
  const v1 = await view();
  assert.ok(v1.end - v1.start < (v0.end - v0.start) * 0.6, 'Ctrl+wheel zooms in');
  const at1 = v1.start + ((px - GUTTER) / (box.width - GUTTER)) * (v1.end - v1.start);
  assert.ok(Math.abs(at1 - at0) < (v1.end - v1.start) / 200, `the time under the cursor stays: ${at0} ${at1}`);
  await page.mouse.wheel(0, 200);
  await settle();
  const v2 = await view();
  assert.ok(Math.abs((v2.end - v2.start) - (v1.end - v1.start)) < 1 && v2.start > v1.start, 'the wheel pans');
  await page.locator('.timeline canvas').focus();
  await page.keyboard.press('a');
  const v3 = await view();
  assert.ok(v3.start < v2.start && Math.abs((v3.end - v3.start) - (v2.end - v2.start)) < 1, 'A pans left');
  await page.keyboard.press('w');
  const v4 = await view();
  assert.ok(v4.end - v4.start < (v3.end - v3.start) * 0.7, 'W zooms in');
  /* double-click a kernel: the view frames it */
  await settle();
  let hit: number | undefined, hx0 = 0;
  for (let x = GUTTER + 5; x < box.width - 5 && hit === undefined; x += 4) {
    hit = await page.evaluate(([a, b]) => window.__nsysPerf.probe!(a!, b!), [x, AXIS_H + 11 + 22]);
    hx0 = x;
  }
  if (hit !== undefined) {
    await page.mouse.dblclick(box.x + hx0, box.y + AXIS_H + 11 + 22);
    await settle();
    const d = await hx!.client.requestUntyped<{ start: number; end: number }>('kernel/details', { profileId: hx!.opened.profileId, kernelId: hit });
    const v5 = await view();
    assert.ok(v5.start <= Number(d.start) && Number(d.end) <= v5.end && v5.end - v5.start <= Math.max(1000, (Number(d.end) - Number(d.start)) * 1.5), `double-click frames the slice: ${JSON.stringify(v5)}`);
  }
  /* ? shows the keys, Esc hides them */
  await page.locator('.timeline canvas').focus();
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('.help-overlay'), true);
  const help = (await page.textContent('.help-overlay'))!;
  for (const w of ['Ctrl + wheel', 'W / S', 'A / D', 'Enter / Shift + Enter', 'double-click']) assert.ok(help.includes(w), w);
  await page.screenshot({ path: path.join(RESULTS, 'keys.png') });
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('.help-overlay'), false);
});

test('a finding\'s Show in timeline zooms to its evidence window and marks it', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  const rep = await client.requestUntyped<{ findings: Array<{ evidence: { window: { start: number; end: number } } }> }>('report/generate', { profileId: opened.profileId });
  if (!rep.findings.length) return t.skip('no findings in the small profile');
  await page.click('[role=tab]:has-text("Findings")');
  await page.waitForSelector('.finding-show', { timeout: 30_000 });
  await page.click('.finding-show');
  const w = rep.findings[0]!.evidence.window;
  const r = JSON.parse((await page.getAttribute('.timeline', 'data-range'))!) as { start: number; end: number };
  assert.equal(r.start, Number(w.start));
  assert.equal(r.end, Math.max(Number(w.end), Number(w.start) + 1));
  const v = await view();
  assert.ok(v.start <= r.start && r.end <= v.end, 'the window is in view');
  await page.waitForSelector('.range-panel[data-loaded="true"]', { timeout: 20_000 });
});
