/* The bounds an index keeps (index/index_bounds.h): times clamped to the
 * protocol's range as rows are read; an export whose op, API call or NVTX
 * durations add up past 2^61 ns refused as corrupt (-32016) with a message
 * naming them; one just inside the bounds indexed and answered (under UBSan
 * in the c-asan suite: no sum or difference overflows); the fold at its
 * edges. The cache loader's side is in test_index_cache.c (damaged time,
 * union and maximum sections refused) and fuzz/profile/fuzz_index_cache.c. */
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/report_result.h"
#include "common/errors.h"
#include "index/index_bounds.h"
#include "index/index_query.h"
#include "index_test_util.h"

#define GPID ((1LL << 48) | (100LL << 24))
#define GTID (GPID | 100)

/* A profile whose kernels, API calls and NVTX ranges are the given
 * [start, end] pairs (one of each per pair, on one stream and thread). */
static char *make_db(const char *tag, const long long (*t)[2], int n) {
  char *path = nsys_xasprintf("%s/nsys-ai-bounds-%s-%d.sqlite", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                              tag, (int)getpid());
  unlink(path);
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) exit(2);
  t_create_schema(db);
  t_exec(db, "INSERT INTO StringIds VALUES (1,'gemm_kernel'),(5,'cudaLaunchKernel_v7000'),(8,'main');");
  for (int i = 0; i < n; i++) {
    char *sql = nsys_xasprintf(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start,end,eventClass,globalTid,correlationId,nameId)"
        " VALUES (%lld,%lld,0,%lld,%d,5);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,correlationId,"
        " globalPid,demangledName,shortName) VALUES (%lld,%lld,0,1,7,%d,%lld,1,1);"
        "INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,domainId) VALUES"
        " (%lld,%lld,59,'step',%lld,0);",
        t[i][0], t[i][1], GTID, i + 1, t[i][0], t[i][1], i + 1, GPID, t[i][0], t[i][1], GTID);
    t_exec(db, sql);
    free(sql);
  }
  {
    char *tn = nsys_xasprintf("INSERT INTO ThreadNames VALUES (8,0,%lld);", GTID);
    t_exec(db, tn);
    free(tn);
  }
  sqlite3_close(db);
  return path;
}

static void test_fold(void) {
  int64_t s[4] = {NSYS_TIME_MIN, 0, -5, NSYS_TIME_MAX}, e[4] = {NSYS_TIME_MAX, 1, -5, NSYS_TIME_MAX};
  uint64_t units = 0;
  CHECK(nsys_durations_fold(s, e, 4, &units));
  /* 2^62 - 1 ns rounds up to 2^42 units; 1 ns to 1 unit; 0 ns to 0 */
  CHECK_EQ(units, ((uint64_t)1 << 42) + 1);
  int64_t bad_s[1] = {NSYS_TIME_MIN - 1}, bad_e[1] = {0};
  units = 0;
  CHECK(!nsys_durations_fold(bad_s, bad_e, 1, &units));
  int64_t s2[1] = {0}, e2[1] = {NSYS_TIME_MAX + 1};
  CHECK(!nsys_durations_fold(s2, e2, 1, &units));
  int64_t s3[1] = {10}, e3[1] = {9}; /* ends before it starts */
  CHECK(!nsys_durations_fold(s3, e3, 1, &units));
  int64_t s4[2] = {INT64_MIN, 0}, e4[2] = {INT64_MAX, 0};
  CHECK(!nsys_durations_fold(s4, e4, 2, &units));
  CHECK_EQ(nsys_time_clamp(INT64_MIN), NSYS_TIME_MIN);
  CHECK_EQ(nsys_time_clamp(INT64_MAX), NSYS_TIME_MAX);
  CHECK_EQ(nsys_time_clamp(-7), -7);
}

/* Refused at the build: the error is -32016 and names what is out of range. */
static void test_refused(void) {
  static const long long full[2][2] = {{-9223372036854775807LL - 1, 9223372036854775807LL}, {1000, 2000}};
  char *path = make_db("refused", full, 2);
  t_profile tp = t_open(path);
  nsys_task task;
  nsys_task_init(&task);
  const nsys_index *ix = nsys_index_get(tp.p, &task);
  CHECK(ix == NULL);
  CHECK_EQ((int)task.err, (int)NSYS_E_CORRUPT);
  CHECK(strstr(task.err_msg, "add up to more than 2^61 ns") != NULL);
  CHECK(strstr(task.err_msg, "GPU op durations") != NULL);
  t_close(&tp);
  unlink(path);
  free(path);
}

static void every_answer(nsys_profile *p, const nsys_index *ix) {
  static const char *const names[] = {"top_kernels", "gpu_idle_gaps", "kernel_launch_overhead", "overlap",
                                      "iterations", "nvtx_summary", "stage_overlap", "thread_utilization"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(names); i++) {
    nsys_task task;
    nsys_task_init(&task);
    nsys_aresult *r = nsys_analysis_exec(&task, p, ix, names[i], NULL, NULL);
    CHECK(r != NULL || task.err != NSYS_OK);
    nsys_aresult_free(r);
  }
  nsys_task task;
  nsys_task_init(&task);
  nsys_report_free(nsys_report_build(&task, p, ix));
  for (uint32_t k = 0; k < nsys_tl_track_count(ix); k++) {
    nsys_tl_bucket_vec v;
    memset(&v, 0, sizeof v);
    int64_t w = ix->span_end - ix->span_start;
    nsys_tl_buckets(ix, k, ix->span_start, w / 50 + 1, 60, nsys_tl_bucket_collect, &v);
    free(v.b);
  }
}

/* Times past the range are clamped (two kernels at the far ends of it, a
 * total just under the bound): indexed, every time kept, everything answers. */
static void test_clamped(void) {
  static const long long t[4][2] = {
      {-9223372036854775807LL - 1, -9223372036854775807LL}, /* both clamp to the minimum: 0 ns */
      {-2305843009213693952LL + 5, -2305843009213693952LL + 1000005},
      {2305843009213693951LL - 1000000, 9223372036854775807LL}, /* end clamps to the maximum */
      {0, 1000}};
  char *path = make_db("clamped", t, 4);
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK(ix != NULL);
  if (ix) {
    CHECK_EQ(ix->ops.n, 4u);
    for (uint32_t i = 0; i < ix->ops.n; i++) {
      CHECK(ix->ops.start[i] >= NSYS_TIME_MIN && ix->ops.end[i] <= NSYS_TIME_MAX);
      CHECK(ix->ops.end[i] >= ix->ops.start[i]);
    }
    CHECK_EQ(ix->span_start, NSYS_TIME_MIN);
    CHECK_EQ(ix->span_end, NSYS_TIME_MAX);
    CHECK(nsys_index_bounds_broken(ix) == NULL);
    every_answer(tp.p, ix);
  }
  t_close(&tp);
  /* and again from the cache file it saved */
  tp = t_open(path);
  ix = t_index(&tp);
  CHECK(ix != NULL && nsys_index_from_cache(ix));
  if (ix) every_answer(tp.p, ix);
  t_close(&tp);
  unlink(path);
  free(path);
}

int main(void) {
  test_fold();
  test_refused();
  test_clamped();
  return nsys_check_done("index_bounds");
}
