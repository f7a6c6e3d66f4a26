/* Per-kernel-name statistics over a profile's index, computed lazily once
 * and cached, so that a hover (kernel/explain) costs microseconds:
 *   - the first request groups all GPU ops by name id (a stable counting
 *     sort: O(n + names) once per index and grouping);
 *   - a group's duration order (radix, O(group)) is kept beside it (the
 *     group stays in op order for order-free passes) and its statistics
 *     computed when first asked for, and kept; the totals, counts and kinds
 *     of every group (nsys_kstats_top, nsys_kstats_brief_get) need no sort.
 * The cache is keyed by the index (immutable once published) and by the
 * profile's file identity, bounded to a few indexes (least recently used
 * evicted). No JSON here. */
#ifndef NSYS_KERNEL_STATS_H
#define NSYS_KERNEL_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "index/index.h"

struct nsys_profile;

#define NSYS_KSTATS_MAX_STREAMS 8
#define NSYS_KSTATS_MAX_NVTX 5

typedef enum { NSYS_KSTATS_BY_NAME = 0, NSYS_KSTATS_BY_FULL_NAME = 1 } nsys_kstats_key;

typedef struct nsys_kstats_nvtx {
  char path[512];          /* "train_step > forward > layer.3 > mlp" */
  uint32_t count;          /* sampled instances whose launch sits in this range */
} nsys_kstats_nvtx;

typedef struct nsys_kstats {
  uint32_t count;
  int64_t total_ns, min_ns, max_ns, median_ns, p95_ns;
  double avg_ns;
  uint8_t kind;            /* nsys_op_kind of the group (of its first op) */
  double pct_gpu_time;     /* total / summed duration of all GPU ops (percent) */
  double pct_kind_time;    /* total / summed duration of all ops of this kind (percent) */
  uint32_t rank;           /* 1 = largest total among the names of the same op kind */
  uint32_t n_groups;       /* how many names of that kind */
  uint32_t n_tracks;       /* distinct (device, stream) tracks */
  uint32_t tracks[NSYS_KSTATS_MAX_STREAMS]; /* first few, index into ix->tracks */
  uint32_t n_variants;     /* BY_NAME: distinct demangled names sharing the name */
  uint32_t longest_op;     /* op id of the longest instance */
  uint32_t median_op;      /* op id of the median-duration instance */
  uint32_t first_op;       /* lowest op id */
  uint32_t nvtx_sampled;   /* instances examined for NVTX placement */
  uint32_t nvtx_attributed;/* of which had an enclosing NVTX range */
  int n_nvtx;
  nsys_kstats_nvtx nvtx[NSYS_KSTATS_MAX_NVTX]; /* most frequent innermost paths */
} nsys_kstats;

/* Statistics of the ops whose name (or full name) id is `name_id`. Returns
 * false when no op has that name. Thread-safe. `cancelled` (may be NULL) is
 * polled while the grouping is built; then false is returned and
 * *was_cancelled set. */
bool nsys_kstats_get(const struct nsys_profile *p, const nsys_index *ix, nsys_kstats_key key,
                     uint32_t name_id, nsys_kstats *out, bool (*cancelled)(void *), void *cancel_ctx,
                     bool *was_cancelled);

/* What nsys_kstats_get says of a group without sorting it by duration:
 * count, total, kind and first op (the same values). O(1) once the grouping
 * is built. */
typedef struct nsys_kstats_brief {
  uint32_t count;
  int64_t total_ns;
  uint8_t kind;
  uint32_t first_op;
} nsys_kstats_brief;

bool nsys_kstats_brief_get(const struct nsys_profile *p, const nsys_index *ix, nsys_kstats_key key,
                           uint32_t name_id, nsys_kstats_brief *out, bool (*cancelled)(void *), void *cancel_ctx,
                           bool *was_cancelled);

/* NVTX path (outermost > ... > innermost) of the ranges enclosing op's
 * launching API call on its thread, or "" when none (or no launch known). */
void nsys_kstats_nvtx_path(const nsys_index *ix, uint32_t op, char *out, size_t cap);

/* Up to max name ids with the largest summed duration (of ops of `kind`,
 * or of any kind when kind < 0), largest first. Returns how many. */
uint32_t nsys_kstats_top(const struct nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, int kind,
                         uint32_t *ids, uint32_t max);

/* A copy of the op ids of the group (by duration), *n of them; NULL (n 0)
 * when no op has that name. Free it. */
uint32_t *nsys_kstats_ops(const struct nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                          uint32_t *n);

/* The same op ids in op order (ascending): what an order-free pass over a
 * name's instances reads (the detectors), with monotone, prefetchable
 * accesses to the index's columns instead of the duration order's random
 * ones. A copy of the group as the grouping keeps it (the duration order is
 * kept beside it), O(k); no sort. */
uint32_t *nsys_kstats_ops_by_id(const struct nsys_profile *p, const nsys_index *ix, nsys_kstats_key key,
                                uint32_t name_id, uint32_t *n);

/* Summed durations of all GPU ops, and of kernels only. */
void nsys_kstats_totals(const struct nsys_profile *p, const nsys_index *ix, int64_t *all_ns, int64_t *kernel_ns);

/* Drops every cached grouping (tests, memory pressure). */
void nsys_kstats_cache_clear(void);

#endif
