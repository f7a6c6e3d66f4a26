/* top_kernels and kernel_launch_overhead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/klaunch.h"
#include "analysis/klaunch_sweep.h"
#include "analysis/kname.h"
#include "analysis/window.h"
#include "common/util.h"

/* Per track (n_tracks + 1 entries, caller frees): 1 when its device is selected. */
static uint8_t *nsys__tracks_selected(const nsys_actx *c) {
  const nsys_index *ix = c->ix;
  uint8_t *ok = nsys_xmalloc((size_t)ix->n_tracks + 1);
  for (uint32_t t = 0; t < ix->n_tracks; t++) ok[t] = nsys_actx_device_selected(c, ix->tracks[t].device);
  return ok;
}

/* Op i is a kernel starting in the window on a selected device (dev_ok: nsys__tracks_selected). */
static inline bool nsys__kernel_sel(const nsys_actx *c, const uint8_t *dev_ok, uint32_t i) {
  const nsys_index *ix = c->ix;
  return ix->ops.kind[i] == NSYS_OP_KERNEL && ix->ops.start[i] >= c->t0 && ix->ops.start[i] < c->t1 &&
         dev_ok[ix->ops.track[i]];
}

typedef struct {
  uint32_t name;
  uint32_t count;
  int64_t total;
  uint32_t key; /* the fast path's name key (kname.h) */
} nsys__kgroup;

/* Distinct (row, track) pairs, in the order first added (a hash set of the
 * keys and the list of them). */
typedef struct {
  uint64_t *key; /* (row << 32 | track) + 1, 0 = empty */
  size_t cap;
  uint64_t *list; /* row << 32 | track, first-added order */
  size_t n, lcap;
} nsys__pairset;

static size_t nsys__pairset_slot(uint64_t key, size_t cap) { return (size_t)nsys_mix64(key) & (cap - 1); }

static void nsys__pairset_add(nsys__pairset *s, uint32_t row, uint32_t track) {
  if ((s->n + 1) * 2 > s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 256;
    uint64_t *nk = nsys_xcalloc(nc, sizeof *nk);
    for (size_t j = 0; j < s->n; j++) {
      size_t h = nsys__pairset_slot(s->list[j] + 1, nc);
      while (nk[h]) h = (h + 1) & (nc - 1);
      nk[h] = s->list[j] + 1;
    }
    free(s->key);
    s->key = nk;
    s->cap = nc;
  }
  uint64_t v = ((uint64_t)row << 32) | track, key = v + 1;
  size_t h = nsys__pairset_slot(key, s->cap);
  while (s->key[h] && s->key[h] != key) h = (h + 1) & (s->cap - 1);
  if (s->key[h]) return;
  s->key[h] = key;
  if (s->n == s->lcap) {
    s->lcap = s->lcap ? s->lcap * 2 : 64;
    s->list = nsys_xrealloc(s->list, s->lcap * sizeof *s->list);
  }
  s->list[s->n++] = v;
}

/* One row of top_kernels: name group x, its duration statistics, its tracks (in the order first met). */
static void nsys__tk_row(nsys_actx *c, nsys_rtab *rows, const nsys__kgroup *x, const nsys_kstats *ks, int64_t total,
                         const uint32_t *trk, uint32_t ntrk) {
  const nsys_index *ix = c->ix;
  uint32_t k = x->name, ns = ix->strings.count;
  nsys_rec o = nsys_rtab_add(rows);
  nsys_rset_str(o, TK_NAME, k < ns ? nsys_strtab_get(&ix->strings, k) : "");
  nsys_rset_i64(o, TK_COUNT, x->count);
  nsys_rset_i64(o, TK_TOTAL_NS, x->total);
  nsys_rset_f64(o, TK_AVG_NS, ks->avg);
  nsys_rset_i64(o, TK_MIN_NS, ks->min);
  nsys_rset_i64(o, TK_MAX_NS, ks->max);
  nsys_rset_f64(o, TK_MEDIAN_NS, ks->median);
  nsys_rset_f64(o, TK_P95_NS, ks->p95);
  nsys_rset_f64(o, TK_STDDEV_NS, ks->stddev);
  nsys_rset_f64(o, TK_PCT_OF_GPU, total ? nsys_round2(100.0 * (double)x->total / (double)total) : 0);
  nsys_rset_bool(o, TK_NCCL, k < ns && nsys_name_is_nccl(nsys_strtab_get(&ix->strings, k)));
  nsys_rtab *st = nsys_rset_arr(o, TK_STREAMS);
  for (uint32_t j = 0; j < ntrk; j++) {
    nsys_rec so = nsys_rtab_add(st);
    nsys_rset_i64(so, TKST_DEVICE, ix->tracks[trk[j]].device);
    nsys_rset_i64(so, TKST_STREAM, ix->tracks[trk[j]].stream);
  }
}

