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

/* A range's own GPU work, then its descendants' too. */
typedef struct {
  int64_t kern;       /* summed kernel durations */
  int64_t gmin, gmax; /* earliest op start, latest op end (INT64_MAX / INT64_MIN: none) */
  uint32_t name;      /* the range's name (read with the sums: one cache line per op) */
} nsys__rgpu;

typedef struct {
  uint32_t kernel, nvtx; /* strtab ids */
  uint32_t count;
  int64_t ns;
} nsys__kmap;

static __attribute__((unused)) int nsys__cmp_kmap(const void *a, const void *b) {
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

/* Open-addressing map (kernel name, NVTX name) -> (count, ns): one entry
 * per slot (one cache line touched per add), keys mixed whole (both names
 * reach the slot bits). */
typedef struct {
  uint64_t key; /* (kernel << 32 | nvtx) + 1, 0 = empty */
  int64_t ns;
  uint32_t count;
} nsys__pair;

typedef struct {
  nsys__pair *e;
  size_t cap, n;
} nsys__pairmap;

static size_t nsys__pm_slot(uint64_t key, size_t cap) { return (size_t)nsys_mix64(key) & (cap - 1); }

static void nsys__pm_add(nsys__pairmap *m, uint32_t k, uint32_t v, int64_t ns) {
  if ((m->n + 1) * 2 > m->cap) {
    nsys__pairmap g = {0};
    g.cap = m->cap ? m->cap * 2 : 1024;
    g.e = nsys_xcalloc(g.cap, sizeof *g.e);
    for (size_t i = 0; i < m->cap; i++)
      if (m->e[i].key) {
        size_t h = nsys__pm_slot(m->e[i].key, g.cap);
        while (g.e[h].key) h = (h + 1) & (g.cap - 1);
        g.e[h] = m->e[i];
        g.n++;
      }
    free(m->e);
    *m = g;
  }
  uint64_t key = (((uint64_t)k << 32) | v) + 1;
  size_t h = nsys__pm_slot(key, m->cap);
  while (m->e[h].key && m->e[h].key != key) h = (h + 1) & (m->cap - 1);
  if (!m->e[h].key) {
    m->e[h].key = key;
    m->n++;
  }
  m->e[h].count++;
  m->e[h].ns += ns;
}

bool nsys_an_nvtx_summary(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  uint32_t ns = ix->strings.count, nr = ix->nvtx.n;
  int64_t limit = nsys_actx_int(c, "limit");
  /* per range: own GPU work (ops launched by calls whose innermost range it
   * is), then propagated to the ancestors (deepest first) */
  nsys__rgpu *rg = nsys_xmalloc(((size_t)nr + 1) * sizeof *rg);
  for (uint32_t r = 0; r < nr; r++) rg[r] = (nsys__rgpu){0, INT64_MAX, INT64_MIN, ix->nvtx.name[r]};
  nsys__pairmap pm = {0};
  uint64_t kernels = 0, attributed = 0;
  uint8_t *dev_ok = nsys_xmalloc((size_t)ix->n_tracks + 1); /* the device test per track, once */
  for (uint32_t t = 0; t < ix->n_tracks; t++) dev_ok[t] = nsys_actx_device_selected(c, ix->tracks[t].device);
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    /* calls and ranges are both sorted by start: a cursor replaces the
     * binary search of nsys_actx_innermost_nvtx */
    uint32_t cur = th->nvtx_first, nend = th->nvtx_first + th->nvtx_count;
    for (uint32_t k = th->api_first; k < th->api_first + th->api_count && !nsys_actx_stop(c, k); k++) {
      if (ix->api.first_op[k] < 0) continue;
      int64_t as = ix->api.start[k], ae = ix->api.end[k];
      while (cur < nend && ix->nvtx.start[cur] <= as) cur++;
      int32_t r = cur > th->nvtx_first ? nsys_actx_nvtx_enclosing(c, (int32_t)(cur - 1), ae) : -1;
      for (int32_t op = ix->api.first_op[k]; op >= 0; op = ix->op_next[op]) {
        if (!dev_ok[ix->ops.track[op]]) continue;
        bool is_k = ix->ops.kind[op] == NSYS_OP_KERNEL;
        bool in_win = ix->ops.start[op] >= c->t0 && ix->ops.start[op] < c->t1;
        if (is_k && in_win) kernels++;
        if (r < 0) continue;
        nsys__rgpu *x = &rg[r];
        if (ix->ops.start[op] < x->gmin) x->gmin = ix->ops.start[op];
        if (ix->ops.end[op] > x->gmax) x->gmax = ix->ops.end[op];
        if (is_k) {
          x->kern += nsys_op_dur(ix, (uint32_t)op);
          if (in_win) {
            attributed++;
            nsys__pm_add(&pm, ix->ops.name[op], x->name, nsys_op_dur(ix, (uint32_t)op));
          }
        }
      }
    }
  }
  /* unattributed kernels (no launching call) still count as kernels */
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++)
    if (ix->ops.api[i] < 0 && ix->ops.kind[i] == NSYS_OP_KERNEL && ix->ops.start[i] >= c->t0 &&
        ix->ops.start[i] < c->t1 && dev_ok[ix->ops.track[i]])
      kernels++;
  free(dev_ok);
  /* propagate to the ancestors, children before parents: in reverse index
   * order, as a parent sorts before its ranges (index invariant, checked by
   * the cache loader); by depth, deepest first, should a parent not */
  bool parents_first = true;
  for (uint32_t r = 0; r < nr && parents_first; r++) parents_first = ix->nvtx.parent[r] < (int32_t)r;
  uint32_t *byd = NULL;
  if (!parents_first) { /* counting sort on depth */
    uint32_t maxd = 0;
    for (uint32_t r = 0; r < nr; r++) maxd = NSYS_MAX(maxd, ix->nvtx.depth[r]);
    uint32_t *dcnt = nsys_xcalloc((size_t)maxd + 2, sizeof *dcnt);
    for (uint32_t r = 0; r < nr; r++) dcnt[ix->nvtx.depth[r] + 1]++;
    for (uint32_t d = 0; d <= maxd; d++) dcnt[d + 1] += dcnt[d];
    byd = nsys_xmalloc(((size_t)nr + 1) * sizeof *byd);
    for (uint32_t r = 0; r < nr; r++) byd[dcnt[ix->nvtx.depth[r]]++] = r;
    free(dcnt);
  }
  for (uint32_t i = nr; i > 0; i--) {
    uint32_t r = byd ? byd[i - 1] : i - 1;
    int32_t p = ix->nvtx.parent[r];
    if (p < 0) continue;
    rg[p].kern += rg[r].kern;
    if (rg[r].gmin < rg[p].gmin) rg[p].gmin = rg[r].gmin;
    if (rg[r].gmax > rg[p].gmax) rg[p].gmax = rg[r].gmax;
  }
  free(byd);
  nsys__nv *g = nsys_xcalloc((size_t)ns + 1, sizeof *g);
  uint64_t ranges = 0;
  for (uint32_t r = 0; r < nr; r++) {
    int64_t s = ix->nvtx.start[r], e = ix->nvtx.end[r];
    if (s < c->t0 || s >= c->t1) continue;
    uint32_t nm = ix->nvtx.name[r] < ns ? ix->nvtx.name[r] : ns;
    ranges++;
    g[nm].count++;
    g[nm].cpu += e - s;
    g[nm].kern += rg[r].kern;
    if (rg[r].gmax > rg[r].gmin) {
      g[nm].with_gpu++;
      g[nm].proj += rg[r].gmax - rg[r].gmin;
    }
  }
  free(rg);
  uint32_t *order = nsys_xmalloc(((size_t)ns + 1) * sizeof *order), no = 0;
  for (uint32_t k = 0; k <= ns; k++)
    if (g[k].count) order[no++] = k;
  if (no > 1) qsort_r(order, no, sizeof *order, nsys__cmp_nv, g);
  uint32_t shown = (limit > 0 && (uint64_t)limit < no) ? (uint32_t)limit : no;
  for (uint32_t i = 0; i < shown; i++) {
    nsys__nv *x = &g[order[i]];
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_str(o, NV_NAME, order[i] < ns ? nsys_strtab_get(&ix->strings, order[i]) : "");
    nsys_rset_i64(o, NV_COUNT, x->count);
    nsys_rset_i64(o, NV_CPU_NS, x->cpu);
    nsys_rset_i64(o, NV_GPU_PROJECTED_NS, x->proj);
    nsys_rset_i64(o, NV_KERNEL_NS, x->kern);
    nsys_rset_i64(o, NV_WITH_GPU, x->with_gpu);
  }
  /* kernel -> innermost NVTX map, top 50 by kernel time */
  nsys__kmap *km = nsys_xmalloc((pm.n + 1) * sizeof *km);
  size_t m = 0;
  for (size_t i = 0; i < pm.cap; i++)
    if (pm.e[i].key) {
      uint64_t key = pm.e[i].key - 1;
      km[m++] = (nsys__kmap){(uint32_t)(key >> 32), (uint32_t)key, pm.e[i].count, pm.e[i].ns};
    }
  if (m > 1) qsort(km, m, sizeof *km, nsys__cmp_kmap_ns);
  nsys_rtab *map = nsys_rset_arr(summary, NVS_KERNEL_TO_NVTX);
  for (size_t i = 0; i < m && i < 50; i++) {
    nsys_rec o = nsys_rtab_add(map);
    nsys_rset_str(o, NVM_KERNEL, nsys_strtab_get(&ix->strings, km[i].kernel));
    nsys_rset_str(o, NVM_NVTX, nsys_strtab_get(&ix->strings, km[i].nvtx));
    nsys_rset_i64(o, NVM_COUNT, km[i].count);
    nsys_rset_i64(o, NVM_KERNEL_NS, km[i].ns);
  }
  nsys_rset_i64(summary, NVS_RANGES, (int64_t)ranges);
  nsys_rset_i64(summary, NVS_DISTINCT_NAMES, no);
  nsys_rset_i64(summary, NVS_KERNELS, (int64_t)kernels);
  nsys_rset_i64(summary, NVS_KERNELS_IN_NVTX, (int64_t)attributed);
  nsys_rset_f64(summary, NVS_KERNELS_IN_NVTX_PCT, kernels ? nsys_round2(100.0 * (double)attributed / (double)kernels) : 0);
  free(km);
  free(pm.e);
  free(order);
  free(g);
  return true;
}
