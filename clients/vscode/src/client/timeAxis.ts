/* The time axis's ticks and labels. Labels are offsets from the profile's
 * start (Nsight Systems' convention) with exactly the precision of the tick
 * step, so two ticks never read the same at any zoom. Zoomed in far from the
 * start (a 100 ns step at 142 ms), ticks read as offsets from a base tick that
 * is printed once with full precision ("142.0001 ms" then "+100 ns",
 * "+200 ns", ...), as Perfetto does. The Jupyter widget imports it too (its
 * build's `nsys-views` alias). */

export interface AxisTick {
  /** Time on the profile's clock (the same clock as the view). */
  t: number;
  label: string;
}

export interface TimeAxis {
  /** Tick spacing in ns: 1, 2 or 5 × 10^k, at least 1 ns. */
  step: number;
  /** The base time when ticks read as offsets from it, else ''. */
  base: string;
  ticks: AxisTick[];
  /** The view's span, e.g. "span 1.25 µs". */
  span: string;
}

const UNITS: ReadonlyArray<readonly [number, string, number]> = [[1e9, 's', 9], [1e6, 'ms', 6], [1e3, 'µs', 3], [1, 'ns', 0]];
/** Beyond this many steps from the origin, labels switch to base + offset. */
const MAX_ABS_STEPS = 10_000;

/** The largest unit not above |v| (ns for |v| < 1 µs). */
function unitFor(v: number): readonly [number, string, number] {
  const a = Math.abs(v);
  return UNITS.find(([u]) => a >= u) ?? UNITS[UNITS.length - 1];
}

/** The tick step: the smallest 1, 2 or 5 × 10^k ns giving at most `maxTicks` ticks over `span`. */
export function tickStep(span: number, maxTicks: number): number {
  const raw = Math.max(span, 1) / Math.max(1, maxTicks);
  let p = 10 ** Math.floor(Math.log10(raw));
  if (p < 1) p = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
    p *= 10;
  }
}

/** `v` ns in the unit of `unit`, with as many decimals as `step` needs (no more). */
function formatStepped(v: number, step: number, unit: readonly [number, string, number]): string {
  const stepExp = Math.floor(Math.log10(step) + 1e-9); /* step = m × 10^stepExp, m in {1, 2, 5} */
  const decimals = Math.max(0, unit[2] - stepExp);
  return `${(v / unit[0] + 0).toFixed(decimals)} ${unit[1]}`; /* + 0: no "-0" */
}

/** Three significant digits: the span and the cursor's neighbourhood. */
export function formatSpan(ns: number): string {
  const unit = unitFor(ns);
  const v = ns / unit[0];
  const decimals = unit[0] === 1 ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(decimals)} ${unit[1]}`;
}

/**
 * Ticks for the view [start, end] on a clock whose zero is `origin` (the
 * profile's start), at most `maxTicks` of them.
 */
export function timeAxis(start: number, end: number, origin: number, maxTicks: number): TimeAxis {
  const span = Math.max(end - start, 1);
  const step = tickStep(span, maxTicks);
  const firstOff = Math.ceil((start - origin) / step) * step;
  const lastOff = end - origin;
  const offs: number[] = [];
  for (let k = 0; firstOff + k * step <= lastOff && k <= maxTicks + 1; k++) offs.push(firstOff + k * step);
  const far = Math.max(Math.abs(firstOff), Math.abs(lastOff), step);
  if (offs.length === 0 || far / step < MAX_ABS_STEPS) {
    const unit = unitFor(far);
    return { step, base: '', span: `span ${formatSpan(span)}`, ticks: offs.map((o) => ({ t: origin + o, label: formatStepped(o, step, unit) })) };
  }
  const base = offs[0];
  const relUnit = unitFor(Math.max(step, (offs.length - 1) * step));
  return {
    step,
    base: formatStepped(base, step, unitFor(far)),
    span: `span ${formatSpan(span)}`,
    ticks: offs.map((o, k) => ({ t: origin + o, label: k === 0 ? '+0' : `+${formatStepped(o - base, step, relUnit)}` })),
  };
}

/** The cursor's time (offset from the origin) with one more digit than the tick step shows. */
export function formatCursor(t: number, origin: number, step: number): string {
  const fine = Math.max(1, step / 10);
  return formatStepped(t - origin, fine, unitFor(Math.max(Math.abs(t - origin), fine)));
}