static void nsys__tk_summary(nsys_actx *c, nsys_rec summary, uint64_t n, uint32_t ng, int64_t total, bool demangled) {
  /* GPU busy (union per device, summed) for context */
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  int64_t busy = 0;
  nsys_ivls u;
  nsys_ivls_init(&u);
  for (uint32_t d = 0; d < nd; d++) {
    busy += nsys_ivls_total(nsys_actx_device_union_ref(c, devs[d], nsys_pred_kernel, c->t0, c->t1, &u));
  }
  nsys_ivls_free(&u);
  free(devs);
  nsys_rset_i64(summary, TKS_KERNEL_COUNT, (int64_t)n);
  nsys_rset_i64(summary, TKS_DISTINCT_NAMES, ng);
  nsys_rset_i64(summary, TKS_TOTAL_KERNEL_NS, total);
  nsys_rset_i64(summary, TKS_GPU_BUSY_NS, busy);
  nsys_rset_str(summary, TKS_NAMES, demangled ? "demangled" : "short");
  nsys_rset_str(summary, TKS_PCT_BASIS, "sum of kernel durations in the window");
}

static int nsys__cmp_group_total(const void *a, const void *b) {
  const nsys__kgroup *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* top_kernels from the (name, track) index (kname.h): each name's count and
 * total in the window by two binary searches per (name, track) pair, the
 * shown names' durations gathered from their pairs' ranges (a name whose
 * kernels all lie in the window reads its whole-name statistics). The same
 * rows, in the same order, as the loop over the window's kernels. */
static bool nsys__top_kernels_fast(nsys_actx *c, const nsys_kname *kn, nsys_rtab *rows, nsys_rec summary, int64_t limit,
                                   bool demangled) {
  const nsys_index *ix = c->ix;
  uint32_t *lo = nsys_xmalloc(((size_t)kn->n_pairs + 1) * sizeof *lo);
  uint32_t *hi = nsys_xmalloc(((size_t)kn->n_pairs + 1) * sizeof *hi);
  nsys__kgroup *g = nsys_xmalloc(((size_t)kn->n_keys + 1) * sizeof *g);
  uint32_t ng = 0;
  uint64_t n = 0, total = 0;
  for (uint32_t j = 0; j < kn->n_keys && !nsys_actx_stop(c, j); j++) {
    uint64_t cnt = 0, tot = 0;
    for (uint32_t p = kn->kfirst[j]; p < kn->kfirst[j + 1]; p++) {
      if (!nsys_actx_device_selected(c, ix->tracks[kn->ptrack[p]].device)) {
        lo[p] = hi[p] = 0;
        continue;
      }
      nsys_kname_pair_range(kn, ix, p, c->t0, c->t1, &lo[p], &hi[p]);
      cnt += hi[p] - lo[p];
      tot += kn->psum[hi[p]] - kn->psum[lo[p]];
    }
    if (!cnt) continue;
    g[ng++] = (nsys__kgroup){kn->key[j], (uint32_t)cnt, (int64_t)tot, j};
    n += cnt;
    total += tot;
  }
  if (ng > 1) qsort(g, ng, sizeof *g, nsys__cmp_group_total);
  uint32_t shown = (limit > 0 && (uint64_t)limit < ng) ? (uint32_t)limit : ng;
  if (c->stopped) shown = 0; /* cancelled: nothing to report */
  uint32_t *trk = nsys_xmalloc(((size_t)kn->n_pairs + 1) * sizeof *trk);
  int64_t *d = NULL;
  size_t dcap = 0, bcap = 0;
  uint64_t *bm = NULL; /* nsys_kname_window_stats's scratch */
  for (uint32_t r = 0; r < shown && !nsys_actx_stop(c, r); r++) {
    uint32_t j = g[r].key, ntrk = 0;
    for (uint32_t p = kn->kfirst[j]; p < kn->kfirst[j + 1]; p++)
      if (hi[p] > lo[p]) trk[ntrk++] = kn->ptrack[p]; /* ascending: the order the loop meets them */
    nsys_kstats ks;
    if (g[r].count == kn->poff[kn->kfirst[j + 1]] - kn->poff[kn->kfirst[j]]) {
      ks = *nsys_kname_whole(kn, ix, j); /* every kernel of the name */
    } else if (!nsys_kname_window_stats(kn, ix, j, lo, hi, g[r].count, g[r].total, &bm, &bcap, &ks)) {
      if (g[r].count > dcap) d = nsys_xrealloc(d, (dcap = g[r].count) * sizeof *d);
      uint32_t m = 0;
      for (uint32_t p = kn->kfirst[j]; p < kn->kfirst[j + 1]; p++)
        for (uint32_t x = lo[p]; x < hi[p]; x++) d[m++] = nsys_op_dur(ix, kn->op[x]);
      nsys_sort_i64(d, m);
      nsys_kstats_sorted(d, m, g[r].total, &ks);
    }
    nsys__tk_row(c, rows, &g[r], &ks, (int64_t)total, trk, ntrk);
  }
  nsys__tk_summary(c, summary, n, ng, (int64_t)total, demangled);
  free(bm);
  free(d);
  free(trk);
  free(g);
  free(hi);
  free(lo);
  return true;
}

bool nsys_an_top_kernels(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  const char *names = nsys_actx_str(c, "names");
  bool demangled = names && strcmp(names, "demangled") == 0;
  if (names && !demangled && strcmp(names, "short") != 0) {
    nsys_task_fail(c->task, NSYS_E_INVALID_PARAMS, "params.params.names: expected short or demangled");
    return false;
  }
  int64_t limit = nsys_actx_int(c, "limit");
  /* the (name, track) index when built, or built for a large window (window.h) */
  const nsys_kname *kn =
      nsys_win_large(c) || nsys_win_peek(&c->cache->kname[demangled]) ? nsys_actx_kname(c, demangled) : NULL;
  if (kn) return nsys__top_kernels_fast(c, kn, rows, summary, limit, demangled);
  const uint32_t *nm = demangled ? ix->ops.full_name : ix->ops.name;
  uint32_t ns = ix->strings.count;
  /* pass 1: count and total per name (the device test per track, once) */
  uint8_t *dev_ok = nsys__tracks_selected(c);
  uint32_t *cnt = nsys_xcalloc((size_t)ns + 1, sizeof *cnt);
  int64_t *tot = nsys_xcalloc((size_t)ns + 1, sizeof *tot);
  uint64_t n = 0;
  int64_t total = 0;
  /* the window's ops only (window.h): O(k + log n) for k ops in it; the
   * names seen are listed, so nothing below walks the string table */
  uint32_t nr, ng = 0;
  nsys_oprange *rg = nsys_win_start_ranges(c, &nr);
  nsys__kgroup *g = NULL;
  size_t gcap = 0;
  for (uint32_t r = 0; r < nr; r++)
    for (uint32_t i = rg[r].lo; i < rg[r].hi && !nsys_actx_stop(c, i); i++) {
      if (!nsys__kernel_sel(c, dev_ok, i)) continue;
      uint32_t k = nm[i] < ns ? nm[i] : ns;
      int64_t d = nsys_op_dur(ix, i);
      if (!cnt[k]++) {
        if (ng == gcap) g = nsys_xrealloc(g, (gcap = gcap ? 2 * gcap : 64) * sizeof *g);
        g[ng++].name = k;
      }
      tot[k] += d;
      n++;
      total += d;
    }
  for (uint32_t j = 0; j < ng; j++) g[j] = (nsys__kgroup){g[j].name, cnt[g[j].name], tot[g[j].name], 0};
  if (ng > 1) qsort(g, ng, sizeof *g, nsys__cmp_group_total);
  uint32_t shown = (limit > 0 && (uint64_t)limit < ng) ? (uint32_t)limit : ng;
  /* pass 2: durations and tracks of the shown names only (slot: row + 1, 0 = not shown) */
  uint32_t *slot = nsys_xcalloc((size_t)ns + 1, sizeof *slot);
  uint64_t *off = nsys_xmalloc(((size_t)shown + 1) * sizeof *off), m = 0;
  for (uint32_t r = 0; r < shown; r++) {
    slot[g[r].name] = r + 1;
    off[r] = m;
    m += g[r].count;
  }
  off[shown] = m;
  int64_t *dur = nsys_xmalloc((m + 1) * sizeof *dur);
  uint64_t *pos = nsys_xmalloc(((size_t)shown + 1) * sizeof *pos);
  memcpy(pos, off, ((size_t)shown + 1) * sizeof *pos);
  uint32_t *last = nsys_xmalloc(((size_t)shown + 1) * sizeof *last); /* each row's last track met */
  for (uint32_t r = 0; r < shown; r++) last[r] = UINT32_MAX;
  nsys__pairset ps = {0};
  for (uint32_t q = 0; q < nr; q++)
    for (uint32_t i = rg[q].lo; i < rg[q].hi && !nsys_actx_stop(c, i); i++) {
      uint32_t k = nm[i] < ns ? nm[i] : ns;
      if (!slot[k] || !nsys__kernel_sel(c, dev_ok, i)) continue;
      uint32_t r = slot[k] - 1;
      dur[pos[r]++] = nsys_op_dur(ix, i);
      if (last[r] != ix->ops.track[i]) { /* ops of a track are consecutive: rarely a lookup */
        last[r] = ix->ops.track[i];
        nsys__pairset_add(&ps, r, last[r]);
      }
    }
  free(last);
  free(pos);
  free(rg);
  if (c->stopped) shown = 0; /* dur is only partly filled: nothing to report (cancelled) */
  /* each row's tracks in the order first met: the pairs by row (stable) */
  uint64_t *poff = nsys_xcalloc((size_t)shown + 2, sizeof *poff);
  for (size_t j = 0; j < ps.n && shown; j++) poff[(ps.list[j] >> 32) + 1]++;
  for (uint32_t r = 0; r < shown; r++) poff[r + 1] += poff[r];
  uint32_t *ptrk = nsys_xmalloc((ps.n + 1) * sizeof *ptrk);
  for (size_t j = 0; j < ps.n && shown; j++) ptrk[poff[ps.list[j] >> 32]++] = (uint32_t)ps.list[j];
  for (uint32_t r = shown; r > 0; r--) poff[r] = poff[r - 1]; /* back to starts */
  poff[0] = 0;
  for (uint32_t r = 0; r < shown; r++) {
    int64_t *d = dur + off[r];
    nsys_sort_i64(d, g[r].count);
    nsys_kstats ks;
    nsys_kstats_sorted(d, g[r].count, g[r].total, &ks);
    nsys__tk_row(c, rows, &g[r], &ks, total, ptrk + poff[r], (uint32_t)(poff[r + 1] - poff[r]));
  }
  nsys__tk_summary(c, summary, n, ng, total, demangled);
  free(ptrk);
  free(poff);
  free(ps.key);
  free(ps.list);
  free(g);
  free(dur);
  free(off);
  free(slot);
  free(tot);
  free(cnt);
  free(dev_ok);
  return true;
}

/* ---------------------------------------------------------------- launch */

typedef struct {
  uint32_t count, shorter;
  int64_t kern, api, queue, queue_max;
} nsys__lgroup;

typedef struct {
  int64_t small_ns;
  int64_t min_run;
  int64_t max_gap;
  nsys_lsweep st;    /* the device's sweep (klaunch_sweep.h) */
  uint64_t exposed;  /* over the devices swept */
  nsys_rtab *storms;
  int32_t device;
  uint32_t n_storms;
} nsys__sweep;

/* A run the sweep closed: a storm when long enough, the first 50 listed. */
static void nsys__storm_emit(void *ud, const nsys_lrun *run) {
  nsys__sweep *w = ud;
  if (run->n >= (uint32_t)w->min_run && w->n_storms++ < 50) {
    nsys_rec o = nsys_rtab_add(w->storms);
    nsys_rset_i64(o, KLST_DEVICE, w->device);
    nsys_rset_i64(o, KLST_START, run->s);
    nsys_rset_i64(o, KLST_END, run->e);
    nsys_rset_i64(o, KLST_KERNELS, run->n);
    double span_ms = (double)(run->e - run->s) / 1e6;
    nsys_rset_f64(o, KLST_PER_MS, span_ms > 0 ? nsys_round2(run->n / span_ms) : 0);
  }
}

static void nsys__launch_sweep(nsys_actx *c, uint32_t op, void *ud) {
  nsys__sweep *w = ud;
  const nsys_index *ix = c->ix;
  if (ix->ops.kind[op] != NSYS_OP_KERNEL) return;
  int32_t a = ix->ops.api[op];
  nsys_lrun out[2];
  int nc = nsys_lsweep_step(&w->st, w->small_ns, w->max_gap, ix->ops.start[op], ix->ops.end[op], a >= 0,
                            a >= 0 ? ix->api.start[a] : 0, a >= 0 ? ix->api.end[a] : 0, out);
  for (int x = 0; x < nc; x++) nsys__storm_emit(w, &out[x]);
}

static int nsys__cmp_lgroup(const void *a, const void *b, void *ctx) {
  const nsys__lgroup *g = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (g[x].api != g[y].api) return g[x].api > g[y].api ? -1 : 1;
  return x < y ? -1 : x > y;
}

bool nsys_an_kernel_launch_overhead(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  int64_t small = nsys_actx_int(c, "smallKernelNs");
  int64_t limit = nsys_actx_int(c, "limit");
  uint32_t ns = ix->strings.count;
  nsys__lgroup *g = nsys_xcalloc((size_t)ns + 1, sizeof *g);
  uint64_t kernels = 0, launched = 0, shorter = 0, small_n = 0;
  int64_t api_total = 0, queue_total = 0;
  uint32_t no = 0, *order = NULL;
  /* the precomputed sums (klaunch.h) when built, or built for a large window
   * (a small one's loop costs less than the build) */
  bool use = nsys_win_large(c) || nsys_win_peek(&c->cache->klaunch);
  const nsys_klaunch *kl = use && small == NSYS_KLAUNCH_SMALL_NS ? nsys_actx_klaunch(c) : NULL;
  uint32_t *plo = NULL, *phi = NULL; /* the fast path's window range per (name, track) pair */
  if (kl) {
    /* per name: prefix differences over its pairs' window ranges (klaunch.h) */
    const nsys_kname *kn = kl->kn;
    plo = nsys_xmalloc(((size_t)kn->n_pairs + 1) * sizeof *plo);
    phi = nsys_xmalloc(((size_t)kn->n_pairs + 1) * sizeof *phi);
    order = nsys_xmalloc(((size_t)kn->n_keys + 1) * sizeof *order);
    for (uint32_t j = 0; j < kn->n_keys && !nsys_actx_stop(c, j); j++) {
      nsys__lgroup x = {0};
      for (uint32_t p = kn->kfirst[j]; p < kn->kfirst[j + 1]; p++) {
        uint32_t lo = 0, hi = 0;
        if (nsys_actx_device_selected(c, ix->tracks[kn->ptrack[p]].device))
          nsys_kname_pair_range(kn, ix, p, c->t0, c->t1, &lo, &hi);
        plo[p] = lo;
        phi[p] = hi;
        kernels += hi - lo;
        nsys_klaunch_sums s = nsys_klaunch_range(c, kl, lo, hi);
        small_n += s.small;
        x.count += s.launched;
        x.shorter += s.shorter;
        x.kern += (int64_t)s.kern;
        x.api += (int64_t)s.api;
        x.queue += (int64_t)s.queue;
      }
      if (!x.count) continue;
      uint32_t k = kn->key[j];
      g[k] = x;
      order[no++] = k;
      launched += x.count;
      shorter += x.shorter;
      api_total += x.api;
      queue_total += x.queue;
    }
  } else {
    /* the window's ops only (window.h), the names seen listed (as top_kernels) */
    uint32_t nr;
    nsys_oprange *rg = nsys_win_start_ranges(c, &nr);
    uint8_t *dev_ok = nsys__tracks_selected(c);
    size_t ocap = 0;
    for (uint32_t r = 0; r < nr; r++)
      for (uint32_t i = rg[r].lo; i < rg[r].hi && !nsys_actx_stop(c, i); i++) {
        if (!nsys__kernel_sel(c, dev_ok, i)) continue;
        kernels++;
        int64_t kd = nsys_op_dur(ix, i), ad, q;
        if (kd < small) small_n++;
        if (!nsys_klaunch_of(c, i, &ad, &q)) continue;
        launched++;
        uint32_t k = ix->ops.name[i] < ns ? ix->ops.name[i] : ns;
        if (!g[k].count) {
          if (no == ocap) order = nsys_xrealloc(order, (ocap = ocap ? 2 * ocap : 64) * sizeof *order);
          order[no++] = k;
        }
        g[k].count++;
        g[k].kern += kd;
        g[k].api += ad;
        g[k].queue += q;
        if (q > g[k].queue_max) g[k].queue_max = q;
        if (kd < ad) {
          g[k].shorter++;
          shorter++;
        }
        api_total += ad;
        queue_total += q;
      }
    free(rg);
    free(dev_ok);
  }
  if (no > 1) qsort_r(order, no, sizeof *order, nsys__cmp_lgroup, g);
  uint32_t shown = (limit > 0 && (uint64_t)limit < no) ? (uint32_t)limit : no;
  for (uint32_t r = 0; r < shown; r++) {
    nsys__lgroup *x = &g[order[r]];
    if (kl) { /* the name's max queue time over its pairs' window ranges */
      const nsys_kname *kn = kl->kn;
      uint32_t a = 0, b = kn->n_keys; /* its key: keys are ascending name ids */
      while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (kn->key[m] < order[r]) a = m + 1;
        else b = m;
      }
      for (uint32_t p = kn->kfirst[a]; p < kn->kfirst[a + 1]; p++) {
        int64_t q = nsys_klaunch_qmax(c, kl, plo[p], phi[p]);
        if (q > x->queue_max) x->queue_max = q;
      }
    }
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_str(o, KL_NAME, order[r] < ns ? nsys_strtab_get(&ix->strings, order[r]) : "");
    nsys_rset_i64(o, KL_COUNT, x->count);
    nsys_rset_f64(o, KL_AVG_KERNEL_NS, round((double)x->kern / x->count));
    nsys_rset_f64(o, KL_AVG_API_NS, round((double)x->api / x->count));
    nsys_rset_f64(o, KL_AVG_QUEUE_NS, round((double)x->queue / x->count));
    nsys_rset_i64(o, KL_MAX_QUEUE_NS, x->queue_max);
    nsys_rset_i64(o, KL_TOTAL_API_NS, x->api);
    nsys_rset_i64(o, KL_SHORTER, x->shorter);
    nsys_rset_bool(o, KL_LAUNCH_BOUND, x->kern < x->api);
  }
  /* per device: exposed launch overhead and small-kernel storms */
  nsys__sweep w = {0};
  w.small_ns = small;
  w.min_run = nsys_actx_int(c, "stormMinKernels");
  w.max_gap = nsys_actx_int(c, "stormMaxGapNs");
  w.storms = nsys_rset_arr(summary, KLS_STORMS);
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  /* the defaults: the recorded whole sweeps (klaunch_sweep.h), when built or
   * for a large window (as the sums above) */
  bool defaults = small == NSYS_KSWEEP_SMALL_NS && w.min_run == NSYS_KSWEEP_MIN_RUN && w.max_gap == NSYS_KSWEEP_MAX_GAP_NS;
  const nsys_ksweep *ks =
      defaults && (nsys_win_large(c) || nsys_win_peek(&c->cache->ksweep)) ? nsys_actx_ksweep(c) : NULL;
  for (uint32_t d = 0; d < nd; d++) {
    w.device = devs[d];
    const nsys_ksweep_dev *v = ks ? nsys_ksweep_find(ks, devs[d]) : NULL;
    if (v) {
      nsys_ksweep_run(c, v, c->t0, c->t1, &w.st, nsys__storm_emit, &w);
    } else {
      w.st.have_busy = false; /* run_s and run_e stay: a 0-kernel storm (stormMinKernels <= 0) prints them */
      w.st.run_n = 0;
      w.st.exposed = 0;
      nsys_actx_device_each(c, devs[d], c->t0, c->t1, nsys__launch_sweep, &w);
    }
    nsys__storm_emit(&w, &(nsys_lrun){w.st.run_n, w.st.run_s, w.st.run_e});
    w.exposed += w.st.exposed;
  }
  free(devs);
  nsys_rset_i64(summary, KLS_KERNELS, (int64_t)kernels);
  nsys_rset_i64(summary, KLS_LAUNCHED, (int64_t)launched);
  nsys_rset_i64(summary, KLS_SHORTER, (int64_t)shorter);
  nsys_rset_f64(summary, KLS_PCT_SHORTER,
                launched ? nsys_round2(100.0 * (double)shorter / (double)launched) : 0);
  nsys_rset_i64(summary, KLS_SMALL, (int64_t)small_n);
  nsys_rset_f64(summary, KLS_PCT_SMALL,
                kernels ? nsys_round2(100.0 * (double)small_n / (double)kernels) : 0);
  nsys_rset_i64(summary, KLS_TOTAL_API_NS, api_total);
  nsys_rset_f64(summary, KLS_AVG_API_NS, launched ? round((double)api_total / launched) : 0);
  nsys_rset_f64(summary, KLS_AVG_QUEUE_NS, launched ? round((double)queue_total / launched) : 0);
  nsys_rset_i64(summary, KLS_EXPOSED_NS, (int64_t)w.exposed);
  nsys_rset_i64(summary, KLS_STORM_COUNT, w.n_storms);
  free(plo);
  free(phi);
  free(order);
  free(g);
  return true;
}
