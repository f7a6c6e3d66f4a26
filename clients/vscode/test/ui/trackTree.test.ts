/* The track tree in the webview (client/trackTree): GPU › utilisation ›
 * streams, process › thread › NVTX (stacked, expandable) and CUDA API rows;
 * clicking a group collapses it, Alt+click hides a row, Shift+click pins it,
 * the gutter's edge drags, and a colour legend is shown. Asserts on what is
 * drawn (pixels per row) and keeps a screenshot. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { harnessPerFile } from './harness';
import { CLIENT_ROOT } from '../helpers';

const RESULTS = path.join(CLIENT_ROOT, 'test-results');
const AXIS_H = 22, ROW_H = 22;
const ui = harnessPerFile({ width: 1280, height: 1100 });
before(() => { fs.mkdirSync(RESULTS, { recursive: true }); });

const rows = () => ui.hx!.page.evaluate(() => window.__nsysPerf.rowIds!());
/** Whether row i (its plot part) has anything drawn, once every request is answered. */
async function drawn(i: number): Promise<boolean> {
  const { page } = ui.hx!;
  await page.waitForFunction(() => window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined));
  await page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(r)), 200)));
  return page.evaluate((row) => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!, gutter = Number(el.dataset.gutter ?? 210);
    const y = Math.round((22 + row * 22 + 11 - el.scrollTop) * dpr);
    const d = g.getImageData(Math.round((gutter + 2) * dpr), y, c.width - Math.round((gutter + 2) * dpr), 1).data;
    const bg = Array.from(g.getImageData(Math.round((gutter - 1) * dpr), Math.round(12 * dpr), 1, 1).data).join();
    for (let k = 0; k < d.length; k += 4) if ([d[k], d[k + 1], d[k + 2], d[k + 3]].join() !== bg) return true;
    return false;
  }, i);
}
async function clickLabel(i: number, modifiers: Array<'Alt' | 'Shift'> = []): Promise<void> {
  const { page } = ui.hx!;
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const top = await page.evaluate(() => document.querySelector('.timeline')!.scrollTop);
  for (const m of modifiers) await page.keyboard.down(m);
  await page.mouse.click(box.x + 60, box.y + AXIS_H + i * ROW_H + ROW_H / 2 - top);
  for (const m of modifiers) await page.keyboard.up(m);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
}

test('track tree: GPU › utilisation › streams, process › thread › NVTX and CUDA API; collapse, expand, hide, pin, gutter, legend', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  let ids = await rows();
  assert.equal(ids[0], 'gpu:0', 'a GPU first: its utilisation row');
  assert.ok(ids[1]!.startsWith('gpu:0:'), 'then its streams');
  const proc = ids.findIndex((k) => k.startsWith('proc:'));
  assert.ok(proc > 0 && ids[proc + 1]!.startsWith('thread:'), 'process › thread');
  const api = ids.findIndex((k) => k.startsWith('api:'));
  const nvtx = ids.findIndex((k) => k.startsWith('nvtx:'));
  assert.ok(api > proc && nvtx > proc && nvtx < api, `NVTX then CUDA API under the thread: ${ids.join(' ')}`);
  assert.ok(await drawn(0), 'the utilisation row is drawn');
  await page.evaluate((y) => { document.querySelector('.timeline')!.scrollTop = y; }, Math.max(0, (api - 3) * ROW_H));
  assert.ok(await drawn(api), 'the CUDA API row is drawn');
  assert.ok(await drawn(nvtx), 'the NVTX row (depth 0) is drawn');
  /* expand the thread's NVTX: its deeper depths come in as rows */
  const before = ids.length;
  await clickLabel(nvtx);
  ids = await rows();
  assert.ok(ids.length > before && ids[nvtx + 1]!.startsWith('nvtx:'), 'NVTX expanded into depth rows');
  assert.ok(await drawn(nvtx + 1), 'depth 1 drawn');
  await clickLabel(nvtx);
  assert.equal((await rows()).length, before, 'and collapsed again');
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 0; });
  /* collapse GPU 0: its streams go, its row stays drawn */
  const streams0 = ids.filter((k) => k.startsWith('gpu:0:')).length;
  await clickLabel(0);
  ids = await rows();
  assert.equal(ids.filter((k) => k.startsWith('gpu:0:')).length, 0, 'GPU 0 collapsed');
  assert.equal(ids.length, before - streams0 - 1, 'its streams and projection row gone');
  assert.ok(await drawn(0), 'the collapsed GPU still draws its streams merged');
  await clickLabel(0);
  /* Alt+click hides a stream; "Show hidden" brings it back */
  ids = await rows();
  const hiddenKey = ids[2]!;
  await clickLabel(2, ['Alt']);
  assert.ok(!(await rows()).includes(hiddenKey), 'hidden');
  assert.equal(await page.textContent('button[aria-label="Show hidden rows"]'), 'Show hidden (1)');
  await page.click('button[aria-label="Show hidden rows"]');
  assert.ok((await rows()).includes(hiddenKey), 'shown again');
  assert.equal(await page.isHidden('button[aria-label="Show hidden rows"]'), true);
  /* Shift+click pins the CUDA API row: it comes first */
  ids = await rows();
  const apiNow = ids.findIndex((k) => k.startsWith('api:'));
  await page.evaluate((y) => { document.querySelector('.timeline')!.scrollTop = y; }, Math.max(0, (apiNow - 3) * ROW_H));
  await clickLabel(apiNow, ['Shift']);
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 0; });
  assert.equal((await rows())[0], ids[apiNow], 'pinned first');
  assert.ok(await drawn(0), 'and drawn there');
  /* the gutter's edge drags */
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  await page.mouse.move(box.x + 207, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + 300, box.y + 100, { steps: 4 });
  await page.mouse.up();
  const gutter = Number(await page.getAttribute('.timeline', 'data-gutter'));
  assert.ok(gutter > 280 && gutter < 310, `gutter ${gutter} px`);
  assert.ok(await drawn(1), 'rows drawn right of the wider gutter');
  const legend = await page.$$eval('.legend-item', (els) => els.map((e) => e.textContent));
  assert.deepEqual(legend, ['kernel', 'NCCL', 'memcpy', 'memset', 'NVTX', 'CUDA API']);
  await page.screenshot({ path: path.join(RESULTS, 'track-tree.png') });
  assert.deepEqual(ui.hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});

