/* nsys_sort_i64 (analysis/sort_i64.c) against qsort on adversarial inputs:
 * every length around the insertion/radix threshold and the digit widths
 * (8 to 11 bits: n from 64 to 300000),
 * all equal, sorted, reverse, organ pipe, few distinct values, one outlier,
 * narrow and full-width random keys, negatives, INT64_MIN and INT64_MAX
 * together (a range of 2^64 - 1: every digit), values differing only in
 * their top or bottom bit, ranges of 2^32 - 1 and 2^32 (4- and 8-byte
 * offsets). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "../common/nsys_check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) { /* xorshift64*: deterministic */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static int cmp_ref(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

typedef enum {
  GEN_EQUAL, GEN_SORTED, GEN_REVERSE, GEN_PIPE, GEN_FEW, GEN_OUTLIER, GEN_NARROW, GEN_WIDE,
  GEN_NEG, GEN_EXTREMES, GEN_TOPBIT, GEN_LOWBIT, GEN_R32, GEN_R33, GEN_COUNT
} gen_kind;
static const char *gen_name[GEN_COUNT] = {"equal",  "sorted", "reverse", "pipe",   "few",    "outlier",
                                          "narrow", "wide",   "neg",     "extremes", "topbit", "lowbit",
                                          "range2^32-1", "range2^32"};

static int64_t gen(gen_kind g, size_t i, size_t n) {
  switch (g) {
  case GEN_EQUAL: return 1234567;
  case GEN_SORTED: return (int64_t)i * 3;
  case GEN_REVERSE: return (int64_t)(n - i) * 7 - 50;
  case GEN_PIPE: return (int64_t)(i < n / 2 ? i : n - i);
  case GEN_FEW: return (int64_t)(rnd() % 3) * 1000003;
  case GEN_OUTLIER: return i == n / 3 ? INT64_MAX : 42;
  case GEN_NARROW: return 1000000 + (int64_t)(rnd() % 5000);
  case GEN_WIDE: return (int64_t)rnd();
  case GEN_NEG: return -(int64_t)(rnd() % 1000000000);
  case GEN_EXTREMES: {
    uint64_t r = rnd() % 4;
    return r == 0 ? INT64_MIN : r == 1 ? INT64_MAX : r == 2 ? 0 : (int64_t)rnd();
  }
  case GEN_TOPBIT: return (rnd() & 1) ? INT64_MIN : 0; /* differ in bit 63 of the offset only */
  case GEN_LOWBIT: return (int64_t)(0x4000000000000000ULL | (rnd() & 1));
  /* the widest range of 4-byte offsets, and the narrowest of 8-byte ones */
  case GEN_R32: return -7 + (int64_t)(i == 1 ? 0xFFFFFFFFULL : i == 2 ? 0 : rnd() % 0x100000000ULL);
  case GEN_R33: return -7 + (int64_t)(i == 1 ? 0x100000000ULL : i == 2 ? 0 : rnd() % 0x100000000ULL);
  default: return 0;
  }
}

int main(void) {
  static const size_t lens[] = {0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 65, 255, 256, 257,
                                2047, 2048, 2049, 4096, 4097, 70001, 300000};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    size_t n = lens[li];
    int64_t *v = malloc((n + 1) * sizeof *v), *ref = malloc((n + 1) * sizeof *ref);
    for (int g = 0; g < GEN_COUNT; g++) {
      for (size_t i = 0; i < n; i++) v[i] = gen((gen_kind)g, i, n);
      if (n) memcpy(ref, v, n * sizeof *v);
      if (n > 1) qsort(ref, n, sizeof *ref, cmp_ref);
      nsys_sort_i64(v, n);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (v[i] != ref[i]) bad = i;
      CHECK_MSG(bad == n, "%s, n=%zu: differs from qsort at %zu", gen_name[g], n, bad);
    }
    free(v);
    free(ref);
  }
  /* the percentiles read from the sorted array: n = 1, 2, even, odd */
  int64_t one[] = {5};
  CHECK(nsys_percentile_sorted(one, 1, 0.5) == 5.0);
  int64_t two[] = {9, 1};
  nsys_sort_i64(two, 2);
  CHECK(nsys_percentile_sorted(two, 2, 0.5) == 5.0);
  int64_t odd[] = {7, 3, 5};
  nsys_sort_i64(odd, 3);
  CHECK(nsys_percentile_sorted(odd, 3, 0.5) == 5.0);
  return nsys_check_done("sort");
}
