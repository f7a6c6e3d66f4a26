/* The protocol's types as the client names them: each one is a generated
 * type of protocol/schemas/ (src/protocol/generated/, `npm run gen:types`) or
 * a part of one, so a schema change that breaks the client fails `npm run
 * typecheck`. analysis/run's rows per analysis come from the schema's if/then
 * branches, which scripts/gen-types.mjs turns into named row types
 * (TopKernelsRow, ...). */
import type { AnalysisRunResult, TopKernelsRow } from './generated/analysis.run.result';
import type { InitializeResult as GenInitializeResult } from './generated/initialize.result';
import type { ProfileInfoResult } from './generated/profile.info.result';
import type { ProfileOpenResult as GenProfileOpenResult } from './generated/profile.open.result';
import type { ProgressParams } from './generated/notify.progress.params';
import type { TimelineTracksResult as GenTimelineTracksResult } from './generated/timeline.tracks.result';
import type { TimelineRangeResult, ColumnsFormat } from './generated/timeline.range.result';
import type { TimelineRangeParams } from './generated/timeline.range.params';
import type { NvtxTreeResult as GenNvtxTreeResult, Node } from './generated/nvtx.tree.result';
import type { KernelExplainResult } from './generated/kernel.explain.result';
import type { KernelDetailsResult } from './generated/kernel.details.result';
import type { ReportGenerateResult } from './generated/report.generate.result';
import type { SourceMapResult as GenSourceMapResult } from './generated/source.map.result';
import type { SourceKernelsAtResult } from './generated/source.kernelsAt.result';
import type { SourceLocateResult } from './generated/source.locate.result';
import type { SourceAnnotateParams } from './generated/source.annotate.params';
import type { SourceAnnotateResult } from './generated/source.annotate.result';
import type { SourceUnannotateParams } from './generated/source.unannotate.params';
import type { SourceUnannotateResult } from './generated/source.unannotate.result';
import { isInt, type Int } from '../client/exactJson';

export type Ns = number;
/** A time on the profile's clock as replies decode it: BigInt beyond 2^53 (epoch clocks; client/exactJson). */
export type { Int };

export type InitializeResult = GenInitializeResult;
export type ProfileInfo = ProfileInfoResult;
export type ProfileOpenResult = GenProfileOpenResult;

/** The profile's time span, or undefined when it has no timed rows. */
export function profileSpan(info: ProfileInfo): { start: Int; end: Int } | undefined {
  const s = info.span as { start: unknown; end: unknown } | undefined;
  return s && isInt(s.start) && isInt(s.end) && s.end > s.start ? { start: s.start, end: s.end } : undefined;
}

export type TimelineTracksResult = GenTimelineTracksResult;
export type Track = TimelineTracksResult['tracks'][number];
export type TrackKind = Track['kind'];

export type RangeParams = TimelineRangeParams;
/** timeline/range in the objects format. */
export type RangeResult = Exclude<TimelineRangeResult, { format: 'columns' }>;
export type TrackRange = RangeResult['tracks'][number];
export type TimelineEvent = Extract<TrackRange, { events: unknown }>['events'][number];
export type Bucket = Extract<TrackRange, { buckets: unknown }>['buckets'][number];

type GenTrackColumns = ColumnsFormat['tracks'][number];
/** A timeline/range reply in the columns format, as it comes (the columns `fields` asked for). */
export type RangeReply = ColumnsFormat;
/** timeline/range with `format: "columns"` as the timeline holds it (client/tileColumns decodes
 * a reply): one array per field, every name and kind an index into `names`. The tiles ask for
 * events without `depth` (client/tileColumns TILE_FIELDS). */
export type EventColumns = Required<Omit<Extract<GenTrackColumns, { events: unknown }>['events'], 'depth'>> & { depth?: number[] };
/** What a tooltip and a click need on buckets (asked after drawing, client/tileColumns):
 * per bucket its count and its longest op (-1 / 0 when count is 0), whose name indexes into
 * `names` (the table of the reply it came in, not the tile's). */
export interface BucketLongest { count: number[]; id: number[]; dur: number[]; name: number[]; names: string[] }
/** A bucket track's columns: bucket j covers [start + index[j]*resolution, +resolution),
 * busy busyPct[j] percent of it (whole percent, rounded up); `longest` once asked. */
export interface BucketColumns { index: number[]; busyPct: number[]; longest?: BucketLongest }
export type TrackColumns = { id: string; events: EventColumns } | { id: string; buckets: BucketColumns };
export type RangeColumns = Omit<ColumnsFormat, 'tracks'> & { tracks: TrackColumns[] };

export type NvtxNode = Node;
export type NvtxTreeResult = GenNvtxTreeResult;

export type KernelDetails = KernelDetailsResult;
export type KernelExplain = KernelExplainResult;

/** analysis/run's result for one analysis: rows typed by its branch of the schema. */
export type AnalysisRunResultOf<Row> = Omit<AnalysisRunResult, 'rows'> & { rows: Row[] };
/** A top_kernels row (generated from analysis/run's schema). */
export type TopKernelRow = TopKernelsRow;
export type TopKernelsResult = AnalysisRunResultOf<TopKernelRow>;

export type Finding = ReportGenerateResult['findings'][number];
export type ReportResult = ReportGenerateResult;

export type KernelsAtResult = SourceKernelsAtResult;
/** One kernel attributed to a source line (source/map, source/kernelsAt). */
export type LineKernel = KernelsAtResult['kernels'][number];
export type SourceMapResult = GenSourceMapResult;
export type LocateResult = SourceLocateResult;
/** One candidate location of a kernel (source/locate), with its evidence. */
export type LocateCandidate = LocateResult['candidates'][number];
/** Lines are 1-based. */
export type SourceMapFile = SourceMapResult['files'][number];
export type SourceMapLine = SourceMapFile['lines'][number];

export type AnnotateParams = SourceAnnotateParams;
export type AnnotateResult = SourceAnnotateResult;
export type UnannotateParams = SourceUnannotateParams;
export type UnannotateResult = SourceUnannotateResult;
export type TextEdit = AnnotateResult['edits'][number];
export type Position = TextEdit['range']['start'];

/** Progress payloads carried by $/progress (LSP work-done progress). */
export type WorkDoneProgress = ProgressParams['value'];
