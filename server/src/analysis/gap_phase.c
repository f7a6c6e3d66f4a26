/* The phase of a GPU idle gap (steady, process_switch, startup, first_launch);
 * definitions in gap_phase.h and docs/analyses.md. */
#include "analysis/gap_phase.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/window.h"
#include "common/util.h"

static int nsys__cmp_first(const void *p, const void *q) {
  const nsys_gap_first *a = p, *b = q;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  return a->name < b->name ? -1 : a->name > b->name;
}

typedef struct {
  int32_t device;
  uint32_t pid, track;
} nsys__trk;

static int nsys__cmp_trk(const void *p, const void *q) {
  const nsys__trk *a = p, *b = q;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  return a->track < b->track ? -1 : a->track > b->track;
}

typedef struct {
  nsys_gap_first *v;
  uint32_t n, cap;
} nsys__firstvec;

static uint32_t nsys__push(nsys__firstvec *f, nsys_gap_first x) {
  if (f->n == f->cap) {
    f->cap = f->cap ? f->cap * 2 : 64;
    f->v = nsys_xrealloc(f->v, (size_t)f->cap * sizeof *f->v);
  }
  f->v[f->n] = x;
  return f->n++;
}

/* Per device, the GPU start of the first iteration the iterations analysis
 * finds by NVTX markers over the whole profile (its defaults: auto-detected
 * marker). Nothing when iterations come from GPU gaps (no marker). */
static bool nsys__first_iterations(nsys_gap_phaser *g, nsys_actx *c) {
  if (!c->ix->nvtx.n) return true;
  nsys_actx t;
  if (!nsys_actx_init(&t, c->task, c->p, c->ix, nsys_analysis_find("iterations"), NULL)) return false;
  nsys_iter *its = NULL;
  const char *method = NULL;
  uint32_t n = nsys_detect_iterations(&t, &its, &method);
  bool ok = !t.stopped;
  if (!ok) c->stopped = true;
  if (ok && method && !strcmp(method, "nvtx"))
    for (uint32_t i = 0; i < n; i++) {
      uint32_t k = 0;
      while (k < g->n_it && g->it_device[k] != its[i].device) k++;
      if (k == g->n_it) {
        g->it_device = nsys_xrealloc(g->it_device, ((size_t)k + 1) * sizeof *g->it_device);
        g->it_start = nsys_xrealloc(g->it_start, ((size_t)k + 1) * sizeof *g->it_start);
        g->it_device[k] = its[i].device;
        g->it_start[k] = its[i].start;
        g->n_it++;
      } else if (its[i].start < g->it_start[k]) {
        g->it_start[k] = its[i].start;
      }
    }
  free(its);
  nsys_actx_dispose(&t);
  return ok;
}

bool nsys_gap_phaser_init(nsys_gap_phaser *g, nsys_actx *c) {
  memset(g, 0, sizeof *g);
  const nsys_index *ix = c->ix;
  nsys__trk *trk = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *trk);
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    trk[t] = (nsys__trk){ix->tracks[t].device, ix->tracks[t].pid, t};
  qsort(trk, ix->n_tracks, sizeof *trk, nsys__cmp_trk);
  uint32_t ns = ix->strings.count;
  uint32_t *stamp = nsys_xcalloc((size_t)ns + 1, sizeof *stamp); /* group + 1 that last saw the name */
  uint32_t *pos = nsys_xmalloc(((size_t)ns + 1) * sizeof *pos);   /* its entry in kernels */
  nsys__firstvec procs = {0}, kernels = {0};
  uint64_t step = 0;
  bool ok = true;
  for (uint32_t t = 0, group = 0; t < ix->n_tracks && ok; group++) {
    uint32_t u = t;
    int64_t first = INT64_MAX;
    for (; u < ix->n_tracks && trk[u].device == trk[t].device && trk[u].pid == trk[t].pid; u++) {
      const nsys_gpu_track *tr = &ix->tracks[trk[u].track];
      if (tr->count && ix->ops.start[tr->first] < first) first = ix->ops.start[tr->first];
      for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        if (nsys_actx_stop(c, step++)) {
          ok = false;
          break;
        }
        uint32_t nm = ix->ops.name[i];
        if (ix->ops.kind[i] != NSYS_OP_KERNEL || nm >= ns) continue;
        if (stamp[nm] != group + 1) {
          stamp[nm] = group + 1;
          pos[nm] = nsys__push(&kernels, (nsys_gap_first){trk[t].device, trk[t].pid, ix->ops.start[i], nm});
        } else if (ix->ops.start[i] < kernels.v[pos[nm]].start) {
          kernels.v[pos[nm]].start = ix->ops.start[i];
        }
      }
    }
    if (first != INT64_MAX) nsys__push(&procs, (nsys_gap_first){trk[t].device, trk[t].pid, first, NSYS_STR_NONE});
    t = u;
  }
  free(trk);
  free(stamp);
  free(pos);
  g->procs = procs.v;
  g->n_procs = procs.n;
  g->kernels = kernels.v;
  g->n_kernels = kernels.n;
  if (!ok) return false;
  if (g->n_procs > 1) qsort(g->procs, g->n_procs, sizeof *g->procs, nsys__cmp_first);
  if (g->n_kernels > 1) qsort(g->kernels, g->n_kernels, sizeof *g->kernels, nsys__cmp_first);
  return nsys__first_iterations(g, c);
}

