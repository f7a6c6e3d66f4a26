/* Multi-resolution summary of one series of intervals sorted by start.
 *
 * Per block of NSYS__BLOCK items: the union length and the max end of all
 * items before the block, and the longest item of the block; per super block
 * (NSYS__BLOCK blocks) the longest item. That is about 1.3 bytes per item and
 * answers, for any bucket grid:
 *   U(t)    = |union of items ∩ (-inf, t]|   from the block table + a scan of
 *             at most BLOCK - 1 items
 *   longest = argmax dur over items [i, j)  in O(BLOCK * 3 + (j-i)/BLOCK^2)
 * busyNs of a bucket [a, b) is U(b) - U(a). A zoom query walks each track's
 * buckets in one monotone pass (nsys__buckets_walk): the bucket edges are
 * found by galloping from the previous edge and each U is computed once, so
 * a query costs O(log n) + O(BLOCK + log(items per bucket)) per bucket,
 * independent of how many items each bucket summarises. */
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

/* Union length P and max end M of items [0, m). */
/* a + b modulo 2^64, as an int64 (two's complement, as GCC and Clang convert) */
static inline int64_t nsys__wrap_add(int64_t a, uint64_t b) { return (int64_t)((uint64_t)a + b); }
static inline int64_t nsys__wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

static void nsys__prefix(const nsys__series *s, uint32_t m, int64_t *P_out, int64_t *M_out) {
  uint32_t b = m / NSYS__BLOCK;
  if (b > s->n_blocks) b = s->n_blocks;
  int64_t P = s->blk_union[b], M = s->blk_maxend[b];
  for (uint32_t i = b * NSYS__BLOCK; i < m; i++) {
    uint32_t r = nsys__row(s, i);
    int64_t st = s->start[r], en = s->end[r];
    if (M == INT64_MIN || st > M) {
      P = nsys__wrap_add(P, (uint64_t)en - (uint64_t)st);
      M = en;
    } else if (en > M) {
      P = nsys__wrap_add(P, (uint64_t)en - (uint64_t)M);
      M = en;
    }
  }
  *P_out = P;
  *M_out = M;
}

/* U(t) given P, M of the items that start before t. */
static inline int64_t nsys__U(int64_t P, int64_t M, int64_t t) {
  return M != INT64_MIN && M > t ? nsys__wrap_sub(P, nsys__wrap_sub(M, t)) : P;
}

