/* The webview in headless Chromium against a real server: it renders, zoom
 * asks a finer timeline/range, clicking a kernel shows its explanation, a
 * screenshot is non-blank; performance marks are reported. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHarness, CHROMIUM, type Harness } from './harness';
import { serverBinary, smallProfile, NO_SERVER, NO_PROFILE, CLIENT_ROOT } from '../helpers';
import { NsysClient } from '../../src/client/nsysClient';
import { silentLogger } from '../../src/client/logger';
import { TILE_FIELDS } from '../../src/client/tileColumns';

const bin = serverBinary();
const RESULTS = path.join(CLIENT_ROOT, 'test-results');
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: Harness | undefined;

before(async () => {
  if (skip) return;
  const profile = process.env.NSYS_AI_UI_PROFILE ?? smallProfile();
  if (!profile) { skip = NO_PROFILE; return; }
  const probe = new NsysClient({ command: bin!, logger: silentLogger, maxRestarts: 0 });
  const ok = await probe.start().then(() => true, () => false);
  await probe.dispose();
  if (!ok) { skip = `${bin} does not serve`; return; }
  hx = await startHarness(bin!, profile);
  fs.mkdirSync(RESULTS, { recursive: true });
});

after(async () => {
  if (hx) {
    if (process.env.NSYS_AI_UI_LOG) {
      console.log(hx.logs.join('\n'));
      const t0 = hx.requests[0]?.at ?? 0;
      for (const r of hx.requests.slice(0, 40)) console.log(`+${r.at - t0}ms ${r.method} ${r.ms?.toFixed(1)}ms ${JSON.stringify(r.params).slice(0, 120)}`);
    }
    await hx.close();
  }
});

const rangeRequests = () => hx!.requests.filter((r) => r.method === 'timeline/range');

test('the profile renders: tracks drawn, tabs shown, no page errors', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  const painted = await page.evaluate(() => {
    const c = document.querySelector('canvas')!;
    const ctx = c.getContext('2d')!;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const colors = new Set<number>();
    for (let i = 0; i < d.length; i += 16) colors.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
    return colors.size;
  });
  assert.ok(painted > 5, `canvas has ${painted} colours`);
  const text = await page.textContent('body');
  for (const want of ['Details', 'NVTX tree', 'Top kernels', 'Findings']) assert.ok(text!.includes(want), want);
  assert.ok(rangeRequests().length > 0, 'timeline/range was asked');
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});

test('first frame: one columns-format request per visible tile, only the rows in view; hover names decode', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  const first = await page.evaluate(() => {
    const p = window.__nsysPerf, end = p.openedAt! + p.firstFrameMs!;
    return {
      page: p.rpcTimings!.filter((x) => x.method === 'timeline/range' && x.sent <= end).length,
      resolution: Number(document.querySelector<HTMLElement>('.timeline')!.dataset.resolution),
      rows: p.rowIds!(), visible: p.visibleRowIds!(),
      rowsInViewport: Math.ceil((document.querySelector('.timeline')!.clientHeight - 22) / 22),
    };
  });
  /* the host asked them while the page loaded (client/firstTiles), at the resolution drawn */
  assert.equal(first.page, 0, 'the page asked none itself before its first frame');
  /* (for the rows in view: the idle prefetch asks, at the same tiles, the tracks behind closed groups) */
  const ranges = hx!.requests.filter((r) => r.method === 'timeline/range' && Number(r.params.end) - Number(r.params.start) === first.resolution * 512
    && (r.params.tracks as string[]).some((id) => first.visible.includes(id))
    && JSON.stringify(r.params.fields) === JSON.stringify(TILE_FIELDS)).map((r) => r.params); /* not the bucket columns asked once drawn (client/tileColumns) */
  assert.ok(ranges.length > 0);
  const tiles = ranges.map((r) => `${r.start}:${r.end}`);
  assert.equal(new Set(tiles).size, tiles.length, `one request per tile (row blocks coalesced): ${tiles.join(' ')}`);
  const asked = new Set(ranges.flatMap((r) => r.tracks as string[]));
  for (const r of ranges) assert.equal(r.format, 'columns');
  /* the host asks for the rows the page showed last time or says it shows (whole blocks): those in view, not every row */
  for (const id of first.visible) assert.ok(asked.has(id), `the first frame's tiles hold ${id}, in view`);
  const all = (await client.request('timeline/tracks', { profileId: opened.profileId })).tracks.length;
  assert.ok(asked.size < all, `${asked.size} of the profile's ${all} tracks asked`);
  assert.ok(first.visible.length <= Math.max(first.rowsInViewport, 4) + 3, `${first.visible.length} rows in view, ${first.rowsInViewport} fit`);
  /* a hovered kernel's tooltip names what kernel/details names (names decoded from the columns' table) */
  const spot = await page.evaluate(() => {
    for (let py = 33; py < 22 * 8; py += 22) for (let px = 215; px < 1200; px += 7) {
      const id = window.__nsysPerf.probe!(px, py);
      if (id !== undefined) return { px, py, id };
    }
    return undefined;
  });
  assert.ok(spot, 'a kernel under the pointer somewhere');
  const box = (await page.locator('canvas').boundingBox())!;
  await page.mouse.move(box.x + spot.px, box.y + spot.py);
  await page.waitForSelector('.tooltip[data-details="true"]', { timeout: 15_000 });
  const details = await client.kernelDetails(opened.profileId, spot.id);
  assert.equal(await page.textContent('.tooltip .tip-name'), details.name);
  await page.mouse.move(box.x + 5, box.y + 5);
});

