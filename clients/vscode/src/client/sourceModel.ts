/* Per-file line statistics from `source/map`, for CodeLens, gutter heat and
 * hovers. Pure data: paths are compared after normalising to absolute form. */
import * as path from 'node:path';
import type { SourceMapResult, SourceMapLine } from '../protocol/types';

/** A kernel on a line whose definition has several candidates. */
export interface CandidateStat { name: string; candidates: number; confidence: number; evidence: string }
export interface LineStat { line: number; count: number; totalNs: number; pctGpu: number; ambiguous: CandidateStat[] }

export class SourceIndex {
  private files = new Map<string, LineStat[]>();
  private maxPct = 0;

  constructor(map: SourceMapResult, private readonly root: string) {
    for (const f of map.files ?? []) {
      const abs = path.resolve(root, f.file);
      const lines = (f.lines ?? []).map((l: SourceMapLine) => ({
        line: l.line, count: l.count, totalNs: l.totalNs, pctGpu: l.pctGpu,
        ambiguous: (l.kernels ?? []).filter((k) => (k.candidates ?? 1) > 1)
          .map((k) => ({ name: k.name, candidates: k.candidates!, confidence: k.confidence, evidence: k.evidence })),
      }));
      lines.sort((a, b) => a.line - b.line);
      this.files.set(abs, lines);
      for (const l of lines) this.maxPct = Math.max(this.maxPct, l.pctGpu);
    }
  }

  lines(file: string): LineStat[] { return this.files.get(path.resolve(this.root, file)) ?? []; }
  at(file: string, line: number): LineStat | undefined { return this.lines(file).find((l) => l.line === line); }
  get fileCount(): number { return this.files.size; }

  /** Heat level 0..levels-1 relative to the hottest line of the profile. */
  heat(stat: LineStat, levels = 5): number {
    if (this.maxPct <= 0) return 0;
    return Math.min(levels - 1, Math.floor((stat.pctGpu / this.maxPct) * levels));
  }
}
