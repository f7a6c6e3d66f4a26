// Requests to the Python side over the widget's custom messages:
// {id, kind, ...} out, {id, kind, ...} + buffers back, or {id, error}.
import { AnyModel, Buffer } from "./anywidget";

export interface TrackData {
  id: string;
  type: "events" | "buckets";
  n: number;
  names: (string | null)[];
  kinds?: (string | null)[];
  /** events: [start, end, depth, id] per event; buckets: [start, end, count, busyNs, longestId, longestDur] */
  cols: Float64Array;
}

export interface RangeData {
  start: number;
  end: number;
  resolution: number;
  serverMs: number;
  roundTripMs: number;
  /** of roundTripMs: decoding the reply in the browser (JSON.parse + columns) */
  decodeMs: number;
  /** reply size on the wire (buffers) */
  bytes: number;
  /** events + buckets in the reply */
  items: number;
  tracks: Map<string, TrackData>;
}

/** timeline/range as the server writes it (docs/protocol.md, timeline section). */
interface RangeResult {
  resolution: number;
  start: number;
  end: number;
  tracks: {
    id: string;
    events?: { id: number; start: number; end: number; name: string | null; kind?: string; depth?: number }[];
    buckets?: { start: number; end: number; count: number; busyNs: number; longest?: { id: number; name: string | null; dur: number } | null }[];
  }[];
}

interface WireReply {
  id: number;
  kind: string;
  format?: string;
  error?: string;
  code?: number | null;
  serverMs?: number;
}

const decoder = new TextDecoder();

function bytes(buf: Buffer): Uint8Array {
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  const v = buf as ArrayBufferView;
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** Columns for drawing: events [start, end, depth, id]; buckets [start, end, count, busyNs, longestId, longestDur]. */
export function toTracks(r: RangeResult): Map<string, TrackData> {
  const out = new Map<string, TrackData>();
  for (const t of r.tracks) {
    if (t.buckets) {
      const bs = t.buckets;
      const cols = new Float64Array(bs.length * 6);
      const names: (string | null)[] = new Array(bs.length);
      for (let i = 0; i < bs.length; i++) {
        const b = bs[i];
        cols[i * 6] = b.start;
        cols[i * 6 + 1] = b.end;
        cols[i * 6 + 2] = b.count;
        cols[i * 6 + 3] = b.busyNs;
        cols[i * 6 + 4] = b.longest ? b.longest.id : -1;
        cols[i * 6 + 5] = b.longest ? b.longest.dur : 0;
        names[i] = b.longest ? b.longest.name : null;
      }
      out.set(t.id, { id: t.id, type: "buckets", n: bs.length, names, cols });
    } else {
      const es = t.events ?? [];
      const cols = new Float64Array(es.length * 4);
      const names: (string | null)[] = new Array(es.length);
      const kinds: (string | null)[] = new Array(es.length);
      for (let i = 0; i < es.length; i++) {
        const e = es[i];
        cols[i * 4] = e.start;
        cols[i * 4 + 1] = e.end;
        cols[i * 4 + 2] = e.depth ?? 0;
        cols[i * 4 + 3] = e.id;
        names[i] = e.name;
        kinds[i] = e.kind ?? null;
      }
      out.set(t.id, { id: t.id, type: "events", n: es.length, names, kinds, cols });
    }
  }
  return out;
}

interface Pending {
  resolve: (d: RangeData) => void;
  reject: (e: Error) => void;
  t0: number;
}

export class RangeClient {
  private pending = new Map<number, Pending>();
  private nextId = 1;
  sent = 0;
  answered = 0;
  failed = 0;

  constructor(private model: AnyModel<unknown>) {
    model.on("msg:custom", (msg: unknown, buffers: Buffer[]) => this.onMessage(msg, buffers));
  }

  request(start: number, end: number, width: number, tracks?: string[]): Promise<RangeData> {
    const id = this.nextId++;
    this.sent++;
    return new Promise<RangeData>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, t0: performance.now() });
      const msg: Record<string, unknown> = { id, kind: "range", start: Math.floor(start), end: Math.ceil(end), width: Math.max(1, Math.round(width)) };
      if (tracks) msg.tracks = tracks;
      this.model.send(msg);
    });
  }

  private asks = new Map<number, { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }>();

  /** Any other request ({kind, ...} -> the reply's fields), e.g. details of a clicked op. */
  ask(kind: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.asks.set(id, { resolve, reject });
      this.model.send({ id, kind, ...fields });
    });
  }

  /** Fails every request still waiting (the view was removed). */
  dispose(): void {
    for (const p of this.pending.values()) p.reject(new Error("widget closed"));
    for (const p of this.asks.values()) p.reject(new Error("widget closed"));
    this.pending.clear();
    this.asks.clear();
  }

  private onMessage(msg: unknown, buffers: Buffer[]): void {
    const m = msg as WireReply;
    if (!m || typeof m !== "object" || typeof m.id !== "number") return;
    const a = this.asks.get(m.id);
    if (a) {
      this.asks.delete(m.id);
      if (m.error !== undefined) a.reject(new Error(m.code != null ? `[${m.code}] ${m.error}` : m.error));
      else a.resolve(m as unknown as Record<string, unknown>);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) {
      console.warn("nsys-ai: reply for an unknown request", m.id);
      return;
    }
    this.pending.delete(m.id);
    if (m.error !== undefined) {
      this.failed++;
      p.reject(new Error(m.code != null ? `[${m.code}] ${m.error}` : m.error));
      return;
    }
    const tArrived = performance.now();
    let r: RangeResult;
    try {
      r = JSON.parse(decoder.decode(bytes(buffers[0]))) as RangeResult;
    } catch (e) {
      this.failed++;
      p.reject(new Error(`bad range reply: ${e}`));
      return;
    }
    this.answered++;
    const tracks = toTracks(r);
    const now = performance.now();
    let items = 0;
    for (const t of tracks.values()) items += t.n;
    p.resolve({
      start: r.start,
      end: r.end,
      resolution: r.resolution,
      serverMs: m.serverMs ?? 0,
      roundTripMs: now - p.t0,
      decodeMs: now - tArrived,
      bytes: buffers.reduce((a, b) => a + (b as ArrayBufferView | ArrayBuffer).byteLength, 0),
      items,
      tracks,
    });
  }
}
