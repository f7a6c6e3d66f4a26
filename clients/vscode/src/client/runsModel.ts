/* The run history as the extension shows it, without the vscode API (unit
 * tested): the `nsys-ai profile` command line of "Profile this script", a
 * run's tree label, and runs/compare as markdown. */
import type { RunsListResult } from '../protocol/generated/runs.list.result';
import type { RunsCompareResult } from '../protocol/generated/runs.compare.result';

export type Run = RunsListResult['runs'][number];

/** argv of `nsys-ai profile` for a script: JSON out, the workspace as root. */
export function profileArgs(root: string, script: string, opts: { python?: string; name?: string; note?: string; before?: string } = {}): string[] {
  const args = ['profile', '--format', 'json', '--root', root];
  if (opts.name) args.push('--name', opts.name);
  if (opts.note) args.push('--note', opts.note);
  if (opts.before) args.push('--before', opts.before);
  return [...args, '--', opts.python ?? 'python3', script];
}

/** What `nsys-ai profile --format json` printed: the run and its doctor, or the error. */
export type ProfileOutcome =
  | { ok: true; run: Run; verdict: string; findings: { severity: string; title: string }[] }
  | { ok: false; message: string; run?: string };

export function parseProfileOutput(stdout: string, stderr: string, exitCode: number | null): ProfileOutcome {
  let out: { run?: Run; doctor?: { verdict: string; findings: { severity: string; title: string }[] }; error?: { message: string; run?: string } } = {};
  try { out = JSON.parse(stdout); } catch { /* no JSON: the message is on stderr */ }
  if (out.error) return { ok: false, message: out.error.message, run: out.error.run };
  if (exitCode !== 0 || !out.run || !out.doctor) {
    const tail = stderr.trim().split('\n').slice(-3).join(' ');
    return { ok: false, message: tail || `nsys-ai profile exited with ${exitCode}` };
  }
  return { ok: true, run: out.run, verdict: out.doctor.verdict, findings: out.doctor.findings };
}

export function runLabel(r: Run): { label: string; description: string; tooltip: string } {
  const status = r.interrupted ? 'interrupted' : r.status;
  const when = new Date(Number(BigInt(String(r.createdNs)) / 1000000n)).toISOString().replace('T', ' ').slice(0, 19);
  const parts = [status];
  const verdict = (r.summary as { verdict?: string } | null)?.verdict;
  if (verdict) parts.push(`doctor ${verdict}`);
  if (r.stats) parts.push(`coverage ${r.stats.coverage.toFixed(1)}%`);
  if (r.before) parts.push(`after ${r.before}`);
  const lines = [`${r.name} · ${when} UTC`];
  if (r.command) lines.push(`$ ${r.command.join(' ')}`);
  if (r.git) lines.push(`git ${r.git.commit.slice(0, 12)}${r.git.dirty ? ' (dirty)' : ''}`);
  if (r.error) lines.push(`error: ${r.error}`);
  for (const n of r.notes) lines.push(`${n.kind}: ${n.text}`);
  return { label: r.name, description: parts.join(' · '), tooltip: lines.join('\n') };
}

export function compareMarkdown(c: RunsCompareResult): string {
  const side = (s: RunsCompareResult['before']) =>
    `| ${s.run} | ${s.coverage.toFixed(1)}% | ${s.taggedPct.toFixed(1)}% | ${s.tags} | ${s.split} | ${s.kernels} |`;
  const tags = (title: string, list: RunsCompareResult['rangesAdded']) =>
    list.length ? [`### ${title}`, '', ...list.map((t) => `- \`${t.tag}\` — ${t.distinctKernels} kernel names, ${t.kernels} launches`), ''] : [];
  return [
    `# ${c.before.run} → ${c.after.run}`, '',
    '| run | coverage | tagged | tags | split | kernels |', '|---|---|---|---|---|---|', side(c.before), side(c.after), '',
    `Converged: **${c.converged ? 'yes' : 'no'}** (every tag with kernels holds one kernel name).`, '',
    ...tags('Ranges added', c.rangesAdded), ...tags('Ranges removed', c.rangesRemoved),
    ...tags('Innermost ranges (most kernel names first)', c.innermost),
    ...tags('Added ranges without kernels (take them out: Remove NVTX Annotations)', c.idle),
    '### Coverage over time', '', ...c.history.map((h) => `- ${h.run}: ${h.coverage.toFixed(1)}%`), '',
  ].join('\n');
}
