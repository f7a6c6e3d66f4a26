/* The multi-rank view's model, free of DOM: the ranks of a profile/openSet
 * result, their GPU tracks as one timeline on the set's clock (a rank's times
 * plus its file's offsetNs), one utilisation row per rank (expand it for its
 * streams), timeline/range answers of several profiles merged into one, and
 * a collective linked across ranks. */
import type { Int, RangeColumns, RangeReply, Track, TrackColumns } from '../protocol/types';
import type { OpenSetResult, ViewProfile } from '../protocol/viewMessages';
import type { TreeNode } from './trackTree';
import type { TrackRangeParams } from './timelineModel';
import { absTime, relTime } from './exactJson';
import { decodeBuckets, unpackTimes } from './tileColumns';
import { intField, numField, strField } from './checkedFields';

export interface Rank {
  /** The rank's number (profile/openSet's `rank`). */
  rank: number;
  /** Its position among the drawn ranks: merged track ids end with `@index`. */
  index: number;
  profileId: string;
  /** Its position among the set's open files (the view's profiles; kernel ids are numbered per file). */
  file: number;
  device: number;
  /** Added to its profile's times to put them on the set's clock. */
  offsetNs: bigint;
}

/** `cause`: what the rank did before most of its late arrivals, where the server says (openSet's newer `topCause`). */
export interface StragglerRow { rank: number; lastCount: number; lastPct: number; avgLateNs: number; cause?: string }

const W = 'profile/openSet';
const num = (o: unknown, k: string) => numField(o, k, W);
const int = (o: unknown, k: string) => intField(o, k, W);
const str = (o: unknown, k: string) => strField(o, k, W);

/** A profile id, or null where the set closed the file after its summary (memory budget). */
const pid = (o: unknown) => ((o as Record<string, unknown>).profileId === null ? null : str(o, 'profileId'));

/** The set's files: profile id (null: closed, not drawn) and path, in order. */
export function setFiles(set: OpenSetResult): Array<{ profileId: string | null; path: string }> {
  return set.files.map((f) => ({ profileId: pid(f), path: str(f, 'path') }));
}

/** The ranks whose files are open (the others cannot be drawn). */
export function ranksOf(set: OpenSetResult): Rank[] {
  const files = setFiles(set).map((f) => f.profileId).filter((p) => p !== null); /* the open ones: viewLoad's profiles */
  const out: Rank[] = [];
  set.ranks.forEach((r) => {
    const profileId = pid(r);
    if (profileId === null) return;
    const file = files.indexOf(profileId);
    if (file < 0) throw new Error(`profile/openSet: rank ${num(r, 'rank')} names a profile not in files`);
    out.push({ rank: num(r, 'rank'), index: out.length, profileId, file, device: num(r, 'device'), offsetNs: BigInt(int(r, 'offsetNs')) });
  });
  return out;
}

export function stragglers(set: OpenSetResult): { straggler: number | null; matched: number; rows: StragglerRow[] } {
  return {
    straggler: set.stragglers.straggler,
    matched: num(set.stragglers, 'matchedCollectives'),
    rows: set.stragglers.ranks.map((r) => {
      const cause = (r as Record<string, unknown>).topCause;
      return { rank: num(r, 'rank'), lastCount: num(r, 'lastCount'), lastPct: num(r, 'lastPct'), avgLateNs: num(r, 'avgLateNs'), ...(typeof cause === 'string' ? { cause } : {}) };
    }),
  };
}

/** A rank's track on the merged timeline. */
export const rankTrackId = (id: string, rank: Rank) => `${id}@${rank.index}`;

/** The rank index and the profile's track id of a merged track id. */
export function splitTrackId(id: string): { index: number; id: string } {
  const at = id.lastIndexOf('@');
  return { index: Number(id.slice(at + 1)), id: id.slice(0, at) };
}

/** The ranks' GPU tracks (their ids made unique per rank) and the tree: per rank one utilisation row, closed, its streams below. */
export function rankTracks(ranks: Rank[], profiles: ViewProfile[], fileOf: (r: Rank) => number = (r) => r.file): { tracks: Track[]; tree: TreeNode[] } {
  const tracks: Track[] = [];
  const tree: TreeNode[] = [];
  for (const r of ranks) {
    const p = profiles[fileOf(r)]!;
    const mine = p.tracks.tracks.filter((t) => t.kind === 'gpu' && (t.device ?? 0) === r.device).map((t) => ({ ...t, id: rankTrackId(t.id, r) }));
    tracks.push(...mine);
    const multi = new Set(ranks.filter((x) => x.profileId === r.profileId).map((x) => x.device)).size > 1;
    const label = `Rank ${r.rank}${multi ? ` · GPU ${r.device}` : ''}`;
    tree.push({
      key: `rank:${r.index}`, label, kind: 'util', ids: mine.map((t) => t.id), openByDefault: false,
      title: `rank ${r.rank}: ${p.title}, GPU ${r.device} (utilisation of its ${mine.length} streams)`,
      children: mine.map((t) => ({ key: t.id, label: `Stream ${t.stream ?? '?'}${t.streamClass ? ` (${t.streamClass})` : ''}`, kind: 'gpu' as const, ids: [t.id], children: [], openByDefault: true, title: t.name ?? t.id })),
    });
  }
  return { tracks, tree };
}

