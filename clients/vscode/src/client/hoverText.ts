/* The source hover's markdown, built without vscode so it can be unit-tested. */
import { formatNs, formatPct } from './format';
import type { KernelExplain, KernelsAtResult, LocateCandidate } from '../protocol/types';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

export function showInTimelineLink(args: Record<string, unknown>): string {
  return `command:nsys-ai.showInTimeline?${encodeURIComponent(JSON.stringify([args]))}`;
}

/** The candidates of kernels whose definition is not certain: every location
 * with its confidence and evidence (`alternatives`: source/locate's
 * candidates per kernel name; without them, the row's own evidence). */
function candidatesMarkdown(at: KernelsAtResult, alternatives: Record<string, LocateCandidate[]>): string[] {
  const out: string[] = [];
  for (const k of at.kernels.slice(0, 8)) {
    const several = (k.candidates ?? 1) > 1;
    if (!several && k.confidence >= 0.9) continue;
    const alts = (alternatives[k.name] ?? []).filter((c) => c.strategy === 'definition' || c.strategy === 'launch' || c.strategy === 'trace');
    if (several) out.push(`**\`${cell(clip(k.name, 60))}\`** has ${k.candidates} candidate definitions:`, '');
    else out.push(`**\`${cell(clip(k.name, 60))}\`** (${Math.round(k.confidence * 100)}%): ${cell(clip(k.evidence, 300))}`, '');
    if (!several) continue;
    if (!alts.length) out.push(`- this line · ${Math.round(k.confidence * 100)}% · ${cell(clip(k.evidence, 300))}`);
    for (const c of alts.slice(0, 12)) {
      out.push(`- \`${cell(c.file)}:${c.line}\` · ${c.strategy} · ${Math.round(c.confidence * 100)}% · ${cell(clip(c.evidence, 300))}`);
    }
    out.push('');
  }
  return out;
}

export function hoverMarkdown(title: string, profileId: string, at: KernelsAtResult, explain?: Pick<KernelExplain, 'markdown'>,
  alternatives: Record<string, LocateCandidate[]> = {}): string {
  const n = at.kernels.length;
  const out: string[] = [];
  out.push(`**nsys-ai** · ${cell(title)} — ${at.count} launch${at.count === 1 ? '' : 'es'} of ${n} kernel${n === 1 ? '' : 's'} · ${formatNs(at.totalNs)} · ${formatPct(at.pctGpu)} of GPU kernel time`, '');
  out.push('| kernel | count | time | GPU | via |', '|---|---:|---:|---:|---|');
  for (const k of at.kernels.slice(0, 8)) {
    out.push(`| \`${cell(clip(k.name, 60))}\` | ${k.count} | ${formatNs(k.totalNs)} | ${formatPct(k.pctGpu)} | ${k.strategy ?? ''} |`);
  }
  if (n > 8) out.push('', `…and ${n - 8} more`);
  const top = at.kernels[0]!;
  out.push('');
  out.push(...candidatesMarkdown(at, alternatives));
  if (explain?.markdown) out.push('---', '', explain.markdown, '');
  else if (top.explanation) out.push(top.explanation, '');
  out.push(`[Show in timeline](${showInTimelineLink({ profileId, kernelId: top.kernelId, name: top.name })})`);
  return out.join('\n');
}
