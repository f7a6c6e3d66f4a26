/* Iteration detection (NVTX marker, auto-detected marker, or GPU-gap
 * fallback), the iterations analysis and mfu. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/devunions.h"
#include "analysis/window.h"
#include "explain/gpu_specs.h"
#include "common/util.h"
#include "profile/profile.h"

/* GPU window of the ops launched from API calls of `thread` fully inside [s,e]. */
static uint32_t nsys__project(const nsys_index *ix, uint32_t thread, int64_t s, int64_t e,
                              int64_t *gs, int64_t *ge, int32_t *device) {
  const nsys_host_thread *th = &ix->threads[thread];
  uint32_t lo = 0, hi = th->api_count;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (ix->api.start[th->api_first + m] < s) lo = m + 1;
    else hi = m;
  }
  uint32_t n = 0;
  for (uint32_t k = th->api_first + lo; k < th->api_first + th->api_count; k++) {
    if (ix->api.start[k] > e) break;
    if (ix->api.end[k] > e) continue;
    for (int32_t op = ix->api.first_op[k]; op >= 0; op = ix->op_next[op]) {
      if (!n || ix->ops.start[op] < *gs) *gs = ix->ops.start[op];
      if (!n || ix->ops.end[op] > *ge) *ge = ix->ops.end[op];
      if (!n) *device = ix->tracks[ix->ops.track[op]].device;
      n++;
    }
  }
  return n;
}

/* "ProfilerStep#12" -> "ProfilerStep#": digits removed, for grouping. */
static void nsys__normalize(const char *s, char *out, size_t cap) {
  size_t j = 0;
  for (; *s && j + 1 < cap; s++)
    if (!isdigit((unsigned char)*s)) out[j++] = *s;
  out[j] = '\0';
}

/* Preference tier of a step-marker-like name: 0 step, 1 iter, 2 batch, 3 epoch, -1 none. */
static int nsys__step_tier(const char *s) {
  if (nsys_icontains(s, "step")) return 0;
  if (nsys_icontains(s, "iter")) return 1;
  if (nsys_icontains(s, "batch")) return 2;
  if (nsys_icontains(s, "epoch")) return 3;
  return -1;
}

/* Auto-detection: the normalized NVTX name that looks like a step marker and
 * occurs at least twice, preferring the shallowest nesting (an iteration
 * encloses its phases: train_step > optimizer_step), then "step" over "iter"
 * over "batch" over "epoch", then the most frequent; ties: alphabetical. Returns a
 * malloc'd normalized name or NULL. */
typedef struct {
  char *norm;
  uint32_t count;
  uint16_t depth; /* shallowest nesting depth of the name's ranges */
} nsys__normcnt;

static int nsys__cmp_norm(const void *a, const void *b) {
  return strcmp(((const nsys__normcnt *)a)->norm, ((const nsys__normcnt *)b)->norm);
}

static char *nsys__auto_marker(const nsys_index *ix) {
  uint32_t ns = ix->strings.count;
  uint32_t *cnt = nsys_xcalloc((size_t)ns + 1, sizeof *cnt);
  uint16_t *dep = nsys_xmalloc(((size_t)ns + 1) * sizeof *dep);
  for (uint32_t k = 0; k <= ns; k++) dep[k] = UINT16_MAX;
  for (uint32_t i = 0; i < ix->nvtx.n; i++)
    if (ix->nvtx.name[i] < ns) {
      cnt[ix->nvtx.name[i]]++;
      if (ix->nvtx.depth[i] < dep[ix->nvtx.name[i]]) dep[ix->nvtx.name[i]] = ix->nvtx.depth[i];
    }
  nsys__normcnt *v = NULL;
  size_t n = 0, cap = 0;
  char norm[256];
  for (uint32_t k = 0; k < ns; k++) {
    if (!cnt[k]) continue;
    const char *s = nsys_strtab_get(&ix->strings, k);
    if (nsys__step_tier(s) < 0) continue;
    nsys__normalize(s, norm, sizeof norm);
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      v = nsys_xrealloc(v, cap * sizeof *v);
    }
    v[n].norm = nsys_xstrdup(norm);
    v[n].depth = dep[k];
    v[n++].count = cnt[k];
  }
  if (n > 1) qsort(v, n, sizeof *v, nsys__cmp_norm);
  char *best = NULL;
  uint32_t best_n = 0;
  int best_tier = 99, best_depth = INT32_MAX;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint32_t total = 0;
    int depth = INT32_MAX;
    for (; j < n && !strcmp(v[j].norm, v[i].norm); j++) {
      total += v[j].count;
      if (v[j].depth < depth) depth = v[j].depth;
    }
    int tier = nsys__step_tier(v[i].norm);
    if (total >= 2 && (depth < best_depth || (depth == best_depth && tier < best_tier) ||
                       (depth == best_depth && tier == best_tier && total > best_n))) {
      best_tier = tier;
      best_depth = depth;
      best_n = total;
      best = v[i].norm;
    }
    i = j;
  }
  char *res = best ? nsys_xstrdup(best) : NULL;
  for (size_t i = 0; i < n; i++) free(v[i].norm);
  free(v);
  free(cnt);
  free(dep);
  return res;
}

