/* kernel_launch_overhead's start order and its window sweep
 * (analysis/klaunch_sweep.h) on generated indexes (no database).
 *
 * 1. Start order is total: kernels of two streams starting at the same
 *    instant are taken in track order, whatever the merge's history (worked
 *    out below: the history order gives another exposed time).
 * 2. Windows read from the whole sweep (a lent cache, as the server's
 *    warm-up leaves it) answer the same bytes as the loop over the window's
 *    kernels (NSYS_AI_WINDOW_FAST=0) on adversarial devices: 3 streams, 20
 *    streams, 512 streams, starts tied across streams with different sizes
 *    and launch calls while the GPU is idle, storms of 100 kernels and more
 *    crossing the window edges, pauses, kernels ending before they start,
 *    clocks past 2^60 and below 0, windows between op edges (±1). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "aresult_text.h"
#include "common/util.h"
#include "methods/analysis_json.h"
#include "methods/analysis_params.h"
#include "../common/nsys_check.h"

/* ---- a generated index: kernels per track, one launching thread ---- */
typedef struct {
  int64_t s, e, as, ae; /* as > ae: not launched */
  uint32_t name;
} gk;

typedef struct {
  nsys_index ix;
  gk *k;
  uint32_t *ktrack;
  uint32_t n, cap;
  nsys_gpu_track tracks[600];
  nsys_host_thread thread;
} gix;

static void gix_add(gix *g, uint32_t track, int64_t s, int64_t e, bool launched, int64_t as, int64_t ae, uint32_t name) {
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 4096;
    g->k = nsys_xrealloc(g->k, g->cap * sizeof *g->k);
    g->ktrack = nsys_xrealloc(g->ktrack, g->cap * sizeof *g->ktrack);
  }
  g->k[g->n] = (gk){s, e, launched ? as : 1, launched ? ae : 0, name};
  g->ktrack[g->n++] = track;
}

