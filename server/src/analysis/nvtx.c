/* nvtx_summary: per NVTX name, CPU time, projected GPU time, kernel time,
 * and the kernel -> innermost NVTX map. Attribution: a GPU op belongs to a
 * range when its launching API call is on the same thread and fully inside
 * the range (the nsys / Python peer rule); the projected GPU time of a range
 * is [min op start, max op end] over those ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "common/util.h"

typedef struct {
  uint32_t count, with_gpu;
  int64_t cpu, proj, kern;
} nsys__nv;

typedef struct {
  uint32_t kernel, nvtx; /* strtab ids */
  uint32_t count;
  int64_t ns;
} nsys__kmap;

static int nsys__cmp_kmap(const void *a, const void *b) {
  const nsys__kmap *x = a, *y = b;
  if (x->kernel != y->kernel) return x->kernel < y->kernel ? -1 : 1;
  return x->nvtx < y->nvtx ? -1 : x->nvtx > y->nvtx;
}
static int nsys__cmp_kmap_ns(const void *a, const void *b) {
  const nsys__kmap *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  return nsys__cmp_kmap(a, b);
}

static int nsys__cmp_nv(const void *a, const void *b, void *ctx) {
  const nsys__nv *g = ctx;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  if (g[i].proj != g[j].proj) return g[i].proj > g[j].proj ? -1 : 1;
  if (g[i].cpu != g[j].cpu) return g[i].cpu > g[j].cpu ? -1 : 1;
  return i < j ? -1 : i > j;
}

bool nsys_an_nvtx_summary(nsys_actx *c, cJSON *rows, cJSON *summary) {
  const nsys_index *ix = c->ix;
  uint32_t ns = ix->strings.count;
  int64_t limit = nsys_actx_int(c, "limit");
  nsys__nv *g = nsys_xcalloc((size_t)ns + 1, sizeof *g);
  uint64_t ranges = 0;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count; r++) {
      int64_t s = ix->nvtx.start[r], e = ix->nvtx.end[r];
      if (s < c->t0 || s >= c->t1) continue;
      uint32_t nm = ix->nvtx.name[r] < ns ? ix->nvtx.name[r] : ns;
      ranges++;
      g[nm].count++;
      g[nm].cpu += e - s;
      uint32_t lo = 0, hi = th->api_count;
      while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix->api.start[th->api_first + m] < s) lo = m + 1;
        else hi = m;
      }
      int64_t gs = 0, ge = 0;
      uint32_t nops = 0;
      for (uint32_t k = th->api_first + lo; k < th->api_first + th->api_count; k++) {
        if (ix->api.start[k] > e) break;
        if (ix->api.end[k] > e) continue;
        for (int32_t op = ix->api.first_op[k]; op >= 0; op = ix->op_next[op]) {
          if (!nsys_actx_device_selected(c, ix->tracks[ix->ops.track[op]].device)) continue;
          if (!nops || ix->ops.start[op] < gs) gs = ix->ops.start[op];
          if (!nops || ix->ops.end[op] > ge) ge = ix->ops.end[op];
          if (ix->ops.kind[op] == NSYS_OP_KERNEL) g[nm].kern += nsys_op_dur(ix, (uint32_t)op);
          nops++;
        }
      }
      if (nops) {
        g[nm].with_gpu++;
        g[nm].proj += ge - gs;
      }
    }
  }
  uint32_t *order = nsys_xmalloc(((size_t)ns + 1) * sizeof *order), no = 0;
  for (uint32_t k = 0; k <= ns; k++)
    if (g[k].count) order[no++] = k;
  qsort_r(order, no, sizeof *order, nsys__cmp_nv, g);
  uint32_t shown = (limit > 0 && (uint64_t)limit < no) ? (uint32_t)limit : no;
  for (uint32_t i = 0; i < shown; i++) {
    nsys__nv *x = &g[order[i]];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", order[i] < ns ? nsys_strtab_get(&ix->strings, order[i]) : "");
    nsys_json_int(o, "count", x->count);
    nsys_json_int(o, "cpuNs", x->cpu);
    nsys_json_int(o, "gpuProjectedNs", x->proj);
    nsys_json_int(o, "kernelNs", x->kern);
    nsys_json_int(o, "rangesWithGpuWork", x->with_gpu);
    cJSON_AddItemToArray(rows, o);
  }
  /* kernel -> innermost NVTX map */
  nsys__kmap *km = NULL;
  size_t nk = 0, cap = 0;
  uint64_t kernels = 0, attributed = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
    if (ix->ops.start[i] < c->t0 || ix->ops.start[i] >= c->t1) continue;
    if (!nsys_actx_device_selected(c, ix->tracks[ix->ops.track[i]].device)) continue;
    kernels++;
    int32_t a = ix->ops.api[i];
    if (a < 0) continue;
    int32_t r = nsys_actx_innermost_nvtx(ix, ix->api.thread[a], ix->api.start[a], ix->api.end[a]);
    if (r < 0) continue;
    attributed++;
    if (nk == cap) {
      cap = cap ? cap * 2 : 256;
      km = nsys_xrealloc(km, cap * sizeof *km);
    }
    km[nk++] = (nsys__kmap){ix->ops.name[i], ix->nvtx.name[r], 1, nsys_op_dur(ix, i)};
  }
  qsort(km, nk, sizeof *km, nsys__cmp_kmap);
  size_t m = 0;
  for (size_t i = 0; i < nk; i++) {
    if (m && km[m - 1].kernel == km[i].kernel && km[m - 1].nvtx == km[i].nvtx) {
      km[m - 1].count++;
      km[m - 1].ns += km[i].ns;
    } else {
      km[m++] = km[i];
    }
  }
  qsort(km, m, sizeof *km, nsys__cmp_kmap_ns);
  cJSON *map = cJSON_AddArrayToObject(summary, "kernelToNvtx");
  for (size_t i = 0; i < m && i < 50; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kernel", nsys_strtab_get(&ix->strings, km[i].kernel));
    cJSON_AddStringToObject(o, "nvtx", nsys_strtab_get(&ix->strings, km[i].nvtx));
    nsys_json_int(o, "count", km[i].count);
    nsys_json_int(o, "kernelNs", km[i].ns);
    cJSON_AddItemToArray(map, o);
  }
  nsys_json_int(summary, "ranges", (int64_t)ranges);
  nsys_json_int(summary, "distinctNames", no);
  nsys_json_int(summary, "kernels", (int64_t)kernels);
  nsys_json_int(summary, "kernelsInNvtx", (int64_t)attributed);
  nsys_json_num(summary, "kernelsInNvtxPct", kernels ? nsys_round2(100.0 * (double)attributed / (double)kernels) : 0);
  free(km);
  free(order);
  free(g);
  return true;
}
