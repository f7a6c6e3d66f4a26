/* Compile-time check: what the server's schemas promise (generated types) is
 * assignable to what the client reads (hand-written types), and what the
 * client sends is assignable to the schemas' params. A schema change that
 * breaks the client fails `npm run typecheck`. Add a line per schema. */
import type * as P from './types';
import type { InitializeResult } from './generated/initialize.result';
import type { ProfileOpenResult } from './generated/profile.open.result';
import type { ProgressParams } from './generated/notify.progress.params';
import type { TimelineTracksResult } from './generated/timeline.tracks.result';
import type { TimelineRangeResult } from './generated/timeline.range.result';
import type { TimelineRangeParams } from './generated/timeline.range.params';
import type { NvtxTreeResult } from './generated/nvtx.tree.result';
import type { KernelExplainResult } from './generated/kernel.explain.result';
import type { AnalysisRunResult } from './generated/analysis.run.result';
import type { ReportGenerateResult } from './generated/report.generate.result';
import type { SourceMapResult } from './generated/source.map.result';
import type { SourceKernelsAtResult } from './generated/source.kernelsAt.result';
import type { SourceAnnotateParams } from './generated/source.annotate.params';
import type { SourceAnnotateResult } from './generated/source.annotate.result';
import type { SourceUnannotateResult } from './generated/source.unannotate.result';

type Assignable<From, To> = [From] extends [To] ? true : false;
/* The client never sends timeline/range `fields`, so every default column is
 * present (all but the compact bucket encodings, sent only when listed): the
 * columns answer with those keys required. */
type CompactColumns = 'indexStep' | 'busyPct';
type EveryColumn<T> = T extends { events: infer E } ? Omit<T, 'events'> & { events: Required<E> }
  : T extends { buckets: infer B } ? Omit<T, 'buckets'> & { buckets: Required<Omit<B, CompactColumns>> } : T;
type ColumnsAnswer<R> = R extends { tracks: (infer T)[] } ? Omit<R, 'tracks'> & { tracks: EveryColumn<T>[] } : R;
type TopKernelsResult = Extract<AnalysisRunResult, { name: 'top_kernels' }>;

export const schemaCompat: [
  Assignable<InitializeResult, P.InitializeResult>,
  Assignable<ProfileOpenResult, P.ProfileOpenResult>,
  Assignable<ProgressParams['value'], P.WorkDoneProgress>,
  Assignable<TimelineTracksResult, P.TimelineTracksResult>,
  Assignable<Exclude<TimelineRangeResult, { format: 'columns' }>, P.RangeResult>,
  Assignable<ColumnsAnswer<Extract<TimelineRangeResult, { format: 'columns' }>>, P.RangeColumns>,
  Assignable<P.RangeParams, TimelineRangeParams>,
  Assignable<NvtxTreeResult, P.NvtxTreeResult>,
  Assignable<KernelExplainResult, P.KernelExplain>,
  Assignable<TopKernelsResult, P.AnalysisResult>,
  Assignable<ReportGenerateResult, P.ReportResult>,
  Assignable<SourceMapResult, P.SourceMapResult>,
  Assignable<SourceKernelsAtResult, P.KernelsAtResult>,
  Assignable<P.AnnotateParams, SourceAnnotateParams>,
  Assignable<SourceAnnotateResult, P.AnnotateResult>,
  Assignable<SourceUnannotateResult, P.UnannotateResult>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
