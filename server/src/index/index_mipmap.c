/* Multi-resolution summary of one series of intervals sorted by start.
 *
 * Per block of NSYS__BLOCK items: the union length and the max end of all
 * items before the block, and the longest item of the block; per super block
 * (NSYS__BLOCK blocks) the longest item. That is about 0.7 bytes per item and
 * answers, for any bucket grid:
 *   U(t)    = |union of items ∩ (-inf, t]|   in O(log n + BLOCK)
 *   longest = argmax dur over items [i, j)  in O(BLOCK * 3 + (j-i)/BLOCK^2)
 * so a zoom query costs O(buckets * (log n + BLOCK)), independent of how many
 * items each bucket summarises. busyNs of a bucket [a, b) is U(b) - U(a). */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_internal.h"
#include "index/index_query.h"

static inline uint32_t nsys__row(const nsys__series *s, uint32_t i) {
  return s->idx ? s->idx[i] : s->first + i;
}
static inline int64_t nsys__st(const nsys__series *s, uint32_t i) { return s->start[nsys__row(s, i)]; }
static inline int64_t nsys__en(const nsys__series *s, uint32_t i) { return s->end[nsys__row(s, i)]; }

void nsys__series_init(nsys__series *s, const int64_t *start, const int64_t *end,
                       const uint32_t *idx, uint32_t first, uint32_t n) {
  memset(s, 0, sizeof *s);
  s->start = start;
  s->end = end;
  s->idx = idx;
  s->first = first;
  s->n = n;
  s->n_blocks = (n + NSYS__BLOCK - 1) / NSYS__BLOCK;
  s->blk_union = nsys_xmalloc(((size_t)s->n_blocks + 1) * sizeof(int64_t));
  s->blk_maxend = nsys_xmalloc(((size_t)s->n_blocks + 1) * sizeof(int64_t));
  s->blk_longest = nsys_xmalloc(((size_t)s->n_blocks + 1) * sizeof(uint32_t));
  int64_t P = 0, M = INT64_MIN;
  for (uint32_t b = 0; b < s->n_blocks; b++) {
    s->blk_union[b] = P;
    s->blk_maxend[b] = M;
    uint32_t lo = b * NSYS__BLOCK, hi = NSYS_MIN(n, lo + NSYS__BLOCK);
    uint32_t best = lo;
    int64_t best_d = -1;
    for (uint32_t i = lo; i < hi; i++) {
      uint32_t r = nsys__row(s, i);
      int64_t st = start[r], en = end[r];
      if (en - st > best_d) {
        best_d = en - st;
        best = i;
      }
      if (M == INT64_MIN || st > M) {
        P += en - st;
        M = en;
      } else if (en > M) {
        P += en - M;
        M = en;
      }
    }
    s->blk_longest[b] = best;
  }
  s->blk_union[s->n_blocks] = P;
  s->blk_maxend[s->n_blocks] = M;
  s->n_super = (s->n_blocks + NSYS__BLOCK - 1) / NSYS__BLOCK;
  s->sup_longest = nsys_xmalloc(((size_t)s->n_super + 1) * sizeof(uint32_t));
  for (uint32_t g = 0; g < s->n_super; g++) {
    uint32_t lo = g * NSYS__BLOCK, hi = NSYS_MIN(s->n_blocks, lo + NSYS__BLOCK);
    uint32_t best = s->blk_longest[lo];
    int64_t best_d = nsys__en(s, best) - nsys__st(s, best);
    for (uint32_t b = lo + 1; b < hi; b++) {
      uint32_t c = s->blk_longest[b];
      int64_t d = nsys__en(s, c) - nsys__st(s, c);
      if (d > best_d) {
        best_d = d;
        best = c;
      }
    }
    s->sup_longest[g] = best;
  }
}

void nsys__series_free(nsys__series *s) {
  free(s->blk_union);
  free(s->blk_maxend);
  free(s->blk_longest);
  free(s->sup_longest);
  memset(s, 0, sizeof *s);
}

