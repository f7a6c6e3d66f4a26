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
