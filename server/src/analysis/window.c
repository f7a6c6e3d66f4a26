/* See window.h. */
#include "analysis/window.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cond_wait.h"
#include "common/util.h"

static pthread_mutex_t nsys__win_mu = PTHREAD_MUTEX_INITIALIZER;

bool nsys_win_fast_enabled(void) {
  const char *v = getenv("NSYS_AI_WINDOW_FAST");
  return !(v && strcmp(v, "0") == 0);
}

static bool nsys__is_kg(const nsys_index *ix, uint32_t i) {
  return ix->ops.kind[i] == NSYS_OP_KERNEL || ix->ops.kind[i] == NSYS_OP_GRAPH;
}

static nsys_winidx *nsys__build(const nsys_index *ix) {
  nsys_winidx *w = nsys_xcalloc(1, sizeof *w);
  uint64_t at = 0, blocks = 0;
  bool ok = true;
  for (uint32_t t = 0; t < ix->n_tracks && ok; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (tr->first != at) ok = false;
    for (uint32_t i = tr->first + 1; ok && i < tr->first + tr->count; i++)
      if (ix->ops.start[i] < ix->ops.start[i - 1]) ok = false;
    at += tr->count;
    blocks += (tr->count + NSYS_WIN_BLOCK - 1) / NSYS_WIN_BLOCK;
  }
  if (!ok || at != ix->ops.n) return w; /* not the layout the fast paths read */
  w->blk = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *w->blk);
  w->pm_any = nsys_xmalloc((blocks + 1) * sizeof *w->pm_any);
  w->pm_kg = nsys_xmalloc((blocks + 1) * sizeof *w->pm_kg);
  uint32_t b = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    w->blk[t] = b;
    int64_t ma = INT64_MIN, mk = INT64_MIN;
    for (uint32_t j = 0; j < tr->count; j++) {
      uint32_t i = tr->first + j;
      if (ix->ops.end[i] > ma) ma = ix->ops.end[i];
      if (nsys__is_kg(ix, i) && ix->ops.end[i] > mk) mk = ix->ops.end[i];
      if (j % NSYS_WIN_BLOCK == NSYS_WIN_BLOCK - 1 || j + 1 == tr->count) {
        w->pm_any[b] = ma;
        w->pm_kg[b] = mk;
        b++;
      }
    }
  }
  w->blk[ix->n_tracks] = b;
  w->ok = true;
  return w;
}

static pthread_cond_t nsys__win_cv = PTHREAD_COND_INITIALIZER;

void *nsys_win_cached(nsys_actx *c, void **slot, bool *building, void *(*build)(nsys_actx *c)) {
  pthread_mutex_lock(&nsys__win_mu);
  while (!*slot && *building) /* another request builds it: wait, polling our cancel */
    if (!nsys_task_wait_turn(c->task, &nsys__win_cv, &nsys__win_mu, 10)) {
      pthread_mutex_unlock(&nsys__win_mu);
      c->stopped = true;
      return NULL;
    }
  void *v = *slot;
  if (v) {
    pthread_mutex_unlock(&nsys__win_mu);
    return v;
  }
  *building = true;
  pthread_mutex_unlock(&nsys__win_mu);
  v = build(c);
  pthread_mutex_lock(&nsys__win_mu);
  *building = false;
  *slot = v; /* NULL after a cancelled build: the next request builds it */
  pthread_cond_broadcast(&nsys__win_cv);
  pthread_mutex_unlock(&nsys__win_mu);
  if (!v) c->stopped = true;
  return v;
}

void *nsys_win_peek(void *const *slot) {
  pthread_mutex_lock(&nsys__win_mu);
  void *v = *slot;
  pthread_mutex_unlock(&nsys__win_mu);
  return v;
}

bool nsys_win_large(const nsys_actx *c) {
  if (!nsys_aparams_get(&c->params, "start")->set && !nsys_aparams_get(&c->params, "end")->set)
    return false; /* a whole-profile call (the report's): its loops, no index to hold */
  const nsys_index *ix = c->ix;
  int64_t a = NSYS_MAX(c->t0, ix->span_start), b = NSYS_MIN(c->t1, ix->span_end);
  return b > a && (double)(b - a) * 4 >= (double)(ix->span_end - ix->span_start);
}

static void *nsys__build_winidx(nsys_actx *c) { return nsys__build(c->ix); }

const nsys_winidx *nsys_actx_winidx(nsys_actx *c) {
  if (!nsys_win_fast_enabled()) return NULL;
  nsys_acache *k = c->cache;
  const nsys_winidx *w = nsys_win_cached(c, &k->winidx, &k->winidx_building, nsys__build_winidx);
  return w && w->ok ? w : NULL;
}

void nsys_winidx_free(nsys_winidx *w) {
  if (!w) return;
  free(w->blk);
  free(w->pm_any);
  free(w->pm_kg);
  free(w);
}

/* First op of [lo, hi) with start >= a (hi when none). */
static uint32_t nsys__lower(const nsys_index *ix, uint32_t lo, uint32_t hi, int64_t a) {
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (ix->ops.start[m] < a) lo = m + 1;
    else hi = m;
  }
  return lo;
}

