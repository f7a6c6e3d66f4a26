/* One side of profile/diff: its iterations on one device, the warm-up rule,
 * per-iteration components from whole-time unions, and per-key totals of
 * the steady window (kernel, family, launch configuration, NVTX path,
 * stream, device). O(n log n) in ops, API calls and NVTX ranges. */
#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/amemo.h"
#include "analysis/analyses.h"
#include "analysis/diff.h"
#include "common/strtab.h"
#include "common/util.h"
#include "profile/profile.h"

const char *const nsys_diff_kind_names[NSYS_DK__COUNT] = {"launchConfig", "kernel", "family",
                                                          "nvtx",         "stream", "device"};

int nsys_diff_kind_find(const char *name) {
  for (int k = 0; k < NSYS_DK__COUNT; k++)
    if (!strcmp(nsys_diff_kind_names[k], name)) return k;
  return -1;
}

/* The families, in the order their patterns are tried. */
static const struct {
  const char *family;
  const char *pat[6];
} nsys__families[] = {
    {"gemm", {"gemm", "cutlass", "cublas", "xmma", "matmul", "gemv"}},
    {"attention", {"flash", "fmha", "attention", "attn", NULL}},
    {"norm", {"norm", NULL}},
    {"softmax", {"softmax", NULL}},
    {"conv", {"conv", "winograd", NULL}},
    {"reduce", {"reduce", NULL}},
    {"elementwise", {"elementwise", NULL}},
    {"triton", {"triton", NULL}},
};
#define NSYS__NFAM (NSYS_ARRAY_LEN(nsys__families) + 2) /* + nccl, other */

static uint8_t nsys__family_idx(const char *name) {
  if (nsys_name_is_nccl(name)) return 0;
  for (size_t f = 0; f < NSYS_ARRAY_LEN(nsys__families); f++)
    for (int k = 0; k < 6 && nsys__families[f].pat[k]; k++)
      if (nsys_icontains(name, nsys__families[f].pat[k])) return (uint8_t)(f + 1);
  return (uint8_t)(NSYS__NFAM - 1);
}

static const char *nsys__family_name(uint8_t i) {
  return i == 0 ? "nccl" : i == NSYS__NFAM - 1 ? "other" : nsys__families[i - 1].family;
}

const char *nsys_diff_family(const char *name) { return nsys__family_name(nsys__family_idx(name)); }

/* ---- iterations --------------------------------------------------------- */

static bool nsys__pred_copy(nsys_actx *c, uint32_t op) {
  uint8_t k = c->ix->ops.kind[op];
  return k == NSYS_OP_MEMCPY || k == NSYS_OP_MEMSET;
}

static int nsys__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Warm-up (docs/analyses.md#diff): with >= 4 iterations the first always,
 * then each next one while it is slower than the late half's median by
 * more than max(3 robust sigmas, 5%), at most half of them. */
static uint32_t nsys__warmup(const nsys_diff_iter *it, uint32_t n) {
  if (n < 4) return 0;
  uint32_t h = n / 2, m = n - h;
  int64_t *v = nsys_xmalloc((size_t)m * sizeof *v);
  for (uint32_t i = 0; i < m; i++) v[i] = it[h + i].v[NSYS_DC_STEP];
  nsys_diff_stats s = nsys_diff_stats_of(v, m);
  free(v);
  double tol = 3 * 1.4826 * (double)s.mad;
  if (tol < 0.05 * (double)s.median) tol = 0.05 * (double)s.median;
  uint32_t w = 1;
  while (w < h && (double)it[w].v[NSYS_DC_STEP] > (double)s.median + tol) w++;
  return w;
}

/* Gap-based windows are steps only when they repeat (docs/analyses.md#diff):
 * at least 3 after the first, robust spread 1.4826·MAD/median <= 25%. */
static bool nsys__regular(const nsys_diff_iter *it, uint32_t n) {
  if (n < 4) return false;
  int64_t *v = nsys_xmalloc((size_t)n * sizeof *v);
  for (uint32_t i = 1; i < n; i++) v[i - 1] = it[i].v[NSYS_DC_STEP];
  nsys_diff_stats st = nsys_diff_stats_of(v, n - 1);
  free(v);
  return st.median > 0 && 1.4826 * (double)st.mad <= 0.25 * (double)st.median;
}

/* Iteration index holding time t (by start), or -1. */
static int64_t nsys__iter_at(const nsys_diff_iter *it, uint32_t n, int64_t t) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (it[m].start <= t) lo = m + 1;
    else hi = m;
  }
  if (!lo || t >= it[lo - 1].end) return -1;
  return lo - 1;
}

