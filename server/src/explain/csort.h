/* A sort that can be cancelled: the first request on a large profile sorts
 * millions of records (per-name grouping, device unions), which must stop
 * within milliseconds of a $/cancelRequest. Bottom-up merge sort: blocks of
 * 4096 records sorted with qsort, then merge passes that poll `cancelled`
 * every 65,536 records. Stable. O(n log n) time, n records of extra memory. */
#ifndef NSYS_EXPLAIN_CSORT_H
#define NSYS_EXPLAIN_CSORT_H

#include <stdbool.h>
#include <stddef.h>

/* Sorts base[0..n) of `size`-byte records by cmp. Returns false (the order
 * of base is then unspecified) when cancelled(ctx) answered true. cancelled
 * may be NULL. */
bool nsys_csort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *), bool (*cancelled)(void *),
                void *ctx);

#endif
