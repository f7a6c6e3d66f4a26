/* Tiles carried across a relayout of the timeline's row blocks. A group
 * opened or closed, a row hidden or pinned, changes which rows each block of
 * ROW_BLOCK holds (every block after the change shifts), and a new block has
 * an empty tile cache; the data of its tracks is in the replaced blocks'
 * tiles already (a track's part of a tile does not depend on what else was
 * asked with it). A new block starts with every tile whose tracks the old
 * blocks hold (parts of several answers joined: their names tables appended,
 * the indexes into them moved), and at a tile key where it holds some of its
 * tracks it asks the server only for the others. */
import { tileKey, type FetchRange, type TimelineModel, type TileKey, type TrackRangeParams } from '../client/timelineModel';
import type { RangeColumns } from '../protocol/types';

type TrackCols = RangeColumns['tracks'][number];
/** A track's part of a tile, with the names table its indexes point into. */
interface Part { tr: TrackCols; names: string[] }
/** Per tile key (its grid edges), the tile and the part of every track some old block holds. */
export type Carried = Map<string, { key: TileKey; base: RangeColumns; parts: Map<string, Part> }>;

const edges = (t: { start: number; end: number }) => `${t.start}:${t.end}`;

/** The old blocks' tiles among `keys` (the view's: tiles of other views are asked again when shown). */
export function carriedTiles(models: TimelineModel[], keys: TileKey[]): Carried {
  const out: Carried = new Map();
  const wanted = new Set(keys.map(tileKey));
  for (const m of models) {
    for (const tile of m.tiles()) {
      if (!wanted.has(tile.key)) continue;
      let c = out.get(edges(tile));
      if (!c) out.set(edges(tile), (c = { key: tile, base: tile.result, parts: new Map() }));
      for (const tr of tile.result.tracks) if (!c.parts.has(tr.id)) c.parts.set(tr.id, { tr, names: tile.result.names });
    }
  }
  return out;
}

/** A track's columns with its indexes into names moved by `off`. */
function shiftNames(tr: TrackCols, off: number): TrackCols {
  if (off === 0) return tr;
  const up = (a: number[]) => a.map((v) => (v < 0 ? v : v + off)); /* -1: none */
  if ('events' in tr) return { ...tr, events: { ...tr.events, name: up(tr.events.name), kind: up(tr.events.kind) } };
  return tr; /* bucket columns hold no index into names (their longest ops' names have their own table) */
}

/** `base` (an answer for the tile: its grid) holding `parts`, in that order, over one names table. */
function join(base: RangeColumns, parts: Part[]): RangeColumns {
  const tables = [...new Set(parts.map((p) => p.names))];
  if (tables.length <= 1) return { ...base, names: tables[0] ?? base.names, tracks: parts.map((p) => p.tr) };
  const off = new Map<string[], number>();
  let names: string[] = [];
  for (const t of tables) { off.set(t, names.length); names = names.concat(t); }
  return { ...base, names, tracks: parts.map((p) => shiftNames(p.tr, off.get(p.names)!)) };
}

/** Per tile (its grid edges), the parts of some of a block's tracks: the rest is asked (withCarried). */
export type SomeCarried = Map<string, Map<string, Part>>;

/** Seeds `model` with every carried tile holding all of `ids`; returns the tiles holding only some of them. */
export function carryInto(model: TimelineModel, ids: string[], carried: Carried): SomeCarried {
  const partial: SomeCarried = new Map();
  for (const [k, c] of carried) {
    const parts = ids.map((id) => c.parts.get(id));
    if (parts.every((p) => p)) model.seed(c.key, join(c.base, parts as Part[]));
    else if (parts.some((p) => p)) partial.set(k, new Map(ids.flatMap((id, i) => (parts[i] ? [[id, parts[i]!] as const] : []))));
  }
  return partial;
}

/** The block's fetch: at a tile where some of `ids` are carried (`partial`, used once), only the others are asked, and the answer joined with them. */
export function withCarried(fetch: (p: TrackRangeParams, signal?: AbortSignal) => Promise<RangeColumns>, ids: string[], partial: SomeCarried): FetchRange {
  return async (p, signal) => {
    const have = partial.get(edges(p));
    if (!have) return fetch({ ...p, tracks: ids }, signal);
    const r = await fetch({ ...p, tracks: ids.filter((id) => !have.has(id)) }, signal);
    partial.delete(edges(p));
    const fresh = new Map(r.tracks.map((tr) => [tr.id, tr]));
    return join(r, ids.flatMap((id): Part[] => {
      const tr = fresh.get(id);
      if (tr) return [{ tr, names: r.names }];
      const old = have.get(id);
      return old ? [old] : [];
    }));
  };
}
