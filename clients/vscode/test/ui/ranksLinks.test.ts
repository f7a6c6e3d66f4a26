/* The multi-rank view links a collective as the server matched it
 * (set/collectives), not by nearest end: two rank files whose clocks cannot
 * be aligned (no session start) and disagree by one collective's spacing
 * (viewFixtures.skewedRanks), so that on the drawn clock rank 1's instance
 * of the previous collective ends where rank 0's clicked one ends. The drawn
 * links, the outline on rank 1's row and the last arriver's mark must follow
 * the server's row. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { CHROMIUM } from './harness';
import { startViewHarness, hasColour, frames, type ViewHarness } from './viewHarness';
import { skewedRanks } from './viewFixtures';
import { serverBinary, NO_SERVER, NO_PROFILE } from '../helpers';
import { loadRanksView } from '../../src/client/viewLoad';
import { clockOrigin, relTime } from '../../src/client/exactJson';
import type { RangeColumns } from '../../src/protocol/types';
import type { OpenSetResult } from '../../src/protocol/viewMessages';
import type { CollectiveRow } from '../../src/client/ranksModel';

const bin = serverBinary();
let skip: string | false = !fs.existsSync(CHROMIUM) ? `no chromium at ${CHROMIUM}` : !bin ? NO_SERVER : false;
let hx: ViewHarness | undefined;
let set: OpenSetResult | undefined;
const GUTTER = 210, AXIS_H = 22, ROW_H = 22;
const LINKED: [number, number, number] = [0, 229, 255], LAST: [number, number, number] = [255, 45, 85];

before(async () => {
  if (skip) return;
  const files = skewedRanks();
  if (!files) { skip = NO_PROFILE; return; }
  hx = await startViewHarness(bin!, async (c) => {
    const init = await loadRanksView(c, files);
    if (init.type === 'ranksInit') set = init.set;
    return init;
  });
  await hx.page.waitForSelector('.timeline[data-rendered="true"]', { timeout: 30_000 });
});

after(async () => { await hx?.close(); });

interface Kernel { track: string; start: number; end: number; name: string }

test('a clicked collective is linked on the server\'s instances where nearest end would pick another', async (t) => {
  if (skip) return t.skip(skip);
  const { page, client } = hx!;
  const s = set!;
  assert.equal(s.aligned, false, 'no session start: the clocks stay as the files have them');
  assert.deepEqual(s.ranks.map((r) => [r.rank, Number(r.offsetNs)]), [[0, 0], [1, 0]]);
  /* independently of the view: each rank's NCCL kernels from its own profile, and the server's matching */
  const kernels = async (profileId: string): Promise<Kernel[]> => {
    const info = await client.request('profile/info', { profileId });
    const tracks = (await client.request('timeline/tracks', { profileId })).tracks.filter((x) => x.kind === 'gpu');
    const r = await client.requestUntyped<RangeColumns>('timeline/range', { profileId, start: info.span!.start, end: info.span!.end, width: 100, maxEvents: 1_000_000, format: 'columns', tracks: tracks.map((x) => x.id) });
    return r.tracks.flatMap((tr) => ('events' in tr ? tr.events.start.map((st, j) => ({ track: tr.id, start: Number(st), end: Number(tr.events.end[j]), name: r.names[tr.events.name[j]!]! })) : []))
      .filter((e) => /nccl/i.test(e.name)).sort((a, b) => a.start - b.start);
  };
  const [k0, k1] = [await kernels(s.ranks[0]!.profileId!), await kernels(s.ranks[1]!.profileId!)];
  const rows: CollectiveRow[] = (await client.requestUntyped<{ rows: CollectiveRow[] }>('set/collectives', { setId: s.setId, limit: 100000 })).rows;
  assert.ok(rows.length > 4 && s.collectives.matchedBy === 'payload');
  const nearest = (m: Kernel) => k1.filter((e) => e.name === m.name).reduce((b, e) => (Math.abs(e.end - m.end) < Math.abs(b.end - m.end) ? e : b));
  /* the first collective of rank 0 whose nearest-end partner on rank 1 is not the server's */
  const pick = k0.map((m) => ({ m, row: rows.find((r) => Number(r.startsNs[0]) === m.start) })).find(({ m, row }) => row && nearest(m).start !== Number(row.startsNs[1]));
  assert.ok(pick, 'the set is built so that nearest end links the wrong instance');
  const { m: mine, row } = pick;
  const theirs = { start: Number(row!.startsNs[1]), end: Number(row!.startsNs[1]) + Number(row!.durationsNs[1]) };
  const wrong = nearest(mine);
  assert.ok(k1.some((e) => e.start === theirs.start), 'the server\'s instance is a kernel of rank 1');
  /* open rank 0's streams, show both instances, click rank 0's */
  await page.evaluate(() => { [...document.querySelectorAll('.view-side tbody tr')].find((tr) => /^0\b/.test(tr.querySelector('td')!.textContent ?? ''))!.dispatchEvent(new MouseEvent('click', { bubbles: true })); });
  const origin = clockOrigin(s.window.start, s.window.end);
  const rel = (x: number) => relTime(x, origin);
  const lo = Math.min(mine.start, theirs.start, wrong.start), hi = Math.max(mine.end, theirs.end, wrong.end), pad = (hi - lo) / 4;
  await page.evaluate(([a, b]) => window.__nsysViews!.ranks!.setView(a!, b!), [rel(lo) - pad, rel(hi) + pad]);
  await page.waitForFunction(() => document.querySelector('.timeline')!.getAttribute('data-rendered') === 'true');
  const ids = await page.evaluate(() => window.__nsysPerf.rowIds!());
  const rowOf = ids.indexOf(`${mine.track}@0`), rank1 = ids.indexOf('rank:1');
  assert.ok(rowOf > 0 && rank1 > rowOf, `rank 0's stream row is open: ${ids.join(' ')}`);
  const v = await page.evaluate(() => window.__nsysViews!.ranks!.view());
  const xOf = (ns: number) => GUTTER + ((rel(ns) - v.start) / (v.end - v.start)) * v.width;
  const box = (await page.locator('canvas').boundingBox())!;
  await frames(page);
  await page.mouse.click(box.x + (xOf(mine.start) + xOf(mine.end)) / 2, box.y + AXIS_H + rowOf * ROW_H + ROW_H / 2);
  await page.waitForSelector('.view-ranks[data-linked="2"]', { timeout: 15_000 });
  await page.mouse.move(2, 2);
  await frames(page);
  const links = await page.evaluate(() => window.__nsysViews!.ranks!.links());
  assert.deepEqual(links.map((l) => [l.rank, l.start, l.end]), [[0, rel(mine.start), rel(mine.end)], [1, rel(theirs.start), rel(theirs.end)]], 'the server\'s instances');
  assert.notEqual(links[1]!.start, rel(wrong.start));
  assert.equal(links[1]!.trackId, `${k1.find((e) => e.start === theirs.start)!.track}@1`, 'on the stream of rank 1 that ran it');
  const last = await page.evaluate(() => window.__nsysViews!.ranks!.last());
  assert.equal(last?.rank, row!.lastRank, 'the server\'s last arriver');
  const y = (i: number) => ({ y0: AXIS_H + i * ROW_H, y1: AXIS_H + (i + 1) * ROW_H });
  const [xr, xw] = [xOf(theirs.start), xOf(wrong.start)];
  assert.ok(Math.abs(xr - xw) > 16, `the two candidates are apart on screen (${xr.toFixed(1)} vs ${xw.toFixed(1)})`);
  assert.ok(await hasColour(page, 0, LINKED, { x0: xr - 3, x1: xr + 8, ...y(rank1) }), `rank 1's row outlines the server's instance at x=${xr.toFixed(1)}`);
  assert.ok(!(await hasColour(page, 0, LINKED, { x0: xw - 2, x1: xw + 2, ...y(rank1) })), `nothing outlined at the nearest-end instance at x=${xw.toFixed(1)}`);
  const lastRow = row!.lastRank === 1 ? rank1 : rowOf, xl = xOf(row!.lastRank === 1 ? theirs.start : mine.start);
  assert.ok(await hasColour(page, 0, LAST, { x0: xl - 4, x1: xl + 2, ...y(lastRow) }), `the last arriver is marked at x=${xl.toFixed(1)}`);
  assert.deepEqual(hx!.logs.filter((l) => l.startsWith('pageerror')), []);
});