static bool nsys__iterations(nsys_diff_side *s, nsys_actx *c) {
  const nsys_index *ix = c->ix;
  nsys_iter *its = NULL;
  const char *method = "none";
  uint32_t n = nsys_detect_iterations(c, &its, &method);
  if (c->stopped) {
    free(its);
    return false;
  }
  s->method = n ? method : "none";
  /* the device with the most iterations (the lowest on a tie) */
  int32_t best = -1;
  uint32_t best_n = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    while (j < n && its[j].device == its[i].device) j++;
    if (j - i > best_n || (j - i == best_n && its[i].device < best)) best = its[i].device, best_n = j - i;
    i = j;
  }
  s->device = best;
  s->iters = nsys_xcalloc((size_t)best_n + 1, sizeof *s->iters);
  for (uint32_t i = 0; i < n; i++)
    if (its[i].device == best) {
      nsys_diff_iter *d = &s->iters[s->n_iters++];
      d->start = its[i].start;
      d->end = its[i].end;
      d->cpu_start = its[i].cpu_start;
      d->cpu_end = its[i].cpu_end;
      d->kernels = its[i].kernels;
      d->v[NSYS_DC_STEP] = its[i].end - its[i].start;
    }
  if (s->n_iters && !strcmp(s->method, "gap") && !nsys__regular(s->iters, s->n_iters)) {
    s->irregular = true; /* a cut window without steps: compared whole */
    s->n_iters = 0;
    s->device = -1;
    s->method = "none";
  }
  if (!s->n_iters) {
    free(its);
    return true;
  }
  /* a step runs from the previous one's end: the gap before an iteration's
   * GPU work (a data-loader stall) is part of it; the first keeps its GPU window */
  for (uint32_t i = s->n_iters; i-- > 1;)
    if (s->iters[i - 1].end < s->iters[i].start) {
      s->iters[i].start = s->iters[i - 1].end;
      s->iters[i].v[NSYS_DC_STEP] = s->iters[i].end - s->iters[i].start;
    }
  /* components from the device's unions over all time: two binary searches per iteration */
  nsys_ivls u[5];
  for (int k = 0; k < 5; k++) nsys_ivls_init(&u[k]);
  nsys_op_pred preds[4] = {nsys_pred_compute, nsys_pred_comm, nsys_pred_any, nsys__pred_copy};
  nsys_ivls *outs[4] = {&u[0], &u[1], &u[2], &u[3]};
  nsys_actx_device_unions(c, best, ix->span_start, ix->span_end + 1, preds, outs, 4);
  nsys_ivls_intersect(&u[0], &u[1], &u[4]);
  for (int k = 0; k < 5; k++) nsys_ivls_index(&u[k]);
  for (uint32_t i = 0; i < s->n_iters; i++) {
    nsys_diff_iter *d = &s->iters[i];
    int64_t a = d->start, b = d->end;
    d->v[NSYS_DC_COMPUTE] = nsys_ivls_len_in(&u[0], a, b);
    d->v[NSYS_DC_NCCL] = nsys_ivls_len_in(&u[1], a, b) - nsys_ivls_len_in(&u[4], a, b);
    d->v[NSYS_DC_IDLE] = (b - a) - nsys_ivls_len_in(&u[2], a, b);
    d->v[NSYS_DC_COPIES] = nsys_ivls_len_in(&u[3], a, b);
  }
  for (int k = 0; k < 5; k++) nsys_ivls_free(&u[k]);
  /* launch overhead: the launch calls of the device's kernels, by the iteration of the kernel */
  for (uint32_t t = 0; t < ix->n_tracks && !c->stopped; t++) {
    if (ix->tracks[t].device != best) continue;
    for (uint32_t op = ix->tracks[t].first; op < ix->tracks[t].first + ix->tracks[t].count; op++) {
      if (nsys_actx_stop(c, op)) break;
      int32_t api = ix->ops.api[op];
      if (api < 0 || ix->api.first_op[api] != (int32_t)op || nsys_actx_api_class(c, (uint32_t)api) != NSYS_API_LAUNCH)
        continue;
      int64_t k = nsys__iter_at(s->iters, s->n_iters, ix->ops.start[op]);
      if (k >= 0) s->iters[k].v[NSYS_DC_LAUNCH] += ix->api.end[api] - ix->api.start[api];
    }
  }
  if (c->stopped) return false;
  s->warmup = nsys__warmup(s->iters, s->n_iters);
  for (uint32_t i = 0; i < s->warmup; i++) s->iters[i].warmup = true;
  s->steady = s->n_iters - s->warmup;
  const nsys_diff_iter *f = &s->iters[s->warmup], *l = &s->iters[s->n_iters - 1];
  s->steady_win = (nsys_diff_win){true, f->start, l->end};
  s->steady_cpu = (nsys_diff_win){true, f->cpu_start < f->start ? f->cpu_start : f->start,
                                  l->cpu_end > l->end ? l->cpu_end : l->end};
  /* the median steady iteration: the lower middle by step time (then by start) */
  int64_t *key = nsys_xmalloc((size_t)s->steady * 2 * sizeof *key);
  for (uint32_t i = 0; i < s->steady; i++) {
    key[2 * i] = s->iters[s->warmup + i].v[NSYS_DC_STEP];
    key[2 * i + 1] = s->warmup + i;
  }
  qsort(key, s->steady, 2 * sizeof *key, nsys__cmp_i64); /* by step time; equal ones by index below */
  uint32_t mi = (s->steady - 1) / 2;
  int64_t med = key[2 * mi], first = INT64_MAX;
  for (uint32_t i = 0; i < s->steady; i++)
    if (key[2 * i] == med && key[2 * i + 1] < first) first = key[2 * i + 1];
  s->median_iter = (uint32_t)first;
  free(key);
  /* every other device with as many iterations: its own steady and median windows */
  s->dev_steady = nsys_xcalloc((size_t)s->n_devices + 1, sizeof *s->dev_steady);
  s->dev_median = nsys_xcalloc((size_t)s->n_devices + 1, sizeof *s->dev_median);
  for (uint32_t i = 0, di = 0; i < n;) {
    uint32_t j = i;
    while (j < n && its[j].device == its[i].device) j++;
    while (di < s->n_devices && s->devices[di] < its[i].device) di++;
    if (di < s->n_devices && s->devices[di] == its[i].device && j - i == s->n_iters) {
      s->dev_steady[di] = (nsys_diff_win){true, its[i + s->warmup].start, its[j - 1].end};
      s->dev_median[di] = (nsys_diff_win){true, its[i + s->median_iter].start, its[i + s->median_iter].end};
    }
    i = j;
  }
  free(its);
  return true;
}

