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
  /** The messages the page posted in one task (webview/rpc's HostBridge: a zoom step's tile requests), in order. */
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

/* stringifyExact keeps the literal's key order: an answer's text begins with its type and id */
const ANSWER_HEAD = /^\{"type":"rpc(?:Result|Error)","id":(\d+)[,}]/;

/** The request id an envelope answers (`rpcResult` / `rpcError`), read from the head of its
 * text without parsing the rest (an answer nobody waits for any more is dropped unparsed); else undefined. */
export function answerIdOf(raw: unknown): number | undefined {
  if (typeof raw !== 'object' || raw === null || typeof (raw as Envelope).json !== 'string') return undefined;
  const m = ANSWER_HEAD.exec((raw as Envelope).json.slice(0, 64));
  return m ? Number(m[1]) : undefined;
}

/** The message in an envelope (anything else is returned as it is, for the caller to reject). */
export function fromEnvelope(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null && typeof (raw as Envelope).json === 'string' ? parseExact((raw as Envelope).json) : raw;
}
