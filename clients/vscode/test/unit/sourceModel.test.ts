import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SourceIndex } from '../../src/client/sourceModel';
import { hoverMarkdown, showInTimelineLink } from '../../src/client/hoverText';

const map = {
  files: [
    { file: 'model.py', lines: [{ line: 74, count: 700, totalNs: 174_300_000, pctGpu: 44.13 }, { line: 12, count: 3, totalNs: 1000, pctGpu: 0.01 }] },
    { file: 'k/a.cu', lines: [{ line: 5, count: 2, totalNs: 23_872, pctGpu: 13.43 }] },
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
  const at = {
    file: 'model.py', line: 74, count: 700, totalNs: 174_300_000, pctGpu: 44.13,
    kernels: [
      { name: 'gemm|weird', kernelId: 812, count: 200, totalNs: 160_100_000, pctGpu: 40.53, strategy: 'tag', explanation: '200 x gemm' },
      { name: 'relu', kernelId: 9, count: 500, totalNs: 14_200_000, pctGpu: 3.6, strategy: 'tag' },
    ],
  };
  const md = hoverMarkdown('run.sqlite', 'p1', at);
  assert.match(md, /700 launches of 2 kernels · 174 ms · 44% of GPU kernel time/);
  assert.match(md, /\| `gemm\\\|weird` \| 200 \| 160 ms \| 41% \| tag \|/);
  assert.match(md, /200 x gemm/);
  const link = showInTimelineLink({ profileId: 'p1', kernelId: 812, name: 'gemm|weird' });
  assert.ok(md.includes(`[Show in timeline](${link})`));
  assert.deepEqual(JSON.parse(decodeURIComponent(link.split('?')[1]!)), [{ profileId: 'p1', kernelId: 812, name: 'gemm|weird' }]);
  const withExplain = hoverMarkdown('run.sqlite', 'p1', at, { name: 'gemm', displayName: 'gemm', origin: 'cublas', category: 'gemm', markdown: '**cuBLAS GEMM**' });
  assert.match(withExplain, /\*\*cuBLAS GEMM\*\*/);
  assert.ok(!withExplain.includes('200 x gemm'), 'the full explanation replaces the one-liner');
});
