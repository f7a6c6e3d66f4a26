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
  streamClass?: string;
  busyNs?: Ns;
  count?: number;
  order?: number;
  threadName?: string | null;
}

export interface TimelineTracksResult { tracks: Track[]; start?: Ns; end?: Ns }

export interface RangeParams {
  profileId: string;
  start: Ns;
  end: Ns;
  width: number;
  tracks?: string[];
  /** Events instead of buckets when at most this many items start in the range. */
  maxEvents?: number;
  format?: 'objects' | 'columns';
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
  /** Absent when no item starts in the bucket (it is only covered by earlier ones). */
  longest?: { id: number; name: string; dur: Ns };
}

export type TrackRange = { id: string; events: TimelineEvent[] } | { id: string; buckets: Bucket[] };

export interface RangeResult { resolution: number; start: Ns; end: Ns; tracks: TrackRange[] }

/** timeline/range with `format: "columns"`: one array per field, every name and
 * kind an index into `names`; bucket j covers [start + index[j]*resolution, +resolution). */
export interface EventColumns { id: number[]; start: Ns[]; end: Ns[]; name: number[]; kind: number[]; depth: number[] }
export interface BucketColumns { index: number[]; count: number[]; busyNs: Ns[]; longestId: number[]; longestName: number[]; longestDur: Ns[] }
export type TrackColumns = { id: string; events: EventColumns } | { id: string; buckets: BucketColumns };
export interface RangeColumns { resolution: number; start: Ns; end: Ns; format: 'columns'; names: string[]; tracks: TrackColumns[] }

export interface NvtxNode {
  id: number;
  name: string;
  domain?: string | null;
  depth?: number;
  start: Ns;
  end: Ns;
  gpuStart?: Ns | null;
  gpuEnd?: Ns | null;
  opCount: number;
  kernelNs: Ns;
  childCount: number;
  instances?: number;
  topKernels?: Array<{ name: string; count?: number; ns?: Ns }>;
  children?: NvtxNode[];
}

/** One level of nvtx/tree (roots, or the children of `parent`), paged by `next`. */
export interface NvtxTreeResult {
  nodes: NvtxNode[]; total: number; next: string | null; truncated: boolean;
  nodeCount?: number; rangeCount?: number; aggregated?: boolean; mode?: 'ranges' | 'aggregate'; parent?: number | null;
}

export interface KernelDetails { [key: string]: unknown }

export interface KernelExplain {
  name: string;
  displayName: string;
  origin: string;
  category: string;
  markdown: string;
  kernelId?: number;
  stats?: { count: number; totalNs: Ns; longestKernelId?: number | null; medianKernelId?: number | null } | null;
  description?: string | null;
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

export interface Finding {
  id: string;
  severity: 'critical' | 'warning' | 'info' | string;
  title: string;
  recommendation?: string;
  impactNs?: Ns;
  evidence?: Record<string, unknown>;
}
export interface ReportResult { findings?: Finding[]; rendered?: string; counts?: Record<string, number> }

/** One kernel attributed to a source line (source/map, source/kernelsAt). */
export interface LineKernel {
  name: string;
  kernelId?: number;
  count: number;
  totalNs: Ns;
  avgNs?: Ns;
  pctGpu: number;
  strategy?: string;
  confidence?: number;
  evidence?: string;
  explanation?: string;
}

export interface KernelsAtResult { file: string; line: number; count: number; totalNs: Ns; pctGpu: number; kernels: LineKernel[] }

/** Lines are 1-based. */
export interface SourceMapLine { line: number; count: number; totalNs: Ns; pctGpu: number; kernels?: LineKernel[] }
export interface SourceMapFile { file: string; totalNs?: Ns; pctGpu?: number; lines: SourceMapLine[] }
export interface SourceMapResult { workspaceRoot?: string; gpuTimeNs?: Ns; kernels?: number; files: SourceMapFile[] }

export interface Position { line: number; character: number }
export interface TextEdit { range: { start: Position; end: Position }; newText: string }
export interface AnnotateParams {
  file: string;
  workspaceRoot: string;
  /** startLine/endLine are 0-based and inclusive. */
  scope?: { function: string } | { startLine: number; endLine: number } | 'file';
  granularity?: 'function' | 'statement';
  /** Annotate this (unsaved) buffer instead of the file on disk. */
  text?: string;
}
export interface AnnotateResult { edits: TextEdit[]; added?: Array<{ line: number; tag: string }> }
export interface UnannotateParams { file: string; workspaceRoot: string; text?: string }
export interface UnannotateResult { edits: TextEdit[]; removed?: Array<{ line: number; text: string }> }

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
