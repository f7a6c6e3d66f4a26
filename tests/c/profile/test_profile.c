/* C unit tests of the profile loader: generation detection, table and column
 * resolution, strings, info, error paths and change detection, on databases
 * generated here and (when ../shared/profiles exists) on the real exports. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "profile/profile.h"
#include "common/task.h"
#include "../common/nsys_check.h"

static char tmpdir[256];

static char *tmp_path(const char *name) { return nsys_xasprintf("%s/%s", tmpdir, name); }

static void make_db(const char *path, const char *sql) {
  unlink(path);
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    fprintf(stderr, "cannot create %s\n", path);
    exit(2);
  }
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "setup SQL failed: %s\n", err);
    exit(2);
  }
  sqlite3_close(db);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) exit(2);
  fwrite(data, 1, n, f);
  fclose(f);
}

/* Opens path; returns the profile or NULL and the error in *err. */
static nsys_profile *open_profile(const char *path, nsys_err *err) {
  nsys_task task;
  nsys_task_init(&task);
  nsys_profile *p = nsys_profile_open(path, &task);
  *err = task.err;
  if (!p && getenv("NSYS_AI_TEST_VERBOSE")) fprintf(stderr, "  %s: %s\n", path, task.err_msg);
  return p;
}

/* ---- a modern export with every quirk -------------------------------- */

static const char *modern_sql =
    "CREATE TABLE META_DATA_EXPORT(name TEXT NOT NULL, value TEXT);"
    "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2026.2.1.210'),"
    "  ('EXPORT_SCHEMA_VERSION','3.25.0');"
    "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO StringIds VALUES(0,'main'),(1,'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),"
    "  (2,'gemm'),(5000000,'far away'),(-7,'negative id'),"
    "  (3, CAST(X'4772FCDF65' AS TEXT));"
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
    "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1776781226557295056,'x','y');"
    "CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER, name TEXT, totalMemory INTEGER,"
    "  memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, computeMajor INTEGER,"
    "  computeMinor INTEGER);"
    "INSERT INTO TARGET_INFO_GPU VALUES(0,1,'GPU B',0,0,0,0,0,0),"
    "  (0,0,'NVIDIA H100',85000000000,3350000000000,1980000000,132,9,0);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL_V2(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    "  deviceId INTEGER, streamId INTEGER, shortName INTEGER, demangledName INTEGER,"
    "  globalPid INTEGER, graphNodeId INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL_V2 VALUES(100,200,0,7,2,2,281479271677952,NULL),"
    "  (150,400,0,13,1,1,281479271677952,NULL),(300,350,1,7,2,2,281479271677952,NULL);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL_V1(start INTEGER);" /* older variant: ignored */
    "CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER,"
    "  text TEXT, globalTid INTEGER);"
    "INSERT INTO NVTX_EVENTS VALUES(-50,NULL,34,'mark',281479271677952),"
    "  (10,900,59,'range',281479271677953),(1000,NULL,34,'late mark',281479271677953);"
    "CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT);"
    "INSERT INTO PROCESSES VALUES(281479271677952, 256, 'python3');"
    "CREATE TABLE ThreadNames(nameId INTEGER, priority INTEGER, globalTid INTEGER);"
    "INSERT INTO ThreadNames VALUES(0,10,281479271677952),(2,10,281479271677953),"
    "  (0,10,281479271677953),(99,10,281474976710657);";

