// Requests to the Python side over the widget's custom messages:
// {id, kind, ...} out, {id, kind, ...} + buffers back, or {id, error}.
// Range replies carry timeline/range's "columns" format in one binary buffer: the
// server's JSON ("json") or deflated ("jsonz", inflated here).
// Zoom requests ask only for the columns drawing needs (FIELDS); what a tooltip or a click
// needs beyond them is asked for when it is shown (Timeline: kind "bucket").
import { unzlibSync } from "fflate";
import { AnyModel, Buffer } from "./anywidget";
import { Int, parseExact, relTime } from "nsys-views/client/exactJson";
import { TILE_FIELDS } from "nsys-views/client/tileColumns";

type IntCol = Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float64Array;

export interface EventCols {
  /** ns from TrackData.base (float64: exact) */
  start: Float64Array;
  end: Float64Array;
  id: Int32Array | Float64Array;
  /** indexes into names (-1: none) */
  name: IntCol;
  kind: IntCol;
  depth: Uint8Array;
}

export interface BucketCols {
  /** bucket j covers [start + index*resolution, + resolution) */
  index: IntCol;
  busy: Float32Array;
  longestName: IntCol;
  /** absent when the request left them out (FIELDS): ask for the bucket ("bucket" messages),
   *  or filled by the bucket columns asked after the view is drawn (`mergeBucketCols`) */
  count?: IntCol;
  longestId?: Int32Array | Float64Array;
  longestDur?: Float32Array;
  /** exact busy ns (the drawing's `busy` comes from whole percents) */
  busyNs?: Float64Array;
  /** the longest op's name from the bucket columns (their own names table): drawing's
   *  `longestName` stays as it was (a bucket coloured by its longest op's name is the "+names"
   *  comparison, not what the bucket columns should change) */
  longestNamed?: { name: IntCol; names: (string | null)[] };
}

/** The bucket columns a tooltip and a click need beyond drawing's (FIELDS), asked for the GPU
 *  rows in view once a view's data is drawn ("buckets" messages): hovering a bucket then shows
 *  its count, exact busy time and longest op with no request, and a click asks for that op. */
export const BUCKET_FIELDS = ["indexStep", "count", "busyNs", "longestId", "longestDur", "longestName"];

/** The columns a zoom step asks for (timeline/range `fields`): what drawing, the event
 *  tooltip and a click on an event need. A bucket is drawn from its busy time alone (height
 *  and opacity, the track's colour); its count and longest op (name, id, duration) are
 *  fetched when it is hovered or clicked. Colouring buckets by their longest op's name
 *  ("+names", the bench's comparison) costs ~20% more bytes, the server's name lookups,
 *  and twice the drawing time (neighbouring buckets rarely share a colour). Buckets come
 *  in the server's compact encodings: indexStep (the index delta-coded, 1 along a busy
 *  stretch) and busyPct (whole percent, rounded up): a 10M-kernel zoom step's reply is 99 KB
 *  p50 instead of 166 with index and busyNs; drawing uses 8 busy levels, so nothing drawn is
 *  lost (the tooltip's exact busy time comes with the "bucket" reply). The VS Code timeline
 *  asks the same list: one definition, clients/vscode/src/client/tileColumns.ts. */
export const FIELDS: readonly string[] = TILE_FIELDS;

/** The bench's "+plain" variant: what the compact bucket columns encode. */
const PLAIN: Record<string, string> = { indexStep: "index", busyPct: "busyNs" };

/** The bytes of a reply buffer. */
function bytesOf(buf: Buffer): Uint8Array {
  return buf instanceof ArrayBuffer ? new Uint8Array(buf)
    : new Uint8Array((buf as ArrayBufferView).buffer, (buf as ArrayBufferView).byteOffset, (buf as ArrayBufferView).byteLength);
}

/** A "jsonz" reply's JSON, inflated synchronously (fflate: ~0.2 ms for 80 KB once compiled,
 *  where DecompressionStream's promise chain cost ~2 ms of task hops per reply). */
