/* What waits for what. The page tells the host when its first complete frame
 * is drawn (the findings' report/generate waits for it: client/firstFrameGate).
 * A clicked kernel's details fill the Details panel as soon as kernel/details
 * answers, while its explanation (kernel/explain, seconds on a large profile)
 * is still on its way; the explanation follows when it arrives. A kernel the
 * pointer rests on has its explanation asked before the click (timeline
 * onIntent): the click shows it from what the page holds, with no
 * kernel/explain of its own; the host posts the page only the explanation's
 * fields it shows (client/pageExplain). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harnessPerFile } from './harness';

const ui = harnessPerFile();

test('the page tells the host of its first complete frame, once', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  await page.waitForFunction(() => window.__nsysPerf.firstFrameMs !== undefined);
  for (let i = 0; i < 50 && ui.hx!.firstFrames() === 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(ui.hx!.firstFrames(), 1, 'the bridge heard of the first frame');
  assert.equal(ui.hx!.logs.filter((l) => /^info \[webview\] first frame: \d+(\.\d)? ms$/.test(l)).length, 1, ui.hx!.logs.join('\n'));
  await page.keyboard.press('Home');
  await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
  assert.equal(ui.hx!.firstFrames(), 1, 'later frames do not tell it again');
});

test('Details shows the kernel\'s details before its explanation arrives', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page, client, opened } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  const kernelId = 42;
  const d = await client.requestUntyped<Record<string, unknown>>('kernel/details', { profileId: opened.profileId, kernelId });
  const release = ui.hx!.hold('kernel/explain');
  ui.hx!.post({ type: 'reveal', kernelId });
  await page.waitForSelector(`.details[data-kernel-id="${kernelId}"] > table.kv tr`, { timeout: 15_000 });
  const shown = await page.textContent('.details');
  assert.ok(shown!.includes(String(d.displayName ?? d.name)), `Details names the kernel: ${shown}`);
  assert.equal(await page.textContent('.details .explain'), 'Explaining…', 'the explanation is still on its way');
  release();
  await page.waitForSelector('.details .explain[data-loaded="true"]', { timeout: 30_000 });
  assert.ok((await page.locator('.details > table.kv tr').count()) > 0, 'the details stay');
});

test('the first frame is drawn from the tiles the host sent with init, without a round trip of its own', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  const r = await page.evaluate(() => {
    const p = window.__nsysPerf;
    const frameAt = p.openedAt! + p.firstFrameMs!;
    const c = document.querySelector<HTMLCanvasElement>('.timeline canvas')!;
    const gutter = Number(document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210);
    /* what the first frame drew: pixels of the plot (right of the gutter, under the axis) unlike the background at its corner */
    const ctx = c.getContext('2d')!, dpr = window.devicePixelRatio || 1;
    const img = ctx.getImageData(Math.ceil(gutter * dpr), Math.ceil(30 * dpr), c.width - Math.ceil(gutter * dpr), Math.floor(c.height - 30 * dpr)).data;
    const bg = [img[0], img[1], img[2]];
    let painted = 0;
    for (let i = 0; i < img.length; i += 4) if (Math.abs(img[i]! - bg[0]!) + Math.abs(img[i + 1]! - bg[1]!) + Math.abs(img[i + 2]! - bg[2]!) > 60) painted++;
    return {
      before: (p.rpcTimings ?? []).filter((x) => x.method === 'timeline/range' && x.sent <= frameAt).length,
      painted, pixels: img.length / 4,
    };
  });
  assert.equal(r.before, 0, 'the page asked no timeline/range before its first complete frame');
  assert.ok(r.painted > r.pixels / 50, `the first frame drew the rows' events (${r.painted} of ${r.pixels} plot pixels painted)`);
  assert.ok(!ui.hx!.logs.some((l) => /timeline\/range failed|pageerror/.test(l)), ui.hx!.logs.join('\n'));
});

test('a kernel the pointer rests on is explained before the click; the click shows it without a request', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page, client, opened, requests } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  /* a GPU op under the pointer: the first pixel of a row in view that probes to one */
  const spot = await page.evaluate(() => {
    const c = document.querySelector<HTMLCanvasElement>('.timeline canvas')!;
    const gutter = Number(document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210);
    for (const r of window.__nsysPerf.rowsAt!()) {
      if (r.y < 22 || r.y + 22 > c.clientHeight) continue;
      for (let px = gutter + 2; px < c.clientWidth; px += 3) {
        const id = window.__nsysPerf.probe!(px, r.y + 11);
        if (id !== undefined) return { px, py: r.y + 11, id };
      }
    }
    return undefined;
  });
  assert.ok(spot, 'a GPU op is drawn');
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const explains = () => requests.filter((r) => r.method === 'kernel/explain' && r.params.kernelId === spot.id);
  await page.mouse.move(box.x + spot.px, box.y + spot.py);
  await page.waitForFunction((id) => (window.__nsysPerf.rpcTimings ?? []).some((x) => x.method === 'kernel/explain' && x.params.kernelId === id && x.settled !== undefined),
    spot.id, { timeout: 15_000 });
  assert.equal(explains().length, 1, 'asked once, while the pointer rested on it');
  /* from here an explanation asked of the server would not come back until released */
  const release = ui.hx!.hold('kernel/explain');
  try {
    await page.mouse.down(); await page.mouse.up();
    await page.waitForSelector(`.details[data-kernel-id="${spot.id}"] .explain[data-loaded="true"]`, { timeout: 5_000 });
    const full = await client.explain(opened.profileId, { kernelId: spot.id });
    const shown = (await page.textContent('.details .explain'))!;
    assert.ok(shown.includes(full.displayName) && shown.includes(full.origin), `the explanation of ${spot.id} is shown: ${shown.slice(0, 200)}`);
    assert.equal(explains().length, 1, 'the click asked no kernel/explain of its own');
    /* what crossed to the page: the fields it shows, not the whole answer */
    const pageId = await page.evaluate((id) => window.__nsysPerf.rpcTimings!.find((x) => x.method === 'kernel/explain' && x.params.kernelId === id)!.id!, spot.id);
    const posted = ui.hx!.posted.find((p) => p.type === 'rpcResult' && p.ids.includes(pageId))!.bytes;
    assert.ok(posted > (full.markdown ?? '').length && posted < JSON.stringify(full).length / 2,
      `the page got ${posted} bytes of a ${JSON.stringify(full).length}-byte answer`);
  } finally { release(); }
});