/* ---- per-key totals ----------------------------------------------------- */

typedef struct {
  int64_t ns, count;
  nsys_diff_win med, first; /* first occurrence in the median iteration / anywhere */
} nsys__acc;

static void nsys__acc_add(nsys__acc *a, int64_t s, int64_t e, bool in_med) {
  a->ns += e - s;
  a->count++;
  if (!a->first.set || s < a->first.start) a->first = (nsys_diff_win){true, s, e};
  if (in_med && (!a->med.set || s < a->med.start)) a->med = (nsys_diff_win){true, s, e};
}

static nsys_diff_agg *nsys__push(nsys_diff_side *s, nsys_diff_kind k, uint32_t *cap, char *key, const nsys__acc *a) {
  if (s->n_agg[k] == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    s->agg[k] = nsys_xrealloc(s->agg[k], (size_t)*cap * sizeof *s->agg[k]);
  }
  nsys_diff_agg *g = &s->agg[k][s->n_agg[k]++];
  memset(g, 0, sizeof *g);
  g->key = key;
  g->ns = a->ns;
  g->count = a->count;
  g->ev = a->med.set ? a->med : a->first;
  g->device = -1;
  return g;
}

static int nsys__cmp_agg(const void *a, const void *b) {
  return strcmp(((const nsys_diff_agg *)a)->key, ((const nsys_diff_agg *)b)->key);
}

/* Sorts a kind by key, merging equal keys (truncated NVTX paths). */
static void nsys__sort_agg(nsys_diff_side *s, nsys_diff_kind k) {
  if (s->n_agg[k] < 2) return;
  qsort(s->agg[k], s->n_agg[k], sizeof *s->agg[k], nsys__cmp_agg);
  uint32_t w = 0;
  for (uint32_t i = 0; i < s->n_agg[k]; i++) {
    nsys_diff_agg *g = &s->agg[k][i];
    if (w && !strcmp(s->agg[k][w - 1].key, g->key)) {
      nsys_diff_agg *m = &s->agg[k][w - 1];
      m->ns += g->ns;
      m->count += g->count;
      if (g->ev.set && (!m->ev.set || g->ev.start < m->ev.start)) m->ev = g->ev;
      free(g->key);
      continue;
    }
    s->agg[k][w++] = *g;
  }
  s->n_agg[k] = w;
}


/* Kernel, family, stream and device totals over the ops starting in the steady window. */
/* The kernel names (display names) that ran in the steady window, dense:
 * memory per distinct name, not per string of the profile. */
