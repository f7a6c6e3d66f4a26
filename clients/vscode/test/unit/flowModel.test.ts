/* The guided flow's model: the next step read from a real run history (runs
 * recorded and noted through the real binary), what to annotate, and the
 * diagnosis and refine pages built from the real server's answers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { annotateTargets, diagnoseMarkdown, flowNote, flowSteps, nextStep, refineMarkdown, refineNote, runScript } from '../../src/client/flowModel';
import { compareMarkdown, type Run } from '../../src/client/runsModel';
import type { RunsCompareResult } from '../../src/protocol/generated/runs.compare.result';
import type { SourceRefineResult } from '../../src/protocol/generated/source.refine.result';
import { NO_PROFILE, NO_SERVER, serverBinary, smallProfile } from '../helpers';

test('an empty history starts with profiling', () => {
  assert.equal(nextStep([]), 'profile');
  const steps = flowSteps([]);
  assert.deepEqual(steps.map((s) => [s.id, s.state]),
    [['profile', 'next'], ['diagnose', 'todo'], ['annotate', 'todo'], ['reprofile', 'todo'], ['refine', 'todo']]);
  assert.ok(steps.every((s) => s.command === `nsys-ai.flow.${s.id}`));
});

test('the loop through a real history: each step leaves a note, the next one follows', (t) => {
  const bin = serverBinary();
  const prof = smallProfile();
  if (!bin) return t.skip(NO_SERVER);
  if (!prof) return t.skip(NO_PROFILE);
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-flow-'));
  const call = <R>(method: string, params: object, profile?: string): R => {
    const r = spawnSync(bin, ['call', method, JSON.stringify(params), ...(profile ? ['--profile', profile] : [])],
      { encoding: 'utf8', env: { ...process.env, NSYS_AI_NO_PROGRESS: '1' } });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as R;
  };
  const runs = () => call<{ runs: Run[] }>('runs/list', { workspaceRoot: ws }).runs;
  const note = (run: string, text: string) => call('runs/note', { workspaceRoot: ws, run, text, kind: 'decision' });
  const state = () => Object.fromEntries(flowSteps(runs()).map((s) => [s.id, s.state]));

  call('runs/record', { workspaceRoot: ws, report: prof, command: ['python3', 'train.py', '--steps', '3'] });
  assert.equal(nextStep(runs()), 'diagnose');
  assert.deepEqual(state(), { profile: 'done', diagnose: 'next', annotate: 'todo', reprofile: 'todo', refine: 'todo' });
  assert.equal(runScript(runs()[0]), 'train.py');
  note('r1', 'a plain note is not a step');
  note('r1', flowNote('diagnose', 'doctor healthy, 2 findings'));
  assert.equal(nextStep(runs()), 'annotate');
  assert.equal(flowSteps(runs())[1].detail, 'doctor healthy, 2 findings');
  note('r1', flowNote('annotate', 'train.py (function)'));
  assert.equal(nextStep(runs()), 'reprofile');
  call('runs/record', { workspaceRoot: ws, report: prof, before: 'r1' });
  assert.deepEqual(state(), { profile: 'done', diagnose: 'todo', annotate: 'todo', reprofile: 'done', refine: 'next' });
  const c = call<RunsCompareResult>('runs/compare', { workspaceRoot: ws });
  assert.equal(c.after.run, 'r2');
  const n = refineNote(c);
  assert.match(n, /^vs r1, coverage \d+\.\d% → \d+\.\d%, \d+ split$/);
  note('r2', flowNote('refine', n));
  assert.equal(nextStep(runs()), 'annotate'); // not converged: annotate what refine names, then again
  assert.match(refineMarkdown(c, undefined), /## Next annotations\n\n- no split range in the later run/);
  // converged: the loop ends
  const latest = runs()[0];
  const converged: Run = { ...latest, notes: [{ ...latest.notes[0], text: flowNote('refine', 'converged vs r1') }] };
  assert.equal(nextStep([converged, ...runs().slice(1)]), undefined);
  assert.ok(flowSteps([converged]).every((s) => s.state !== 'next'));

  // the diagnosis page from the real doctor and report answers
  const doctor = call<Parameters<typeof diagnoseMarkdown>[1]>('profile/doctor', { profileId: 'p1' }, prof);
  const report = call<Parameters<typeof diagnoseMarkdown>[2]>('report/generate', { profileId: 'p1' }, prof);
  const md = diagnoseMarkdown(runs()[1], doctor, report);
  assert.match(md, new RegExp(`^# r1: diagnosis\\n\\nCapture health: \\*\\*${doctor.verdict}\\*\\*`));
  for (const f of report.findings) assert.ok(md.includes(f.title), f.title);
  fs.rmSync(ws, { recursive: true, force: true });
});

test('what to annotate: refine\'s statements, else the script on a first pass', () => {
  const refine = (cands: SourceRefineResult['candidates'], taggedRanges: number) =>
    ({ candidates: cands, taggedRanges } as unknown as SourceRefineResult);
  const cand = (tag: string, scope: unknown) => ({
    file: 'm.py', line: 3, tag, totalNs: 10, pctGpu: 42.04, distinctKernels: 3, topKernels: [], statements: [],
    ...(scope ? { annotate: { file: 'm.py', workspaceRoot: '/ws', scope, granularity: 'statement' } } : { note: 'a single statement' }),
  }) as unknown as SourceRefineResult['candidates'][number];
  assert.deepEqual(annotateTargets(refine([cand('m.py:3 step', { startLine: 4, endLine: 9 }), cand('m.py:20 x', undefined)], 2), 'm.py'),
    [{ file: 'm.py', scope: { startLine: 4, endLine: 9 }, granularity: 'statement', why: 'm.py:3 step: 3 kernel names, 42.0% of GPU time' }]);
  assert.deepEqual(annotateTargets(refine([], 0), 'train.py'),
    [{ file: 'train.py', scope: 'file', granularity: 'function', why: 'first pass: every function of the script' }]);
  assert.deepEqual(annotateTargets(undefined, 'train.py').map((t) => t.granularity), ['function']);
  assert.deepEqual(annotateTargets(refine([], 4), 'train.py'), []); // tagged and nothing split: nothing to add
  assert.deepEqual(annotateTargets(refine([], 0), undefined), []);
});

test('refine pages name the ranges to take out', () => {
  const tag = (t: string, k: number) => ({ tag: t, file: 'm.py', line: 1, ranges: 1, distinctKernels: k, kernels: k, totalNs: k });
  const side = (run: string) => ({ run, coverage: 50, taggedPct: 60, taggedRanges: 2, tags: 3, split: 1, kernels: 9, converged: false });
  const c: RunsCompareResult = { before: side('r1'), after: side('r2'), rangesAdded: [tag('m.py:9 io', 0)], rangesRemoved: [],
    innermost: [tag('m.py:3 step', 2)], idle: [tag('m.py:9 io', 0)], converged: false, history: [] };
  assert.match(compareMarkdown(c), /### Added ranges without kernels \(take them out: Remove NVTX Annotations\)\n\n- `m.py:9 io`/);
  assert.equal(refineNote(c), 'vs r1, coverage 50.0% → 50.0%, 1 split, 1 new range without kernels');
  assert.equal(refineNote({ ...c, converged: true }), 'converged vs r1, coverage 50.0% → 50.0%');
});
