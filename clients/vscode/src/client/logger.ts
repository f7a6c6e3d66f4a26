/* The logger the client logic writes to. The extension injects one that
 * writes to an output channel; tests inject one that collects lines. */

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export function collectingLogger(lines: string[]): Logger {
  return {
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
}
