/* Builder tests: a hand-built export with known answers (two processes that
 * reuse correlation ids, overlapping kernels, copies, nested NVTX with a
 * named domain), then invariants and independent SQL counts on every real
 * profile in ../shared/profiles. */
#include <dirent.h>
#include <unistd.h>

#include "index_test_util.h"

#define GPID_A ((1LL << 48) | (100LL << 24))
#define GTID_A (GPID_A | 100)
#define GPID_B ((1LL << 48) | (200LL << 24))
#define GTID_B (GPID_B | 201)

static char *make_small_db(void) {
  char *path = nsys_xasprintf("%s/nsys-ai-index-test-%d.sqlite",
                              getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  unlink(path);
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) exit(2);
  t_create_schema(db);
  char sql[8192];
  snprintf(
      sql, sizeof sql,
      "INSERT INTO StringIds VALUES (1,'gemm_kernel'),(2,'void gemm_kernel<float>(float*)'),"
      " (3,'ncclDevKernel_AllReduce'),(4,'ncclDevKernel_AllReduce(args)'),"
      " (5,'cudaLaunchKernel_v7000'),(6,'cudaMemcpyAsync_v3020'),(7,'cuLaunchKernel'),"
      " (8,'main'),(10,'layer'),(11,'worker');"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start,end,eventClass,globalTid,correlationId,nameId) VALUES"
      " (100,110,0,%lld,1,5),(120,130,0,%lld,2,5),(140,150,0,%lld,3,6),"
      " (105,115,0,%lld,1,5),(200,210,1,%lld,2,7);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,correlationId,"
      " globalPid,demangledName,shortName) VALUES"
      " (250,400,0,1,7,2,%lld,2,1),(200,300,0,1,7,1,%lld,2,1),"
      " (500,600,0,1,7,1,%lld,4,3),(700,800,1,1,13,2,%lld,4,3);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start,end,deviceId,contextId,streamId,correlationId,"
      " globalPid,bytes,copyKind) VALUES (160,170,0,1,9,3,%lld,64,1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start,end,deviceId,contextId,streamId,correlationId,"
      " globalPid,value,bytes) VALUES (180,190,0,1,9,NULL,%lld,0,64);"
      "INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,endGlobalTid,textId,domainId) VALUES"
      " (10,NULL,75,'MyDom',%lld,NULL,NULL,1),"
      " (50,1000,59,'step',%lld,NULL,NULL,0),"
      " (90,135,59,NULL,%lld,NULL,10,1),"
      " (95,112,59,'inner',%lld,NULL,NULL,0),"
      " (97,NULL,34,'a mark',%lld,NULL,NULL,0),"
      " (98,NULL,59,'never closed',%lld,NULL,NULL,0),"
      " (99,140,60,'crosses threads',%lld,%lld,NULL,0),"
      " (300,310,59,'b range',%lld,NULL,NULL,0);"
      "INSERT INTO ThreadNames VALUES (8,0,%lld),(11,0,%lld);",
      GTID_A, GTID_A, GTID_A, GTID_B, GTID_B, GPID_A, GPID_A, GPID_B, GPID_B, GPID_A, GPID_A,
      GTID_A, GTID_A, GTID_A, GTID_A, GTID_A, GTID_A, GTID_A, GTID_B, GTID_B, GTID_A, GTID_B);
  t_exec(db, sql);
  sqlite3_close(db);
  return path;
}