uint32_t nsys__series_lower(const nsys__series *s, int64_t t) {
  uint32_t lo = 0, hi = s->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (nsys__st(s, mid) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* First item >= from with start >= t, galloping from `from`. */
static uint32_t nsys__gallop(const nsys__series *s, uint32_t from, int64_t t) {
  if (from >= s->n || nsys__st(s, from) >= t) return from;
  uint32_t step = 1, lo = from, hi = from + 1;
  while (hi < s->n && nsys__st(s, hi) < t) {
    lo = hi;
    step *= 2;
    hi = (s->n - hi > step) ? hi + step : s->n;
  }
  /* start(lo) < t, answer in (lo, hi] */
  uint32_t a = lo + 1, b = hi;
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (nsys__st(s, mid) < t) a = mid + 1;
    else b = mid;
  }
  return a;
}

/* Union length P and max end M of items [0, m). */
static void nsys__prefix(const nsys__series *s, uint32_t m, int64_t *P_out, int64_t *M_out) {
  uint32_t b = m / NSYS__BLOCK;
  if (b > s->n_blocks) b = s->n_blocks;
  int64_t P = s->blk_union[b], M = s->blk_maxend[b];
  for (uint32_t i = b * NSYS__BLOCK; i < m; i++) {
    uint32_t r = nsys__row(s, i);
    int64_t st = s->start[r], en = s->end[r];
    if (M == INT64_MIN || st > M) {
      P += en - st;
      M = en;
    } else if (en > M) {
      P += en - M;
      M = en;
    }
  }
  *P_out = P;
  *M_out = M;
}

/* U(t) given P, M of the items that start before t. */
static inline int64_t nsys__U(int64_t P, int64_t M, int64_t t) {
  return M != INT64_MIN && M > t ? P - (M - t) : P;
}

static void nsys__consider(const nsys__series *s, uint32_t c, uint32_t *best, int64_t *best_d) {
  int64_t d = nsys__en(s, c) - nsys__st(s, c);
  if (d > *best_d) {
    *best_d = d;
    *best = c;
  }
}

/* Longest item in [i, j), j > i. */
static uint32_t nsys__longest(const nsys__series *s, uint32_t i, uint32_t j, int64_t *dur) {
  uint32_t best = i;
  int64_t best_d = -1;
  uint32_t bi = (i + NSYS__BLOCK - 1) / NSYS__BLOCK, bj = j / NSYS__BLOCK; /* full blocks [bi, bj) */
  if (bi >= bj) {
    for (uint32_t k = i; k < j; k++) nsys__consider(s, k, &best, &best_d);
  } else {
    for (uint32_t k = i; k < bi * NSYS__BLOCK; k++) nsys__consider(s, k, &best, &best_d);
    uint32_t gi = (bi + NSYS__BLOCK - 1) / NSYS__BLOCK, gj = bj / NSYS__BLOCK;
    if (gi >= gj) {
      for (uint32_t b = bi; b < bj; b++) nsys__consider(s, s->blk_longest[b], &best, &best_d);
    } else {
      for (uint32_t b = bi; b < gi * NSYS__BLOCK; b++) nsys__consider(s, s->blk_longest[b], &best, &best_d);
      for (uint32_t g = gi; g < gj; g++) nsys__consider(s, s->sup_longest[g], &best, &best_d);
      for (uint32_t b = gj * NSYS__BLOCK; b < bj; b++) nsys__consider(s, s->blk_longest[b], &best, &best_d);
    }
    for (uint32_t k = bj * NSYS__BLOCK; k < j; k++) nsys__consider(s, k, &best, &best_d);
  }
  *dur = best_d;
  return best;
}

static inline int64_t nsys__floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

uint32_t nsys__series_buckets(const nsys__series *s, int64_t base, int64_t res, uint32_t nb,
                              nsys_tl_bucket_fn fn, void *ctx) {
  int64_t gend = base + res * (int64_t)nb;
  uint32_t i = nsys__series_lower(s, base);
  uint32_t hi = nsys__series_lower(s, gend);
  int64_t P, M;
  nsys__prefix(s, i, &P, &M);
  uint32_t emitted = 0;
  int64_t k_next = 0; /* first bucket not yet emitted */
  for (;;) {
    /* bucket of the next item that starts in the grid, nb when none */
    int64_t k_item = i < hi ? nsys__floor_div(nsys__st(s, i) - base, res) : (int64_t)nb;
    /* buckets before it are only covered by items that started earlier */
    while (k_next < k_item && M != INT64_MIN && M > base + k_next * res) {
      int64_t bs = base + k_next * res, be = bs + res;
      nsys_tl_bucket bk = {bs, be, 0, nsys__U(P, M, be) - nsys__U(P, M, bs), UINT32_MAX, 0};
      fn(ctx, &bk);
      emitted++;
      k_next++;
    }
    if (i >= hi) break;
    int64_t bs = base + k_item * res, be = bs + res;
    uint32_t j = nsys__gallop(s, i, be);
    int64_t u0 = nsys__U(P, M, bs);
    nsys__prefix(s, j, &P, &M);
    int64_t u1 = nsys__U(P, M, be);
    int64_t ld;
    uint32_t li = nsys__longest(s, i, j, &ld);
    nsys_tl_bucket bk = {bs, be, j - i, u1 - u0, nsys__row(s, li), ld};
    fn(ctx, &bk);
    emitted++;
    k_next = k_item + 1;
    i = j;
  }
  return emitted;
}

uint32_t nsys__series_events(const nsys__series *s, int64_t qs, int64_t qe, nsys_tl_event_fn fn,
                             void *ctx) {
  uint32_t lo = nsys__series_lower(s, qs), hi = nsys__series_lower(s, qe);
  uint32_t emitted = 0;
  /* items that start before qs and reach into the window */
  uint32_t k = lo;
  while (k > 0) {
    uint32_t b = k / NSYS__BLOCK;
    if (k % NSYS__BLOCK == 0 && s->blk_maxend[b] < qs) break;
    k--;
    if (nsys__en(s, k) >= qs) {
      fn(ctx, nsys__row(s, k));
      emitted++;
    }
  }
  for (uint32_t i = lo; i < hi; i++) {
    fn(ctx, nsys__row(s, i));
    emitted++;
  }
  return emitted;
}

uint32_t nsys__series_count(const nsys__series *s, int64_t qs, int64_t qe) {
  return nsys__series_lower(s, qe) - nsys__series_lower(s, qs);
}
