/* Messages of the views over several profiles (the diff view, the multi-rank
 * view) from the extension host: the view's data, then the answers of the
 * webview's requests (the profile view's rpcResult / rpcError). The webview
 * sends the profile view's messages (WebviewToHost). */
import type { HostToWebview, Envelope } from './messages';
import type { ProfileInfo, TimelineTracksResult } from './types';
import type { ProfileDiffResult } from './generated/profile.diff.result';
import type { ProfileOpenSetResult } from './generated/profile.openSet.result';
import { stringifyExact } from '../client/exactJson';

export type DiffResult = ProfileDiffResult;
export type OpenSetResult = ProfileOpenSetResult;

/** One opened profile of a view: what its timeline needs first. */
export interface ViewProfile { profileId: string; title: string; info: ProfileInfo; tracks: TimelineTracksResult }

export type ViewInit =
  /** profile/diff of `base` and `compare` (the profiles' own clocks; the view aligns them). */
  | { type: 'diffInit'; base: ViewProfile; compare: ViewProfile; diff: DiffResult }
  /** profile/openSet, and each of its files (`profiles`, in files' order). */
  | { type: 'ranksInit'; set: OpenSetResult; profiles: ViewProfile[] }
  /** The view could not be made (the page shows the message). */
  | { type: 'viewError'; message: string };

export type ViewHostToWebview = ViewInit | Extract<HostToWebview, { type: 'rpcResult' | 'rpcError' }>;

export function viewEnvelope(m: ViewHostToWebview): Envelope {
  return { json: stringifyExact(m) };
}

/** The rank sets a view's requests may name (set/collectives: the ranks view links a collective as the server matched it). */
export function viewSetIds(m: ViewInit): Set<string> {
  return m.type === 'ranksInit' ? new Set([m.set.setId]) : new Set();
}

/** The profiles a view's requests may name. */
export function viewProfileIds(m: ViewInit): Set<string> {
  if (m.type === 'diffInit') return new Set([m.base.profileId, m.compare.profileId]);
  if (m.type === 'ranksInit') return new Set(m.profiles.map((p) => p.profileId));
  return new Set();
}
