/* See klaunch.h. */
#include "analysis/klaunch.h"

#include <stdlib.h>

#include "analysis/window.h"
#include "common/util.h"

static void *nsys__build(nsys_actx *c) {
  const nsys_kname *kn = nsys_actx_kname(c, false);
  if (!kn) return NULL;
  const nsys_index *ix = c->ix;
  uint32_t n = kn->poff[kn->n_pairs];
  nsys_klaunch *k = nsys_xcalloc(1, sizeof *k);
  k->kn = kn;
  k->launched = nsys_xmalloc(((size_t)n + 1) * sizeof *k->launched);
  k->shorter = nsys_xmalloc(((size_t)n + 1) * sizeof *k->shorter);
  k->small = nsys_xmalloc(((size_t)n + 1) * sizeof *k->small);
  k->kern = nsys_xmalloc(((size_t)n + 1) * sizeof *k->kern);
  k->api = nsys_xmalloc(((size_t)n + 1) * sizeof *k->api);
  k->queue = nsys_xmalloc(((size_t)n + 1) * sizeof *k->queue);
  k->q = nsys_xmalloc(((size_t)n + 1) * sizeof *k->q);
  uint32_t nb = (n + NSYS_KLAUNCH_BLOCK - 1) / NSYS_KLAUNCH_BLOCK;
  k->qblk = nsys_xcalloc((size_t)nb + 1, sizeof *k->qblk);
  uint32_t la = 0, sh = 0, sm = 0;
  uint64_t ke = 0, ap = 0, qu = 0;
  for (uint32_t x = 0; x < n; x++) {
    if (nsys_actx_stop(c, x)) {
      nsys_klaunch_free(k);
      return NULL;
    }
    k->launched[x] = la;
    k->shorter[x] = sh;
    k->small[x] = sm;
    k->kern[x] = ke;
    k->api[x] = ap;
    k->queue[x] = qu;
    k->q[x] = 0;
    uint32_t i = kn->op[x];
    int64_t kd = nsys_op_dur(ix, i);
    if (kd < NSYS_KLAUNCH_SMALL_NS) sm++;
    int32_t a = ix->ops.api[i];
    if (a < 0 || nsys_actx_api_class(c, (uint32_t)a) != NSYS_API_LAUNCH) continue;
    int64_t ad = ix->api.end[a] - ix->api.start[a];
    int64_t q = ix->ops.start[i] - ix->api.end[a];
    if (q < 0) q = 0;
    la++;
    ke += (uint64_t)kd;
    ap += (uint64_t)ad;
    qu += (uint64_t)q;
    if (kd < ad) sh++;
    k->q[x] = q;
    if (q > k->qblk[x / NSYS_KLAUNCH_BLOCK]) k->qblk[x / NSYS_KLAUNCH_BLOCK] = q;
  }
  k->launched[n] = la;
  k->shorter[n] = sh;
  k->small[n] = sm;
  k->kern[n] = ke;
  k->api[n] = ap;
  k->queue[n] = qu;
  return k;
}

const nsys_klaunch *nsys_actx_klaunch(nsys_actx *c) {
  if (!nsys_actx_winidx(c)) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->klaunch, &k->klaunch_building, nsys__build);
}

void nsys_klaunch_free(nsys_klaunch *k) {
  if (!k) return;
  free(k->launched);
  free(k->shorter);
  free(k->small);
  free(k->kern);
  free(k->api);
  free(k->queue);
  free(k->q);
  free(k->qblk);
  free(k);
}

int64_t nsys_klaunch_qmax(const nsys_klaunch *k, uint32_t lo, uint32_t hi) {
  int64_t m = 0;
  uint32_t x = lo;
  for (; x < hi && x % NSYS_KLAUNCH_BLOCK; x++)
    if (k->q[x] > m) m = k->q[x];
  for (; x + NSYS_KLAUNCH_BLOCK <= hi; x += NSYS_KLAUNCH_BLOCK)
    if (k->qblk[x / NSYS_KLAUNCH_BLOCK] > m) m = k->qblk[x / NSYS_KLAUNCH_BLOCK];
  for (; x < hi; x++)
    if (k->q[x] > m) m = k->q[x];
  return m;
}
