import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asFirstView, covers, planFirstTiles } from '../../src/client/firstTiles';
import { tilesFor } from '../../src/client/timelineModel';
import type { ProfileInfo, Track } from '../../src/protocol/types';

/* 4 GPUs of 8 streams: per GPU a utilisation row (its streams merged) over its streams */
const tracks = Array.from({ length: 32 }, (_, i) => ({ id: `gpu:${i >> 3}:${i & 7}`, kind: 'gpu', device: i >> 3, stream: i & 7, name: `stream ${i & 7}` } as unknown as Track));

test('first tiles: the page\'s tiles at its width, on the profile\'s exact clock', () => {
  /* an epoch clock past 2^53 ns: the requests carry exact BigInt times, the keys the page's offsets */
  const start = 1_764_000_000_000_000_000n, end = start + 2_000_000_000n;
  const info = { span: { start, end } } as unknown as ProfileInfo;
  const p = planFirstTiles(info, tracks, { plotWidth: 1070, rows: 8 })!;
  const origin = start - (start % (1n << 40n));
  const bounds = { start: Number(start - origin), end: Number(end - origin) };
  assert.deepEqual(p.keys, tilesFor({ ...bounds, width: 1070 }, 0, bounds));
  for (const [i, k] of p.keys.entries()) {
    assert.equal(p.params[i]!.start, origin + BigInt(k.start));
    assert.equal(p.params[i]!.end, origin + BigInt(k.end));
  }
  assert.deepEqual(p.tracks, tracks.slice(0, 8).map((x) => x.id), 'the first 8 rows: GPU 0 (its utilisation row and 7 streams)');
  const more = planFirstTiles(info, tracks, { plotWidth: 1070, rows: 20 })!;
  assert.ok(covers(more, p) && !covers(p, more), 'more rows need more tracks');
  const wide = planFirstTiles(info, tracks, { plotWidth: 4000, rows: 8 })!;
  assert.ok(!covers(p, wide), 'a finer resolution needs other tiles');
  assert.equal(planFirstTiles({ span: { start: 5, end: 5 } } as unknown as ProfileInfo, tracks, { plotWidth: 100, rows: 4 }), undefined, 'no span: no timeline');
});

test('first tiles: a page\'s reported size is checked', () => {
  assert.deepEqual(asFirstView({ plotWidth: 800, rows: 12 }), { plotWidth: 800, rows: 12 });
  for (const bad of [undefined, null, {}, { plotWidth: 'x', rows: 3 }, { plotWidth: 0, rows: 3 }, { plotWidth: 10, rows: -1 }, { plotWidth: Infinity, rows: 3 }]) assert.equal(asFirstView(bad), undefined, JSON.stringify(bad));
  assert.deepEqual(asFirstView({ plotWidth: 1e9, rows: 1e9 }), { plotWidth: 65536, rows: 4096 }, 'clamped');
});