static void test_modern(void) {
  char *path = tmp_path("modern.sqlite");
  make_db(path, modern_sql);
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (!p) goto out;
  CHECK(p->schema.gen == NSYS_GEN_META_EXPORT);
  CHECK_STR(nsys_schema_gen_name(p->schema.gen), "META_DATA_EXPORT");
  CHECK_STR(p->schema.table[NSYS_TBL_KERNEL], "CUPTI_ACTIVITY_KIND_KERNEL_V2");
  CHECK(p->schema.table[NSYS_TBL_MEMCPY] == NULL);
  CHECK(nsys_schema_has_column(p, NSYS_TBL_KERNEL, "shortName"));
  CHECK(!nsys_schema_has_column(p, NSYS_TBL_KERNEL, "gridX"));
  CHECK(!nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "start"));
  /* strings: dense, sparse, negative, non-UTF-8 (CP-1252) */
  CHECK_STR(nsys_profile_string(p, 0), "main");
  CHECK_STR(nsys_profile_string(p, 5000000), "far away");
  CHECK_STR(nsys_profile_string(p, -7), "negative id");
  CHECK_STR(nsys_profile_string(p, 3), "Gr\xc3\xbc\xc3\x9f" "e");
  CHECK(nsys_profile_string(p, 4) == NULL);
  CHECK(nsys_profile_string(p, 4999999) == NULL);
  CHECK(p->n_strings < 100000); /* 5M id did not make a 5M array */
  const nsys_info *in = &p->info;
  CHECK_STR(in->nsys_version, "2026.2.1.210");
  CHECK_STR(in->schema_version, "3.25.0");
  CHECK(in->has_utc_epoch && in->utc_epoch_ns == 1776781226557295056LL);
  CHECK(in->n_kernels == 3 && in->n_nvtx == 3 && in->n_memcpy == 0);
  CHECK(in->has_span && in->span_start == -50 && in->span_end == 1000);
  CHECK(in->f_kernels && in->f_nccl && in->f_nvtx && !in->f_memcpy && !in->f_cuda_graphs);
  CHECK(in->n_gpus == 2);
  if (in->n_gpus == 2) {
    CHECK(in->gpus[0].id == 0 && in->gpus[0].sm_count == 132 && in->gpus[0].cc_major == 9);
    CHECK(in->gpus[1].id == 1 && in->gpus[1].sm_count == 0 && in->gpus[1].cc_major == -1);
  }
  CHECK(in->n_devices == 2);
  if (in->n_devices == 2) {
    CHECK(in->devices[0].id == 0 && in->devices[0].n_streams == 2);
    CHECK(in->devices[0].streams[0] == 7 && in->devices[0].streams[1] == 13);
    CHECK(in->devices[1].id == 1 && in->devices[1].n_streams == 1);
  }
  /* pid 256 (python3) with threads 0 (main) and 1 (renamed: last row wins
   * -> "main"); pid 0 from a ThreadNames row with an unknown name id */
  CHECK(in->n_processes == 2);
  if (in->n_processes == 2) {
    CHECK(in->processes[0].pid == 0 && in->processes[0].name == NULL);
    CHECK(in->processes[0].n_threads == 1 && in->processes[0].threads[0].name == NULL);
    const nsys_process_info *pr = &in->processes[1];
    CHECK(pr->pid == 256);
    CHECK_STR(pr->name, "python3");
    CHECK(pr->n_threads == 2);
    if (pr->n_threads == 2) {
      CHECK(pr->threads[0].tid == 0 && pr->threads[1].tid == 1);
      CHECK_STR(pr->threads[1].name, "main");
    }
  }
  /* id helpers (§1.3) */
  CHECK(nsys_gtid_pid(281479271677953) == 256 && nsys_gtid_tid(281479271677953) == 1);
  nsys_profile_release(p);
out:
  free(path);
}