static const char *S(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

static void test_small(void) {
  char *path = make_small_db();
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK(ix != NULL);
  if (!ix) goto out;
  CHECK_EQ(ix->n_tracks, 4);
  CHECK_EQ(ix->ops.n, 6);
  /* tracks sorted by (device, stream, pid) */
  CHECK_EQ(ix->tracks[0].device, 0);
  CHECK_EQ(ix->tracks[0].stream, 7);
  CHECK_EQ(ix->tracks[0].pid, 100);
  CHECK_EQ(ix->tracks[1].pid, 200);
  CHECK_EQ(ix->tracks[2].stream, 9);
  CHECK_EQ(ix->tracks[3].device, 1);
  CHECK_EQ(ix->tracks[0].count, 2);
  CHECK_EQ(ix->tracks[0].busy_ns, 200); /* [200,300] u [250,400] */
  CHECK_EQ(ix->tracks[0].cls, NSYS_STREAM_COMPUTE);
  CHECK_EQ(ix->tracks[1].cls, NSYS_STREAM_COMM);
  CHECK_EQ(ix->tracks[2].cls, NSYS_STREAM_COPY);
  CHECK_EQ(ix->tracks[3].cls, NSYS_STREAM_COMM);
  /* op 0 = earliest kernel of track 0 */
  CHECK_EQ(ix->ops.start[0], 200);
  CHECK_EQ(ix->ops.start[1], 250);
  CHECK(strcmp(S(ix, ix->ops.name[0]), "gemm_kernel") == 0);
  CHECK(strcmp(S(ix, ix->ops.full_name[0]), "void gemm_kernel<float>(float*)") == 0);
  CHECK(strcmp(S(ix, ix->ops.name[3]), "[CUDA memcpy HtoD]") == 0);
  CHECK(strcmp(S(ix, ix->ops.name[4]), "[CUDA memset]") == 0);
  CHECK_EQ(ix->ops.kind[3], NSYS_OP_MEMCPY);
  CHECK_EQ(ix->ops.kind[4], NSYS_OP_MEMSET);
  CHECK_EQ(ix->ops.api[4], -1);
  /* threads sorted by (pid, tid), named */
  CHECK_EQ(ix->n_threads, 2);
  CHECK_EQ(ix->threads[0].pid, 100);
  CHECK_EQ(ix->threads[1].tid, 201);
  CHECK(strcmp(S(ix, ix->threads[0].name), "main") == 0);
  CHECK(strcmp(S(ix, ix->threads[1].name), "worker") == 0);
  /* join on (process, correlationId): B's corr 1 must not go to A's call */
  CHECK_EQ(ix->api.n, 5);
  int32_t a0 = ix->ops.api[0], a2 = ix->ops.api[2];
  CHECK(a0 >= 0 && a2 >= 0);
  if (a0 >= 0 && a2 >= 0) {
    CHECK_EQ(ix->api.start[a0], 100);
    CHECK_EQ(ix->threads[ix->api.thread[a0]].pid, 100);
    CHECK_EQ(ix->api.start[a2], 105);
    CHECK_EQ(ix->threads[ix->api.thread[a2]].pid, 200);
    CHECK(strcmp(S(ix, ix->api.name[a0]), "cudaLaunchKernel") == 0);
    CHECK_EQ(ix->api.first_op[a0], 0);
    CHECK_EQ(ix->op_next[0], -1);
  }
  int32_t a5 = ix->ops.api[5];
  CHECK(a5 >= 0 && strcmp(S(ix, ix->api.name[a5]), "cuLaunchKernel") == 0);
  int32_t a3 = ix->ops.api[3];
  CHECK(a3 >= 0 && strcmp(S(ix, ix->api.name[a3]), "cudaMemcpyAsync") == 0);
  /* API calls grouped by thread, sorted by start */
  CHECK_EQ(ix->threads[0].api_count, 3);
  CHECK_EQ(ix->threads[1].api_count, 2);
  for (uint32_t i = 1; i < ix->threads[0].api_count; i++)
    CHECK(ix->api.start[i - 1] <= ix->api.start[i]);
  /* NVTX: marks, unclosed and cross-thread ranges skipped; nesting */
  CHECK_EQ(ix->nvtx.n, 4);
  CHECK_EQ(ix->threads[0].nvtx_count, 3);
  CHECK_EQ(ix->threads[0].nvtx_max_depth, 2);
  if (ix->nvtx.n == 4) {
    CHECK(strcmp(S(ix, ix->nvtx.name[0]), "step") == 0);
    CHECK(strcmp(S(ix, ix->nvtx.name[1]), "layer") == 0);
    CHECK(strcmp(S(ix, ix->nvtx.domain[1]), "MyDom") == 0);
    CHECK(strcmp(S(ix, ix->nvtx.domain[0]), "") == 0);
    CHECK_EQ(ix->nvtx.depth[0], 0);
    CHECK_EQ(ix->nvtx.depth[1], 1);
    CHECK_EQ(ix->nvtx.depth[2], 2);
    CHECK_EQ(ix->nvtx.parent[0], -1);
    CHECK_EQ(ix->nvtx.parent[1], 0);
    CHECK_EQ(ix->nvtx.parent[2], 1);
    CHECK_EQ(ix->nvtx.thread[3], 1);
    CHECK_EQ(ix->nvtx.depth[3], 0);
  }
  CHECK_EQ(ix->span_start, 50);
  CHECK_EQ(ix->span_end, 1000);
out:
  t_close(&tp);
  unlink(path);
  free(path);
}

/* Graph-level CUDA graph tracing: one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per
 * launch, an op of kind graph on its stream, joined to cudaGraphLaunch. */
static void test_graph_trace(void) {
  char *path = make_small_db();
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) exit(2);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL,"
           " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
           " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
           " graphId INTEGER NOT NULL, graphExecId INTEGER NOT NULL);"
           "INSERT INTO StringIds VALUES (20,'cudaGraphLaunch_v10000');"
           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start,end,eventClass,globalTid,correlationId,nameId)"
           " VALUES (160,165,0,%lld,9,20);"
           /* same start as the kernel at 200 on stream 7: sorts after it (kind) */
           "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (200,300,0,1,NULL,7,9,%lld,4,5),"
           " (900,950,0,1,NULL,21,77,%lld,6,8);",
           GTID_A, GPID_A, GPID_A);
  t_exec(db, sql);
  sqlite3_close(db);
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK(ix != NULL);
  if (!ix) goto out;
  CHECK_EQ(ix->ops.n, 8);
  CHECK_EQ(ix->n_tracks, 5);
  /* track 0 = (device 0, stream 7, pid 100): kernel 200-300, graph 200-300, kernel 250-400 */
  CHECK_EQ(ix->tracks[0].count, 3);
  CHECK_EQ(ix->ops.kind[0], NSYS_OP_KERNEL);
  CHECK_EQ(ix->ops.kind[1], NSYS_OP_GRAPH);
  CHECK_EQ(ix->ops.rowid[1], 1);
  CHECK(strcmp(S(ix, ix->ops.name[1]), "[CUDA graph 4]") == 0);
  CHECK(strcmp(S(ix, ix->ops.full_name[1]), "[CUDA graph 4]") == 0);
  CHECK_EQ(ix->tracks[0].busy_ns, 200);
  int32_t a = ix->ops.api[1];
  CHECK(a >= 0 && strcmp(S(ix, ix->api.name[a]), "cudaGraphLaunch") == 0);
  if (a >= 0) CHECK_EQ(ix->api.first_op[a], 1);
  /* a stream with graph launches only runs kernels: compute; no launching call: unattributed */
  uint32_t t21 = UINT32_MAX;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (ix->tracks[t].stream == 21) t21 = t;
  CHECK(t21 != UINT32_MAX);
  if (t21 != UINT32_MAX) {
    CHECK_EQ(ix->tracks[t21].cls, NSYS_STREAM_COMPUTE);
    CHECK_EQ(ix->tracks[t21].count, 1);
    uint32_t o = ix->tracks[t21].first;
    CHECK_EQ(ix->ops.kind[o], NSYS_OP_GRAPH);
    CHECK_EQ(ix->ops.api[o], -1);
    CHECK(strcmp(S(ix, ix->ops.name[o]), "[CUDA graph 6]") == 0);
  }
