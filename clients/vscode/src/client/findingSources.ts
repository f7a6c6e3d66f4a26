/* Report findings that point at source: a finding whose evidence names a
 * kernel (hotspot_kernel) is placed at that kernel's most likely source line
 * (source/locate's best candidate at or above a confidence), with its evidence
 * window, so VS Code shows it in Problems and "Show in timeline" opens that
 * window. Free of the vscode API (ext/findingDiagnostics.ts shows them). */
import type { Int } from './exactJson';

/** What is needed of a report/generate finding. */
export interface FindingLike { id: string; severity: string; title: string; recommendation?: string; evidence?: Record<string, unknown> }
/** What is needed of source/locate's answer. */
export interface LocateLike { candidates: Array<{ file: string; line: number; confidence: number; evidence?: string }> }

export interface FindingSource {
  id: string;
  severity: 'critical' | 'warning' | 'info';
  message: string;
  /** as source/locate gives it (relative to the workspace root asked with) */
  file: string;
  /** 1-based */
  line: number;
  window: { start: Int; end: Int };
}

export async function findingSources(findings: FindingLike[], locate: (kernel: string) => Promise<LocateLike>, minConfidence = 0.5): Promise<FindingSource[]> {
  const out: FindingSource[] = [];
  for (const f of findings) {
    const kernel = f.evidence?.kernel, window = f.evidence?.window as { start: Int; end: Int } | undefined;
    if (typeof kernel !== 'string' || !window) continue;
    let at: LocateLike;
    try { at = await locate(kernel); } catch { continue; } /* no source for it: no diagnostic */
    const best = [...(at.candidates ?? [])].sort((a, b) => b.confidence - a.confidence)[0];
    if (!best || best.confidence < minConfidence) continue;
    const severity = f.severity === 'critical' || f.severity === 'warning' ? f.severity : 'info';
    out.push({ id: f.id, severity, file: best.file, line: best.line, window,
      message: `${f.title}${f.recommendation ? ` — ${f.recommendation}` : ''} (nsys-ai: ${kernel}; ${best.evidence ?? 'located'})` });
  }
  return out;
}
