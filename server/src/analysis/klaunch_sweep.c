/* See klaunch_sweep.h. */
#include "analysis/klaunch_sweep.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/devunions.h"
#include "analysis/window.h"
#include "common/util.h"

static inline int nsys__step(const nsys_index *ix, nsys_lsweep *w, uint32_t op, nsys_lrun out[2]) {
  int32_t a = ix->ops.api[op];
  return nsys_lsweep_step(w, NSYS_KSWEEP_SMALL_NS, NSYS_KSWEEP_MAX_GAP_NS, ix->ops.start[op], ix->ops.end[op], a >= 0,
                          a >= 0 ? ix->api.start[a] : 0, a >= 0 ? ix->api.end[a] : 0, out);
}

static bool nsys__build_dev(nsys_actx *c, nsys_ksweep_dev *v) {
  const nsys_index *ix = c->ix;
  uint32_t cap = 1024, bcap = 0, scap = 0;
  v->k = nsys_xmalloc(cap * sizeof *v->k);
  nsys_opiter it; /* the merge's total order (recorded once when the cache is lent) */
  nsys_opiter_init(&it, c, v->device, INT64_MIN);
  for (int64_t op; (op = nsys_opiter_next(&it)) >= 0 && !nsys_actx_stop(c, (uint64_t)op);) {
    if (ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    if (v->n == cap) v->k = nsys_xrealloc(v->k, (cap *= 2) * sizeof *v->k);
    if (ix->ops.end[op] < ix->ops.start[op]) {
      if (v->n_back == bcap) v->back = nsys_xrealloc(v->back, (bcap = bcap ? 2 * bcap : 16) * sizeof *v->back);
      v->back[v->n_back++] = v->n;
    }
    v->k[v->n++] = (uint32_t)op;
  }
  nsys_opiter_free(&it);
  if (c->stopped) return false;
  v->blk = nsys_xmalloc(((size_t)v->n / NSYS_KSWEEP_BLOCK + 1) * sizeof *v->blk);
  nsys_lsweep w = {0};
  nsys_lrun out[2];
  for (uint32_t j = 0; j < v->n; j++) {
    int nc = nsys__step(ix, &w, v->k[j], out);
    for (int x = 0; x < nc; x++) {
      if (out[x].n < NSYS_KSWEEP_MIN_RUN) continue;
      if (v->n_storm == scap) v->storm = nsys_xrealloc(v->storm, (scap = scap ? 2 * scap : 64) * sizeof *v->storm);
      v->storm[v->n_storm++] = (nsys_kstorm){j, out[x]};
    }
    if (j % NSYS_KSWEEP_BLOCK == NSYS_KSWEEP_BLOCK - 1) v->blk[j / NSYS_KSWEEP_BLOCK] = w;
  }
  return true;
}

static void *nsys__build(nsys_actx *c) {
  int32_t *devs;
  nsys_ksweep *k = nsys_xcalloc(1, sizeof *k);
  k->n_dev = nsys_track_devices(c->ix, &devs);
  k->dev = nsys_xcalloc((size_t)k->n_dev + 1, sizeof *k->dev);
  for (uint32_t d = 0; d < k->n_dev; d++) k->dev[d].device = devs[d];
  free(devs);
  for (uint32_t d = 0; d < k->n_dev; d++)
    if (!nsys__build_dev(c, &k->dev[d])) {
      nsys_ksweep_free(k);
      return NULL;
    }
  return k;
}

const nsys_ksweep *nsys_actx_ksweep(nsys_actx *c) {
  if (!nsys_actx_winidx(c)) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->ksweep, &k->ksweep_building, nsys__build);
}

void nsys_ksweep_free(nsys_ksweep *k) {
  if (!k) return;
  for (uint32_t d = 0; d < k->n_dev; d++) {
    free(k->dev[d].k);
    free(k->dev[d].blk);
    free(k->dev[d].back);
    free(k->dev[d].storm);
  }
  free(k->dev);
  free(k);
}

const nsys_ksweep_dev *nsys_ksweep_find(const nsys_ksweep *k, int32_t device) {
  for (uint32_t d = 0; d < k->n_dev; d++)
    if (k->dev[d].device == device) return &k->dev[d];
  return NULL;
}