static const gix *g_sort;
static int cmp_op(const void *x, const void *y) { /* by (track, start, end) */
  const gix *g = g_sort;
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  if (g->ktrack[a] != g->ktrack[b]) return g->ktrack[a] < g->ktrack[b] ? -1 : 1;
  if (g->k[a].s != g->k[b].s) return g->k[a].s < g->k[b].s ? -1 : 1;
  if (g->k[a].e != g->k[b].e) return g->k[a].e < g->k[b].e ? -1 : 1;
  return a < b ? -1 : a > b;
}
static int cmp_api(const void *x, const void *y) { /* launched ops by call start */
  const gix *g = g_sort;
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  if (g->k[a].as != g->k[b].as) return g->k[a].as < g->k[b].as ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* The index of the kernels added (tracks already set: device, stream). */
static void gix_finish(gix *g, uint32_t n_tracks) {
  nsys_index *ix = &g->ix;
  uint32_t n = g->n, *ord = nsys_xmalloc((n + 1) * sizeof *ord), *api_ord = nsys_xmalloc((n + 1) * sizeof *api_ord);
  for (uint32_t i = 0; i < n; i++) ord[i] = i;
  g_sort = g;
  qsort(ord, n, sizeof *ord, cmp_op);
  ix->tracks = g->tracks;
  ix->n_tracks = n_tracks;
  ix->ops.n = n;
  ix->ops.start = nsys_xmalloc((n + 1) * sizeof(int64_t));
  ix->ops.end = nsys_xmalloc((n + 1) * sizeof(int64_t));
  ix->ops.rowid = nsys_xmalloc((n + 1) * sizeof(int64_t));
  ix->ops.name = nsys_xmalloc((n + 1) * sizeof(uint32_t));
  ix->ops.full_name = nsys_xmalloc((n + 1) * sizeof(uint32_t));
  ix->ops.track = nsys_xmalloc((n + 1) * sizeof(uint32_t));
  ix->ops.api = nsys_xmalloc((n + 1) * sizeof(int32_t));
  ix->ops.kind = nsys_xcalloc(n + 1, 1);
  ix->op_next = nsys_xmalloc((n + 1) * sizeof(int32_t));
  for (uint32_t t = 0; t < n_tracks; t++) g->tracks[t].count = 0;
  uint32_t na = 0;
  for (uint32_t i = 0; i < n; i++) {
    const gk *k = &g->k[ord[i]];
    uint32_t t = g->ktrack[ord[i]];
    if (!g->tracks[t].count) g->tracks[t].first = i;
    g->tracks[t].count++;
    ix->ops.start[i] = k->s;
    ix->ops.end[i] = k->e;
    ix->ops.rowid[i] = i;
    ix->ops.name[i] = ix->ops.full_name[i] = k->name;
    ix->ops.track[i] = t;
    ix->ops.kind[i] = NSYS_OP_KERNEL;
    ix->op_next[i] = -1;
    ix->ops.api[i] = -1;
    if (k->as <= k->ae) api_ord[na++] = i;
  }
  /* calls sorted by start on the one thread */
  gk *byop = nsys_xmalloc((n + 1) * sizeof *byop);
  for (uint32_t i = 0; i < n; i++) byop[i] = g->k[ord[i]];
  free(g->k);
  g->k = byop;
  qsort(api_ord, na, sizeof *api_ord, cmp_api);
  ix->api.n = na;
  ix->api.start = nsys_xmalloc((na + 1) * sizeof(int64_t));
  ix->api.end = nsys_xmalloc((na + 1) * sizeof(int64_t));
  ix->api.correlation = nsys_xmalloc((na + 1) * sizeof(int64_t));
  ix->api.rowid = nsys_xmalloc((na + 1) * sizeof(int64_t));
  ix->api.name = nsys_xmalloc((na + 1) * sizeof(uint32_t));
  ix->api.thread = nsys_xcalloc(na + 1, sizeof(uint32_t));
  ix->api.first_op = nsys_xmalloc((na + 1) * sizeof(int32_t));
  uint32_t launch = nsys_strtab_intern(&ix->strings, "cudaLaunchKernel", 16);
  for (uint32_t j = 0; j < na; j++) {
    uint32_t op = api_ord[j];
    ix->api.start[j] = g->k[op].as;
    ix->api.end[j] = g->k[op].ae;
    ix->api.correlation[j] = ix->api.rowid[j] = j;
    ix->api.name[j] = launch;
    ix->api.first_op[j] = (int32_t)op;
    ix->ops.api[op] = (int32_t)j;
  }
  g->thread = (nsys_host_thread){.pid = 1, .tid = 1, .api_count = na};
  ix->threads = &g->thread;
  ix->n_threads = 1;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < n; i++) {
    lo = NSYS_MIN(lo, NSYS_MIN(ix->ops.start[i], ix->ops.end[i]));
    hi = NSYS_MAX(hi, NSYS_MAX(ix->ops.start[i], ix->ops.end[i]));
  }
  for (uint32_t j = 0; j < na; j++) {
    lo = NSYS_MIN(lo, ix->api.start[j]);
    hi = NSYS_MAX(hi, ix->api.end[j]);
  }
  ix->span_start = lo;
  ix->span_end = hi;
  free(ord);
  free(api_ord);
}

static void gix_free(gix *g) {
  nsys_index *ix = &g->ix;
  free(ix->ops.start); free(ix->ops.end); free(ix->ops.rowid); free(ix->ops.name); free(ix->ops.full_name);
  free(ix->ops.track); free(ix->ops.api); free(ix->ops.kind); free(ix->op_next);
  free(ix->api.start); free(ix->api.end); free(ix->api.correlation); free(ix->api.rowid); free(ix->api.name);
  free(ix->api.thread); free(ix->api.first_op);
  nsys_strtab_free(&ix->strings);
  free(g->k);
  free(g->ktrack);
  memset(g, 0, sizeof *g);
}

