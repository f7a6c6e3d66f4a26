/* Lifecycle of nsys_acache, the index-only caches of the analyses (see
 * analysis.h); they are filled in common.c and devunions.c. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/devunions.h"
#include "analysis/gap_phase.h"
#include "analysis/gap_streams.h"
#include "analysis/klaunch.h"
#include "analysis/klaunch_sweep.h"
#include "analysis/kname.h"
#include "analysis/window.h"

void nsys_acache_init(nsys_acache *k, const nsys_index *ix) {
  memset(k, 0, sizeof *k);
  k->ix = ix;
}

void nsys_acache_dispose(nsys_acache *k) {
  nsys_devunions_free(k);
  nsys_devorder_free(k);
  free(k->piddev);
  free(k->name_nccl);
  free(k->name_api);
  free(k->op_class);
  free(k->nvtx_jump);
  nsys_winidx_free(k->winidx);
  nsys_gap_phaser_free(k->phaser);
  nsys_markers_free(k->markers);
  nsys_klaunch_free(k->klaunch);
  nsys_ksweep_free(k->ksweep);
  nsys_sgaps_free(k->sgaps);
  nsys_kname_free(k->kname[0]);
  nsys_kname_free(k->kname[1]);
  if (k->api_pmax) {
    for (uint32_t i = 0; i < k->ix->n_threads; i++) free(k->api_pmax[i]);
    free(k->api_pmax);
  }
  memset(k, 0, sizeof *k);
}
