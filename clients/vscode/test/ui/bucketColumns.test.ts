/* A zoom step's tiles ask only what drawing needs (client/tileColumns
 * TILE_FIELDS: events' columns, and buckets as indexStep / busyPct, drawn in
 * their row's colour); a bucket's count and longest op (BUCKET_DETAIL_FIELDS)
 * are asked per tile once the view is drawn, or for the tracks under the
 * pointer when it points at a bucket first. Asserts on the requests' `fields`,
 * on what is drawn, on the tooltip and on what a click selects, checked
 * against the server's own buckets (the objects format, every column). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harnessPerFile } from './harness';
import { BUCKET_DETAIL_FIELDS, TILE_FIELDS } from '../../src/client/tileColumns';
import type { RangeResult } from '../../src/protocol/types';

const ui = harnessPerFile({ width: 1280, height: 700 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const same = (a: unknown, b: readonly string[]) => JSON.stringify(a) === JSON.stringify(b);
const ranges = () => ui.hx!.requests.filter((r) => r.method === 'timeline/range');

/** Every request settled and no new one for a while (the idle prefetch, the after-draw bucket columns). */
async function settled(): Promise<void> {
  const { page } = ui.hx!;
  await page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
  for (let n = -1; n !== ranges().length;) {
    n = ranges().length;
    await sleep(400);
    await page.waitForFunction(() => window.__nsysPerf.rpcTimings!.every((x) => x.settled !== undefined), undefined, { timeout: 30_000 });
  }
}

type Hit = { id: number; name: string; start: number; end: number; dur: number; count?: number; trackId: string; gpu: boolean };

/** A GPU bucket in view (a hit with a count) where `want` holds: its canvas point and the hit. */
async function bucketSpot(want: 'held' | 'lacking'): Promise<{ px: number; py: number; hit?: Hit } | undefined> {
  return ui.hx!.page.evaluate((want) => {
    const p = window.__nsysPerf, gutter = Number(document.querySelector<HTMLElement>('.timeline')!.dataset.gutter ?? 210);
    for (const r of p.rowsAt!()) {
      if (r.y < 22 || !r.key.startsWith('gpu')) continue;
      for (let px = gutter + 3; px < 1260; px += 3) {
        const py = r.y + 11;
        if (want === 'lacking' ? p.lacking!(px, py) > 0 && !p.hit!(px, py) : p.hit!(px, py)?.count !== undefined) return { px, py, hit: p.hit!(px, py) as Hit | undefined };
      }
    }
    return undefined;
  }, want);
}

/** The server's buckets (every column) for `trackId` in the tiles the page asked bucket columns of. */
async function serverBuckets(trackId: string): Promise<Array<{ count: number; longest?: { id: number; name: string; dur: number } }>> {
  const { client, opened } = ui.hx!;
  const out: Array<{ count: number; longest?: { id: number; name: string; dur: number } }> = [];
  for (const r of ranges().filter((x) => same(x.params.fields, BUCKET_DETAIL_FIELDS) && (x.params.tracks as string[]).includes(trackId))) {
    const { start, end, width, maxEvents } = r.params as { start: number; end: number; width: number; maxEvents: number };
    const o = await client.request('timeline/range', { profileId: opened.profileId, start, end, width, maxEvents, tracks: [trackId] }) as RangeResult;
    for (const tr of o.tracks) if ('buckets' in tr) out.push(...tr.buckets);
  }
  return out;
}

test('tiles ask what drawing needs; buckets drawn in their row\'s colour; their count and longest op asked once the view is drawn', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page } = ui.hx!;
  await settled();
  const all = ranges();
  const tiles = all.filter((r) => same(r.params.fields, TILE_FIELDS)), more = all.filter((r) => same(r.params.fields, BUCKET_DETAIL_FIELDS));
  assert.ok(tiles.length > 0 && more.length > 0, `tile requests ${tiles.length}, bucket columns ${more.length}`);
  assert.equal(tiles.length + more.length, all.length, `every timeline/range asks one of the two field lists: ${JSON.stringify(all.map((r) => r.params.fields))}`);
  /* the bucket columns are asked for the tiles drawn, at their own request's grid */
  const tileKeys = new Set(tiles.map((r) => `${r.params.start}:${r.params.end}:${r.params.width}:${r.params.maxEvents}`));
  for (const r of more) assert.ok(tileKeys.has(`${r.params.start}:${r.params.end}:${r.params.width}:${r.params.maxEvents}`), 'bucket columns of a tile asked');
  assert.ok((await page.evaluate(() => window.__nsysPerf.longest?.merged ?? 0)) > 0, 'bucket tracks given their count and longest op');
  /* the GPU rows' buckets: one hue (the row's), at most the 4 busy levels, where colour by the longest op's name gave several */
  const colours = await page.evaluate(() => {
    const el = document.querySelector('.timeline') as HTMLElement, c = el.querySelector('canvas')!, dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!, gutter = Number(el.dataset.gutter ?? 210);
    const bg = Array.from(g.getImageData(Math.round((gutter - 1) * dpr), Math.round(12 * dpr), 1, 1).data).join();
    const out: number[] = [];
    const p = window.__nsysPerf;
    for (const r of p.rowsAt!()) {
      if (r.y < 22 || !r.key.startsWith('gpu')) continue;
      const seen = new Set<string>();
      for (let y = r.y + 3; y < r.y + 19; y++) {
        const d = g.getImageData(Math.round((gutter + 2) * dpr), Math.round(y * dpr), c.width - Math.round((gutter + 2) * dpr), 1).data;
        for (let k = 0; k < d.length; k += 4) { const s = [d[k], d[k + 1], d[k + 2], d[k + 3]].join(); if (s !== bg) seen.add(s); }
      }
      out.push(seen.size);
    }
    return out;
  });
  assert.ok(colours.some((n) => n > 0), `GPU rows drawn (${colours})`);
  /* (the row's grid line and the selection outline aside: 4 busy levels + 1) */
  for (const n of colours) assert.ok(n <= 5, `a GPU row's buckets in ${n} colours (${colours})`);
});

