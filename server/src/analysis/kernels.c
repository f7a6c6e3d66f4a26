/* top_kernels and kernel_launch_overhead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "common/util.h"

static bool nsys__kernel_in(nsys_actx *c, uint32_t i) {
  const nsys_index *ix = c->ix;
  if (ix->ops.kind[i] != NSYS_OP_KERNEL) return false;
  if (ix->ops.start[i] < c->t0 || ix->ops.start[i] >= c->t1) return false;
  return nsys_actx_device_selected(c, ix->tracks[ix->ops.track[i]].device);
}

typedef struct {
  uint32_t name;
  uint32_t count;
  int64_t total;
} nsys__kgroup;

static int nsys__cmp_group_total(const void *a, const void *b) {
  const nsys__kgroup *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

bool nsys_an_top_kernels(nsys_actx *c, cJSON *rows, cJSON *summary) {
  const nsys_index *ix = c->ix;
  const char *names = nsys_actx_str(c, "names");
  bool demangled = names && strcmp(names, "demangled") == 0;
  if (names && !demangled && strcmp(names, "short") != 0) {
    nsys_task_fail(c->task, NSYS_E_INVALID_PARAMS, "params.params.names: expected short or demangled");
    return false;
  }
  int64_t limit = nsys_actx_int(c, "limit");
  const uint32_t *nm = demangled ? ix->ops.full_name : ix->ops.name;
  uint32_t ns = ix->strings.count;
  /* pass 1: count and total per name */
  uint32_t *cnt = nsys_xcalloc((size_t)ns + 1, sizeof *cnt);
  int64_t *tot = nsys_xcalloc((size_t)ns + 1, sizeof *tot);
  uint64_t n = 0;
  int64_t total = 0;
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++) {
    if (!nsys__kernel_in(c, i)) continue;
    uint32_t k = nm[i] < ns ? nm[i] : ns;
    int64_t d = nsys_op_dur(ix, i);
    cnt[k]++;
    tot[k] += d;
    n++;
    total += d;
  }
  uint32_t ng = 0;
  nsys__kgroup *g = nsys_xmalloc(((size_t)ns + 1) * sizeof *g);
  for (uint32_t k = 0; k <= ns; k++)
    if (cnt[k]) g[ng++] = (nsys__kgroup){k, cnt[k], tot[k]};
  if (ng > 1) qsort(g, ng, sizeof *g, nsys__cmp_group_total);
  uint32_t shown = (limit > 0 && (uint64_t)limit < ng) ? (uint32_t)limit : ng;
  /* pass 2: durations and tracks of the shown names only */
  uint32_t *slot = nsys_xmalloc(((size_t)ns + 1) * sizeof *slot);
  for (uint32_t k = 0; k <= ns; k++) slot[k] = UINT32_MAX;
  uint64_t *off = nsys_xmalloc(((size_t)shown + 1) * sizeof *off), m = 0;
  for (uint32_t r = 0; r < shown; r++) {
    slot[g[r].name] = r;
    off[r] = m;
    m += g[r].count;
  }
  off[shown] = m;
  int64_t *dur = nsys_xmalloc((m + 1) * sizeof *dur);
  uint32_t *trk = nsys_xmalloc((m + 1) * sizeof *trk);
  uint64_t *pos = nsys_xmalloc(((size_t)shown + 1) * sizeof *pos);
  memcpy(pos, off, ((size_t)shown + 1) * sizeof *pos);
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++) {
    uint32_t k = nm[i] < ns ? nm[i] : ns;
    if (slot[k] == UINT32_MAX || !nsys__kernel_in(c, i)) continue;
    uint64_t p = pos[slot[k]]++;
    dur[p] = nsys_op_dur(ix, i);
    trk[p] = ix->ops.track[i];
  }
  free(pos);
  if (c->stopped) shown = 0; /* dur/trk are only partly filled: nothing to report (cancelled) */
  uint32_t *mark = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *mark);
  for (uint32_t t = 0; t <= ix->n_tracks; t++) mark[t] = UINT32_MAX;
  for (uint32_t r = 0; r < shown; r++) {
    uint32_t k = g[r].name;
    int64_t *d = dur + off[r];
    uint32_t cn = g[r].count;
    nsys_sort_i64(d, cn);
    double mean = (double)g[r].total / cn, var = 0;
    for (uint32_t j = 0; j < cn; j++) var += ((double)d[j] - mean) * ((double)d[j] - mean);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", k < ns ? nsys_strtab_get(&ix->strings, k) : "");
    nsys_json_int(o, "count", cn);
    nsys_json_int(o, "totalNs", g[r].total);
    nsys_json_num(o, "avgNs", round(mean));
    nsys_json_int(o, "minNs", d[0]);
    nsys_json_int(o, "maxNs", d[cn - 1]);
    nsys_json_num(o, "medianNs", round(nsys_percentile_sorted(d, cn, 0.5)));
    nsys_json_num(o, "p95Ns", round(nsys_percentile_sorted(d, cn, 0.95)));
    /* the sample standard deviation (n - 1), as `nsys stats` (cuda_gpu_kern_sum) prints it */
    nsys_json_num(o, "stddevNs", cn > 1 ? round(sqrt(var / (cn - 1))) : 0);
    nsys_json_num(o, "pctOfGpu", total ? nsys_round2(100.0 * (double)g[r].total / (double)total) : 0);
    cJSON_AddBoolToObject(o, "nccl", k < ns && nsys_name_is_nccl(nsys_strtab_get(&ix->strings, k)));
    cJSON *st = cJSON_AddArrayToObject(o, "streams");
    for (uint64_t j = off[r]; j < off[r + 1]; j++) {
      uint32_t t = trk[j];
      if (mark[t] == r) continue;
      mark[t] = r;
      cJSON *so = cJSON_CreateObject();
      nsys_json_int(so, "device", ix->tracks[t].device);
      nsys_json_int(so, "stream", ix->tracks[t].stream);
      cJSON_AddItemToArray(st, so);
    }
    cJSON_AddItemToArray(rows, o);
  }
  /* GPU busy (union per device, summed) for context */
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  int64_t busy = 0;
  nsys_ivls u;
  nsys_ivls_init(&u);
  for (uint32_t d = 0; d < nd; d++) {
    nsys_actx_device_union(c, devs[d], nsys_pred_kernel, c->t0, c->t1, &u);
    busy += nsys_ivls_total(&u);
  }
  nsys_ivls_free(&u);
  free(devs);
  nsys_json_int(summary, "kernelCount", (int64_t)n);
  nsys_json_int(summary, "distinctNames", ng);
  nsys_json_int(summary, "totalKernelNs", total);
  nsys_json_int(summary, "gpuBusyNs", busy);
  cJSON_AddStringToObject(summary, "names", demangled ? "demangled" : "short");
  cJSON_AddStringToObject(summary, "pctOfGpuBasis", "sum of kernel durations in the window");
  free(mark);
  free(g);
  free(dur);
  free(trk);
  free(off);
  free(slot);
  free(tot);
  free(cnt);
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
  /* per device sweep state */
  int64_t busy_end;
  bool have_busy;
  int64_t exposed;
  /* storm tracking */
  uint32_t run_n;
  int64_t run_s, run_e;
  cJSON *storms;
  int32_t device;
  uint32_t n_storms;
} nsys__sweep;

