/* Shared test helpers: where the real server and a profile are. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';

export const CLIENT_ROOT = path.resolve(__dirname, '..', '..', '..');
export const REPO_ROOT = path.resolve(CLIENT_ROOT, '..', '..');

export function serverBinary(): string | undefined {
  const bin = process.env.NSYS_AI_BIN ? path.resolve(process.env.NSYS_AI_BIN) : path.join(REPO_ROOT, 'build', 'nsys-ai');
  return fs.existsSync(bin) ? bin : undefined;
}

export const NO_SERVER = `nsys-ai binary not found (set NSYS_AI_BIN or build ${path.join(REPO_ROOT, 'build', 'nsys-ai')})`;

let cached: string | undefined | null = null;
/** The small generated profile (tools/gen_profile.py --preset small), made once per run. */
export function smallProfile(): string | undefined {
  if (cached !== null) return cached;
  cached = undefined;
  const env = process.env.NSYS_AI_TEST_PROFILE;
  if (env && fs.existsSync(env)) return (cached = env);
  const gen = path.join(REPO_ROOT, 'tools', 'gen_profile.py');
  if (fs.existsSync(gen)) {
    const out = path.join(os.tmpdir(), `nsys-ai-vscode-small-${process.pid}.sqlite`);
    try {
      execFileSync('python3', [gen, '--preset', 'small', '-o', out], { stdio: 'pipe' });
      cached = out;
      process.on('exit', () => fs.rmSync(out, { force: true }));
    } catch (e) {
      console.error(`# gen_profile.py failed: ${String(e)}`);
    }
  }
  return cached;
}

export const NO_PROFILE = 'no test profile: tools/gen_profile.py is missing or failed (or set NSYS_AI_TEST_PROFILE)';

export function sharedProfile(name: string): string | undefined {
  const shared = process.env.NSYS_AI_SHARED ?? path.join(REPO_ROOT, '..', 'shared');
  const p = path.join(shared, 'profiles', `${name}.sqlite`);
  return fs.existsSync(p) ? p : undefined;
}
