/* Pages of timeline instances (GPU ops, NVTX ranges, CUDA API calls) in time order, without
 * sorting them all: search's `instances` (methods/search_methods.c) picks the
 * page [offset, offset + len) of its matches in O(n) expected time, O(n log n)
 * at worst, and the page's own sort. No cJSON here. */
#ifndef NSYS_INSTANCE_PAGE_H
#define NSYS_INSTANCE_PAGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { NSYS_INST_OP = 0, NSYS_INST_NVTX = 1, NSYS_INST_API = 2 } nsys_inst_kind;

/* One instance: a GPU op (id = kernelId), an NVTX range or a CUDA API call (id = its index);
 * 16 bytes (its end is read from the index when a page is written). */
typedef struct nsys_instance {
  int64_t start;
  uint32_t id;
  uint8_t kind; /* nsys_inst_kind */
} nsys_instance;

/* The total order of instances: start, then kind (ops, NVTX ranges, API calls), then id. */
int nsys_instance_cmp(const nsys_instance *a, const nsys_instance *b);

/* How many of v[0..n) start before `at` (the rank of the first starting at or after it). */
size_t nsys_instance_rank(const nsys_instance *v, size_t n, int64_t at);

/* Reorders v[0..n) so that v[off .. off + len) holds, sorted, the instances
 * of ranks off .. off + len - 1 in nsys_instance_cmp order (len is cut at
 * n - off). Introselect: quickselect on medians of three, falling back to a
 * full sort past 2 log2(n) rounds, so no input costs more than O(n log n). */
void nsys_instance_page(nsys_instance *v, size_t n, size_t off, size_t len);

#endif