static uint32_t add_track(gix *g, uint32_t *nt, int32_t dev, int64_t stream) {
  g->tracks[*nt] = (nsys_gpu_track){.device = dev, .stream = stream, .pid = 1, .cls = NSYS_STREAM_COMPUTE};
  return (*nt)++;
}

/* kernel_launch_overhead over [a, b) (a == b: the whole profile), limit 0, as compact JSON. */
static char *answer(gix *g, nsys_acache *k, int64_t a, int64_t b) {
  nsys_task task;
  nsys_task_init(&task);
  nsys_aparams ps;
  nsys_aparams_defaults(&ps, nsys_analysis_find("kernel_launch_overhead"));
  nsys_aparams_set_int(&ps, "limit", 0);
  if (a != b) {
    nsys_aparams_set_int(&ps, "start", a);
    nsys_aparams_set_int(&ps, "end", b);
  }
  nsys_aresult *r = nsys_analysis_exec(&task, NULL, &g->ix, "kernel_launch_overhead", &ps, k);
  nsys_aparams_dispose(&ps);
  return t_aresult_text(r);
}

static int64_t summary_i64(const char *json, const char *key) {
  cJSON *j = cJSON_Parse(json);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "summary");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
  int64_t x = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
  cJSON_Delete(j);
  return x;
}

/* Two streams of one device start kernels at 1000. Stream 7 (track 0):
 * [1000, 1005) launched by [500, 950). Stream 8 (track 1): [0, 100), then
 * [1000, 50000) launched by [200, 300). Track order takes stream 7's first:
 * |(100, 1000) ∩ (500, 950)| = 450, then stream 8's starts inside the busy
 * time (none). The merge's history (stream 8's cursor back on top at 1000)
 * would take stream 8's first: |(100, 1000) ∩ (200, 300)| = 100. */
static void test_tie_order(void) {
  static gix g;
  memset(&g, 0, sizeof g);
  nsys_strtab_init(&g.ix.strings);
  uint32_t nm = nsys_strtab_intern(&g.ix.strings, "k", 1), nt = 0;
  uint32_t t7 = add_track(&g, &nt, 0, 7), t8 = add_track(&g, &nt, 0, 8);
  gix_add(&g, t7, 1000, 1005, true, 500, 950, nm);
  gix_add(&g, t8, 0, 100, false, 0, 0, nm);
  gix_add(&g, t8, 1000, 50000, true, 200, 300, nm);
  gix_finish(&g, nt);
  char *r = answer(&g, NULL, 0, 0);
  CHECK_MSG(r && summary_i64(r, "exposedLaunchNs") == 450, "tie order: %s", r ? r : "-");
  free(r);
  gix_free(&g);
}

static uint32_t rnd_next(uint32_t *r) {
  *r = *r * 1103515245u + 12345u;
  return *r >> 8;
}

/* Device dev's n_streams streams, per_stream kernels each, on a grid of
 * 1000 ns (ties across streams), small kernels in storm phases, pauses,
 * kernels of 3 ms (the merge from a window's start skips them past 64 ops),
 * launch calls before and after the start, and (back) kernels ending before
 * they start. Records a few op edges in edges. */
static void gen_device(gix *g, uint32_t *nt, int32_t dev, int n_streams, int per_stream, int64_t base, uint32_t *rnd,
                       bool back, int64_t *edges, uint32_t *ne, uint32_t ne_max, uint32_t names[3]) {
  for (int st = 0; st < n_streams; st++) {
    uint32_t tr = add_track(g, nt, dev, 7 + st);
    int64_t grid = 0;
    for (int i = 0; i < per_stream; i++) {
      uint32_t r = rnd_next(rnd);
      grid += 1 + r % 2;
      if (r % 97 == 0) grid += 300; /* a pause: 300 us */
      int64_t s = base + grid * 1000;
      bool storm_phase = (grid / 150) % 2 == 0;
      int64_t d = storm_phase || r % 5 ? (int64_t)(r % 9000) + 1 : 20000 + (int64_t)(r % 3);
      if (r % 13 == 0) d = 0;
      if (r % 499 == 0) d = 3000000; /* outlasts its stream's next 64 ops: a window from inside it starts unlike the whole sweep */
      if (back && r % 41 == 0) d = -5000 - (int64_t)(r % 3000); /* ends before it starts */
      uint32_t r2 = rnd_next(rnd);
      int64_t as = s - 3000 - (int64_t)(r2 % 1500), ae = s + 500 - (int64_t)(r2 % 4000);
      gix_add(g, tr, s, s + d, r2 % 3 != 0, as, ae, names[r2 % 3]);
      if (*ne + 4 <= ne_max && r2 % 23 == 0) {
        edges[(*ne)++] = s;
        edges[(*ne)++] = s + 1;
        edges[(*ne)++] = s - 1;
        edges[(*ne)++] = s + d;
      }
    }
  }
}

