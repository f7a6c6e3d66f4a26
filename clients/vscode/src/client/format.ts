/* Formatting shared by hovers, CodeLens and the webview. */

export function formatNs(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${trim(ns / 1e9)} s`;
  if (a >= 1e6) return `${trim(ns / 1e6)} ms`;
  if (a >= 1e3) return `${trim(ns / 1e3)} µs`;
  return `${Math.round(ns)} ns`;
}

function trim(v: number): string {
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 1 : 2;
  return v.toFixed(digits).replace(/\.0+$/, '');
}

export function formatPct(p: number): string {
  if (p > 0 && p < 1) return `${p.toFixed(1)}%`;
  return `${Math.round(p)}%`;
}

/** CodeLens title, e.g. "12 kernels · 3.4 ms · 18% GPU". */
export function lensTitle(count: number, totalNs: number, pctOfGpu: number): string {
  return `${count} kernel${count === 1 ? '' : 's'} · ${formatNs(totalNs)} · ${formatPct(pctOfGpu)} GPU`;
}

/** CodeLens title of a kernel whose definition has several candidates,
 * e.g. "vecadd: 1 of 3 candidate definitions · 77%". */
export function candidateLensTitle(name: string, candidates: number, confidence: number): string {
  return `${name}: 1 of ${candidates} candidate definitions · ${Math.round(confidence * 100)}%`;
}

export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
