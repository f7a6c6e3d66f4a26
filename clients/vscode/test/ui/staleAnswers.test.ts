/* What crosses VS Code's relay per zoom step.
 * The page's tile requests of one task go to the host as one `batch`
 * (webview/rpc's HostBridge): one message for a zoom step's tiles.
 * Answers for views already left: a zoom step cancels the previous step's
 * `timeline/range` requests; when the server had answered them already, the
 * host posts a bare cancellation instead of the reply (no text to encode,
 * relay and parse), and the page drops any answer to a request it no longer
 * waits for before parsing it (client/bridgeCore, webview/main.ts). Asserts on
 * what the host posted and on the frame drawn after the last step. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harnessPerFile } from './harness';

const AXIS_H = 22, ROW_H = 22;
const ui = harnessPerFile({ width: 1280, height: 700 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The first view drawn and its idle prefetch settled, the pointer on the first GPU row at 61% of the plot. */
async function settledAtPointer(): Promise<void> {
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  await sleep(600); /* the idle prefetch of the first view */
  await page.waitForFunction(() => window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined), undefined, { timeout: 30_000 });
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const gutter = Number(await page.evaluate(() => document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210));
  await page.mouse.move(box.x + gutter + (box.width - gutter) * 0.61, box.y + AXIS_H + ROW_H * 1.5);
}

test('zoom step: its tile requests go in one page → host message, drawn complete', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await settledAtPointer();
  const from = await page.evaluate(() => window.__nsysPerf.rpcTimings!.length);
  const receivedFrom = ui.hx!.received.length;
  const completes = await page.evaluate(() => window.__nsysPerf.inputToComplete.length);
  /* one step, deeper than the zoom level the idle prefetch holds: its tiles are asked for */
  await page.keyboard.down('Control'); await page.mouse.wheel(0, -2400); await page.keyboard.up('Control');
  await page.waitForFunction((n) => window.__nsysPerf.inputToComplete.length > n && window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined), completes, { timeout: 30_000 });
  /* the small profile's clock is under 2^53: the requests' times are the view's offsets (origin 0) */
  const { view, sent } = await page.evaluate((from) => ({ view: window.__nsysPerf.view!(),
    sent: window.__nsysPerf.rpcTimings!.slice(from).filter((x) => x.method === 'timeline/range')
      .map((x) => ({ id: x.id!, start: Number(x.params.start), end: Number(x.params.end), width: Number(x.params.width), sent: x.sent, settled: x.settled ?? NaN })) }), from);
  const inView = (x: { start: number; end: number }) => x.end > view.start && x.start < view.end;
  /* page → host: the step's requests (posted in one task) travel in one message, and they are the view's own tiles */
  const ids = new Set(sent.map((x) => x.id));
  const stepMsg = ui.hx!.received.slice(receivedFrom).find((m) => m.ids.some((id) => ids.has(id)));
  const own = sent.filter((x) => stepMsg?.ids.includes(x.id));
  assert.ok(own.length >= 2 && own.length === stepMsg!.ids.length, `the step's ${own.length} tile requests in one page → host message (${JSON.stringify(ui.hx!.received.slice(receivedFrom))})`);
  assert.ok(own.every(inView), `the step asked its view's tiles only (${JSON.stringify(own)}, view ${view.start}-${view.end})`);
  /* and the frame drawn from the step's answers: rows in view have kernels drawn */
  const drawnRows = await page.evaluate(() => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!, gutter = Number(el.dataset.gutter ?? 210);
    const bg = Array.from(g.getImageData(Math.round((gutter - 1) * dpr), Math.round(12 * dpr), 1, 1).data).join();
    let rows = 0;
    for (const r of window.__nsysPerf.rowsAt!()) {
      const y = Math.round((r.y + 11) * dpr);
      if (r.y < 22 || y >= c.height) continue;
      const d = g.getImageData(Math.round((gutter + 2) * dpr), y, c.width - Math.round((gutter + 2) * dpr), 1).data;
      for (let k = 0; k < d.length; k += 4) if ([d[k], d[k + 1], d[k + 2], d[k + 3]].join() !== bg) { rows++; break; }
    }
    return rows;
  });
  assert.ok(drawnRows > 0, `rows drawn after the step (${drawnRows})`);
});

