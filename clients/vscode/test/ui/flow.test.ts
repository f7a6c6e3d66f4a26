/* Launch ↔ kernel: selecting a kernel outlines its API call and draws the
 * flow arrow to it (pixels of the selection colour on the API row and on the
 * rows the arrow crosses); selecting that API call finds the kernel it
 * launched. Checked against kernel/details. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { harnessPerFile } from './harness';
import { CLIENT_ROOT } from '../helpers';

const RESULTS = path.join(CLIENT_ROOT, 'test-results');
const ui = harnessPerFile({ width: 1280, height: 1100 });
before(() => { fs.mkdirSync(RESULTS, { recursive: true }); });

interface FlowOp { id: number; trackId: string; start: number; end: number }
const settled = async () => {
  const { page } = ui.hx!;
  await page.waitForFunction(() => window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined));
  await page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(r)), 200)));
};

test('selecting a kernel draws the flow from its API call; selecting the call finds the kernel', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page, client, opened } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  /* a kernel on GPU 0 stream 7 launched by the main thread */
  let kernelId = -1, d: Record<string, any> = {};
  for (let id = 20; id < 400 && kernelId < 0; id += 7) {
    d = await client.requestUntyped<Record<string, any>>('kernel/details', { profileId: opened.profileId, kernelId: id });
    if (d.track === 'gpu:0:7' && d.api && d.api.tid === d.api.pid && d.kind === 'kernel') kernelId = id;
  }
  assert.ok(kernelId >= 0, 'a kernel of the main thread on gpu:0:7');
  const pad = 200_000;
  await page.evaluate(([s, e]) => window.__nsysPerf.show!(s!, e!), [String(Number(d.api.start) - pad), String(Number(d.end) + pad)]);
  await settled();
  ui.hx!.post({ type: 'reveal', kernelId });
  await page.waitForFunction(() => (document.querySelector('.timeline') as HTMLElement).dataset.flow, undefined, { timeout: 15_000 });
  await page.evaluate(([s, e]) => window.__nsysPerf.show!(s!, e!), [String(Number(d.api.start) - pad), String(Number(d.end) + pad)]);
  await settled();
  const flow = JSON.parse((await page.getAttribute('.timeline', 'data-flow'))!) as { api: FlowOp; ops: FlowOp[] };
  assert.equal(flow.api.id, d.api.id, 'the launching call of kernel/details');
  assert.equal(flow.api.trackId, `api:${d.api.pid}:${d.api.tid}`);
  assert.deepEqual(flow.ops.map((o) => o.id), [kernelId]);
  const rows = await page.evaluate(() => window.__nsysPerf.rowIds!());
  const apiRow = rows.indexOf(flow.api.trackId), kRow = rows.indexOf('gpu:0:7'); /* the stream's own row */
  assert.ok(apiRow > kRow && kRow >= 0, `rows ${kRow} and ${apiRow}`);
  /* pixels of the selection colour (the default focus border, rgb(0,127,212)) per row */
  const marks = await page.evaluate(() => {
    const c = document.querySelector('.timeline canvas') as HTMLCanvasElement, g = c.getContext('2d')!, dpr = window.devicePixelRatio || 1;
    const top = (document.querySelector('.timeline') as HTMLElement).scrollTop;
    const out: number[] = [];
    for (let i = 0; 22 + (i + 1) * 22 - top <= c.height / dpr; i++) {
      const d = g.getImageData(Math.round(210 * dpr), Math.round((22 + i * 22 - top) * dpr), c.width - Math.round(210 * dpr), Math.round(22 * dpr)).data;
      let n = 0;
      for (let k = 0; k < d.length; k += 4) if (Math.abs(d[k]! - 0) + Math.abs(d[k + 1]! - 127) + Math.abs(d[k + 2]! - 212) < 40) n++;
      out.push(n);
    }
    return out;
  });
  await page.screenshot({ path: path.join(RESULTS, 'flow-kernel.png') });
  assert.ok(marks[apiRow]! > 20, `the API call outlined: ${marks.join(',')}`);
  assert.ok(marks[kRow]! > 20, 'the kernel outlined');
  for (let i = kRow + 1; i < apiRow; i++) assert.ok(marks[i]! > 0, `the arrow crosses row ${i}: ${marks.join(',')}`);
  /* click the API call: the flow lists the kernel */
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const apiStart = Number(d.api.start), apiEnd = Number(d.api.end), v0 = apiStart - pad, v1 = Number(d.end) + pad;
  const px = 210 + (((apiStart + apiEnd) / 2 - v0) / (v1 - v0)) * (box.width - 210);
  await page.mouse.click(box.x + px, box.y + 22 + apiRow * 22 + 11);
  await page.waitForFunction((k) => {
    const f = (document.querySelector('.timeline') as HTMLElement).dataset.flow;
    return f && JSON.parse(f).api.trackId.startsWith('api:') && JSON.parse(f).ops.some((o: { id: number }) => o.id === k);
  }, kernelId, { timeout: 15_000 });
  const back = JSON.parse((await page.getAttribute('.timeline', 'data-flow'))!) as { api: FlowOp; ops: FlowOp[] };
  assert.equal(back.api.id, d.api.id, 'the clicked call');
  for (const o of back.ops) {
    const od = await client.requestUntyped<Record<string, any>>('kernel/details', { profileId: opened.profileId, kernelId: o.id });
    assert.equal(od.api.id, d.api.id, `op ${o.id} was launched by the call`);
  }
  await settled();
  await page.screenshot({ path: path.join(RESULTS, 'flow-api.png') });
  assert.deepEqual(ui.hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});
