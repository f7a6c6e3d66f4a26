/* See devunions.h. */
#include "analysis/devunions.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* First op of track t that may overlap [a, ...): ops of one stream are
 * serialised, so only a few ops before the first one starting at >= a can
 * still be running at a (a bounded walk back). */
static uint32_t nsys__track_lower(const nsys_index *ix, const nsys_gpu_track *tr, int64_t a) {
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

/* Heap keyed by (start of each cursor's next op, cursor): cursors are made
 * in track order, so the ops come out in one total order, (start, track,
 * position in the track), whatever the heap's history or the walk's first
 * op (a walk from any a yields the whole walk's ops from there on, in the
 * same order: launch storms and exposed launch time rely on it). */
#define NSYS__START(m, i) ((m)->ix->ops.start[(m)->cur[(m)->heap[i]]])
#define NSYS__LESS(m, i, j) \
  (NSYS__START(m, i) < NSYS__START(m, j) || (NSYS__START(m, i) == NSYS__START(m, j) && (m)->heap[i] < (m)->heap[j]))

static void nsys__sift_down(nsys_opmerge *m, uint32_t j) {
  for (;;) {
    uint32_t l = 2 * j + 1, r = l + 1, s = j;
    if (l < m->hn && NSYS__LESS(m, l, s)) s = l;
    if (r < m->hn && NSYS__LESS(m, r, s)) s = r;
    if (s == j) return;
    uint32_t t = m->heap[j];
    m->heap[j] = m->heap[s];
    m->heap[s] = t;
    j = s;
  }
}

void nsys_opmerge_init(nsys_opmerge *m, const nsys_index *ix, int32_t device, int64_t a) {
  m->ix = ix;
  uint32_t k = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (ix->tracks[t].device == device && ix->tracks[t].count) k++;
  m->cur = nsys_xmalloc(((size_t)k + 1) * sizeof *m->cur);
  m->end = nsys_xmalloc(((size_t)k + 1) * sizeof *m->end);
  m->heap = nsys_xmalloc(((size_t)k + 1) * sizeof *m->heap);
  m->hn = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (tr->device != device || !tr->count) continue;
    uint32_t l = nsys__track_lower(ix, tr, a);
    if (l >= tr->first + tr->count) continue;
    m->cur[m->hn] = l;
    m->end[m->hn] = tr->first + tr->count;
    m->heap[m->hn] = m->hn;
    for (uint32_t j = m->hn++; j && NSYS__LESS(m, j, (j - 1) / 2); j = (j - 1) / 2) {
      uint32_t h = m->heap[j];
      m->heap[j] = m->heap[(j - 1) / 2];
      m->heap[(j - 1) / 2] = h;
    }
  }
}

int64_t nsys_opmerge_next(nsys_opmerge *m) {
  if (!m->hn) return -1;
  uint32_t c = m->heap[0];
  uint32_t op = m->cur[c]++;
  if (m->cur[c] >= m->end[c]) m->heap[0] = m->heap[--m->hn];
  nsys__sift_down(m, 0);
  return op;
}

void nsys_opmerge_free(nsys_opmerge *m) {
  free(m->cur);
  free(m->end);
  free(m->heap);
  m->cur = m->end = m->heap = NULL;
  m->hn = 0;
}

static int nsys__cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

uint32_t nsys_track_devices(const nsys_index *ix, int32_t **out) {
  int32_t *devs = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *devs);
  uint32_t nd = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) devs[nd++] = ix->tracks[t].device;
  if (nd > 1) qsort(devs, nd, sizeof *devs, nsys__cmp_i32);
  uint32_t u = 0;
  for (uint32_t i = 0; i < nd; i++)
    if (!u || devs[u - 1] != devs[i]) devs[u++] = devs[i];
  *out = devs;
  return u;
}

/* The order entry of `device` (the table is built on first use: devices,
 * op counts and earliest starts, O(ops)); NULL for a device without tracks. */