typedef struct {
  uint32_t *dense; /* per strtab id: its dense index, or NSYS_STR_NONE */
  uint32_t *id;    /* per dense index: the strtab id */
  nsys__acc *acc;
  uint8_t *fam;
  uint32_t n, cap;
  uint32_t *samp; /* per dense index: up to NSYS__NSAMP kernel ops, evenly spaced over its occurrences */
  uint8_t *n_samp;
} nsys__names;

#define NSYS__NSAMP 16

static uint32_t nsys__name_slot(nsys__names *K, const nsys_index *ix, uint32_t nm) {
  if (K->dense[nm] != NSYS_STR_NONE) return K->dense[nm];
  if (K->n == K->cap) {
    K->cap = K->cap ? K->cap * 2 : 64;
    K->id = nsys_xrealloc(K->id, (size_t)K->cap * sizeof *K->id);
    K->acc = nsys_xrealloc(K->acc, (size_t)K->cap * sizeof *K->acc);
    K->fam = nsys_xrealloc(K->fam, (size_t)K->cap);
  }
  K->id[K->n] = nm;
  memset(&K->acc[K->n], 0, sizeof *K->acc);
  K->fam[K->n] = nsys__family_idx(nsys_strtab_get(&ix->strings, nm));
  return K->dense[nm] = K->n++;
}

static void nsys__names_free(nsys__names *K) {
  free(K->samp);
  free(K->n_samp);
  free(K->dense);
  free(K->id);
  free(K->acc);
  free(K->fam);
}

