/* The search's per-name instance index: for each searchable source (GPU ops,
 * NVTX ranges, CUDA API calls) the instances grouped by name (ops: by search
 * kind, short name and demangled name), each group in (start, id) order and
 * again in (end, id) order, with prefix sums of durations over both orders
 * (sampled every 16 positions) and a max-end tree over blocks of the start
 * order. "A group's instances overlapping [ws, we]" (start < we and
 * end >= ws, the raw ends, as search compares them) then counts and sums in
 * O(log n): #(start < we) - #(end < ws), since every instance ends at or
 * after its start (the index clamps GPU and API ends, drops inverted NVTX
 * ranges; the build checks it). Enumerating them is by position in the
 * start order (those starting in [ws, we) are one range), plus, for those
 * that started before ws and still run at it, a descent of the tree that
 * visits only blocks holding an instance ending at or after ws (one huge
 * instance among millions of tiny ones costs one block). Built once per
 * (profile, source), lazily (a radix sort by start; each group's end
 * order from its start order: O(n log n) at worst); kept with the
 * profile (nsys_profile.search_memo) and freed with it; cancellable while
 * built (nothing half-built is kept); read-only once built, so concurrent
 * requests share it. methods/search_methods.c, index/search_page.c. */
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
  uint32_t *perm_end;         /* ids, by (group, end, id) */
  uint64_t *dur_start;        /* [b]: sum of end - start over perm[0 .. 16 b) (mod 2^64) */
  uint64_t *dur_end;          /* the same over perm_end */
  uint32_t n;
  nsys_sx_group *groups;
  uint32_t n_groups;
  int64_t *tree; /* max end per block of perm, as a heap: leaves at [leaves, 2 * leaves) */
  uint32_t leaves;
  size_t bytes; /* memory held: 10 to 11 bytes per instance (bench/README.md) */
} nsys_sx;

/* The source's index for p's published index ix, built if needed. NULL after
 * nsys_task_fail_cancelled (cancelled while building or waiting for another
 * request's build), when ix is not p's published index, or when the index
 * holds an instance ending before it starts (nothing recorded then: search
 * scans instead). */
const nsys_sx *nsys_sx_get(nsys_task *task, struct nsys_profile *p, const struct nsys_index *ix, nsys_sx_source src);

/* The source's index if a request has built it already, else NULL (nothing is built or waited
 * for): unwindowed searches read it when it is there and scan otherwise. */
const nsys_sx *nsys_sx_peek(struct nsys_profile *p, const struct nsys_index *ix, nsys_sx_source src);

/* How many of group g's instances start before t: the position, in g's (start, id) order, of
 * the first starting at or after t. O(log n). */
uint32_t nsys_sx_starting_before(const nsys_sx *s, uint32_t g, int64_t t);

/* The id at position pos of g's (start, id) order. */
static inline uint32_t nsys_sx_at(const nsys_sx *s, uint32_t g, uint32_t pos) { return s->perm[s->groups[g].first + pos]; }

/* Group g's instances with start < we and end >= ws (ws < we): how many, and their total
 * end - start (exact as int64 when the sum fits; the partial sums wrap mod 2^64). O(log n). */
void nsys_sx_overlapping(const nsys_sx *s, uint32_t g, int64_t ws, int64_t we, uint32_t *count, int64_t *ns);

/* Calls emit(ctx, id) for each instance among the first `before` of group g's (start, id) order
 * whose end >= ws, in that order; stops early (returning false) when emit returns false. Visits
 * only the blocks holding such an instance: O((k + 1) log n) for k of them. */
bool nsys_sx_ending_from(const nsys_sx *s, uint32_t g, uint32_t before, int64_t ws,
                         bool (*emit)(void *ctx, uint32_t id), void *ctx);

#endif
