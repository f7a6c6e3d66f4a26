/* The source hover's markdown, built without vscode so it can be unit-tested. */
import { formatNs, formatPct } from './format';
import type { KernelExplain, KernelsAtResult } from '../protocol/types';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

export function showInTimelineLink(args: Record<string, unknown>): string {
  return `command:nsys-ai.showInTimeline?${encodeURIComponent(JSON.stringify([args]))}`;
}

export function hoverMarkdown(title: string, profileId: string, at: KernelsAtResult, explain?: Pick<KernelExplain, 'markdown'>): string {
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
  if (explain?.markdown) out.push('---', '', explain.markdown, '');
  else if (top.explanation) out.push(top.explanation, '');
  out.push(`[Show in timeline](${showInTimelineLink({ profileId, kernelId: top.kernelId, name: top.name })})`);
  return out.join('\n');
}
