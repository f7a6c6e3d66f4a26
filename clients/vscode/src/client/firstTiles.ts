/* The timeline's first tiles, asked by the host (the extension, the UI-test
 * harness) while the webview is still being created and handed to the page
 * with `init`, so that the first frame is drawn without a round trip of its
 * own. The page's first view is the whole profile at its plot width; its rows
 * are the track tree's default rows (client/trackTree), drawn in blocks of
 * ROW_BLOCK that each ask for their own tracks while in view. The host does
 * not know the page's size until the page says it (`ready`): it asks with the
 * last size a page reported (or a default), and again at `ready` when that
 * size needs other tiles or more rows. Free of DOM and vscode imports. */
import type { ProfileInfo, RangeReply, Track } from '../protocol/types';
import { profileSpan } from '../protocol/types';
import { absTime, clockOrigin, type Int } from './exactJson';
import { tileRequest, tilesFor, tileKey, type TileKey } from './timelineModel';
import { newTreeState, trackTree, visibleRows } from './trackTree';

/** Rows per block: a block asks timeline/range for its own tracks while it is in view. */
export const ROW_BLOCK = 4;

/** The page's timeline as sized at load: its plot's width (px) and how many rows it shows. */
export interface FirstView { plotWidth: number; rows: number }

/** What a page with no size reported yet is assumed to show. */
export const DEFAULT_FIRST_VIEW: FirstView = { plotWidth: 1000, rows: 24 };

/** One first tile: its key (the timeline's offsets), the tracks asked, and the answer (the profile's clock; the columns
 * a zoom step's tiles ask, client/tileColumns TILE_FIELDS). */
export interface FirstTile { key: TileKey; tracks: string[]; result: RangeReply }

/** The tiles and tracks of a first view. */
export interface FirstPlan { keys: TileKey[]; tracks: string[]; params: Array<Record<string, unknown>> }

/** The timeline/range requests of the first frame at `view` (params without profileId);
 * undefined when the profile has no span (the page draws no timeline). */
export function planFirstTiles(info: ProfileInfo, tracks: Track[], view: FirstView): FirstPlan | undefined {
  const span = profileSpan(info);
  if (!span) return undefined;
  const origin = clockOrigin(span.start, span.end);
  const rel = (t: Int) => Number(BigInt(t) - origin);
  const bounds = { start: rel(span.start), end: rel(span.end) };
  const rows = visibleRows(trackTree(tracks), newTreeState());
  const shown = rows.slice(0, Math.ceil(Math.max(1, view.rows) / ROW_BLOCK) * ROW_BLOCK);
  const ids = [...new Set(shown.flatMap((r) => r.ids))];
  const keys = tilesFor({ ...bounds, width: Math.max(1, Math.round(view.plotWidth)) }, 0, bounds);
  return {
    keys, tracks: ids,
    params: keys.map((k) => ({ ...tileRequest(k), start: absTime(k.start, origin), end: absTime(k.end, origin), tracks: ids })),
  };
}

/** Whether the tiles of `have` serve a page that needs `want`: the same tiles, and every track it shows. */
export function covers(have: FirstPlan, want: FirstPlan): boolean {
  const k = new Set(have.keys.map(tileKey)), t = new Set(have.tracks);
  return want.keys.every((x) => k.has(tileKey(x))) && want.tracks.every((x) => t.has(x));
}

/** Reads a page's reported size (anything malformed: undefined). */
export function asFirstView(v: unknown): FirstView | undefined {
  const o = v as Partial<FirstView> | undefined;
  return o && Number.isFinite(o.plotWidth) && Number.isFinite(o.rows) && o.plotWidth! > 0 && o.rows! > 0
    ? { plotWidth: Math.min(o.plotWidth!, 1 << 16), rows: Math.min(o.rows!, 4096) } : undefined;
}
