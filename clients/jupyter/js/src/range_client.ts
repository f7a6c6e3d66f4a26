// Requests to the Python side over the widget's custom messages:
// {id, kind, ...} out, {id, kind, ...} + buffers back, or {id, error}.
import { AnyModel, Buffer, float64 } from "./anywidget";

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
  tracks: Map<string, TrackData>;
}

interface WireTrack {
  id: string;
  type: "events" | "buckets";
  n: number;
  names: (string | null)[];
  kinds?: (string | null)[];
  buffer: number;
}

interface WireReply {
  id: number;
  kind: string;
  error?: string;
  code?: number | null;
  start: number;
  end: number;
  resolution: number;
  serverMs?: number;
  tracks: WireTrack[];
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

  request(start: number, end: number, width: number): Promise<RangeData> {
    const id = this.nextId++;
    this.sent++;
    return new Promise<RangeData>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, t0: performance.now() });
      this.model.send({ id, kind: "range", start: Math.floor(start), end: Math.ceil(end), width: Math.max(1, Math.round(width)) });
    });
  }

  /** Fails every request still waiting (the view was removed). */
  dispose(): void {
    for (const p of this.pending.values()) p.reject(new Error("widget closed"));
    this.pending.clear();
  }

  private onMessage(msg: unknown, buffers: Buffer[]): void {
    const m = msg as WireReply;
    if (!m || typeof m !== "object" || typeof m.id !== "number") return;
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
    const tracks = new Map<string, TrackData>();
    for (const t of m.tracks) {
      tracks.set(t.id, { id: t.id, type: t.type, n: t.n, names: t.names, kinds: t.kinds, cols: float64(buffers[t.buffer]) });
    }
    this.answered++;
    p.resolve({
      start: m.start,
      end: m.end,
      resolution: m.resolution,
      serverMs: m.serverMs ?? 0,
      roundTripMs: performance.now() - p.t0,
      tracks,
    });
  }
}
