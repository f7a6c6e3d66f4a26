/* The multi-rank view's model without a server: two rank files whose clocks
 * differ (offsets, one beyond 2^53), a merged range request split per rank and
 * the answers merged (times on the set's clock, names, track and kernel ids
 * unique), and a collective linked across ranks as the server matched it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectiveAt, linksOf, mergedId, mergedRange, ranksOf, rankTracks, splitId, stragglers } from '../../src/client/ranksModel';
import type { OpenSetResult, ViewProfile } from '../../src/protocol/viewMessages';
import type { RangeColumns } from '../../src/protocol/types';

const EPOCH = 1_780_000_000_000_000_000n; /* rank 1's file: an epoch clock */
const set = {
  files: [{ profileId: 'p1', path: '/r/rank0.sqlite', utcEpochNs: null, offsetNs: 0, utcClock: false },
    { profileId: 'p2', path: '/r/rank1.sqlite', utcEpochNs: null, offsetNs: -EPOCH + 5000n, utcClock: true }],
  ranks: [{ rank: 0, profileId: 'p1', device: 0, offsetNs: 0, ncclKernels: 1 }, { rank: 1, profileId: 'p2', device: 0, offsetNs: -EPOCH + 5000n, ncclKernels: 1 }],
  aligned: true, window: { start: 0, end: 100_000 }, overlap: [], nccl: [], iterations: [],
  stragglers: { matchedCollectives: 1, straggler: 1, ranks: [{ rank: 0, lastCount: 0, lastPct: 0, avgLateNs: 0 }, { rank: 1, lastCount: 1, lastPct: 100, avgLateNs: 700 }], rule: '' },
} as unknown as OpenSetResult;
const track = (id: string) => ({ id, kind: 'gpu', device: 0, stream: 7, name: 'Stream 7' });
const profiles = [
  { profileId: 'p1', title: 'rank0.sqlite', info: {}, tracks: { tracks: [track('gpu:0:7')] } },
  { profileId: 'p2', title: 'rank1.sqlite', info: {}, tracks: { tracks: [track('gpu:0:7')] } },
] as unknown as ViewProfile[];

test('ranks, their tracks and rows: one closed utilisation row per rank, ids unique per rank', () => {
  const ranks = ranksOf(set);
  assert.deepEqual(ranks.map((r) => [r.rank, r.file, r.offsetNs]), [[0, 0, 0n], [1, 1, -EPOCH + 5000n]]);
  const { tracks, tree } = rankTracks(ranks, profiles);
  assert.deepEqual(tracks.map((t) => t.id), ['gpu:0:7@0', 'gpu:0:7@1']);
  assert.deepEqual(tree.map((n) => [n.key, n.label, n.openByDefault, n.ids]), [['rank:0', 'Rank 0', false, ['gpu:0:7@0']], ['rank:1', 'Rank 1', false, ['gpu:0:7@1']]]);
  assert.equal(stragglers(set).straggler, 1);
  assert.deepEqual(splitId(mergedId(12345, 1, 2), 2), { file: 1, local: 12345 });
});

test('a merged range asks each rank on its own clock and merges the answers on the set\'s', async () => {
  const ranks = ranksOf(set);
  const asked: Array<[string, Record<string, unknown>]> = [];
  /* each file has one AllReduce: rank 0's starts at 1000 (set clock), rank 1's at 1700: the last arriver */
  const answer = (profileId: string, p: Record<string, unknown>): RangeColumns => {
    asked.push([profileId, p]);
    const off = profileId === 'p1' ? 0n : EPOCH - 5000n; /* profile time = set time − offsetNs */
    const t = (x: number) => (profileId === 'p1' ? x : BigInt(x) + off);
    return { resolution: 1, start: p.start, end: p.end, format: 'columns', names: ['compute', 'ncclAllReduce'],
      tracks: [{ id: 'gpu:0:7', events: { id: [3, 4], start: [t(100), t(profileId === 'p1' ? 1000 : 1700)], end: [t(900), t(2500)], name: [0, 1], kind: [0, 0], depth: [0, 0] } }] } as unknown as RangeColumns;
  };
  const range = mergedRange(ranks, 2, 0n, async (id, p) => answer(id, p));
  const r = await range({ start: 0, end: 4096, width: 512, maxEvents: 256, format: 'columns', tracks: ['gpu:0:7@0', 'gpu:0:7@1'] });
  assert.deepEqual(asked.map(([id, p]) => [id, p.start, p.end, p.tracks]), [['p1', 0, 4096, ['gpu:0:7']], ['p2', EPOCH - 5000n, EPOCH - 5000n + 4096n, ['gpu:0:7']]]);
  assert.deepEqual(r.names, ['compute', 'ncclAllReduce', 'compute', 'ncclAllReduce']);
  const [a, b] = r.tracks as Array<{ id: string; events: { id: number[]; start: number[]; end: number[]; name: number[] } }>;
  assert.deepEqual([a!.id, a!.events.id, a!.events.start, a!.events.name], ['gpu:0:7@0', [6, 8], [100, 1000], [0, 1]]);
  assert.deepEqual([b!.id, b!.events.id, b!.events.start, b!.events.end, b!.events.name], ['gpu:0:7@1', [7, 9], [100, 1700], [900, 2500], [2, 3]]);
  /* the server's row (set/collectives): rank 1's instance is the one at 1700 (exact clock: 2^53 and beyond on its file) */
  const row = { id: 4, type: 'AllReduce', lastRank: 1, startsNs: [1000, 1700], durationsNs: [1500, 800] };
  const { links, last } = linksOf(row, ranks, 0n, r);
  assert.deepEqual(links.map((l) => [l.rank, l.id, l.trackId, l.start, l.end]), [[0, 8, 'gpu:0:7@0', 1000, 2500], [1, 9, 'gpu:0:7@1', 1700, 2500]]);
  assert.equal(last?.rank, 1, 'the server\'s last arriver');
  /* the server names a rank whose instance the drawn kernels do not hold: drawn on its rank's row, not on a neighbour */
  const far = linksOf({ ...row, lastRank: 0, startsNs: [100, 1701] }, ranks, 0n, r);
  assert.deepEqual(far.links.map((l) => [l.rank, l.id, l.trackId, l.start]), [[0, undefined, undefined, 100], [1, undefined, undefined, 1701]]);
  assert.equal(far.last?.rank, 0, 'last is the server\'s, not the latest drawn start');
  const one = linksOf({ ...row, startsNs: [1000, null], durationsNs: [1500, null] }, ranks, 0n, r);
  assert.deepEqual([one.links.length, one.last], [1, undefined]);
  assert.deepEqual(collectiveAt('s1', ranks[1]!, 1700, EPOCH), { setId: 's1', rank: 1, at: EPOCH + 1700n });
});
