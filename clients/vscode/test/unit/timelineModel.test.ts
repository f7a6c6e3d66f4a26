import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolutionFor, tilesFor, zoomNeighbourTiles, TimelineModel, TILE_PX, zoomView, panView, tileKey, coalescingFetch, byTrack, forEachItem, shortestItem, type Item, type TrackRangeParams } from '../../src/client/timelineModel';
import type { RangeColumns, RangeResult } from '../../src/protocol/types';
import { toColumns } from './objectsToColumns';

test('resolution is the smallest power of two covering ns per pixel', () => {
  assert.equal(resolutionFor(1000, 1000), 1);
  assert.equal(resolutionFor(1001, 1000), 2);
  assert.equal(resolutionFor(4096, 1024), 4);
  assert.equal(resolutionFor(5000, 1024), 8);
  assert.equal(resolutionFor(10, 1000), 1);
  assert.equal(resolutionFor(1e9, 2000), 2 ** 19);
});

test('tiles are aligned to their span so edges stay stable across pans', () => {
  const a = tilesFor({ start: 1_000_000, end: 2_000_000, width: 1000 }, 0);
  const b = tilesFor({ start: 1_003_000, end: 2_003_000, width: 1000 }, 0);
  const res = a[0]!.resolution;
  for (const t of [...a, ...b]) {
    assert.equal(t.resolution, res);
    assert.equal(t.start % (res * TILE_PX), 0);
    assert.equal(t.end - t.start, res * TILE_PX);
  }
  const keysA = new Set(a.map(tileKey));
  assert.ok(b.filter((t) => keysA.has(tileKey(t))).length >= a.length - 1, 'a small pan reuses the tiles');
});

test('prefetch adds a tile on each side, visible tiles come first', () => {
  const view = { start: 0, end: 512 * 1024, width: 1024 };
  const t = tilesFor(view, 1);
  const t0 = tilesFor(view, 0);
  assert.equal(t.length, t0.length + 2);
  for (let i = 0; i < t0.length; i++) assert.ok(t[i]!.end > view.start && t[i]!.start < view.end);
  const bounded = tilesFor(view, 1, { start: 0, end: 512 * 1024 });
  assert.equal(bounded.length, t0.length, 'tiles outside the profile are not asked for');
});

function fakeFetch(log: Array<{ start: number; end: number; width: number }>) {
  return async (p: { start: number; end: number; width: number; maxEvents: number }): Promise<RangeColumns> => {
    log.push(p);
    return toColumns({ resolution: (p.end - p.start) / p.width, start: p.start, end: p.end, tracks: [] });
  };
}

test('cache: panning within fetched tiles sends nothing; zoom asks the new resolution', async () => {
  const log: Array<{ start: number; end: number; width: number }> = [];
  const m = new TimelineModel(fakeFetch(log));
  const view = { start: 0, end: 1_000_000, width: 1000 };
  await m.ensure(view, 1);
  const n = log.length;
  assert.ok(n >= 2);
  await m.ensure(panView(view, 10_000), 0);
  assert.equal(log.length, n, 'pan inside prefetched tiles needs no request');
  const zoomed = zoomView(view, 0.25, 500_000);
  await m.ensure(zoomed, 0);
  assert.ok(log.length > n);
  const res = resolutionFor(zoomed.end - zoomed.start, zoomed.width);
  assert.ok(res < resolutionFor(1_000_000, 1000));
  assert.ok(log.slice(n).every((p) => (p.end - p.start) / p.width === res));
  assert.ok(m.tilesToDraw(zoomed).every((t) => t.resolution === res));
});

test('in-flight requests are shared and the cache is bounded (LRU)', async () => {
  const log: Array<{ start: number; end: number; width: number }> = [];
  const m = new TimelineModel(fakeFetch(log), () => {}, 4);
  const v = { start: 0, end: 512 * 512, width: 512 }; /* exactly one tile */
  await Promise.all([m.ensure(v, 0), m.ensure(v, 0)]);
  assert.equal(log.length, 1);
  for (let i = 1; i < 10; i++) await m.ensure(panView(v, i * 512 * 512), 0);
  assert.equal(log.length, 10);
  assert.equal(m.size, 4);
  await m.ensure(panView(v, 9 * 512 * 512), 0);
  assert.equal(log.length, 10, 'most recent tile still cached');
  await m.ensure(v, 0);
  assert.equal(log.length, 11, 'oldest tile was evicted');
});

test('tilesToDraw falls back to another cached resolution instead of blank', async () => {
  const m = new TimelineModel(fakeFetch([]));
  const v = { start: 0, end: 1 << 20, width: 1024 };
  await m.ensure(v, 0);
  const zoomed = zoomView(v, 0.5, 1 << 19);
  const draw = m.tilesToDraw(zoomed);
  assert.ok(draw.length > 0);
  assert.notEqual(draw[0]!.resolution, resolutionFor(zoomed.end - zoomed.start, zoomed.width));
});

test('zoom keeps the anchor under the cursor and respects bounds', () => {
  const b = { start: 0, end: 1_000_000 };
  const v = { start: 0, end: 1_000_000, width: 1000 };
  const z = zoomView(v, 0.5, 250_000, b);
  assert.equal(z.end - z.start, 500_000);
  assert.ok(Math.abs((250_000 - z.start) / (z.end - z.start) - 0.25) < 1e-9);
  const out = zoomView(z, 10, 250_000, b);
  assert.deepEqual([out.start, out.end], [0, 1_000_000]);
  const p = panView(z, -1e9, b);
  assert.equal(p.start, 0);
});