test('rows scroll under a fixed axis: the canvas is the viewport\'s height, hits follow the scroll', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  const dims = await page.evaluate(() => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!;
    return { client: el.clientHeight, scroll: el.scrollHeight, canvas: c.getBoundingClientRect().height, rows: window.__nsysPerf.rowIds!().length };
  });
  assert.ok(dims.canvas <= dims.client + 1, `canvas ${dims.canvas}px within the ${dims.client}px viewport`);
  assert.ok(Math.abs(dims.scroll - (22 + dims.rows * 22 + 4)) <= 1, `scroll height ${dims.scroll} covers ${dims.rows} rows`);
  if (dims.scroll - dims.client < 44) return t.skip('too few rows to scroll two');
  const box = (await page.locator('canvas').boundingBox())!;
  const label = async (y: number) => {
    await page.mouse.move(box.x + 50, box.y + y);
    await page.waitForFunction(() => !(document.querySelector('.tooltip') as HTMLElement).hidden);
    return page.textContent('.tooltip .tip-name');
  };
  const third = await label(22 + 2 * 22 + 11);
  await page.mouse.move(box.x + 5, box.y + 5);
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 44; });
  await page.waitForTimeout(100);
  assert.equal(await label(22 + 11), third, 'after scrolling two rows, the top row is the former third');
  const axisHit = await page.evaluate(() => window.__nsysPerf.probe!(700, 10));
  assert.equal(axisHit, undefined, 'the axis is not a row');
  await page.evaluate(() => { document.querySelector('.timeline')!.scrollTop = 0; });
  await page.mouse.move(box.x + 5, box.y + 5);
});

test('wheel zoom sends a new timeline/range at a finer resolution', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  const before = rangeRequests();
  const span0 = Math.min(...before.map((r) => Number(r.params.end) - Number(r.params.start)));
  const box = (await page.locator('canvas').boundingBox())!;
  await page.mouse.move(box.x + 190 + (box.width - 190) / 2, box.y + 30);
  await page.keyboard.down('Control'); /* Ctrl+wheel zooms at the cursor (the wheel alone pans) */
  for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  await page.waitForFunction((n) => (document.querySelector('.timeline') as HTMLElement).dataset.resolution !== undefined && n >= 0, before.length);
  const deadline = Date.now() + 10_000;
  while (rangeRequests().length === before.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const after = rangeRequests().slice(before.length);
  assert.ok(after.length > 0, 'zoom asked for new ranges');
  const span1 = Math.min(...after.map((r) => Number(r.params.end) - Number(r.params.start)));
  assert.ok(span1 < span0, `finer tiles: ${span1} < ${span0}`);
  /* back to the full view for the next test */
  await page.locator('canvas').focus();
  await page.keyboard.press('Home');
  await page.waitForTimeout(300);
});

