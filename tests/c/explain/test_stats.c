/* Per-name statistics, NVTX placement and kernel/explain on a hand-built
 * index (no profile: launch configuration and occupancy are absent). */
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/strtab.h"
#include "explain/explain.h"
#include "explain/kernel_stats.h"
#include "index/index.h"

/* Two streams on device 0; ops (start, dur, name):
 *   A x5 durations 10,20,30,40,1000 (stream 7), B x2 durations 5,7 (stream 8),
 *   memcpy x1 duration 100 (stream 8). One thread, NVTX "step" > "fwd". */
static nsys_index *build(void) {
  nsys_index *ix = calloc(1, sizeof *ix);
  nsys_strtab_init(&ix->strings);
  uint32_t a = nsys_strtab_intern(&ix->strings, "ampere_sgemm_128x64_tn", 22);
  uint32_t b = nsys_strtab_intern(&ix->strings, "my_kernel", 9);
  uint32_t m = nsys_strtab_intern(&ix->strings, "[CUDA memcpy HtoD]", 18);
  uint32_t step = nsys_strtab_intern(&ix->strings, "step", 4);
  uint32_t fwd = nsys_strtab_intern(&ix->strings, "fwd", 3);
  uint32_t launch = nsys_strtab_intern(&ix->strings, "cudaLaunchKernel", 16);
  uint32_t n = 8;
  ix->ops.n = n;
  ix->ops.start = calloc(n, sizeof(int64_t));
  ix->ops.end = calloc(n, sizeof(int64_t));
  ix->ops.name = calloc(n, sizeof(uint32_t));
  ix->ops.full_name = calloc(n, sizeof(uint32_t));
  ix->ops.track = calloc(n, sizeof(uint32_t));
  ix->ops.api = calloc(n, sizeof(int32_t));
  ix->ops.rowid = calloc(n, sizeof(int64_t));
  ix->ops.kind = calloc(n, 1);
  static const int64_t dur[8] = {30, 10, 1000, 20, 40, 5, 7, 100};
  for (uint32_t i = 0; i < n; i++) {
    ix->ops.start[i] = 1000 * (int64_t)i;
    ix->ops.end[i] = ix->ops.start[i] + dur[i];
    ix->ops.name[i] = ix->ops.full_name[i] = i < 5 ? a : i < 7 ? b : m;
    ix->ops.track[i] = i < 5 ? 0 : 1;
    ix->ops.api[i] = i < 5 ? (int32_t)i : -1;
    ix->ops.kind[i] = i == 7 ? NSYS_OP_MEMCPY : NSYS_OP_KERNEL;
  }
  ix->n_tracks = 2;
  ix->tracks = calloc(2, sizeof *ix->tracks);
  ix->tracks[0] = (nsys_gpu_track){0, 7, 1, 0, 5, NSYS_STREAM_COMPUTE, 0};
  ix->tracks[1] = (nsys_gpu_track){0, 8, 1, 5, 3, NSYS_STREAM_MIXED, 0};
  ix->n_threads = 1;
  ix->threads = calloc(1, sizeof *ix->threads);
  ix->threads[0] = (nsys_host_thread){1, 1, NSYS_STR_NONE, 0, 5, 0, 2, 1};
  ix->api.n = 5;
  ix->api.start = calloc(5, sizeof(int64_t));
  ix->api.end = calloc(5, sizeof(int64_t));
  ix->api.name = calloc(5, sizeof(uint32_t));
  ix->api.thread = calloc(5, sizeof(uint32_t));
  ix->api.first_op = calloc(5, sizeof(int32_t));
  ix->api.correlation = calloc(5, sizeof(int64_t));
  ix->api.rowid = calloc(5, sizeof(int64_t));
  for (uint32_t i = 0; i < 5; i++) {
    ix->api.start[i] = 100 * (int64_t)i + 10; /* calls at 10,110,210,310,410 */
    ix->api.end[i] = ix->api.start[i] + 5;
    ix->api.name[i] = launch;
    ix->api.first_op[i] = (int32_t)i;
  }
  /* NVTX: step [0, 500], fwd [0, 250] (child) */
  ix->nvtx.n = 2;
  ix->nvtx.start = calloc(2, sizeof(int64_t));
  ix->nvtx.end = calloc(2, sizeof(int64_t));
  ix->nvtx.name = calloc(2, sizeof(uint32_t));
  ix->nvtx.domain = calloc(2, sizeof(uint32_t));
  ix->nvtx.thread = calloc(2, sizeof(uint32_t));
  ix->nvtx.depth = calloc(2, sizeof(uint16_t));
  ix->nvtx.parent = calloc(2, sizeof(int32_t));
  ix->nvtx.start[0] = 0, ix->nvtx.end[0] = 500, ix->nvtx.name[0] = step, ix->nvtx.parent[0] = -1;
  ix->nvtx.start[1] = 0, ix->nvtx.end[1] = 250, ix->nvtx.name[1] = fwd, ix->nvtx.parent[1] = 0, ix->nvtx.depth[1] = 1;
  ix->span_start = 0;
  ix->span_end = 8000;
  return ix;
}

