/* What the webview shows of a kernel/explain answer: the Details panel's badges
 * and markdown, and the longest instance's id ("Top kernels" reveals it). The
 * host posts only these (about a third of the answer's bytes: its context,
 * occupancy, detectors and suggestions are in the markdown already), so the
 * answer crosses VS Code's relay sooner (bench/README.md, branch vsc15). Free
 * of DOM and vscode imports. */
import type { KernelExplain } from '../protocol/types';

/** The fields of a kernel/explain answer the page reads. */
export const PAGE_EXPLAIN_FIELDS = ['name', 'displayName', 'kernelId', 'inProfile', 'origin', 'category', 'markdown'] as const;

/** A kernel/explain answer as the webview gets it. */
export type PageExplain = Pick<KernelExplain, (typeof PAGE_EXPLAIN_FIELDS)[number]> & { stats: { longestKernelId?: number } | null };

/** `r` (a kernel/explain result) with only what the page reads; anything else is returned as it is. */
export function pageExplain(r: unknown): unknown {
  if (!r || typeof r !== 'object') return r;
  const x = r as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of PAGE_EXPLAIN_FIELDS) if (k in x) out[k] = x[k];
  const stats = x.stats as Record<string, unknown> | null | undefined;
  out.stats = stats && typeof stats === 'object' ? ('longestKernelId' in stats ? { longestKernelId: stats.longestKernelId } : {}) : null;
  return out;
}