function inflate(buf: Buffer, size?: number): Uint8Array {
  // into a buffer of the announced size (no growing and copying); a shorter result is checked
  // by the caller's parse, a longer one would be cut, so the size must be exact
  const out = unzlibSync(bytesOf(buf), size && size > 0 ? { out: new Uint8Array(size) } : undefined);
  if (size && out.byteLength !== size) throw new Error(`inflated ${out.byteLength} bytes, expected ${size}`);
  return out;
}

export interface TrackData {
  id: string;
  type: "events" | "buckets";
  n: number;
  /** event times are offsets from base (the request's start) */
  base: number;
  /** the reply's start and resolution (bucket geometry) */
  start: number;
  resolution: number;
  names: (string | null)[];
  ev?: EventCols;
  bk?: BucketCols;
}

export interface RangeData {
  /** the request's own window and plot width (the reply's start/end are on the bucket grid) */
  asked?: { start: number; end: number; width: number };
  start: number;
  end: number;
  resolution: number;
  serverMs: number;
  roundTripMs: number;
  /** of roundTripMs: decoding the reply in the browser (typed-array views) */
  decodeMs: number;
  /** reply size on the wire (buffers) */
  bytes: number;
  /** the reply's JSON size after inflating ("jsonz"; else bytes) */
  rawBytes: number;
  /** events + buckets in the reply */
  items: number;
  /** of serverMs: the RPC (server + pipe), its JSON decoding and the packing, in Python */
  timing?: { rpc: number; decode: number; pack: number };
  /** wall-clock breakdown of roundTripMs: browser -> kernel handler, kernel, kernel -> browser */
  upMs: number;
  kernelMs: number;
  downMs: number;
  /** range requests the Python side has answered so far */
  served: number;
  /** the reply's layout / the server's format: "jsonz/columns" or "json/columns"
   *  ("jsonz+all/columns": every column asked for, the bench's comparison) */
  format: string;
  tracks: Map<string, TrackData>;
}

interface WireReply {
  id: number;
  kind: string;
  format?: string;
  error?: string;
  code?: number | null;
  serverMs?: number;
  served?: number;
  source?: string;
  timing?: { rpc: number; decode: number; pack: number };
  recvAt?: number;
  sentAt?: number;
  /** a "jsonz" reply's inflated size */
  jsonBytes?: number;
  start?: number;
  end?: number;
  resolution?: number;
}

/** timeline/range's "columns" JSON (forwarded as is, format "json") -> the same typed columns,
 *  times as offsets from `origin` (the widget's clock: exact on epoch clocks, client/exactJson.ts).
 *  Columns the request left out are absent (bucket details) or filled (event depth 0). */
export function decodeJsonColumns(buf: Buffer, origin = 0n): [WireReply, Map<string, TrackData>] {
  const v = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array((buf as ArrayBufferView).buffer,
    (buf as ArrayBufferView).byteOffset, (buf as ArrayBufferView).byteLength);
  const raw = parseExact(decoder.decode(v)) as {
    start: Int; end: Int; resolution: number; names: (string | null)[];
    tracks: { id: string; events?: Record<string, Int[]>; buckets?: Record<string, number[]> }[];
  };
  const r = { ...raw, start: relTime(raw.start, origin), end: relTime(raw.end, origin) };
  const base = r.start;
  const out = new Map<string, TrackData>();
  for (const t of r.tracks) {
    const d: TrackData = { id: t.id, type: t.events ? "events" : "buckets", n: 0, base, start: r.start,
      resolution: r.resolution, names: r.names };
    if (t.events) {
      const e = t.events;
      const n = (d.n = (e.start ?? []).length);
      d.ev = { start: offsetsFrom(e.start ?? [], base, origin), end: offsetsFrom(e.end ?? [], base, origin),
        id: e.id ? Float64Array.from(e.id as number[]) : new Float64Array(n).fill(-1),
        name: e.name ? Int32Array.from(e.name as number[]) : new Int32Array(n).fill(-1),
        kind: e.kind ? Int32Array.from(e.kind as number[]) : new Int32Array(n).fill(-1),
        depth: e.depth ? Uint8Array.from(e.depth as number[]) : new Uint8Array(n) };
    } else {
      const b = t.buckets ?? {};
      const n = (d.n = (b.indexStep ?? b.index ?? []).length);
      d.bk = { index: b.indexStep ? runningSum(b.indexStep) : Int32Array.from(b.index ?? []),
        busy: b.busyPct ? percentOf(b.busyPct, r.resolution) : Float32Array.from(b.busyNs ?? []),
        longestName: b.longestName ? Int32Array.from(b.longestName) : new Int32Array(n).fill(-1) };
      if (b.count) d.bk.count = Float64Array.from(b.count);
      if (b.longestId) d.bk.longestId = Float64Array.from(b.longestId);
      if (b.longestDur) d.bk.longestDur = Float32Array.from(b.longestDur);
      if (b.busyNs) d.bk.busyNs = Float64Array.from(b.busyNs);
    }
    out.set(t.id, d);
  }
  return [{ id: 0, kind: "range", start: r.start, end: r.end, resolution: r.resolution }, out];
}

