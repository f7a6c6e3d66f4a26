/* Where the nsys-ai binary is: the `nsys-ai.serverPath` setting when set,
 * otherwise the first `nsys-ai` on PATH, otherwise the one a platform VSIX
 * bundles (bundledServer.ts). */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** First executable named `name` on `pathEnv`, or undefined. */
export function findOnPath(name: string, pathEnv: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const cand = path.join(dir, name);
    if (isExecutable(cand)) return cand;
  }
  return undefined;
}

export type ServerPathResult = { ok: true; path: string } | { ok: false; message: string };

export function resolveServerPath(setting: string | undefined, pathEnv?: string, bundled?: string): ServerPathResult {
  const configured = setting?.trim();
  if (configured) {
    if (isExecutable(configured)) return { ok: true, path: configured };
    return { ok: false, message: `nsys-ai.serverPath is "${configured}", which is not an executable file.` };
  }
  const found = findOnPath('nsys-ai', pathEnv);
  if (found) return { ok: true, path: found };
  if (bundled) return { ok: true, path: bundled };
  return {
    ok: false,
    message: 'nsys-ai was not found on PATH. Build it (meson setup build && ninja -C build) and set "nsys-ai.serverPath".',
  };
}
