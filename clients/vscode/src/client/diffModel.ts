/* The diff view's model, free of DOM: the clock both timelines share (each
 * side's times as offsets from its alignment point: the steady-state window's
 * start profile/diff reports for each run, else each session's start), a
 * delta's evidence windows on it, and the texts of the verdict. */
import type { Int } from '../protocol/types';
import type { DiffResult } from '../protocol/viewMessages';
import { isInt, relTime } from './exactJson';

export type Delta = DiffResult['deltas'][number];
export type Component = DiffResult['components'][number];
type Window = { start: Int; end: Int };

/** A window of a reply (its times BigInt beyond 2^53: client/exactJson), or undefined. */
function windowOf(w: unknown): Window | undefined {
  const o = w as { start?: unknown; end?: unknown } | null | undefined;
  return o && isInt(o.start) && isInt(o.end) ? { start: o.start, end: o.end } : undefined;
}

/** Where each side's clock starts on the shared one (its time 0), and why there. */
export interface Alignment { base: bigint; compare: bigint; how: string }

/** Both sides on their steady-state windows' starts when profile/diff found both, else on their session starts. */
export function alignment(diff: DiffResult, baseStart: Int, compareStart: Int): Alignment {
  const b = windowOf(diff.base.steadyWindow), c = windowOf(diff.compare.steadyWindow);
  if (b && c) return { base: BigInt(b.start), compare: BigInt(c.start), how: 'steady-state start (warm-up excluded)' };
  return { base: BigInt(baseStart), compare: BigInt(compareStart), how: 'session start (no steady state in both runs)' };
}

/** A window on a side's clock as offsets on the shared clock. */
export function onSharedClock(w: Window, at: bigint): { start: number; end: number } {
  return { start: relTime(w.start, at), end: relTime(w.end, at) };
}

/** A delta's evidence windows on the shared clock (a side without an occurrence has none). */
export function evidenceOf(d: Delta, a: Alignment): { base?: { start: number; end: number }; compare?: { start: number; end: number } } {
  const b = windowOf(d.evidence.base), c = windowOf(d.evidence.compare);
  return { ...(b ? { base: onSharedClock(b, a.base) } : {}), ...(c ? { compare: onSharedClock(c, a.compare) } : {}) };
}

/** The view that shows every evidence window (shared clock), padded by half their span each side. */
export function viewOver(windows: Array<{ start: number; end: number }>): { start: number; end: number } | undefined {
  if (!windows.length) return undefined;
  const start = Math.min(...windows.map((w) => w.start)), end = Math.max(...windows.map((w) => w.end));
  const pad = Math.max(1000, (end - start) / 2);
  return { start: start - pad, end: end + pad };
}

const CHANGE: Record<Delta['change'], string> = { added: 'new', removed: 'gone', slower: 'slower', faster: 'faster', no_change: 'no change', changed: 'changed' };
export const changeText = (d: Delta) => CHANGE[d.change];

const COMPONENT: Record<Component['name'], string> = { step: 'Step', compute: 'Compute', ncclExposed: 'NCCL exposed', idle: 'Idle', copies: 'Copies', launchOverhead: 'Launch overhead' };
export const componentText = (c: Component) => COMPONENT[c.name];

/** The verdict's headline: incomparable runs say so before anything else. */
export function headline(diff: DiffResult): { text: string; tone: 'bad' | 'good' | 'neutral' | 'warn' } {
  const v = diff.verdict, c = diff.comparability;
  if (!c.comparable || v.overall === 'incomparable') {
    return { text: `Not comparable (score ${c.score.toFixed(2)}): ${c.reasons.filter((r) => r.severity !== 'info').map((r) => r.message).join('; ') || v.text}`, tone: 'warn' };
  }
  const tone = v.overall === 'slower' ? 'bad' : v.overall === 'faster' ? 'good' : 'neutral';
  return { text: v.text, tone }; /* the text states the confidence */
}