const decoder = new TextDecoder();

/** Times -> offsets from base (itself an offset from origin), exact (a plain loop, see percentOf). */
function offsetsFrom(t: Int[], base: number, origin: bigint): Float64Array {
  const out = new Float64Array(t.length);
  if (origin === 0n) for (let i = 0; i < t.length; i++) out[i] = (t[i] as number) - base;
  else for (let i = 0; i < t.length; i++) out[i] = relTime(t[i], origin) - base;
  return out;
}

/** busyPct -> busy ns (a plain loop: a typed array's `from` with a mapping function is several
 *  times slower). */
function percentOf(pct: number[], resolution: number): Float32Array {
  const out = new Float32Array(pct.length);
  for (let i = 0; i < pct.length; i++) out[i] = (pct[i] * resolution) / 100; // exact at 25, 50, 75, 100
  return out;
}

/** indexStep -> index (the steps' running sum). */
function runningSum(steps: number[]): Int32Array {
  const out = new Int32Array(steps.length);
  let at = 0;
  for (let i = 0; i < steps.length; i++) out[i] = at += steps[i];
  return out;
}

/** A name index -> the name (null for none). */
export function nameAt(d: TrackData, col: IntCol, i: number): string | null {
  const k = col[i];
  if (k < 0) return null;
  return d.names[k] ?? null;
}

interface Pending {
  resolve: (d: RangeData) => void;
  reject: (e: Error) => void;
  t0: number;
  wall0: number;
  asked: RangeData["asked"];
}

const wallNow = () => performance.timeOrigin + performance.now();

export class RangeClient {
  private pending = new Map<number, Pending>();
  private nextId = 1;
  sent = 0;
  answered = 0;
  /** reply layout to ask for ("jsonz" | "json"; "+all": every column, "+names": buckets'
   *  longest names too, "+plain": index and busyNs instead of indexStep and busyPct); unset: the
   *  Python side's choice and FIELDS (the bench's A/B sets it) */
  wire?: string;
  failed = 0;

  /** the widget's clock origin (its times are offsets from it) */
  origin = 0n;

  /** requests sent per kind other than "range" (tests: a click's round trips) */
  asked: Record<string, number> = {};

