/* Shared by the cache-file fuzz targets (fuzz_index_cache, fuzz_memo_file):
 * a scratch nsys-like export made once per process (two GPUs, several
 * streams, kernels, copies, sets, graph launches, API calls on two threads,
 * nested and overlapping NVTX ranges, clocks past 2^53), the cache directory
 * pointed at a scratch folder, and what a loaded index is put through (every
 * timeline row's buckets and events, the NVTX trees, every analysis and the
 * report), so that a cache file the loader accepts is one every reader can
 * use. */
#ifndef NSYS_FUZZ_CACHE_PROFILE_H
#define NSYS_FUZZ_CACHE_PROFILE_H

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/report_result.h"
#include "common/task.h"
#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "index/nvtx_tree.h"
#include "profile/profile.h"

static char nsys__fz_dir[64];
static char nsys__fz_profile[128];

static void nsys__fz_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "fuzz setup: %s\n  %s\n", err, sql);
    abort();
  }
}

static int nsys__fz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* the scratch folder goes when the fuzzer exits (its time is up) */
static void nsys__fz_cleanup(void) {
  nsys_index_wait_saves();
  nftw(nsys__fz_dir, nsys__fz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* The scratch export; NSYS_AI_CACHE_DIR is a folder of this process. */
static void nsys__fz_make_profile(const char *tag) {
  snprintf(nsys__fz_dir, sizeof nsys__fz_dir, "/tmp/nsys-ai-fuzz-%s-XXXXXX", tag);
  if (!mkdtemp(nsys__fz_dir)) abort();
  atexit(nsys__fz_cleanup);
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", nsys__fz_dir);
  setenv("NSYS_AI_CACHE_DIR", cache, 1);
  snprintf(nsys__fz_profile, sizeof nsys__fz_profile, "%s/p.sqlite", nsys__fz_dir);
  sqlite3 *db = NULL;
  if (sqlite3_open(nsys__fz_profile, &db) != SQLITE_OK) abort();
  nsys__fz_exec(db,
                "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE TABLE META_DATA_EXPORT(name TEXT NOT NULL, value TEXT);"
                "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2026.2.1.210'),"
                " ('EXPORT_SCHEMA_VERSION','3.25.0');"
                "CREATE TABLE ThreadNames(nameId INTEGER, priority INTEGER, globalTid INTEGER);"
                "CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT);"
                "CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER, name TEXT, totalMemory INTEGER,"
                " memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, computeMajor INTEGER,"
                " computeMinor INTEGER, cuDevice INTEGER);"
                "INSERT INTO TARGET_INFO_GPU VALUES(0,0,'NVIDIA H100',85000000000,3350000000000,1980000000,"
                " 132,9,0,0),(0,1,'NVIDIA H100',85000000000,3350000000000,1980000000,132,9,0,1);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
                " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
                " shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER, gridY INTEGER,"
                " gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER,"
                " staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphNodeId INTEGER);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL,"
                " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                " correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL,"
                " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                " correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
                " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
                " returnValue INTEGER, callchainId INTEGER);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INTEGER, end INTEGER, deviceId INTEGER,"
                " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
                " syncType INTEGER, eventId INTEGER);"
                "CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
                " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
                " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);");
  const char *names[] = {"python3", "ampere_sgemm_128x64_nn",
                         "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
                         "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "flash_fwd_kernel", "cudaLaunchKernel_v7000",
                         "cudaMemcpyAsync_v3020", "cudaStreamSynchronize_v3020", "forward", "backward",
                         "step", "optimizer", "cudaGraphLaunch_v10000", "cudaMemsetAsync_v3020"};
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES(?,?)", -1, &st, NULL);
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
    sqlite3_bind_int(st, 1, i);
    sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  /* epoch-like clocks past 2^53 */
  const long long G = 281474976710656LL, PID = 1234, GPID = G + (PID << 24), T0 = 1776781226557295056LL;
  char *sql = nsys_xasprintf("INSERT INTO PROCESSES VALUES(%lld,%lld,'python3');"
                             "INSERT INTO ThreadNames VALUES(0,10,%lld),(10,10,%lld);",
                             GPID, PID, GPID + PID, GPID + PID + 1);
  nsys__fz_exec(db, sql);
  free(sql);
  nsys__fz_exec(db, "BEGIN");
  long long corr = 1, t = T0;
  for (int step = 0; step < 6; step++) {
    long long s0 = t;
    for (int thr = 0; thr < 2; thr++) {
      long long tid = GPID + PID + thr, tt = t + thr * 700;
      for (int k = 0; k < 24; k++, corr++) {
        int dev = (k + thr) % 2, stream = 7 + (k % 3) * 6 + dev, name = 1 + (k * 7 + step) % 4;
        long long launch = tt + k * 3000, ks = launch + 5000 + (k % 5) * 900, ke = ks + 800 + (k * 37 % 11) * 400;
        int api = k % 6 == 5 ? 6 : k % 11 == 3 ? 12 : k % 13 == 7 ? 13 : 5;
        sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(%lld,%lld,0,%lld,%lld,%d,0,NULL);",
                             launch, launch + 1200 + (k % 4) * 300, tid, corr, api);
        nsys__fz_exec(db, sql);
        free(sql);
        if (api == 6)
          sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(%lld,%lld,%d,1,%d,%lld,%lld,%d,%d);",
                               ks, ke, dev, stream, corr, GPID, 4096 << (k % 8), 1 + k % 3);
        else if (api == 13)
          sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(%lld,%lld,%d,1,%d,%lld,%lld,0,%d);",
                               ks, ke, dev, stream, corr, GPID, 65536);
        else
          sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(%lld,%lld,%d,1,%d,%lld,%lld,%d,%d,"
                               "NULL,%d,1,1,%d,1,1,%d,0,%d,%s);",
                               ks, ke, dev, stream, corr, GPID, name, name, 64 + k, 128 << (k % 3), 32 + k % 64,
                               (k % 4) * 1024, api == 12 ? "42" : "NULL");
        nsys__fz_exec(db, sql);
        free(sql);
        if (api == 12) { /* a graph launch: a second kernel of the same call */
          sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(%lld,%lld,%d,1,%d,%lld,%lld,4,4,"
                               "NULL,8,1,1,256,1,1,64,0,0,43);",
                               ke + 100, ke + 2100, dev, stream, corr, GPID);
          nsys__fz_exec(db, sql);
          free(sql);
        }
      }
      long long end = tt + 24 * 3000 + 2000;
      sql = nsys_xasprintf("INSERT INTO NVTX_EVENTS VALUES(%lld,%lld,59,NULL,0,NULL,NULL,%lld,NULL,10,0),"
                           "(%lld,%lld,59,NULL,0,NULL,NULL,%lld,NULL,8,0),"
                           "(%lld,%lld,59,NULL,0,NULL,NULL,%lld,NULL,9,0),"
                           "(%lld,%lld,60,%d,0,NULL,'async',%lld,%lld,NULL,0),"
                           "(%lld,NULL,34,NULL,0,NULL,'mark',%lld,NULL,NULL,0);",
                           tt - 100, end, tid, tt, tt + 36000, tid, tt + 36000, end - 500, tid, tt + 2000,
                           end + 9000, step * 2 + thr, tid, tid, tt + 50, tid);
      nsys__fz_exec(db, sql);
      free(sql);
      sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(%lld,%lld,%d,1,7,%lld,%lld,3,0);",
                           end, end + 3000, thr, corr + 100000, GPID);
      nsys__fz_exec(db, sql);
      free(sql);
    }
    t = s0 + 120000 + step * 7000;
  }
  nsys__fz_exec(db, "COMMIT");
  sqlite3_close(db);
}

