/* Analyses over small hand-built nsys_index values whose answers are worked
 * out by hand in the comments. No database: p == NULL. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "aresult_text.h"
#include "analysis/intervals.h"
#include "analysis/nccl.h"
#include "analysis/report.h"
#include "analysis/window.h"
#include "analysis/analyses.h"
#include "common/util.h"
#include "methods/analysis_json.h"
#include "methods/analysis_params.h"
#include "methods/analysis_render.h"
#include "../common/nsys_check.h"

/* ---- a tiny index builder ---- */
enum { MAXN = 1024 };
typedef struct {
  nsys_index ix;
  nsys_gpu_track tracks[8];
  int64_t os[MAXN], oe[MAXN], orow[MAXN];
  uint32_t oname[MAXN], ofull[MAXN], otrack[MAXN];
  int32_t oapi[MAXN], onext[MAXN];
  uint8_t okind[MAXN];
  nsys_host_thread threads[4];
  int64_t as[MAXN], ae[MAXN], acorr[MAXN], arow[MAXN];
  uint32_t aname[MAXN], athread[MAXN];
  int32_t afirst[MAXN];
  int64_t ns_[MAXN], ne[MAXN];
  uint32_t nname[MAXN], ndom[MAXN], nthread[MAXN];
  uint16_t ndepth[MAXN];
  int32_t nparent[MAXN];
} tix;

static uint32_t S(tix *t, const char *s) { return nsys_strtab_intern(&t->ix.strings, s, strlen(s)); }

static void tix_init(tix *t) {
  memset(t, 0, sizeof *t);
  nsys_strtab_init(&t->ix.strings);
  nsys_index *ix = &t->ix;
  ix->tracks = t->tracks;
  ix->ops.start = t->os; ix->ops.end = t->oe; ix->ops.name = t->oname; ix->ops.full_name = t->ofull;
  ix->ops.track = t->otrack; ix->ops.api = t->oapi; ix->ops.rowid = t->orow; ix->ops.kind = t->okind;
  ix->op_next = t->onext;
  ix->threads = t->threads;
  ix->api.start = t->as; ix->api.end = t->ae; ix->api.name = t->aname; ix->api.thread = t->athread;
  ix->api.first_op = t->afirst; ix->api.correlation = t->acorr; ix->api.rowid = t->arow;
  ix->nvtx.start = t->ns_; ix->nvtx.end = t->ne; ix->nvtx.name = t->nname; ix->nvtx.domain = t->ndom;
  ix->nvtx.thread = t->nthread; ix->nvtx.depth = t->ndepth; ix->nvtx.parent = t->nparent;
}

/* Tracks must be added in (device, stream) order and ops in start order per track. */
static uint32_t add_track(tix *t, int32_t dev, int64_t stream, uint32_t pid, uint8_t cls) {
  nsys_gpu_track *tr = &t->tracks[t->ix.n_tracks];
  tr->device = dev; tr->stream = stream; tr->pid = pid; tr->cls = cls;
  tr->first = t->ix.ops.n;
  return t->ix.n_tracks++;
}
static uint32_t add_thread(tix *t, uint32_t pid, uint32_t tid) {
  nsys_host_thread *th = &t->threads[t->ix.n_threads];
  th->pid = pid; th->tid = tid; th->api_first = t->ix.api.n; th->nvtx_first = t->ix.nvtx.n;
  return t->ix.n_threads++;
}
static uint32_t add_api(tix *t, uint32_t thread, int64_t s, int64_t e, const char *name) {
  uint32_t i = t->ix.api.n++;
  t->as[i] = s; t->ae[i] = e; t->aname[i] = S(t, name); t->athread[i] = thread; t->afirst[i] = -1;
  t->threads[thread].api_count++;
  return i;
}
static uint32_t add_op(tix *t, uint32_t track, int64_t s, int64_t e, const char *name, int32_t api, uint8_t kind) {
  uint32_t i = t->ix.ops.n++;
  t->os[i] = s; t->oe[i] = e; t->oname[i] = S(t, name); t->ofull[i] = S(t, name); t->otrack[i] = track;
  t->oapi[i] = api; t->okind[i] = kind; t->onext[i] = -1; t->orow[i] = i;
  t->tracks[track].count++;
  if (api >= 0) {
    if (t->afirst[api] < 0) t->afirst[api] = (int32_t)i;
    else {
      int32_t j = t->afirst[api];
      while (t->onext[j] >= 0) j = t->onext[j];
      t->onext[j] = (int32_t)i;
    }
  }
  return i;
}
static uint32_t add_nvtx(tix *t, uint32_t thread, int64_t s, int64_t e, const char *name, int32_t parent) {
  uint32_t i = t->ix.nvtx.n++;
  t->ns_[i] = s; t->ne[i] = e; t->nname[i] = S(t, name); t->ndom[i] = S(t, ""); t->nthread[i] = thread;
  t->nparent[i] = parent; t->ndepth[i] = parent < 0 ? 0 : (uint16_t)(t->ndepth[parent] + 1);
  t->threads[thread].nvtx_count++;
  return i;
}
static void tix_span(tix *t) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < t->ix.ops.n; i++) { lo = NSYS_MIN(lo, t->os[i]); hi = NSYS_MAX(hi, t->oe[i]); }
  for (uint32_t i = 0; i < t->ix.api.n; i++) { lo = NSYS_MIN(lo, t->as[i]); hi = NSYS_MAX(hi, t->ae[i]); }
  t->ix.span_start = lo; t->ix.span_end = hi;
}

static cJSON *run(tix *t, const char *name, const char *params_json) {
  nsys_task task;
  nsys_task_init(&task);
  cJSON *params = params_json ? cJSON_Parse(params_json) : NULL;
  cJSON *r = nsys_analysis_run_json(&task, NULL, &t->ix, name, params, NULL);
  if (!r) fprintf(stderr, "%s failed: %s\n", name, task.err_msg);
  cJSON_Delete(params);
  return r;
}
static double num(const cJSON *o, const char *path) {
  /* "a.b.0.c" */
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  const cJSON *cur = o;
  for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
    cur = (tok[0] >= '0' && tok[0] <= '9') ? cJSON_GetArrayItem(cur, atoi(tok)) : cJSON_GetObjectItemCaseSensitive(cur, tok);
  CHECK_MSG(cJSON_IsNumber(cur), "missing number at %s", path);
  return cJSON_IsNumber(cur) ? cur->valuedouble : NAN;
}
static const char *str(const cJSON *o, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  const cJSON *cur = o;
  for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
    cur = (tok[0] >= '0' && tok[0] <= '9') ? cJSON_GetArrayItem(cur, atoi(tok)) : cJSON_GetObjectItemCaseSensitive(cur, tok);
  return cJSON_IsString(cur) ? cur->valuestring : "";
}

/* ---- tests ---- */

static void test_intervals(void) {
  nsys_ivls a, b, c;
  nsys_ivls_init(&a); nsys_ivls_init(&b); nsys_ivls_init(&c);
  nsys_ivls_add_sorted(&a, 0, 10); nsys_ivls_add_sorted(&a, 5, 12); nsys_ivls_add_sorted(&a, 20, 30);
  CHECK_EQ(a.n, 2); CHECK_EQ(nsys_ivls_total(&a), 22);
  nsys_ivls_add_sorted(&b, 8, 25);
  CHECK_EQ(nsys_ivls_intersect_len(&a, &b), 4 + 5);
  nsys_ivls_union(&a, &b, &c);
  CHECK_EQ(c.n, 1); CHECK_EQ(nsys_ivls_total(&c), 30);
  nsys_ivls_index(&a);
  CHECK_EQ(nsys_ivls_len_in(&a, 11, 25), 1 + 5);
  CHECK_EQ(nsys_ivls_len_in(&a, -5, 100), 22);
  CHECK_EQ(nsys_ivls_len_in(&a, 12, 20), 0);
  nsys_ivls_free(&a); nsys_ivls_free(&b); nsys_ivls_free(&c);
}

