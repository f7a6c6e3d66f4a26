/* gpu_idle_gaps' stream gaps for any window (see gap_streams.h). */
#include "analysis/gap_streams.h"

#include <stdlib.h>

#include "analysis/devunions.h"
#include "common/util.h"
#include "profile/profile.h"

/* Adds the gap before op i (m: the running max end before it; have: some op
 * came before) to s[3] (host, kernel, other: nsys_gap_split). */
static inline void nsys__split_add(const nsys_index *ix, uint32_t i, bool have, int64_t m, int64_t s[3]) {
  int64_t st = ix->ops.start[i];
  if (!have || st <= m) return;
  s[nsys_gap_split(ix, i, m, st - m, NSYS_SGAPS_KWAIT_NS)] += st - m;
}

static bool nsys__build_track(nsys_actx *c, uint32_t t, nsys_sgaps_track *g, const nsys_ivls *u) {
  const nsys_index *ix = c->ix;
  const nsys_gpu_track *tr = &ix->tracks[t];
  uint32_t nb = tr->count / NSYS_WIN_BLOCK + 1, cap = 0;
  g->used = g->ok = true;
  g->sum = nsys_xcalloc((size_t)nb * 3, sizeof *g->sum);
  int64_t s[3] = {0, 0, 0}, m = 0;
  size_t k = 0; /* union gaps before the current one */
  for (uint32_t j = 0; j < tr->count; j++) {
    uint32_t i = tr->first + j;
    if (nsys_actx_stop(c, i)) return false;
    if (j % NSYS_WIN_BLOCK == 0)
      for (int x = 0; x < 3; x++) g->sum[(size_t)(j / NSYS_WIN_BLOCK) * 3 + x] = s[x];
    int64_t st = ix->ops.start[i], en = ix->ops.end[i];
    if (en < st) g->ok = false;
    nsys__split_add(ix, i, j > 0, m, s);
    if (j > 0 && st > m && st - m >= NSYS_SGAPS_MIN_NS) {
      if (g->n == cap) {
        cap = cap ? cap * 2 : 64;
        g->op = nsys_xrealloc(g->op, cap * sizeof *g->op);
        g->start = nsys_xrealloc(g->start, cap * sizeof *g->start);
        g->dup = nsys_xrealloc(g->dup, cap * sizeof *g->dup);
      }
      /* union gaps [e[k-1], s[k]) in start order; this gap's start only grows */
      while (k + 1 < u->n && u->e[k] < m) k++;
      g->op[g->n] = i;
      g->start[g->n] = m;
      g->dup[g->n] = k + 1 < u->n && u->e[k] == m && u->s[k + 1] == st;
      g->n++;
    }
    if (j == 0 || en > m) m = en;
  }
  if (tr->count % NSYS_WIN_BLOCK == 0)
    for (int x = 0; x < 3; x++) g->sum[(size_t)(tr->count / NSYS_WIN_BLOCK) * 3 + x] = s[x];
  return true;
}

static void *nsys__build(nsys_actx *c) {
  const nsys_index *ix = c->ix;
  nsys_sgaps *g = nsys_xcalloc(1, sizeof *g);
  g->n_tracks = ix->n_tracks;
  g->t = nsys_xcalloc((size_t)ix->n_tracks + 1, sizeof *g->t);
  int32_t *devs;
  uint32_t nd = nsys_track_devices(ix, &devs);
  nsys_ivls scratch;
  nsys_ivls_init(&scratch);
  bool ok = true;
  for (uint32_t d = 0; d < nd && ok; d++) {
    const nsys_ivls *u = NULL;
    for (uint32_t t = 0; t < ix->n_tracks && ok; t++) {
      const nsys_gpu_track *tr = &ix->tracks[t];
      if (tr->device != devs[d] || tr->cls == NSYS_STREAM_COPY || tr->cls == NSYS_STREAM_COMM) continue;
      if (!u) u = nsys_actx_device_union_ref(c, devs[d], nsys_pred_any, INT64_MIN, INT64_MAX, &scratch);
      ok = !c->stopped && nsys__build_track(c, t, &g->t[t], u);
    }
  }
  nsys_ivls_free(&scratch);
  free(devs);
  if (!ok) {
    nsys_sgaps_free(g);
    return NULL;
  }
  return g;
}

const nsys_sgaps *nsys_actx_sgaps(nsys_actx *c) {
  if (!nsys_actx_winidx(c)) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->sgaps, &k->sgaps_building, nsys__build);
}

void nsys_sgaps_free(nsys_sgaps *g) {
  if (!g) return;
  for (uint32_t t = 0; t < g->n_tracks; t++) {
    free(g->t[t].sum);
    free(g->t[t].op);
    free(g->t[t].start);
    free(g->t[t].dup);
  }
  free(g->t);
  free(g);
}

/* The split's sums of the whole walk's gaps at the ops of track t before op i. */
static void nsys__prefix(const nsys_sgaps_track *g, const nsys_winidx *w, const nsys_index *ix, uint32_t t, uint32_t i,
                         int64_t s[3]) {
  const nsys_gpu_track *tr = &ix->tracks[t];
  uint32_t b = (i - tr->first) / NSYS_WIN_BLOCK, i0 = tr->first + b * NSYS_WIN_BLOCK;
  for (int x = 0; x < 3; x++) s[x] = g->sum[(size_t)b * 3 + x];
  int64_t m = nsys_win_track_pmax(w, ix, t, i0, false);
  for (uint32_t j = i0; j < i; j++) {
    nsys__split_add(ix, j, j > tr->first, m, s);
    if (j == tr->first || ix->ops.end[j] > m) m = ix->ops.end[j];
  }
}

/* First kept gap whose op is >= i. */
static uint32_t nsys__gap_at(const nsys_sgaps_track *g, uint32_t i) {
  uint32_t lo = 0, hi = g->n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (g->op[m] < i) lo = m + 1;
    else hi = m;
  }
  return lo;
}

void nsys_sgaps_window(const nsys_sgaps *g, const nsys_winidx *w, const nsys_index *ix, uint32_t t, int64_t a,
                       int64_t b, uint32_t *lo, uint32_t *hi, int64_t split[3]) {
  const nsys_sgaps_track *gt = &g->t[t];
  const nsys_gpu_track *tr = &ix->tracks[t];
  /* the gaps at the ops after the first one ending after a, starting before b */
  uint32_t f = nsys_win_track_first_live(w, ix, t, a), end = tr->first + tr->count;
  uint32_t l = tr->first, h = end; /* first op starting at or after b */
  while (l < h) {
    uint32_t m = l + (h - l) / 2;
    if (ix->ops.start[m] < b) l = m + 1;
    else h = m;
  }
  split[0] = split[1] = split[2] = 0;
  *lo = *hi = 0;
  if (f >= end || f + 1 >= l) return;
  int64_t p[3], q[3];
  nsys__prefix(gt, w, ix, t, f + 1, p);
  nsys__prefix(gt, w, ix, t, l, q);
  for (int x = 0; x < 3; x++) split[x] = q[x] - p[x];
  *lo = nsys__gap_at(gt, f + 1);
  *hi = nsys__gap_at(gt, l);
}
