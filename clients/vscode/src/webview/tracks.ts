/* The timeline's rows: the track tree (client/trackTree, shared with the
 * Jupyter widget) and what a row draws: GPU ops on GPU tracks, NVTX ranges,
 * CUDA API calls. */
import type { TreeRow } from '../client/trackTree';

export type Row = TreeRow;

/** A track of GPU ops (its items are clickable kernels, memcpy, memset). */
export function isGpuId(id: string): boolean {
  return id.startsWith('gpu:');
}

/** What a bucket's longest item is, by track: the palette family and the hit's kind. */
export function bucketKind(id: string): 'kernel' | 'nvtx' | 'api' {
  return isGpuId(id) ? 'kernel' : id.startsWith('api:') ? 'api' : 'nvtx';
}
