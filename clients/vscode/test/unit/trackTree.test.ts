import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTreeState, toggle, trackTree, visibleRows, type TreeTrack } from '../../src/client/trackTree';
import { tracksBehind } from '../../src/client/tracksBehind';

const tracks: TreeTrack[] = [
  { id: 'gpu:0:7', kind: 'gpu', device: 0, stream: 7, streamClass: 'compute' },
  { id: 'gpu:0:12', kind: 'gpu', device: 0, stream: 12, streamClass: 'communication' },
  { id: 'proj:0:0', kind: 'nvtxProjected', device: 0, depth: 0 },
  { id: 'proj:0:1', kind: 'nvtxProjected', device: 0, depth: 1 },
  { id: 'gpu:1:15', kind: 'gpu', device: 1, stream: 15 },
  { id: 'nvtx:9:9:1', kind: 'nvtx', pid: 9, tid: 9, depth: 1, threadName: 'python' },
  { id: 'nvtx:9:9:0', kind: 'nvtx', pid: 9, tid: 9, depth: 0, threadName: 'python' },
  { id: 'api:9:9', kind: 'api', pid: 9, tid: 9, threadName: 'python' },
  { id: 'api:9:11', kind: 'api', pid: 9, tid: 11, threadName: 'nccl' },
];
const labels = (rows: ReturnType<typeof visibleRows>) => rows.map((r) => `${'  '.repeat(r.level)}${r.label}${r.open === undefined ? '' : r.open ? ' ▾' : ' ▸'}`);

test('GPU › utilisation › streams and NVTX projection; process › thread › NVTX (stacked) and CUDA API', () => {
  const tree = trackTree(tracks);
  const rows = visibleRows(tree, newTreeState());
  assert.deepEqual(labels(rows), [
    'GPU 0 ▾', '  Stream 7 (compute)', '  Stream 12 (communication)', '  NVTX (GPU projection) ▸',
    'GPU 1 ▾', '  Stream 15',
    'python (pid 9) ▾', '  python 9 ▾', '    NVTX ▸', '    CUDA API', '  nccl 11 ▾', '    CUDA API',
  ]);
  assert.deepEqual(rows[0]!.ids, ['gpu:0:7', 'gpu:0:12'], 'the utilisation row draws its streams merged');
  assert.deepEqual(rows[8]!.ids, ['nvtx:9:9:0'], 'NVTX stacked: depth 0 in the row');
  assert.deepEqual(rows[6]!.ids, [], 'an open process draws nothing itself');
});

test('collapse, expand, hide and pin', () => {
  const tree = trackTree(tracks);
  const s = newTreeState();
  toggle(s, 'open', 'nvtx:9:9');
  let rows = visibleRows(tree, s);
  assert.deepEqual(labels(rows).slice(8, 10), ['    NVTX ▾', '      depth 1']);
  toggle(s, 'open', 'proc:9');
  rows = visibleRows(tree, s);
  const proc = rows.find((r) => r.key === 'proc:9')!;
  assert.equal(proc.open, false);
  assert.deepEqual(proc.ids.sort(), ['api:9:11', 'api:9:9', 'nvtx:9:9:0'], 'a collapsed group draws its children merged');
  assert.ok(!rows.some((r) => r.key === 'api:9:9'));
  toggle(s, 'hidden', 'gpu:1');
  toggle(s, 'pinned', 'gpu:0:12');
  rows = visibleRows(tree, s);
  assert.equal(rows[0]!.key, 'gpu:0:12', 'pinned first');
  assert.ok(rows[0]!.pinned);
  assert.ok(!rows.some((r) => r.key.startsWith('gpu:1')), 'a hidden GPU and its streams are gone');
  assert.equal(rows.filter((r) => r.key === 'gpu:0:12').length, 1);
  toggle(s, 'pinned', 'gpu:0:12');
  toggle(s, 'hidden', 'gpu:1');
  toggle(s, 'open', 'proc:9');
  toggle(s, 'open', 'nvtx:9:9');
  assert.deepEqual(visibleRows(tree, s), visibleRows(tree, newTreeState()), 'toggling back restores the default');
});

test('tracksBehind: what opening a closed group would draw beyond its own row', () => {
  const tree = trackTree(tracks);
  const s = newTreeState();
  assert.deepEqual(tracksBehind(tree, s, new Set(['nvtx:9:9', 'proj:0'].concat(visibleRows(tree, s).filter((r) => r.open === false).map((r) => r.key)))).sort(),
    ['nvtx:9:9:1', 'proj:0:1'], 'closed NVTX groups: their deeper depths');
  toggle(s, 'open', 'gpu:0');
  assert.deepEqual(tracksBehind(tree, s, new Set(['gpu:0'])), ['proj:0:0'], 'a closed GPU draws its streams merged: its NVTX projection row is behind it (the deeper depth stays behind that closed row)');
  toggle(s, 'open', 'proc:9');
  assert.deepEqual(tracksBehind(tree, s, new Set(['proc:9'])), [], 'a closed process draws every row it would show (merged): nothing behind');
  toggle(s, 'open', 'nvtx:9:9');
  assert.deepEqual(tracksBehind(tree, s, new Set(['proc:9'])), ['nvtx:9:9:1'], 'unless a group inside it is open: its depth rows');
  assert.deepEqual(tracksBehind(tree, s, new Set(['gpu:1'])), [], 'only the keys asked about (gpu:1 is open: closing it shows nothing new)');
  assert.equal(s.toggled.has('gpu:1'), false, 'the state itself is left alone');
});
