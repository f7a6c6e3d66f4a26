/* The NVTX tree of nvtx/tree, served a level at a time: the CPU nesting of
 * NVTX ranges with their GPU projection (nvtx_gpu_proj_trace semantics: an
 * op belongs to every range on the launching thread whose [start, end]
 * contains the launching API call; counts are inclusive).
 *
 * A tree is precomputed once per (index, filter) and cached on the index
 * (nsys_nvtx_tree_get): per-range inclusive counts, child lists in start
 * order and, for the aggregate tree, one node per distinct name path
 * (siblings with the same (op name, domain) merged recursively, roots across
 * threads too) with its instances sorted by duration. After that, listing k
 * nodes of any level costs O(log n + k) (siblings are sorted by start and,
 * by construction of the parents, by end too), and a node's top kernels
 * O(API calls and ops under it).
 *
 * Node ids: in a ranges tree, the NVTX range id (index into ix->nvtx), the
 * same for every filter; in an aggregate tree, a path id, stable for the
 * same open profile and filter (paths are numbered by first appearance).
 *
 * PyTorch autograd names ("aten::mm, seq = 12, op_id = 34") aggregate by
 * their op name ("aten::mm"): nsys_nvtx_autograd(). */
#ifndef NSYS_NVTX_TREE_H
#define NSYS_NVTX_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/index.h"


typedef struct nsys_kernel_stat {
  uint32_t name; /* strtab id (kernel short name) */
  uint32_t count;
  int64_t ns;
} nsys_kernel_stat;

typedef struct nsys_nvtx_filter {
  int32_t device;              /* -1: every GPU; else only ops on this GPU, and
                                  ranges without any are left out */
  bool has_tid, has_pid;       /* ranges of threads with this tid (and pid) */
  uint32_t tid, pid;
  bool has_window;             /* ranges overlapping [start, end] */
  int64_t start, end;
} nsys_nvtx_filter;

typedef struct nsys_nvtx_tree nsys_nvtx_tree; /* opaque, shared, read-only */

/* The tree of `f` (ranges, or aggregate), built on first use and cached on
 * the index (a few per index, least recently used first out). Release it with
 * nsys_nvtx_tree_release. NULL after nsys_task_fail (cancelled). */
nsys_nvtx_tree *nsys_nvtx_tree_get(const nsys_index *ix, const nsys_nvtx_filter *f, bool aggregate,
                                   nsys_task *task);
void nsys_nvtx_tree_release(nsys_nvtx_tree *t);

/* Whether `id` is a node of t (present under t's filter). */
bool nsys_nvtx_tree_has(const nsys_nvtx_tree *t, uint32_t id);
/* The nodes of one level, in start order (aggregate: first appearance):
 * the roots when parent < 0, else the children of node `parent`; under a
 * window only those overlapping it. Writes up to `limit` ids from position
 * `pos` of that list to out and returns how many; *total is the list's
 * length. O(threads + log n + limit). */
uint32_t nsys_nvtx_tree_level(const nsys_nvtx_tree *t, int64_t parent, uint32_t pos, uint32_t limit,
                              uint32_t *out, uint32_t *total);
/* Number of nodes nsys_nvtx_tree_level(t, id, ...) lists. O(log n). */
uint32_t nsys_nvtx_tree_child_count(const nsys_nvtx_tree *t, uint32_t id);
/* NVTX ranges the tree covers (after the filter). */
uint32_t nsys_nvtx_tree_range_count(const nsys_nvtx_tree *t);
bool nsys_nvtx_tree_aggregated(const nsys_nvtx_tree *t);

typedef struct nsys_nvtx_node {
  uint32_t id;
  const nsys_strtab *name_tab;  /* where `name` lives: the index's strings, or
                                   the aggregate tree's own op names */
  uint32_t name, domain;        /* domain: in the index's strings */
  uint16_t depth;
  uint32_t thread;              /* ranges: index into ix->threads */
  int64_t start, end;           /* CPU; aggregate: min start, max end */
  int64_t gpu_start, gpu_end;   /* INT64_MAX / INT64_MIN when no GPU op */
  uint64_t op_count;            /* inclusive */
  int64_t kernel_ns;            /* inclusive, kernels only */
  /* aggregate only */
  uint32_t instances;
  int64_t cpu_ns, min_ns, median_ns, max_ns; /* of the instances' durations
                                                (median: the lower middle) */
} nsys_nvtx_node;

void nsys_nvtx_tree_node(const nsys_nvtx_tree *t, uint32_t id, nsys_nvtx_node *out);

/* The k kernels with the most time under node `id` (inclusive; of every
 * instance when aggregated), by ns descending then name id. Writes up to k
 * to out; returns how many. */
uint32_t nsys_nvtx_tree_top_kernels(const nsys_nvtx_tree *t, uint32_t id, uint32_t k,
                                    nsys_kernel_stat *out);

/* PyTorch autograd NVTX names: "OP, seq = N, op_id = M[, ...]" (either field
 * alone too). True when `s` is one; *op_len is the length of OP, *seq and
 * *op_id the numbers (-1 when absent). */
bool nsys_nvtx_autograd(const char *s, size_t n, size_t *op_len, int64_t *seq, int64_t *op_id);

/* Innermost NVTX range on the API call's thread that contains the call, or -1. */
int32_t nsys_nvtx_innermost(const nsys_index *ix, uint32_t api);

/* Frees the trees cached on an index (nsys_index_free). */
void nsys__nvtx_trees_free(nsys_index *ix);

#endif