static void test_window_equal(void) {
  static gix g;
  enum { NE_MAX = 400 };
  static int64_t edges[NE_MAX];
  for (int base_i = 0; base_i < 2; base_i++) {
    int64_t base = base_i ? ((int64_t)1 << 60) + 3 : -900000;
    memset(&g, 0, sizeof g);
    nsys_strtab_init(&g.ix.strings);
    uint32_t names[3] = {nsys_strtab_intern(&g.ix.strings, "gemm", 4), nsys_strtab_intern(&g.ix.strings, "relu", 4),
                         nsys_strtab_intern(&g.ix.strings, "add", 3)};
    uint32_t nt = 0, ne = 0, rnd = 777u + (uint32_t)base_i;
    gen_device(&g, &nt, 0, 3, 400, base, &rnd, false, edges, &ne, NE_MAX - 2, names);   /* 3 streams */
    gen_device(&g, &nt, 1, 20, 60, base, &rnd, true, edges, &ne, NE_MAX - 2, names);    /* > 16, kernels ending first */
    gen_device(&g, &nt, 2, 512, 5, base, &rnd, false, edges, &ne, NE_MAX - 2, names);   /* 512 streams */
    gen_device(&g, &nt, 3, 2, 300, base, &rnd, true, edges, &ne, NE_MAX - 2, names);    /* 2 streams, ending first */
    gix_finish(&g, nt);
    edges[ne++] = g.ix.span_start - 1;
    edges[ne++] = g.ix.span_end + 1;
    nsys_acache k;
    nsys_acache_init(&k, &g.ix);
    free(answer(&g, &k, g.ix.span_start, g.ix.span_end + 1)); /* a large window: builds the sweeps */
    CHECK(k.ksweep != NULL);
    uint32_t rp = 99u, pairs = 0, bad = 0;
    for (uint32_t x = 0; x < ne; x++)
      for (uint32_t y = 0; y < ne; y++) {
        int64_t a = edges[x], b = edges[y];
        bool span_edge = x >= ne - 2 || y >= ne - 2;
        if (a >= b || rnd_next(&rp) % (span_edge ? 10 : 400) != 0) continue; /* 1 in 400, 1 in 10 with a span edge */
        pairs++;
        char *fast = answer(&g, &k, a, b);
        setenv("NSYS_AI_WINDOW_FAST", "0", 1);
        char *slow = answer(&g, NULL, a, b);
        unsetenv("NSYS_AI_WINDOW_FAST");
        bool ok = fast && slow && !strcmp(fast, slow);
        if (!ok && bad++ < 3)
          CHECK_MSG(ok, "[%lld, %lld)\n fast %s\n slow %s", (long long)a, (long long)b, fast ? fast : "-",
                    slow ? slow : "-");
        free(fast);
        free(slow);
      }
    CHECK_MSG(!bad, "%u of %u windows differ", bad, pairs);
    CHECK(pairs > 100);
    nsys_acache_dispose(&k);
    gix_free(&g);
  }
}

int main(void) {
  test_tie_order();
  test_window_equal();
  return nsys_check_done("klaunch_window");
}
