/* The NVTX tree of nvtx/tree: CPU nesting of NVTX ranges with their GPU
 * projection (nvtx_gpu_proj_trace semantics: an op belongs to every range
 * on the launching thread whose [start, end] contains the launching API
 * call; counts are inclusive), summed kernel time and top kernels. With
 * `aggregate`, siblings with the same (name, domain) are merged recursively
 * (and roots across threads), which is what a flame graph needs. */
#ifndef NSYS_NVTX_TREE_H
#define NSYS_NVTX_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "index/index.h"

struct nsys_call;

typedef struct nsys_kernel_stat {
  uint32_t name; /* strtab id (kernel short name) */
  uint32_t count;
  int64_t ns;
} nsys_kernel_stat;

typedef struct nsys_nvtx_node {
  uint32_t range;               /* NVTX id (of the first instance when aggregated) */
  uint32_t name, domain;        /* strtab ids */
  uint32_t thread;              /* index into ix->threads (first instance) */
  uint16_t depth;
  int64_t start, end;           /* CPU time (min start / max end when aggregated) */
  int64_t gpu_start, gpu_end;   /* INT64_MAX / INT64_MIN when no GPU op */
  uint64_t op_count;            /* inclusive */
  int64_t kernel_ns;            /* inclusive, kernels only */
  uint32_t instances;           /* 1, or merged ranges when aggregated */
  int64_t cpu_ns;               /* sum of end - start over instances */
  nsys_kernel_stat *kernels;    /* inclusive, sorted by ns desc */
  uint32_t n_kernels;
  uint32_t *children;           /* node indices */
  uint32_t n_children;
} nsys_nvtx_node;

typedef struct nsys_nvtx_tree {
  nsys_nvtx_node *nodes;
  uint32_t n_nodes;
  uint32_t *roots;
  uint32_t n_roots;
  uint32_t n_ranges_considered;
} nsys_nvtx_tree;

typedef struct nsys_nvtx_tree_opts {
  bool has_window;
  int64_t start, end;           /* keep ranges overlapping [start, end] */
  bool has_device;
  int32_t device;               /* only ops on this GPU; ranges without any are dropped */
  bool has_thread;
  uint32_t thread_tid;          /* keep ranges of threads with this tid ... */
  bool has_thread_pid;
  uint32_t thread_pid;          /* ... and this pid */
  int max_depth;                /* -1: unlimited */
  bool aggregate;
} nsys_nvtx_tree_opts;

/* NULL after nsys_call_fail (cancelled). */
nsys_nvtx_tree *nsys_nvtx_tree_build(const nsys_index *ix, const nsys_nvtx_tree_opts *o,
                                     struct nsys_call *call);
void nsys_nvtx_tree_free(nsys_nvtx_tree *t);

/* Innermost NVTX range on the API call's thread that contains the call, or -1. */
int32_t nsys_nvtx_innermost(const nsys_index *ix, uint32_t api);

#endif
