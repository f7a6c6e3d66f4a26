/* nsys_sort_i64: ascending sort of int64 values (durations, timestamps).
 *
 * Short arrays: insertion sort. Longer ones: LSD radix sort of the offsets
 * from the minimum (v - min, unsigned: order-preserving for any int64, the
 * extremes included), 11-bit digits (2048 counters per digit: L1-resident),
 * only as many digits as the range max - min needs (durations of one kernel
 * name usually span < 2^22 ns: two passes), every digit's histogram counted
 * in one read, a digit that is the same in every value skipped. O(n) time
 * for a fixed key width (at most 6 scatter passes), n + 2048 * digits words
 * of scratch. */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "common/util.h"

#define NSYS__SORT_SMALL 32
#define NSYS__SORT_BITS 11
#define NSYS__SORT_BUCKETS ((size_t)1 << NSYS__SORT_BITS)
#define NSYS__SORT_MASK ((uint64_t)NSYS__SORT_BUCKETS - 1)

static void nsys__insertion_i64(int64_t *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    int64_t x = v[i];
    size_t j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

void nsys_sort_i64(int64_t *v, size_t n) {
  if (n < NSYS__SORT_SMALL) {
    nsys__insertion_i64(v, n);
    return;
  }
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  uint64_t range = (uint64_t)hi - (uint64_t)lo;
  if (!range) return; /* all equal */
  unsigned bits = 64u - (unsigned)__builtin_clzll(range);
  unsigned digits = (bits + NSYS__SORT_BITS - 1) / NSYS__SORT_BITS;
  size_t *cnt = nsys_xcalloc(digits * NSYS__SORT_BUCKETS, sizeof *cnt);
  uint64_t *a = (uint64_t *)v; /* the same storage, as offsets from lo */
  for (size_t i = 0; i < n; i++) {
    uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
    a[i] = k;
    for (unsigned d = 0; d < digits; d++) cnt[d * NSYS__SORT_BUCKETS + ((k >> (d * NSYS__SORT_BITS)) & NSYS__SORT_MASK)]++;
  }
  uint64_t *tmp = nsys_xmalloc(n * sizeof *tmp), *src = a, *dst = tmp;
  for (unsigned d = 0; d < digits; d++) {
    size_t *c = cnt + d * NSYS__SORT_BUCKETS;
    unsigned shift = d * NSYS__SORT_BITS;
    if (c[(src[0] >> shift) & NSYS__SORT_MASK] == n) continue; /* one value of this digit */
    size_t sum = 0;
    for (size_t b = 0; b < NSYS__SORT_BUCKETS; b++) {
      size_t x = c[b];
      c[b] = sum;
      sum += x;
    }
    for (size_t i = 0; i < n; i++) {
      uint64_t k = src[i];
      dst[c[(k >> shift) & NSYS__SORT_MASK]++] = k;
    }
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  /* back to values (two's complement wrap: exact for every int64) */
  for (size_t i = 0; i < n; i++) a[i] = src[i] + (uint64_t)lo;
  free(tmp);
  free(cnt);
}