/* First position of v's kernels whose start is >= a (strict false) or > a (strict true). */
static uint32_t nsys__lower(const nsys_index *ix, const nsys_ksweep_dev *v, int64_t a, bool strict) {
  uint32_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    int64_t s = ix->ops.start[v->k[m]];
    if (s < a || (strict && s == a)) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/* First index of sorted positions p[0..n) that is >= x. */
static uint32_t nsys__first_at(const uint32_t *p, uint32_t n, uint32_t x) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (p[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

static bool nsys__same(const nsys_lsweep *x, const nsys_lsweep *y) {
  return x->have_busy == y->have_busy && x->busy_end == y->busy_end && x->run_n == y->run_n &&
         (!x->run_n || (x->run_s == y->run_s && x->run_e == y->run_e));
}

/* The whole sweep's state before position x (a block's start). */
static nsys_lsweep nsys__state_at(const nsys_ksweep_dev *v, uint32_t x) {
  return x ? v->blk[x / NSYS_KSWEEP_BLOCK - 1] : (nsys_lsweep){0};
}

/* The whole sweep's storms closed at steps [x, to), emitted in order. */
static void nsys__emit_storms(const nsys_ksweep_dev *v, uint32_t x, uint32_t to,
                              void (*emit)(void *ud, const nsys_lrun *run), void *ud) {
  uint32_t s0 = 0, s1 = v->n_storm;
  while (s0 < s1) {
    uint32_t mid = s0 + (s1 - s0) / 2;
    if (v->storm[mid].at < x) s0 = mid + 1;
    else s1 = mid;
  }
  for (; s0 < v->n_storm && v->storm[s0].at < to; s0++) emit(ud, &v->storm[s0].run);
}

void nsys_ksweep_run(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, nsys_lsweep *w,
                     void (*emit)(void *ud, const nsys_lrun *run), void *ud) {
  const nsys_index *ix = c->ix;
  memset(w, 0, sizeof *w);
  nsys_lrun out[2];
  uint32_t pz = nsys__lower(ix, v, a, true), pb = nsys__lower(ix, v, b, false);
  if (pz) { /* the kernels starting at or before a that run past it: the loop's own walk from a */
    nsys_opmerge m;
    nsys_opmerge_init(&m, ix, v->device, a);
    while (m.hn && ix->ops.start[m.cur[m.heap[0]]] <= a) {
      int64_t op = nsys_opmerge_next(&m);
      if (nsys_actx_stop(c, (uint64_t)op) || ix->ops.start[op] >= b) break;
      if (ix->ops.end[op] <= a || ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
      int nc = nsys__step(ix, w, (uint32_t)op, out);
      for (int y = 0; y < nc; y++) emit(ud, &out[y]);
    }
    nsys_opmerge_free(&m);
  }
  /* the kernels starting after a: the whole order's from pz (total: the walk's
   * own), stepped until the state equals the whole sweep's at a block's start */
  uint32_t q = nsys__first_at(v->back, v->n_back, pz); /* the kernels ending before they start from x on */
  for (uint32_t x = pz; x < pb && !nsys_actx_stop(c, x);) {
    if (x % NSYS_KSWEEP_BLOCK == 0 && x + NSYS_KSWEEP_BLOCK <= pb) {
      nsys_lsweep from = nsys__state_at(v, x);
      if (nsys__same(w, &from)) { /* every later step is the whole sweep's, up to a kernel the walk skips */
        while (q < v->n_back && v->back[q] < x) q++;
        uint32_t lim = pb;
        for (uint32_t i = q; i < v->n_back && v->back[i] < pb; i++)
          if (ix->ops.end[v->k[v->back[i]]] <= a) {
            lim = v->back[i];
            break;
          }
        uint32_t to = lim / NSYS_KSWEEP_BLOCK * NSYS_KSWEEP_BLOCK;
        if (to > x) {
          nsys__emit_storms(v, x, to, emit, ud);
          const nsys_lsweep *at = &v->blk[to / NSYS_KSWEEP_BLOCK - 1];
          uint64_t exposed = w->exposed + (at->exposed - from.exposed);
          *w = *at;
          w->exposed = exposed;
          x = to;
          continue;
        }
      }
    }
    uint32_t op = v->k[x++];
    if (ix->ops.end[op] <= a) continue; /* ends before it starts, at or before a: the walk skips it */
    int nc = nsys__step(ix, w, op, out);
    for (int y = 0; y < nc; y++) emit(ud, &out[y]);
  }
}
