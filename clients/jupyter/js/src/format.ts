// Time formatting and colours shared by the widgets.

export function fmtDur(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 1 : 3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 3) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 3) + " µs";
  return Math.round(ns) + " ns";
}

// Track kinds of timeline/tracks (gpu tracks by streamClass) and event kinds of timeline/range.
const TRACK_HUES: Record<string, number> = {
  compute: 210, communication: 20, copy: 130, mixed: 185, nvtx: 265, nvtxProjected: 300, api: 0,
  kernel: 210, memcpy: 130, memset: 160,
};

export function trackHue(kind: string | undefined): number {
  if (!kind) return 200;
  if (kind in TRACK_HUES) return TRACK_HUES[kind];
  if (kind.includes("nvtx")) return 265;
  if (kind.includes("api") || kind.includes("runtime")) return 0;
  if (kind.includes("comm") || kind.includes("nccl")) return 20;
  if (kind.includes("copy") || kind.includes("mem")) return 130;
  return 210;
}

export function nameHash(s: string | null | undefined): number {
  let h = 2166136261;
  const str = s ?? "";
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** A colour for an event: the track's hue, lightness varied by name. */
export function eventColor(kind: string | undefined, name: string | null | undefined, alpha = 1): string {
  const hue = trackHue(kind);
  const h = nameHash(name);
  const light = 38 + (h % 5) * 6;
  const sat = kind === "api" ? 8 : 55 + ((h >> 3) % 3) * 10;
  return `hsla(${(hue + ((h >> 7) % 24) - 12 + 360) % 360}, ${sat}%, ${light}%, ${alpha})`;
}
