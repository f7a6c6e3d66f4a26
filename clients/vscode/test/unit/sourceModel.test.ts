import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SourceIndex } from '../../src/client/sourceModel';
import { hoverMarkdown, showInTimelineLink } from '../../src/client/hoverText';
import type { KernelsAtResult, SourceMapResult } from '../../src/protocol/types';

const none = { totalNs: 0, pctGpu: 0 };
const map: SourceMapResult = {
  workspaceRoot: '/ws', gpuTimeNs: 395_000_000, kernels: 705,
  strategies: { tag: none, callchain: none, module: none, definition: none }, tags: [],
  files: [
    { file: 'model.py', totalNs: 174_301_000, pctGpu: 44.14, lines: [{ line: 74, count: 700, totalNs: 174_300_000, pctGpu: 44.13, kernels: [] }, { line: 12, count: 3, totalNs: 1000, pctGpu: 0.01, kernels: [] }] },
    { file: 'k/a.cu', totalNs: 23_872, pctGpu: 13.43, lines: [{ line: 5, count: 2, totalNs: 23_872, pctGpu: 13.43, kernels: [] }] },
  ],
};

test('SourceIndex: lines per file (sorted), lookups by absolute path, heat relative to the hottest line', () => {
  const idx = new SourceIndex(map, '/ws');
  assert.equal(idx.fileCount, 2);
  assert.deepEqual(idx.lines('/ws/model.py').map((l) => l.line), [12, 74]);
  assert.equal(idx.at('model.py', 74)?.count, 700);
  assert.equal(idx.at('/ws/k/a.cu', 5)?.pctGpu, 13.43);
  assert.equal(idx.at('/ws/other.py', 1), undefined);
  assert.equal(idx.heat(idx.at('model.py', 74)!), 4);
  assert.equal(idx.heat(idx.at('model.py', 12)!), 0);
  assert.equal(idx.heat(idx.at('k/a.cu', 5)!), 1);
});

test('hover markdown: counts, a table with escaped names, the explanation and a command link', () => {
  const tagged = { strategy: 'tag' as const, confidence: 0.95, evidence: 'launched inside the NVTX source tag range "model.py:74 mlp"' };
  const at: KernelsAtResult = {
    file: 'model.py', line: 74, count: 700, totalNs: 174_300_000, pctGpu: 44.13,
    kernels: [
      { name: 'gemm|weird', kernelId: 812, count: 200, totalNs: 160_100_000, avgNs: 800_500, pctGpu: 40.53, ...tagged, explanation: '200 x gemm' },
      { name: 'relu', kernelId: 9, count: 500, totalNs: 14_200_000, avgNs: 28_400, pctGpu: 3.6, ...tagged },
    ],
  };
  const md = hoverMarkdown('run.sqlite', 'p1', at);
  assert.match(md, /700 launches of 2 kernels · 174 ms · 44% of GPU kernel time/);
  assert.match(md, /\| `gemm\\\|weird` \| 200 \| 160 ms \| 41% \| tag \|/);
  assert.match(md, /200 x gemm/);
  const link = showInTimelineLink({ profileId: 'p1', kernelId: 812, name: 'gemm|weird' });
  assert.ok(md.includes(`[Show in timeline](${link})`));
  assert.deepEqual(JSON.parse(decodeURIComponent(link.split('?')[1]!)), [{ profileId: 'p1', kernelId: 812, name: 'gemm|weird' }]);
  const withExplain = hoverMarkdown('run.sqlite', 'p1', at, { markdown: '**cuBLAS GEMM**' });
  assert.match(withExplain, /\*\*cuBLAS GEMM\*\*/);
  assert.ok(!withExplain.includes('200 x gemm'), 'the full explanation replaces the one-liner');
});
