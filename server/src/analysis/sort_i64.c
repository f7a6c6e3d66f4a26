/* nsys_sort_i64: ascending sort of int64 values (durations, timestamps).
 *
 * Short arrays: insertion sort. Longer ones: LSD radix sort of the offsets
 * from the minimum (v - min, unsigned: order-preserving for any int64, the
 * extremes included), only as many digits as the range max - min needs, of
 * equal width, at most log2(n) - 1 bits (8 to 11: the counters stay small
 * next to the array, and a scatter pass writes to at most 2048 places at
 * once: wider digits thrash the cache and TLB at 10M values), so that
 * durations of one kernel name (a range under 2^22 ns) take two scatter
 * passes; offsets under 2^32 as 4-byte keys; every digit's histogram
 * counted in one read, a digit that is the same in every value skipped. O(n)
 * time for a fixed key width (at most 8 scatter passes), 8n bytes plus
 * digits * 2^width counters of scratch. */
#include <stdbool.h>
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

/* Turns one digit's counters into the start of each bucket; false (no pass
 * needed) when every value has the digit of value `any`. */
static bool nsys__digit_starts(size_t *c, size_t buckets, size_t n, size_t any) {
  if (c[any] == n) return false;
  size_t sum = 0;
  for (size_t b = 0; b < buckets; b++) {
    size_t x = c[b];
    c[b] = sum;
    sum += x;
  }
  return true;
}

/* Offsets under 2^32 (durations of one name, almost always): 4-byte keys,
 * two 4-byte buffers: two thirds of the memory traffic of 8-byte keys. */
static void nsys__sort_offsets32(int64_t *v, size_t n, int64_t lo, unsigned digits, unsigned width, size_t *cnt) {
  size_t buckets = (size_t)1 << width;
  uint32_t mask = (uint32_t)buckets - 1;
  uint32_t *src = nsys_xmalloc(n * sizeof *src), *dst = nsys_xmalloc(n * sizeof *dst);
  if (digits == 1) { /* the usual cases, unrolled */
    for (size_t i = 0; i < n; i++) {
      uint32_t k = (uint32_t)((uint64_t)v[i] - (uint64_t)lo);
      src[i] = k;
      cnt[k]++;
    }
  } else if (digits == 2) {
    size_t *c1 = cnt + buckets;
    for (size_t i = 0; i < n; i++) {
      uint32_t k = (uint32_t)((uint64_t)v[i] - (uint64_t)lo);
      src[i] = k;
      cnt[k & mask]++;
      c1[k >> width]++;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint32_t k = (uint32_t)((uint64_t)v[i] - (uint64_t)lo);
      src[i] = k;
      for (unsigned d = 0; d < digits; d++) cnt[d * buckets + ((k >> (d * width)) & mask)]++;
    }
  }
  for (unsigned d = 0; d < digits; d++) {
    size_t *c = cnt + d * buckets;
    unsigned shift = d * width;
    if (!nsys__digit_starts(c, buckets, n, (src[0] >> shift) & mask)) continue;
    for (size_t i = 0; i < n; i++) {
      uint32_t k = src[i];
      dst[c[(k >> shift) & mask]++] = k;
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  for (size_t i = 0; i < n; i++) v[i] = (int64_t)((uint64_t)lo + src[i]);
  free(src);
  free(dst);
}

/* Any int64 range: 8-byte keys, sorted in place with one buffer. */
static void nsys__sort_offsets64(int64_t *v, size_t n, int64_t lo, unsigned digits, unsigned width, size_t *cnt) {
  size_t buckets = (size_t)1 << width;
  uint64_t mask = (uint64_t)buckets - 1;
  uint64_t *a = (uint64_t *)v; /* the same storage, as offsets from lo */
  for (size_t i = 0; i < n; i++) {
    uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
    a[i] = k;
    for (unsigned d = 0; d < digits; d++) cnt[d * buckets + ((k >> (d * width)) & mask)]++;
  }
  uint64_t *tmp = nsys_xmalloc(n * sizeof *tmp), *src = a, *dst = tmp;
  for (unsigned d = 0; d < digits; d++) {
    size_t *c = cnt + d * buckets;
    unsigned shift = d * width;
    if (!nsys__digit_starts(c, buckets, n, (src[0] >> shift) & mask)) continue;
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
  size_t *cnt = nsys_xcalloc((size_t)digits << width, sizeof *cnt);
  if (bits <= 32) nsys__sort_offsets32(v, n, lo, digits, width, cnt);
  else nsys__sort_offsets64(v, n, lo, digits, width, cnt);
  free(cnt);
}
