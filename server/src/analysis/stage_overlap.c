/* stage_overlap: per (device, NVTX stage name), exposed communication in the
 * projected GPU windows of the stage's ranges (docs/analyses.md).
 *
 * Bounded whatever the shape (thousands of matching ranges, nested stages,
 * thousands of streams): O((A + R) log A) per thread for the projected
 * windows (an offline sweep by range end over a segment tree of the thread's
 * launching calls), O(log n) per window for the union sums (the device's
 * cached whole-time unions) and O((1 + k) log n) for the per-kernel overlap
 * extremes (a segment tree over the device's NCCL kernels, k = kernels that
 * cross the window's edges). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/devunions.h"
#include "common/util.h"

typedef struct {
  uint32_t name;
  int32_t device;
  uint32_t ranges;
  int64_t comm, overlap, exposed, gpu;
  double min_frac, max_frac;
  uint32_t comm_kernels;
} nsys__stage;

/* (name, device) -> stage: open addressing. */
typedef struct {
  nsys__stage *v;
  uint32_t n, cap;
  uint32_t *slot; /* index + 1, 0 = empty */
  uint32_t scap;
} nsys__stages;

static uint64_t nsys__hkey(uint32_t name, int32_t dev) { return nsys_mix64(((uint64_t)name << 32) ^ (uint32_t)dev); }

static nsys__stage *nsys__stage_get(nsys__stages *m, uint32_t name, int32_t dev) {
  if ((m->n + 1) * 2 > m->scap) {
    uint32_t nc = m->scap ? m->scap * 2 : 64;
    uint32_t *ns = nsys_xcalloc(nc, sizeof *ns);
    for (uint32_t i = 0; i < m->n; i++) {
      uint32_t h = (uint32_t)nsys__hkey(m->v[i].name, m->v[i].device) & (nc - 1);
      while (ns[h]) h = (h + 1) & (nc - 1);
      ns[h] = i + 1;
    }
    free(m->slot);
    m->slot = ns;
    m->scap = nc;
  }
  uint32_t h = (uint32_t)nsys__hkey(name, dev) & (m->scap - 1);
  while (m->slot[h]) {
    nsys__stage *s = &m->v[m->slot[h] - 1];
    if (s->name == name && s->device == dev) return s;
    h = (h + 1) & (m->scap - 1);
  }
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 16;
    m->v = nsys_xrealloc(m->v, m->cap * sizeof *m->v);
  }
  nsys__stage *s = &m->v[m->n];
  memset(s, 0, sizeof *s);
  s->name = name;
  s->device = dev;
  m->slot[h] = ++m->n;
  return s;
}

/* ------------------------------------------------ per-device NCCL kernels */

/* NCCL kernels of one device (non-empty), by start, with the fraction of each
 * covered by compute, and a segment tree: max end, min/max fraction. */
typedef struct {
  int32_t device;
  bool built;
  uint32_t n, size;
  int64_t *s, *e;
  double *f;
  int64_t *tmax; /* tree, 2*size nodes, leaves at size.. */
  double *tmin_f, *tmax_f;
} nsys__comm;