static void nsys__fz_collect_event(void *ctx, uint32_t row) { *(uint32_t *)ctx += row & 1; }

/* A loaded index put through its readers. */
static void nsys__fz_use(nsys_profile *p, const nsys_index *ix) {
  uint32_t n = nsys_tl_track_count(ix), sink = 0;
  int64_t s = ix->span_start, e = ix->span_end, w = e > s ? e - s : 1;
  for (uint32_t i = 0; i < n; i++) {
    nsys_tl_bucket_vec v;
    memset(&v, 0, sizeof v);
    (void)nsys_tl_buckets(ix, i, s, w / 97 + 1, 100, nsys_tl_bucket_collect, &v);
    (void)nsys_tl_buckets(ix, i, s + w / 3, w / 5000 + 1, 64, nsys_tl_bucket_collect, &v);
    free(v.b);
    (void)nsys_tl_count(ix, i, s, e);
    (void)nsys_tl_events(ix, i, s + w / 4, s + w / 2, nsys__fz_collect_event, &sink);
  }
  nsys_task task;
  for (int agg = 0; agg < 2; agg++) {
    nsys_task_init(&task);
    nsys_nvtx_filter f;
    memset(&f, 0, sizeof f);
    f.device = -1;
    nsys_nvtx_tree *t = nsys_nvtx_tree_get(ix, &f, agg == 1, &task);
    if (t) nsys_nvtx_tree_release(t);
  }
  nsys_task_init(&task);
  nsys_report *r = nsys_report_build(&task, p, ix);
  nsys_report_free(r);
  static const char *const more[] = {"nvtx_summary", "stage_overlap", "thread_utilization", "memory_transfers"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    nsys_task_init(&task);
    nsys_aresult_free(nsys_analysis_exec(&task, p, ix, more[i], NULL, NULL));
  }
}

/* The whole of a file (malloc'd), or NULL. */
static unsigned char *nsys__fz_slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)(sz > 0 ? sz : 1));
  *n = b ? fread(b, 1, (size_t)(sz > 0 ? sz : 0), f) : 0;
  fclose(f);
  return b;
}

static void nsys__fz_write(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n && fwrite(data, 1, n, f) != n) abort();
  fclose(f);
  chmod(path, 0600);
}

/* Writes the valid file as `name` into the first corpus folder on the
 * command line (libFuzzer's positional arguments), if there is one. */
static void nsys__fz_seed(int argc, char **argv, const char *name, const void *data, size_t n) {
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (argv[i][0] == '-' || stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    char *seed = nsys_xasprintf("%s/%s", argv[i], name);
    nsys__fz_write(seed, data, n);
    free(seed);
    return;
  }
}

/* A writable copy of the input (8 bytes of slack). */
static unsigned char *nsys__fz_copy(const uint8_t *data, size_t size) {
  unsigned char *file = malloc(size + 8);
  if (!file) abort();
  if (size) memcpy(file, data, size);
  return file;
}

#endif
