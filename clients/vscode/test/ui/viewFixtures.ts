/* Generated profiles for the views' UI tests (small, made once per run). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '../helpers';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nsys-ai-views-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

/** A small generated run (tools/gen_profile.py), or undefined when the generator fails. */
export function generated(name: string, args: string[]): string | undefined {
  const out = path.join(dir, `${name}.sqlite`);
  if (fs.existsSync(out)) return out;
  try {
    execFileSync('python3', [path.join(REPO_ROOT, 'tools', 'gen_profile.py'), '--preset', 'tiny', '-o', out, ...args], { stdio: 'pipe' });
    return out;
  } catch (e) {
    console.error(`# gen_profile.py failed: ${String(e)}`);
    return undefined;
  }
}

/** A 2-GPU run whose rank 1 starts every NCCL kernel late (half its duration later, same end):
 * a planted straggler, the last to arrive at every collective. */
export function plantedStraggler(): string | undefined {
  const src = generated('ranks2', ['--gpus', '2', '--kernels', '600', '--seed', '3']);
  if (!src) return undefined;
  const out = path.join(dir, 'straggler.sqlite');
  fs.copyFileSync(src, out);
  execFileSync('python3', ['-c', `import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + (\\"end\\" - start) / 2 WHERE deviceId = 1 AND shortName IN (SELECT id FROM StringIds WHERE value LIKE '%nccl%')")
c.commit()`, out], { stdio: 'pipe' });
  return out;
}

/** Two rank files (NCCL payloads: matched by communicator and sequence) whose
 * clocks disagree and cannot be aligned: no session start in either (the set
 * is not aligned), and rank 1's times moved later by the time between the ends
 * of two back-to-back collectives of one name on rank 0. On the drawn clock,
 * rank 1's instance of the first then ends where rank 0's second ends: linking
 * by nearest end picks the wrong instance, the server's matching the right one. */
export function skewedRanks(): [string, string] | undefined {
  const out = path.join(dir, 'skew');
  if (!generated('skew-all', ['--gpus', '2', '--kernels', '600', '--seed', '3', '--shape', 'nccl-nvtx', '--rank-files', out, '--ranks-per-node', '2'])) return undefined;
  const files: [string, string] = [path.join(out, 'rank0.sqlite'), path.join(out, 'rank1.sqlite')];
  execFileSync('python3', ['-c', `import sqlite3,sys
r0=sqlite3.connect(sys.argv[1])
k=r0.execute("SELECT k.streamId, s.value, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' ORDER BY k.start").fetchall()
pairs=[b[2]-a[2] for a,b in zip(k,k[1:]) if a[:2]==b[:2]]
delta=pairs[len(pairs)//2]
for f in sys.argv[1:]:
  c=sqlite3.connect(f)
  c.execute("DELETE FROM TARGET_INFO_SESSION_START_TIME")
  if f==sys.argv[2]:
    for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
      cols={r[1] for r in c.execute('PRAGMA table_info("%s")' % t)}
      if {"start","end"}<=cols: c.execute('UPDATE "%s" SET start = start + ?, "end" = "end" + ?' % t, (delta, delta))
  c.commit()`, ...files], { stdio: 'pipe' });
  return files;
}
