/* Stable colours: one hue per name within a family per kind, readable in
 * light and dark themes. Styles come from a small fixed palette (family × hue
 * step × alpha level) so frames can batch rectangles by style. */
const STEPS = 12;
const ALPHAS = [0.45, 0.65, 0.85, 1];
const FAMILIES: Record<string, number> = { kernel: 200, memcpy: 30, memset: 55, nvtx: 270, nccl: 0, api: 120 };

const styles = new Map<number, string>();

function family(kind: string, name: string): number {
  const k = kind.toLowerCase();
  if (k.includes('memcpy') || name.startsWith('[CUDA memcpy')) return FAMILIES.memcpy!;
  if (k.includes('memset') || name.startsWith('[CUDA memset')) return FAMILIES.memset!;
  if (k.includes('nvtx')) return FAMILIES.nvtx!;
  if (k === 'api') return FAMILIES.api!;
  if (name.startsWith('nccl')) return FAMILIES.nccl!;
  return FAMILIES.kernel!;
}

/** A palette key for (name, kind); cheap to compare and to batch on. */
export function colorKey(name: string, kind: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return family(kind, name) * 64 + ((h >>> 0) % STEPS);
}

/** The CSS colour of a palette key at an alpha level (0..3, 3 = opaque). */
export function styleOf(key: number, alphaLevel = ALPHAS.length - 1): string {
  const id = key * 8 + alphaLevel;
  let s = styles.get(id);
  if (!s) {
    const base = Math.floor(key / 64), step = key % 64;
    const hue = (base + (step * 60) / STEPS - 30 + 360) % 360;
    s = `hsl(${hue.toFixed(0)} 55% 52% / ${ALPHAS[alphaLevel]})`;
    styles.set(id, s);
  }
  return s;
}

export function alphaLevel(fraction: number): number {
  return Math.min(ALPHAS.length - 1, Math.floor(Math.max(0, fraction) * ALPHAS.length));
}

export function colorFor(name: string, kind: string): string {
  return styleOf(colorKey(name, kind));
}

/** A palette key at an alpha level, blended over `bg`, as a little-endian RGBA pixel. */
export function pixelOf(key: number, alphaLvl: number, bg: [number, number, number]): number {
  const base = Math.floor(key / 64), step = key % 64;
  const hue = (base + (step * 60) / STEPS - 30 + 360) % 360;
  return blend(hslToRgb(hue, 0.55, 0.52), ALPHAS[alphaLvl]!, bg);
}

export function blend(c: [number, number, number], a: number, bg: [number, number, number]): number {
  const r = Math.round(c[0] * a + bg[0] * (1 - a)), g = Math.round(c[1] * a + bg[1] * (1 - a)), b = Math.round(c[2] * a + bg[2] * (1 - a));
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/** Any CSS colour as RGB, resolved by the canvas itself. */
export function cssToRgb(ctx: CanvasRenderingContext2D, css: string): [number, number, number] {
  ctx.fillStyle = '#000';
  ctx.fillStyle = css;
  const v = String(ctx.fillStyle);
  if (v.startsWith('#')) return [parseInt(v.slice(1, 3), 16), parseInt(v.slice(3, 5), 16), parseInt(v.slice(5, 7), 16)];
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}
