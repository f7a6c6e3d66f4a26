/* The Runs view's model: the profile command line, `nsys-ai profile --format
 * json` parsed (against the real binary with a stand-in nsys), run labels and
 * runs/compare as markdown (from the real server's answer). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { compareMarkdown, parseProfileOutput, profileArgs, runLabel } from '../../src/client/runsModel';
import type { RunsCompareResult } from '../../src/protocol/generated/runs.compare.result';
import { NO_PROFILE, NO_SERVER, serverBinary, smallProfile } from '../helpers';

test('profile command line', () => {
  assert.deepEqual(profileArgs('/ws', '/ws/t.py', { python: '/venv/bin/python', note: 'h', before: 'r1' }),
    ['profile', '--format', 'json', '--root', '/ws', '--note', 'h', '--before', 'r1', '--', '/venv/bin/python', '/ws/t.py']);
  assert.deepEqual(profileArgs('/ws', 't.py').slice(-3), ['--', 'python3', 't.py']);
});

test('profile output: errors with and without JSON', () => {
  assert.deepEqual(parseProfileOutput('{"error": {"code": -32006, "message": "nsys is not installed", "run": "r2"}}', '', 2),
    { ok: false, message: 'nsys is not installed', run: 'r2' });
  assert.deepEqual(parseProfileOutput('', 'x\nnsys-ai: boom\n', 1), { ok: false, message: 'x nsys-ai: boom' });
});

test('profile, runs and compare through the real binary', (t) => {
  const bin = serverBinary();
  const prof = smallProfile();
  if (!bin) return t.skip(NO_SERVER);
  if (!prof) return t.skip(NO_PROFILE);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-runs-'));
  const fake = path.join(dir, 'nsys'); // writes a report and "exports" the test profile
  fs.writeFileSync(fake, `#!/bin/sh\ncmd=$1; out=''\nwhile [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done\n` +
    `if [ "$cmd" = profile ]; then echo rep > "$out.nsys-rep"; exit 0; fi\nif [ "$cmd" = export ]; then cp '${prof}' "$out"; exit 0; fi\nexit 9\n`);
  fs.chmodSync(fake, 0o755);
  const env = { ...process.env, NSYS_AI_NSYS: fake, NSYS_AI_NO_PROGRESS: '1' };
  const run = (args: string[]) => spawnSync(bin, args, { env, encoding: 'utf8' });
  const a = run(profileArgs(dir, 'train.py', { note: 'slow loader' }));
  const first = parseProfileOutput(a.stdout, a.stderr, a.status);
  assert.ok(first.ok, JSON.stringify(first));
  if (!first.ok) return;
  assert.equal(first.run.name, 'r1');
  assert.ok(first.run.report?.endsWith(path.join('.nsys-ai', 'runs', 'r1', 'report.sqlite')));
  const l = runLabel(first.run);
  assert.equal(l.label, 'r1');
  assert.match(l.description, /^ok · doctor (healthy|warnings)/);
  assert.match(l.tooltip, /hypothesis: slow loader/);
  const b = run(profileArgs(dir, 'train.py', { before: 'r1' }));
  const second = parseProfileOutput(b.stdout, b.stderr, b.status);
  assert.ok(second.ok && second.run.before === 'r1');
  const c = run(['call', 'runs/compare', JSON.stringify({ workspaceRoot: dir })]);
  assert.equal(c.status, 0, c.stderr);
  const md = compareMarkdown(JSON.parse(c.stdout) as RunsCompareResult);
  assert.match(md, /^# r1 → r2/);
  assert.match(md, /Converged: \*\*(yes|no)\*\*/);
  assert.match(md, /- r1: \d+\.\d%\n- r2: \d+\.\d%/);
  fs.rmSync(dir, { recursive: true, force: true });
});
