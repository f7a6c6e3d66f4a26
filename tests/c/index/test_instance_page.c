/* index/instance_page: every page equals the same slice of a full sort, for
 * shapes that break naive quickselects (sorted, reversed, one start for all,
 * organ pipe, few distinct starts, random), every offset class (0, inside,
 * the end, past the end), and the rank of a time is the count before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/util.h"
#include "index/instance_page.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int cmp(const void *a, const void *b) { return nsys_instance_cmp(a, b); }

static void make(nsys_instance *v, size_t n, int shape) {
  for (size_t i = 0; i < n; i++) {
    int64_t s;
    switch (shape) {
    case 0: s = (int64_t)i * 10; break;                              /* sorted */
    case 1: s = (int64_t)(n - i) * 10; break;                        /* reversed */
    case 2: s = 42; break;                                           /* one start: order by kind, id */
    case 3: s = (int64_t)(i < n / 2 ? i : n - i); break;             /* organ pipe */
    case 4: s = (int64_t)(rnd() % 3) - 1; break;                     /* few distinct, negative */
    default: s = (int64_t)(rnd() % 1000000) + INT64_C(1700000000000000000); break; /* epoch clock */
    }
    v[i] = (nsys_instance){s, (uint32_t)(i / 2), (uint8_t)(i & 1)};
  }
}

int main(void) {
  const size_t sizes[] = {0, 1, 2, 17, 100, 5000, 60000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    size_t n = sizes[si];
    nsys_instance *ref = nsys_xmalloc((n + 1) * sizeof *ref), *v = nsys_xmalloc((n + 1) * sizeof *v);
    for (int shape = 0; shape < 6; shape++) {
      make(ref, n, shape);
      /* the rank of a time: instances starting before it */
      int64_t at = n ? ref[n / 3].start : 0;
      size_t want = 0;
      for (size_t i = 0; i < n; i++) want += ref[i].start < at;
      CHECK(nsys_instance_rank(ref, n, at) == want);
      qsort(ref, n, sizeof *ref, cmp);
      const size_t offs[] = {0, 1, n / 2, n ? n - 1 : 0, n, n + 5};
      const size_t lens[] = {1, 3, 1000};
      for (size_t oi = 0; oi < 6; oi++)
        for (size_t li = 0; li < 3; li++) {
          size_t off = offs[oi], len = lens[li];
          make(v, n, shape == 4 || shape == 5 ? 0 : shape); /* same multiset as ref for deterministic shapes */
          if (shape == 4 || shape == 5) { /* random shapes: shuffle the sorted reference */
            memcpy(v, ref, n * sizeof *v);
            for (size_t i = n; i > 1; i--) {
              size_t j = rnd() % i;
              nsys_instance t = v[i - 1];
              v[i - 1] = v[j];
              v[j] = t;
            }
          }
          nsys_instance_page(v, n, off, len);
          for (size_t k = off; k < n && k < off + len; k++)
            CHECK(nsys_instance_cmp(&v[k], &ref[k]) == 0);
        }
    }
    free(ref);
    free(v);
  }
  printf("instance_page: ok\n");
  return nsys_check_failures ? 1 : 0;
}
