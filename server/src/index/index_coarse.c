/* Coarse zoom levels (Perfetto-style mipmaps, built on first use): for a
 * power-of-two resolution whose grid over the whole track has at most
 * NSYS__COARSE_MAX buckets, the track's non-empty buckets are computed once
 * and kept; a zoomed-out request then copies a slice instead of summarising.
 * Bucket edges are multiples of the resolution, so a cached level answers any
 * window at that resolution exactly as the direct computation would. Total
 * cached buckets are capped; beyond the cap requests are computed directly. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_internal.h"

#define NSYS__COARSE_MAX 16384
#define NSYS__COARSE_CAP ((long long)2 * 1024 * 1024) /* buckets in all levels */

typedef struct nsys__coarse {
  uint32_t n;
  nsys_tl_bucket *b; /* sorted by start */
} nsys__coarse;

static nsys__coarse nsys__none; /* marks "not cacheable" */

void nsys__coarse_init(nsys_index *ix) {
  nsys__index_priv *pv = nsys__priv(ix);
  pthread_mutex_init(&pv->coarse_mu, NULL);
  pv->coarse = nsys_xcalloc((size_t)pv->n_tl * 64 + 1, sizeof *pv->coarse);
  atomic_store(&pv->coarse_buckets, 0);
}

void nsys__coarse_free(nsys_index *ix) {
  nsys__index_priv *pv = nsys__priv(ix);
  if (!pv || !pv->coarse) return;
  for (size_t i = 0; i < (size_t)pv->n_tl * 64; i++) {
    nsys__coarse *c = atomic_load(&pv->coarse[i]);
    if (c && c != &nsys__none) {
      free(c->b);
      free(c);
    }
  }
  free(pv->coarse);
  pv->coarse = NULL;
  pthread_mutex_destroy(&pv->coarse_mu);
}

void nsys_tl_bucket_collect(void *ctx, const nsys_tl_bucket *bk) {
  nsys_tl_bucket_vec *c = ctx;
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 256;
    c->b = nsys_xrealloc(c->b, c->cap * sizeof *c->b);
  }
  c->b[c->n++] = *bk;
}

static int64_t nsys__fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool nsys__coarse_buckets(const nsys_index *ix, uint32_t track, const nsys__series *s, int64_t base,
                          int64_t res, uint32_t nb, nsys_tl_bucket_fn fn, void *ctx, uint32_t *emitted) {
  nsys__index_priv *pv = nsys__priv(ix);
  if (!pv->coarse || res < 1024 || (res & (res - 1)) != 0 || s->n == 0) return false;
  int k = __builtin_ctzll((unsigned long long)res);
  _Atomic(nsys__coarse *) *slot = &pv->coarse[(size_t)track * 64 + (size_t)k];
  nsys__coarse *c = atomic_load_explicit(slot, memory_order_acquire);
  if (c == &nsys__none) return false;
  if (!c) {
    uint32_t first = s->idx ? s->idx[0] : s->first;
    int64_t lo = nsys__fdiv(s->start[first], res) * res;
    int64_t max_end = s->blk_maxend[s->n_blocks];
    int64_t hi = nsys__fdiv(max_end + res, res) * res;
    int64_t nb_full = (hi - lo) / res;
    pthread_mutex_lock(&pv->coarse_mu);
    c = atomic_load_explicit(slot, memory_order_acquire);
    if (!c) {
      if (nb_full > NSYS__COARSE_MAX || atomic_load(&pv->coarse_buckets) + nb_full > NSYS__COARSE_CAP) {
        c = &nsys__none;
      } else {
        nsys_tl_bucket_vec col = {NULL, 0, 0};
        nsys__series_buckets(s, lo, res, (uint32_t)nb_full, nsys_tl_bucket_collect, &col);
        c = nsys_xmalloc(sizeof *c);
        c->n = col.n;
        c->b = col.b;
        atomic_fetch_add(&pv->coarse_buckets, (long long)col.n);
      }
      atomic_store_explicit(slot, c, memory_order_release);
    }
    pthread_mutex_unlock(&pv->coarse_mu);
    if (c == &nsys__none) return false;
  }
  /* first cached bucket at or after base */
  uint32_t a = 0, b = c->n;
  while (a < b) {
    uint32_t mid = a + (b - a) / 2;
    if (c->b[mid].start < base) a = mid + 1;
    else b = mid;
  }
  int64_t gend = base + res * (int64_t)nb;
  uint32_t n = 0;
  for (uint32_t i = a; i < c->n && c->b[i].start < gend; i++, n++) fn(ctx, &c->b[i]);
  *emitted = n;
  return true;
}
