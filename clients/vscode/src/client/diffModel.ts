/* The diff view's model, free of DOM: profile/diff's kernel deltas ranked by
 * impact, the clock both timelines share (each side's times as offsets from
 * its alignment point), and a delta's evidence windows. */
import type { Int } from '../protocol/types';
import type { DiffResult } from '../protocol/viewMessages';
import { numField, strField } from './checkedFields';
import { relTime } from './exactJson';

export interface Delta {
  name: string;
  status: DiffResult['rows'][number]['status'];
  baseCount: number;
  compareCount: number;
  baseTotalNs: number;
  compareTotalNs: number;
  deltaNs: number;
  deltaPct: number | null;
}

const W = 'profile/diff';

/** The kernel deltas, largest |Δ time| first (ties: by name). */
export function rankedDeltas(diff: DiffResult): Delta[] {
  return diff.rows.map((r) => ({
    name: strField(r, 'name', W), status: r.status, deltaPct: r.deltaPct,
    baseCount: numField(r, 'baseCount', W), compareCount: numField(r, 'compareCount', W),
    baseTotalNs: numField(r, 'baseTotalNs', W), compareTotalNs: numField(r, 'compareTotalNs', W), deltaNs: numField(r, 'deltaNs', W),
  })).sort((a, b) => Math.abs(b.deltaNs) - Math.abs(a.deltaNs) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Where each side's clock starts on the shared one (its time 0), and why there. */
export interface Alignment { base: bigint; compare: bigint; how: string }

/** Both sides aligned on their session starts (profile/diff reports no steady-state iteration start yet). */
export function alignment(baseStart: Int, compareStart: Int): Alignment {
  return { base: BigInt(baseStart), compare: BigInt(compareStart), how: 'session start' };
}

/** A window on a side's clock as offsets on the shared clock. */
export function onSharedClock(w: { start: Int; end: Int }, at: bigint): { start: number; end: number } {
  return { start: relTime(w.start, at), end: relTime(w.end, at) };
}

/** The view that shows both evidence windows (shared clock), padded by half their span each side. */
export function viewOver(windows: Array<{ start: number; end: number }>): { start: number; end: number } | undefined {
  if (!windows.length) return undefined;
  const start = Math.min(...windows.map((w) => w.start)), end = Math.max(...windows.map((w) => w.end));
  const pad = Math.max(1000, (end - start) / 2);
  return { start: start - pad, end: end + pad };
}

/** A status as the table says it. */
export function statusText(d: Delta): string {
  return d.status === 'added' ? 'new' : d.status === 'removed' ? 'gone' : d.status;
}
