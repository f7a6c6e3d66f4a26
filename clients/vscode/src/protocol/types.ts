/* Types of the nsys-ai JSON-RPC protocol, as the client uses them.
 * Hand-written from the issues until protocol/schemas/ holds every method;
 * src/protocol/generated.ts is generated from the schemas that exist
 * (npm run gen:types) and these interfaces are kept compatible with it. */

export type Ns = number;

export interface InitializeResult {
  serverInfo: { name: string; version?: string };
  capabilities: { methods: string[] };
}

export interface ProfileInfo {
  path?: string;
  /** min(start)..max(end) over the activity tables; null when nothing is timed. */
  span?: { start: Ns; end: Ns } | null;
  counts?: { kernels?: number; memcpy?: number; memset?: number; runtime?: number; nvtx?: number; [k: string]: number | undefined };
  gpus?: Array<{ id: number; name: string | null }>;
}

/** The profile's time span, or undefined when it has no timed rows. */
export function profileSpan(info: ProfileInfo): { start: Ns; end: Ns } | undefined {
  const s = info.span;
  return s && Number.isFinite(s.start) && Number.isFinite(s.end) && s.end > s.start ? { start: s.start, end: s.end } : undefined;
}

export interface ProfileOpenParams { path: string; workDoneToken?: string | number }
export interface ProfileOpenResult { profileId: string; info: ProfileInfo }

export type TrackKind = string; /* "gpu", "nvtx", "cuda_api", ... (server-defined) */

export interface Track {
  id: string;
  kind: TrackKind;
  name: string;
  device?: number;
  stream?: number;
  pid?: number;
  tid?: number;
  depth?: number;
  [key: string]: unknown;
}

export interface TimelineTracksResult { tracks: Track[]; [key: string]: unknown }

export interface RangeParams {
  profileId: string;
  start: Ns;
  end: Ns;
  width: number;
  tracks?: string[];
}

export interface TimelineEvent {
  id: number;
  start: Ns;
  end: Ns;
  name: string;
  kind: string;
  depth: number;
}

export interface Bucket {
  start: Ns;
  end: Ns;
  count: number;
  busyNs: Ns;
  longest: { id: number; name: string; dur: Ns };
}

export type TrackRange = { id: string; events: TimelineEvent[] } | { id: string; buckets: Bucket[] };

export interface RangeResult { resolution: number; start: Ns; end: Ns; tracks: TrackRange[] }

export interface NvtxNode {
  name: string;
  domain?: string | null;
  start: Ns;
  end: Ns;
  gpuStart?: Ns | null;
  gpuEnd?: Ns | null;
  opCount: number;
  kernelNs: Ns;
  topKernels?: Array<{ name: string; totalNs?: Ns; count?: number; [k: string]: unknown }>;
  children?: NvtxNode[];
}

export interface NvtxTreeResult { roots?: NvtxNode[]; nodes?: NvtxNode[]; [key: string]: unknown }

export interface KernelDetails { [key: string]: unknown }

export interface KernelExplain {
  name: string;
  displayName: string;
  origin: string;
  category: string;
  markdown: string;
  [key: string]: unknown;
}

export interface TopKernelRow {
  name: string;
  count: number;
  totalNs: Ns;
  avgNs: Ns;
  pctOfGpu: number;
  [key: string]: unknown;
}

export interface AnalysisResult { rows?: TopKernelRow[]; [key: string]: unknown }

export interface Finding { title?: string; severity?: string; message?: string; markdown?: string; [k: string]: unknown }
export interface ReportResult { findings?: Finding[]; markdown?: string; [key: string]: unknown }

export interface LineKernel {
  name: string;
  count?: number;
  totalNs?: Ns;
  pctOfGpu?: number;
  explanation?: string;
  kernelId?: number;
  [key: string]: unknown;
}

export interface KernelsAtResult {
  kernels: LineKernel[];
  [key: string]: unknown;
}

export interface SourceMapLine {
  line: number;
  count: number;
  totalNs: Ns;
  pctOfGpu: number;
  kernels?: LineKernel[];
  [key: string]: unknown;
}

export interface SourceMapFile { file: string; lines: SourceMapLine[]; [key: string]: unknown }
export interface SourceMapResult { files: SourceMapFile[]; [key: string]: unknown }

export interface Position { line: number; character: number }
export interface TextEdit { range: { start: Position; end: Position }; newText: string }
export interface AnnotateParams {
  file: string;
  workspaceRoot: string;
  scope: { function: string } | { startLine: number; endLine: number } | 'file';
  granularity: 'function' | 'statement';
}
export interface AnnotateResult { edits: TextEdit[] }

/** Progress payloads carried by $/progress (LSP work-done progress). */
export type WorkDoneProgress =
  | { kind: 'begin'; title?: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number }
  | { kind: 'end'; message?: string };

/** Error codes from docs/protocol.md's table that the client reacts to. */
export const ErrorCodes = {
  MethodNotFound: -32601,
  InvalidParams: -32602,
  RequestCancelled: -32800,
  FileNotFound: -32001,
  NotSqlite: -32003,
  NotNsys: -32004,
  ProfileNotOpen: -32005,
  NsysMissing: -32006,
  NotFound: -32008,
  DataMissing: -32009,
} as const;