static void release(nsys_index *ix) {
  free(ix->ops.start), free(ix->ops.end), free(ix->ops.name), free(ix->ops.full_name), free(ix->ops.track);
  free(ix->ops.api), free(ix->ops.rowid), free(ix->ops.kind), free(ix->tracks), free(ix->threads);
  free(ix->api.start), free(ix->api.end), free(ix->api.name), free(ix->api.thread), free(ix->api.first_op);
  free(ix->api.correlation), free(ix->api.rowid);
  free(ix->nvtx.start), free(ix->nvtx.end), free(ix->nvtx.name), free(ix->nvtx.domain), free(ix->nvtx.thread);
  free(ix->nvtx.depth), free(ix->nvtx.parent);
  nsys_strtab_free(&ix->strings);
  free(ix);
}

/* A group's order by (duration, op id): ties keep op order, on the radix
 * path (small durations) and on the fallback for durations whose key does
 * not fit 64 bits; the brief figures equal the full statistics'. */
static void check_group_order(int64_t big) {
  nsys_kstats_cache_clear();
  nsys_index *ix = build();
  const int64_t dur[5] = {big, 7, big, 7, 3};
  for (uint32_t i = 0; i < 5; i++) ix->ops.end[i] = ix->ops.start[i] + dur[i];
  uint32_t a = nsys_strtab_find(&ix->strings, "ampere_sgemm_128x64_tn", 22);
  nsys_kstats_brief br;
  CHECK(nsys_kstats_brief_get(NULL, ix, NSYS_KSTATS_BY_NAME, a, &br, NULL, NULL, NULL));
  uint32_t n = 0;
  uint32_t *ops = nsys_kstats_ops(NULL, ix, NSYS_KSTATS_BY_NAME, a, &n);
  static const uint32_t want[5] = {4, 1, 3, 0, 2};
  CHECK_EQ(n, 5);
  for (uint32_t i = 0; ops && i < 5 && i < n; i++) CHECK_EQ(ops[i], want[i]);
  free(ops);
  nsys_kstats st;
  CHECK(nsys_kstats_get(NULL, ix, NSYS_KSTATS_BY_NAME, a, &st, NULL, NULL, NULL));
  CHECK(st.min_ns == 3 && st.max_ns == big && st.longest_op == 2 && st.median_op == 3 && st.median_ns == 7);
  CHECK(br.count == st.count && br.total_ns == st.total_ns && br.kind == st.kind && br.first_op == st.first_op);
  CHECK_EQ(br.total_ns, 2 * big + 17);
  release(ix);
  nsys_kstats_cache_clear();
}

