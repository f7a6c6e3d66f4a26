/* The area selection's structures built ahead (see awarm.h). */
#include "analysis/awarm.h"

#include "analysis/amemo.h"
#include "analysis/analyses.h"
#include "analysis/gap_phase.h"
#include "analysis/klaunch.h"
#include "analysis/klaunch_sweep.h"
#include "analysis/kname.h"
#include "analysis/window.h"

bool nsys_awarm_area(nsys_task *task, struct nsys_profile *p, const nsys_index *ix) {
  nsys_acache *memo = NULL;
  if (!nsys_amemo_get(task, p, ix, &memo) || !memo) return false;
  if (!nsys_win_fast_enabled()) return true; /* the windowed paths are off: nothing reads them */
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, nsys_analysis_find("top_kernels"), NULL)) return false;
  c.cache = memo;
  /* in the order a selection reads them; each returns at once when built.
   * NULL without c.stopped: the index does not suit that path (nothing to build). */
  (void)nsys_actx_winidx(&c);
  if (!c.stopped) (void)nsys_actx_kname(&c, false);
  if (!c.stopped) (void)nsys_actx_klaunch(&c);
  if (!c.stopped) (void)nsys_actx_ksweep(&c);
  if (!c.stopped) {
    nsys_gap_phaser own;
    (void)nsys_gap_phaser_get(&c, &own);
    nsys_gap_phaser_dispose(&own);
  }
  if (!c.stopped) (void)nsys_actx_markers(&c);
  bool ok = !c.stopped;
  nsys_actx_dispose(&c);
  return ok && !nsys_task_cancelled(task);
}
