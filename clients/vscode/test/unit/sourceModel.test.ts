import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SourceIndex } from '../../src/client/sourceModel';
import { hoverMarkdown, showInTimelineLink } from '../../src/client/hoverText';
import { candidateLensTitle } from '../../src/client/format';
import type { KernelsAtResult, LocateCandidate, SourceMapResult } from '../../src/protocol/types';

const none = { totalNs: 0, pctGpu: 0 };
const map: SourceMapResult = {
  workspaceRoot: '/ws', gpuTimeNs: 395_000_000, kernels: 705,
  strategies: { tag: none, callchain: none, module: none, definition: none, launch: none }, tags: [], truncated: false,
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

const vecadd = (file: string, line: number, confidence: number, evidence: string): LocateCandidate =>
  ({ file, line, strategy: 'definition', confidence, evidence, count: 4, totalNs: 536_542 });

test('ambiguous kernels: SourceIndex keeps their candidates, the lens names them, the hover lists every candidate with its evidence', () => {
  const ev = 'kernel name vecadd matches the cuda-global definition; it launches on explicit streams, as the profile shows (the most likely of 3 candidates)';
  const row = { name: 'vecadd', kernelId: 3, count: 4, totalNs: 536_542, avgNs: 134_135, pctGpu: 100, strategy: 'definition' as const,
    confidence: 0.77, evidence: ev, candidates: 3, span: { startLine: 4, endLine: 10 } };
  const amb: SourceMapResult = { ...map, files: [{ file: 'ex4.cu', totalNs: 536_542, pctGpu: 100,
    lines: [{ line: 6, count: 4, totalNs: 536_542, pctGpu: 100, kernels: [row] }] }] };
  const idx = new SourceIndex(amb, '/ws');
  assert.deepEqual(idx.at('ex4.cu', 6)?.ambiguous, [{ name: 'vecadd', candidates: 3, confidence: 0.77, evidence: ev }]);
  assert.deepEqual(idx.at('model.py', 74)?.ambiguous ?? [], []);
  assert.equal(candidateLensTitle('vecadd', 3, 0.77), 'vecadd: 1 of 3 candidate definitions · 77%');
  const at: KernelsAtResult = { file: 'ex4.cu', line: 7, count: 4, totalNs: 536_542, pctGpu: 100, kernels: [row] };
  const alts = [vecadd('ex4.cu', 6, 0.77, ev),
    vecadd('ex1.cu', 4, 0.05, 'ruled out: its launch <<<1, 1>>> uses one stream, the profile ran the kernel on 4 streams'),
    vecadd('ex2.cu', 4, 0.05, 'ruled out: its launch <<<1, 256>>> uses one stream, the profile ran the kernel on 4 streams')];
  const md = hoverMarkdown('run.sqlite', 'p1', at, undefined, { vecadd: alts });
  assert.match(md, /\*\*`vecadd`\*\* has 3 candidate definitions:/);
  for (const c of alts) assert.ok(md.includes(`- \`${c.file}:${c.line}\` · definition · ${Math.round(c.confidence * 100)}% · ${c.evidence}`), c.file);
  // a candidate the profile's own trace records name (OpenACC srcFile:lineNo, a Python backtrace) is listed too
  const traced: LocateCandidate = { ...vecadd('solver.c', 204, 0.95, 'OpenACC launch record: solver.c:204 in solve'), strategy: 'trace' };
  assert.ok(hoverMarkdown('run.sqlite', 'p1', at, undefined, { vecadd: [...alts, traced] })
    .includes('- `solver.c:204` · trace · 95% · OpenACC launch record: solver.c:204 in solve'));
  // without the locate answer, the row's own evidence is still shown
  assert.ok(hoverMarkdown('run.sqlite', 'p1', at).includes(`- this line · 77% · ${ev}`));
  // a certain kernel adds nothing
  const sure = { ...row, confidence: 0.9, candidates: undefined };
  assert.ok(!hoverMarkdown('run.sqlite', 'p1', { ...at, kernels: [sure] }).includes('candidate'));
});
