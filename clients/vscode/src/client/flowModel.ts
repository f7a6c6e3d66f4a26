/* The guided flow of the Runs view, without the vscode API (unit tested):
 * profile → diagnose → annotate → re-profile → refine, then annotate again
 * until every tagged range holds one kernel name. Where the flow stands is
 * read from the run history alone: each step the extension completes leaves a
 * `decision` note "flow STEP: …" on the latest run, so the history shows every
 * step and any client (or a reload) finds the same next step. */
import type { ProfileDoctorResult } from '../protocol/generated/profile.doctor.result';
import type { ReportGenerateResult } from '../protocol/generated/report.generate.result';
import type { RunsCompareResult } from '../protocol/generated/runs.compare.result';
import type { SourceRefineResult } from '../protocol/generated/source.refine.result';
import { compareMarkdown, type Run } from './runsModel';

export type FlowStepId = 'profile' | 'diagnose' | 'annotate' | 'reprofile' | 'refine';

export interface FlowStep {
  id: FlowStepId;
  title: string;
  /** the command that runs the step */
  command: string;
  state: 'done' | 'next' | 'todo';
  detail: string;
}

export const FLOW_ORDER: readonly FlowStepId[] = ['profile', 'diagnose', 'annotate', 'reprofile', 'refine'];

const TITLES: Record<FlowStepId, string> = {
  profile: '1. Profile the script',
  diagnose: '2. Diagnose (doctor + report)',
  annotate: '3. Annotate the hot code with NVTX',
  reprofile: '4. Profile again',
  refine: '5. Refine: what changed',
};

/** The note a completed step leaves on the latest run (kind `decision`). */
export function flowNote(step: FlowStepId, text: string): string {
  return `flow ${step}: ${text}`;
}

function stepNote(run: Run, step: FlowStepId): string | undefined {
  const prefix = `flow ${step}: `;
  return run.notes.find((n) => n.kind === 'decision' && n.text.startsWith(prefix))?.text.slice(prefix.length);
}

/** The step to take next on this history (runs newest first); undefined once converged. */
export function nextStep(runs: Run[]): FlowStepId | undefined {
  const latest = runs[0];
  if (!latest || !latest.report) return 'profile';
  if (latest.before) {
    const refined = stepNote(latest, 'refine');
    if (refined === undefined) return 'refine';
    if (refined.startsWith('converged')) return undefined;
  } else if (stepNote(latest, 'diagnose') === undefined) {
    return 'diagnose';
  }
  return stepNote(latest, 'annotate') === undefined ? 'annotate' : 'reprofile';
}

export function flowSteps(runs: Run[]): FlowStep[] {
  const latest = runs[0];
  const next = nextStep(runs);
  const done = (id: FlowStepId): boolean => {
    if (!latest) return false;
    switch (id) {
      case 'profile': return true;
      case 'reprofile': return Boolean(latest.before);
      default: return stepNote(latest, id) !== undefined;
    }
  };
  const detail = (id: FlowStepId): string => {
    if (!latest) return id === 'profile' ? 'nsys profile on the active Python file' : '';
    const note = id === 'profile' || id === 'reprofile' ? undefined : stepNote(latest, id);
    if (note) return note;
    switch (id) {
      case 'profile': return `${runs.length} run${runs.length === 1 ? '' : 's'}, latest ${latest.name}`;
      case 'diagnose': {
        const verdict = (latest.summary as { verdict?: string } | null)?.verdict;
        return verdict ? `doctor said ${verdict} when ${latest.name} was captured` : `check ${latest.name}`;
      }
      case 'annotate': return 'wrap the hot functions (then the statements refine names) in NVTX ranges';
      case 'reprofile': return latest.before ? `${latest.name} is the after of ${latest.before}` : `a new run after ${latest.name}`;
      case 'refine': return latest.stats ? `coverage ${latest.stats.coverage.toFixed(1)}%` : 'compare the last two runs';
    }
  };
  return FLOW_ORDER.map((id) => ({
    id, title: TITLES[id], command: `nsys-ai.flow.${id}`,
    state: id === next ? 'next' : done(id) ? 'done' : 'todo', detail: detail(id),
  }));
}