static void nsys__storm_close(nsys__sweep *w) {
  if (w->run_n >= (uint32_t)w->min_run && w->n_storms++ < 50) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "device", w->device);
    nsys_json_int(o, "start", w->run_s);
    nsys_json_int(o, "end", w->run_e);
    nsys_json_int(o, "kernels", w->run_n);
    double span_ms = (double)(w->run_e - w->run_s) / 1e6;
    nsys_json_num(o, "kernelsPerMs", span_ms > 0 ? nsys_round2(w->run_n / span_ms) : 0);
    cJSON_AddItemToArray(w->storms, o);
  }
  w->run_n = 0;
}

static void nsys__launch_sweep(nsys_actx *c, uint32_t op, void *ud) {
  nsys__sweep *w = ud;
  const nsys_index *ix = c->ix;
  if (ix->ops.kind[op] != NSYS_OP_KERNEL) return;
  int64_t s = ix->ops.start[op], e = ix->ops.end[op];
  if (w->have_busy && s > w->busy_end) {
    int32_t a = ix->ops.api[op];
    if (a >= 0) {
      int64_t lo = NSYS_MAX(w->busy_end, ix->api.start[a]), hi = NSYS_MIN(s, ix->api.end[a]);
      if (hi > lo) w->exposed += hi - lo;
    }
  }
  if (!w->have_busy || e > w->busy_end) w->busy_end = e;
  w->have_busy = true;
  if (w->run_n && s - w->run_e > w->max_gap) nsys__storm_close(w); /* a pause ends a burst */
  if (e - s < w->small_ns) {
    if (!w->run_n) w->run_s = s;
    w->run_n++;
    w->run_e = NSYS_MAX(w->run_e, e);
    if (w->run_n == 1) w->run_e = e;
  } else {
    nsys__storm_close(w);
  }
}