static void test_nccl_parse(void) {
  nsys_nccl_info i;
  CHECK(nsys_nccl_parse("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", &i));
  CHECK(!strcmp(i.collective, "AllReduce") && !strcmp(i.redop, "Sum") && !strcmp(i.dtype, "bf16") &&
        !strcmp(i.algorithm, "RING") && !strcmp(i.protocol, "LL"));
  CHECK(nsys_nccl_parse("ncclKernel_AllReduce_RING_LL128_Sum_half(ncclDevComm*, unsigned long, ncclWork*)", &i));
  CHECK(!strcmp(i.collective, "AllReduce") && !strcmp(i.protocol, "LL128") && !strcmp(i.dtype, "half") &&
        !strcmp(i.algorithm, "RING"));
  CHECK(nsys_nccl_parse("ncclDevKernel_ReduceScatter_Sum_f32_COLLNET_DIRECT_SIMPLE", &i));
  CHECK(!strcmp(i.collective, "ReduceScatter") && !strcmp(i.algorithm, "COLLNET_DIRECT") &&
        !strcmp(i.protocol, "SIMPLE") && !strcmp(i.dtype, "f32"));
  CHECK(nsys_nccl_parse("ncclDevKernel_AllGather_RING_LL", &i));
  CHECK(!strcmp(i.collective, "AllGather") && !strcmp(i.dtype, ""));
  CHECK(nsys_nccl_parse("ncclDevKernel_SendRecv", &i) && !strcmp(i.collective, "SendRecv"));
  CHECK(nsys_nccl_parse("ncclAllReduceRingLLKernel_sum_f32(ncclColl)", &i));
  CHECK(!strcmp(i.collective, "AllReduce") && !strcmp(i.algorithm, "RING") && !strcmp(i.protocol, "LL"));
  CHECK(!nsys_nccl_parse("gemm_kernel", &i));
  CHECK(nsys_name_is_nccl("NCCLfoo"));
}

static void test_api_classify(void) {
  CHECK(nsys_api_classify("cudaLaunchKernel") == NSYS_API_LAUNCH);
  CHECK(nsys_api_classify("cuLaunchKernelEx") == NSYS_API_LAUNCH);
  CHECK(nsys_api_classify("cudaDeviceSynchronize") == NSYS_API_SYNC);
  CHECK(nsys_api_classify("cudaStreamWaitEvent") == NSYS_API_SYNC);
  CHECK(nsys_api_classify("cudaMemcpyAsync") == NSYS_API_MEMCPY);
  CHECK(nsys_api_classify("cudaMemcpy") == NSYS_API_MEMCPY_SYNC);
  CHECK(nsys_api_classify("cudaMalloc") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cudaFree") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cudaMallocHost") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cudaHostAlloc") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cuMemAlloc") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cuMemCreate") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cuModuleLoadDataEx") == NSYS_API_MODULE);
  CHECK(nsys_api_classify("cuLibraryLoadData") == NSYS_API_MODULE);
  CHECK(nsys_api_classify("cuLinkComplete") == NSYS_API_MODULE);
  CHECK(nsys_api_classify("cudaHostRegister") == NSYS_API_HOST_REGISTER);
  CHECK(nsys_api_classify("cuMemHostUnregister") == NSYS_API_HOST_REGISTER);
  CHECK(nsys_api_classify("cuMemHostAlloc") == NSYS_API_ALLOC);
  CHECK(nsys_api_classify("cudaMemcpyToSymbol") == NSYS_API_MEMCPY_SYNC);
  CHECK(nsys_api_classify("cudaGetDevice") == NSYS_API_OTHER);
  CHECK(nsys_api_classify("cuModuleGetFunction") == NSYS_API_OTHER);
}

/* One device, compute stream 7 and comm stream 12:
 *   compute [0,10) [20,30) ; comm [5,25)
 *   compute union 20, comm 20, overlap [5,10)+[20,25) = 10, idle in [0,30) = 0.
 * Device 1: compute [100,110), [150,160): idle 40 of span 60. */