/** The script a run profiled: the first `.py` argument of its command. */
export function runScript(run: Run): string | undefined {
  return run.command?.find((a) => a.endsWith('.py'));
}

export function diagnoseMarkdown(run: Run, doctor: ProfileDoctorResult, report: ReportGenerateResult): string {
  const lines = [`# ${run.name}: diagnosis`, '', `Capture health: **${doctor.verdict}**`, ''];
  for (const f of doctor.findings) {
    lines.push(`- **${f.severity}** ${f.title} — ${f.fix}${f.flags.length ? ` (\`${f.flags.join(' ')}\`)` : ''}`);
  }
  if (!doctor.findings.length) lines.push('- nothing to fix in the capture');
  lines.push('', '## Findings', '');
  for (const f of report.findings) lines.push(`- **${f.severity}** ${f.title} — ${f.recommendation}`);
  if (!report.findings.length) lines.push('- no finding');
  lines.push('', 'Next: annotate the hot code with NVTX ranges and profile again, so that each range names the kernels it launches.', '');
  return lines.join('\n');
}

/** What to annotate: refine's candidates (statements of split tags) when the run has tags, else the
 * functions of the script (the broad sweep of a first pass). */
export type AnnotateTarget = { file: string; scope: 'file' | { startLine: number; endLine: number }; granularity: 'function' | 'statement'; why: string };

export function annotateTargets(refine: SourceRefineResult | undefined, script: string | undefined): AnnotateTarget[] {
  const out: AnnotateTarget[] = [];
  for (const c of refine?.candidates ?? []) {
    const a = c.annotate;
    if (!a || typeof a.scope !== 'object' || !('startLine' in a.scope)) continue;
    out.push({ file: a.file, scope: { startLine: a.scope.startLine, endLine: a.scope.endLine }, granularity: 'statement',
      why: `${c.tag}: ${c.distinctKernels} kernel names, ${c.pctGpu.toFixed(1)}% of GPU time` });
  }
  if (!out.length && script && !(refine && refine.taggedRanges > 0)) {
    out.push({ file: script, scope: 'file', granularity: 'function', why: 'first pass: every function of the script' });
  }
  return out;
}

export function refineMarkdown(c: RunsCompareResult, refine: SourceRefineResult | undefined): string {
  const lines = [compareMarkdown(c)];
  lines.push('## Next annotations', '');
  const cands = refine?.candidates ?? [];
  if (c.converged) lines.push('Converged: every tagged range holds one kernel name. Nothing left to split.');
  for (const cand of cands) {
    lines.push(`- \`${cand.tag}\` — ${cand.distinctKernels} kernel names, ${cand.pctGpu.toFixed(1)}% of GPU time` +
      (cand.annotate && typeof cand.annotate.scope === 'object' && 'startLine' in cand.annotate.scope
        ? `: wrap its statements (lines ${cand.annotate.scope.startLine + 1}–${cand.annotate.scope.endLine + 1})`
        : cand.note ? `: ${cand.note}` : ''));
  }
  if (!c.converged && !cands.length) lines.push('- no split range in the later run');
  lines.push('');
  return lines.join('\n');
}

/** The note refine leaves on the later run: "converged …" once every tag holds one kernel name. */
export function refineNote(c: RunsCompareResult): string {
  const cov = `coverage ${c.before.coverage.toFixed(1)}% → ${c.after.coverage.toFixed(1)}%`;
  const idle = c.idle.length ? `, ${c.idle.length} new range${c.idle.length === 1 ? '' : 's'} without kernels` : '';
  return c.converged ? `converged vs ${c.before.run}, ${cov}` : `vs ${c.before.run}, ${cov}, ${c.after.split} split${idle}`;
}
