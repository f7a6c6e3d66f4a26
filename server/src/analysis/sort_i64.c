/* nsys_sort_i64: ascending sort of int64 values (durations, timestamps).
 *
 * Short arrays: insertion sort. Longer ones: LSD radix sort of the offsets
 * from the minimum (v - min, unsigned: order-preserving for any int64, the
 * extremes included), only as many digits as the range max - min needs, of
 * equal width, at most log2(n) - 1 bits (8 to 11: the counters stay small
 * next to the array, and a scatter pass writes to at most 2048 places at
 * once: wider digits thrash the cache and TLB at 10M values), so that
 * durations of one kernel name (a range under 2^22 ns) take two scatter
 * passes; every digit's histogram counted in one
 * read, a digit that is the same in every value skipped. O(n) time for a
 * fixed key width (at most 8 scatter passes), n + digits * 2^width words of
 * scratch. */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "common/util.h"

#define NSYS__SORT_SMALL 64

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
  unsigned wmax = 63u - (unsigned)__builtin_clzll((uint64_t)n) - 1u; /* floor(log2 n) - 1 */
  wmax = wmax < 8 ? 8 : wmax > 11 ? 11 : wmax;
  unsigned digits = (bits + wmax - 1) / wmax, width = (bits + digits - 1) / digits;
  size_t buckets = (size_t)1 << width;
  uint64_t mask = (uint64_t)buckets - 1;
  size_t *cnt = nsys_xcalloc(digits * buckets, sizeof *cnt);
  uint64_t *a = (uint64_t *)v; /* the same storage, as offsets from lo */
  if (digits == 1) { /* the usual cases, unrolled */
    for (size_t i = 0; i < n; i++) {
      uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
      a[i] = k;
      cnt[k]++;
    }
  } else if (digits == 2) {
    size_t *c1 = cnt + buckets;
    for (size_t i = 0; i < n; i++) {
      uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
      a[i] = k;
      cnt[k & mask]++;
      c1[k >> width]++;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
      a[i] = k;
      for (unsigned d = 0; d < digits; d++) cnt[d * buckets + ((k >> (d * width)) & mask)]++;
    }
  }
  uint64_t *tmp = nsys_xmalloc(n * sizeof *tmp), *src = a, *dst = tmp;
  for (unsigned d = 0; d < digits; d++) {
    size_t *c = cnt + d * buckets;
    unsigned shift = d * width;
    if (c[(src[0] >> shift) & mask] == n) continue; /* one value of this digit */
    size_t sum = 0;
    for (size_t b = 0; b < buckets; b++) {
      size_t x = c[b];
      c[b] = sum;
      sum += x;
    }
    for (size_t i = 0; i < n; i++) {
      uint64_t k = src[i];
      dst[c[(k >> shift) & mask]++] = k;
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