static void build_overlap(tix *t) {
  tix_init(t);
  uint32_t th = add_thread(t, 10, 10);
  uint32_t tc = add_track(t, 0, 7, 10, NSYS_STREAM_COMPUTE);
  uint32_t a0 = add_api(t, th, -5, -1, "cudaLaunchKernel");
  add_op(t, tc, 0, 10, "gemm", (int32_t)a0, NSYS_OP_KERNEL);
  add_op(t, tc, 20, 30, "gemm", -1, NSYS_OP_KERNEL);
  uint32_t tm = add_track(t, 0, 12, 10, NSYS_STREAM_COMM);
  add_op(t, tm, 5, 25, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", -1, NSYS_OP_KERNEL);
  uint32_t t1 = add_track(t, 1, 7, 10, NSYS_STREAM_COMPUTE);
  add_op(t, t1, 100, 110, "gemm", -1, NSYS_OP_KERNEL);
  add_op(t, t1, 150, 160, "small", -1, NSYS_OP_KERNEL);
  tix_span(t);
}

static void test_overlap(void) {
  tix t;
  build_overlap(&t);
  cJSON *r = run(&t, "overlap", "{\"perIteration\": false}");
  CHECK(r);
  CHECK_NEAR(num(r, "summary.devices.0.device"), 0, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.computeOnlyNs"), 10, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.commOnlyNs"), 10, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.overlapNs"), 10, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.idleNs"), 0, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.commHiddenPct"), 50, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.1.idleNs"), 40, 1e-6);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), "devices"), 1), "commHiddenPct")));
  CHECK_NEAR(num(r, "window.start"), -5, 1e-6);
  cJSON_Delete(r);
  /* device filter */
  r = run(&t, "overlap", "{\"device\": 1, \"perIteration\": false}");
  CHECK(r && cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")) == 1);
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

static void test_top_kernels(void) {
  tix t;
  tix_init(&t);
  uint32_t tc = add_track(&t, 0, 7, 1, 0);
  /* k: 10, 20, 30, 40 (sum 100); z: 100 */
  add_op(&t, tc, 0, 10, "k", -1, NSYS_OP_KERNEL);
  add_op(&t, tc, 10, 30, "k", -1, NSYS_OP_KERNEL);
  add_op(&t, tc, 30, 60, "k", -1, NSYS_OP_KERNEL);
  add_op(&t, tc, 60, 100, "k", -1, NSYS_OP_KERNEL);
  add_op(&t, tc, 100, 200, "z", -1, NSYS_OP_KERNEL);
  add_op(&t, tc, 200, 300, "[CUDA memcpy HtoD]", -1, NSYS_OP_MEMCPY);
  tix_span(&t);
  cJSON *r = run(&t, "top_kernels", NULL);
  CHECK(r);
  CHECK(!strcmp(str(r, "rows.0.name"), "k") || !strcmp(str(r, "rows.0.name"), "z"));
  /* equal totals (100): tie broken by string id, k first */
  CHECK(!strcmp(str(r, "rows.0.name"), "k"));
  CHECK_NEAR(num(r, "rows.0.count"), 4, 1e-6);
  CHECK_NEAR(num(r, "rows.0.totalNs"), 100, 1e-6);
  CHECK_NEAR(num(r, "rows.0.avgNs"), 25, 1e-6);
  CHECK_NEAR(num(r, "rows.0.minNs"), 10, 1e-6);
  CHECK_NEAR(num(r, "rows.0.maxNs"), 40, 1e-6);
  CHECK_NEAR(num(r, "rows.0.medianNs"), 25, 1e-6);
  CHECK_NEAR(num(r, "rows.0.p95Ns"), 39, 1e-6); /* 30 + 0.85*10 = 38.5 -> rounds to 39 */
  /* sample standard deviation, as nsys stats: sqrt(500 / 3) = 12.91 (population: 11.18) */
  CHECK_NEAR(num(r, "rows.0.stddevNs"), 13, 1e-6);
  CHECK_NEAR(num(r, "rows.1.stddevNs"), 0, 1e-6); /* z: one instance */
  CHECK_NEAR(num(r, "rows.0.pctOfGpu"), 50, 1e-6);
  CHECK_NEAR(num(r, "summary.kernelCount"), 5, 1e-6);
  CHECK_NEAR(num(r, "summary.totalKernelNs"), 200, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "top_kernels", "{\"limit\": \"1\", \"start\": 50}");
  CHECK(r && cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")) == 1);
  CHECK_NEAR(num(r, "summary.kernelCount"), 2, 1e-6); /* kernels starting in [50, end) */
  cJSON_Delete(r);
  /* param errors */
  nsys_task task;
  nsys_task_init(&task);
  cJSON *bad = cJSON_Parse("{\"limt\": 3}");
  CHECK(nsys_analysis_run_json(&task, NULL, &t.ix, "top_kernels", bad, NULL) == NULL);
  CHECK(task.err == NSYS_E_INVALID_PARAMS && strstr(task.err_msg, "limt"));
  cJSON_Delete(bad);
  nsys_task_init(&task);
  bad = cJSON_Parse("{\"limit\": \"x\"}");
  CHECK(nsys_analysis_run_json(&task, NULL, &t.ix, "top_kernels", bad, NULL) == NULL);
  CHECK(task.err == NSYS_E_INVALID_PARAMS);
  cJSON_Delete(bad);
  nsys_task_init(&task);
  CHECK(nsys_analysis_run_json(&task, NULL, &t.ix, "no_such", NULL, NULL) == NULL);
  CHECK(task.err == NSYS_E_UNKNOWN_ANALYSIS);
  nsys_strtab_free(&t.ix.strings);
}

/* Gaps: device 0 streams 7 (compute) and 9 (compute):
 *   s7: [0,100) [3000,3100)        s9: [50,200) [1500,1600)
 *   union: [0,200) [1500,1600) [3000,3100)  -> device gaps 1300 and 1400
 * Host thread: cudaDeviceSynchronize [150, 1450) overlaps gap 1 for 1250 of 1300 -> sync;
 * gap 2 [1600,3000): only a launch at [2990,2995) (5 ns) -> cpu_stall.
 * The op at 3000 was launched at 2990 > prev_end 100 on its stream: host wait. */
static void test_gaps(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  uint32_t a0 = add_api(&t, th, -10, -5, "cudaLaunchKernel");
  add_api(&t, th, 150, 1450, "cudaDeviceSynchronize");
  uint32_t a2 = add_api(&t, th, 2990, 2995, "cudaLaunchKernel");
  uint32_t t7 = add_track(&t, 0, 7, 1, 0);
  add_op(&t, t7, 0, 100, "a", (int32_t)a0, NSYS_OP_KERNEL);
  add_op(&t, t7, 3000, 3100, "b", (int32_t)a2, NSYS_OP_KERNEL);
  uint32_t t9 = add_track(&t, 0, 9, 1, 0);
  add_op(&t, t9, 50, 200, "c", -1, NSYS_OP_KERNEL);
  add_op(&t, t9, 1500, 1600, "d", -1, NSYS_OP_KERNEL);
  tix_span(&t);
  cJSON *r = run(&t, "gpu_idle_gaps", "{\"minGapNs\": 1000, \"scope\": \"device\"}");
  CHECK(r);
  CHECK_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")), 2);
  CHECK_NEAR(num(r, "rows.0.durationNs"), 1400, 1e-6);
  CHECK(!strcmp(str(r, "rows.0.cause"), "cpu_stall"));
  CHECK_NEAR(num(r, "rows.1.durationNs"), 1300, 1e-6);
  CHECK(!strcmp(str(r, "rows.1.cause"), "sync"));
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "rows"), 0), "stream")));
  CHECK_NEAR(num(r, "summary.devices.0.idleNs"), 2700, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.sync"), 1300, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.cpu_stall"), 1400, 1e-6);
  /* stream split: s7 gap [100,3000) host wait (2900); s9 gap [200,1500) unattributed -> other (1300) */
  CHECK_NEAR(num(r, "summary.streamIdleSplit.hostWaitNs"), 2900, 1e-6);
  CHECK_NEAR(num(r, "summary.streamIdleSplit.otherNs"), 1300, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "gpu_idle_gaps", "{\"minGapNs\": 1000, \"scope\": \"stream\"}");
  CHECK(r && cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")) == 2);
  CHECK_NEAR(num(r, "rows.0.stream"), 7, 1e-6);
  CHECK_NEAR(num(r, "rows.0.durationNs"), 2900, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "sync_cost", NULL);
  CHECK(r);
  CHECK(!strcmp(str(r, "rows.0.api"), "cudaDeviceSynchronize"));
  CHECK_NEAR(num(r, "rows.0.totalNs"), 1300, 1e-6);
  /* busy during [150,1450): [150,200) = 50 -> idle 1250 */
  CHECK_NEAR(num(r, "rows.0.gpuIdleNs"), 1250, 1e-6);
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

/* Launch overhead: 3 kernels of 2 ns launched by 10 ns calls; one 20 us kernel by a 5 ns call. */
static void test_launch(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  uint32_t a[4];
  for (int i = 0; i < 3; i++) a[i] = add_api(&t, th, i * 20, i * 20 + 10, "cudaLaunchKernel");
  a[3] = add_api(&t, th, 100, 105, "cudaLaunchKernel");
  uint32_t tr = add_track(&t, 0, 7, 1, 0);
  for (int i = 0; i < 3; i++) add_op(&t, tr, i * 20 + 12, i * 20 + 14, "tiny", (int32_t)a[i], NSYS_OP_KERNEL);
  add_op(&t, tr, 200, 20200, "big", (int32_t)a[3], NSYS_OP_KERNEL);
  tix_span(&t);
  cJSON *r = run(&t, "kernel_launch_overhead", "{\"stormMinKernels\": 3}");
  CHECK(r);
  CHECK_NEAR(num(r, "summary.launchedKernels"), 4, 1e-6);
  CHECK_NEAR(num(r, "summary.kernelsShorterThanLaunch"), 3, 1e-6);
  CHECK_NEAR(num(r, "summary.stormCount"), 1, 1e-6);
  CHECK_NEAR(num(r, "summary.storms.0.kernels"), 3, 1e-6);
  /* queue: tiny 2 ns each, big 95 ns -> avg (6+95)/4 = 25.25 -> 25 */
  CHECK_NEAR(num(r, "summary.avgQueueNs"), 25, 1e-6);
  /* exposed launch: gaps [14,32) ∩ api [20,30) = 10; [34,52) ∩ [40,50) = 10; [54,200) ∩ [100,105) = 5 */
  CHECK_NEAR(num(r, "summary.exposedLaunchNs"), 25, 1e-6);
  CHECK(!strcmp(str(r, "rows.0.name"), "tiny"));
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

/* Iterations from NVTX "step N" ranges on the launching thread; step 2 is 3x. */
static void test_iterations(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  uint32_t tr = add_track(&t, 0, 7, 1, 0);
  int64_t base = 0;
  const int64_t durs[4] = {100, 100, 300, 100};
  char name[32];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "train_step %d", i);
    int32_t r = (int32_t)add_nvtx(&t, th, base, base + 50, name, -1);
    add_nvtx(&t, th, base + 1, base + 40, "optimizer_step", r);
    uint32_t a = add_api(&t, th, base + 2, base + 5, "cudaLaunchKernel");
    add_op(&t, tr, base + 10, base + 10 + durs[i], "k", (int32_t)a, NSYS_OP_KERNEL);
    base += 1000;
  }
  tix_span(&t);
  cJSON *r = run(&t, "iterations", NULL);
  CHECK(r);
  CHECK(!strcmp(str(r, "summary.method"), "nvtx"));
  CHECK_NEAR(num(r, "summary.count"), 4, 1e-6);
  CHECK_NEAR(num(r, "summary.outliers"), 1, 1e-6);
  CHECK_NEAR(num(r, "rows.2.durationNs"), 300, 1e-6);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "rows"), 2), "outlier")));
  CHECK(!strcmp(str(r, "rows.0.name"), "train_step 0"));
  cJSON_Delete(r);
  /* explicit marker and the gap fallback */
  r = run(&t, "iterations", "{\"marker\": \"no-such-range\", \"gapNs\": 500}");
  CHECK(r && !strcmp(str(r, "summary.method"), "gap"));
  CHECK_NEAR(num(r, "summary.count"), 4, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "mfu", "{\"modelFlops\": 1e3, \"peakTflops\": 1}");
  /* 1e3 FLOP in 100 ns = 1e10 FLOP/s = 0.01 TFLOP/s = 1% of 1 TFLOP/s */
  CHECK(r);
  CHECK_NEAR(num(r, "rows.0.achievedTflops"), 0.01, 1e-6);
  CHECK_NEAR(num(r, "rows.0.mfuPct"), 1, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "nvtx_summary", NULL);
  CHECK(r);
  CHECK_NEAR(num(r, "summary.kernelsInNvtx"), 4, 1e-6);
  CHECK(!strcmp(str(r, "summary.kernelToNvtx.0.nvtx"), "optimizer_step"));
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