test('the time axis: distinct labels at every zoom step, a base far from the start, span and cursor time', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  const canvas = page.locator('canvas');
  const box = (await canvas.boundingBox())!;
  await canvas.focus();
  await page.keyboard.press('Home');
  /* pan to the middle of the profile, so zooming in ends far from its start */
  for (let i = 0; i < 4; i++) await page.keyboard.press('d');
  type Axis = { base: string; labels: string[]; span: string; cursor: string };
  const axis = async (): Promise<Axis> => JSON.parse((await page.locator('.timeline').getAttribute('data-axis')) ?? '{}') as Axis;
  const seen: Axis[] = [];
  for (let i = 0; i < 24; i++) {
    await page.keyboard.press('+');
    await page.waitForTimeout(40);
    const a = await axis();
    seen.push(a);
    assert.ok(a.labels.length >= 2, `step ${i}: ${a.labels.length} ticks`);
    assert.equal(new Set(a.labels).size, a.labels.length, `step ${i}: repeated labels ${a.labels.join(' | ')} (base ${a.base})`);
    assert.match(a.span, /^span \d/);
  }
  assert.notEqual(seen[0]!.span, seen[seen.length - 1]!.span, 'the span follows the zoom');
  assert.ok(seen.some((a) => a.base !== ''), `zoomed in far from the start, a base time is shown: ${JSON.stringify(seen[seen.length - 1])}`);
  await page.mouse.move(box.x + 400, box.y + 60);
  await page.waitForTimeout(60);
  const withCursor = await axis();
  assert.match(withCursor.cursor, /^-?\d+(\.\d+)? (s|ms|µs|ns)$/, `cursor time shown: ${withCursor.cursor}`);
  await page.screenshot({ path: path.join(RESULTS, 'axis-zoomed.png') });
  await page.mouse.move(box.x + 5, box.y + box.height + 50);
  await page.keyboard.press('Home');
  await page.waitForTimeout(200);
});

test('clicking a kernel shows its details and explanation', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  /* find a painted pixel in the first GPU row (rows start below the 22 px axis) */
  const spot = await page.evaluate(() => {
    const c = document.querySelector('canvas')!;
    const dpr = window.devicePixelRatio || 1;
    const ctx = c.getContext('2d')!;
    const bg = ctx.getImageData(2, 2, 1, 1).data;
    for (let row = 0; row < 8; row++) {
      const y = 22 + row * 22 + 14;
      const line = ctx.getImageData(0, Math.floor(y * dpr), c.width, 1).data;
      for (let x = Math.ceil(192 * dpr); x < c.width; x++) {
        const i = x * 4;
        if (Math.abs(line[i]! - bg[0]!) + Math.abs(line[i + 1]! - bg[1]!) + Math.abs(line[i + 2]! - bg[2]!) > 60) return { x: x / dpr + 1, y };
      }
    }
    return undefined;
  });
  assert.ok(spot, 'a kernel is drawn in a GPU row');
  const box = (await page.locator('canvas').boundingBox())!;
  await page.mouse.click(box.x + spot.x, box.y + spot.y);
  /* the first explanation computes per-name statistics over the whole profile: seconds at 10M kernels */
  await page.waitForSelector('.details .explain[data-loaded="true"]', { timeout: 90_000 });
  const kernelId = Number(await page.getAttribute('.details', 'data-kernel-id'));
  const direct = await client.explain(opened.profileId, { kernelId });
  const shown = await page.textContent('.details');
  assert.ok(shown!.includes(direct.displayName), `details show "${direct.displayName}"`);
  assert.ok(shown!.includes(direct.origin));
  assert.equal(await page.isHidden('.tooltip'), true, 'the tooltip goes once the kernel is selected');
  /* named rows in units, checked against kernel/details; the raw columns folded away */
  const d = await client.requestUntyped<Record<string, any>>('kernel/details', { profileId: opened.profileId, kernelId });
  const rows = Object.fromEntries(await page.$$eval('.details > table.kv tr', (trs) => trs.map((tr) => [tr.querySelector('th')?.textContent ?? '', tr.querySelector('td')?.textContent ?? ''])));
  const c = d.columns;
  if (d.kind === 'kernel') {
    assert.equal(rows['Grid'], `${c.gridX} × ${c.gridY} × ${c.gridZ}`);
    assert.equal(rows['Block'], `${c.blockX} × ${c.blockY} × ${c.blockZ}`);
    assert.equal(rows['Registers per thread'], String(c.registersPerThread));
  }
  assert.match(rows['Duration'] ?? '', /^[\d.]+ (s|ms|µs|ns)$/);
  assert.match(rows['Begins'] ?? '', /^[+−][\d.]+ (s|ms|µs|ns)$/);
  assert.match(rows['Launched by'] ?? '', new RegExp(`^${d.api.name} on `));
  assert.equal(await page.locator('.details details.all-columns table').isVisible(), false, 'all columns folded');
  assert.match(await page.locator('.details details.all-columns summary').textContent() ?? '', /^All columns \(\d+\)$/);
  await page.screenshot({ path: path.join(RESULTS, 'details.png') });
});

