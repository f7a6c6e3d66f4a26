/* The nsys-ai binary that a platform VSIX carries: server/nsys-ai in the
 * extension's folder (scripts/package.sh puts the self-contained build there).
 * The generic VSIX has none. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isExecutable } from './serverPath';

/** The bundled binary under `extensionPath`, made executable when the VSIX
 * install dropped its mode bits, or undefined when there is none. */
export function bundledServerPath(extensionPath: string | undefined): string | undefined {
  if (!extensionPath) return undefined;
  const cand = path.join(extensionPath, 'server', 'nsys-ai');
  if (isExecutable(cand)) return cand;
  try {
    if (!fs.statSync(cand).isFile()) return undefined;
    fs.chmodSync(cand, 0o755);
  } catch {
    return undefined;
  }
  return isExecutable(cand) ? cand : undefined;
}