static void test_stream_classification(void) {
  tix t;
  build_overlap(&t);
  cJSON *r = run(&t, "stream_classification", NULL);
  CHECK(r);
  CHECK(!strcmp(str(r, "rows.0.class"), "compute"));
  CHECK(!strcmp(str(r, "rows.1.class"), "comm"));
  CHECK_NEAR(num(r, "summary.comm"), 1, 1e-6);
  cJSON_Delete(r);
  r = run(&t, "nccl_breakdown", NULL);
  CHECK(r && !strcmp(str(r, "rows.0.collective"), "AllReduce") && !strcmp(str(r, "rows.0.dtype"), "f32"));
  CHECK_NEAR(num(r, "summary.byStream.0.stream"), 12, 1e-6);
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

static void test_list(void) {
  cJSON *l = nsys_analysis_list_json();
  int n = cJSON_GetArraySize(l);
  CHECK(n >= 14);
  const cJSON *it;
  cJSON_ArrayForEach(it, l) {
    CHECK(cJSON_IsString(cJSON_GetObjectItem(it, "description")));
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(it, "params")));
  }
  cJSON_Delete(l);
}

static void test_empty(void) {
  tix t;
  tix_init(&t);
  for (const nsys_analysis *a = nsys_analyses; a->name; a++) {
    if (!strcmp(a->name, "mfu")) continue;
    nsys_task task;
    nsys_task_init(&task);
    cJSON *r = nsys_analysis_run_json(&task, NULL, &t.ix, a->name, NULL, NULL);
    /* SQL-backed analyses report missing data without a database */
    CHECK(r || task.err == NSYS_E_DATA_MISSING);
    cJSON_Delete(r);
  }
  nsys_strtab_free(&t.ix.strings);
}

/* Report rules on a launch-bound loop followed by a 20 ms synchronisation
 * stall: 200 kernels of 2 us, each launched by a 10 us call (the GPU waits
 * ~10 us for every launch), then cudaDeviceSynchronize [3 ms, 23 ms) with an
 * idle GPU, then one more kernel. */
static bool has_finding(const cJSON *rep, const char *id) {
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItem(rep, "findings"))
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id)) return true;
  return false;
}

static cJSON *report_of(tix *t) {
  nsys_task task;
  nsys_task_init(&task);
  nsys_report *r = nsys_report_build(&task, NULL, &t->ix);
  CHECK_MSG(r != NULL, "report: %s", task.err_msg);
  cJSON *rep = r ? nsys_report_json(r) : NULL;
  nsys_report_free(r);
  return rep;
}

static void test_report_rules(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  uint32_t tr = add_track(&t, 0, 7, 1, NSYS_STREAM_COMPUTE);
  for (int i = 0; i < 200; i++) {
    int64_t s = (int64_t)i * 12000;
    uint32_t a = add_api(&t, th, s, s + 10000, "cudaLaunchKernel");
    add_op(&t, tr, s + 11000, s + 13000, "tiny_kernel", (int32_t)a, NSYS_OP_KERNEL);
  }
  add_api(&t, th, 3000000, 23000000, "cudaDeviceSynchronize");
  uint32_t a = add_api(&t, th, 23000000, 23010000, "cudaLaunchKernel");
  add_op(&t, tr, 23011000, 23013000, "tiny_kernel", (int32_t)a, NSYS_OP_KERNEL);
  tix_span(&t);
  cJSON *rep = report_of(&t);
  if (rep) {
    CHECK(has_finding(rep, "cpu_bound_launch"));
    CHECK(has_finding(rep, "sync_stalls"));
    CHECK(has_finding(rep, "gpu_bubbles"));
    CHECK(has_finding(rep, "small_kernel_storm"));
    CHECK(has_finding(rep, "missing_nvtx"));
    CHECK(has_finding(rep, "profile_too_short"));
    CHECK(!has_finding(rep, "exposed_nccl"));
    CHECK(has_finding(rep, "hotspot_kernel")); /* tiny_kernel is all of the kernel time */
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    nsys_report_render(&b, rep, false);
    CHECK(b.data && strstr(b.data, "Findings:") && strstr(b.data, "cudaDeviceSynchronize"));
    if (getenv("SHOW_REPORT")) fputs(b.data, stderr);
    nsys_strbuf_free(&b);
    cJSON_Delete(rep);
  }
  nsys_strtab_free(&t.ix.strings);
}

/* Gap causes beyond sync/memcpy/launch, and per-class CPU time as a union
 * over threads. Device 0, one stream; gaps (ns): [1000,3000) in
 * cuModuleLoadDataEx, [4000,6000) in cudaFree, [7000,9000) in
 * cudaHostRegister, [10000,12000) in two threads' launch calls
 * [10000,11500) and [10500,11800) (union 1800, sum 2800), [13000,15000)
 * in cudaGetDevice only (other: a CPU stall). */
static void test_gap_causes(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  add_api(&t, th, 900, 3100, "cuModuleLoadDataEx");
  add_api(&t, th, 4000, 6000, "cudaFree");
  add_api(&t, th, 10000, 11500, "cudaLaunchKernel");
  add_api(&t, th, 13000, 15000, "cudaGetDevice");
  uint32_t th2 = add_thread(&t, 1, 2);
  add_api(&t, th2, 7000, 9000, "cudaHostRegister");
  add_api(&t, th2, 10500, 11800, "cuLaunchKernel");
  uint32_t tr = add_track(&t, 0, 7, 1, NSYS_STREAM_COMPUTE);
  for (int64_t s = 0; s <= 15000; s += 3000) add_op(&t, tr, s, s + 1000, "k", -1, NSYS_OP_KERNEL);
  tix_span(&t);
  cJSON *r = run(&t, "gpu_idle_gaps", "{\"minGapNs\": 1000, \"scope\": \"device\"}");
  CHECK(r);
  CHECK_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")), 5);
  static const char *const want[5] = {"module_load", "alloc", "host_register", "launch", "cpu_stall"};
  for (int i = 0; i < 5; i++) { /* equal durations: start order */
    char path[64];
    snprintf(path, sizeof path, "rows.%d.cause", i);
    CHECK_STR(str(r, path), want[i]);
  }
  CHECK_NEAR(num(r, "rows.0.cpuNs.moduleLoad"), 2000, 1e-6); /* clipped to the gap */
  CHECK_NEAR(num(r, "rows.1.cpuNs.alloc"), 2000, 1e-6);
  CHECK_NEAR(num(r, "rows.2.cpuNs.hostRegister"), 2000, 1e-6);
  CHECK_NEAR(num(r, "rows.3.cpuNs.launch"), 1800, 1e-6); /* union, not 2800 */
  CHECK_NEAR(num(r, "rows.4.cpuNs.otherApi"), 2000, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.module_load"), 2000, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.alloc"), 2000, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.host_register"), 2000, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.launch"), 2000, 1e-6);
  CHECK_NEAR(num(r, "summary.devices.0.causeNs.cpu_stall"), 2000, 1e-6);
  cJSON_Delete(r);
  nsys_strtab_free(&t.ix.strings);
}

/* gpu_bubbles as documented: 25% idle in 50 us gaps (none >= 1 ms) fires. */
static void test_report_short_gaps(void) {
  tix t;
  tix_init(&t);
  uint32_t th = add_thread(&t, 1, 1);
  uint32_t tr = add_track(&t, 0, 7, 1, NSYS_STREAM_COMPUTE);
  for (int i = 0; i < 400; i++) {
    int64_t s = (int64_t)i * 200000;
    uint32_t a = add_api(&t, th, s, s + 5000, "cudaLaunchKernel");
    add_op(&t, tr, s + 50000, s + 200000, "k", (int32_t)a, NSYS_OP_KERNEL);
  }
  tix_span(&t);
  cJSON *rep = report_of(&t);
  if (rep) {
    CHECK(has_finding(rep, "gpu_bubbles"));
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(rep, "findings"))
      if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), "gpu_bubbles"))
        CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(f, "title")), "all in gaps shorter than"));
    cJSON_Delete(rep);
  }
  nsys_strtab_free(&t.ix.strings);
}

/* A cache lent to many runs (report/generate, profile/diff) answers what each
 * run's own cache answers, whatever the order of the runs, their windows and
 * device filters: only what depends on the index alone is shared. Two
 * devices, overlapping streams, a graph launch, a copy, an op running before
 * and one after a window, a zero-length op at the window's start. */