test('hovering a bucket shows its count and longest op; a click selects that op', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page, client, opened } = ui.hx!;
  await settled();
  const spot = await bucketSpot('held');
  assert.ok(spot?.hit, 'a GPU bucket with its count and longest op held');
  const hit = spot.hit;
  const theirs = (await serverBuckets(hit.trackId)).find((b) => b.longest?.id === hit.id);
  assert.ok(theirs, `the server has a bucket whose longest op is ${hit.id}`);
  assert.equal(hit.count, theirs.count);
  assert.equal(hit.dur, theirs.longest!.dur);
  assert.equal(hit.name, theirs.longest!.name);
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  const asked = ranges().length;
  await page.mouse.move(box.x + spot.px, box.y + spot.py);
  await page.waitForSelector('.tooltip[data-details="true"]', { timeout: 15_000 });
  assert.equal(await page.textContent('.tooltip .tip-name'), theirs.longest!.name);
  if (theirs.count > 1) assert.match(await page.textContent('.tooltip') ?? '', new RegExp(`^.*${theirs.count} here · longest`));
  assert.equal(ranges().length, asked, 'held: the hover asked no timeline/range');
  await page.mouse.click(box.x + spot.px, box.y + spot.py);
  await page.waitForSelector(`.details[data-kernel-id="${hit.id}"]`, { timeout: 15_000 });
  const d = await client.kernelDetails(opened.profileId, hit.id);
  assert.equal(d.name, theirs.longest!.name);
});

test('a bucket pointed at before its columns came: its tracks\' are asked, then the tooltip and the click', async (t) => {
  if (ui.skip) return t.skip(ui.skip);
  const { page, client, opened } = ui.hx!;
  await settled();
  await page.mouse.move(1, 1);
  await page.evaluate(() => { window.__nsysPerf.noViewLongest = true; });
  /* a view of the next level out: its tiles ask bucket columns of nobody until pointed at */
  await page.locator('.timeline canvas').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  await settled();
  const spot = await bucketSpot('lacking');
  assert.ok(spot, 'a GPU bucket whose count and longest op are not held');
  const row = await page.evaluate((py) => window.__nsysPerf.rowsAt!().find((r) => r.y <= py && py < r.y + 22)!.key, spot.py);
  const asked = ranges().length;
  const box = (await page.locator('.timeline canvas').boundingBox())!;
  await page.mouse.move(box.x + spot.px, box.y + spot.py);
  await page.waitForSelector('.tooltip[data-details="true"]', { timeout: 15_000 });
  const more = ranges().slice(asked);
  assert.ok(more.length >= 1 && more.every((r) => same(r.params.fields, BUCKET_DETAIL_FIELDS)), `the pointer asked bucket columns only (${JSON.stringify(more.map((r) => r.params))})`);
  assert.ok(more.length <= 2, `one request per tile under the pointer (${more.length})`);
  const hit = (await page.evaluate((s) => window.__nsysPerf.hit!(s.px, s.py), spot)) as Hit | undefined;
  assert.ok(hit && hit.count !== undefined, `the bucket now has its count (${row})`);
  const theirs = (await serverBuckets(hit.trackId)).find((b) => b.longest?.id === hit.id);
  assert.ok(theirs && theirs.count === hit.count, 'its count and longest op are the server\'s');
  assert.equal(await page.textContent('.tooltip .tip-name'), theirs.longest!.name);
  /* a click on another bucket not held: selects that bucket's longest op once its columns come */
  await page.mouse.move(1, 1);
  const other = await bucketSpot('lacking');
  if (!other) return; /* every bucket in view is held now (one tile, one row) */
  const was = await page.getAttribute('.details', 'data-kernel-id');
  await page.mouse.click(box.x + other.px, box.y + other.py);
  await page.waitForFunction((was) => (document.querySelector<HTMLElement>('.details')?.dataset.kernelId ?? null) !== was, was, { timeout: 15_000 });
  const picked = await page.evaluate((s) => window.__nsysPerf.hit!(s.px, s.py), other) as Hit | undefined;
  assert.ok(picked, 'the clicked bucket is held now');
  assert.equal(Number(await page.getAttribute('.details', 'data-kernel-id')), picked.id, 'the click selected its longest op');
  const d = await client.kernelDetails(opened.profileId, picked.id);
  assert.equal(d.name, picked.name);
});