static inline int64_t nsys__floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The bucket walk, specialised by the compiler for contiguous series
 * (idx == NULL, the GPU tracks: start/end read directly) and indexed ones.
 * One monotone pass per track: each bucket's first item is where the
 * previous bucket's gallop stopped, and the union prefix (P, M) carried from
 * one bucket to the next is both the previous bucket's U(end) and this one's
 * U(start). Per non-empty bucket [bs, be) with items [i, j):
 *   - j by galloping from i (O(log(j - i)) reads);
 *   - when [i, j) lies inside one block: one scan of [i, j) updates P, M and
 *     finds the longest item;
 *   - otherwise the head [i, next block) is scanned for the longest only, the
 *     whole blocks between give their longest through blk/sup maxima, P and M
 *     restart from the block table at j's block, and one scan of the tail
 *     [j's block, j) updates P, M and the longest together.
 * The longest is the first item of maximal duration in index order, as the
 * per-block and per-super-block maxima are, so results match a plain scan. */
#define NSYS__ST(k) (idx ? S[idx[k]] : S[k])
#define NSYS__EN(k) (idx ? E[idx[k]] : E[k])
/* P is a running union length: in a valid index it never exceeds the span
 * (< 2^62), but its arithmetic is done modulo 2^64 (defined for any input),
 * so that a cache file whose series repeat or overlap items (rejected where
 * the loader can see it, not always) gives wrong buckets, never UB. */
#define NSYS__ACC(st, en)                                 \
  do {                                                    \
    if (M == INT64_MIN || (st) > M) {                     \
      P = nsys__wrap_add(P, (uint64_t)(en) - (uint64_t)(st)); \
      M = (en);                                           \
    } else if ((en) > M) {                                \
      P = nsys__wrap_add(P, (uint64_t)(en) - (uint64_t)M); \
      M = (en);                                           \
    }                                                     \
  } while (0)

static inline __attribute__((always_inline)) uint32_t
nsys__buckets_walk(const nsys__series *s, const uint32_t *idx, int64_t base, int64_t res, uint32_t nb,
                   nsys_tl_bucket_fn fn, void *ctx) {
  const int64_t *S = idx ? s->start : s->start + s->first;
  const int64_t *E = idx ? s->end : s->end + s->first;
  const uint32_t row0 = idx ? 0 : s->first;
  const uint32_t n = s->n;
  int64_t gend = base + res * (int64_t)nb;
  uint32_t i = nsys__series_lower(s, base);
  uint32_t hi = nsys__series_lower(s, gend);
  int64_t P, M;
  nsys__prefix(s, i, &P, &M);
  uint32_t emitted = 0;
  int64_t k_next = 0; /* first bucket not yet emitted */
  for (;;) {
    /* bucket of the next item that starts in the grid, nb when none */
    int64_t k_item = (int64_t)nb;
    if (i < hi) {
      int64_t off = NSYS__ST(i) - base;
      int64_t next_s = k_next * res; /* offset of bucket k_next; off >= it after the first bucket */
      k_item = off >= next_s && off - next_s < res ? k_next : nsys__floor_div(off, res);
    }
    /* buckets before it are only covered by items that started earlier */
    while (k_next < k_item && M != INT64_MIN && M > base + k_next * res) {
      int64_t bs = base + k_next * res, be = bs + res;
      nsys_tl_bucket bk = {bs, be, 0, nsys__wrap_sub(nsys__U(P, M, be), nsys__U(P, M, bs)), UINT32_MAX, 0};
      fn(ctx, &bk);
      emitted++;
      k_next++;
    }
    if (i >= hi) break;
    int64_t bs = base + k_item * res, be = bs + res;
    /* j: first item with start >= be, galloping from i (start(i) < be) */
    uint32_t j;
    {
      uint32_t step = 1, lo = i, up = i + 1;
      while (up < n && NSYS__ST(up) < be) {
        lo = up;
        step *= 2;
        up = (n - up > step) ? up + step : n;
      }
      uint32_t a = lo + 1, b = up;
      while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (NSYS__ST(mid) < be) a = mid + 1;
        else b = mid;
      }
      j = a;
    }
    int64_t u0 = nsys__U(P, M, bs);
    uint32_t best = i;
    int64_t best_d = -1;
    uint32_t tail = (j / NSYS__BLOCK) * NSYS__BLOCK;
    if (tail > i) {
      uint32_t bi = (i + NSYS__BLOCK - 1) / NSYS__BLOCK, bj = j / NSYS__BLOCK; /* whole blocks [bi, bj) */
      for (uint32_t k = i; k < bi * NSYS__BLOCK; k++) {
        int64_t d = NSYS__EN(k) - NSYS__ST(k);
        if (d > best_d) {
          best_d = d;
          best = k;
        }
      }
#define NSYS__BLK(c)                                \
  do {                                              \
    uint32_t c_ = (c);                              \
    int64_t d_ = NSYS__EN(c_) - NSYS__ST(c_);       \
    if (d_ > best_d) {                              \
      best_d = d_;                                  \
      best = c_;                                    \
    }                                               \
  } while (0)
      uint32_t gi = (bi + NSYS__BLOCK - 1) / NSYS__BLOCK, gj = bj / NSYS__BLOCK;
      if (gi >= gj) {
        for (uint32_t b = bi; b < bj; b++) NSYS__BLK(s->blk_longest[b]);
      } else {
        for (uint32_t b = bi; b < gi * NSYS__BLOCK; b++) NSYS__BLK(s->blk_longest[b]);
        for (uint32_t g = gi; g < gj; g++) NSYS__BLK(s->sup_longest[g]);
        for (uint32_t b = gj * NSYS__BLOCK; b < bj; b++) NSYS__BLK(s->blk_longest[b]);
      }
#undef NSYS__BLK
      P = s->blk_union[bj];
      M = s->blk_maxend[bj];
    } else {
      tail = i;
    }
    for (uint32_t k = tail; k < j; k++) {
      int64_t st = NSYS__ST(k), en = NSYS__EN(k);
      if (en - st > best_d) {
        best_d = en - st;
        best = k;
      }
      NSYS__ACC(st, en);
    }
    int64_t u1 = nsys__U(P, M, be);
    nsys_tl_bucket bk = {bs, be, j - i, nsys__wrap_sub(u1, u0), idx ? idx[best] : row0 + best, best_d};
    fn(ctx, &bk);
    emitted++;
    k_next = k_item + 1;
    i = j;
  }
  return emitted;
}
#undef NSYS__ST
#undef NSYS__EN
#undef NSYS__ACC

uint32_t nsys__series_buckets(const nsys__series *s, int64_t base, int64_t res, uint32_t nb,
                              nsys_tl_bucket_fn fn, void *ctx) {
  if (s->idx) return nsys__buckets_walk(s, s->idx, base, res, nb, fn, ctx);
  return nsys__buckets_walk(s, NULL, base, res, nb, fn, ctx);
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