static int nsys__cmp_lgroup(const void *a, const void *b, void *ctx) {
  const nsys__lgroup *g = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (g[x].api != g[y].api) return g[x].api > g[y].api ? -1 : 1;
  return x < y ? -1 : x > y;
}

bool nsys_an_kernel_launch_overhead(nsys_actx *c, cJSON *rows, cJSON *summary) {
  const nsys_index *ix = c->ix;
  int64_t small = nsys_actx_int(c, "smallKernelNs");
  int64_t limit = nsys_actx_int(c, "limit");
  uint32_t ns = ix->strings.count;
  nsys__lgroup *g = nsys_xcalloc((size_t)ns + 1, sizeof *g);
  uint64_t kernels = 0, launched = 0, shorter = 0, small_n = 0;
  int64_t api_total = 0, queue_total = 0;
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++) {
    if (!nsys__kernel_in(c, i)) continue;
    kernels++;
    int64_t kd = nsys_op_dur(ix, i);
    if (kd < small) small_n++;
    int32_t a = ix->ops.api[i];
    if (a < 0) continue;
    nsys_api_class cls = nsys_actx_api_class(c, (uint32_t)a);
    if (cls != NSYS_API_LAUNCH) continue;
    launched++;
    int64_t ad = ix->api.end[a] - ix->api.start[a];
    int64_t q = ix->ops.start[i] - ix->api.end[a];
    if (q < 0) q = 0;
    uint32_t k = ix->ops.name[i] < ns ? ix->ops.name[i] : ns;
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
  uint32_t *order = nsys_xmalloc(((size_t)ns + 1) * sizeof *order), no = 0;
  for (uint32_t k = 0; k <= ns; k++)
    if (g[k].count) order[no++] = k;
  if (no > 1) qsort_r(order, no, sizeof *order, nsys__cmp_lgroup, g);
  uint32_t shown = (limit > 0 && (uint64_t)limit < no) ? (uint32_t)limit : no;
  for (uint32_t r = 0; r < shown; r++) {
    nsys__lgroup *x = &g[order[r]];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", order[r] < ns ? nsys_strtab_get(&ix->strings, order[r]) : "");
    nsys_json_int(o, "count", x->count);
    nsys_json_num(o, "avgKernelNs", round((double)x->kern / x->count));
    nsys_json_num(o, "avgApiNs", round((double)x->api / x->count));
    nsys_json_num(o, "avgQueueNs", round((double)x->queue / x->count));
    nsys_json_int(o, "maxQueueNs", x->queue_max);
    nsys_json_int(o, "totalApiNs", x->api);
    nsys_json_int(o, "shorterThanLaunch", x->shorter);
    cJSON_AddBoolToObject(o, "launchBound", x->kern < x->api);
    cJSON_AddItemToArray(rows, o);
  }
  /* per device: exposed launch overhead and small-kernel storms */
  nsys__sweep w = {0};
  w.small_ns = small;
  w.min_run = nsys_actx_int(c, "stormMinKernels");
  w.max_gap = nsys_actx_int(c, "stormMaxGapNs");
  w.storms = cJSON_CreateArray();
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  for (uint32_t d = 0; d < nd; d++) {
    w.have_busy = false;
    w.run_n = 0;
    w.device = devs[d];
    nsys_actx_device_each(c, devs[d], c->t0, c->t1, nsys__launch_sweep, &w);
    nsys__storm_close(&w);
  }
  free(devs);
  nsys_json_int(summary, "kernels", (int64_t)kernels);
  nsys_json_int(summary, "launchedKernels", (int64_t)launched);
  nsys_json_int(summary, "kernelsShorterThanLaunch", (int64_t)shorter);
  nsys_json_num(summary, "pctShorterThanLaunch",
                launched ? nsys_round2(100.0 * (double)shorter / (double)launched) : 0);
  nsys_json_int(summary, "smallKernels", (int64_t)small_n);
  nsys_json_num(summary, "pctSmallKernels",
                kernels ? nsys_round2(100.0 * (double)small_n / (double)kernels) : 0);
  nsys_json_int(summary, "totalApiNs", api_total);
  nsys_json_num(summary, "avgApiNs", launched ? round((double)api_total / launched) : 0);
  nsys_json_num(summary, "avgQueueNs", launched ? round((double)queue_total / launched) : 0);
  nsys_json_int(summary, "exposedLaunchNs", w.exposed);
  nsys_json_int(summary, "stormCount", w.n_storms);
  cJSON_AddItemToObject(summary, "storms", w.storms);
  free(order);
  free(g);
  return true;
}