test('stale answers: replies the page cancelled are not posted; the last step draws complete', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await settledAtPointer();
  const wheel = async (dy: number) => { await page.keyboard.down('Control'); await page.mouse.wheel(0, dy); await page.keyboard.up('Control'); };
  const from = await page.evaluate(() => window.__nsysPerf.rpcTimings!.length);
  const hostFrom = ui.hx!.requests.length;
  const completes = await page.evaluate(() => window.__nsysPerf.inputToComplete.length);
  /* the server answers every step at once; the host holds the answers until all steps were made */
  const release = ui.hx!.hold('timeline/range');
  for (let i = 0; i < 4; i++) { await wheel(-760); await sleep(150); }
  /* the host has every request the page sent, so every cancel before the last (a step's cancels go before its requests) */
  const sentByPage = () => page.evaluate((from) => window.__nsysPerf.rpcTimings!.slice(from).filter((x) => x.method === 'timeline/range').length, from);
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (ui.hx!.requests.slice(hostFrom).filter((r) => r.method === 'timeline/range').length >= await sentByPage()) break;
    await sleep(50);
  }
  await sleep(100);
  release();
  await page.waitForFunction((n) => window.__nsysPerf.inputToComplete.length > n && window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined), completes, { timeout: 30_000 });
  /* each request: cancelled by a later step, or answered with a reply (its `host` times come with the reply only) */
  const pageSide = await page.evaluate((from) => window.__nsysPerf.rpcTimings!.slice(from).filter((x) => x.method === 'timeline/range')
    .map((x) => (x.cancelled ? 'cancelled' : x.host ? 'answered' : 'failed')), from);
  const cancelled = pageSide.filter((c) => c === 'cancelled').length, kept = pageSide.filter((c) => c === 'answered').length;
  assert.ok(cancelled > 0, `the later steps cancelled some of the earlier steps' requests (${cancelled} of ${pageSide.length})`);
  /* the server answered every request (the hold is after its answer); a reply's text was posted only for those the page took */
  const hostSide = ui.hx!.requests.slice(hostFrom).filter((r) => r.method === 'timeline/range');
  const posted = hostSide.filter((r) => r.bytes !== undefined).length;
  assert.equal(posted, kept, `replies posted (${posted}) = replies the page took (${kept}; page: ${pageSide.join(' ')}; host forwarded ${hostSide.length})`);
  /* and the last step's frame has its tiles drawn */
  const drawn = await page.evaluate(() => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!, gutter = Number(el.dataset.gutter ?? 210);
    const y = Math.round((22 + 22 * 1.5) * dpr);
    const d = g.getImageData(Math.round((gutter + 2) * dpr), y, c.width - Math.round((gutter + 2) * dpr), 1).data;
    const bg = Array.from(g.getImageData(Math.round((gutter - 1) * dpr), Math.round(12 * dpr), 1, 1).data).join();
    let n = 0;
    for (let k = 0; k < d.length; k += 4) if ([d[k], d[k + 1], d[k + 2], d[k + 3]].join() !== bg) n++;
    return n;
  });
  assert.ok(drawn > 0, 'the first row has pixels drawn after the last step');
});

test('stale answers: an answer to a request the page does not wait for is dropped unparsed', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  const errorsBefore = ui.hx!.logs.filter((l) => l.startsWith('pageerror')).length;
  const dropped = await page.evaluate(async () => {
    const d0 = window.__nsysPerf.answersDropped!();
    /* the head of a reply, the rest cut off: parsing it would throw in the page */
    window.postMessage({ json: '{"type":"rpcResult","id":987654321,"result":{"tracks":[{"id":"k' }, '*');
    await new Promise((r) => setTimeout(r, 100));
    return window.__nsysPerf.answersDropped!() - d0;
  });
  assert.equal(dropped, 1, 'the answer was dropped');
  assert.deepEqual(ui.hx!.logs.filter((l) => l.startsWith('pageerror')).slice(errorsBefore), [], 'nothing in the page tried to parse it');
});