static void nsys__comm_build(nsys_actx *c, nsys__comm *k, const nsys_devunions *u) {
  const nsys_index *ix = c->ix;
  k->built = true;
  uint32_t cap = 64;
  k->s = nsys_xmalloc(cap * sizeof *k->s);
  k->e = nsys_xmalloc(cap * sizeof *k->e);
  nsys_opmerge m;
  nsys_opmerge_init(&m, ix, k->device, INT64_MIN);
  for (int64_t op; (op = nsys_opmerge_next(&m)) >= 0 && !nsys_actx_stop(c, (uint64_t)op);) {
    if (!nsys_actx_is_nccl_op(c, (uint32_t)op) || ix->ops.end[op] <= ix->ops.start[op]) continue;
    if (k->n == cap) {
      cap *= 2;
      k->s = nsys_xrealloc(k->s, cap * sizeof *k->s);
      k->e = nsys_xrealloc(k->e, cap * sizeof *k->e);
    }
    k->s[k->n] = ix->ops.start[op];
    k->e[k->n] = ix->ops.end[op];
    k->n++;
  }
  nsys_opmerge_free(&m);
  k->size = 1;
  while (k->size < k->n) k->size *= 2;
  k->f = nsys_xmalloc(((size_t)k->n + 1) * sizeof *k->f);
  k->tmax = nsys_xmalloc(2 * (size_t)k->size * sizeof *k->tmax);
  k->tmin_f = nsys_xmalloc(2 * (size_t)k->size * sizeof *k->tmin_f);
  k->tmax_f = nsys_xmalloc(2 * (size_t)k->size * sizeof *k->tmax_f);
  for (uint32_t i = 0; i < k->size; i++) {
    size_t leaf = (size_t)k->size + i;
    if (i < k->n) {
      k->f[i] = (double)nsys_ivls_len_in(&u->compute, k->s[i], k->e[i]) / (double)(k->e[i] - k->s[i]);
      k->tmax[leaf] = k->e[i];
      k->tmin_f[leaf] = k->tmax_f[leaf] = k->f[i];
    } else {
      k->tmax[leaf] = INT64_MIN;
      k->tmin_f[leaf] = 2.0;
      k->tmax_f[leaf] = -1.0;
    }
  }
  for (size_t i = k->size; i-- > 1;) {
    k->tmax[i] = NSYS_MAX(k->tmax[2 * i], k->tmax[2 * i + 1]);
    k->tmin_f[i] = k->tmin_f[2 * i] < k->tmin_f[2 * i + 1] ? k->tmin_f[2 * i] : k->tmin_f[2 * i + 1];
    k->tmax_f[i] = k->tmax_f[2 * i] > k->tmax_f[2 * i + 1] ? k->tmax_f[2 * i] : k->tmax_f[2 * i + 1];
  }
}

static void nsys__comm_free(nsys__comm *k) {
  free(k->s);
  free(k->e);
  free(k->f);
  free(k->tmax);
  free(k->tmin_f);
  free(k->tmax_f);
}

typedef struct {
  const nsys__comm *k;
  const nsys_ivls *compute;
  int64_t gs, ge;
  uint32_t count;
  double mn, mx;
} nsys__fq;

static void nsys__fq_add(nsys__fq *q, double f) {
  if (!q->count || f < q->mn) q->mn = f;
  if (!q->count || f > q->mx) q->mx = f;
}

/* A kernel the window clips: its covered length inside the window. */
static void nsys__fq_clipped(nsys__fq *q, uint32_t i) {
  const nsys__comm *k = q->k;
  int64_t a = NSYS_MAX(k->s[i], q->gs), b = NSYS_MIN(k->e[i], q->ge);
  nsys__fq_add(q, (double)nsys_ivls_len_in(q->compute, a, b) / (double)(k->e[i] - k->s[i]));
  q->count++;
}

/* Kernels [l, r) of node `node` (covering [nl, nr)) that start inside the
 * window: whole subtrees ending by ge use their precomputed extremes, the
 * kernels that run past ge are clipped one by one. */
static void nsys__fq_inside(nsys__fq *q, size_t node, uint32_t nl, uint32_t nr, uint32_t l, uint32_t r) {
  const nsys__comm *k = q->k;
  if (r <= nl || nr <= l) return;
  if (l <= nl && nr <= r && k->tmax[node] <= q->ge) {
    uint32_t cnt = NSYS_MIN(nr, k->n) - nl;
    if (!cnt) return;
    nsys__fq_add(q, k->tmin_f[node]);
    nsys__fq_add(q, k->tmax_f[node]);
    q->count += cnt;
    return;
  }
  if (nr - nl == 1) {
    nsys__fq_clipped(q, nl);
    return;
  }
  uint32_t mid = nl + (nr - nl) / 2;
  nsys__fq_inside(q, 2 * node, nl, mid, l, r);
  nsys__fq_inside(q, 2 * node + 1, mid, nr, l, r);
}