static void build_shared(tix *t) {
  tix_init(t);
  uint32_t th = add_thread(t, 10, 10);
  uint32_t a0 = add_api(t, th, -20, -15, "cudaLaunchKernel");
  uint32_t a1 = add_api(t, th, -14, -12, "cudaMemcpyAsync");
  add_api(t, th, 40, 60, "cudaDeviceSynchronize");
  add_nvtx(t, th, -30, 200, "step", -1);
  uint32_t tc = add_track(t, 0, 7, 10, NSYS_STREAM_COMPUTE);
  add_op(t, tc, -10, 12, "gemm", (int32_t)a0, NSYS_OP_KERNEL);
  add_op(t, tc, 12, 12, "empty", -1, NSYS_OP_KERNEL);
  add_op(t, tc, 20, 30, "gemm", -1, NSYS_OP_KERNEL);
  add_op(t, tc, 31, 45, "graph", -1, NSYS_OP_GRAPH);
  add_op(t, tc, 70, 90, "gemm", -1, NSYS_OP_KERNEL);
  uint32_t tm = add_track(t, 0, 12, 10, NSYS_STREAM_COMM);
  add_op(t, tm, 5, 25, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", -1, NSYS_OP_KERNEL);
  add_op(t, tm, 26, 80, "ncclDevKernel_AllGather_RING_LL", -1, NSYS_OP_KERNEL);
  uint32_t tx = add_track(t, 0, 13, 10, NSYS_STREAM_COPY);
  add_op(t, tx, 8, 40, "memcpy", (int32_t)a1, NSYS_OP_MEMCPY);
  uint32_t t1 = add_track(t, 1, 7, 10, NSYS_STREAM_COMPUTE);
  add_op(t, t1, 100, 110, "gemm", -1, NSYS_OP_KERNEL);
  add_op(t, t1, 105, 160, "ncclKernel_x", -1, NSYS_OP_KERNEL);
  tix_span(t);
}

static char *run_text(tix *t, const char *name, const char *params_json, nsys_acache *cache) {
  nsys_task task;
  nsys_task_init(&task);
  cJSON *params = params_json ? cJSON_Parse(params_json) : NULL;
  cJSON *r = nsys_analysis_run_json(&task, NULL, &t->ix, name, params, cache);
  char *txt = r ? cJSON_PrintUnformatted(r) : nsys_xstrdup(task.err_msg);
  cJSON_Delete(r);
  cJSON_Delete(params);
  return txt;
}

static void test_shared_cache(void) {
  tix t;
  build_shared(&t);
  static const char *const windows[] = {NULL, "{\"start\": 12, \"end\": 75}", "{\"device\": 1}",
                                        "{\"start\": -10, \"end\": 90}", "{\"start\": 30, \"end\": 31}"};
  enum { NW = sizeof windows / sizeof windows[0] };
  const char *names[32];
  int na = 0;
  for (const nsys_analysis *a = nsys_analyses; a->name && na < 32; a++) names[na++] = a->name;
  char *own[32][NW];
  for (int i = 0; i < na; i++)
    for (int w = 0; w < NW; w++) own[i][w] = run_text(&t, names[i], windows[w], NULL);
  for (int order = 0; order < 2; order++) { /* forward, then backward, each with a fresh cache */
    nsys_acache k;
    nsys_acache_init(&k, &t.ix);
    for (int j = 0; j < na * NW; j++) {
      int x = order ? na * NW - 1 - j : j, i = x / NW, w = x % NW;
      char *got = run_text(&t, names[i], windows[w], &k);
      CHECK_MSG(!strcmp(got, own[i][w]), "%s %s with a lent cache:\n  %s\nalone:\n  %s", names[i],
                windows[w] ? windows[w] : "{}", got, own[i][w]);
      free(got);
    }
    nsys_acache_dispose(&k);
  }
  for (int i = 0; i < na; i++)
    for (int w = 0; w < NW; w++) free(own[i][w]);
  nsys_strtab_free(&t.ix.strings);
}

/* nsys_analysis_exec_all: every analysis over every window, all on 4 threads
 * sharing one cache, answers exactly what each run alone answers (or fails
 * with the same message); a cancelled request cancels every run. */
static void test_run_all(void) {
  tix t;
  build_shared(&t);
  static const char *const windows[] = {NULL, "{\"start\": 12, \"end\": 75}", "{\"device\": 1}",
                                        "{\"start\": -10, \"end\": 90}"};
  enum { NW = sizeof windows / sizeof windows[0], MAXR = 32 * NW };
  nsys_aexec runs[MAXR];
  nsys_aparams ps[MAXR];
  char *own[MAXR];
  uint32_t n = 0;
  for (const nsys_analysis *a = nsys_analyses; a->name && n + NW <= MAXR; a++)
    for (int w = 0; w < NW; w++, n++) {
      own[n] = run_text(&t, a->name, windows[w], NULL);
      nsys_task pt;
      nsys_task_init(&pt);
      cJSON *pj = windows[w] ? cJSON_Parse(windows[w]) : NULL;
      CHECK(nsys_analysis_params_from_json(&pt, a, pj, &ps[n]));
      cJSON_Delete(pj);
      runs[n] = (nsys_aexec){.ix = &t.ix, .name = a->name, .params = &ps[n]};
    }
  setenv("NSYS_AI_ANALYSIS_THREADS", "4", 1);
  for (int cancel = 0; cancel < 2; cancel++) {
    nsys_acache k;
    nsys_acache_init(&k, &t.ix);
    for (uint32_t i = 0; i < n; i++) runs[i].cache = &k;
    nsys_task task;
    nsys_task_init(&task);
    if (cancel) nsys_task_cancel(&task);
    bool ok = nsys_analysis_exec_all(&task, runs, n, "test");
    CHECK(ok == !cancel);
    for (uint32_t i = 0; i < n; i++) {
      if (cancel) {
        CHECK(!runs[i].result);
        continue;
      }
      cJSON *j = runs[i].result ? nsys_aresult_json(runs[i].result) : NULL;
      char *got = j ? cJSON_PrintUnformatted(j) : nsys_xstrdup(runs[i].task.err_msg);
      CHECK_MSG(!strcmp(got, own[i]), "%s run %u on threads:\n  %s\nalone:\n  %s", runs[i].name, i, got, own[i]);
      free(got);
      cJSON_Delete(j);
      nsys_aresult_free(runs[i].result);
    }
    nsys_acache_dispose(&k);
  }
  unsetenv("NSYS_AI_ANALYSIS_THREADS");
  for (uint32_t i = 0; i < n; i++) {
    nsys_aparams_dispose(&ps[i]);
    free(own[i]);
  }
  nsys_strtab_free(&t.ix.strings);
}

/* The windowed paths (analysis/window.h) against brute force on tracks
 * whose ops overlap: a kernel that outlasts 145 later ones, a long copy, a
 * zero-length kernel, windows on every kind of edge. */
static void brute_span(tix *t, int32_t dev, bool kg, int64_t a, int64_t b, bool *any, int64_t *s, int64_t *e) {
  *any = false;
  int64_t lo = 0, hi = 0;
  for (uint32_t i = 0; i < t->ix.ops.n; i++) {
    if (t->tracks[t->otrack[i]].device != dev) continue;
    if (kg && t->okind[i] != NSYS_OP_KERNEL && t->okind[i] != NSYS_OP_GRAPH) continue;
    if (t->oe[i] <= a || t->os[i] >= b) continue;
    if (!*any || t->os[i] < lo) lo = t->os[i];
    if (!*any || t->oe[i] > hi) hi = t->oe[i];
    *any = true;
  }
  *s = NSYS_MAX(lo, a);
  *e = NSYS_MIN(hi, b);
}

/* Union of device dev's ops overlapping [a, b), clipped to it (brute force). */
static void brute_union(tix *t, int32_t dev, int64_t a, int64_t b, nsys_ivls *out) {
  static int64_t pts[MAXN][2];
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->ix.ops.n; i++)
    if (t->tracks[t->otrack[i]].device == dev && t->oe[i] > a && t->os[i] < b)
      pts[n][0] = NSYS_MAX(t->os[i], a), pts[n++][1] = NSYS_MIN(t->oe[i], b);
  for (uint32_t p = 1; p < n; p++) /* insertion sort by start */
    for (uint32_t q = p; q > 0 && pts[q][0] < pts[q - 1][0]; q--) {
      int64_t a0 = pts[q][0], a1 = pts[q][1];
      pts[q][0] = pts[q - 1][0], pts[q][1] = pts[q - 1][1], pts[q - 1][0] = a0, pts[q - 1][1] = a1;
    }
  nsys_ivls_clear(out);
  for (uint32_t i = 0; i < n; i++) nsys_ivls_add_sorted(out, pts[i][0], pts[i][1]);
}

