/* The area selection's structures built ahead (see awarm.h). */
#include "analysis/awarm.h"

#include <stdlib.h>

#include "analysis/amemo.h"
#include "analysis/analyses.h"
#include "analysis/gap_phase.h"
#include "analysis/gap_streams.h"
#include "analysis/klaunch.h"
#include "analysis/klaunch_sweep.h"
#include "analysis/kname.h"
#include "analysis/window.h"
#include "common/util.h"

/* Keys by their kernels' total duration, largest first (ties: lower key first). */
static int nsys__by_total_desc(const void *a, const void *b, void *ctx) {
  const nsys_kname *k = ctx;
  uint32_t x = (uint32_t)*(const uint64_t *)a, y = (uint32_t)*(const uint64_t *)b;
  uint64_t tx = k->psum[k->poff[k->kfirst[x + 1]]] - k->psum[k->poff[k->kfirst[x]]];
  uint64_t ty = k->psum[k->poff[k->kfirst[y + 1]]] - k->psum[k->poff[k->kfirst[y]]];
  if (tx != ty) return tx > ty ? -1 : 1;
  return x < y ? -1 : x > y;
}

bool nsys_awarm_area(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, void (*pause)(void *ctx),
                     void *ctx) {
#define NSYS__PAUSE() (pause ? pause(ctx) : (void)0, !c.stopped && !nsys_task_cancelled(task))
  nsys_acache *memo = NULL;
  if (!nsys_amemo_get(task, p, ix, &memo) || !memo) return false;
  if (!nsys_win_fast_enabled()) return true; /* the windowed paths are off: nothing reads them */
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, nsys_analysis_find("top_kernels"), NULL)) return false;
  c.cache = memo;
  /* in the order a selection reads them; each returns at once when built.
   * NULL without c.stopped: the index does not suit that path (nothing to build). */
  if (NSYS__PAUSE()) (void)nsys_actx_winidx(&c);
  if (NSYS__PAUSE()) (void)nsys_actx_kname(&c, false);
  if (NSYS__PAUSE()) (void)nsys_actx_klaunch(&c);
  if (NSYS__PAUSE()) (void)nsys_actx_ksweep(&c);
  if (NSYS__PAUSE()) {
    nsys_gap_phaser own;
    (void)nsys_gap_phaser_get(&c, &own);
    nsys_gap_phaser_dispose(&own);
  }
  if (NSYS__PAUSE()) (void)nsys_actx_sgaps(&c);
  if (NSYS__PAUSE()) (void)nsys_actx_markers(&c);
  /* every name's whole statistics (what a window holding all of a name's
   * kernels reads: the full range), the largest names first */
  const nsys_kname *kn = c.stopped ? NULL : nsys_win_peek(&memo->kname[0]);
  if (kn) {
    uint64_t *order = nsys_xmalloc(((size_t)kn->n_keys + 1) * sizeof *order);
    uint32_t no = 0;
    for (uint32_t j = 0; j < kn->n_keys; j++) order[no++] = j; /* a name done already returns at once */
    if (no > 1) qsort_r(order, no, sizeof *order, nsys__by_total_desc, (void *)kn);
    for (uint32_t r = 0; r < no && NSYS__PAUSE(); r++) (void)nsys_kname_whole(kn, ix, (uint32_t)order[r]);
    free(order);
  }
  bool ok = !c.stopped;
#undef NSYS__PAUSE
  nsys_actx_dispose(&c);
  return ok && !nsys_task_cancelled(task);
}