void nsys_gap_phaser_dispose(nsys_gap_phaser *g) {
  free(g->procs);
  free(g->kernels);
  free(g->it_device);
  free(g->it_start);
  memset(g, 0, sizeof *g);
}

void nsys_gap_phaser_free(nsys_gap_phaser *g) {
  if (!g) return;
  nsys_gap_phaser_dispose(g);
  free(g);
}

static void *nsys__build_phaser(nsys_actx *c) {
  nsys_gap_phaser *g = nsys_xcalloc(1, sizeof *g);
  if (nsys_gap_phaser_init(g, c)) return g;
  nsys_gap_phaser_free(g);
  return NULL;
}

const nsys_gap_phaser *nsys_gap_phaser_get(nsys_actx *c, nsys_gap_phaser *own) {
  memset(own, 0, sizeof *own);
  if (!nsys_win_fast_enabled()) return nsys_gap_phaser_init(own, c) ? own : NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->phaser, &k->phaser_building, nsys__build_phaser);
}

/* The entry of v (sorted by (device, start)) with that device and start, or NULL. */
static const nsys_gap_first *nsys__find(const nsys_gap_first *v, uint32_t n, int32_t device, int64_t start) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (v[m].device < device || (v[m].device == device && v[m].start < start)) lo = m + 1;
    else hi = m;
  }
  return lo < n && v[lo].device == device && v[lo].start == start ? &v[lo] : NULL;
}

nsys_gap_phase nsys_gap_phase_of(const nsys_gap_phaser *g, int32_t device, int64_t a, int64_t b,
                                 nsys_gap_phase_info *info) {
  nsys_gap_phase_info x = {NSYS_GAP_STEADY, 0, NSYS_STR_NONE, 0};
  const nsys_gap_first *f;
  (void)a;
  if ((f = nsys__find(g->procs, g->n_procs, device, b))) {
    x.phase = NSYS_GAP_PROCESS_SWITCH;
    x.pid = f->pid;
  } else {
    for (uint32_t k = 0; k < g->n_it; k++)
      if (g->it_device[k] == device && b <= g->it_start[k]) {
        x.phase = NSYS_GAP_STARTUP;
        x.first_iteration = g->it_start[k];
      }
    if (x.phase == NSYS_GAP_STEADY && (f = nsys__find(g->kernels, g->n_kernels, device, b))) {
      x.phase = NSYS_GAP_FIRST_LAUNCH;
      x.pid = f->pid;
      x.kernel = f->name;
    }
  }
  if (info) *info = x;
  return x.phase;
}

const char *nsys_gap_phase_name(nsys_gap_phase phase) {
  static const char *const names[NSYS_GAP__PHASES] = {"steady", "process_switch", "startup", "first_launch"};
  return (unsigned)phase < NSYS_GAP__PHASES ? names[phase] : "steady";
}