void nsys_win_track_starts(const nsys_index *ix, uint32_t t, int64_t a, int64_t b, uint32_t *lo, uint32_t *hi) {
  const nsys_gpu_track *tr = &ix->tracks[t];
  *lo = nsys__lower(ix, tr->first, tr->first + tr->count, a);
  *hi = b <= a ? *lo : nsys__lower(ix, *lo, tr->first + tr->count, b);
}

uint32_t nsys_win_track_first_live(const nsys_winidx *w, const nsys_index *ix, uint32_t t, int64_t a) {
  const nsys_gpu_track *tr = &ix->tracks[t];
  uint32_t b0 = w->blk[t], nb = w->blk[t + 1] - b0;
  uint32_t lo = 0, hi = nb; /* first block whose running max end exceeds a */
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (w->pm_any[b0 + m] > a) hi = m;
    else lo = m + 1;
  }
  uint32_t end = tr->first + tr->count;
  for (uint32_t i = tr->first + lo * NSYS_WIN_BLOCK; i < end; i++)
    if (ix->ops.end[i] > a) return i;
  return end;
}

int64_t nsys_win_track_pmax(const nsys_winidx *w, const nsys_index *ix, uint32_t t, uint32_t i, bool kg) {
  const nsys_gpu_track *tr = &ix->tracks[t];
  uint32_t j = i - tr->first, full = j / NSYS_WIN_BLOCK;
  int64_t m = full ? (kg ? w->pm_kg : w->pm_any)[w->blk[t] + full - 1] : INT64_MIN;
  for (uint32_t x = tr->first + full * NSYS_WIN_BLOCK; x < i; x++)
    if ((!kg || nsys__is_kg(ix, x)) && ix->ops.end[x] > m) m = ix->ops.end[x];
  return m;
}

bool nsys_win_device_span(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t *s, int64_t *e, bool *handled) {
  *handled = false;
  bool kg = pred == nsys_pred_kernel_or_graph;
  if (!kg && pred != nsys_pred_any) return false;
  const nsys_winidx *w = nsys_actx_winidx(c);
  if (!w) return false;
  *handled = true;
  const nsys_index *ix = c->ix;
  int64_t a = c->t0, b = c->t1, lo = INT64_MAX, hi = INT64_MIN;
  bool any = false;
  for (uint32_t t = 0; t < ix->n_tracks && !nsys_actx_stop(c, t); t++) {
    if (ix->tracks[t].device != device) continue;
    uint32_t i0, i1;
    nsys_win_track_starts(ix, t, a, b, &i0, &i1);
    /* ops that start before b and end after a: the max end of those that
     * start before b exceeds a exactly when there is one, and is theirs */
    int64_t m1 = nsys_win_track_pmax(w, ix, t, i1, kg);
    if (m1 <= a) continue;
    any = true;
    if (m1 > hi) hi = m1;
    if (nsys_win_track_pmax(w, ix, t, i0, kg) > a) { /* one starts before a and runs into the window */
      lo = a;
      continue;
    }
    for (uint32_t i = i0; i < i1 && !nsys_actx_stop(c, i); i++)
      if ((!kg || nsys__is_kg(ix, i)) && ix->ops.end[i] > a) {
        if (ix->ops.start[i] < lo) lo = ix->ops.start[i];
        break;
      }
  }
  if (any) {
    *s = NSYS_MAX(lo, a);
    *e = NSYS_MIN(hi, b);
  }
  return any;
}

nsys_oprange *nsys_win_start_ranges(nsys_actx *c, uint32_t *n) {
  const nsys_index *ix = c->ix;
  const nsys_winidx *w = nsys_actx_winidx(c);
  nsys_oprange *r = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *r);
  if (!w) {
    r[0] = (nsys_oprange){0, ix->ops.n};
    *n = 1;
    return r;
  }
  uint32_t k = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    if (!nsys_actx_device_selected(c, ix->tracks[t].device)) continue;
    uint32_t lo, hi;
    nsys_win_track_starts(ix, t, c->t0, c->t1, &lo, &hi);
    if (lo < hi) r[k++] = (nsys_oprange){lo, hi};
  }
  *n = k;
  return r;
}

void nsys_ivls_clip(const nsys_ivls *whole, int64_t a, int64_t b, nsys_ivls *out) {
  nsys_ivls_clear(out);
  if (b <= a) return;
  uint32_t lo = 0, hi = whole->n; /* first interval ending after a */
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (whole->e[m] > a) hi = m;
    else lo = m + 1;
  }
  for (uint32_t i = lo; i < whole->n && whole->s[i] < b; i++)
    nsys_ivls_add_sorted(out, NSYS_MAX(whole->s[i], a), NSYS_MIN(whole->e[i], b));
}

static void *nsys__build_markers(nsys_actx *c) { return nsys_iter_markers_build(c); }

const nsys_markers *nsys_actx_markers(nsys_actx *c) {
  if (!nsys_win_fast_enabled()) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->markers, &k->markers_building, nsys__build_markers);
}

void nsys_markers_free(nsys_markers *m) {
  if (!m) return;
  free(m->first);
  free(m->r);
  free(m->pmax);
  free(m);
}

uint32_t nsys_markers_from(const nsys_markers *m, uint32_t t, int64_t a) {
  uint32_t lo = m->first[t], hi = m->first[t + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->pmax[mid] >= a) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
