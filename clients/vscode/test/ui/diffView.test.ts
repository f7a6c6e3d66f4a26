/* The diff view in headless Chromium against a real server: the two
 * timelines stay on one clock (their time axes are drawn pixel for pixel
 * alike) after a zoom or pan of either; a click on a delta moves both to its
 * evidence windows, outlined in each. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHROMIUM } from './harness';
import { startViewHarness, hasColour, frames, type ViewHarness } from './viewHarness';
import { generated } from './viewFixtures';
import { serverBinary, NO_SERVER, NO_PROFILE } from '../helpers';
import { loadDiffView } from '../../src/client/viewLoad';

const bin = serverBinary();
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: ViewHarness | undefined;
let ids: [string, string] = ['', ''];
const GUTTER = 210, AXIS_H = 22;

before(async () => {
  if (skip) return;
  /* a planted change: the new run's GEMMs take 1.5× longer (same seed: same jitter); epoch clocks (~1.78e18 ns: times beyond 2^53) */
  const a = generated('diff-base', ['--kernels', '400', '--seed', '1', '--epoch-clock']), b = generated('diff-new', ['--kernels', '400', '--seed', '1', '--epoch-clock', '--plant-slow-kernels', 'gemm', '--plant-factor', '1.5']);
  if (!a || !b) { skip = NO_PROFILE; return; }
  hx = await startViewHarness(bin!, async (c) => {
    const [x, y] = [await c.openProfile(a), await c.openProfile(b)];
    ids = [x.profileId, y.profileId];
    return loadDiffView(c, { ...x, title: 'base.sqlite' }, { ...y, title: 'new.sqlite' });
  });
  await hx.page.waitForFunction(() => document.querySelectorAll('.timeline[data-rendered="true"]').length === 2, undefined, { timeout: 30_000 });
});

after(async () => { await hx?.close(); });

/** The two canvases' time axes (the plot's part): their pixels, as text. */
async function axes(): Promise<[string, string]> {
  const { page } = hx!;
  await frames(page);
  return page.evaluate(({ g, a }) => [...document.querySelectorAll('canvas')].slice(0, 2).map((c) => {
    const dpr = window.devicePixelRatio || 1;
    const d = c.getContext('2d')!.getImageData(g * dpr, 0, c.width - g * dpr, a * dpr).data;
    let s = '';
    for (let i = 0; i < d.length; i += 4) s += d[i]! > 128 ? '1' : '0';
    return s;
  }) as [string, string], { g: GUTTER, a: AXIS_H });
}
const views = () => hx!.page.evaluate(() => window.__nsysViews!.diff!.views());