static bool nsys__op_totals(nsys_diff_side *s, nsys_actx *c, nsys__names *K) {
  const nsys_index *ix = c->ix;
  /* per track: its device's steady and median windows (the side's when the device has none) */
  nsys_diff_win *tw = nsys_xmalloc(((size_t)ix->n_tracks + 1) * 2 * sizeof *tw);
  nsys_diff_win med = s->steady ? (nsys_diff_win){true, s->iters[s->median_iter].start, s->iters[s->median_iter].end}
                                : (nsys_diff_win){0};
  for (uint32_t t = 0, di = 0; t < ix->n_tracks; t++) {
    while (di < s->n_devices && s->devices[di] < ix->tracks[t].device) di++;
    bool own = s->dev_steady && di < s->n_devices && s->devices[di] == ix->tracks[t].device && s->dev_steady[di].set;
    tw[2 * t] = own ? s->dev_steady[di] : s->steady_win;
    tw[2 * t + 1] = own ? s->dev_median[di] : med;
  }
  nsys__acc fam[NSYS__NFAM] = {{0}};
  nsys__acc *trk = nsys_xcalloc((size_t)ix->n_tracks + 1, sizeof *trk);
  for (uint32_t op = 0; op < ix->ops.n; op++) {
    if (nsys_actx_stop(c, op)) break;
    int64_t st = ix->ops.start[op], en = ix->ops.end[op];
    const nsys_diff_win *w = &tw[2 * ix->ops.track[op]];
    if (st < w[0].start || st >= w[0].end) continue;
    bool in_med = w[1].set && st >= w[1].start && st < w[1].end;
    nsys__acc_add(&trk[ix->ops.track[op]], st, en, in_med);
    uint8_t k = ix->ops.kind[op];
    if (k != NSYS_OP_KERNEL && k != NSYS_OP_GRAPH) continue;
    uint32_t nm = nsys_op_display_name(ix, op);
    if (nm >= ix->strings.count) continue;
    uint32_t k2 = nsys__name_slot(K, ix, nm);
    nsys__acc_add(&K->acc[k2], st, en, in_med);
    nsys__acc_add(&fam[K->fam[k2]], st, en, in_med);
  }
  /* second pass: the kernel ops of each name at occurrences i·count/NSAMP (launch configurations) */
  K->samp = nsys_xmalloc(((size_t)K->n + 1) * NSYS__NSAMP * sizeof *K->samp);
  K->n_samp = nsys_xcalloc((size_t)K->n + 1, 1);
  int64_t *seen = nsys_xcalloc((size_t)K->n + 1, sizeof *seen);
  for (uint32_t op = 0; op < ix->ops.n && !c->stopped; op++) {
    if (nsys_actx_stop(c, op) || ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    int64_t st = ix->ops.start[op];
    const nsys_diff_win *w = &tw[2 * ix->ops.track[op]];
    uint32_t nm = nsys_op_display_name(ix, op);
    if (st < w[0].start || st >= w[0].end || nm >= ix->strings.count) continue;
    uint32_t k2 = K->dense[nm];
    int64_t cnt = K->acc[k2].count, i = seen[k2]++;
    uint8_t *ns = &K->n_samp[k2];
    if (*ns < NSYS__NSAMP && i * NSYS__NSAMP >= (int64_t)*ns * cnt) K->samp[(size_t)k2 * NSYS__NSAMP + (*ns)++] = op;
  }
  free(seen);
  uint32_t cap[NSYS_DK__COUNT] = {0};
  for (uint32_t k2 = 0; k2 < K->n && !c->stopped; k2++) {
    nsys_diff_agg *g = nsys__push(s, NSYS_DK_KERNEL, &cap[NSYS_DK_KERNEL],
                                  nsys_xstrdup(nsys_strtab_get(&ix->strings, K->id[k2])), &K->acc[k2]);
    g->family = nsys__family_name(K->fam[k2]);
  }
  for (uint8_t f = 0; f < NSYS__NFAM; f++)
    if (fam[f].count) nsys__push(s, NSYS_DK_FAMILY, &cap[NSYS_DK_FAMILY], nsys_xstrdup(nsys__family_name(f)), &fam[f]);
  /* streams; devices sum their streams (tracks are sorted by device) */
  for (uint32_t t = 0; t < ix->n_tracks;) {
    int32_t dev = ix->tracks[t].device;
    nsys__acc d = {0};
    for (; t < ix->n_tracks && ix->tracks[t].device == dev; t++) {
      nsys__acc *a = &trk[t];
      if (!a->count) continue;
      nsys_diff_agg *g = nsys__push(s, NSYS_DK_STREAM, &cap[NSYS_DK_STREAM],
                                    nsys_xasprintf("%d/%lld", dev, (long long)ix->tracks[t].stream), a);
      g->device = dev;
      g->stream = ix->tracks[t].stream;
      d.ns += a->ns;
      d.count += a->count;
      if (a->first.set && (!d.first.set || a->first.start < d.first.start)) d.first = a->first;
      if (a->med.set && (!d.med.set || a->med.start < d.med.start)) d.med = a->med;
    }
    if (d.count) nsys__push(s, NSYS_DK_DEVICE, &cap[NSYS_DK_DEVICE], nsys_xasprintf("%d", dev), &d)->device = dev;
  }
  free(trk);
  free(tw);
  return !c->stopped;
}

/* ---- NVTX paths ---------------------------------------------------------- */

#define NSYS__PATH_CAP 512

typedef struct {
  uint64_t *keys; /* (parent path + 1) << 32 | name, 0 = empty */
  uint32_t *ids, cap, n;
  int32_t *parent;
  uint32_t *name; /* id in `names` */
  char **str;
  nsys_strtab names; /* NVTX names with each digit run as '#' */
  uint32_t *norm;    /* per index strtab id: its id in `names` (NSYS_STR_NONE: not yet) */
} nsys__paths;

/* "train_step 12" -> "train_step #": one path for every iteration. */
static uint32_t nsys__norm_name(nsys__paths *P, const nsys_index *ix, uint32_t name) {
  if (name >= ix->strings.count) name = ix->strings.count; /* out of range: "" */
  if (P->norm[name] != NSYS_STR_NONE) return P->norm[name];
  const char *s = nsys_strtab_get(&ix->strings, name);
  char buf[NSYS__PATH_CAP];
  size_t n = 0;
  for (; *s && n < sizeof buf - 1; s++) {
    if (*s >= '0' && *s <= '9') {
      if (!n || buf[n - 1] != '#') buf[n++] = '#';
    } else {
      buf[n++] = *s;
    }
  }
  return P->norm[name] = nsys_strtab_intern(&P->names, buf, n);
}

static uint32_t nsys__path_intern(nsys__paths *P, int32_t parent, uint32_t name) {
  uint64_t key = ((uint64_t)(uint32_t)(parent + 1) << 32 | name) + 1;
  if ((P->n + 1) * 2 > P->cap) {
    uint32_t nc = P->cap ? P->cap * 2 : 1024;
    uint64_t *nk = nsys_xcalloc(nc, sizeof *nk);
    uint32_t *ni = nsys_xmalloc((size_t)nc * sizeof *ni);
    for (uint32_t i = 0; i < P->cap; i++)
      if (P->keys[i]) {
        uint32_t h = (uint32_t)((P->keys[i] * 0x9E3779B97F4A7C15ull) >> 32) & (nc - 1);
        while (nk[h]) h = (h + 1) & (nc - 1);
        nk[h] = P->keys[i];
        ni[h] = P->ids[i];
      }
    free(P->keys);
    free(P->ids);
    P->keys = nk;
    P->ids = ni;
    P->cap = nc;
    P->parent = nsys_xrealloc(P->parent, (size_t)nc / 2 * sizeof *P->parent);
    P->name = nsys_xrealloc(P->name, (size_t)nc / 2 * sizeof *P->name);
  }
  uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (P->cap - 1);
  while (P->keys[h] && P->keys[h] != key) h = (h + 1) & (P->cap - 1);
  if (P->keys[h]) return P->ids[h];
  P->keys[h] = key;
  P->ids[h] = P->n;
  P->parent[P->n] = parent;
  P->name[P->n] = name;
  return P->n++;
}

/* "outer > inner", capped at NSYS__PATH_CAP bytes (memoised along the chain). */
static const char *nsys__path_str(nsys__paths *P, uint32_t id) {
  if (P->str[id]) return P->str[id];
  /* the chain up to a known prefix, then down */
  uint32_t top = id, depth = 0;
  while (P->parent[top] >= 0 && !P->str[P->parent[top]]) top = (uint32_t)P->parent[top], depth++;
  uint32_t *chain = nsys_xmalloc(((size_t)depth + 1) * sizeof *chain);
  for (uint32_t k = id, i = depth + 1; i-- > 0; k = (uint32_t)P->parent[k]) chain[i] = k;
  for (uint32_t i = 0; i <= depth; i++) {
    uint32_t k = chain[i];
    const char *pre = P->parent[k] >= 0 ? P->str[P->parent[k]] : NULL;
    const char *nm = nsys_strtab_get(&P->names, P->name[k]);
    char buf[NSYS__PATH_CAP];
    if (pre && strlen(pre) + 3 < sizeof buf - 1) snprintf(buf, sizeof buf, "%s > %s", pre, nm);
    else snprintf(buf, sizeof buf, "%s", pre ? pre : nm);
    P->str[k] = nsys_xstrdup(buf);
  }
  free(chain);
  return P->str[id];
}

static bool nsys__nvtx_totals(nsys_diff_side *s, nsys_actx *c) {
  const nsys_index *ix = c->ix;
  uint32_t n = ix->nvtx.n;
  if (!n || !s->steady_cpu.set) return true;
  int64_t ws = s->steady_cpu.start, we = s->steady_cpu.end, ms = 0, me = 0;
  if (s->steady) {
    const nsys_diff_iter *m = &s->iters[s->median_iter];
    ms = m->cpu_start < m->start ? m->cpu_start : m->start;
    me = m->cpu_end > m->end ? m->cpu_end : m->end;
  }
  nsys__paths P = {0};
  nsys_strtab_init(&P.names);
  P.norm = nsys_xmalloc(((size_t)ix->strings.count + 1) * sizeof *P.norm);
  memset(P.norm, 0xFF, ((size_t)ix->strings.count + 1) * sizeof *P.norm);
  uint32_t *pid = nsys_xmalloc((size_t)n * sizeof *pid);
  uint8_t *done = nsys_xcalloc(n, 1);
  uint32_t *stack = NULL, sn = 0, scap = 0;
  for (uint32_t r = 0; r < n && !nsys_actx_stop(c, r); r++) {
    /* the chain up to a range with a path (parents usually come first) */
    sn = 0;
    for (int32_t k = (int32_t)r; k >= 0 && !done[k]; k = ix->nvtx.parent[k]) {
      if (sn == scap) stack = nsys_xrealloc(stack, (scap = scap ? scap * 2 : 64) * sizeof *stack);
      stack[sn++] = (uint32_t)k;
    }
    while (sn) {
      uint32_t k = stack[--sn];
      int32_t par = ix->nvtx.parent[k];
      pid[k] = nsys__path_intern(&P, par >= 0 ? (int32_t)pid[par] : -1, nsys__norm_name(&P, ix, ix->nvtx.name[k]));
      done[k] = 1;
    }
  }
  free(stack);
  free(done);
  /* self time: a range's duration less its children's (clamped at 0) */
  int64_t *self = nsys_xmalloc((size_t)n * sizeof *self);
  for (uint32_t r = 0; r < n; r++) self[r] = ix->nvtx.end[r] > ix->nvtx.start[r] ? ix->nvtx.end[r] - ix->nvtx.start[r] : 0;
  for (uint32_t r = 0; r < n; r++)
    if (ix->nvtx.parent[r] >= 0) self[ix->nvtx.parent[r]] -= ix->nvtx.end[r] > ix->nvtx.start[r] ? ix->nvtx.end[r] - ix->nvtx.start[r] : 0;
  nsys__acc *acc = nsys_xcalloc((size_t)P.n + 1, sizeof *acc);
  for (uint32_t r = 0; r < n && !c->stopped; r++) {
    int64_t st = ix->nvtx.start[r], en = ix->nvtx.end[r];
    int64_t mid = st + (en - st) / 2; /* by midpoint: other threads' ranges straddle the window's edges */
    if (en <= st || mid < ws || mid >= we) continue;
    nsys__acc_add(&acc[pid[r]], st, en, s->steady && mid >= ms && mid < me);
    acc[pid[r]].ns += (self[r] > 0 ? self[r] : 0) - (en - st);
  }
  free(self);
  P.str = nsys_xcalloc((size_t)P.n + 1, sizeof *P.str);
  uint32_t cap = 0;
  for (uint32_t k = 0; k < P.n && !c->stopped; k++)
    if (acc[k].count) nsys__push(s, NSYS_DK_NVTX, &cap, nsys_xstrdup(nsys__path_str(&P, k)), &acc[k]);
  for (uint32_t k = 0; k < P.n; k++) free(P.str[k]);
  free(P.str);
  free(P.keys);
  free(P.ids);
  free(P.parent);
  free(P.name);
  free(P.norm);
  nsys_strtab_free(&P.names);
  free(acc);
  free(pid);
  return !c->stopped;
}

/* ---- launch configurations (SQL) ---------------------------------------- */

static bool nsys__launch_better(const nsys_diff_launch *x, const nsys_diff_launch *y) {
  if (x->count != y->count) return x->count > y->count;
  return memcmp(x, y, offsetof(nsys_diff_launch, count)) < 0;
}

/* The dominant configuration of every kernel name that ran in the steady
 * window: the most frequent among its sampled occurrences (nsys__op_totals),
 * each read by rowid from the kernel table (O(names · log n), not a scan). */
static bool nsys__launch_configs(nsys_diff_side *s, nsys_actx *c, struct nsys_profile *p, const nsys__names *K) {
  char tbl[512];
  const nsys_index *ix = c->ix;
  if (!p || !K->n || !nsys_profile_table_sql(p, NSYS_TBL_KERNEL, tbl, sizeof tbl)) return true;
  static const char *const cols[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                                     "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"};
  nsys_strbuf q;
  nsys_strbuf_init(&q);
  nsys_strbuf_puts(&q, "SELECT ");
  for (size_t i = 0; i < NSYS_ARRAY_LEN(cols); i++)
    nsys_strbuf_printf(&q, "%s%s", i ? ", " : "", nsys_schema_has_column(p, NSYS_TBL_KERNEL, cols[i]) ? cols[i] : "0");
  nsys_strbuf_printf(&q, " FROM %s WHERE rowid = ?1", tbl);
  sqlite3_stmt *st = nsys_actx_prepare(c, q.data);
  nsys_strbuf_free(&q);
  if (!st) return false;
  uint32_t cap = 0;
  int rc = SQLITE_DONE;
  for (uint32_t k2 = 0; k2 < K->n && !nsys_actx_stop(c, k2); k2++) {
    nsys_diff_launch v[NSYS__NSAMP], best = {0};
    uint32_t nv = 0;
    for (uint32_t j = 0; j < K->n_samp[k2]; j++) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, ix->ops.rowid[K->samp[(size_t)k2 * NSYS__NSAMP + j]]);
      if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
        if (rc == SQLITE_DONE) continue;
        break;
      }
      nsys_diff_launch l = {0};
      for (int k = 0; k < 3; k++) {
        l.grid[k] = sqlite3_column_int64(st, k);
        l.block[k] = sqlite3_column_int64(st, 3 + k);
      }
      l.regs = sqlite3_column_int64(st, 6);
      l.smem = sqlite3_column_int64(st, 7) + sqlite3_column_int64(st, 8);
      uint32_t m = 0;
      while (m < nv && memcmp(&v[m], &l, offsetof(nsys_diff_launch, count))) m++;
      if (m == nv) v[nv++] = l;
      v[m].count++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) break;
    rc = SQLITE_DONE;
    for (uint32_t m = 0; m < nv; m++)
      if (nsys__launch_better(&v[m], &best)) best = v[m];
    if (best.count)
      nsys__push(s, NSYS_DK_LAUNCH, &cap, nsys_xstrdup(nsys_strtab_get(&ix->strings, K->id[k2])), &K->acc[k2])->launch =
          best;
  }
  sqlite3_finalize(st);
  if (c->stopped || nsys_task_cancelled(c->task)) return false;
  if (rc != SQLITE_DONE) return nsys_profile_sql_fail(p, c->task, rc, "kernel launch configurations");
  return true;
}