  /** tests: while set, replies are kept (in order) instead of handled; `release()` handles them */
  private held: [unknown, Buffer[]][] | null = null;

  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const h = this.held ?? [];
    this.held = null;
    for (const [m, b] of h) this.onMessage(m, b);
  }

  constructor(private model: AnyModel<unknown>) {
    model.on("msg:custom", (msg: unknown, buffers: Buffer[]) => this.onMessage(msg, buffers));
  }

  /** A range request; `rest`: the tracks the first view sent with the widget left out (the
   *  Python side does not take its width, the first view's, as this page's plot width). */
  request(start: number, end: number, width: number, tracks?: string[], rest = false): Promise<RangeData> {
    const id = this.nextId++;
    this.sent++;
    return new Promise<RangeData>((resolve, reject) => {
      const msg: Record<string, unknown> = { id, kind: "range", start: Math.floor(start), end: Math.ceil(end), width: Math.max(1, Math.round(width)) };
      this.pending.set(id, { resolve, reject, t0: performance.now(), wall0: wallNow(),
        asked: { start: msg.start as number, end: msg.end as number, width: msg.width as number } });
      if (tracks) msg.tracks = tracks;
      if (rest) msg.rest = true;
      // the bench's variants: a layout, then modifiers ("+all": every column; "~...": front-end
      // options, see Timeline), echoed in the reply's format label
      const wire = this.wire ?? "";
      const base = /^[a-z]*/.exec(wire)?.[0] ?? "";
      const mods = wire.slice(base.length);
      if (base) msg.wire = base;
      if (!mods.includes("+all")) {
        // "+plain": buckets as index and busyNs (the layout before the compact columns)
        const f = mods.includes("+plain") ? FIELDS.map((c) => PLAIN[c] ?? c) : FIELDS;
        msg.fields = mods.includes("+names") ? [...f, "longestName"] : f;
      }
      if (mods) this.mods.set(id, mods);
      if (mods.includes("~inline")) msg.inline = true; // served in the kernel's message handler
      msg.inflate = true; // "jsonz" replies can be inflated here
      this.model.send(msg);
    });
  }

  private asks = new Map<number, { kind: string; wall0: number; resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void;
    /** a request answered in several messages ("analyses"): how many are still to come, and each one's handler */
    parts?: number; onPart?: (m: Record<string, unknown>) => void; partsSeen?: number }>();

  /** The legs of the last answered request per kind other than "range" (wall-clock ms, one
   *  machine): page -> the kernel's message handler (`up`), the Python side (`kernel`: queue,
   *  server, reply built), kernel -> page (`down`) (the bench's breakdown of a round trip). A request
   *  answered in parts: its last part's, and its first part's as `<kind>:first`. */
  legs: Record<string, { up: number; kernel: number; down: number; at: number }> = {};

  /** Any other request ({kind, ...} -> the reply's fields), e.g. details of a clicked op. */
  ask(kind: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.askWithId(kind, fields).done;
  }

  /** `ask`, with the request's id (for `cancel`). */
  askWithId(kind: string, fields: Record<string, unknown>): { id: number; done: Promise<Record<string, unknown>> } {
    const id = this.nextId++;
    this.asked[kind] = (this.asked[kind] ?? 0) + 1;
    const done = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.asks.set(id, { kind, wall0: wallNow(), resolve, reject });
      this.model.send({ id, kind, ...fields });
    });
    return { id, done };
  }

  /** One message answered by `parts` messages (e.g. "analyses": one per analysis), each handed
   *  to `onPart` as it comes (an error part too: its `error`, `code`); resolves after the last. */
  askParts(kind: string, fields: Record<string, unknown>, parts: number, onPart: (m: Record<string, unknown>) => void): Promise<void> {
    const id = this.nextId++;
    this.asked[kind] = (this.asked[kind] ?? 0) + 1;
    return new Promise<void>((resolve, reject) => {
      this.asks.set(id, { kind, wall0: wallNow(), resolve: () => resolve(), reject, parts, onPart });
      this.model.send({ id, kind, ...fields });
    });
  }

  /** requests cancelled here: their reply, if the Python side had already sent it, is dropped quietly */
  private cancelled = new Set<number>();

  /** Drops a request not yet answered (its promise rejects with "cancelled") and tells the
   *  Python side, which drops it too (an explanation: cancelled on the server). */
  cancel(id: number): void {
    const a = this.asks.get(id);
    if (!a) return;
    this.asks.delete(id);
    this.cancelled.add(id);
    this.model.send({ kind: "cancel", of: id });
    a.reject(new Error("cancelled"));
  }

  /** Whether the view was removed (dispose): its requests fail with "widget closed", which is no error to report. */
  closed = false;

  /** Fails every request still waiting (the view was removed). */
  dispose(): void {
    this.closed = true;
    for (const p of this.pending.values()) p.reject(new Error("widget closed"));
    for (const p of this.asks.values()) p.reject(new Error("widget closed"));
    this.pending.clear();
    this.asks.clear();
  }

  private onMessage(msg: unknown, buffers: Buffer[]): void {
    if (this.held) {
      this.held.push([msg, buffers]);
      return;
    }
    const m = msg as WireReply;
    if (!m || typeof m !== "object" || typeof m.id !== "number") return;
    if (this.cancelled.delete(m.id)) return; // (answered before the cancel reached the Python side)
    const a = this.asks.get(m.id);
    if (a) {
      const at = wallNow();
      const r2 = (x: number) => Math.round(x * 100) / 100;
      if (m.recvAt !== undefined && m.sentAt !== undefined) {
        this.legs[a.kind] = { up: r2(m.recvAt - a.wall0), kernel: r2(m.sentAt - m.recvAt), down: r2(at - m.sentAt), at };
        if (a.onPart && !a.partsSeen) this.legs[`${a.kind}:first`] = this.legs[a.kind];
      }
      if (a.onPart) {
        a.partsSeen = (a.partsSeen ?? 0) + 1;
        try {
          a.onPart(m as unknown as Record<string, unknown>);
        } finally {
          if (--(a.parts as number) <= 0) {
            this.asks.delete(m.id);
            a.resolve({});
          }
        }
        return;
      }
      this.asks.delete(m.id);
      if (m.error !== undefined) a.reject(new Error(m.code != null ? `[${m.code}] ${m.error}` : m.error));
      else a.resolve(buffers?.length ? { ...(m as unknown as Record<string, unknown>), buffers } : m as unknown as Record<string, unknown>);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) {
      console.warn("nsys-ai: reply for an unknown request", m.id);
      return;
    }
    this.pending.delete(m.id);
    if (m.error !== undefined) {
      this.mods.delete(m.id);
      this.failed++;
      p.reject(new Error(m.code != null ? `[${m.code}] ${m.error}` : m.error));
      return;
    }
    const tArrived = performance.now();
    const wallArrived = wallNow();
    const mods = this.mods.get(m.id) ?? "";
    this.mods.delete(m.id);
    let raw: Uint8Array | undefined;
    if (m.format === "jsonz" && buffers?.length) {
      try {
        raw = inflate(buffers[0], m.jsonBytes);
      } catch (e) {
        this.failed++;
        p.reject(new Error(`bad range reply: ${e}`));
        return;
      }
    }
    this.decoded(m, p, buffers ?? [], raw, tArrived, wallArrived, mods);
  }

  /** The first view's data sent with the widget's state (`_first`: the range reply's buffer,
   *  `_first_meta`: its message fields), decoded as a reply is: no round trip. */
  initial(meta: Record<string, unknown>, buf: Buffer): RangeData {
    const m = meta as unknown as WireReply;
    const raw = m.format === "jsonz" ? inflate(buf, m.jsonBytes) : undefined;
    const [head, tracks] = decodeJsonColumns(raw ?? buf, this.origin);
    let items = 0;
    for (const t of tracks.values()) items += t.n;
    const bytes = (buf as ArrayBufferView | ArrayBuffer).byteLength;
    const asked = meta.start !== undefined && meta.width !== undefined
      ? { start: Number(meta.start), end: Number(meta.end), width: Number(meta.width) } : undefined;
    return { asked, start: head.start ?? 0, end: head.end ?? 0, resolution: head.resolution ?? 1, serverMs: m.serverMs ?? 0,
      roundTripMs: 0, decodeMs: 0, bytes, rawBytes: raw ? raw.byteLength : bytes, items, served: 0,
      format: `${m.format}+initial/${m.source ?? "?"}`, timing: m.timing, upMs: NaN, kernelMs: NaN, downMs: NaN, tracks };
  }

  /** the bench variant's modifiers per request id */
  private mods = new Map<number, string>();

  private decoded(m: WireReply, p: Pending, buffers: Buffer[], raw: Uint8Array | undefined, tArrived: number,
                  wallArrived: number, mods: string): void {
    let tracks: Map<string, TrackData>;
    try {
      if (!buffers.length) throw new Error(`format ${m.format} without a buffer`);
      if (m.format === "json" || m.format === "jsonz") {
        const [head, t] = decodeJsonColumns(raw ?? buffers[0], this.origin);
        Object.assign(m, { start: head.start, end: head.end, resolution: head.resolution });
        tracks = t;
      } else throw new Error(`unknown format ${m.format}`);
    } catch (e) {
      this.failed++;
      p.reject(new Error(`bad range reply: ${e}`));
      return;
    }
    this.answered++;
    const now = performance.now();
    let items = 0;
    for (const t of tracks.values()) items += t.n;
    p.resolve({
      asked: p.asked,
      start: m.start ?? 0,
      end: m.end ?? 0,
      resolution: m.resolution ?? 1,
      serverMs: m.serverMs ?? 0,
      roundTripMs: now - p.t0,
      decodeMs: now - tArrived,
      bytes: buffers.reduce((s, b) => s + (b as ArrayBufferView | ArrayBuffer).byteLength, 0),
      rawBytes: raw ? raw.byteLength : buffers.reduce((s, b) => s + (b as ArrayBufferView | ArrayBuffer).byteLength, 0),
      items,
      served: m.served ?? this.answered,
      format: `${m.format}${mods}/${m.source ?? "?"}`,
      timing: m.timing,
      upMs: (m.recvAt ?? NaN) - p.wall0,
      kernelMs: (m.sentAt ?? NaN) - (m.recvAt ?? NaN),
      downMs: wallArrived - (m.sentAt ?? NaN),
      tracks,
    });
  }
}