test('the two timelines stay aligned after a zoom or pan of either', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  const [b0, c0] = await axes();
  assert.equal(b0, c0, 'both axes alike at open');
  const boxes = await page.locator('canvas').evaluateAll((cs) => cs.map((c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; }));
  /* zoom the base timeline at a third of its plot */
  await page.mouse.move(boxes[0]!.x + GUTTER + 300, boxes[0]!.y + 40);
  await page.keyboard.down('Control'); /* Ctrl+wheel zooms (the plain wheel pans) */
  await page.mouse.wheel(0, -400);
  await page.keyboard.up('Control');
  await page.mouse.move(2, 2); /* off the canvases: no cursor line on an axis */
  const [v0, v1] = await views();
  assert.ok(v0!.start > 0, 'zoomed in, not at the start');
  assert.ok(Math.abs((v0!.end - v0!.start) - (v1!.end - v1!.start)) <= 1e-9 * (v0!.end - v0!.start), 'same span');
  const [b1, c1] = await axes();
  assert.notEqual(b1, b0, 'the zoom changed the axis');
  assert.equal(b1, c1, 'after zooming the base, the new timeline shows the same times at the same x');
  /* pan the new timeline by dragging right (to earlier times: the zoom left room before the view) */
  const y = boxes[1]!.y + 40, x = boxes[1]!.x + GUTTER + 200;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + 150, y, { steps: 5 });
  await page.mouse.up();
  await page.mouse.move(2, 2);
  const [b2, c2] = await axes();
  assert.notEqual(c2, c1, 'the pan changed the axis');
  assert.equal(b2, c2, 'after panning the new timeline, the base follows');
  const [w0, w1] = await views();
  assert.equal(w0!.start, w1!.start);
  const per = (w: typeof w0) => (w!.end - w!.start) / w!.width;
  assert.ok(Math.abs(per(w0) - per(w1)) <= 1e-9 * per(w0), 'same ns per pixel');
  /* an area selection dragged on the base's time axis is made on the new timeline too (one clock) */
  const ay = boxes[0]!.y + 6, ax = boxes[0]!.x + GUTTER + 100;
  await page.mouse.move(ax, ay);
  await page.mouse.down();
  await page.mouse.move(ax + 120, ay, { steps: 5 });
  await page.mouse.up();
  await page.mouse.move(2, 2);
  const ranges = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('[data-range]')].map((e) => e.dataset.range ?? ''));
  assert.equal(ranges.length, 2, 'two timelines');
  assert.ok(ranges[0], 'the base has an area selection');
  assert.equal(ranges[1], ranges[0], 'the new timeline has the same one');
});

test('clicking a delta moves both timelines to its evidence windows, outlined in each', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client } = hx!;
  /* independently of the view: profile/diff's top delta, its evidence on each run's clock, and the steady windows' starts */
  const diff = await client.request('profile/diff', { base: ids[0], compare: ids[1] });
  const top = diff.deltas[0]!;
  assert.match(top.key, /gemm/i, 'the planted change ranks first');
  const sides = [[diff.base.steadyWindow!.start, top.evidence.base!], [diff.compare.steadyWindow!.start, top.evidence.compare!]] as const;
  await page.locator('.deltas tbody tr').first().click();
  await page.waitForSelector('.view-diff[data-evidence="0"]', { timeout: 15_000 });
  await page.mouse.move(2, 2);
  await frames(page);
  const ev = await page.evaluate(() => window.__nsysViews!.diff!.evidence());
  const [v0, v1] = await views();
  assert.deepEqual([v0!.start, v0!.end], [v1!.start, v1!.end], 'both timelines show the same window');
  const heights = await page.locator('canvas').evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect().height));
  for (const [i, side] of (['base', 'compare'] as const).entries()) {
    const e = ev[side]!;
    const [at, w] = sides[i]!;
    assert.deepEqual(e, { start: Number(BigInt(w.start) - BigInt(at)), end: Number(BigInt(w.end) - BigInt(at)) }, `${side}: evidence on the steady-state-aligned clock`);
    assert.ok(e.start >= v0!.start && e.end <= v0!.end, `${side}: its evidence [${e.start}, ${e.end}] is in view [${v0!.start}, ${v0!.end}]`);
    const x = GUTTER + ((e.start - v0!.start) / (v0!.end - v0!.start)) * v0!.width;
    assert.ok(await hasColour(page, i, [255, 0, 255], { x0: x - 4, x1: x + 1, y0: AXIS_H, y1: heights[i]! }), `${side}: the outline is drawn at its evidence's start (x=${x.toFixed(1)})`);
    assert.ok(!(await hasColour(page, i, [255, 0, 255], { x0: GUTTER, x1: Math.max(GUTTER + 1, x - 8), y0: AXIS_H, y1: heights[i]! })), `${side}: nothing outlined left of it`);
  }
  assert.match((await page.textContent('.view-header .verdict')) ?? '', /slower/i, 'the verdict on top');
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
  if (process.env.NSYS_AI_UI_SHOTS) await page.screenshot({ path: path.join(process.env.NSYS_AI_UI_SHOTS, 'diff-view.png') });
});