static void test_legacy(void) {
  char *path = tmp_path("legacy.sqlite");
  make_db(path,
          "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
          "CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, deviceId INTEGER, name TEXT);"
          "INSERT INTO TARGET_INFO_GPU VALUES(0,0,'A100');"
          "CREATE TABLE TARGET_INFO_CUDA_GPU(vmId INTEGER, name TEXT, globalMemoryBandwidth INTEGER,"
          " globalMemorySize INTEGER, coreClockRate INTEGER, numMultiprocessors INTEGER,"
          " computeCapabilityMajor INTEGER, computeCapabilityMinor INTEGER, deviceId INTEGER,"
          " pid INTEGER);"
          "INSERT INTO TARGET_INFO_CUDA_GPU VALUES(0,'A100-PCIE-40GB',1555200000,42505273344,"
          " 1410000,108,8,0,0,1),(0,'A100-PCIE-40GB',1555200000,42505273344,1410000,108,8,0,0,2);");
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (p) {
    CHECK(p->schema.gen == NSYS_GEN_PRE2022);
    CHECK_STR(p->schema.table[NSYS_TBL_GPU_INFO], "TARGET_INFO_CUDA_GPU");
    CHECK(p->info.n_gpus == 1);
    if (p->info.n_gpus == 1) {
      CHECK(p->info.gpus[0].bandwidth_bytes_per_sec == 1555200000000LL);
      CHECK(p->info.gpus[0].clock_hz == 1410000000LL);
      CHECK(p->info.gpus[0].sm_count == 108 && p->info.gpus[0].cc_major == 8);
    }
    CHECK(!p->info.has_span && p->info.nsys_version == NULL);
    nsys_profile_release(p);
  }
  free(path);
}

/* NULLs everywhere, wrong column types, huge strings: partial info, no crash. */
static void test_hostile(void) {
  char *path = tmp_path("hostile.sqlite");
  nsys_strbuf sql;
  nsys_strbuf_init(&sql);
  nsys_strbuf_puts(&sql,
                   "CREATE TABLE StringIds(id, value);"
                   "INSERT INTO StringIds VALUES(NULL,'x'),(1,NULL),('abc',X'00FF'),(2,2.5),"
                   "(3, X'C0AFE080');"
                   "CREATE TABLE EXPORT_META_DATA(name, value);"
                   "INSERT INTO EXPORT_META_DATA VALUES(NULL,NULL),('EXPORT_PRODUCT_VERSION',X'FF');"
                   "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, shortName);"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(NULL,NULL,NULL,NULL,NULL),"
                   "('ten','twenty','zero',X'01',99),(5,1,0,0,1e300);"
                   "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(x);"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(1);"
                   "CREATE TABLE TARGET_INFO_GPU(id, name, smCount, computeMajor, computeMinor);"
                   "INSERT INTO TARGET_INFO_GPU VALUES(NULL,NULL,NULL,NULL,NULL),"
                   "(0,X'FFFE',-5,99999,-1);"
                   "CREATE TABLE ThreadNames(nameId, priority, globalTid);"
                   "INSERT INTO ThreadNames VALUES(NULL,NULL,NULL),('a','b','c'),(-1,0,-1);"
                   "CREATE TABLE PROCESSES(globalPid, pid, name);"
                   "INSERT INTO PROCESSES VALUES(NULL,NULL,NULL),(NULL,77,X'E9');");
  nsys_strbuf_puts(&sql, "INSERT INTO StringIds VALUES(4, '");
  for (int i = 0; i < (3 << 20); i++) nsys_strbuf_putc(&sql, 'a');
  nsys_strbuf_puts(&sql, "');");
  make_db(path, sql.data);
  nsys_strbuf_free(&sql);
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (p) {
    CHECK(p->schema.gen == NSYS_GEN_EXPORT_META);
    const char *huge = nsys_profile_string(p, 4);
    CHECK(huge && strlen(huge) == (1 << 20));
    CHECK(nsys_profile_string(p, 1) == NULL);
    CHECK(p->info.n_kernels == 3 && p->info.n_memcpy == 1);
    CHECK_STR(p->info.nsys_version, "\xc3\xbf");
    CHECK(p->info.n_gpus == 1);
    if (p->info.n_gpus == 1) CHECK(p->info.gpus[0].sm_count == 0 && p->info.gpus[0].cc_major == -1);
    bool found77 = false;
    for (int i = 0; i < p->info.n_processes; i++)
      if (p->info.processes[i].pid == 77) found77 = p->info.processes[i].name != NULL;
    CHECK(found77);
    nsys_profile_release(p);
  }
  free(path);
}

