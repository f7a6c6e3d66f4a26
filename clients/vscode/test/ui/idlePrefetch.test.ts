/* What the timeline holds while the view rests (TimelineView.prefetchIdle):
 * a Ctrl+wheel zoom in or out by one level, and opening a closed NVTX group,
 * draw their complete frame from held tiles, with no `timeline/range` sent
 * between the input and that frame. Asserts on the requests the page sent and
 * on what is drawn (the expanded depth row has pixels). */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { harnessPerFile } from './harness';
import { CLIENT_ROOT } from '../helpers';

const RESULTS = path.join(CLIENT_ROOT, 'test-results');
const AXIS_H = 22, ROW_H = 22;
const ui = harnessPerFile({ width: 1280, height: 900 });
before(() => { fs.mkdirSync(RESULTS, { recursive: true }); });

/** Waits until the idle prefetch of the view ran (more than `ran` ran in all), every request is
 * answered and none was sent for 400 ms. */
async function rested(ran = 0): Promise<void> {
  const { page } = ui.hx!;
  await page.waitForFunction((ran) => {
    if ((window.__nsysPerf.idle?.ran ?? 0) <= ran) return false;
    const t = window.__nsysPerf.rpcTimings!;
    const w = window as unknown as { __restN?: number; __restAt?: number };
    if (w.__restN !== t.length || t.some((x) => x.settled === undefined)) { w.__restN = t.length; w.__restAt = performance.now(); return false; }
    return performance.now() - w.__restAt! > 400;
  }, ran, { timeout: 30_000, polling: 50 });
}

/** Runs `input`, then waits for the frame that completes it; returns the `timeline/range`
 * requests for that frame's tiles the page sent from the input until then, and its resolution. */
async function untilComplete(input: () => Promise<void>): Promise<{ sent: string[]; resolution: number }> {
  const { page } = ui.hx!;
  await page.evaluate(() => {
    const p = window.__nsysPerf, w = window as unknown as { __probe?: { n: number; from: number; sent?: string[] } };
    const probe = (w.__probe = { n: p.inputToComplete.length, from: performance.now() });
    p.onFrame = () => {
      if (p.inputToComplete.length > probe.n && !('sent' in probe)) {
        /* the requests that frame could have waited for: its view's tiles at its resolution for
         * tracks its rows draw (the idle prefetch for the next input, e.g. the tracks behind
         * other closed groups, may already have gone out meanwhile: not counted) */
        const v = p.view!(), res = Number(document.querySelector<HTMLElement>('.timeline')!.dataset.resolution);
        const shown = new Set(p.visibleRowIds!());
        (probe as { sent?: string[] }).sent = p.rpcTimings!.filter((x) => {
          const q = x.params as { start: number; end: number; width: number; tracks: string[] };
          return x.method === 'timeline/range' && x.sent >= probe.from && (q.end - q.start) / q.width === res && q.end > v.start && q.start < v.end
            && q.tracks.some((id) => shown.has(id));
        }).map((x) => JSON.stringify(x.params));
      }
    };
  });
  await input();
  await page.waitForFunction(() => (window as unknown as { __probe: { sent?: string[] } }).__probe.sent !== undefined, undefined, { timeout: 30_000 });
  return page.evaluate(() => {
    window.__nsysPerf.onFrame = undefined;
    return { sent: (window as unknown as { __probe: { sent: string[] } }).__probe.sent, resolution: Number(document.querySelector<HTMLElement>('.timeline')!.dataset.resolution) };
  });
}

test('idle prefetch: a Ctrl+wheel zoom step in and out draws complete from held tiles, no request', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const gutter = Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210));
  await page.mouse.move(box.x + gutter + (box.width - gutter) * 0.37, box.y + AXIS_H + ROW_H * 1.5);
  let resolution = Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.resolution));
  const wheel = (dy: number) => async () => { await page.keyboard.down('Control'); await page.mouse.wheel(0, dy); await page.keyboard.up('Control'); };
  let levels = 0, ran = 0;
  for (const [step, dy] of [[1, -380], [2, -380], [3, -380], [4, 380], [5, 380]] as const) { /* 1.2^3.8: about 2x, one level */
    await rested(ran);
    ran = await page.evaluate(() => window.__nsysPerf.idle?.ran ?? 0);
    const r = await untilComplete(wheel(dy));
    if (r.resolution !== resolution) levels++;
    assert.deepEqual(r.sent, [], `zoom step ${step} (${resolution} -> ${r.resolution} ns/px) drew its complete frame from held tiles`);
    resolution = r.resolution;
  }
  assert.ok(levels >= 4, `the steps changed the level (${levels} of 5 did)`);
  await page.screenshot({ path: path.join(RESULTS, 'idle-prefetch-zoom.png') });
});

