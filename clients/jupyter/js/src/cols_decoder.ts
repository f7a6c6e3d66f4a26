// Decodes bucket columns off the main thread (cols_worker.ts in a worker made from the bundled
// source); null where no worker can be made (a page's CSP, no Worker): the caller then decodes
// on the main thread when a hover or a click needs the columns (bucket_cols.ts).
import { DecodedBucketCols } from "./range_client";

declare const __COLS_WORKER_SRC__: string;

let worker: Worker | null | undefined;
let seq = 0;
const waiting = new Map<number, { ok: (c: DecodedBucketCols | null) => void; fail: (e: Error) => void }>();

function failAll(why: string): void {
  worker = null;
  for (const w of waiting.values()) w.fail(new Error(why));
  waiting.clear();
}

function theWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    if (typeof Worker !== "function" || typeof __COLS_WORKER_SRC__ !== "string" || !__COLS_WORKER_SRC__) return (worker = null);
    const url = URL.createObjectURL(new Blob([__COLS_WORKER_SRC__], { type: "text/javascript" }));
    worker = new Worker(url);
    worker.onmessage = (e: MessageEvent) => {
      const r = e.data as { id: number; cols?: DecodedBucketCols | null; error?: string };
      const w = waiting.get(r.id);
      waiting.delete(r.id);
      if (!w) return;
      if (r.error !== undefined) w.fail(new Error(r.error));
      else w.ok(r.cols ?? null);
    };
    worker.onerror = () => failAll("bucket columns worker failed");
  } catch {
    worker = null;
  }
  return worker;
}

/** The reply's columns decoded in the worker, or null when there is none (decode it here). */
export function decodeOffThread(m: Record<string, unknown>): Promise<DecodedBucketCols | null> | null {
  const w = theWorker();
  if (!w) return null;
  const id = ++seq;
  const buffers = ((m.buffers as unknown[] | undefined) ?? []).map((b) =>
    b instanceof ArrayBuffer ? b.slice(0) : (b as ArrayBufferView).buffer.slice((b as ArrayBufferView).byteOffset,
      (b as ArrayBufferView).byteOffset + (b as ArrayBufferView).byteLength));
  return new Promise((ok, fail) => {
    waiting.set(id, { ok, fail });
    try {
      w.postMessage({ id, m: { format: m.format, jsonBytes: m.jsonBytes, buffers } }, buffers as ArrayBuffer[]);
    } catch (e) {
      waiting.delete(id);
      fail(e as Error);
    }
  });
}
