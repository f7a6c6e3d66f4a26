/* Messages between the extension host and the profile webview: one union per
 * direction, keyed on `type`. Both sides log a warning on an unknown type. */
import type { ProfileInfo, TimelineTracksResult } from './types';
import type { FirstTile, FirstView } from '../client/firstTiles';
import { parseExact, stringifyExact, type Int } from '../client/exactJson';

export type HostToWebview =
  /** `tracks`: timeline/tracks, asked by the host while the webview loads (absent if that failed). */
  | { type: 'init'; profileId: string; title: string; info: ProfileInfo; tracks?: TimelineTracksResult;
      /** The first frame's timeline/range tiles, asked by the host while the webview was created (client/firstTiles; absent if that failed). */
      tiles?: FirstTile[] }
  | Answer
  /** The answers to the requests of one `batch` (e.g. a zoom step's tiles), posted together once all came: one
   * message through VS Code's relay instead of one per tile. `ids` (first: read without parsing the rest) are theirs. */
  | { type: 'answers'; ids: number[]; answers: Answer[] }
  /** `start`/`end` on the profile's clock (BigInt beyond 2^53); `window`: a finding's evidence, zoomed to and marked as the range. */
  | { type: 'reveal'; kernelId?: number; start?: Int; end?: Int; window?: { start: Int; end: Int } }
  | { type: 'profileReopened'; profileId: string };

/** One request's answer. `host`: when the extension host received the request and had the server's answer
 * (Date.now(), epoch ms: the bench splits a round trip into its legs). */
export type Answer =
  | { type: 'rpcResult'; id: number; result: unknown; host?: { received: number; answered: number } }
  | { type: 'rpcError'; id: number; error: { code: number; message: string } };

export type WebviewToHost =
  /** `view`: the timeline's size as the page is laid out (the host asks the first tiles for it). */
  | { type: 'ready'; view?: FirstView }
  | { type: 'rpc'; id: number; method: string; params: Record<string, unknown> }
  | { type: 'cancel'; id: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'perf'; name: string; ms: number }
  /** The messages the page posted in one task (webview/rpc's HostBridge), in order: its requests are answered in one `answers`. */
  | { type: 'batch'; messages: WebviewToHost[] };

/** The `perf` message the timeline page posts with its first complete frame (ms after init). */
export const FIRST_FRAME = 'first frame';

export function isWebviewToHost(m: unknown): m is WebviewToHost {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string';
}

/** What crosses postMessage, both ways: the message as exact JSON text. VS Code
 * serializes webview messages as JSON, which has no BigInt, and times of
 * epoch-clocked profiles are BigInt (client/exactJson). */
export interface Envelope {
  json: string;
  /** When the sender had the text (Date.now(), epoch ms, after the encode): the bench splits a reply's way to the page at it. */
  posted?: number;
}

export function toEnvelope(m: HostToWebview | WebviewToHost): Envelope {
  const json = stringifyExact(m);
  return { json, posted: Date.now() };
}

/* stringifyExact keeps the literal's key order: an answer's text begins with its type and id, a batch's with its ids */
const ANSWER_HEAD = /^\{"type":"rpc(?:Result|Error)","id":(\d+)[,}]/;
const ANSWERS_HEAD = /^\{"type":"answers","ids":\[([\d,]*)\]/;

/** The request ids an envelope answers (`rpcResult` / `rpcError`: one; `answers`: its `ids`), read from the head of its
 * text without parsing the rest (answers nobody waits for any more are dropped unparsed); else undefined. */
export function answerIdsOf(raw: unknown): number[] | undefined {
  if (typeof raw !== 'object' || raw === null || typeof (raw as Envelope).json !== 'string') return undefined;
  const json = (raw as Envelope).json;
  const one = ANSWER_HEAD.exec(json.slice(0, 64));
  if (one) return [Number(one[1])];
  if (!json.startsWith('{"type":"answers"')) return undefined;
  const end = json.indexOf(']');
  const many = end > 0 ? ANSWERS_HEAD.exec(json.slice(0, end + 1)) : null;
  return many ? (many[1] ? many[1].split(',').map(Number) : []) : undefined;
}

/** The message in an envelope (anything else is returned as it is, for the caller to reject). */
export function fromEnvelope(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null && typeof (raw as Envelope).json === 'string' ? parseExact((raw as Envelope).json) : raw;
}