out:
  t_close(&tp);
  unlink(path);
  free(path);
}

/* ---- real profiles ------------------------------------------------------ */

static int64_t sql_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static bool has_table(sqlite3 *db, const char *t) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM p.sqlite_master WHERE type='table' AND name='%s'", t);
  return sql_int(db, sql) > 0;
}

static void check_real(const char *path) {
  t_profile tp = t_open(path);
  int64_t t0 = nsys_now_ns();
  const nsys_index *ix = t_index(&tp);
  int64_t t1 = nsys_now_ns();
  CHECK(ix != NULL);
  if (!ix) {
    t_close(&tp);
    return;
  }
  /* the export read-only, attached to a scratch in-memory database */
  sqlite3 *db = NULL;
  sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL);
  {
    char *att = sqlite3_mprintf("ATTACH 'file:%q?mode=ro' AS p", path);
    t_exec(db, att);
    sqlite3_free(att);
  }
  static const char *gpu[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"};
  int64_t per_kind[4] = {0};
  int64_t n_ops = 0, n_joined = 0;
  bool rt = has_table(db, "CUPTI_ACTIVITY_KIND_RUNTIME");
  if (rt) {
    /* an indexed copy of the join keys (the export itself has no indexes) */
    char *err = NULL;
    if (sqlite3_exec(db,
                     "CREATE TABLE main.rk AS SELECT correlationId AS c, (globalTid & -16777216) AS g"
                     " FROM CUPTI_ACTIVITY_KIND_RUNTIME;"
                     "CREATE INDEX main.rk_cg ON rk(c, g);",
                     NULL, NULL, &err) != SQLITE_OK) {
      CHECK_MSG(false, "attach: %s", err);
    }
    sqlite3_free(err);
  }
  for (int i = 0; i < 4; i++) {
    if (!has_table(db, gpu[i])) continue;
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", gpu[i]);
    per_kind[i] = sql_int(db, sql);
    n_ops += per_kind[i];
    if (rt) {
      snprintf(sql, sizeof sql,
               "SELECT count(*) FROM %s x WHERE EXISTS (SELECT 1 FROM main.rk"
               " WHERE rk.c = x.correlationId AND rk.g = x.globalPid)",
               gpu[i]);
      n_joined += sql_int(db, sql);
    }
  }
  CHECK_EQ(ix->ops.n, n_ops);
  {
    int64_t got[4] = {0};
    for (uint32_t i = 0; i < ix->ops.n; i++)
      if (ix->ops.kind[i] < 4) got[ix->ops.kind[i]]++;
    CHECK_EQ(got[NSYS_OP_KERNEL], per_kind[0]);
    CHECK_EQ(got[NSYS_OP_MEMCPY], per_kind[1]);
    CHECK_EQ(got[NSYS_OP_MEMSET], per_kind[2]);
    CHECK_EQ(got[NSYS_OP_GRAPH], per_kind[3]);
  }
  int64_t joined = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++) joined += ix->ops.api[i] >= 0;
  CHECK_EQ(joined, n_joined);
  if (rt) {
    /* a CUDA-backtrace row (eventClass 67-69) repeating a traced call is not a call */
    bool ec = sql_int(db, "SELECT count(*) FROM pragma_table_info('CUPTI_ACTIVITY_KIND_RUNTIME', 'p') "
                          "WHERE name='eventClass'") > 0;
    CHECK_EQ(ix->api.n,
             sql_int(db, ec ? "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT (eventClass "
                              "BETWEEN 67 AND 69 AND EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME t "
                              "WHERE t.globalTid = r.globalTid AND t.correlationId = r.correlationId AND "
                              "t.eventClass NOT BETWEEN 67 AND 69))"
                            : "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  }
  if (has_table(db, "NVTX_EVENTS")) {
    bool egt = sql_int(db, "SELECT count(*) FROM pragma_table_info('NVTX_EVENTS', 'p') WHERE name='endGlobalTid'") > 0;
    CHECK_EQ(ix->nvtx.n,
               sql_int(db, egt ? "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59,60,70,71)"
                                 " AND end IS NOT NULL AND end >= start AND (endGlobalTid IS NULL OR"
                                 " endGlobalTid = globalTid)"
                               : "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59,60,70,71)"
                                 " AND end IS NOT NULL AND end >= start"));
  }
  /* tracks partition ops; each sorted by (start, end) */
  uint32_t covered = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    CHECK_EQ(tr->first, covered);
    covered += tr->count;
    if (t) {
      const nsys_gpu_track *pr = &ix->tracks[t - 1];
      CHECK(pr->device < tr->device || (pr->device == tr->device && pr->stream <= tr->stream));
    }
    int64_t sum = 0;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
      CHECK_EQ(ix->ops.track[i], t);
      sum += nsys_op_dur(ix, i);
      if (i > tr->first)
        CHECK(ix->ops.start[i - 1] < ix->ops.start[i] ||
              (ix->ops.start[i - 1] == ix->ops.start[i] && ix->ops.end[i - 1] <= ix->ops.end[i]));
      if (ix->ops.api[i] >= 0)
        CHECK_EQ(ix->threads[ix->api.thread[ix->ops.api[i]]].pid, tr->pid);
    }
    CHECK(tr->busy_ns <= sum);
  }
  CHECK_EQ(covered, ix->ops.n);
  /* NVTX nesting: a parent contains its child, on the same thread */
  for (uint32_t i = 0; i < ix->nvtx.n; i++) {
    int32_t pa = ix->nvtx.parent[i];
    if (pa < 0) {
      CHECK_EQ(ix->nvtx.depth[i], 0);
      continue;
    }
    CHECK(ix->nvtx.start[pa] <= ix->nvtx.start[i] && ix->nvtx.end[pa] >= ix->nvtx.end[i]);
    CHECK_EQ(ix->nvtx.thread[pa], ix->nvtx.thread[i]);
    CHECK_EQ(ix->nvtx.depth[i], ix->nvtx.depth[pa] + 1);
  }
  /* op chains of an API call */
  for (uint32_t a = 0; a < ix->api.n; a++)
    for (int32_t o = ix->api.first_op[a]; o >= 0; o = ix->op_next[o]) CHECK_EQ(ix->ops.api[o], (int32_t)a);
  printf("  %-45s ops %8u api %8u nvtx %7u tracks %3u threads %4u  %.1f ms\n",
         strrchr(path, '/') ? strrchr(path, '/') + 1 : path, ix->ops.n, ix->api.n, ix->nvtx.n,
         ix->n_tracks, ix->n_threads, (double)(t1 - t0) / 1e6);
  sqlite3_close(db);
  t_close(&tp);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_real_profiles(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  char *dir = nsys_xasprintf("%s/profiles", shared ? shared : "../shared");
  DIR *d = opendir(dir);
  if (!d) {
    nsys_check_skip("real profiles: %s is absent", dir);
    free(dir);
    return;
  }
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 256) {
    size_t l = strlen(e->d_name);
    if (l > 7 && strcmp(e->d_name + l - 7, ".sqlite") == 0) names[n++] = nsys_xstrdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  for (int i = 0; i < n; i++) {
    char *path = nsys_xasprintf("%s/%s", dir, names[i]);
    check_real(path);
    free(path);
    free(names[i]);
  }
  free(dir);
}

/* progress is reported (monotonic percentages) and cancellation stops the build */
static int prog_calls, prog_last = -1, prog_bad;
static void record_progress(void *ctx, nsys_progress_kind kind, const char *title, const char *message,
                            int percent) {
  (void)ctx;
  (void)title;
  (void)message;
  if (kind == NSYS_PROGRESS_REPORT) {
    if (percent < prog_last || percent > 100) prog_bad++;
    prog_last = percent;
    prog_calls++;
  }
}

static void test_progress_and_cancel(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  char *path = nsys_xasprintf("%s/profiles/nsys2023_rtx3060_23k.sqlite", shared ? shared : "../shared");
  if (access(path, R_OK) != 0) {
    nsys_check_skip("progress/cancel: %s absent", path);
    free(path);
    return;
  }
  t_profile tp = t_open(path);
  nsys_task task;
  nsys_task_init(&task);
  task.progress_fn = record_progress;
  nsys_task_progress_begin(&task, "open");
  nsys_index *ix = nsys_index_build(tp.p, &task);
  CHECK(ix != NULL);
  CHECK(prog_calls > 0 && prog_bad == 0);
  nsys_index_free(ix);
  nsys_task_init(&task);
  nsys_task_cancel(&task);
  ix = nsys_index_build(tp.p, &task);
  CHECK(ix == NULL);
  CHECK_EQ(task.err, NSYS_E_CANCELLED);
  t_close(&tp);
  free(path);
}

int main(int argc, char **argv) {
  setenv("NSYS_AI_NO_INDEX_CACHE", "1", 0);
  if (argc > 1) {
    for (int i = 1; i < argc; i++) check_real(argv[i]);
  } else {
    test_small();
    test_graph_trace();
    test_progress_and_cancel();
    test_real_profiles();
  }
  return nsys_check_done("index_build");
}