/* ---- the side ------------------------------------------------------------ */

static void nsys__gpu_model(nsys_diff_side *s, struct nsys_profile *p) {
  if (!p) return;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  for (int i = 0; i < p->info.n_gpus; i++) {
    const char *nm = p->info.gpus[i].name;
    if (!nm || !*nm) continue;
    bool seen = false;
    for (int j = 0; j < i && !seen; j++) seen = p->info.gpus[j].name && !strcmp(p->info.gpus[j].name, nm);
    if (!seen) nsys_strbuf_printf(&b, "%s%s", b.len ? ", " : "", nm);
  }
  s->gpu_model = b.len ? nsys_xstrdup(b.data) : NULL;
  nsys_strbuf_free(&b);
}

bool nsys_diff_side_build(nsys_diff_side *s, nsys_task *task, struct nsys_profile *p, const nsys_index *ix) {
  memset(s, 0, sizeof *s);
  s->device = -1;
  s->method = "none";
  s->span_start = ix->span_start;
  s->span_end = ix->span_end;
  if (p) {
    s->profile_id = nsys_xstrdup(p->id);
    s->file = p->path ? nsys_xstrdup(p->path) : NULL;
  }
  nsys__gpu_model(s, p);
  /* the profile's memo when an analysis built it (analysis/amemo.h):
   * device orders and unions, op and API classes, shared with the analyses */
  nsys_acache *memo = nsys_amemo_peek(p, ix);
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, nsys_analysis_find("iterations"), NULL)) return false;
  if (memo && memo->ix == ix) c.cache = memo;
  s->n_devices = nsys_actx_devices(&c, &s->devices);
  s->gpu_count = (int32_t)s->n_devices;
  bool ok = nsys__iterations(s, &c);
  if (ok && !s->steady) { /* no iterations: the whole profile is one step */
    s->steady_win = (nsys_diff_win){true, ix->span_start, ix->span_end + 1};
    s->steady_cpu = s->steady_win;
  }
  nsys__names K = {0};
  K.dense = nsys_xmalloc(((size_t)ix->strings.count + 1) * sizeof *K.dense);
  memset(K.dense, 0xFF, ((size_t)ix->strings.count + 1) * sizeof *K.dense);
  ok = ok && nsys__op_totals(s, &c, &K);
  ok = ok && nsys__nvtx_totals(s, &c);
  ok = ok && nsys__launch_configs(s, &c, p, &K);
  nsys__names_free(&K);
  for (int k = 0; ok && k < NSYS_DK__COUNT; k++) nsys__sort_agg(s, (nsys_diff_kind)k);
  if (!ok && !nsys_task_failed(task)) nsys_task_fail_cancelled(task);
  nsys_actx_dispose(&c);
  return ok;
}