static void test_window_paths(void) {
  static tix t;
  tix_init(&t);
  uint32_t t0 = add_track(&t, 0, 7, 1, NSYS_STREAM_COMPUTE);
  for (int i = 0; i < 200; i++) {
    int64_t s = 100 * i, e = s + 50;
    if (i == 5) e = 100 * 150 + 7;    /* outlasts ops 6..150 */
    if (i == 50) e = s;               /* zero length */
    add_op(&t, t0, s, e, i == 20 ? "[CUDA memcpy HtoD]" : "k", -1, i == 20 ? NSYS_OP_MEMCPY : NSYS_OP_KERNEL);
    if (i == 20) t.oe[t.ix.ops.n - 1] = 100 * 180; /* a long copy: not a kernel */
  }
  uint32_t t1 = add_track(&t, 0, 8, 1, NSYS_STREAM_COMPUTE);
  for (int i = 0; i < 10; i++) add_op(&t, t1, 1000 * i + 30, 1000 * i + 60, "k2", -1, NSYS_OP_KERNEL);
  uint32_t t2 = add_track(&t, 1, 9, 1, NSYS_STREAM_COMPUTE);
  add_op(&t, t2, 500, 900, "k3", -1, NSYS_OP_KERNEL);
  tix_span(&t);
  nsys_task task;
  nsys_task_init(&task);
  nsys_actx c;
  CHECK(nsys_actx_init(&c, &task, NULL, &t.ix, nsys_analysis_find("overlap"), NULL));
  const nsys_winidx *w = nsys_actx_winidx(&c);
  CHECK(w != NULL);
  int64_t edges[] = {-5, 0, 1, 49, 50, 500, 549, 550, 551, 2000, 5000, 5050, 5051, 9999, 15007, 15008, 17999,
                     18000, 18001, 19950, 19951, 30000};
  size_t ne = sizeof edges / sizeof edges[0];
  nsys_ivls whole[2], clip, ref;
  nsys_ivls_init(&clip);
  nsys_ivls_init(&ref);
  for (int d = 0; d < 2; d++) { /* whole-time union of every op of device d */
    nsys_ivls_init(&whole[d]);
    brute_union(&t, d, INT64_MIN, INT64_MAX, &whole[d]);
  }
  for (size_t x = 0; x < ne; x++)
    for (size_t y = x; y < ne; y++) {
      int64_t a = edges[x], b = edges[y];
      for (uint32_t tr = 0; tr < t.ix.n_tracks; tr++) {
        const nsys_gpu_track *g = &t.tracks[tr];
        uint32_t live = g->first + g->count, lo, hi;
        for (uint32_t i = g->first; i < g->first + g->count; i++)
          if (t.oe[i] > a) { live = i; break; }
        CHECK_MSG(nsys_win_track_first_live(w, &t.ix, tr, a) == live, "first live, track %u at %lld", tr, (long long)a);
        nsys_win_track_starts(&t.ix, tr, a, b, &lo, &hi);
        for (uint32_t i = g->first; i < g->first + g->count; i++)
          CHECK_MSG((i >= lo && i < hi) == (t.os[i] >= a && t.os[i] < b), "starts, track %u op %u", tr, i);
        for (int kg = 0; kg < 2; kg++) {
          int64_t m = INT64_MIN;
          for (uint32_t i = g->first; i <= g->first + g->count; i++) {
            CHECK(nsys_win_track_pmax(w, &t.ix, tr, i, kg) == m);
            if (i < g->first + g->count && (!kg || t.okind[i] == NSYS_OP_KERNEL) && t.oe[i] > m) m = t.oe[i];
          }
        }
      }
      c.t0 = a;
      c.t1 = b;
      for (int d = 0; d < 2; d++)
        for (int kg = 0; kg < 2; kg++) {
          bool handled, any, bany;
          int64_t s = 0, e = 0, bs, be;
          any = nsys_win_device_span(&c, d, kg ? nsys_pred_kernel_or_graph : nsys_pred_any, &s, &e, &handled);
          brute_span(&t, d, kg, a, b, &bany, &bs, &be);
          CHECK(handled);
          CHECK_MSG(any == bany && (!any || (s == bs && e == be)), "span dev %d kg %d [%lld, %lld)", d, kg,
                    (long long)a, (long long)b);
        }
      for (int d = 0; d < 2; d++) { /* clipped whole union == union of the clipped ops */
        nsys_ivls_clip(&whole[d], a, b, &clip);
        brute_union(&t, d, a, b, &ref);
        CHECK_MSG(clip.n == ref.n, "clip count dev %d [%lld, %lld)", d, (long long)a, (long long)b);
        for (uint32_t i = 0; i < clip.n && i < ref.n; i++) CHECK(clip.s[i] == ref.s[i] && clip.e[i] == ref.e[i]);
      }
    }
  /* an index whose track breaks the layout (starts out of order): no fast path */
  nsys_actx_dispose(&c);
  t.os[t.tracks[t1].first + 3] = 0;
  CHECK(nsys_actx_init(&c, &task, NULL, &t.ix, nsys_analysis_find("overlap"), NULL));
  CHECK(nsys_actx_winidx(&c) == NULL);
  nsys_actx_dispose(&c);
  for (int d = 0; d < 2; d++) nsys_ivls_free(&whole[d]);
  nsys_ivls_free(&clip);
  nsys_ivls_free(&ref);
  nsys_strtab_free(&t.ix.strings);
}

/* top_kernels and kernel_launch_overhead over windows: the (name, track)
 * index (analysis/kname.h, klaunch.h) against the loop over every kernel
 * (NSYS_AI_WINDOW_FAST=0), byte for byte, on clocks past 2^53 and below 0,
 * overlapping kernels, equal durations, one name on several tracks and
 * devices, kernels launched and not, windows on every op edge, with and
 * without a device. */
static char *run_window_text(tix *t, const char *name, const char *params) {
  cJSON *r = run(t, name, params);
  char *s = r ? cJSON_PrintUnformatted(r) : NULL;
  cJSON_Delete(r);
  return s;
}

