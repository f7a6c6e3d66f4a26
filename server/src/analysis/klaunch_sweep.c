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
  uint32_t cap = 1024;
  v->k = nsys_xmalloc(cap * sizeof *v->k);
  nsys_opiter m;
  nsys_opiter_init(&m, c, v->device, INT64_MIN);
  for (int64_t op; (op = nsys_opiter_next(&m)) >= 0;) {
    if (nsys_actx_stop(c, (uint64_t)op)) break;
    if (ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    if (v->n == cap) v->k = nsys_xrealloc(v->k, (cap *= 2) * sizeof *v->k);
    v->k[v->n++] = (uint32_t)op;
  }
  nsys_opiter_free(&m);
  if (c->stopped) return false;
  v->exact = true;
  for (uint32_t j = 0; j < v->n && v->exact; j++) {
    uint32_t op = v->k[j];
    if (ix->ops.end[op] < ix->ops.start[op]) v->exact = false;
    if (j && ix->ops.start[op] == ix->ops.start[v->k[j - 1]] && ix->ops.track[op] != ix->ops.track[v->k[j - 1]])
      v->exact = false; /* the heap may yield them in either order */
  }
  if (!v->exact) return true;
  v->blk = nsys_xmalloc(((size_t)v->n / NSYS_KSWEEP_BLOCK + 1) * sizeof *v->blk);
  uint32_t scap = 0;
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

/* The heap walk's first op of track tr from a (devunions.c's nsys__track_lower:
 * the first op starting at >= a, or one of the 64 before it still running at a). */
static uint32_t nsys__track_from(const nsys_index *ix, const nsys_gpu_track *tr, int64_t a) {
  uint32_t lo = tr->first, hi = tr->first + tr->count;
  if (a == INT64_MIN) return lo;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (ix->ops.start[m] < a) lo = m + 1;
    else hi = m;
  }
  uint32_t l = lo;
  for (uint32_t back = lo, steps = 0; back > tr->first && steps < 64; steps++) {
    back--;
    if (ix->ops.end[back] > a) l = back;
  }
  return l;
}

static bool nsys__same(const nsys_lsweep *x, const nsys_lsweep *y) {
  return x->have_busy == y->have_busy && x->busy_end == y->busy_end && x->run_n == y->run_n &&
         (!x->run_n || (x->run_s == y->run_s && x->run_e == y->run_e));
}

void nsys_ksweep_run(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, nsys_lsweep *w,
                     void (*emit)(void *ud, const nsys_lrun *run), void *ud) {
  const nsys_index *ix = c->ix;
  memset(w, 0, sizeof *w);
  if (!v->n) return; /* b <= a too: the kernels running across a */
  uint32_t nb = v->n / NSYS_KSWEEP_BLOCK;
  /* p0: the first kernel whose end passes a with every earlier one's (the
   * running max, recorded per block) */
  uint32_t lo = 0, hi = nb;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (v->blk[m].busy_end > a) hi = m;
    else lo = m + 1;
  }
  uint32_t p0 = lo * NSYS_KSWEEP_BLOCK;
  while (p0 < v->n && ix->ops.end[v->k[p0]] <= a) p0++;
  uint32_t pa = nsys__lower(ix, v, a, false), pz = nsys__lower(ix, v, a, true), pb = nsys__lower(ix, v, b, false);
  /* the tracks' first ops the heap walk yields (kernels before them are not in its window) */
  uint32_t *from = NULL;
  if (p0 < pa) {
    from = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *from);
    for (uint32_t t = 0; t < ix->n_tracks; t++)
      from[t] = ix->tracks[t].device == v->device ? nsys__track_from(ix, &ix->tracks[t], a) : 0;
  }
  bool synced = false;
  nsys_lrun out[2];
  for (uint32_t j = p0; j < pb && !nsys_actx_stop(c, j); j++) {
    uint32_t op = v->k[j];
    if (ix->ops.end[op] <= a || (j < pa && op < from[ix->ops.track[op]])) continue;
    int nc = nsys__step(ix, w, op, out);
    for (int x = 0; x < nc; x++) emit(ud, &out[x]);
    if (synced || j + 1 < pz || j % NSYS_KSWEEP_BLOCK != NSYS_KSWEEP_BLOCK - 1) continue;
    const nsys_lsweep *at = &v->blk[j / NSYS_KSWEEP_BLOCK];
    if (!nsys__same(w, at)) continue;
    /* every later kernel is in the window and the states agree: jump to the
     * last whole block's end before pb */
    synced = true;
    uint32_t jb = pb / NSYS_KSWEEP_BLOCK;
    if (!jb || jb * NSYS_KSWEEP_BLOCK - 1 <= j) continue;
    uint32_t jj = jb * NSYS_KSWEEP_BLOCK - 1;
    const nsys_lsweep *to = &v->blk[jb - 1];
    uint32_t s0 = 0, s1 = v->n_storm; /* the storms closed at steps (j, jj] */
    while (s0 < s1) {
      uint32_t m = s0 + (s1 - s0) / 2;
      if (v->storm[m].at <= j) s0 = m + 1;
      else s1 = m;
    }
    for (; s0 < v->n_storm && v->storm[s0].at <= jj; s0++) emit(ud, &v->storm[s0].run);
    uint64_t exposed = w->exposed + (to->exposed - at->exposed);
    *w = *to;
    w->exposed = exposed;
    j = jj;
  }
  free(from);
}