/* n items of `size` bytes from src (room for n + 1), or NULL when src is. */
static void *nsys__dup_items(const void *src, size_t n, size_t size) {
  if (!src) return NULL;
  void *d = nsys_xcalloc(n + 1, size);
  if (n) memcpy(d, src, n * size);
  return d;
}

void nsys_diff_side_copy(nsys_diff_side *dst, const nsys_diff_side *src) {
  *dst = *src;
  dst->profile_id = src->profile_id ? nsys_xstrdup(src->profile_id) : NULL;
  dst->file = src->file ? nsys_xstrdup(src->file) : NULL;
  dst->gpu_model = src->gpu_model ? nsys_xstrdup(src->gpu_model) : NULL;
  dst->devices = nsys__dup_items(src->devices, src->n_devices, sizeof *src->devices);
  dst->iters = nsys__dup_items(src->iters, src->n_iters, sizeof *src->iters);
  dst->dev_steady = nsys__dup_items(src->dev_steady, src->n_devices, sizeof *src->dev_steady);
  dst->dev_median = nsys__dup_items(src->dev_median, src->n_devices, sizeof *src->dev_median);
  for (int k = 0; k < NSYS_DK__COUNT; k++) {
    dst->agg[k] = nsys__dup_items(src->agg[k], src->n_agg[k], sizeof *src->agg[k]);
    for (uint32_t i = 0; i < src->n_agg[k]; i++) dst->agg[k][i].key = nsys_xstrdup(src->agg[k][i].key);
  }
}

void nsys_diff_side_free(nsys_diff_side *s) {
  free(s->profile_id);
  free(s->file);
  free(s->gpu_model);
  free(s->devices);
  free(s->iters);
  free(s->dev_steady);
  free(s->dev_median);
  for (int k = 0; k < NSYS_DK__COUNT; k++) {
    for (uint32_t i = 0; i < s->n_agg[k]; i++) free(s->agg[k][i].key);
    free(s->agg[k]);
  }
  memset(s, 0, sizeof *s);
}