test('idle prefetch: opening a closed NVTX group draws its depth rows from held tiles, no request', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.keyboard.press('Home');
  const rowsAt = () => page.evaluate(() => window.__nsysPerf.rowsAt!());
  const rows = await rowsAt();
  const nvtx = rows.findIndex((r) => r.key.startsWith('nvtx:') && r.open === false);
  assert.ok(nvtx >= 0, `a closed NVTX group: ${rows.map((r) => r.key).join(' ')}`);
  const ran = await page.evaluate(() => window.__nsysPerf.idle?.ran ?? 0);
  await page.evaluate((y) => { document.querySelector('.timeline')!.scrollTop = y; }, Math.max(0, (nvtx - 2) * ROW_H + 1));
  await rested(ran);
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const y = (await rowsAt())[nvtx]!.y;
  const r = await untilComplete(() => page.mouse.click(box.x + 40, box.y + y + ROW_H / 2));
  const after = await rowsAt();
  assert.equal(after[nvtx]!.open, true, 'the group opened');
  assert.ok(after[nvtx + 1]!.key.startsWith('nvtx:'), 'its depth rows shown');
  assert.deepEqual(r.sent, [], 'the expand drew its complete frame from held tiles');
  /* the depth row has something drawn in the plot */
  const drawnRow = await page.evaluate((yy) => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!, gutter = Number(el.dataset.gutter ?? 210);
    const d = g.getImageData(Math.round((gutter + 2) * dpr), Math.round(yy * dpr), c.width - Math.round((gutter + 2) * dpr), 1).data;
    const bg = Array.from(g.getImageData(Math.round((gutter - 1) * dpr), Math.round(12 * dpr), 1, 1).data).join();
    for (let k = 0; k < d.length; k += 4) if ([d[k], d[k + 1], d[k + 2], d[k + 3]].join() !== bg) return true;
    return false;
  }, after[nvtx + 1]!.y + ROW_H / 2);
  assert.ok(drawnRow, 'the first depth row is drawn');
  await page.screenshot({ path: path.join(RESULTS, 'idle-prefetch-expand.png') });
});

/** The `timeline/range` requests sent since `from` (performance.now()) at resolution `res`: their tile starts. */
async function rangesAt(from: number, res: number): Promise<number[]> {
  return ui.hx!.page.evaluate(({ from, res }) => window.__nsysPerf.rpcTimings!.filter((x) => {
    const q = x.params as { start: number; end: number; width: number };
    return x.method === 'timeline/range' && x.sent >= from && (q.end - q.start) / q.width === res;
  }).map((x) => (x.params as { start: number }).start), { from, res });
}

test('idle prefetch: the next level in is asked around the pointer only, and a step there completes from it', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.keyboard.press('Home');
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const gutter = Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210));
  const plotW = box.width - gutter;
  const y = box.y + AXIS_H + ROW_H * 1.5;
  await page.mouse.move(box.x + gutter + plotW * 0.1, y);
  let ran = await page.evaluate(() => window.__nsysPerf.idle?.ran ?? 0);
  /* a view no earlier test showed (four levels in from the full range, at the left), as wide as its
   * level allows: the next level in across the whole view is then about twice what a step at the pointer can show */
  const full = await page.evaluate(() => window.__nsysPerf.view!());
  const r0 = Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.resolution));
  const res = r0 / 16, plot = Math.round(plotW);
  const start = Math.round(full.start + 0.05 * (full.end - full.start)), span = Math.floor(0.98 * res * plot);
  const from = await page.evaluate(() => performance.now());
  await page.evaluate(({ s, e }) => window.__nsysPerf.show!(String(s), String(e)), { s: start, e: start + span });
  await rested(ran);
  ran = await page.evaluate(() => window.__nsysPerf.idle?.ran ?? 0);
  const v = await page.evaluate(() => window.__nsysPerf.view!());
  assert.deepEqual([v.start, v.end], [start, start + span], 'the view shown');
  assert.equal(Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.resolution)), res, 'its level');
  const tileNs = (res / 2) * 512;
  const asked = new Set(await rangesAt(from, res / 2));
  const wholeView = Math.floor((v.end - 1) / tileNs) - Math.floor(v.start / tileNs) + 1;
  const pointerAt = v.start + 0.1 * (v.end - v.start);
  /* a step in that reaches the next level shows at most plot px of it, the pointer keeping its place */
  const reach = (res / 2) * plot, lo = pointerAt - 0.1 * reach, hi = pointerAt + 0.9 * reach;
  assert.ok(asked.has(Math.floor(pointerAt / tileNs) * tileNs), `the tile under the pointer at the next level was asked (${[...asked].join(' ')})`);
  for (const t0 of asked) assert.ok(t0 < hi + 1 && t0 + tileNs > lo - 1, `asked tile ${t0} is where a step at the pointer can show (${lo}-${hi})`);
  assert.ok(asked.size < wholeView, `fewer tiles than the whole view at the next level (${asked.size} of ${wholeView})`);
  /* a step there completes from them */
  const r = await untilComplete(async () => { await page.keyboard.down('Control'); await page.mouse.wheel(0, -380); await page.keyboard.up('Control'); });
  assert.equal(r.resolution, res / 2, 'the step went one level in');
  assert.deepEqual(r.sent, [], 'the step at the pointer drew its complete frame from held tiles');
});
