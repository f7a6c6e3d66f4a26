/* The windowed search's per-name instance index: for each searchable source
 * (GPU ops, NVTX ranges, CUDA API calls) the instances grouped by name
 * (ops: by search kind, short name and demangled name), each group in
 * (start, id) order, with a max-end tree over blocks of that order, so that
 * "a group's instances overlapping [ws, we]" (start < we and end >= ws, the
 * raw ends, as search compares them) is a binary search for start < we and a
 * descent of the tree that visits only blocks holding an instance ending at or
 * after ws: O(log n + k) for k matches when they are dense, O((k + 1) log n) at
 * worst, whatever the durations (one huge instance among millions of tiny ones
 * costs one block). Built once per (profile, source), lazily, in O(n) after a
 * radix sort; kept with the profile (nsys_profile.search_memo) and freed with
 * it; cancellable while built (nothing half-built is kept); read-only once
 * built, so concurrent requests share it. methods/search_methods.c. */
#ifndef NSYS_SEARCH_INDEX_H
#define NSYS_SEARCH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/task.h"

struct nsys_index;
struct nsys_profile;

typedef enum { NSYS_SX_OPS = 0, NSYS_SX_NVTX = 1, NSYS_SX_API = 2, NSYS_SX_SOURCES = 3 } nsys_sx_source;

/* One name's instances: perm[first .. first + count) of its source. */
typedef struct {
  uint32_t name;    /* ops: short name; NVTX text; API name */
  uint32_t full;    /* ops: demangled name; otherwise NSYS_STR_NONE */
  uint8_t op_kind;  /* ops: the index's op kind (kernel, memcpy, memset); otherwise 0 */
  uint32_t first, count;
} nsys_sx_group;

typedef struct {
  const int64_t *start, *end; /* the index's arrays, by id */
  uint32_t *perm;             /* ids, by (group, start, id) */
  uint32_t n;
  nsys_sx_group *groups;
  uint32_t n_groups;
  int64_t *tree; /* max end per block of perm, as a heap: leaves at [leaves, 2 * leaves) */
  uint32_t leaves;
  size_t bytes; /* memory held: 4 to 6 bytes per instance (bench/README.md) */
} nsys_sx;

/* The source's index for p's published index ix, built if needed. NULL after
 * nsys_task_fail_cancelled (cancelled while building or waiting for another
 * request's build), or when ix is not p's published index (nothing then). */
const nsys_sx *nsys_sx_get(nsys_task *task, struct nsys_profile *p, const struct nsys_index *ix, nsys_sx_source src);

/* Calls emit(ctx, id) for each instance of group g with start < we and end >= ws, in (start, id)
 * order; stops early (returning false) when emit returns false. */
bool nsys_sx_window(const nsys_sx *s, uint32_t g, int64_t ws, int64_t we, bool (*emit)(void *ctx, uint32_t id),
                    void *ctx);

#endif
