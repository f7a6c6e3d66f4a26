/* What nvtx_tree.c (ranges, levels, cache) and nvtx_aggregate.c (name paths)
 * share: the layout of a precomputed tree. Index-internal. */
#ifndef NSYS_NVTX_TREE_INTERNAL_H
#define NSYS_NVTX_TREE_INTERNAL_H

#include <stdatomic.h>

#include "index/nvtx_tree.h"

/* Per-range inclusive GPU projection under one device filter. */
typedef struct nsys__nvtx_stats {
  uint64_t *cnt;
  int64_t *kns, *gs, *ge;
} nsys__nvtx_stats;

/* A list of nodes in CSR form: children of node i are ids[off[i] .. off[i+1]). */
typedef struct nsys__csr {
  uint32_t *off, *ids;
} nsys__csr;

/* The shared, cached part of a tree. A ranges core depends only on the
 * device filter (threads and windows are applied per query); an aggregate
 * core on the whole filter. */
typedef struct nsys__nvtx_core {
  const nsys_index *ix;
  nsys_nvtx_filter f;           /* ranges core: only f.device is meaningful */
  bool aggregate;
  atomic_int refs;              /* users, plus one while cached */
  uint64_t last_used;           /* cache clock, under the cache's mutex */
  uint32_t n_ranges;            /* ranges kept by the filter */
  nsys__nvtx_stats st;          /* per range (ranges tree; NULL arrays in an aggregate tree) */
  bool *keep;                   /* per range: kept by the filter */
  nsys__csr kids;               /* ranges: per range; aggregate: per path */
  nsys__csr roots;              /* ranges: per thread (n_threads + 1 offsets); aggregate: one list */
  /* aggregate tree: paths */
  uint32_t n_paths;
  uint32_t *p_name;             /* in the index's strings, or in `names` when p_local */
  uint32_t *p_domain;
  uint16_t *p_depth;
  uint32_t *p_inst;             /* instances */
  int64_t *p_start, *p_end, *p_cpu, *p_min, *p_med, *p_max;
  uint64_t *p_cnt;
  int64_t *p_kns, *p_gs, *p_ge;
  bool *p_local;                /* p_name is in `names` (an op name made here) */
  nsys__csr inst;               /* per path: its ranges, the shortest first (lowest id among equals) */
  nsys_strtab names;            /* op names of autograd ranges not in the index */
} nsys__nvtx_core;

/* What nsys_nvtx_tree_get hands out: a core and the caller's filter. */
struct nsys_nvtx_tree {
  nsys__nvtx_core *c;
  nsys_nvtx_filter f;
};

/* Per-range stats for filter f (every range of a kept thread). NULL after
 * nsys_task_fail (cancelled). */
bool nsys__nvtx_stats_build(const nsys_index *ix, const nsys_nvtx_filter *f, nsys__nvtx_stats *st,
                            nsys_task *task);
void nsys__nvtx_stats_free(nsys__nvtx_stats *st);
/* Whether thread t passes the filter's thread test. */
bool nsys__nvtx_thread_ok(const nsys_index *ix, const nsys_nvtx_filter *f, uint32_t t);
/* keep[] for f given per-range stats (window, thread, device). Returns the count. */
uint32_t nsys__nvtx_keep(const nsys_index *ix, const nsys_nvtx_filter *f, const nsys__nvtx_stats *st,
                         bool *keep);
/* Builds the aggregate part of t (paths, their stats and lists) from t->keep
 * and per-range stats st. False after nsys_task_fail (cancelled). */
bool nsys__nvtx_aggregate_build(nsys__nvtx_core *t, const nsys__nvtx_stats *st, nsys_task *task);
void nsys__csr_free(nsys__csr *c);

#endif