typedef struct {
  nsys_iter *v;
  uint32_t n, cap;
} nsys__itvec;

static void nsys__it_push(nsys__itvec *v, nsys_iter it) {
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 32;
    v->v = nsys_xrealloc(v->v, v->cap * sizeof *v->v);
  }
  v->v[v->n++] = it;
}

static int nsys__cmp_iter(const void *a, const void *b) {
  const nsys_iter *x = a, *y = b;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

typedef struct {
  nsys__itvec *out;
  int64_t gap;
  int32_t device;
  bool open;
  nsys_iter cur;
} nsys__gapit;

static void nsys__gap_cb(nsys_actx *c, uint32_t op, void *ud) {
  nsys__gapit *g = ud;
  const nsys_index *ix = c->ix;
  if (ix->ops.kind[op] != NSYS_OP_KERNEL) return;
  int64_t s = ix->ops.start[op], e = ix->ops.end[op];
  if (g->open && s - g->cur.end > g->gap) {
    nsys__it_push(g->out, g->cur);
    g->open = false;
  }
  if (!g->open) {
    memset(&g->cur, 0, sizeof g->cur);
    g->cur.device = g->device;
    g->cur.start = g->cur.cpu_start = s;
    g->cur.end = g->cur.cpu_end = e;
    g->cur.name = NSYS_STR_NONE;
    g->open = true;
  }
  if (e > g->cur.end) g->cur.end = g->cur.cpu_end = e;
  g->cur.kernels++;
}

typedef struct {
  const char *marker, *auto_m;
} nsys__marker_rule;

static bool nsys__is_marker(const char *name, const void *ud) {
  const nsys__marker_rule *m = ud;
  if (!m->auto_m) return nsys_icontains(name, m->marker);
  char norm[256];
  nsys__normalize(name, norm, sizeof norm);
  return strcmp(norm, m->auto_m) == 0;
}

/* The NVTX ranges named like `marker` (normalised equal to the auto-detected
 * one when auto_m; else containing it): per range-name string id, 1 or 0. */
static uint8_t *nsys__marker_names(const nsys_index *ix, const char *marker, const char *auto_m) {
  nsys__marker_rule m = {marker, auto_m};
  return nsys_nvtx_names_where(ix, nsys__is_marker, &m);
}

/* Iteration `it` of the marker range r of thread t when it has kernels on a
 * selected device; the loop of nsys_detect_iterations (both paths). */
static void nsys__marker_iter(nsys_actx *c, uint32_t t, uint32_t r, nsys__itvec *v) {
  const nsys_index *ix = c->ix;
  nsys_iter it = {0};
  it.cpu_start = ix->nvtx.start[r];
  it.cpu_end = ix->nvtx.end[r];
  it.name = ix->nvtx.name[r];
  it.kernels = nsys__project(ix, t, it.cpu_start, it.cpu_end, &it.start, &it.end, &it.device);
  if (it.kernels && nsys_actx_device_selected(c, it.device)) nsys__it_push(v, it);
}

nsys_markers *nsys_iter_markers_build(nsys_actx *c) {
  const nsys_index *ix = c->ix;
  nsys_markers *m = nsys_xcalloc(1, sizeof *m);
  m->first = nsys_xcalloc((size_t)ix->n_threads + 1, sizeof *m->first);
  char *auto_m = nsys__auto_marker(ix);
  m->found = auto_m != NULL;
  if (!auto_m) return m;
  uint8_t *match = nsys__marker_names(ix, NULL, auto_m);
  uint32_t ns = ix->strings.count, n = 0, cap = 0;
  for (uint32_t t = 0; t < ix->n_threads && !nsys_actx_stop(c, t); t++) {
    const nsys_host_thread *th = &ix->threads[t];
    m->first[t] = n;
    int64_t pm = INT64_MIN;
    for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count && !nsys_actx_stop(c, r); r++) {
      uint32_t nm = ix->nvtx.name[r];
      if (nm >= ns || !match[nm] || ix->nvtx.end[r] <= ix->nvtx.start[r]) continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        m->r = nsys_xrealloc(m->r, (size_t)cap * sizeof *m->r);
        m->pmax = nsys_xrealloc(m->pmax, (size_t)cap * sizeof *m->pmax);
      }
      if (ix->nvtx.end[r] > pm) pm = ix->nvtx.end[r];
      m->r[n] = r;
      m->pmax[n++] = pm;
    }
  }
  m->first[ix->n_threads] = n;
  free(match);
  free(auto_m);
  if (c->stopped) {
    nsys_markers_free(m);
    return NULL;
  }
  return m;
}