/** The resolution timeline/range answers a request with (docs/protocol.md): ceil((end - start) /
 *  width) rounded up to a power of two, for the request's integer start/end and width. Replies
 *  for two widths with the same resolution lie on the same bucket grid (only the events-or-
 *  buckets threshold, maxEvents = width/4, differs), so data answered at one width is drawn
 *  as is at the other. */
export function gridResolution(start: number, end: number, width: number): number {
  const perPx = Math.ceil((Math.ceil(end) - Math.floor(start)) / Math.max(1, Math.round(width)));
  let r = 1;
  while (r < perPx) r *= 2;
  return r;
}

/** A "jsonz" buffer inflated by the browser (DecompressionStream: native code, asynchronous). */
export async function inflateNative(buf: Buffer): Promise<Uint8Array> {
  const stream = new Blob([bytesOf(buf) as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A "buckets" reply (BUCKET_FIELDS of some tracks, asked with `d.asked`'s window and width, so on
 *  d's bucket grid) merged into d's bucket tracks: their count, exact busy time and longest op.
 *  A track whose buckets differ (another grid) is left as it is. Returns the tracks merged. */
export function mergeBucketCols(d: RangeData, m: Record<string, unknown>): number {
  const buffers = (m.buffers as Buffer[] | undefined) ?? [];
  if (!buffers.length) return 0;
  const raw = m.format === "jsonz" ? inflate(buffers[0], m.jsonBytes as number | undefined) : buffers[0];
  const [head, tracks] = decodeJsonColumns(raw, 0n);
  let merged = 0;
  for (const [id, t] of tracks) {
    const into = d.tracks.get(id);
    const a = into?.bk, b = t.bk;
    if (!into || !a || !b || !b.count || head.resolution !== into.resolution || b.index.length !== a.index.length) continue;
    let same = true;
    for (let i = 0; i < a.index.length && same; i++) same = a.index[i] === b.index[i];
    if (!same) continue;
    Object.assign(a, { count: b.count, longestId: b.longestId, longestDur: b.longestDur, busyNs: b.busyNs,
      longestNamed: { name: b.longestName, names: t.names } });
    merged++;
  }
  return merged;
}
