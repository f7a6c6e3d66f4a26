/* See klaunch.h. */
#include "analysis/klaunch.h"

#include <stdlib.h>

#include "analysis/window.h"
#include "common/util.h"

bool nsys_klaunch_of(nsys_actx *c, uint32_t i, int64_t *api_ns, int64_t *queue_ns) {
  const nsys_index *ix = c->ix;
  int32_t a = ix->ops.api[i];
  if (a < 0 || nsys_actx_api_class(c, (uint32_t)a) != NSYS_API_LAUNCH) return false;
  *api_ns = ix->api.end[a] - ix->api.start[a];
  *queue_ns = NSYS_MAX(ix->ops.start[i] - ix->api.end[a], 0);
  return true;
}

/* Adds position x's kernel to s; returns its queue time (0 when not launched). */
static int64_t nsys__add(nsys_actx *c, const nsys_kname *kn, uint32_t x, nsys_klaunch_sums *s) {
  uint32_t i = kn->op[x];
  int64_t kd = nsys_op_dur(c->ix, i), ad, q;
  if (kd < NSYS_KLAUNCH_SMALL_NS) s->small++;
  if (!nsys_klaunch_of(c, i, &ad, &q)) return 0;
  s->launched++;
  s->kern += (uint64_t)kd;
  s->api += (uint64_t)ad;
  s->queue += (uint64_t)q;
  if (kd < ad) s->shorter++;
  return q;
}

static void *nsys__build(nsys_actx *c) {
  const nsys_kname *kn = nsys_actx_kname(c, false);
  if (!kn) return NULL;
  uint32_t n = kn->poff[kn->n_pairs];
  uint32_t nb = (n + NSYS_KLAUNCH_BLOCK - 1) / NSYS_KLAUNCH_BLOCK;
  nsys_klaunch *k = nsys_xcalloc(1, sizeof *k);
  k->kn = kn;
  k->pre = nsys_xcalloc((size_t)nb + 1, sizeof *k->pre);
  k->qblk = nsys_xcalloc((size_t)nb + 1, sizeof *k->qblk);
  nsys_klaunch_sums s = {0};
  for (uint32_t x = 0; x < n; x++) {
    if (nsys_actx_stop(c, x)) {
      nsys_klaunch_free(k);
      return NULL;
    }
    int64_t q = nsys__add(c, kn, x, &s);
    if (q > k->qblk[x / NSYS_KLAUNCH_BLOCK]) k->qblk[x / NSYS_KLAUNCH_BLOCK] = q;
    if ((x + 1) % NSYS_KLAUNCH_BLOCK == 0) k->pre[(x + 1) / NSYS_KLAUNCH_BLOCK] = s;
  }
  k->pre[nb] = s;
  return k;
}

const nsys_klaunch *nsys_actx_klaunch(nsys_actx *c) {
  if (!nsys_actx_winidx(c)) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->klaunch, &k->klaunch_building, nsys__build);
}

void nsys_klaunch_free(nsys_klaunch *k) {
  if (!k) return;
  free(k->pre);
  free(k->qblk);
  free(k);
}

/* Sums over positions [0, x). */
static nsys_klaunch_sums nsys__prefix(nsys_actx *c, const nsys_klaunch *k, uint32_t x) {
  nsys_klaunch_sums s = k->pre[x / NSYS_KLAUNCH_BLOCK];
  for (uint32_t y = x - x % NSYS_KLAUNCH_BLOCK; y < x; y++) nsys__add(c, k->kn, y, &s);
  return s;
}

nsys_klaunch_sums nsys_klaunch_range(nsys_actx *c, const nsys_klaunch *k, uint32_t lo, uint32_t hi) {
  nsys_klaunch_sums s = {0};
  if (hi <= lo) return s;
  if (hi - lo <= NSYS_KLAUNCH_BLOCK) { /* a short range: its kernels, not two prefixes */
    for (uint32_t x = lo; x < hi; x++) nsys__add(c, k->kn, x, &s);
    return s;
  }
  nsys_klaunch_sums a = nsys__prefix(c, k, lo), b = nsys__prefix(c, k, hi);
  s.launched = b.launched - a.launched;
  s.shorter = b.shorter - a.shorter;
  s.small = b.small - a.small;
  s.kern = b.kern - a.kern;
  s.api = b.api - a.api;
  s.queue = b.queue - a.queue;
  return s;
}

int64_t nsys_klaunch_qmax(nsys_actx *c, const nsys_klaunch *k, uint32_t lo, uint32_t hi) {
  int64_t m = 0, q;
  nsys_klaunch_sums scratch = {0};
  uint32_t x = lo;
  for (; x < hi && x % NSYS_KLAUNCH_BLOCK; x++)
    if ((q = nsys__add(c, k->kn, x, &scratch)) > m) m = q;
  for (; x + NSYS_KLAUNCH_BLOCK <= hi; x += NSYS_KLAUNCH_BLOCK)
    if (k->qblk[x / NSYS_KLAUNCH_BLOCK] > m) m = k->qblk[x / NSYS_KLAUNCH_BLOCK];
  for (; x < hi; x++)
    if ((q = nsys__add(c, k->kn, x, &scratch)) > m) m = q;
  return m;
}