static void test_errors(void) {
  nsys_err err;
  char *missing = tmp_path("does-not-exist.sqlite");
  CHECK(open_profile(missing, &err) == NULL && err == NSYS_E_FILE_NOT_FOUND);
  CHECK(open_profile(tmpdir, &err) == NULL && err == NSYS_E_FILE_NOT_FOUND);
  char *text = tmp_path("notes.txt");
  write_file(text, "hello, this is not a database\n", 30);
  CHECK(open_profile(text, &err) == NULL && err == NSYS_E_NOT_SQLITE);
  char *empty = tmp_path("empty.sqlite");
  write_file(empty, "", 0);
  CHECK(open_profile(empty, &err) == NULL && err == NSYS_E_NOT_SQLITE);
  char *unrelated = tmp_path("unrelated.sqlite");
  make_db(unrelated, "CREATE TABLE users(id INTEGER, name TEXT); INSERT INTO users VALUES(1,'a');");
  CHECK(open_profile(unrelated, &err) == NULL && err == NSYS_E_NOT_NSYS_EXPORT);
  char *garbage = tmp_path("garbage.sqlite");
  char buf[4096];
  memset(buf, 0xAB, sizeof buf);
  memcpy(buf, "SQLite format 3", 16);
  write_file(garbage, buf, sizeof buf);
  CHECK(open_profile(garbage, &err) == NULL &&
        (err == NSYS_E_NOT_SQLITE || err == NSYS_E_CORRUPT));
  char *rep = tmp_path("report.nsys-rep");
  write_file(rep, "not really a report", 19);
  setenv("NSYS_AI_NSYS", "/nonexistent/nsys", 1);
  CHECK(open_profile(rep, &err) == NULL && err == NSYS_E_NSYS_UNAVAILABLE);
  unsetenv("NSYS_AI_NSYS");
  free(missing);
  free(text);
  free(empty);
  free(unrelated);
  free(garbage);
  free(rep);
}

static void test_change_detection(void) {
  char *path = tmp_path("changing.sqlite");
  make_db(path, modern_sql);
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (!p) goto out;
  nsys_task task;
  nsys_task_init(&task);
  CHECK(nsys_profile_check_unchanged(p, &task));
  /* replaced: a new file renamed over the old path */
  char *other = tmp_path("other.sqlite");
  make_db(other, modern_sql);
  CHECK(rename(other, path) == 0);
  CHECK(!nsys_profile_check_unchanged(p, &task) && task.err == NSYS_E_PROFILE_CHANGED);
  /* the old connection still reads the old file: the profile stays usable */
  CHECK_STR(nsys_profile_string(p, 0), "main");
  nsys_profile_release(p);

  p = open_profile(path, &err);
  CHECK(p != NULL);
  if (p) {
    nsys_task_init(&task);
    unlink(path);
    CHECK(!nsys_profile_check_unchanged(p, &task) && task.err == NSYS_E_PROFILE_CHANGED);
    nsys_profile_release(p);
  }
  free(other);
out:
  free(path);
}

/* A WAL-mode database: neither the loader's connection nor a second one
 * from nsys_profile_open_db() may create -wal/-shm files beside it. */
static void test_wal_read_only(void) {
  char *path = tmp_path("wal.sqlite");
  char *wal = tmp_path("wal.sqlite-wal"), *shm = tmp_path("wal.sqlite-shm");
  nsys_strbuf sql;
  nsys_strbuf_init(&sql);
  nsys_strbuf_printf(&sql, "PRAGMA journal_mode=WAL; %s PRAGMA wal_checkpoint(TRUNCATE);",
                     modern_sql);
  make_db(path, sql.data);
  nsys_strbuf_free(&sql);
  unlink(wal);
  unlink(shm);
  struct stat before, after;
  CHECK(stat(path, &before) == 0);
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (p) {
    nsys_task task;
    nsys_task_init(&task);
    sqlite3 *db2 = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &task);
    CHECK(db2 != NULL);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db2, "SELECT count(*) FROM NVTX_EVENTS", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3);
    sqlite3_finalize(st);
    CHECK(sqlite3_exec(db2, "CREATE TABLE x(y)", NULL, NULL, NULL) != SQLITE_OK);
    sqlite3_close(db2);
    CHECK(p->info.n_nvtx == 3);
    nsys_profile_release(p);
  }
  CHECK(access(wal, F_OK) != 0 && access(shm, F_OK) != 0);
  CHECK(stat(path, &after) == 0 && after.st_size == before.st_size &&
        after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
        after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  free(path);
  free(wal);
  free(shm);
}