/** The page's timeline/range requests from index `n` of its recent requests on. */
const rangesSince = (n: number) => ui.hx!.page.evaluate((n) => window.__nsysPerf.rpcTimings!.slice(n).filter((x) => x.method === 'timeline/range'), n);

test('closing or opening a group asks the server only for tracks that were not in view: the rows in view keep their data', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  await page.keyboard.press('Escape');
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 0; });
  await drawn(0);
  const group = (await page.evaluate(() => window.__nsysPerf.rowsAt!())).findIndex((r) => r.open === true);
  assert.ok(group >= 0 && group < 10, `an open group near the top (row ${group})`);
  for (const what of ['close a group', 'open it again']) {
    const before = await page.evaluate(() => ({ n: window.__nsysPerf.rpcTimings!.length, ids: window.__nsysPerf.visibleRowIds!(), rows: window.__nsysPerf.rowIds!().length }));
    await clickLabel(group);
    assert.notEqual((await rows()).length, before.rows, `${what}: the rows changed`);
    assert.ok(await drawn(group) && await drawn(group + 1), `${what}: rows drawn`);
    /* at the view's resolution: the idle prefetch asks the next zoom levels' tiles for the rows in view too */
    const res = Number(await page.getAttribute('.timeline', 'data-resolution'));
    const asked = (await rangesSince(before.n)).filter((x) => (Number(x.params.end) - Number(x.params.start)) / 512 === res).flatMap((x) => x.params.tracks as string[]);
    const again = asked.filter((id) => before.ids.includes(id));
    assert.deepEqual(again, [], `${what}: tracks in view before were not asked again (${asked.length} asked)`);
  }
});

test('zoom steps faster than the server answers: the superseded steps\' tile requests are cancelled', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 0; });
  await drawn(0);
  const n = await page.evaluate(() => window.__nsysPerf.rpcTimings!.length);
  const release = ui.hx!.hold('timeline/range');
  await page.locator('.timeline canvas').focus();
  for (let i = 0; i < 5; i++) { await page.keyboard.press('+'); await page.evaluate(() => new Promise((r) => requestAnimationFrame(r))); }
  const released = await page.evaluate(() => performance.now());
  release();
  assert.ok(await drawn(0), 'the last step drawn');
  const res = Number(await page.getAttribute('.timeline', 'data-resolution'));
  const ranges = (await rangesSince(n)).filter((x) => x.sent < released); /* after: the idle prefetch of the next levels */
  const cancelled = ranges.filter((x) => x.cancelled), kept = ranges.filter((x) => !x.cancelled);
  assert.ok(cancelled.length > 0, `some of ${ranges.length} requests cancelled`);
  for (const x of kept) assert.equal((Number(x.params.end) - Number(x.params.start)) / 512, res, 'what was not cancelled is the last step\'s tiles');
  assert.ok(!ui.hx!.logs.some((l) => /timeline\/range failed/.test(l)), 'a cancellation is not reported as a failure');
  await page.keyboard.press('Home');
});
