/* Which tracks the timeline shows and in what order: GPU streams first (by
 * device, stream), then NVTX rows; CUDA API and other host rows are left out. */
import type { Track } from '../protocol/types';

export type Row = { track: Track; group: 'gpu' | 'nvtx'; label: string };

export function isGpuTrack(t: Track): boolean {
  return t.device !== undefined && t.stream !== undefined && !/nvtx/i.test(t.kind);
}

export function isNvtxTrack(t: Track): boolean {
  return /nvtx/i.test(t.kind);
}

export function timelineRows(tracks: Track[]): Row[] {
  const gpu = tracks.filter(isGpuTrack).sort((a, b) => (a.device! - b.device!) || (a.stream! - b.stream!));
  const nvtx = tracks.filter(isNvtxTrack);
  return [
    ...gpu.map((t) => ({ track: t, group: 'gpu' as const, label: t.name || `GPU ${t.device} · stream ${t.stream}` })),
    ...nvtx.map((t) => ({ track: t, group: 'nvtx' as const, label: (t.name || `NVTX ${t.tid ?? ''} depth ${t.depth ?? 0}`).replace(' (projected)', '').replace(/\(pid \d+, tid (\d+)\)/, 'tid $1') })),
  ];
}
