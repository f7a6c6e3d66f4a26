/* The in-memory columnar index of a profile, built once by profile/open and
 * read concurrently (it is immutable once published in profile->index).
 * Architecture invariant: no cJSON here; methods/ converts.
 *
 * CONTRACT for other modules (analysis/, explain/, source/): the fields below
 * are stable. The index module may add fields, never change these.
 *
 * Layout: structure of arrays. GPU ops are grouped by track (device, stream)
 * and sorted by (start, end) inside each track; host API calls and NVTX ranges
 * are grouped by thread and sorted the same way. An op's index in `ops` is its
 * kernelId/opId: deterministic for a given file, so stable across reopenings.
 *
 * Companion headers (read-only queries over a built index, no cJSON):
 *   index/index_query.h  timeline tracks, zoom buckets/events, the NVTX
 *                        projection sweep (nvtx_gpu_proj_trace semantics)
 *   index/nvtx_tree.h    the nvtx/tree computation and nsys_nvtx_innermost()
 * Details of this build: tracks are keyed by (device, stream, process) and
 * sorted by (device, stream, pid); ops inside a track by (start, end, kind,
 * rowid); an op with end < start is stored with end = start; NVTX ranges are
 * closed push/pop and start/end ranges (eventType 59, 60, 70, 71) that end on
 * their own thread, sorted by (start asc, end desc, rowid) per thread. */
#ifndef NSYS_INDEX_H
#define NSYS_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/task.h"

struct nsys_profile;

typedef enum {
  NSYS_OP_KERNEL = 0,
  NSYS_OP_MEMCPY = 1,
  NSYS_OP_MEMSET = 2,
  NSYS_OP_GRAPH = 3,     /* a whole CUDA graph launch (graph-level tracing:
                            CUPTI_ACTIVITY_KIND_GRAPH_TRACE), its kernels not reported */
} nsys_op_kind;

typedef enum {
  NSYS_STREAM_COMPUTE = 0,
  NSYS_STREAM_COMM = 1,    /* NCCL (or other collective) kernels */
  NSYS_STREAM_COPY = 2,    /* memcpy/memset only */
  NSYS_STREAM_MIXED = 3,
} nsys_stream_class;

typedef struct nsys_gpu_track {
  int32_t device;        /* deviceId */
  int64_t stream;        /* streamId */
  uint32_t pid;          /* process owning the stream */
  uint32_t first, count; /* ops[first .. first+count) */
  uint8_t cls;           /* nsys_stream_class */
  int64_t busy_ns;       /* union of op intervals on this track */
} nsys_gpu_track;

typedef struct nsys_ops {
  uint32_t n;
  int64_t *start, *end;  /* GPU ns */
  uint32_t *name;        /* strtab: kernel shortName; "[CUDA memcpy HtoD]", "[CUDA memset]",
                            "[CUDA graph 4]" (graphId) */
  uint32_t *full_name;   /* strtab: kernel demangledName (== name for copies/sets) */
  uint32_t *track;       /* index into tracks[] */
  int32_t *api;          /* index into api[] of the launching call, -1 if unattributed */
  int64_t *rowid;        /* rowid in the source table (per kind) */
  uint8_t *kind;         /* nsys_op_kind */
} nsys_ops;

typedef struct nsys_host_thread {
  uint32_t pid, tid;
  uint32_t name;           /* strtab, "" when unknown */
  uint32_t api_first, api_count;   /* api[api_first ..) */
  uint32_t nvtx_first, nvtx_count; /* nvtx[nvtx_first ..) */
  uint16_t nvtx_max_depth;
} nsys_host_thread;

typedef struct nsys_api_calls {
  uint32_t n;
  int64_t *start, *end;    /* CPU ns */
  uint32_t *name;          /* strtab, version suffix stripped: "cudaLaunchKernel" */
  uint32_t *thread;        /* index into threads[] */
  int32_t *first_op;       /* first GPU op this call launched (ops of one call are
                              linked through op_next), -1 if none */
  int64_t *correlation;    /* correlationId */
  int64_t *rowid;
} nsys_api_calls;

typedef struct nsys_nvtx_ranges {
  uint32_t n;
  int64_t *start, *end;    /* CPU ns; end == start for marks is excluded: ranges only */
  uint32_t *name;          /* strtab */
  uint32_t *domain;        /* strtab, "" for the default domain */
  uint32_t *thread;        /* index into threads[] */
  uint16_t *depth;         /* 0 = outermost on its thread */
  int32_t *parent;         /* enclosing range, -1 at depth 0 */
} nsys_nvtx_ranges;

typedef struct nsys_index {
  nsys_strtab strings;     /* all names used below */
  nsys_gpu_track *tracks; uint32_t n_tracks;   /* sorted by (device, stream) */
  nsys_ops ops;
  int32_t *op_next;        /* next op of the same API call, -1 at the end */
  nsys_host_thread *threads; uint32_t n_threads; /* sorted by (pid, tid) */
  nsys_api_calls api;
  nsys_nvtx_ranges nvtx;
  int64_t span_start, span_end;  /* over everything indexed */
  void *priv;              /* index-internal data (mipmaps, mapping) */
  /* Display names, derived at every build and cache load (index_derive.c),
   * one per distinct kernel name, not per op: display[k] is the strtab id of
   * the simplified form (common/kname_display.h) of kernel name k
   * (ops.full_name, with ops.name as fallback). Ids >= n_display, and names
   * that are not kernel names, map to themselves. Use the accessors below. */
  uint32_t *display; uint32_t n_display;
} nsys_index;

/* Builds (or loads from the cache directory) the index of p. Reports progress
 * and polls cancellation through `task`. Returns NULL after nsys_task_fail(). */
nsys_index *nsys_index_build(struct nsys_profile *p, nsys_task *task);
void nsys_index_free(nsys_index *ix);
/* Whether ix was loaded from the cache directory (no SQL scan). */
bool nsys_index_from_cache(const nsys_index *ix);

/* Returns p->index, building and publishing it first if needed (thread-safe:
 * concurrent callers wait for one build). NULL after nsys_task_fail(). A
 * freshly built index is saved to the cache by a background thread after it
 * is published; the process waits for pending saves at exit. */
const nsys_index *nsys_index_get(struct nsys_profile *p, nsys_task *task);

/* Whether a cache save is queued or being written; waits until every queued
 * save is written (the CLI before exiting, tests, benches). */
bool nsys_index_saves_pending(void);
void nsys_index_wait_saves(void);

static inline int64_t nsys_op_dur(const nsys_index *ix, uint32_t i) {
  return ix->ops.end[i] - ix->ops.start[i];
}

/* strtab id of the display name of name id `full` (itself when it has none). */
static inline uint32_t nsys_display_name(const nsys_index *ix, uint32_t full) {
  return ix->display && full < ix->n_display ? ix->display[full] : full;
}

/* strtab id of op i's display name: "vectorized_elementwise_kernel<FillFunctor<float>>"
 * for a kernel, the name itself ("[CUDA memcpy HtoD]") for copies and sets. */
static inline uint32_t nsys_op_display_name(const nsys_index *ix, uint32_t i) {
  return nsys_display_name(ix, ix->ops.full_name[i]);
}

#endif