test('row blocks asking one tile in the same tick make one request; each gets its own tracks', async () => {
  const log: TrackRangeParams[] = [];
  const fetch = coalescingFetch(async (p: TrackRangeParams): Promise<RangeResult> => {
    log.push(p);
    if (p.start < 0) throw new Error('bad range');
    return { resolution: 1, start: p.start, end: p.end, tracks: p.tracks.map((id) => ({ id, events: [] })) };
  });
  const tile = { start: 0, end: 512, width: 512, maxEvents: 256, format: 'columns' as const };
  const [a, b, c] = await Promise.all([
    fetch({ ...tile, tracks: ['t1', 't2'] }), fetch({ ...tile, tracks: ['t3'] }), fetch({ ...tile, start: 512, end: 1024, tracks: ['t1'] }),
  ]);
  assert.equal(log.length, 2, 'one request per tile');
  assert.deepEqual(log[0]!.tracks, ['t1', 't2', 't3']);
  assert.deepEqual(a.tracks.map((t) => t.id), ['t1', 't2']);
  assert.deepEqual(b.tracks.map((t) => t.id), ['t3']);
  assert.deepEqual(c.tracks.map((t) => t.id), ['t1']);
  const bad = { ...tile, start: -512, end: 0 };
  const errs = await Promise.allSettled([fetch({ ...bad, tracks: ['t1'] }), fetch({ ...bad, tracks: ['t2'] })]);
  assert.deepEqual(errs.map((e) => e.status), ['rejected', 'rejected'], 'a failure reaches every block');
  await fetch({ ...tile, tracks: ['t9'] });
  assert.equal(log.length, 4, 'a later tick asks again');
});

test('objects answers convert to columns (test helper); items and the shortest hit read from columns', () => {
  const r: RangeResult = {
    resolution: 10, start: 1000, end: 1100,
    tracks: [
      { id: 'g', buckets: [
        { start: 1020, end: 1030, count: 3, busyNs: 8, longest: { id: 7, name: 'gemm', dur: 6 } },
        { start: 1030, end: 1040, count: 0, busyNs: 10 },
      ] },
      { id: 'n', events: [{ id: 1, start: 1000, end: 1090, name: 'step', kind: 'nvtx', depth: 0 }, { id: 2, start: 1010, end: 1015, name: 'fwd', kind: 'nvtx', depth: 1 }] },
    ],
  };
  const c = toColumns(r);
  assert.equal(c.format, 'columns');
  assert.equal(toColumns(c), c, 'columns pass through');
  const g = c.tracks[0]!;
  assert.ok('buckets' in g);
  assert.deepEqual(g.buckets.index, [2, 3]);
  assert.deepEqual(g.buckets.longest!.id, [7, -1]);
  assert.deepEqual(g.buckets.longest!.name.map((k) => (k < 0 ? null : g.buckets.longest!.names[k])), ['gemm', null]);
  assert.deepEqual(g.buckets.busyPct, [80, 100], 'busyPct from busyNs as the server computes it');
  const tile = { resolution: 10, start: 1000, end: 1100, key: 'k', result: c };
  const parts = byTrack([tile]);
  const items: Item[] = [];
  forEachItem(parts.get('g')!, 0, 5000, 'GPU op', (it) => { items.push(it); });
  assert.deepEqual(items, [{ id: 7, name: 'gemm', kind: 'GPU op', start: 1020, end: 1030, dur: 6, count: 3 }], 'a bucket without a longest item is not an item');
  assert.equal(shortestItem(parts.get('n')!, 1012, 1013, 'NVTX range')?.name, 'fwd');
  assert.equal(shortestItem(parts.get('n')!, 1050, 1060, 'NVTX range')?.id, 1);
  assert.equal(shortestItem(parts.get('n')!, 2000, 2001, 'NVTX range'), undefined);
});

test('zoomNeighbourTiles: every view one Ctrl+wheel step in at the anchor needs at the next level, about a view wide', () => {
  const bounds = { start: 0, end: 1e9 };
  for (const view of [{ start: 3e8, end: 3.7e8, width: 1000 }, { start: 0, end: 1e9, width: 1280 }, { start: 123457, end: 223457, width: 977 }, { start: 0, end: 1e9, width: 700 }, { start: 2e8, end: 9e8, width: 2900 }]) {
    const r = resolutionFor(view.end - view.start, view.width);
    const whole = Math.ceil((view.end - view.start) / ((r / 2) * TILE_PX));
    for (let a = 0; a <= 1; a += 0.125) {
      const anchor = view.start + a * (view.end - view.start);
      const held = new Set(zoomNeighbourTiles(view, bounds, anchor).map(tileKey));
      /* at most a view's width at the next level (+1 tile for alignment; no width here is a multiple of TILE_PX), not the whole view there (twice that) */
      assert.ok(held.size <= Math.ceil(view.width / TILE_PX) + 1, `anchor ${a}: ${held.size} tiles, a view's width is ${view.width / TILE_PX} (the whole view there: ${whole})`);
      for (const factor of [1 / 1.99, 1 / 1.55, 1 / 1.2, 1 / 1.05]) {
        const next = zoomView(view, factor, anchor, bounds);
        const need = tilesFor(next, 0, bounds);
        if (need[0]!.resolution === r) continue; /* the same level: held already */
        assert.equal(need[0]!.resolution, r / 2, 'one level');
        for (const k of need) assert.ok(held.has(tileKey(k)), `view ${view.start}-${view.end}, anchor ${a}, factor ${factor}: ${tileKey(k)} held`);
      }
    }
  }
  assert.deepEqual(zoomNeighbourTiles({ start: 0, end: 500, width: 1000 }), [], 'at 1 ns/px there is no level in');
});