static nsys_devorder *nsys__devorder(nsys_acache *k, int32_t device) {
  const nsys_index *ix = k->ix;
  if (!k->devorder) {
    int32_t *devs;
    uint32_t u = nsys_track_devices(ix, &devs);
    k->devorder = nsys_xcalloc((size_t)u + 1, sizeof *k->devorder);
    k->n_devorder = u;
    for (uint32_t d = 0; d < u; d++) {
      k->devorder[d].device = devs[d];
      k->devorder[d].min_start = INT64_MAX;
      k->devorder[d].max_end = INT64_MIN;
    }
    free(devs);
    for (uint32_t t = 0; t < ix->n_tracks; t++) {
      const nsys_gpu_track *tr = &ix->tracks[t];
      nsys_devorder *o = NULL;
      for (uint32_t lo = 0, hi = k->n_devorder; lo < hi;) {
        uint32_t m = lo + (hi - lo) / 2;
        if (k->devorder[m].device < tr->device) lo = m + 1;
        else if (k->devorder[m].device > tr->device) hi = m;
        else {
          o = &k->devorder[m];
          break;
        }
      }
      o->n_ops += tr->count;
      for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        if (ix->ops.start[i] < o->min_start) o->min_start = ix->ops.start[i];
        if (ix->ops.end[i] > o->max_end) o->max_end = ix->ops.end[i];
      }
    }
  }
  for (uint32_t lo = 0, hi = k->n_devorder; lo < hi;) {
    uint32_t m = lo + (hi - lo) / 2;
    if (k->devorder[m].device < device) lo = m + 1;
    else if (k->devorder[m].device > device) hi = m;
    else return &k->devorder[m];
  }
  return NULL;
}

void nsys_opiter_init(nsys_opiter *it, nsys_actx *c, int32_t device, int64_t a) {
  memset(it, 0, sizeof *it);
  it->c = c;
  nsys_devorder *o = c->cache->lent ? nsys__devorder(c->cache, device) : NULL;
  /* a <= every start: each track's cursor starts at its first op whatever a
   * is (nsys__track_lower), so the heap yields the recorded sequence */
  if (o && a <= o->min_start) {
    if (o->whole) {
      it->ord = o->ops;
      it->n = o->n;
      return;
    }
    if (!o->recording) {
      free(o->ops);
      o->ops = nsys_xmalloc(((size_t)o->n_ops + 1) * sizeof *o->ops);
      o->n = 0;
      o->recording = true;
      it->rec = o;
    }
  }
  nsys_opmerge_init(&it->m, c->ix, device, a);
}

void nsys_opiter_free(nsys_opiter *it) {
  nsys_devorder *o = it->rec;
  if (o) {
    if (!it->c->stopped) { /* finish the recording: the rest of the heap's sequence */
      for (int64_t op; (op = nsys_opmerge_next(&it->m)) >= 0;) o->ops[o->n++] = (uint32_t)op;
      o->whole = true;
    }
    o->recording = false;
  }
  if (!it->ord) nsys_opmerge_free(&it->m);
  memset(it, 0, sizeof *it);
}

void nsys_devorder_free(nsys_acache *k) {
  for (uint32_t d = 0; d < k->n_devorder; d++) free(k->devorder[d].ops);
  free(k->devorder);
  k->devorder = NULL;
  k->n_devorder = 0;
}

/* The unions of one device (du->device), from its ops in start order. */
static void nsys__build_device(nsys_actx *c, nsys_devunions *du) {
  const nsys_index *ix = c->ix;
  nsys_ivls_init(&du->compute);
  nsys_ivls_init(&du->comm);
  nsys_ivls_init(&du->any);
  nsys_ivls_init(&du->both);
  nsys_ivls_init(&du->kernel);
  du->with_kernel = c->cache->lent; /* only a lent cache serves whole-window kernel unions */
  nsys_opiter m;
  nsys_opiter_init(&m, c, du->device, INT64_MIN);
  for (int64_t op; (op = nsys_opiter_next(&m)) >= 0 && !nsys_actx_stop(c, (uint64_t)op);) {
    int64_t s = ix->ops.start[op], e = ix->ops.end[op];
    nsys_ivls_add_sorted(&du->any, s, e);
    if (nsys_pred_compute(c, (uint32_t)op)) nsys_ivls_add_sorted(&du->compute, s, e);
    else if (nsys_pred_comm(c, (uint32_t)op)) nsys_ivls_add_sorted(&du->comm, s, e);
    if (du->with_kernel && nsys_pred_kernel(c, (uint32_t)op)) nsys_ivls_add_sorted(&du->kernel, s, e);
  }
  nsys_opiter_free(&m);
  nsys_ivls_intersect(&du->compute, &du->comm, &du->both);
  nsys_ivls_index(&du->compute);
  nsys_ivls_index(&du->comm);
  nsys_ivls_index(&du->any);
  nsys_ivls_index(&du->both);
  if (du->with_kernel) nsys_ivls_index(&du->kernel);
}

