/* Messages between the extension host and the profile webview: one union per
 * direction, keyed on `type`. Both sides log a warning on an unknown type. */
import type { ProfileInfo, TimelineTracksResult } from './types';

export type HostToWebview =
  /** `tracks`: timeline/tracks, asked by the host while the webview loads (absent if that failed). */
  | { type: 'init'; profileId: string; title: string; info: ProfileInfo; tracks?: TimelineTracksResult }
  | { type: 'rpcResult'; id: number; result: unknown }
  | { type: 'rpcError'; id: number; error: { code: number; message: string } }
  | { type: 'reveal'; kernelId?: number; start?: number; end?: number }
  | { type: 'profileReopened'; profileId: string };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'rpc'; id: number; method: string; params: Record<string, unknown> }
  | { type: 'cancel'; id: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'perf'; name: string; ms: number };

export function isWebviewToHost(m: unknown): m is WebviewToHost {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}