uint32_t nsys_detect_iterations(nsys_actx *c, nsys_iter **out, const char **method) {
  const nsys_index *ix = c->ix;
  nsys__itvec v = {0};
  const char *marker = nsys_actx_str(c, "marker");
  char *auto_m = NULL;
  const nsys_markers *mk = !marker || !*marker ? nsys_actx_markers(c) : NULL;
  if (mk) { /* the auto-detected marker's ranges, from the first that may reach the window */
    for (uint32_t t = 0; mk->found && t < ix->n_threads; t++) {
      int64_t last_end = INT64_MIN;
      for (uint32_t j = nsys_markers_from(mk, t, c->t0); j < mk->first[t + 1] && !nsys_actx_stop(c, j); j++) {
        uint32_t r = mk->r[j];
        int64_t s = ix->nvtx.start[r], e = ix->nvtx.end[r];
        if (s >= c->t1) break; /* start order: the rest start after the window too */
        if (s < last_end || e < c->t0) continue; /* top-level, non-overlapping only */
        last_end = e;
        nsys__marker_iter(c, t, r, &v);
      }
    }
    if (mk->found) *method = "nvtx";
  } else if (!marker || !*marker) {
    marker = auto_m = nsys__auto_marker(ix);
  }
  if (!mk && marker && *marker) {
    uint32_t ns = ix->strings.count;
    uint8_t *match = nsys__marker_names(ix, marker, auto_m);
    for (uint32_t t = 0; t < ix->n_threads; t++) {
      const nsys_host_thread *th = &ix->threads[t];
      int64_t last_end = INT64_MIN;
      for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count && !nsys_actx_stop(c, r); r++) {
        uint32_t nm = ix->nvtx.name[r];
        if (nm >= ns || !match[nm]) continue;
        int64_t s = ix->nvtx.start[r], e = ix->nvtx.end[r];
        if (e <= s || s < last_end) continue; /* top-level, non-overlapping only */
        if (e < c->t0 || s >= c->t1) continue;
        last_end = e;
        nsys__marker_iter(c, t, r, &v);
      }
    }
    free(match);
    *method = "nvtx";
  }
  if (!v.n) {
    *method = "gap";
    nsys__gapit g = {&v, nsys_actx_int(c, "gapNs"), 0, false, {0}};
    int32_t *devs;
    uint32_t nd = nsys_actx_devices(c, &devs);
    for (uint32_t d = 0; d < nd; d++) {
      g.device = devs[d];
      g.open = false;
      nsys_actx_device_each(c, devs[d], c->t0, c->t1, nsys__gap_cb, &g);
      if (g.open) nsys__it_push(&v, g.cur);
    }
    free(devs);
  }
  free(auto_m);
  if (v.n > 1) qsort(v.v, v.n, sizeof *v.v, nsys__cmp_iter);
  *out = v.v;
  return v.n;
}

/* Per-iteration GPU stats on its device over its GPU window. */
typedef struct {
  int64_t compute, nccl, overlap, busy;
} nsys__itstats;

/* Window sums on the device's cached whole-time unions (O(log n) each,
 * whether iteration windows overlap or not). */