static void test_window_names(void) {
  static tix t;
  static int64_t all[2 * MAXN];
  CHECK(MAXN >= 480);
  for (int base_i = 0; base_i < 2; base_i++) {
    int64_t base = base_i ? ((int64_t)1 << 60) + 3 : -50000; /* past 2^53; below zero */
    tix_init(&t);
    uint32_t th = add_thread(&t, 1, 1);
    const char *names[] = {"gemm", "relu", "nccl_AllReduce", "gemm"};
    uint32_t n_all = 0;
    int64_t late = 0; /* a start on device 0's first stream more than 64 ops after its long kernel */
    /* device 0: a kernel outlasting its stream's next 64 and more; device 1:
     * idle gaps (exposed launch time), storms; device 2: streams starting
     * kernels together, alike (the recorded sweep); device 0's streams 1 and
     * 2 too, one small, one not (the old loop) */
    for (int32_t dev = 0; dev < 3; dev++)
      for (int stream = 0; stream < (dev == 2 ? 2 : 3); stream++) {
        uint32_t tr = add_track(&t, dev, 7 + stream, 1, NSYS_STREAM_COMPUTE);
        int n_ops = dev == 0 && stream == 0 ? 90 : dev == 2 ? 45 : 60;
        for (int i = 0; i < n_ops; i++) {
          int64_t s = base + 1000 * i + (dev == 2 ? 0 : dev == 0 && stream == 2 && i % 10 == 4 ? 37 : 37 * stream) + 11 * dev + (i > 50 && dev != 2 ? 300000 : 0) +
                      (dev == 1 ? 9000 * (i / 10) : 0) + (dev == 0 && i > 60 ? 20000 * (i - 60) : 0);
          int64_t d = ((i == 40 && (stream == 0 || dev == 2)) || (dev == 0 && stream == 2 && i % 10 == 4)) ? 20000 : (i % 3) * 4000 + (stream == 1 ? 0 : 3); /* small, equal */
          if (i == 3 && stream == 0 && dev == 0) d = 2000000;
          if (i == 7) d = 0; /* zero length */
          int32_t api = -1;
          if (i % 4 != 1 && !(dev == 2 && i == 0)) { /* launched (a call ending before or after the kernel's start), or not */
            int64_t as = s - 3000 + (i % 3) * 1500;
            api = (int32_t)add_api(&t, th, as, as + 2500 + (i % 2) * 10000, i % 7 == 2 ? "cudaMemcpyAsync" : "cudaLaunchKernel");
          }
          /* device 0's first stream: one name for most kernels, so that a window's
           * range of that (name, track) pair spans more than a block of the
           * launch sums (klaunch.h: prefixes, not only the short-range loop) */
          const char *nm = dev == 0 && stream == 0 && i % 5 ? "gemm" : names[(i + stream + dev) % 4];
          uint32_t o = add_op(&t, tr, s, s + d, nm, api, NSYS_OP_KERNEL);
          t.ofull[o] = S(&t, i % 2 ? "gemm<float>(int)" : nm);
          all[n_all++] = s;
          all[n_all++] = s + d;
          if (dev == 0 && stream == 0 && i == 75) late = s;
        }
      }
    tix_span(&t);
    int64_t ends[48];
    uint32_t n_edges = 0;
    ends[n_edges++] = late;
    ends[n_edges++] = late + 1;
    for (uint32_t x = 0; x < 22; x++) ends[n_edges++] = all[(x * 7919u) % n_all]; /* op edges all over */
    ends[n_edges++] = t.ix.span_start - 1;
    ends[n_edges++] = t.ix.span_end + 1;
    const char *runs[][2] = {{"top_kernels", "\"limit\": 0"}, {"top_kernels", "\"limit\": 2"},
                             {"top_kernels", "\"limit\": 0, \"names\": \"demangled\""},
                             {"kernel_launch_overhead", "\"limit\": 0, \"stormMinKernels\": 2"},
                             {"kernel_launch_overhead", "\"limit\": 0, \"stormMinKernels\": 100"}};
    char params[256];
    for (uint32_t x = 0; x < n_edges; x++)
      for (uint32_t y = 0; y < n_edges; y++) {
        int64_t a = ends[x], b = ends[y];
        if (b < a) continue;
        /* a third of the pairs of op edges, and every pair with the late
         * start or a span edge: the suite also runs under valgrind (leaks) */
        if (x >= 2 && y < n_edges - 2 && (x + 2 * y) % 3 != 0) continue;
        for (int dev = -1; dev < 3; dev++)
          for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            int k = snprintf(params, sizeof params, "{%s, \"start\": %lld, \"end\": %lld", runs[r][1], (long long)a,
                             (long long)b);
            snprintf(params + k, sizeof params - (size_t)k, dev >= 0 ? ", \"device\": %d}" : "}", dev);
            char *fast = run_window_text(&t, runs[r][0], params);
            setenv("NSYS_AI_WINDOW_FAST", "0", 1);
            char *slow = run_window_text(&t, runs[r][0], params);
            unsetenv("NSYS_AI_WINDOW_FAST");
            CHECK_MSG(fast && slow && !strcmp(fast, slow), "%s %s\n fast %s\n slow %s", runs[r][0], params,
                      fast ? fast : "-", slow ? slow : "-");
            free(fast);
            free(slow);
          }
      }
    /* which calls build the window indexes (window.h, nsys_win_large): a
     * whole-profile call (the report's) never; a window of a quarter of the
     * span or more does; a smaller one reads them once built */
    nsys_acache k;
    nsys_acache_init(&k, &t.ix);
    const char *names2[] = {"top_kernels", "kernel_launch_overhead"};
    for (int x = 0; x < 2; x++) {
      nsys_task task;
      nsys_task_init(&task);
      nsys_aresult *r = nsys_analysis_exec(&task, NULL, &t.ix, names2[x], NULL, &k);
      CHECK(r != NULL);
      nsys_aresult_free(r);
    }
    CHECK_MSG(!k.kname[0] && !k.klaunch && !k.ksweep, "a whole-profile call built a window index");
    int64_t span = t.ix.span_end - t.ix.span_start;
    for (int big = 0; big < 2; big++)
      for (int x = 0; x < 2; x++) {
        nsys_task task;
        nsys_task_init(&task);
        nsys_aparams ps;
        nsys_aparams_defaults(&ps, nsys_analysis_find(names2[x]));
        nsys_aparams_set_int(&ps, "start", t.ix.span_start + span / 3);
        nsys_aparams_set_int(&ps, "end", t.ix.span_start + span / 3 + (big ? span / 3 : span / 10));
        nsys_aresult *r = nsys_analysis_exec(&task, NULL, &t.ix, names2[x], &ps, &k);
        CHECK(r != NULL);
        nsys_aresult_free(r);
        nsys_aparams_dispose(&ps);
        if (!big) CHECK_MSG(!k.kname[0] && !k.klaunch && !k.ksweep, "a small window built a window index");
      }
    CHECK_MSG(k.kname[0] && k.klaunch && k.ksweep, "a large window did not build the window indexes");
    nsys_acache_dispose(&k);
    nsys_strtab_free(&t.ix.strings);
  }
}

/* The area selection's large windows on a lent cache (what the server's
 * warm-up leaves): top_kernels' per-name statistics from ranks (kname.h:
 * the window's ranks walked in a bitmap, or the ranks outside it) and
 * kernel_launch_overhead's sweep jumping where the window walk's heap is
 * arranged as the whole walk's (klaunch_sweep.h), against the loop over
 * every kernel (NSYS_AI_WINDOW_FAST=0), byte for byte: streams starting
 * small and large kernels together, ties, equal durations, a name seen once,
 * a name whose durations span more than 2^32 ns (not ranked), storms of 100
 * kernels and more, clocks past 2^60 and below 0, windows between op edges. */
static char *exec_text(tix *t, nsys_acache *k, const char *name, int64_t a, int64_t b) {
  nsys_task task;
  nsys_task_init(&task);
  nsys_aparams ps;
  nsys_aparams_defaults(&ps, nsys_analysis_find(name));
  nsys_aparams_set_int(&ps, "limit", 0);
  nsys_aparams_set_int(&ps, "start", a);
  nsys_aparams_set_int(&ps, "end", b);
  nsys_aresult *r = nsys_analysis_exec(&task, NULL, &t->ix, name, &ps, k);
  nsys_aparams_dispose(&ps);
  return t_aresult_text(r);
}

