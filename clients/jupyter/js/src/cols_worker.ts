// The worker that decodes a "buckets" reply's columns (cols_decoder.ts): the exact JSON parse of
// ~100-250 KB, which on the page's main thread delayed the input after a hover (a Ctrl+wheel's
// first frame waited for it: issue 19). Bundled on its own (build.mjs) into the widget module as a string.
import { decodeBucketCols } from "./range_client";

interface Scope { onmessage: ((e: MessageEvent) => void) | null; postMessage(m: unknown): void }
const scope = globalThis as unknown as Scope;

scope.onmessage = (e: MessageEvent) => {
  const { id, m } = e.data as { id: number; m: Record<string, unknown> };
  try {
    scope.postMessage({ id, cols: decodeBucketCols(m) });
  } catch (err) {
    scope.postMessage({ id, error: String(err) });
  }
};