static void nsys__iter_stats(nsys_actx *c, const nsys_iter *it, nsys__itstats *st) {
  const nsys_devunions *u = nsys_actx_devunions(c, it->device);
  st->compute = nsys_ivls_len_in(&u->compute, it->start, it->end);
  st->nccl = nsys_ivls_len_in(&u->comm, it->start, it->end);
  st->overlap = nsys_ivls_len_in(&u->both, it->start, it->end);
  st->busy = nsys_ivls_len_in(&u->any, it->start, it->end);
}

/* Median duration of the device's iterations: its[] is sorted by device, so
 * they are the block starting at `first`. */
static double nsys__median_dur(const nsys_iter *its, uint32_t n, uint32_t first) {
  int32_t device = its[first].device;
  int64_t *d = nsys_xmalloc((n - first + 1) * sizeof *d);
  uint32_t m = 0;
  for (uint32_t i = first; i < n && its[i].device == device; i++) d[m++] = its[i].end - its[i].start;
  nsys_sort_i64(d, m);
  double med = nsys_percentile_sorted(d, m, 0.5);
  free(d);
  return med;
}

bool nsys_an_iterations(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  nsys_iter *its;
  const char *method;
  uint32_t n = nsys_detect_iterations(c, &its, &method);
  double factor = nsys_actx_num(c, "outlierFactor");
  uint32_t outliers = 0;
  int32_t cur_dev = INT32_MIN;
  double med = 0;
  uint32_t idx = 0;
  nsys_rtab *per_dev = nsys_rset_arr(summary, ITS_DEVICES);
  for (uint32_t i = 0; i < n; i++) {
    const nsys_iter *it = &its[i];
    if (it->device != cur_dev) {
      cur_dev = it->device;
      med = nsys__median_dur(its, n, i);
      idx = 0;
      nsys_rec o = nsys_rtab_add(per_dev);
      nsys_rset_i64(o, ITD_DEVICE, cur_dev);
      nsys_rset_f64(o, ITD_MEDIAN_NS, round(med));
    }
    nsys__itstats st;
    nsys__iter_stats(c, it, &st);
    int64_t dur = it->end - it->start;
    bool outlier = med > 0 && (double)dur > factor * med;
    if (outlier) outliers++;
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_i64(o, IT_INDEX, idx++);
    nsys_rset_i64(o, IT_DEVICE, it->device);
    nsys_rset_str(o, IT_NAME, it->name == NSYS_STR_NONE ? NULL : nsys_strtab_get(&ix->strings, it->name));
    nsys_rset_i64(o, IT_START, it->start);
    nsys_rset_i64(o, IT_END, it->end);
    nsys_rset_i64(o, IT_DURATION_NS, dur);
    nsys_rset_i64(o, IT_KERNELS, it->kernels);
    nsys_rset_i64(o, IT_COMPUTE_NS, st.compute);
    nsys_rset_i64(o, IT_NCCL_NS, st.nccl);
    nsys_rset_i64(o, IT_OVERLAP_NS, st.overlap);
    nsys_rset_i64(o, IT_IDLE_NS, dur - st.busy);
    nsys_rset_f64(o, IT_VS_MEDIAN, med > 0 ? nsys_round2((double)dur / med) : 0);
    nsys_rset_bool(o, IT_OUTLIER, outlier);
  }
  nsys_rset_str(summary, ITS_METHOD, method);
  nsys_rset_i64(summary, ITS_COUNT, n);
  nsys_rset_i64(summary, ITS_OUTLIERS, outliers);
  nsys_rset_f64(summary, ITS_OUTLIER_FACTOR, factor);
  free(its);
  return true;
}

/* ---------------------------------------------------------------- mfu */