/* Devices built on several threads: each part writes only its device's
 * unions and recorded order, and polls cancellation on a context of its own. */
typedef struct {
  const nsys_actx *c;
  nsys_devunions *du;
  atomic_bool stopped;
} nsys__par_build;

static void nsys__build_part(void *arg, uint32_t d) {
  nsys__par_build *pb = arg;
  nsys_actx c = *pb->c;
  c.stopped = false;
  nsys__build_device(&c, &pb->du[d]);
  if (c.stopped) atomic_store(&pb->stopped, true);
}

static void nsys__build(nsys_actx *c) {
  const nsys_index *ix = c->ix;
  nsys_acache *k = c->cache;
  int32_t *devs;
  uint32_t u = nsys_track_devices(ix, &devs);
  k->devunions = nsys_xcalloc((size_t)u + 1, sizeof *k->devunions);
  k->n_devunions = u;
  for (uint32_t d = 0; d < u; d++) k->devunions[d].device = devs[d];
  free(devs);
  /* a cache being built whole (nsys_acache_build: lent, op classes made)
   * builds its devices in parallel; the order table exists before they start */
  if (k->lent && k->op_class && u > 1 && !c->stopped) {
    nsys__devorder(k, k->devunions[0].device);
    nsys__par_build pb = {.c = c, .du = k->devunions};
    atomic_init(&pb.stopped, false);
    nsys_analysis_parallel(u, nsys__build_part, &pb, NULL);
    if (atomic_load(&pb.stopped)) c->stopped = true;
  } else {
    for (uint32_t d = 0; d < u; d++) nsys__build_device(c, &k->devunions[d]);
  }
  k->devunions_whole = !c->stopped; /* a cut-short build is rebuilt by the next run that lends this cache */
}

const nsys_devunions *nsys_actx_devunions(nsys_actx *c, int32_t device) {
  nsys_acache *k = c->cache;
  if (k->devunions && !k->devunions_whole && !c->stopped) nsys_devunions_free(k);
  if (!k->devunions) nsys__build(c);
  uint32_t lo = 0, hi = k->n_devunions;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (k->devunions[m].device < device) lo = m + 1;
    else hi = m;
  }
  if (lo < k->n_devunions && k->devunions[lo].device == device) return &k->devunions[lo];
  /* a device without tracks: empty unions (first element's lists are never
   * shared: answer a static empty set) */
  static nsys_devunions empty = {0};
  return &empty;
}

const nsys_devunions *nsys_actx_devunions_covering(nsys_actx *c, int32_t device, int64_t a, int64_t b) {
  nsys_acache *k = c->cache;
  if (!k->lent) return NULL;
  const nsys_devorder *o = nsys__devorder(k, device);
  if (!o || a > o->min_start || b < o->max_end) return NULL;
  return nsys_actx_devunions(c, device);
}

const nsys_ivls *nsys_devunions_of(const nsys_devunions *du, nsys_op_pred pred) {
  if (pred == nsys_pred_any) return &du->any;
  if (pred == nsys_pred_compute) return &du->compute;
  if (pred == nsys_pred_comm) return &du->comm;
  if (pred == nsys_pred_kernel && du->with_kernel) return &du->kernel;
  return NULL;
}

uint32_t nsys_actx_devunions_all(nsys_actx *c, const nsys_devunions **all) {
  nsys_actx_devunions(c, 0); /* builds the unions of every device */
  *all = c->cache->devunions;
  return c->cache->n_devunions;
}

void nsys_devunions_free(nsys_acache *k) {
  for (uint32_t d = 0; d < k->n_devunions; d++) {
    nsys_ivls_free(&k->devunions[d].compute);
    nsys_ivls_free(&k->devunions[d].comm);
    nsys_ivls_free(&k->devunions[d].any);
    nsys_ivls_free(&k->devunions[d].both);
    nsys_ivls_free(&k->devunions[d].kernel);
  }
  free(k->devunions);
  k->devunions = NULL;
  k->n_devunions = 0;
  k->devunions_whole = false;
}