test('"Show in timeline" (a reveal from the extension) selects the kernel and fills Details', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client, opened } = hx!;
  const before = Number(await page.getAttribute('.details', 'data-kernel-id'));
  const top = await client.topKernels(opened.profileId);
  const x = await client.explain(opened.profileId, { name: top.rows[top.rows.length - 1]!.name });
  const kernelId = Number(x.stats?.longestKernelId);
  assert.ok(Number.isInteger(kernelId) && kernelId !== before, `a kernel other than the selected one (${kernelId} vs ${before})`);
  const d = await client.requestUntyped<Record<string, any>>('kernel/details', { profileId: opened.profileId, kernelId });
  await page.evaluate((m) => window.postMessage(m, '*'), { type: 'reveal', kernelId, start: Number(d.start), end: Number(d.end) });
  await page.waitForFunction((id) => document.querySelector('.details')?.getAttribute('data-kernel-id') === String(id), kernelId, { timeout: 30_000 });
  await page.waitForSelector('.details > table.kv tr', { timeout: 30_000 });
  assert.ok((await page.textContent('.details h2'))!.length > 0);
  assert.equal(await page.textContent('[role=tab][aria-selected=true]'), 'Details');
});

test('a screenshot is non-blank and shows the expected text', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  await page.click('[role=tab]:has-text("Top kernels")');
  await page.waitForSelector('.top-kernels tbody tr', { timeout: 90_000 });
  const file = path.join(RESULTS, 'webview.png');
  const png = await page.screenshot({ path: file });
  const colours = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const ctx = c.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const s = new Set<number>();
    for (let i = 0; i < d.length; i += 4 * 7) s.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
    return s.size;
  }, png.toString('base64'));
  assert.ok(colours > 20, `screenshot has ${colours} colours`);
  const title = path.basename(process.env.NSYS_AI_UI_PROFILE ?? smallProfile()!);
  assert.ok((await page.textContent('.toolbar'))!.includes(title));
  t.diagnostic(`screenshot: ${file}`);
});

