/* The multi-rank view in headless Chromium against a real server, on a
 * 2-GPU run whose rank 1 starts every NCCL kernel late (a planted straggler):
 * one utilisation row per rank, the straggler table names rank 1, and a click
 * on a collective of rank 0 links it on both ranks, rank 1's row marking the
 * late arrival where its instance starts. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CHROMIUM } from './harness';
import { startViewHarness, hasColour, frames, type ViewHarness } from './viewHarness';
import { plantedStraggler } from './viewFixtures';
import { serverBinary, NO_SERVER, NO_PROFILE } from '../helpers';
import { loadRanksView } from '../../src/client/viewLoad';
import { clockOrigin, relTime } from '../../src/client/exactJson';
import type { RangeColumns } from '../../src/protocol/types';

const bin = serverBinary();
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: ViewHarness | undefined;
let file = '';
const GUTTER = 210, AXIS_H = 22, ROW_H = 22;
const LINKED: [number, number, number] = [0, 229, 255], LAST: [number, number, number] = [255, 45, 85];

before(async () => {
  if (skip) return;
  const f = plantedStraggler();
  if (!f) { skip = NO_PROFILE; return; }
  file = f;
  hx = await startViewHarness(bin!, (c) => loadRanksView(c, [f]));
  await hx.page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
});

after(async () => { await hx?.close(); });

test('one utilisation row per rank; the straggler table names the planted straggler', async (t) => {
  if (skip) return t.skip(skip);
  const { page } = hx!;
  assert.deepEqual(await page.evaluate(() => window.__nsysPerf.rowIds!()), ['rank:0', 'rank:1']);
  assert.match((await page.textContent('.view-side tr.straggler')) ?? '', /^1 \(straggler\)/);
  assert.match((await page.textContent('.view-header .verdict')) ?? '', /rank 1 is the straggler/);
});

test('a collective clicked on rank 0 is linked on both ranks; rank 1\'s row marks its late start', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client } = hx!;
  /* independently of the view: rank 0's (GPU 0's) NCCL kernels, from timeline/range on the profile */
  const profileId = (await client.request('profile/list', {})).profiles.find((p) => p.path === file)!.profileId;
  const info = await client.request('profile/info', { profileId });
  const tracks = (await client.request('timeline/tracks', { profileId })).tracks.filter((x) => x.kind === 'gpu');
  const r = await client.requestUntyped<RangeColumns>('timeline/range', { profileId, start: info.span!.start, end: info.span!.end, width: 100, maxEvents: 1_000_000, format: 'columns', tracks: tracks.map((x) => x.id) });
  const nccl = (dev: number) => r.tracks.flatMap((tr) => ('events' in tr && tracks.find((x) => x.id === tr.id)!.device === dev
    ? tr.events.start.map((s, j) => ({ track: tr.id, start: Number(s), end: Number(tr.events.end[j]), name: r.names[tr.events.name[j]!]! })) : []).filter((e) => /nccl/i.test(e.name)));
  const mine = nccl(0)[2]!, theirs = nccl(1).find((e) => e.name === mine.name && Math.abs(e.end - mine.end) < (mine.end - mine.start))!;
  assert.ok(theirs, 'rank 1 has the same collective, ending together');
  assert.ok(theirs.start > mine.start, 'planted: rank 1 starts it later');
  /* open rank 0's streams, zoom onto the collective, click it on its stream's row */
  await page.click('.view-side tbody tr:first-child');
  const origin = clockOrigin(info.span!.start, info.span!.end);
  const rel = (x: number) => relTime(x, origin);
  const dur = mine.end - mine.start;
  await page.evaluate(([s, e]) => window.__nsysViews!.ranks!.setView(s!, e!), [rel(mine.start) - dur, rel(mine.end) + dur]);
  await page.waitForFunction(() => document.querySelector('.timeline')!.getAttribute('data-rendered') === 'true');
  const rows = await page.evaluate(() => window.__nsysPerf.rowIds!());
  const row = rows.indexOf(`${mine.track}@0`), rank1 = rows.indexOf('rank:1');
  assert.ok(row > 0 && rank1 > row, `rank 0's stream row is open: ${rows.join(' ')}`);
  const v = await page.evaluate(() => window.__nsysViews!.ranks!.view());
  const xOf = (ns: number) => GUTTER + ((rel(ns) - v.start) / (v.end - v.start)) * v.width;
  const box = (await page.locator('canvas').boundingBox())!;
  await frames(page);
  await page.mouse.click(box.x + (xOf(mine.start) + xOf(mine.end)) / 2, box.y + AXIS_H + row * ROW_H + ROW_H / 2);
  await page.waitForSelector('.view-ranks[data-linked="2"]', { timeout: 15_000 });
  await page.mouse.move(2, 2);
  await frames(page);
  const last = await page.evaluate(() => window.__nsysViews!.ranks!.last());
  assert.equal(last?.rank, 1, 'rank 1 arrived last');
  assert.equal(last.start, rel(theirs.start), 'at its instance\'s start');
  const y = (i: number) => ({ y0: AXIS_H + i * ROW_H, y1: AXIS_H + (i + 1) * ROW_H });
  const late = xOf(theirs.start);
  assert.ok(await hasColour(page, 0, LAST, { x0: late - 4, x1: late + 2, ...y(rank1) }), `rank 1's row marks the late start at x=${late.toFixed(1)}`);
  assert.ok(!(await hasColour(page, 0, LAST, { x0: GUTTER, x1: box.width, ...y(0) })), 'rank 0 is not marked last');
  assert.ok(await hasColour(page, 0, LINKED, { x0: xOf(mine.start) - 3, x1: xOf(mine.start) + 2, ...y(row) }), 'rank 0\'s instance is outlined');
  assert.ok(await hasColour(page, 0, LINKED, { x0: GUTTER, x1: box.width, ...y(rank1) }), 'rank 1\'s instance is outlined');
  assert.match((await page.textContent('.collective li.last')) ?? '', /rank 1: starts \+/);
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
  if (process.env.NSYS_AI_UI_SHOTS) await page.screenshot({ path: path.join(process.env.NSYS_AI_UI_SHOTS, 'ranks-view.png') });
});