/** Kernel ids of the merged timeline: each file numbers its own, so a merged id is local × files + file. */
export const mergedId = (local: number, file: number, files: number) => local * files + file;
export const splitId = (id: number, files: number) => ({ file: id % files, local: Math.floor(id / files) });

/** A time of a rank's profile on the set's clock (exact). */
export function onSetClock(t: Int, offset: bigint): Int {
  const s = BigInt(t) + offset;
  return s >= -9007199254740991n && s <= 9007199254740991n ? Number(s) : s;
}

/** timeline/range for the merged timeline: each rank's tracks asked of its
 * profile on its own clock, the answers moved to the set's clock (offsets
 * from `origin`) and merged (names, track ids and kernel ids made unique). */
export function mergedRange(ranks: Rank[], files: number, origin: bigint,
  range: (profileId: string, p: Record<string, unknown>) => Promise<RangeReply>): (p: TrackRangeParams) => Promise<RangeColumns> {
  return async (p) => {
    const byRank = new Map<number, string[]>();
    for (const id of p.tracks) {
      const s = splitTrackId(id);
      byRank.set(s.index, [...(byRank.get(s.index) ?? []), s.id]);
    }
    const parts = await Promise.all([...byRank].map(async ([index, ids]) => {
      const r = ranks[index]!;
      const at = origin - r.offsetNs; /* the rank's clock: set time − offset */
      /* every column (no `fields`): the merged buckets' longest ops come with them */
      const res = unpackTimes(await range(r.profileId, { start: absTime(p.start, at), end: absTime(p.end, at), width: p.width, maxEvents: p.maxEvents, format: 'columns', tracks: ids }));
      return { r, at, res };
    }));
    const names: string[] = [];
    const tracks: TrackColumns[] = [];
    let resolution = Math.max(1, (p.end - p.start) / p.width);
    for (const { r, at, res } of parts) {
      const base = names.length;
      names.push(...(res.names as string[]));
      resolution = res.resolution;
      const name = (a: number[]) => a.map((j) => (j < 0 ? j : j + base));
      const id = (a: number[]) => a.map((k) => (k < 0 ? k : mergedId(k, r.file, files)));
      const times = (a: Int[]) => a.map((t) => relTime(t, at));
      for (const t of res.tracks) {
        if ('events' in t) {
          const e = t.events as Required<typeof t.events>;
          tracks.push({ id: rankTrackId(t.id, r), events: { ...e, id: id(e.id), name: name(e.name), kind: name(e.kind), start: times(e.start), end: times(e.end) } });
        } else {
          const b = t.buckets;
          tracks.push({ id: rankTrackId(t.id, r), buckets: decodeBuckets({ ...b, longestId: b.longestId && id(b.longestId), longestName: b.longestName && name(b.longestName) }, res.resolution, names) });
        }
      }
    }
    return { resolution, start: p.start, end: p.end, format: 'columns', names, tracks } as RangeColumns;
  };
}

/** One rank's instance of a collective (times on the merged timeline); its
 * stream's track and kernel id where the drawn kernels hold it, else it is
 * drawn on its rank's row only. */
export interface CollectiveLink { rank: number; index: number; trackId: string | undefined; id: number | undefined; start: number; end: number }

export const isCollective = (name: string) => /nccl/i.test(name);

/** A set/collectives row, the server's matching: the collective's start and
 * duration on every set rank (null: not in it) and the rank that arrived last. */
export interface CollectiveRow { id: number; type: string; lastRank: number; startsNs: Array<Int | null>; durationsNs: Array<Int | null> }

/** The params of set/collectives asking which collective holds a clicked
 * kernel: its rank (the set's index) and its start on the set clock. */
export function collectiveAt(setId: string, rank: Rank, start: number, origin: bigint): Record<string, unknown> {
  return { setId, rank: rank.rank, at: absTime(start, origin) };
}

/** The drawn ranks' instances of a collective as the server matched it
 * (the same instances the straggler analysis measured), and its last arriver
 * (the server's lastRank, when drawn). `answer` (kernels around the
 * collective) gives each instance its stream: the kernel of the rank that
 * starts exactly there. */
export function linksOf(row: CollectiveRow, ranks: Rank[], origin: bigint, answer: RangeColumns | undefined): { links: CollectiveLink[]; last: CollectiveLink | undefined } {
  const links: CollectiveLink[] = [];
  for (const r of ranks) {
    const s = row.startsNs[r.rank], d = row.durationsNs[r.rank];
    if (s === null || s === undefined || d === null || d === undefined) continue;
    const start = relTime(s, origin);
    links.push({ rank: r.rank, index: r.index, trackId: undefined, id: undefined, start, end: start + Number(d) });
  }
  for (const t of answer?.tracks ?? []) {
    if (!('events' in t)) continue;
    const l = links.find((x) => x.index === splitTrackId(t.id).index);
    if (!l || l.trackId !== undefined) continue;
    const j = t.events.start.findIndex((st, k) => st === l.start && isCollective(answer!.names[t.events.name[k]!] ?? ''));
    if (j >= 0) { l.trackId = t.id; l.id = t.events.id[j]!; }
  }
  const last = links.find((l) => l.rank === row.lastRank);
  return { links, last: links.length > 1 ? last : undefined };
}
