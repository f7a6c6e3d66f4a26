/* Test helper: a timeline/range answer in the objects format, as the columns
 * format says it, every column, decoded as the page decodes a reply
 * (client/tileColumns): the unit tests' fakes write objects; the server test
 * checks the two formats agree. The client itself asks only for columns. */
import type { RangeColumns, RangeReply, RangeResult } from '../../src/protocol/types';
import { decodeTracks } from '../../src/client/tileColumns';

export function toColumns(r: RangeResult | RangeColumns): RangeColumns {
  if ('format' in r && r.format === 'columns') return r;
  const o = r as RangeResult;
  const names: string[] = [], ix = new Map<string, number>();
  const name = (x: string) => { let k = ix.get(x); if (k === undefined) { k = names.length; names.push(x); ix.set(x, k); } return k; };
  const tracks: RangeReply['tracks'] = o.tracks.map((tr) => {
    if ('events' in tr) {
      const ev = tr.events;
      return { id: tr.id, events: { id: ev.map((e) => e.id), start: ev.map((e) => e.start), end: ev.map((e) => e.end), name: ev.map((e) => name(e.name)), kind: ev.map((e) => name(e.kind)), depth: ev.map((e) => e.depth ?? 0) } };
    }
    const bs = tr.buckets;
    return { id: tr.id, buckets: {
      index: bs.map((b) => Math.round((b.start - o.start) / o.resolution)), count: bs.map((b) => b.count), busyNs: bs.map((b) => b.busyNs),
      longestId: bs.map((b) => b.longest?.id ?? -1), longestName: bs.map((b) => (b.longest ? name(b.longest.name) : -1)), longestDur: bs.map((b) => b.longest?.dur ?? 0),
    } };
  });
  return decodeTracks({ resolution: o.resolution, start: o.start, end: o.end, format: 'columns', names, tracks });
}