int main(void) {
  check_group_order(30);
  check_group_order((int64_t)1 << 61); /* key bits 62 + 3 > 64: the pair sort */
  nsys_index *ix = build();
  nsys_kstats st;
  uint32_t a = nsys_strtab_find(&ix->strings, "ampere_sgemm_128x64_tn", 22);
  CHECK(nsys_kstats_get(NULL, ix, NSYS_KSTATS_BY_NAME, a, &st, NULL, NULL, NULL));
  CHECK(st.count == 5 && st.total_ns == 1100 && st.min_ns == 10 && st.max_ns == 1000);
  /* percentiles interpolate linearly between the closest ranks (as top_kernels):
   * sorted 10,20,30,40,1000 */
  CHECK(st.median_ns == 30); /* position 0.5 * 4 = 2 */
  CHECK(st.p95_ns == 808);   /* position 3.8: 40 + 0.8 * 960 */
  CHECK(st.longest_op == 2 && st.first_op == 0 && st.n_tracks == 1 && st.n_variants == 1);
  CHECK(st.rank == 1 && st.n_groups == 2); /* among kernel names only */
  CHECK_NEAR(st.pct_kind_time, 100.0 * 1100 / 1112, 1e-9);
  CHECK_NEAR(st.pct_gpu_time, 100.0 * 1100 / 1212, 1e-9);
  /* NVTX: calls 0..2 (t=10,110,210) sit in step > fwd, calls 3..4 in step */
  CHECK(st.nvtx_sampled == 5 && st.nvtx_attributed == 5);
  CHECK(st.n_nvtx == 2 && strcmp(st.nvtx[0].path, "step > fwd") == 0 && st.nvtx[0].count == 3);
  CHECK(strcmp(st.nvtx[1].path, "step") == 0 && st.nvtx[1].count == 2);
  char path[64];
  nsys_kstats_nvtx_path(ix, 4, path, sizeof path);
  CHECK_STR(path, "step");
  nsys_kstats_nvtx_path(ix, 6, path, sizeof path); /* no launch known */
  CHECK_STR(path, "");
  nsys_kstats_nvtx_path(ix, 1, path, 6); /* truncated from the outer end */
  CHECK(strlen(path) < 6);
  uint32_t b = nsys_strtab_find(&ix->strings, "my_kernel", 9);
  CHECK(nsys_kstats_get(NULL, ix, NSYS_KSTATS_BY_NAME, b, &st, NULL, NULL, NULL));
  CHECK(st.count == 2 && st.median_ns == 6 && st.p95_ns == 7 && st.rank == 2 && st.n_nvtx == 0); /* 5, 7 */
  uint32_t top[4];
  CHECK(nsys_kstats_top(NULL, ix, NSYS_KSTATS_BY_NAME, NSYS_OP_KERNEL, top, 4) == 2 && top[0] == a && top[1] == b);
  CHECK(nsys_kstats_top(NULL, ix, NSYS_KSTATS_BY_NAME, -1, top, 1) == 1 && top[0] == a);
  CHECK(!nsys_kstats_get(NULL, ix, NSYS_KSTATS_BY_NAME, 999, &st, NULL, NULL, NULL));

  /* kernel/explain on the hand-built index: the typed result */
  nsys_task task;
  nsys_task_init(&task);
  nsys_explain_req req = {NULL, ix, "ampere_sgemm_128x64_tn", -1};
  nsys_explain_result r;
  CHECK(nsys_explain_kernel(&task, &req, &r));
  CHECK_STR(r.origin, "cublas");
  CHECK(r.have_stats && r.stats.count == 5 && r.stats.total_ns == 1100);
  CHECK(!r.have_launch && r.pattern != NULL && r.kernel_id == -1);
  CHECK(r.have_nvtx_path);
  CHECK_STR(r.nvtx_path, "step > fwd");
  CHECK(r.n_streams == 1 && r.markdown && strstr(r.markdown, "ampere") != NULL);
  nsys_explain_result_free(&r);
  req = (nsys_explain_req){NULL, ix, NULL, 6};
  CHECK(nsys_explain_kernel(&task, &req, &r));
  CHECK_STR(r.origin, "unknown");
  CHECK(r.pattern == NULL && r.kernel_id == 6);
  nsys_explain_result_free(&r);
  req = (nsys_explain_req){NULL, ix, NULL, 99};
  CHECK(!nsys_explain_kernel(&task, &req, &r) && task.err == NSYS_E_NOT_FOUND);
  nsys_explain_result_free(&r);
  /* the order within a name is (duration, op id) whatever the durations'
   * magnitudes (the radix sort's passes: beyond 2^33 ns, ties, zero) */
  nsys_kstats_cache_clear();
  static const int64_t big_dur[5] = {(1LL << 40) + 5, 7, (1LL << 40) + 5, 0, 1LL << 33};
  for (uint32_t i = 0; i < 5; i++) ix->ops.end[i] = ix->ops.start[i] + big_dur[i];
  uint32_t n_ops = 0, *ops = nsys_kstats_ops(NULL, ix, NSYS_KSTATS_BY_NAME, a, &n_ops);
  CHECK(ops && n_ops == 5);
  CHECK(ops[0] == 3 && ops[1] == 1 && ops[2] == 4 && ops[3] == 0 && ops[4] == 2);
  free(ops);
  CHECK(nsys_kstats_get(NULL, ix, NSYS_KSTATS_BY_NAME, a, &st, NULL, NULL, NULL));
  CHECK(st.max_ns == (1LL << 40) + 5 && st.min_ns == 0);
  nsys_kstats_cache_clear();
  release(ix);
  return nsys_check_done("explain_stats");
}