/* The real exports: generation, tables, and a truncated copy. */
static void test_real(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  char *dir = nsys_xasprintf("%s/profiles", shared ? shared : "../shared");
  DIR *d = opendir(dir);
  if (!d) {
    nsys_check_skip("real profiles: %s is absent", dir);
    free(dir);
    return;
  }
  struct {
    const char *name;
    nsys_schema_gen gen;
    bool kernels;
  } expect[] = {
      {"nsys2021_a100_cuda_callchains.sqlite", NSYS_GEN_PRE2022, true},
      {"nsys2022_nvtx_only_negative_ts.sqlite", NSYS_GEN_EXPORT_META, false},
      {"nsys2023_rtx3060_23k.sqlite", NSYS_GEN_EXPORT_META, true},
      {"nsys2024_a100_lm_nvtx.sqlite", NSYS_GEN_META_EXPORT, true},
      {"nsys2026_2gpu_nccl_before.sqlite", NSYS_GEN_META_EXPORT, true},
      {"nsys_failed_capture_no_meta.sqlite", NSYS_GEN_UNKNOWN, false},
  };
  int opened = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 7 || strcmp(e->d_name + n - 7, ".sqlite") != 0) continue;
    char *path = nsys_xasprintf("%s/%s", dir, e->d_name);
    nsys_err err;
    nsys_profile *p = open_profile(path, &err);
    CHECK(p != NULL);
    if (p) {
      opened++;
      CHECK(p->schema.table[NSYS_TBL_STRING_IDS] != NULL);
      for (size_t i = 0; i < NSYS_ARRAY_LEN(expect); i++) {
        if (strcmp(expect[i].name, e->d_name) != 0) continue;
        CHECK(p->schema.gen == expect[i].gen);
        CHECK((p->schema.table[NSYS_TBL_KERNEL] != NULL) == expect[i].kernels);
      }
      if (strcmp(e->d_name, "nsys2026_2gpu_nccl_before.sqlite") == 0) {
        CHECK(p->n_sparse > 0); /* ids up to 3.4M for 126 strings */
        CHECK(p->info.f_nccl && p->info.n_devices == 2);
      }
      nsys_profile_release(p);
    }
    free(path);
  }
  closedir(d);
  CHECK(opened == 24);

  /* A truncated copy: an error (-32016/-32003) or partial info, never a crash. */
  char *src = nsys_xasprintf("%s/nsys2023_rtx3060_23k.sqlite", dir);
  FILE *f = fopen(src, "rb");
  if (f) {
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t cuts[] = {100, 4096, 65536, n / 2, n - 1};
    for (size_t i = 0; i < NSYS_ARRAY_LEN(cuts); i++) {
      char *t = tmp_path("truncated.sqlite");
      write_file(t, buf, cuts[i]);
      nsys_err err;
      nsys_profile *p = open_profile(t, &err);
      CHECK(p != NULL || err == NSYS_E_CORRUPT || err == NSYS_E_NOT_SQLITE ||
            err == NSYS_E_NOT_NSYS_EXPORT);
      nsys_profile_release(p);
      free(t);
    }
  }
  free(src);
  free(dir);
}

/* SQL cancellation: every connection to a profile (the shared FULLMUTEX one
 * and private ones) stops a statement when the task bound to the stepping
 * thread is cancelled, mid-statement; a thread without that task bound, or
 * after it left, is not stopped. The endless query never ends otherwise
 * (the test would hang: the harness's timeout fails it). */