/* Kernels [0, r) that started before the window and still run at gs. */
static void nsys__fq_before(nsys__fq *q, size_t node, uint32_t nl, uint32_t nr, uint32_t r) {
  const nsys__comm *k = q->k;
  if (r <= nl || k->tmax[node] <= q->gs) return;
  if (nr - nl == 1) {
    nsys__fq_clipped(q, nl);
    return;
  }
  uint32_t mid = nl + (nr - nl) / 2;
  nsys__fq_before(q, 2 * node, nl, mid, r);
  nsys__fq_before(q, 2 * node + 1, mid, nr, r);
}

static uint32_t nsys__lower_i64(const int64_t *v, uint32_t n, int64_t x) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (v[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/* Every NCCL kernel of the device overlapping [gs, ge): count and the
 * min/max fraction of each covered by compute inside the window. */
static void nsys__comm_fractions(const nsys__comm *k, const nsys_ivls *compute, int64_t gs, int64_t ge,
                                 nsys__stage *S) {
  if (!k->n) return;
  nsys__fq q = {k, compute, gs, ge, 0, 0, 0};
  uint32_t i0 = nsys__lower_i64(k->s, k->n, gs), i1 = nsys__lower_i64(k->s, k->n, ge);
  nsys__fq_before(&q, 1, 0, k->size, i0);
  nsys__fq_inside(&q, 1, 0, k->size, i0, i1);
  if (!q.count) return;
  if (!S->comm_kernels || q.mn < S->min_frac) S->min_frac = q.mn;
  if (!S->comm_kernels || q.mx > S->max_frac) S->max_frac = q.mx;
  S->comm_kernels += q.count;
}

/* ------------------------------------------- projected windows per thread */

/* Launching calls of one thread that have GPU ops, by start, and an
 * iterative segment tree (2n nodes) of: min op start, max op end, first call
 * (lowest position). A call is switched on once the sweep passes its end. */
typedef struct {
  uint32_t n;
  uint32_t *api;      /* position -> api index */
  int64_t *cs, *ce;   /* call start / end */
  int64_t *gmin, *gmax;
  uint32_t *first;    /* UINT32_MAX: none on */
} nsys__calls;

static void nsys__tree_set(nsys__calls *t, uint32_t p, int64_t mn, int64_t mx) {
  size_t i = (size_t)p + t->n;
  t->gmin[i] = mn;
  t->gmax[i] = mx;
  t->first[i] = p;
  for (i /= 2; i >= 1; i /= 2) {
    t->gmin[i] = NSYS_MIN(t->gmin[2 * i], t->gmin[2 * i + 1]);
    t->gmax[i] = NSYS_MAX(t->gmax[2 * i], t->gmax[2 * i + 1]);
    t->first[i] = NSYS_MIN(t->first[2 * i], t->first[2 * i + 1]);
  }
}

static void nsys__tree_query(const nsys__calls *t, uint32_t l, uint32_t r, int64_t *mn, int64_t *mx,
                             uint32_t *first) {
  *mn = INT64_MAX;
  *mx = INT64_MIN;
  *first = UINT32_MAX;
  for (size_t a = (size_t)l + t->n, b = (size_t)r + t->n; a < b; a /= 2, b /= 2) {
    if (a & 1) {
      *mn = NSYS_MIN(*mn, t->gmin[a]);
      *mx = NSYS_MAX(*mx, t->gmax[a]);
      *first = NSYS_MIN(*first, t->first[a]);
      a++;
    }
    if (b & 1) {
      b--;
      *mn = NSYS_MIN(*mn, t->gmin[b]);
      *mx = NSYS_MAX(*mx, t->gmax[b]);
      *first = NSYS_MIN(*first, t->first[b]);
    }
  }
}

static int nsys__cmp_by_key(const void *a, const void *b, void *ctx) {
  const int64_t *key = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int64_t kx = key[x], ky = key[y];
  if (kx != ky) return kx < ky ? -1 : 1;
  return x < y ? -1 : x > y;
}

typedef struct {
  uint32_t r;  /* nvtx index */
  int64_t end; /* range end */
} nsys__q;

static int nsys__cmp_q(const void *a, const void *b) {
  const nsys__q *x = a, *y = b;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

/* Sorts idx[0..n) by key (stable on index); returns false (and does
 * nothing) when the keys are already in order. */
static bool nsys__order_by(uint32_t *idx, uint32_t n, const int64_t *key) {
  bool sorted = true;
  for (uint32_t i = 1; i < n && sorted; i++)
    if (key[i] < key[i - 1]) sorted = false;
  if (sorted) return false;
  for (uint32_t i = 0; i < n; i++) idx[i] = i;
  qsort_r(idx, n, sizeof *idx, nsys__cmp_by_key, (void *)key);
  return true;
}

/* Op window of one call: min start, max end of its ops. */
static void nsys__call_window(const nsys_index *ix, uint32_t k, int64_t *mn, int64_t *mx) {
  *mn = INT64_MAX;
  *mx = INT64_MIN;
  for (int32_t op = ix->api.first_op[k]; op >= 0; op = ix->op_next[op]) {
    *mn = NSYS_MIN(*mn, ix->ops.start[op]);
    *mx = NSYS_MAX(*mx, ix->ops.end[op]);
  }
}

typedef struct {
  nsys_actx *c;
  nsys__stages *stages;
  const nsys_devunions *du; /* every device's unions (nsys_actx_devunions_all) */
  uint32_t n_du;
  nsys__comm *comm; /* per index of du */
  const uint8_t *match;
} nsys__run;

static nsys__comm *nsys__comm_of(nsys__run *R, int32_t dev, const nsys_devunions **u) {
  *u = nsys_actx_devunions(R->c, dev);
  if (*u < R->du || *u >= R->du + R->n_du) return NULL; /* no tracks */
  nsys__comm *k = &R->comm[*u - R->du];
  if (!k->built) {
    k->device = dev;
    nsys__comm_build(R->c, k, *u);
  }
  return k;
}

/* One stage range's projected window: accumulate into its (name, device) row. */
static void nsys__stage_range(nsys__run *R, uint32_t nm, int32_t dev, int64_t gs, int64_t ge) {
  const nsys_devunions *u;
  nsys__comm *k = nsys__comm_of(R, dev, &u);
  nsys__stage *S = nsys__stage_get(R->stages, nm, dev);
  int64_t cm = nsys_ivls_len_in(&u->comm, gs, ge), ov = nsys_ivls_len_in(&u->both, gs, ge);
  S->ranges++;
  S->gpu += ge - gs;
  S->comm += cm;
  S->overlap += ov;
  S->exposed += cm - ov;
  if (k) nsys__comm_fractions(k, &u->compute, gs, ge, S);
}

static bool nsys__thread(nsys__run *R, uint32_t t) {
  nsys_actx *c = R->c;
  const nsys_index *ix = c->ix;
  const nsys_host_thread *th = &ix->threads[t];
  uint32_t ns = ix->strings.count;
  /* the thread's stage ranges in the window */
  nsys__q *q = NULL;
  uint32_t nq = 0;
  for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count; r++) {
    uint32_t nm = ix->nvtx.name[r];
    if (nm >= ns || !R->match[nm]) continue;
    if (ix->nvtx.end[r] < c->t0 || ix->nvtx.start[r] >= c->t1) continue;
    if (!q) q = nsys_xmalloc(((size_t)th->nvtx_count + 1) * sizeof *q);
    q[nq++] = (nsys__q){r, ix->nvtx.end[r]};
  }
  if (!nq) return true;
  /* launching calls with GPU ops */
  nsys__calls T = {0};
  for (uint32_t k = th->api_first; k < th->api_first + th->api_count; k++)
    if (ix->api.first_op[k] >= 0) T.n++;
  uint32_t n = T.n;
  T.api = nsys_xmalloc(((size_t)n + 1) * sizeof *T.api);
  T.cs = nsys_xmalloc(((size_t)n + 1) * sizeof *T.cs);
  T.ce = nsys_xmalloc(((size_t)n + 1) * sizeof *T.ce);
  T.gmin = nsys_xmalloc((2 * (size_t)n + 1) * sizeof *T.gmin);
  T.gmax = nsys_xmalloc((2 * (size_t)n + 1) * sizeof *T.gmax);
  T.first = nsys_xmalloc((2 * (size_t)n + 1) * sizeof *T.first);
  uint32_t p = 0;
  for (uint32_t k = th->api_first; k < th->api_first + th->api_count; k++) {
    if (ix->api.first_op[k] < 0) continue;
    T.api[p] = k;
    T.cs[p] = ix->api.start[k];
    T.ce[p] = ix->api.end[k];
    p++;
  }
  uint32_t *by_end = nsys_xmalloc(((size_t)n + 1) * sizeof *by_end);
  /* Calls that do not overlap one another (the usual case) end in start
   * order: the calls starting in [rs, re] that also end by re are then a
   * prefix of them, and the tree is built once, bottom-up. Otherwise calls
   * are switched on in end order as the sweep passes their end. */
  bool sweep = nsys__order_by(by_end, n, T.ce);
  if (sweep) { /* every call off until the sweep passes its end */
    for (size_t i = 0; i < 2 * (size_t)n + 1; i++) {
      T.gmin[i] = INT64_MAX;
      T.gmax[i] = INT64_MIN;
      T.first[i] = UINT32_MAX;
    }
  } else { /* every node written below: leaves, then parents */
    T.gmin[0] = INT64_MAX; /* node 0 is never read; keep it defined */
    T.gmax[0] = INT64_MIN;
    T.first[0] = UINT32_MAX;
    for (uint32_t pp = 0; pp < n; pp++) {
      size_t leaf = (size_t)pp + n;
      nsys__call_window(ix, T.api[pp], &T.gmin[leaf], &T.gmax[leaf]);
      T.first[leaf] = pp;
    }
    for (size_t i = n; i-- > 1;) {
      T.gmin[i] = NSYS_MIN(T.gmin[2 * i], T.gmin[2 * i + 1]);
      T.gmax[i] = NSYS_MAX(T.gmax[2 * i], T.gmax[2 * i + 1]);
      T.first[i] = NSYS_MIN(T.first[2 * i], T.first[2 * i + 1]);
    }
  }
  if (nq > 1 && sweep) qsort(q, nq, sizeof *q, nsys__cmp_q);
  uint32_t on = 0;
  bool ok = true;
  for (uint32_t i = 0; i < nq; i++) {
    if (nsys_actx_stop(c, i << 6)) {
      ok = false;
      break;
    }
    uint32_t r = q[i].r;
    int64_t rs = ix->nvtx.start[r], re = ix->nvtx.end[r];
    /* switch on every call that ends by the range's end */
    for (; sweep && on < n && T.ce[by_end[on]] <= re; on++) {
      int64_t mn, mx;
      nsys__call_window(ix, T.api[by_end[on]], &mn, &mx);
      nsys__tree_set(&T, by_end[on], mn, mx);
    }
    /* calls starting in [rs, re] (and, without the sweep, ending by re) */
    uint32_t lo = nsys__lower_i64(T.cs, n, rs), hi = nsys__lower_i64(T.cs, n, re == INT64_MAX ? re : re + 1);
    if (re == INT64_MAX) hi = n;
    if (!sweep && re != INT64_MAX) hi = NSYS_MIN(hi, nsys__lower_i64(T.ce, n, re + 1));
    int64_t gs, ge;
    uint32_t first;
    nsys__tree_query(&T, lo, hi, &gs, &ge, &first);
    if (first == UINT32_MAX) continue;
    int32_t dev = ix->tracks[ix->ops.track[ix->api.first_op[T.api[first]]]].device;
    if (!nsys_actx_device_selected(c, dev)) continue;
    nsys__stage_range(R, ix->nvtx.name[r], dev, gs, ge);
  }
  free(by_end);
  free(T.api);
  free(T.cs);
  free(T.ce);
  free(T.gmin);
  free(T.gmax);
  free(T.first);
  free(q);
  return ok;
}

static int nsys__cmp_stage(const void *a, const void *b) {
  const nsys__stage *x = a, *y = b;
  if (x->exposed != y->exposed) return x->exposed > y->exposed ? -1 : 1;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* A stage range's name: `stagePattern`'s '|'-separated alternatives, each
 * contained (case-insensitive); by default forward/backward/fwd/bwd/stage. */
static bool nsys__is_stage(const char *s, const void *ud) {
  const char *pat = ud;
  if (!pat || !*pat)
    return nsys_icontains(s, "forward") || nsys_icontains(s, "backward") || nsys_icontains(s, "fwd") ||
           nsys_icontains(s, "bwd") || nsys_icontains(s, "stage");
  for (const char *p = pat; *p;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    char alt[128];
    if (len >= sizeof alt) len = sizeof alt - 1;
    memcpy(alt, p, len);
    alt[len] = '\0';
    if (len && nsys_icontains(s, alt)) return true;
    p = bar ? bar + 1 : p + len;
  }
  return false;
}

bool nsys_an_stage_overlap(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  const char *pat = nsys_actx_str(c, "stagePattern");
  uint8_t *match = nsys_nvtx_names_where(ix, nsys__is_stage, pat);
  const nsys_devunions *du;
  uint32_t n_du = nsys_actx_devunions_all(c, &du);
  nsys__stages st = {0};
  nsys__run R = {c, &st, du, n_du, nsys_xcalloc((size_t)n_du + 1, sizeof(nsys__comm)), match};
  bool ok = true;
  for (uint32_t t = 0; t < ix->n_threads && ok; t++) ok = nsys__thread(&R, t);
  for (uint32_t d = 0; d < n_du; d++) nsys__comm_free(&R.comm[d]);
  free(R.comm);
  free(match);
  if (!ok) {
    free(st.v);
    free(st.slot);
    nsys_task_fail_cancelled(c->task);
    return false;
  }
  uint32_t nst = st.n;
  if (nst > 1) qsort(st.v, nst, sizeof *st.v, nsys__cmp_stage);
  int64_t exposed = 0;
  for (uint32_t i = 0; i < nst; i++) {
    const nsys__stage *S = &st.v[i];
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_i64(o, ST_DEVICE, S->device);
    nsys_rset_str(o, ST_STAGE, nsys_strtab_get(&ix->strings, S->name));
    nsys_rset_i64(o, ST_RANGES, S->ranges);
    nsys_rset_i64(o, ST_GPU_NS, S->gpu);
    nsys_rset_i64(o, ST_COMM_NS, S->comm);
    nsys_rset_i64(o, ST_EXPOSED_COMM_NS, S->exposed);
    if (S->comm > 0) nsys_rset_f64(o, ST_OVERLAP_PCT, nsys_round2(100.0 * (double)S->overlap / (double)S->comm));
    else nsys_rset_null(o, ST_OVERLAP_PCT);
    nsys_rset_i64(o, ST_COMM_KERNELS, S->comm_kernels);
    if (S->comm_kernels) {
      nsys_rset_f64(o, ST_MIN_KERNEL_OVERLAP_PCT, nsys_round2(100.0 * S->min_frac));
      nsys_rset_f64(o, ST_MAX_KERNEL_OVERLAP_PCT, nsys_round2(100.0 * S->max_frac));
    } else {
      nsys_rset_null(o, ST_MIN_KERNEL_OVERLAP_PCT);
      nsys_rset_null(o, ST_MAX_KERNEL_OVERLAP_PCT);
    }
    exposed += S->exposed;
  }
  nsys_rset_i64(summary, STS_STAGES, nst);
  nsys_rset_i64(summary, STS_EXPOSED_COMM_NS, exposed);
  nsys_rset_str(summary, STS_STAGE_PATTERN, pat && *pat ? pat : "forward|backward|fwd|bwd|stage");
  free(st.v);
  free(st.slot);
  return true;
}
