/* A sort that can be cancelled: the first request on a large profile sorts
 * millions of records (per-name grouping, device unions), which must stop
 * within milliseconds of a $/cancelRequest. The one sort helper of long core
 * work (explain, the NVTX aggregate tree). Bottom-up merge sort: blocks of
 * 4096 records sorted with qsort, then merge passes that poll `cancelled`
 * every 65,536 records. Stable. O(n log n) time, n records of extra memory. */
#ifndef NSYS_COMMON_CSORT_H
#define NSYS_COMMON_CSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sorts base[0..n) of `size`-byte records by cmp. Returns false (the order
 * of base is then unspecified) when cancelled(ctx) answered true. cancelled
 * may be NULL. */
bool nsys_csort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *), bool (*cancelled)(void *),
                void *ctx);

/* Puts the m-th smallest of a[0..n) (m < n) at a[m], smaller or equal values
 * before it and greater or equal ones after (introselect: quickselect with a
 * median-of-three pivot and a three-way partition, so runs of equal values
 * cost one pass; after 2·log2(n) narrowing rounds the rest is sorted with
 * nsys_csort). O(n) expected, O(n log n) at worst. Polls cancelled(ctx) every
 * 65,536 elements visited; false when it answered true (a is then a
 * permutation of its values, a[m] unspecified). */
bool nsys_cselect_i64(int64_t *a, size_t n, size_t m, bool (*cancelled)(void *), void *ctx);

#endif
