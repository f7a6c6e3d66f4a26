/* What the views over several profiles show first, asked by the host (the
 * extension, the UI tests): the diff view's two profiles and profile/diff,
 * the multi-rank view's profile/openSet and each file's info and tracks. */
import type { NsysClient } from './nsysClient';
import type { ProfileInfo } from '../protocol/types';
import type { ViewInit, ViewProfile } from '../protocol/viewMessages';
import { setFiles } from './ranksModel';

export interface OpenedProfile { profileId: string; title: string; info: ProfileInfo }

const baseName = (p: string) => p.split(/[\\/]/).pop() ?? p;

async function withTracks(client: NsysClient, p: OpenedProfile): Promise<ViewProfile> {
  return { ...p, tracks: await client.request('timeline/tracks', { profileId: p.profileId }) };
}

/** The diff view of two open profiles. */
export async function loadDiffView(client: NsysClient, base: OpenedProfile, compare: OpenedProfile): Promise<ViewInit> {
  const [b, c, diff] = await Promise.all([withTracks(client, base), withTracks(client, compare),
    client.request('profile/diff', { base: base.profileId, compare: compare.profileId })]);
  return { type: 'diffInit', base: b, compare: c, diff };
}

/** The multi-rank view of a set of exports (one per rank, or one multi-GPU export). */
export async function loadRanksView(client: NsysClient, paths: [string, ...string[]]): Promise<ViewInit> {
  const set = await client.request('profile/openSet', { paths });
  const open = setFiles(set).filter((f): f is { profileId: string; path: string } => f.profileId !== null);
  const profiles = await Promise.all(open.map(async (f) => withTracks(client, {
    profileId: f.profileId, title: baseName(f.path), info: await client.request('profile/info', { profileId: f.profileId }),
  })));
  return { type: 'ranksInit', set, profiles };
}
