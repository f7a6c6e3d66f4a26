/* client/findingSources against the real server: on a profile whose NVTX
 * ranges carry FILE:LINE tags, the hotspot finding lands on its kernel's
 * tagged line with its evidence window; findings without a kernel, kernels
 * with no confident candidate and failed look-ups make no diagnostic. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findingSources } from '../../src/client/findingSources';
import { NsysClient } from '../../src/client/nsysClient';
import { silentLogger } from '../../src/client/logger';
import { serverBinary, NO_SERVER, REPO_ROOT } from '../helpers';

test('a hotspot finding is placed at its kernel\'s tagged source line, with its window', async (t) => {
  const bin = serverBinary();
  if (!bin) return t.skip(NO_SERVER);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-fs-'));
  const prof = path.join(dir, 'tags.sqlite');
  execFileSync('python3', [path.join(REPO_ROOT, 'tools', 'gen_profile.py'), '--preset', 'small', '--source-tags', '-o', prof], { stdio: 'pipe' });
  const client = new NsysClient({ command: bin, logger: silentLogger, maxRestarts: 0, env: { ...process.env, NSYS_AI_CACHE_DIR: dir } });
  try {
    await client.start();
    const { profileId } = await client.openProfile(prof);
    const report = await client.requestUntyped<{ findings: Array<{ id: string; severity: string; title: string; evidence: Record<string, unknown> }> }>('report/generate', { profileId });
    const hot = report.findings.find((f) => f.id === 'hotspot_kernel');
    assert.ok(hot, 'the small profile has a hotspot');
    const found = await findingSources(report.findings, (name) => client.locate(profileId, name));
    assert.equal(found.length, report.findings.filter((f) => typeof f.evidence.kernel === 'string').length);
    const f = found.find((x) => x.id === 'hotspot_kernel')!;
    const at = await client.locate(profileId, String(hot!.evidence.kernel));
    assert.equal(f.file, at.candidates[0]!.file);
    assert.equal(f.line, at.candidates[0]!.line);
    assert.match(f.file, /\.py$/);
    assert.deepEqual(f.window, hot!.evidence.window);
    assert.ok(f.message.startsWith(hot!.title));
    /* no confident candidate, or a failed look-up: nothing */
    assert.deepEqual(await findingSources(report.findings, async () => ({ candidates: [{ file: 'x.py', line: 1, confidence: 0.2 }] })), []);
    assert.deepEqual(await findingSources(report.findings, async () => { throw new Error('no'); }), []);
  } finally {
    await client.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