#define ENDLESS "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
#define FINITE "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) FROM c"

static int step_once(sqlite3 *db, const char *sql, int64_t *out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && out) *out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc;
}

static void *cancel_later(void *arg) {
  struct timespec ts = {0, 30 * 1000 * 1000};
  nanosleep(&ts, NULL);
  nsys_task_cancel(arg);
  return NULL;
}

static void test_sql_cancel(void) {
  char *path = tmp_path("cancel.sqlite");
  make_db(path, modern_sql);
  nsys_err err;
  nsys_profile *p = open_profile(path, &err);
  CHECK(p != NULL);
  if (!p) goto out;
  nsys_task request, other;
  nsys_task_init(&request);
  nsys_task_init(&other);
  sqlite3 *own = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &request);
  CHECK(own != NULL);
  sqlite3 *dbs[2] = {p->db, own};
  for (int i = 0; i < 2 && own; i++) {
    nsys_task_init(&request);
    CHECK(nsys_task_current() == NULL);
    const nsys_task *prev = nsys_task_enter(&request);
    CHECK(nsys_task_current() == &request);
    int64_t n = 0;
    CHECK_EQ(step_once(dbs[i], FINITE, &n), SQLITE_ROW); /* not cancelled: runs to the end */
    CHECK_EQ(n, 200000);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_later, &request) == 0);
    int rc = step_once(dbs[i], ENDLESS, NULL); /* cancelled while it runs */
    pthread_join(th, NULL);
    CHECK_EQ(rc & 0xFF, SQLITE_INTERRUPT);
    nsys_task_init_child(&other, &request); /* a child of a cancelled task reads as cancelled */
    nsys_profile_sql_fail(p, &other, rc, "test");
    CHECK_EQ(other.err, NSYS_E_CANCELLED);
    /* a nested binding of a task that is not cancelled runs; leaving restores */
    nsys_task_init(&other);
    const nsys_task *inner = nsys_task_enter(&other);
    CHECK_EQ(step_once(dbs[i], FINITE, &n), SQLITE_ROW);
    nsys_task_leave(inner);
    CHECK(nsys_task_current() == &request);
    CHECK_EQ(step_once(dbs[i], FINITE, NULL) & 0xFF, SQLITE_INTERRUPT);
    nsys_task_leave(prev);
    CHECK(nsys_task_current() == NULL);
    CHECK_EQ(step_once(dbs[i], FINITE, &n), SQLITE_ROW); /* unbound: the cancelled task is not this thread's */
  }
  /* whole-table counts: from the summary or COUNT(*), equal to SQL's */
  int n = p->schema.n_all_tables;
  int64_t *counts = nsys_xcalloc((size_t)n + 1, sizeof *counts);
  nsys_task_init(&request);
  CHECK(nsys_profile_count_rows(p, &request, (const char *const *)p->schema.all_tables, n, counts));
  for (int i = 0; i < n && own; i++) {
    char *q = nsys_xasprintf("SELECT COUNT(*) FROM \"%s\"", p->schema.all_tables[i]);
    int64_t want = -2;
    CHECK_EQ(step_once(own, q, &want), SQLITE_ROW);
    CHECK_EQ(counts[i], want);
    free(q);
  }
  nsys_task_cancel(&request); /* cancelled: no counts */
  CHECK(!nsys_profile_count_rows(p, &request, (const char *const *)p->schema.all_tables, n, counts));
  CHECK_EQ(request.err, NSYS_E_CANCELLED);
  free(counts);
  if (own) sqlite3_close(own);
  nsys_profile_release(p);
out:
  free(path);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/nsys-ai-test-profile-XXXXXX");
  if (!mkdtemp(tmpdir)) return 2;
  test_modern();
  test_legacy();
  test_hostile();
  test_errors();
  test_change_detection();
  test_wal_read_only();
  test_sql_cancel();
  test_real();
  char *cmd = nsys_xasprintf("rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
  free(cmd);
  return nsys_check_done("profile_loader");
}