bool nsys_an_mfu(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  double flops = nsys_actx_num(c, "modelFlops");
  double nparams = nsys_actx_num(c, "params");
  double tokens = nsys_actx_num(c, "tokens");
  double peak = nsys_actx_num(c, "peakTflops");
  const char *dtype = nsys_actx_str(c, "dtype");
  const char *basis = "modelFlops";
  if (flops <= 0 && nparams > 0 && tokens > 0) {
    flops = 6.0 * nparams * tokens;
    basis = "6*params*tokens";
  }
  if (flops <= 0) {
    nsys_task_fail(c->task, NSYS_E_INVALID_PARAMS,
                   "params.params.modelFlops: give modelFlops (FLOPs per iteration) or params and tokens");
    return false;
  }
  const char *gpu_name = NULL;
  int sms = 0;
  if (c->p && c->p->info.n_gpus > 0) {
    gpu_name = c->p->info.gpus[0].name;
    sms = c->p->info.gpus[0].sm_count;
  }
  /* the shared datasheet table of explain/ (dense tensor-core peaks), matched
   * exactly; the peak scales with the SMs the export records when they
   * differ from the full part's (a MIG slice, a cut-down variant) */
  const nsys_gpu_spec *spec = gpu_name ? nsys_gpu_spec_match(gpu_name) : NULL;
  bool mig = gpu_name && nsys_gpu_name_is_mig(gpu_name);
  const char *prec = dtype ? dtype : "bf16";
  const char *peak_source = "params";
  if (peak <= 0) {
    double full = spec ? nsys_gpu_spec_peak(spec, prec) : 0;
    if (full > 0 && sms > 0 && spec->sm_count > 0 && sms != spec->sm_count) {
      peak = full * sms / spec->sm_count;
      peak_source = "table_scaled_by_sm";
    } else if (full > 0 && !mig) {
      peak = full;
      peak_source = "table";
    }
    if (peak <= 0) {
      const char *g = gpu_name ? gpu_name : "unknown";
      if (!spec)
        nsys_task_fail(c->task, NSYS_E_DATA_MISSING,
                       "GPU peak unknown (GPU '%s' is not in the spec table): pass params.peakTflops", g);
      else if (full > 0)
        nsys_task_fail(c->task, NSYS_E_DATA_MISSING,
                       "GPU peak unknown (GPU '%s' is a MIG slice and the export records no SM count): pass "
                       "params.peakTflops", g);
      else
        nsys_task_fail(c->task, NSYS_E_DATA_MISSING,
                       "GPU peak unknown (%s has no %s peak in the spec table): pass params.peakTflops",
                       spec->name, prec);
      return false;
    }
  }
  nsys_iter *its;
  const char *method;
  uint32_t n = nsys_detect_iterations(c, &its, &method);
  double sum = 0;
  for (uint32_t i = 0; i < n; i++) {
    double s = (double)(its[i].end - its[i].start) / 1e9;
    double tf = s > 0 ? flops / s / 1e12 : 0;
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_i64(o, MFU_INDEX, i);
    nsys_rset_i64(o, MFU_DEVICE, its[i].device);
    nsys_rset_i64(o, MFU_START, its[i].start);
    nsys_rset_i64(o, MFU_END, its[i].end);
    nsys_rset_i64(o, MFU_DURATION_NS, its[i].end - its[i].start);
    nsys_rset_f64(o, MFU_TFLOPS, nsys_round2(tf));
    nsys_rset_f64(o, MFU_PCT, nsys_round2(100.0 * tf / peak));
    sum += tf;
  }
  nsys_rset_f64(summary, MFUS_MODEL_FLOPS, flops);
  nsys_rset_str(summary, MFUS_FLOPS_BASIS, basis);
  nsys_rset_str(summary, MFUS_GPU, gpu_name);
  nsys_rset_str(summary, MFUS_SPEC_MATCHED, spec ? spec->name : NULL);
  nsys_rset_bool(summary, MFUS_GPU_KNOWN, spec != NULL);
  nsys_rset_bool(summary, MFUS_MIG, mig);
  if (sms > 0) nsys_rset_i64(summary, MFUS_SM_COUNT, sms);
  else nsys_rset_null(summary, MFUS_SM_COUNT);
  if (spec) nsys_rset_i64(summary, MFUS_SPEC_SM_COUNT, spec->sm_count);
  else nsys_rset_null(summary, MFUS_SPEC_SM_COUNT);
  nsys_rset_f64(summary, MFUS_PEAK_TFLOPS, peak);
  nsys_rset_str(summary, MFUS_PEAK_SOURCE, peak_source);
  nsys_rset_str(summary, MFUS_DTYPE, dtype);
  nsys_rset_str(summary, MFUS_ITERATION_METHOD, method);
  nsys_rset_i64(summary, MFUS_ITERATIONS, n);
  nsys_rset_f64(summary, MFUS_AVG_TFLOPS, n ? nsys_round2(sum / n) : 0);
  nsys_rset_f64(summary, MFUS_AVG_MFU_PCT, n ? nsys_round2(100.0 * sum / n / peak) : 0);
  nsys_rset_bool(summary, MFUS_IMPLAUSIBLE, n && sum / n > peak);
  free(its);
  return true;
}