test('panels: keyboard selection, lazy NVTX tree, sortable top kernels, findings', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  /* keyboard: n moves to a kernel, Enter selects it */
  await page.click('[role=tab]:has-text("Details")');
  await page.evaluate(() => document.querySelector('.details')!.removeAttribute('data-kernel-id'));
  await page.locator('canvas').focus();
  await page.keyboard.press('n');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.details[data-kernel-id]', { timeout: 15_000 });
  /* NVTX tree: expanding a root shows its children (fetched on demand below the first level) */
  await page.click('[role=tab]:has-text("NVTX tree")');
  await page.waitForSelector('.nvtx-tree [role=treeitem]', { timeout: 90_000 });
  const root = page.locator('.nvtx-tree [role=treeitem][aria-expanded]').first();
  await root.locator('.row').first().click();
  await page.waitForFunction(() => document.querySelectorAll('.nvtx-tree [role=treeitem][aria-level="2"]').length > 0, undefined, { timeout: 30_000 });
  const deeper = page.locator('.nvtx-tree [role=treeitem][aria-level="2"][aria-expanded]').first();
  if (await deeper.count()) {
    await deeper.focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.querySelectorAll('.nvtx-tree [role=treeitem][aria-level="3"]').length > 0
      || !document.querySelector('.nvtx-tree [role=treeitem][aria-level="2"][aria-expanded="true"]'), undefined, { timeout: 30_000 });
  }
  /* top kernels: sorting by count changes the order to non-increasing counts */
  await page.click('[role=tab]:has-text("Top kernels")');
  await page.waitForSelector('.top-kernels tbody tr');
  await page.click('.top-kernels button[data-key="count"]');
  const counts = (await page.locator('.top-kernels tbody tr td:nth-child(2)').allTextContents()).map(Number);
  assert.ok(counts.length > 1);
  for (let i = 1; i < counts.length; i++) assert.ok(counts[i - 1]! >= counts[i]!, `sorted by count: ${counts.join(',')}`);
  assert.equal(await page.getAttribute('.top-kernels th:nth-child(2)', 'aria-sort'), 'descending');
  /* findings: the report's findings (or its explicit absence) */
  await page.click('[role=tab]:has-text("Findings")');
  await page.waitForFunction(() => !document.querySelector('.findings-panel')!.textContent!.includes('Loading'), undefined, { timeout: 120_000 });
  const text = (await page.textContent('.findings-panel'))!;
  assert.ok(/warning|critical|info|No findings/.test(text), text.slice(0, 200));
  assert.ok(!text.includes('unavailable'), text.slice(0, 200));
  await page.screenshot({ path: path.join(RESULTS, 'findings.png') });
});

test('performance marks: first frame, pan/zoom frames, hover round trip', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  const box = (await page.locator('canvas').boundingBox())!;
  const y = box.y + 22 + 11;
  /* drag-pan and wheel-zoom; each frame's draw() time is recorded */
  await page.evaluate(() => { window.__nsysPerf.frames.length = 0; });
  await page.mouse.move(box.x + 700, y);
  await page.keyboard.down('Control');
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -200);
  await page.keyboard.up('Control');
  await page.mouse.down();
  for (let i = 0; i < 30; i++) await page.mouse.move(box.x + 700 - i * 8, y);
  await page.mouse.up();
  await page.waitForTimeout(300);
  /* hovers across the first GPU row: kernel/details round trips */
  for (let x = 200; x < box.width - 20; x += 37) { await page.mouse.move(box.x + x, y); await page.waitForTimeout(15); }
  await page.waitForTimeout(300);
  const perf = await page.evaluate(() => window.__nsysPerf);
  const pct = (a: number[], p: number) => { const s = [...a].sort((x, z) => x - z); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN; };
  const report = {
    firstFullRangeFrameMs: perf.firstFrameMs,
    panZoomFrameMs: { n: perf.frames.length, p50: pct(perf.frames, 0.5), p95: pct(perf.frames, 0.95), max: Math.max(...perf.frames) },
    hoverRoundTripMs: { n: perf.hovers.length, p50: pct(perf.hovers, 0.5), p95: pct(perf.hovers, 0.95), max: perf.hovers.length ? Math.max(...perf.hovers) : NaN },
    /* the same requests timed on the host side (server + stdio, no browser bridge) */
    hostSide: {
      timelineRangeMs: summarize(hx!.requests.filter((r) => r.method === 'timeline/range' && r.ms !== undefined).map((r) => r.ms!), pct),
      kernelDetailsMs: summarize(hx!.requests.filter((r) => r.method === 'kernel/details' && r.ms !== undefined).map((r) => r.ms!), pct),
    },
    profile: process.env.NSYS_AI_UI_PROFILE ?? 'generated small preset',
  };
  fs.writeFileSync(path.join(RESULTS, 'ui-perf.json'), JSON.stringify(report, null, 2));
  t.diagnostic(JSON.stringify(report));
  assert.ok(perf.firstFrameMs !== undefined && perf.firstFrameMs > 0);
  assert.ok(perf.frames.length > 5, 'frames were drawn while panning');
});

function summarize(a: number[], pct: (a: number[], p: number) => number) {
  return { n: a.length, p50: pct(a, 0.5), p95: pct(a, 0.95), max: a.length ? Math.max(...a) : NaN };
}
