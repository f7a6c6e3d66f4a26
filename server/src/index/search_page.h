/* A page of search's instances from the per-name instance index (index/search_index.h)
 * without visiting the window's matches: the matching groups' instances overlapping
 * [ws, we) are, per group, those that started before ws and still run at it (the
 * "spanning" ones, found by the index's max-end tree) followed by one range of its start
 * order (those starting in [ws, we)). The page [offset, offset + len) in
 * nsys_instance_cmp order (start, kind, id) is found by counting: the rank of a time
 * (`at`) is a binary search per group, a deep offset a selection by key across the
 * groups' ranges (a bisection on (start, kind, id), each probe a binary search per group
 * within bounds that narrow as it goes), and the page a k-way merge from there.
 * O(G log n + len log G) for G groups, plus O((s + 1) log n) when the page reaches into the
 * s spanning instances (each group's first offset + len of them at most).
 * methods/search_methods.c. */
#ifndef NSYS_SEARCH_PAGE_H
#define NSYS_SEARCH_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/task.h"
#include "index/instance_page.h"
#include "index/search_index.h"

/* One matching group and what of it overlaps the window. */
typedef struct {
  const nsys_sx *s;
  uint32_t g;
  uint8_t kind;      /* nsys_inst_kind of its instances */
  uint32_t spanning; /* overlapping instances that start before ws (end >= ws) */
  uint32_t lo, hi;   /* positions in g's start order of those starting in [ws, we) */
} nsys_sx_run;

/* The run of group g of s whose `count` instances overlap [ws, we) (nsys_sx_overlapping). */
nsys_sx_run nsys_sx_run_of(const nsys_sx *s, uint32_t g, uint8_t kind, int64_t ws, int64_t we, uint32_t count);

typedef struct {
  nsys_instance *items; /* the page, in nsys_instance_cmp order (malloc'd; NULL when empty) */
  size_t n;
  size_t offset; /* the rank of items[0]: `offset`, or with `at` the rank of the first match starting at or after it */
} nsys_sx_page_out;

/* The page of len matches from rank offset (or, when has_at, from the first starting at or
 * after at) of the runs' instances overlapping a window starting at ws. False when cancelled
 * (out then holds nothing). */
bool nsys_sx_page(nsys_task *task, const nsys_sx_run *runs, size_t n_runs, int64_t ws, bool has_at, int64_t at,
                  size_t offset, size_t len, nsys_sx_page_out *out);

#endif
