/* nsys_csort and nsys_cselect_i64: order and stability against qsort, the
 * m-th value on shapes that break naive quickselect (sorted, reversed, all
 * equal, few values, organ pipe, median-of-three killer), and cancellation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nsys_check.h"
#include "common/csort.h"
#include "common/util.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  int64_t key;
  uint32_t pos;
} rec;

static int cmp_key(const void *a, const void *b) { return cmp_i64(&((const rec *)a)->key, &((const rec *)b)->key); }

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int calls;
static bool cancel_after(void *limit) { return ++calls > *(int *)limit; }

enum { RANDOM, SORTED, REVERSED, EQUAL, FEW, ORGAN, KILLER, N_SHAPES };

static void fill(int64_t *a, size_t n, int shape) {
  for (size_t i = 0; i < n; i++) {
    switch (shape) {
    case RANDOM: a[i] = (int64_t)(next() >> 1) - INT64_MAX / 2; break;
    case SORTED: a[i] = (int64_t)i; break;
    case REVERSED: a[i] = (int64_t)(n - i); break;
    case EQUAL: a[i] = 42; break;
    case FEW: a[i] = (int64_t)(next() % 3); break;
    case ORGAN: a[i] = (int64_t)(i < n / 2 ? i : n - i); break;
    default: a[i] = 0; break;
    }
  }
  if (shape == KILLER) { /* Musser's median-of-3 killer: each round keeps all but two */
    size_t k = n / 2;
    for (size_t i = 1; i <= k; i++) {
      if (i % 2) a[i - 1] = (int64_t)i, a[i] = (int64_t)(k + i);
      a[k + i - 1] = (int64_t)(2 * i);
    }
    for (size_t i = 0; i < n; i++) a[i] = a[i] ? a[i] : (int64_t)i;
  }
}

int main(void) {
  /* selection: every shape and size, several ranks, against a sorted copy */
  static const size_t sizes[] = {1, 2, 3, 16, 17, 100, 4097, 70000, 300001};
  for (int shape = 0; shape < N_SHAPES; shape++) {
    for (size_t si = 0; si < NSYS_ARRAY_LEN(sizes); si++) {
      size_t n = sizes[si];
      int64_t *a = nsys_xmalloc(n * sizeof *a), *ref = nsys_xmalloc(n * sizeof *a), *b = nsys_xmalloc(n * sizeof *a);
      fill(a, n, shape);
      memcpy(ref, a, n * sizeof *a);
      qsort(ref, n, sizeof *ref, cmp_i64);
      size_t ranks[] = {0, (n - 1) / 2, n - 1, n / 3};
      for (size_t r = 0; r < 4; r++) {
        memcpy(b, a, n * sizeof *a);
        size_t m = ranks[r];
        CHECK(nsys_cselect_i64(b, n, m, NULL, NULL));
        if (b[m] != ref[m]) CHECK_MSG(0, "shape %d n %zu m %zu: %lld, want %lld", shape, n, m, (long long)b[m],
                                      (long long)ref[m]);
        bool part = true;
        for (size_t i = 0; i < n; i++) part = part && (i < m ? b[i] <= b[m] : b[i] >= b[m]);
        CHECK_MSG(part, "shape %d n %zu m %zu: not partitioned", shape, n, m);
        qsort(b, n, sizeof *b, cmp_i64);
        CHECK_MSG(memcmp(b, ref, n * sizeof *b) == 0, "shape %d n %zu: values changed", shape, n);
      }
      free(a), free(ref), free(b);
    }
  }
  /* the sort: same order as qsort, equal keys in their input order */
  size_t n = 200003;
  rec *r = nsys_xmalloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (rec){(int64_t)(next() % 1000), (uint32_t)i};
  CHECK(nsys_csort(r, n, sizeof *r, cmp_key, NULL, NULL));
  bool stable = true;
  for (size_t i = 1; i < n; i++)
    stable = stable && (r[i - 1].key < r[i].key || (r[i - 1].key == r[i].key && r[i - 1].pos < r[i].pos));
  CHECK(stable);
  free(r);
  /* cancellation: both stop when asked, after a bounded amount of work */
  int64_t *a = nsys_xmalloc(n * sizeof *a);
  fill(a, n, RANDOM);
  int limit = 1;
  calls = 0;
  CHECK(!nsys_csort(a, n, sizeof *a, cmp_i64, cancel_after, &limit));
  CHECK(calls == limit + 1);
  calls = 0;
  fill(a, n, RANDOM);
  CHECK(!nsys_cselect_i64(a, n, n / 2, cancel_after, &limit));
  CHECK(calls == limit + 1);
  limit = 1 << 30;
  calls = 0;
  CHECK(nsys_cselect_i64(a, n, n / 2, cancel_after, &limit) && calls > 0);
  free(a);
  return nsys_check_done("test_csort");
}
