/* client/tileColumns: the compact bucket columns decoded, a tile's bucket
 * columns attached only to the same buckets, and the event times' steps and
 * durations (the host → page re-encoding) restored exactly, past 2^53 too. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attachLongest, decodeBuckets, decodeTracks, packTimes, unpackTimes } from '../../src/client/tileColumns';
import { parseExact, stringifyExact } from '../../src/client/exactJson';
import type { RangeReply } from '../../src/protocol/types';

test('indexStep and busyPct decode to the grid index and busy share; busyNs gives the server\'s busyPct', () => {
  const b = decodeBuckets({ indexStep: [3, 1, 1, 5], busyPct: [1, 100, 37, 2] }, 1000, []);
  assert.deepEqual(b.index, [3, 4, 5, 10]);
  assert.deepEqual(b.busyPct, [1, 100, 37, 2]);
  assert.equal(b.longest, undefined, 'no longest op unless asked');
  const full = decodeBuckets({ index: [0, 2], busyNs: [1, 999], count: [2, 0], longestId: [5, -1], longestName: [0, -1], longestDur: [9, 0] }, 1000, ['k']);
  assert.deepEqual(full.busyPct, [1, 100], 'rounded up: any busy time is at least 1');
  assert.deepEqual(full.longest, { count: [2, 0], id: [5, -1], dur: [9, 0], name: [0, -1], names: ['k'] });
});

test('a bucket track takes the count and longest op of the same buckets only', () => {
  const tile = decodeBuckets({ indexStep: [1, 1, 2], busyPct: [5, 5, 5] }, 10, []);
  const other = decodeBuckets({ indexStep: [1, 2, 1], count: [1, 1, 1], longestId: [1, 2, 3], longestName: [0, 0, 0], longestDur: [1, 1, 1] }, 10, ['a']);
  assert.equal(attachLongest(tile, other), false, 'other buckets: refused');
  assert.equal(tile.longest, undefined);
  const same = decodeBuckets({ indexStep: [1, 1, 2], count: [1, 2, 3], longestId: [7, 8, 9], longestName: [0, 0, 0], longestDur: [4, 5, 6] }, 10, ['a']);
  assert.equal(attachLongest(tile, same), true);
  assert.deepEqual(tile.longest!.id, [7, 8, 9]);
});

test('event times travel as steps and durations and come back exact (numbers, and BigInt past 2^53)', () => {
  const big = 2n ** 60n;
  for (const base of [1_000_000_000n, big]) {
    const t = (d: number): number | bigint => { const v = base + BigInt(d); return v <= 9007199254740991n ? Number(v) : v; };
    const reply = { format: 'columns', resolution: 4, start: t(100), end: t(2148), names: ['k'],
      tracks: [{ id: 'g', events: { id: [1, 2, 3], start: [t(40), t(100), t(101)], end: [t(150), t(103), t(2100)], name: [0, 0, 0], kind: [0, 0, 0] } },
        { id: 'h', buckets: { indexStep: [0], busyPct: [3] } }] } as unknown as RangeReply;
    const copy = () => parseExact(stringifyExact(reply)) as RangeReply;
    const sent = stringifyExact(packTimes(copy()));
    assert.ok(!sent.includes('"start":[') && sent.includes('"startStep":[-60,60,1]') && sent.includes('"dur":[110,3,1999]'), sent);
    assert.ok(sent.length < stringifyExact(reply).length, 'fewer bytes');
    const back = unpackTimes(parseExact(sent) as RangeReply);
    assert.deepEqual(back.tracks, reply.tracks, `restored exactly at ${base}`);
    assert.deepEqual(decodeTracks(parseExact(stringifyExact(reply)) as RangeReply).tracks, decodeTracks(parseExact(sent) as RangeReply).tracks, 'a reply not packed decodes the same');
  }
});