static void test_window_ranks(void) {
  static tix t;
  for (int base_i = 0; base_i < 2; base_i++) {
    int64_t base = base_i ? ((int64_t)1 << 60) + 3 : -700000;
    tix_init(&t);
    uint32_t th = add_thread(&t, 1, 1);
    int64_t edges[40];
    uint32_t ne = 0;
    /* device 0: three streams starting together at most instants, small and
     * large kernels mixed, a storm, then pauses every 8 instants (launch
     * time exposed by whichever kernel the walk takes first) */
    for (int stream = 0; stream < 3; stream++) {
      uint32_t tr = add_track(&t, 0, 7 + stream, 1, NSYS_STREAM_COMPUTE);
      for (int i = 0; i < 130; i++) {
        int64_t s = base + 1000 * i + (i < 65 ? 0 : (i - 57) / 8 * 400000) + (stream == 2 && i % 6 == 5 && i < 40 ? 300 : 0);
        int64_t d = (i * 37 + stream * 11) % 9 * 1000 + 1; /* small, ties */
        const char *nm = "big";
        if (stream == 1 && i % 40 == 39) d = 20000 + i % 3; /* large beside small ones, after 100 and more */
        if (stream == 2 && i % 5 == 0) nm = "eq", d = 5000;
        if (stream == 2 && i % 7 == 3) nm = "huge", d = i % 2 ? 9000 : 2;
        if (stream == 2 && i == 64) nm = "once", d = 7;
        int32_t api = -1;
        if (i % 3 != 1) {
          int64_t as = s - 4000 + (stream * 700);
          api = (int32_t)add_api(&t, th, as, as + 2500 + (i % 2) * 3000, "cudaLaunchKernel");
        }
        add_op(&t, tr, s, s + d, nm, api, NSYS_OP_KERNEL);
        if (stream == 0 && i % 11 == 5 && ne < 30) {
          edges[ne++] = s;
          edges[ne++] = s + 1;
        }
      }
    }
    uint32_t tr = add_track(&t, 1, 7, 1, NSYS_STREAM_COMPUTE); /* device 1: one stream */
    for (int i = 0; i < 60; i++) /* "huge": durations over 2^32 ns apart (not ranked) */
      add_op(&t, tr, base + 3000 * i + 500,
             base + 3000 * i + 500 + (i % 9 == 4 ? (i % 2 ? ((int64_t)1 << 33) : 3) : (i % 4) * 700),
             i % 9 == 4 ? "huge" : i % 2 ? "big" : "eq", -1, NSYS_OP_KERNEL);
    uint32_t rnd = 12345u + (uint32_t)base_i; /* device 2: three streams on a coarse grid (ties by chance), pauses */
    for (int stream = 0; stream < 3; stream++) {
      uint32_t tr2 = add_track(&t, 2, 7 + stream, 1, NSYS_STREAM_COMPUTE);
      int64_t s = base;
      for (int i = 0; i < 100; i++) {
        rnd = rnd * 1103515245u + 12345u;
        uint32_t r = rnd >> 8;
        s += 1000 * (1 + r % 2) + (r % 29 == 0 ? 300000 : 0);
        int64_t d = r % 7 == 0 ? 20000 : (int64_t)(r % 9000) + 1;
        int32_t api = r % 3 ? (int32_t)add_api(&t, th, s - 3000 - (int64_t)(r % 1500), s + 500 - (int64_t)(r % 4000), "cudaLaunchKernel") : -1;
        add_op(&t, tr2, s, s + d, r % 11 ? "big" : "eq", api, NSYS_OP_KERNEL);
      }
    }
    tix_span(&t);
    edges[ne++] = t.ix.span_start - 1;
    edges[ne++] = t.ix.span_end + 1;
    nsys_acache k;
    nsys_acache_init(&k, &t.ix);
    const char *names[] = {"top_kernels", "kernel_launch_overhead"};
    for (int x = 0; x < 2; x++) free(exec_text(&t, &k, names[x], t.ix.span_start, t.ix.span_end)); /* builds, ranks every name */
    CHECK(k.kname[0] && k.ksweep);
    for (uint32_t x = 0; x < ne; x++)
      for (uint32_t y = 0; y < ne; y++)
        for (int n = 0; n < 2 && edges[x] < edges[y]; n++) {
          char *fast = exec_text(&t, &k, names[n], edges[x], edges[y]);
          setenv("NSYS_AI_WINDOW_FAST", "0", 1);
          char *slow = exec_text(&t, NULL, names[n], edges[x], edges[y]);
          unsetenv("NSYS_AI_WINDOW_FAST");
          CHECK_MSG(fast && slow && !strcmp(fast, slow), "%s [%lld, %lld)\n fast %s\n slow %s", names[n],
                    (long long)edges[x], (long long)edges[y], fast ? fast : "-", slow ? slow : "-");
          free(fast);
          free(slow);
        }
    nsys_acache_dispose(&k);
    nsys_strtab_free(&t.ix.strings);
  }
}

/* gpu_idle_gaps' stream gaps read from the whole walk's (gap_streams.h) equal
 * the old walk's (NSYS_AI_WINDOW_FAST=0) for every window between op edges:
 * gaps of 1 ms exactly, just under and over it, gaps under and over the
 * kernel wait, nested and overlapping ops, host waits, stream gaps equal to a
 * device gap (the other stream and the copy stream idle) or not, a track with
 * an op ending before it starts (the walk), windows holding no op. */
static void test_window_gaps(void) {
  static tix t;
  static int64_t edges[600];
  static const int64_t gap[] = {0, 10, 29, 30, 31, 500000, 999999, 1000000, 1000001, 1500000, 3000000};
  static const int64_t dur[] = {5, 20000, 300000, 2500000};
  for (int base_i = 0; base_i < 2; base_i++) {
    int64_t base = base_i ? ((int64_t)1 << 60) + 3 : -3000000;
    tix_init(&t);
    uint32_t ne = 0, rnd = 777u + (uint32_t)base_i;
    /* device 0: two compute streams (one dense, one sparse), a copy stream;
     * device 1: a compute stream with an op ending before it starts, a clean one */
    const struct { int32_t dev; int64_t stream; uint8_t cls; int n; int sparse; } spec[] = {
        {0, 7, NSYS_STREAM_COMPUTE, 45, 0}, {0, 8, NSYS_STREAM_COMPUTE, 12, 1}, {0, 9, NSYS_STREAM_COPY, 6, 1},
        {1, 7, NSYS_STREAM_COMPUTE, 20, 0}, {1, 8, NSYS_STREAM_COMPUTE, 20, 0}};
    for (int k = 0; k < 5; k++) {
      uint32_t th = spec[k].cls == NSYS_STREAM_COPY ? 0 : add_thread(&t, 1, (uint32_t)k + 1); /* its calls in order */
      uint32_t tr = add_track(&t, spec[k].dev, spec[k].stream, 1, spec[k].cls);
      int64_t ps = base, pe = base, last_as = INT64_MIN;
      for (int i = 0; i < spec[k].n; i++) {
        rnd = rnd * 1103515245u + 12345u;
        uint32_t r = rnd >> 8;
        int64_t s = i && r % 7 == 0 ? ps + (r % 3) * 10 /* nested or overlapping */
                                    : pe + gap[r % 11] + (spec[k].sparse ? 2000000 * (int64_t)(r % 4) : 0);
        int64_t e = s + dur[(r >> 4) % 4];
        if (k == 3 && i == 9) s = pe + 500, e = s - 700; /* ends before it starts, before the running max end */
        int32_t api = -1;
        if (spec[k].cls != NSYS_STREAM_COPY && r % 3) { /* launched before the previous op ended, or after */
          int64_t as = r % 2 ? s - 200 : pe - 400;
          if (as < s - 5000000) as = s - 5000000;
          if (as < last_as) as = last_as;
          last_as = as;
          api = (int32_t)add_api(&t, th, as, as + 100, "cudaLaunchKernel");
        }
        add_op(&t, tr, s, e, "k", api, spec[k].cls == NSYS_STREAM_COPY ? NSYS_OP_MEMCPY : NSYS_OP_KERNEL);
        if (ne + 3 <= 600) {
          edges[ne++] = s;
          edges[ne++] = e;
          if (s > pe + 2) edges[ne++] = pe + (s - pe) / 2; /* inside the gap */
        }
        ps = s;
        if (e > pe) pe = e;
      }
    }
    tix_span(&t);
    edges[ne++] = t.ix.span_start - 1;
    edges[ne++] = t.ix.span_end + 1;
    nsys_acache k;
    nsys_acache_init(&k, &t.ix);
    free(exec_text(&t, &k, "gpu_idle_gaps", t.ix.span_start, t.ix.span_end)); /* builds */
    CHECK(k.sgaps != NULL);
    uint32_t bad = 0, n_win = 0;
    for (uint32_t x = 0; x < ne; x++)
      for (uint32_t y = 0; y < ne; y++) {
        /* a fixed sample of the pairs (each about 1 ms): every edge, about 1 in 60 pairs */
        if (edges[x] >= edges[y] || bad > 3 || (x * 7 + y * 13) % 60 != 0) continue;
        char *fast = exec_text(&t, &k, "gpu_idle_gaps", edges[x], edges[y]);
        setenv("NSYS_AI_WINDOW_FAST", "0", 1);
        char *slow = exec_text(&t, NULL, "gpu_idle_gaps", edges[x], edges[y]);
        unsetenv("NSYS_AI_WINDOW_FAST");
        bool same = fast && slow && !strcmp(fast, slow);
        bad += !same;
        n_win++;
        CHECK_MSG(same, "gpu_idle_gaps [%lld, %lld)\n fast %s\n slow %s", (long long)(edges[x] - base),
                  (long long)(edges[y] - base), fast ? fast : "-", slow ? slow : "-");
        free(fast);
        free(slow);
      }
    CHECK(n_win > 300);
    nsys_acache_dispose(&k);
    nsys_strtab_free(&t.ix.strings);
  }
}

int main(void) {
  test_window_ranks();
  test_window_gaps();
  test_window_names();
  test_window_paths();
  test_report_rules();
  test_report_short_gaps();
  test_gap_causes();
  test_intervals();
  test_nccl_parse();
  test_api_classify();
  test_overlap();
  test_top_kernels();
  test_gaps();
  test_launch();
  test_iterations();
  test_stream_classification();
  test_list();
  test_empty();
  test_shared_cache();
  test_run_all();
  return nsys_check_done("analysis");
}
