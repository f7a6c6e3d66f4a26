/* The profile summary (nsys_info): versions, session start, span, row
 * counts, GPUs, devices with their streams, processes with their threads,
 * feature flags. Built once at open, independent of the index.
 *
 * Every table and column is optional (lazy exports, cut exports, failed
 * captures, hostile files): a missing one leaves its part unknown or empty.
 * Definitions (the protocol tests check them with their own SQL):
 *   - counts.*: rows of the kernel/memcpy/memset/runtime/NVTX/sync tables
 *     (NVTX counts every row: ranges, marks and domain/category records).
 *   - span: min(start) .. max(end, start) over the activity tables present
 *     (GPU ops, runtime, sync, graph launches, NVTX, OS runtime, CPU samples);
 *     NULL ends are ignored, negative starts (ranges begun before the capture)
 *     are kept as they are.
 *   - devices: distinct deviceId of kernel/memcpy/memset rows, each with its
 *     distinct streamIds.
 *   - processes: pids of PROCESSES plus those of ThreadNames threads; pid/tid
 *     come from the globalPid/globalTid bits (schema ref §1.3); the thread name
 *     is the last ThreadNames row of that globalTid.
 * The result is cached per file (info_cache.c): bump NSYS__INFO_CACHE_VERSION
 * there when any definition here changes, or users keep the old answers.
 *
 * Speed (a first open scans every activity table): rows reach C as the step
 * of an aggregate SQL function (no result row per row), on private NOMUTEX
 * connections; the host tables are aggregated on a worker thread beside the
 * GPU-table scan; and profile/open runs the whole summary on a worker thread
 * beside the index build (nsys_info_job_*, nsys_profile_open_begin). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"
#include "common/util.h"
#include "profile/loader_internal.h"
#include "common/task.h"

/* ---- small helpers ------------------------------------------------------ */

static char *nsys__text_col(sqlite3_stmt *st, int col) {
  const char *t = (const char *)sqlite3_column_text(st, col);
  if (!t) return NULL;
  size_t n = (size_t)sqlite3_column_bytes(st, col);
  if (n > 4096) n = 4096;
  return nsys_utf8_sanitize(t, n);
}

static bool nsys__has(const nsys_profile *p, nsys_table t, const char *col) {
  return nsys_schema_has_column(p, t, col);
}

static const char *nsys__col(const nsys_profile *p, nsys_table t, const char *col) {
  return nsys__has(p, t, col) ? col : "NULL";
}

/* Runs a statement to completion, calling row() for each row. */
typedef bool (*nsys__row_fn)(nsys_profile *p, sqlite3_stmt *st, void *ctx);

static bool nsys__query(nsys_profile *p, nsys_task *task, const char *sql, const char *what,
                        nsys__row_fn row, void *ctx) {
  sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
  if (!st) return false;
  int rc;
  int64_t n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if ((++n & 0x3FFF) == 0 && nsys_task_cancelled(task)) {
      sqlite3_finalize(st);
      nsys_task_fail_cancelled(task);
      return false;
    }
    if (!row(p, st, ctx)) break;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return nsys_profile_sql_fail(p, task, rc, what);
  return true;
}

/* times clamped as the index clamps them (common/util.h: NSYS_TIME_MIN/MAX) */
static void nsys__span_add(nsys_info *in, int64_t start, int64_t end) {
  start = nsys_time_clamp(start);
  end = nsys_time_clamp(end);
  if (!in->has_span) {
    in->span_start = start;
    in->span_end = end;
    in->has_span = true;
    return;
  }
  if (start < in->span_start) in->span_start = start;
  if (end > in->span_end) in->span_end = end;
}

static void nsys__table_count(nsys_info *in, const char *name, int64_t rows) {
  in->tables = nsys_xrealloc(in->tables, (size_t)(in->n_tables + 1) * sizeof *in->tables);
  in->tables[in->n_tables].name = nsys_xstrdup(name);
  in->tables[in->n_tables].rows = rows;
  in->n_tables++;
}

/* ---- versions, session start, duration ---------------------------------- */

static bool nsys__meta_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  (void)ctx;
  const char *name = (const char *)sqlite3_column_text(st, 0);
  if (!name || sqlite3_column_type(st, 1) == SQLITE_NULL) return true;
  char **slot = NULL;
  if (strcmp(name, "EXPORT_PRODUCT_VERSION") == 0) slot = &p->info.nsys_version;
  else if (strcmp(name, "EXPORT_SCHEMA_VERSION") == 0) slot = &p->info.schema_version;
  if (slot && !*slot) *slot = nsys__text_col(st, 1);
  return true;
}

static bool nsys__first_int_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  (void)p;
  int64_t *out = ctx;
  if (sqlite3_column_type(st, 0) == SQLITE_NULL) return true;
  out[0] = sqlite3_column_int64(st, 0);
  out[1] = 1;
  return false; /* first non-NULL value is enough */
}

static bool nsys__read_scalars(nsys_profile *p, nsys_task *task) {
  char tbl[512], sql[1024];
  if (nsys_profile_table_sql(p, NSYS_TBL_META, tbl, sizeof tbl) &&
      nsys__has(p, NSYS_TBL_META, "name") && nsys__has(p, NSYS_TBL_META, "value")) {
    snprintf(sql, sizeof sql,
             "SELECT name, value FROM %s WHERE name IN "
             "('EXPORT_PRODUCT_VERSION','EXPORT_SCHEMA_VERSION')",
             tbl);
    if (!nsys__query(p, task, sql, "the export metadata", nsys__meta_row, NULL)) return false;
  }
  if (nsys_profile_table_sql(p, NSYS_TBL_SESSION_START, tbl, sizeof tbl) &&
      nsys__has(p, NSYS_TBL_SESSION_START, "utcEpochNs")) {
    int64_t v[2] = {0, 0};
    snprintf(sql, sizeof sql, "SELECT utcEpochNs FROM %s", tbl);
    if (!nsys__query(p, task, sql, "the session start", nsys__first_int_row, v)) return false;
    p->info.utc_epoch_ns = v[0];
    p->info.has_utc_epoch = v[1] != 0;
  }
  if (nsys_profile_table_sql(p, NSYS_TBL_ANALYSIS_DETAILS, tbl, sizeof tbl) &&
      nsys__has(p, NSYS_TBL_ANALYSIS_DETAILS, "duration")) {
    int64_t v[2] = {0, 0};
    snprintf(sql, sizeof sql, "SELECT duration FROM %s", tbl);
    if (!nsys__query(p, task, sql, "the capture duration", nsys__first_int_row, v)) return false;
    if (v[1] && v[0] >= 0) p->info.duration_ns = v[0];
  }
  return true;
}

/* ---- GPUs --------------------------------------------------------------- */

typedef struct {
  bool legacy;   /* TARGET_INFO_CUDA_GPU units: bandwidth kB/s, clock kHz */
  bool cuda_dev; /* TARGET_INFO_CUDA_DEVICE: only ids and SM counts */
} nsys__gpu_ctx;

static bool nsys__gpu_row(nsys_profile *p, sqlite3_stmt *st, void *vctx) {
  const nsys__gpu_ctx *ctx = vctx;
  nsys_info *in = &p->info;
  if (sqlite3_column_type(st, 0) == SQLITE_NULL) return true;
  int64_t id = sqlite3_column_int64(st, 0);
  for (int i = 0; i < in->n_gpus; i++)
    if (in->gpus[i].id == id) return true; /* one entry per GPU (legacy: per process) */
  if (in->n_gpus >= 4096) return false;
  in->gpus = nsys_xrealloc(in->gpus, (size_t)(in->n_gpus + 1) * sizeof *in->gpus);
  nsys_gpu_info *g = &in->gpus[in->n_gpus++];
  memset(g, 0, sizeof *g);
  g->id = id;
  g->name = nsys__text_col(st, 1);
  int64_t sm = sqlite3_column_int64(st, 2);
  g->sm_count = sm > 0 && sm < 1000000 ? (int)sm : 0;
  int64_t mem = sqlite3_column_int64(st, 3);
  g->memory_bytes = mem > 0 ? mem : 0;
  int64_t bw = sqlite3_column_int64(st, 4), clk = sqlite3_column_int64(st, 5);
  /* The pre-2022 table stores kB/s and kHz (A100-PCIE-40GB: 1555200000 and
   * 1410000, i.e. 1.5552 TB/s and 1.41 GHz). */
  if (ctx->legacy) {
    bw = bw > 0 && bw < INT64_MAX / 1000 ? bw * 1000 : 0;
    clk = clk > 0 && clk < INT64_MAX / 1000 ? clk * 1000 : 0;
  }
  g->bandwidth_bytes_per_sec = bw > 0 ? bw : 0;
  g->clock_hz = clk > 0 ? clk : 0;
  int64_t ma = sqlite3_column_int64(st, 6), mi = sqlite3_column_int64(st, 7);
  bool cc_known = sqlite3_column_type(st, 6) != SQLITE_NULL && ma > 0 && ma < 100 && mi >= 0 &&
                  mi < 100;
  g->cc_major = cc_known ? (int)ma : -1;
  g->cc_minor = cc_known ? (int)mi : -1;
  return true;
}

static int nsys__cmp_gpu(const void *a, const void *b) {
  int64_t x = ((const nsys_gpu_info *)a)->id, y = ((const nsys_gpu_info *)b)->id;
  return x < y ? -1 : x > y;
}

static bool nsys__read_gpus(nsys_profile *p, nsys_task *task) {
  char tbl[512], sql[2048];
  nsys__gpu_ctx ctx = {false, false};
  const nsys_table t = NSYS_TBL_GPU_INFO;
  if (nsys_profile_table_sql(p, t, tbl, sizeof tbl)) {
    const char *id = nsys__has(p, t, "id") ? "id" : nsys__col(p, t, "deviceId");
    if (nsys__has(p, t, "id")) {
      snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s, %s, %s, %s FROM %s", id,
               nsys__col(p, t, "name"), nsys__col(p, t, "smCount"), nsys__col(p, t, "totalMemory"),
               nsys__col(p, t, "memoryBandwidth"), nsys__col(p, t, "clockRate"),
               nsys__col(p, t, "computeMajor"), nsys__col(p, t, "computeMinor"), tbl);
    } else {
      /* TARGET_INFO_CUDA_GPU (2021) or the minimal 2021 TARGET_INFO_GPU */
      ctx.legacy = nsys__has(p, t, "coreClockRate") || nsys__has(p, t, "globalMemoryBandwidth");
      snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s, %s, %s, %s FROM %s", id,
               nsys__col(p, t, "name"), nsys__col(p, t, "numMultiprocessors"),
               nsys__col(p, t, "globalMemorySize"), nsys__col(p, t, "globalMemoryBandwidth"),
               nsys__col(p, t, "coreClockRate"), nsys__col(p, t, "computeCapabilityMajor"),
               nsys__col(p, t, "computeCapabilityMinor"), tbl);
    }
    if (!nsys__query(p, task, sql, "the GPU table", nsys__gpu_row, &ctx)) return false;
  } else if (nsys_profile_table_sql(p, NSYS_TBL_CUDA_DEVICE, tbl, sizeof tbl) &&
             nsys__has(p, NSYS_TBL_CUDA_DEVICE, "cudaId")) {
    /* 2026 exports may lack TARGET_INFO_GPU but keep the CUDA device list. */
    ctx.cuda_dev = true;
    snprintf(sql, sizeof sql,
             "SELECT cudaId, NULL, %s, NULL, NULL, NULL, NULL, NULL FROM %s ORDER BY cudaId", 
             nsys__col(p, NSYS_TBL_CUDA_DEVICE, "numMultiprocessors"), tbl);
    if (!nsys__query(p, task, sql, "the CUDA device table", nsys__gpu_row, &ctx)) return false;
  }
  if (p->info.n_gpus > 1)
    qsort(p->info.gpus, (size_t)p->info.n_gpus, sizeof *p->info.gpus, nsys__cmp_gpu);
  return true;
}

/* ---- GPU activity: counts, span, devices/streams, NCCL, graphs ---------- */

typedef struct {
  int64_t dev, stream;
  bool used;
} nsys__pair;

typedef struct {
  nsys__pair *slots;
  size_t cap, n;
} nsys__pairset;

static void nsys__pairset_add(nsys__pairset *s, int64_t dev, int64_t stream);

static void nsys__pairset_grow(nsys__pairset *s) {
  nsys__pairset old = *s;
  s->cap = old.cap ? old.cap * 2 : 64;
  s->slots = nsys_xcalloc(s->cap, sizeof *s->slots);
  s->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.slots[i].used) nsys__pairset_add(s, old.slots[i].dev, old.slots[i].stream);
  free(old.slots);
}

static void nsys__pairset_add(nsys__pairset *s, int64_t dev, int64_t stream) {
  if ((s->n + 1) * 2 > s->cap) nsys__pairset_grow(s);
  uint64_t h = (uint64_t)dev * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)stream + 0x632BE59BD9B4E019ULL);
  h ^= h >> 29;
  size_t i = (size_t)(h & (s->cap - 1));
  while (s->slots[i].used) {
    if (s->slots[i].dev == dev && s->slots[i].stream == stream) return;
    i = (i + 1) & (s->cap - 1);
  }
  s->slots[i].used = true;
  s->slots[i].dev = dev;
  s->slots[i].stream = stream;
  s->n++;
}

typedef struct {
  nsys_profile *p;
  nsys_task *task;
  bool stop, cancelled;
  nsys__pairset *pairs;
  const uint8_t *nccl_dense; /* per dense string id: 1 when it starts with "nccl" */
  int64_t rows;
  int64_t last_dev, last_stream; /* most rows repeat the previous pair */
  bool have_last;
  bool check_nccl, nccl, graphs;
  bool any_time;
  int64_t min_start, max_end;
} nsys__gpu_scan;

static uint8_t *nsys__nccl_flags(const nsys_profile *p) {
  uint8_t *f = nsys_xcalloc((size_t)p->n_strings + 1, 1);
  for (int64_t i = 0; i < p->n_strings; i++)
    f[i] = p->strings[i] && strncasecmp(p->strings[i], "nccl", 4) == 0;
  return f;
}

static bool nsys__is_nccl_id(const nsys_profile *p, const uint8_t *dense, int64_t id) {
  if (id >= 0 && id < p->n_strings) return dense[id] != 0;
  const char *s = nsys_profile_string(p, id);
  return s && strncasecmp(s, "nccl", 4) == 0;
}

/* One row of a GPU table (the 7 values of nsys__gpu_cols): devices and
 * streams, span, NCCL, graphs. Shared by the summary's own scan and by the
 * index build's GPU reader (nsys_info_gpu_acc_row), so both count alike. */
static void nsys__gpu_scan_row(nsys__gpu_scan *sc, sqlite3_value **v) {
  sc->rows++;
  if (sqlite3_value_type(v[0]) != SQLITE_NULL) {
    int64_t stream = sqlite3_value_type(v[1]) == SQLITE_NULL ? -1 : sqlite3_value_int64(v[1]);
    int64_t dev = sqlite3_value_int64(v[0]);
    if (!sc->have_last || dev != sc->last_dev || stream != sc->last_stream) {
      nsys__pairset_add(sc->pairs, dev, stream);
      sc->last_dev = dev;
      sc->last_stream = stream;
      sc->have_last = true;
    }
  }
  if (sqlite3_value_type(v[2]) != SQLITE_NULL) {
    int64_t st = sqlite3_value_int64(v[2]);
    int64_t e = sqlite3_value_type(v[3]) != SQLITE_NULL ? sqlite3_value_int64(v[3]) : st;
    if (e < st) e = st;
    if (!sc->any_time) {
      sc->min_start = st;
      sc->max_end = e;
      sc->any_time = true;
    } else {
      if (st < sc->min_start) sc->min_start = st;
      if (e > sc->max_end) sc->max_end = e;
    }
  }
  if (sc->check_nccl && !sc->nccl && sqlite3_value_type(v[4]) != SQLITE_NULL)
    sc->nccl = nsys__is_nccl_id(sc->p, sc->nccl_dense, sqlite3_value_int64(v[4]));
  if (!sc->graphs && (sqlite3_value_type(v[5]) != SQLITE_NULL || sqlite3_value_type(v[6]) != SQLITE_NULL))
    sc->graphs = true;
}

/* The row as the step of an aggregate function: no result row,
 * sqlite3_step() return or column call per row (about a third less CPU than
 * stepping a SELECT on a 10M-kernel table). */
static void nsys__gpu_scan_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__gpu_scan *sc = sqlite3_user_data(ctx);
  if (argc != NSYS_INFO_GPU_NCOLS || sc->stop) return;
  if (((sc->rows + 1) & 0x3FFF) == 0 && nsys_task_cancelled(sc->task)) {
    sc->stop = sc->cancelled = true;
    sqlite3_result_error(ctx, "cancelled", -1);
    return;
  }
  nsys__gpu_scan_row(sc, v);
}

static void nsys__gpu_scan_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }

/* The scan functions hold a pointer to the caller's stack frame: callable only
 * from top-level SQL (SQLITE_DIRECTONLY), and unregistered after each scan. */
static int nsys__register_scan(sqlite3 *db, const char *name, int nargs, void *ctx,
                               void (*step)(sqlite3_context *, int, sqlite3_value **),
                               void (*final)(sqlite3_context *)) {
  return sqlite3_create_function_v2(db, name, nargs, SQLITE_UTF8 | SQLITE_DIRECTONLY, ctx, NULL, step, final, NULL);
}

static void nsys__unregister_scan(sqlite3 *db, const char *name, int nargs) {
  sqlite3_create_function_v2(db, name, nargs, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, NULL, NULL, NULL, NULL);
}

/* The 7 expressions a GPU-table row is summarised from (nsys__gpu_scan_row):
 * deviceId, streamId, start, end, shortName (kernels), graphNodeId, graphId
 * (kernels); NULL for a column the table lacks. */
void nsys_info_gpu_cols(const nsys_profile *p, nsys_table t, char *buf, size_t cap) {
  bool kernel = t == NSYS_TBL_KERNEL;
  snprintf(buf, cap, "%s, %s, %s, %s, %s, %s, %s", nsys__col(p, t, "deviceId"), nsys__col(p, t, "streamId"),
           nsys__col(p, t, "start"), nsys__col(p, t, "end"), kernel ? nsys__col(p, t, "shortName") : "NULL",
           nsys__col(p, t, "graphNodeId"), kernel ? nsys__col(p, t, "graphId") : "NULL");
}

/* count(*), min(start), max(end), max(start) in one C aggregate step per
 * row instead of four built-in ones. Integer columns only (what nsys
 * writes): a REAL/TEXT/BLOB value sets `other` and the caller reruns the
 * built-in SQL, whose cross-type ordering is then the definition. */
typedef struct {
  nsys_task *task;
  int64_t rows, min_start, max_start, max_end;
  bool any_start, any_end, other, cancelled;
} nsys__span_scan;

static void nsys__span_row(nsys__span_scan *sc, sqlite3_value **v);

/* The GPU tables' part of the summary (kernels, memcpy, memset), gathered by
 * the summary's own scan or by the index build's GPU reader. */
enum { NSYS__GPU_TABLES = 3 };
static const nsys_table nsys__gpu_tables[NSYS__GPU_TABLES] = {NSYS_TBL_KERNEL, NSYS_TBL_MEMCPY,
                                                              NSYS_TBL_MEMSET};

struct nsys_info_acc {
  nsys__pairset pairs;
  uint8_t *nccl; /* per dense string id: starts with "nccl" */
  nsys__gpu_scan sc[NSYS__GPU_TABLES];
  bool present[NSYS__GPU_TABLES]; /* the table exists and was read to its end */
  int cur;                        /* table being read, -1 none */
  bool complete;
  /* the runtime table's count and span, gathered by the index build's host
   * reader (another thread than the GPU reader: fields of their own) */
  nsys__span_scan rt;
  bool rt_complete;
  /* the NVTX table's count and span, gathered by the same host reader (it
   * reads every row of that table); nvtx_pos: where the summary's worker
   * left that table's row in its list of host tables */
  nsys__span_scan nvtx;
  bool nvtx_complete;
  int nvtx_pos;
};

/* init and clear touch only the GPU part (the host reader may be filling rt) */
static void nsys__gpu_acc_init(nsys_info_acc *a, nsys_profile *p, nsys_task *task) {
  memset(&a->pairs, 0, sizeof a->pairs);
  memset(a->present, 0, sizeof a->present);
  a->complete = false;
  a->cur = -1;
  a->nccl = p->schema.table[NSYS_TBL_KERNEL] ? nsys__nccl_flags(p) : NULL;
  for (int i = 0; i < NSYS__GPU_TABLES; i++)
    a->sc[i] = (nsys__gpu_scan){.p = p, .task = task, .pairs = &a->pairs, .nccl_dense = a->nccl,
                                .check_nccl = nsys__gpu_tables[i] == NSYS_TBL_KERNEL};
}

static void nsys__gpu_acc_clear(nsys_info_acc *a) {
  free(a->pairs.slots);
  free(a->nccl);
  memset(&a->pairs, 0, sizeof a->pairs);
  a->nccl = NULL;
  memset(a->sc, 0, sizeof a->sc);
  memset(a->present, 0, sizeof a->present);
  a->complete = false;
  a->cur = -1;
}

static int nsys__gpu_table_slot(nsys_table t) {
  for (int i = 0; i < NSYS__GPU_TABLES; i++)
    if (nsys__gpu_tables[i] == t) return i;
  return -1;
}

static bool nsys__scan_gpu_table(nsys_profile *p, nsys_task *task, nsys_info_acc *a, int slot) {
  nsys_table t = nsys__gpu_tables[slot];
  char tbl[512], cols[512], sql[2048];
  if (!nsys_profile_table_sql(p, t, tbl, sizeof tbl)) return true;
  nsys_info_gpu_cols(p, t, cols, sizeof cols);
  snprintf(sql, sizeof sql, "SELECT nsys_ai_info_gpu(%s) FROM %s", cols, tbl);
  nsys__gpu_scan *sc = &a->sc[slot];
  if (nsys__register_scan(p->db, "nsys_ai_info_gpu", NSYS_INFO_GPU_NCOLS, sc, nsys__gpu_scan_step,
                          nsys__gpu_scan_final) != SQLITE_OK) {
    nsys_task_fail(task, NSYS_E_INTERNAL, "cannot register the scan function: %s", sqlite3_errmsg(p->db));
    return false;
  }
  sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
  int rc = SQLITE_ERROR;
  if (st)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
  if (st && !sc->cancelled && rc != SQLITE_DONE) nsys_profile_sql_fail(p, task, rc, p->schema.table[t]);
  sqlite3_finalize(st);
  nsys__unregister_scan(p->db, "nsys_ai_info_gpu", NSYS_INFO_GPU_NCOLS);
  if (sc->cancelled) nsys_task_fail_cancelled(task);
  if (!st || sc->cancelled || rc != SQLITE_DONE) return false;
  a->present[slot] = true;
  return true;
}

static int nsys__cmp_pair(const void *a, const void *b) {
  const nsys__pair *x = a, *y = b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static void nsys__build_devices(nsys_info *in, nsys__pairset *s) {
  nsys__pair *v = nsys_xcalloc(s->n + 1, sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < s->cap; i++)
    if (s->slots[i].used) v[n++] = s->slots[i];
  qsort(v, n, sizeof *v, nsys__cmp_pair);
  for (size_t i = 0; i < n; i++) {
    if (in->n_devices == 0 || in->devices[in->n_devices - 1].id != v[i].dev) {
      in->devices = nsys_xrealloc(in->devices, (size_t)(in->n_devices + 1) * sizeof *in->devices);
      nsys_device_info *d = &in->devices[in->n_devices++];
      memset(d, 0, sizeof *d);
      d->id = v[i].dev;
    }
    nsys_device_info *d = &in->devices[in->n_devices - 1];
    if (v[i].stream < 0) continue; /* NULL streamId */
    d->streams = nsys_xrealloc(d->streams, (size_t)(d->n_streams + 1) * sizeof *d->streams);
    d->streams[d->n_streams++] = v[i].stream;
  }
  free(v);
}

/* Puts the GPU tables' part into the summary: their rows (first in the table
 * list, in the order kernels, memcpy, memset), span, NCCL and graph flags,
 * devices with their streams. */
static void nsys__tables_insert(nsys_info *in, int pos, const char *name, int64_t rows) {
  in->tables = nsys_xrealloc(in->tables, (size_t)(in->n_tables + 1) * sizeof *in->tables);
  memmove(in->tables + pos + 1, in->tables + pos, (size_t)(in->n_tables - pos) * sizeof *in->tables);
  in->tables[pos].name = nsys_xstrdup(name);
  in->tables[pos].rows = rows;
  in->n_tables++;
}

/* Returns how many table rows it put first. */
static int nsys__gpu_acc_apply(nsys_profile *p, nsys_info_acc *a) {
  nsys_info *in = &p->info;
  int64_t *count[NSYS__GPU_TABLES] = {&in->n_kernels, &in->n_memcpy, &in->n_memset};
  int k = 0;
  for (int i = 0; i < NSYS__GPU_TABLES; i++) {
    const nsys__gpu_scan *sc = &a->sc[i];
    if (!a->present[i]) continue;
    nsys__tables_insert(in, k++, p->schema.table[nsys__gpu_tables[i]], sc->rows);
    *count[i] = sc->rows;
    if (sc->any_time) nsys__span_add(in, sc->min_start, sc->max_end);
    if (sc->check_nccl && sc->nccl) in->f_nccl = true;
    if (sc->graphs) in->f_cuda_graphs = true;
  }
  nsys__build_devices(in, &a->pairs);
  in->f_kernels = in->n_kernels > 0;
  in->f_memcpy = in->n_memcpy > 0;
  in->f_memset = in->n_memset > 0;
  return k;
}

/* ---- the GPU tables' part gathered by the index build -------------------- */

void nsys_info_gpu_acc_begin(nsys_info_acc *a) {
  nsys_profile *p = a->sc[0].p;
  nsys_task *task = a->sc[0].task;
  nsys__gpu_acc_clear(a); /* rows of an earlier, stopped try */
  nsys__gpu_acc_init(a, p, task);
}

bool nsys_info_gpu_acc_table(nsys_info_acc *a, nsys_table t) {
  if (a->cur >= 0) a->present[a->cur] = true; /* the previous one was read to its end */
  a->cur = nsys__gpu_table_slot(t);
  return a->cur >= 0;
}

void nsys_info_gpu_acc_row(nsys_info_acc *a, sqlite3_value **v) {
  if (a->cur >= 0) nsys__gpu_scan_row(&a->sc[a->cur], v);
}

void nsys_info_gpu_acc_complete(nsys_info_acc *a) {
  if (a->cur >= 0) a->present[a->cur] = true;
  a->cur = -1;
  a->complete = true;
}

struct nsys_info_gpu_part {
  nsys__pairset pairs;
  nsys__gpu_scan sc;
};

nsys_info_gpu_part *nsys_info_gpu_part_new(const nsys_info_acc *a) {
  nsys_info_gpu_part *pt = nsys_xcalloc(1, sizeof *pt);
  if (a->cur >= 0) {
    const nsys__gpu_scan *c = &a->sc[a->cur];
    pt->sc = (nsys__gpu_scan){.p = c->p, .task = c->task, .pairs = &pt->pairs, .nccl_dense = c->nccl_dense,
                              .check_nccl = c->check_nccl};
  }
  return pt;
}

void nsys_info_gpu_part_row(nsys_info_gpu_part *pt, sqlite3_value **v) {
  if (pt->sc.pairs) nsys__gpu_scan_row(&pt->sc, v);
}

void nsys_info_gpu_part_merge(nsys_info_acc *a, nsys_info_gpu_part *pt) {
  if (a && a->cur >= 0 && pt->sc.pairs) {
    nsys__gpu_scan *sc = &a->sc[a->cur];
    const nsys__gpu_scan *q = &pt->sc;
    for (size_t i = 0; i < pt->pairs.cap; i++)
      if (pt->pairs.slots[i].used) nsys__pairset_add(sc->pairs, pt->pairs.slots[i].dev, pt->pairs.slots[i].stream);
    sc->have_last = false;
    sc->rows += q->rows;
    if (q->any_time) {
      if (!sc->any_time || q->min_start < sc->min_start) sc->min_start = q->min_start;
      if (!sc->any_time || q->max_end > sc->max_end) sc->max_end = q->max_end;
      sc->any_time = true;
    }
    sc->nccl = sc->nccl || q->nccl;
    sc->graphs = sc->graphs || q->graphs;
  }
  free(pt->pairs.slots);
  free(pt);
}

bool nsys_info_rt_cols(const nsys_profile *p, char *buf, size_t cap) {
  if (!nsys__has(p, NSYS_TBL_RUNTIME, "start")) return false; /* the summary counts it in SQL */
  snprintf(buf, cap, "start, %s", nsys__has(p, NSYS_TBL_RUNTIME, "end") ? "\"end\"" : "NULL");
  return true;
}

void nsys_info_rt_begin(nsys_info_acc *a) {
  memset(&a->rt, 0, sizeof a->rt);
  a->rt_complete = false;
}

void nsys_info_rt_row(nsys_info_acc *a, sqlite3_value **v) { nsys__span_row(&a->rt, v); }

/* a non-integer time: the summary's SQL fallback decides (finish) */
void nsys_info_rt_complete(nsys_info_acc *a) { a->rt_complete = !a->rt.other; }

bool nsys_info_nvtx_gathered(const nsys_profile *p) {
  /* the summary's fast scan reads (start, "end"); without both it counts in SQL */
  return nsys__has(p, NSYS_TBL_NVTX, "start") && nsys__has(p, NSYS_TBL_NVTX, "end");
}

void nsys_info_nvtx_begin(nsys_info_acc *a) {
  memset(&a->nvtx, 0, sizeof a->nvtx);
  a->nvtx_complete = false;
}

void nsys_info_nvtx_row(nsys_info_acc *a, sqlite3_value **v) { nsys__span_row(&a->nvtx, v); }

void nsys_info_nvtx_complete(nsys_info_acc *a) { a->nvtx_complete = !a->nvtx.other; }

/* ---- other activity tables: count + span in one aggregate --------------- */

static bool nsys__agg_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  int64_t *count = ctx;
  *count = sqlite3_column_int64(st, 0);
  if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
    int64_t s = sqlite3_column_int64(st, 1);
    int64_t e = s;
    if (sqlite3_column_type(st, 2) != SQLITE_NULL && sqlite3_column_int64(st, 2) > e)
      e = sqlite3_column_int64(st, 2);
    if (sqlite3_column_type(st, 3) != SQLITE_NULL && sqlite3_column_int64(st, 3) > e)
      e = sqlite3_column_int64(st, 3);
    nsys__span_add(&p->info, s, e);
  }
  return false;
}


/* One row: v[0] start, v[1] end (NULL when the table has none). Shared by
 * the summary's own scan and the index build's host reader (runtime). */
static void nsys__span_row(nsys__span_scan *sc, sqlite3_value **v) {
  if (sc->other) return;
  sc->rows++;
  int ts = sqlite3_value_type(v[0]), te = sqlite3_value_type(v[1]);
  if ((ts != SQLITE_NULL && ts != SQLITE_INTEGER) || (te != SQLITE_NULL && te != SQLITE_INTEGER)) {
    sc->other = true;
    return;
  }
  if (ts == SQLITE_INTEGER) {
    int64_t x = sqlite3_value_int64(v[0]);
    if (!sc->any_start) {
      sc->min_start = sc->max_start = x;
      sc->any_start = true;
    } else {
      if (x < sc->min_start) sc->min_start = x;
      if (x > sc->max_start) sc->max_start = x;
    }
  }
  if (te == SQLITE_INTEGER) {
    int64_t x = sqlite3_value_int64(v[1]);
    if (!sc->any_end || x > sc->max_end) sc->max_end = x;
    sc->any_end = true;
  }
}

static void nsys__span_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__span_scan *sc = sqlite3_user_data(ctx);
  if (argc != 2 || sc->other || sc->cancelled) return;
  if (((sc->rows + 1) & 0x3FFF) == 0 && nsys_task_cancelled(sc->task)) {
    sc->cancelled = true;
    sqlite3_result_error(ctx, "cancelled", -1);
    return;
  }
  nsys__span_row(sc, v);
}

static void nsys__span_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }

/* span: min(start) .. max(end, start) */
static void nsys__span_scan_apply(nsys_info *in, const nsys__span_scan *sc) {
  if (!sc->any_start) return;
  int64_t e = sc->min_start;
  if (sc->any_end && sc->max_end > e) e = sc->max_end;
  if (sc->max_start > e) e = sc->max_start;
  nsys__span_add(in, sc->min_start, e);
}

/* true: answered (or failed, with *ok false); false: fall back to SQL. */
static bool nsys__aggregate_fast(nsys_profile *p, nsys_task *task, const char *tbl, nsys_table t,
                                 bool has_end, int64_t *count, bool *ok) {
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT nsys_ai_info_span(start, %s) FROM %s", has_end ? "\"end\"" : "NULL", tbl);
  nsys__span_scan sc = {.task = task};
  if (nsys__register_scan(p->db, "nsys_ai_info_span", 2, &sc, nsys__span_step, nsys__span_final) != SQLITE_OK)
    return false;
  sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
  if (!st) {
    nsys__unregister_scan(p->db, "nsys_ai_info_span", 2);
    *ok = false;
    return true;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
  *ok = true;
  if (sc.cancelled) {
    nsys_task_fail_cancelled(task);
    *ok = false;
  } else if (rc != SQLITE_DONE) {
    nsys_profile_sql_fail(p, task, rc, p->schema.table[t]);
    *ok = false;
  }
  sqlite3_finalize(st);
  nsys__unregister_scan(p->db, "nsys_ai_info_span", 2);
  if (!*ok) return true;
  if (sc.other) return false;
  *count = sc.rows;
  nsys__span_scan_apply(&p->info, &sc);
  return true;
}

static bool nsys__aggregate(nsys_profile *p, nsys_task *task, nsys_table t, bool span,
                            int64_t *count) {
  char tbl[512], sql[1024];
  *count = 0;
  if (!nsys_profile_table_sql(p, t, tbl, sizeof tbl)) return true;
  bool has_start = span && nsys__has(p, t, "start");
  bool has_end = span && nsys__has(p, t, "end");
  bool ok = true;
  if (has_start && nsys__aggregate_fast(p, task, tbl, t, has_end, count, &ok)) {
    if (!ok) return false;
  } else {
    snprintf(sql, sizeof sql, "SELECT count(*), %s, %s, %s FROM %s",
             has_start ? "min(start)" : "NULL", has_end ? "max(end)" : "NULL",
             has_start ? "max(start)" : "NULL", tbl);
    if (!nsys__query(p, task, sql, p->schema.table[t], nsys__agg_row, count)) return false;
  }
  nsys__table_count(&p->info, p->schema.table[t], *count);
  return true;
}

static bool nsys__any_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  (void)p;
  (void)st;
  *(bool *)ctx = true;
  return false;
}

static bool nsys__not_empty(nsys_profile *p, nsys_task *task, nsys_table t, bool *out) {
  char tbl[512], sql[600];
  *out = false;
  if (!nsys_profile_table_sql(p, t, tbl, sizeof tbl)) return true;
  snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 1", tbl);
  return nsys__query(p, task, sql, p->schema.table[t], nsys__any_row, out);
}

/* ---- processes and threads ---------------------------------------------- */

typedef struct {
  uint32_t pid, tid;
  int64_t seq;
  char *name;
} nsys__named;

typedef struct {
  nsys__named *v;
  size_t n, cap;
  int64_t seq;
  bool threads;
} nsys__named_vec;

static void nsys__named_push(nsys__named_vec *vec, uint32_t pid, uint32_t tid, char *name) {
  if (vec->n == vec->cap) {
    vec->cap = vec->cap ? vec->cap * 2 : 64;
    vec->v = nsys_xrealloc(vec->v, vec->cap * sizeof *vec->v);
  }
  vec->v[vec->n++] = (nsys__named){pid, tid, vec->seq++, name};
}

static bool nsys__process_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  (void)p;
  nsys__named_vec *vec = ctx;
  uint32_t pid;
  if (sqlite3_column_type(st, 0) != SQLITE_NULL) pid = nsys_gtid_pid(sqlite3_column_int64(st, 0));
  else if (sqlite3_column_type(st, 1) != SQLITE_NULL)
    pid = (uint32_t)(sqlite3_column_int64(st, 1) & 0xFFFFFF);
  else return true;
  nsys__named_push(vec, pid, 0, nsys__text_col(st, 2));
  return vec->n < 10000000;
}

static bool nsys__thread_row(nsys_profile *p, sqlite3_stmt *st, void *ctx) {
  nsys__named_vec *vec = ctx;
  if (sqlite3_column_type(st, 0) == SQLITE_NULL) return true;
  int64_t g = sqlite3_column_int64(st, 0);
  const char *name = NULL;
  if (sqlite3_column_type(st, 1) != SQLITE_NULL)
    name = nsys_profile_string(p, sqlite3_column_int64(st, 1));
  nsys__named_push(vec, nsys_gtid_pid(g), nsys_gtid_tid(g), name ? nsys_xstrdup(name) : NULL);
  return vec->n < 10000000;
}

/* Sort by (pid, tid, seq): the last row of each key wins. */
static int nsys__cmp_named(const void *a, const void *b) {
  const nsys__named *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keeps one entry per key: the last row's name, or the latest non-NULL one. */
static void nsys__named_unique(nsys__named_vec *vec) {
  if (vec->n > 1) qsort(vec->v, vec->n, sizeof *vec->v, nsys__cmp_named);
  size_t w = 0;
  for (size_t i = 0; i < vec->n; i++) {
    if (w > 0 && vec->v[w - 1].pid == vec->v[i].pid && vec->v[w - 1].tid == vec->v[i].tid) {
      if (vec->v[i].name) {
        free(vec->v[w - 1].name);
        vec->v[w - 1].name = vec->v[i].name;
      }
      continue;
    }
    vec->v[w++] = vec->v[i];
  }
  vec->n = w;
}

static nsys_process_info *nsys__proc_slot(nsys_info *in, uint32_t pid) {
  if (in->n_processes && in->processes[in->n_processes - 1].pid == pid)
    return &in->processes[in->n_processes - 1];
  in->processes =
      nsys_xrealloc(in->processes, (size_t)(in->n_processes + 1) * sizeof *in->processes);
  nsys_process_info *pr = &in->processes[in->n_processes++];
  memset(pr, 0, sizeof *pr);
  pr->pid = pid;
  return pr;
}

static bool nsys__read_processes(nsys_profile *p, nsys_task *task) {
  char tbl[512], sql[1024];
  nsys__named_vec procs = {0}, threads = {0};
  bool ok = true;
  const nsys_table tp = NSYS_TBL_PROCESSES, tt = NSYS_TBL_THREAD_NAMES;
  if (nsys_profile_table_sql(p, tp, tbl, sizeof tbl)) {
    snprintf(sql, sizeof sql, "SELECT %s, %s, %s FROM %s", nsys__col(p, tp, "globalPid"),
             nsys__col(p, tp, "pid"), nsys__col(p, tp, "name"), tbl);
    ok = nsys__query(p, task, sql, "PROCESSES", nsys__process_row, &procs);
  }
  if (ok && nsys_profile_table_sql(p, tt, tbl, sizeof tbl) && nsys__has(p, tt, "globalTid")) {
    snprintf(sql, sizeof sql, "SELECT globalTid, %s FROM %s", nsys__col(p, tt, "nameId"), tbl);
    ok = nsys__query(p, task, sql, "ThreadNames", nsys__thread_row, &threads);
  }
  if (ok) {
    nsys__named_unique(&procs);
    nsys__named_unique(&threads);
    /* merge the two sorted lists by pid */
    nsys_info *in = &p->info;
    size_t i = 0, j = 0;
    while (i < procs.n || j < threads.n) {
      uint32_t pid = i < procs.n && (j >= threads.n || procs.v[i].pid <= threads.v[j].pid)
                         ? procs.v[i].pid
                         : threads.v[j].pid;
      nsys_process_info *pr = nsys__proc_slot(in, pid);
      if (i < procs.n && procs.v[i].pid == pid) {
        pr->name = procs.v[i].name;
        procs.v[i].name = NULL;
        i++;
        continue;
      }
      pr->threads = nsys_xrealloc(pr->threads, (size_t)(pr->n_threads + 1) * sizeof *pr->threads);
      pr->threads[pr->n_threads].tid = threads.v[j].tid;
      pr->threads[pr->n_threads].name = threads.v[j].name;
      threads.v[j].name = NULL;
      pr->n_threads++;
      j++;
    }
  }
  for (size_t k = 0; k < procs.n; k++) free(procs.v[k].name);
  for (size_t k = 0; k < threads.n; k++) free(threads.v[k].name);
  free(procs.v);
  free(threads.v);
  return ok;
}

/* ---- putting it together ------------------------------------------------ */

/* ---- host tables: counts and span, on a second connection ---------------- */

/* The host-side aggregates (runtime, sync, graph launches, CUDA events, NVTX,
 * OS runtime, CPU samples) are independent of the GPU-table scan, so they run
 * beside it on a worker thread, each side on its own read-only NOMUTEX
 * connection. The worker reads a shadow copy of the profile (same schema,
 * its own db and info) and records errors on a child task (cancelled with the
 * caller's); the caller merges counts, span and table rows in the fixed order
 * afterwards. */
typedef struct {
  nsys_profile shadow;
  nsys_task wt;
  bool ok;
  int64_t ns;
} nsys__host_job;

/* fused non-NULL: the runtime and NVTX tables are left to the index
 * build's host reader (nsys_info_rt_*, nsys_info_nvtx_*); *nvtx_pos is where
 * the NVTX table's row goes in this list */
static bool nsys__read_host_tables(nsys_profile *p, nsys_task *task, int *fused_nvtx_pos) {
  nsys_info *in = &p->info;
  bool fused = fused_nvtx_pos != NULL;
  if (!((fused || nsys__aggregate(p, task, NSYS_TBL_RUNTIME, true, &in->n_runtime)) &&
        nsys__aggregate(p, task, NSYS_TBL_SYNC, true, &in->n_syncs) &&
        nsys__aggregate(p, task, NSYS_TBL_GRAPH_TRACE, true, &in->n_graph_launches) &&
        nsys__aggregate(p, task, NSYS_TBL_CUDA_EVENT, false, &in->n_cuda_events)))
    return false;
  if (fused) *fused_nvtx_pos = in->n_tables;
  return (fused || nsys__aggregate(p, task, NSYS_TBL_NVTX, true, &in->n_nvtx)) &&
         nsys__aggregate(p, task, NSYS_TBL_OSRT, true, &in->n_osrt) &&
         nsys__aggregate(p, task, NSYS_TBL_SAMPLING, true, &in->n_cpu_samples);
}

static void *nsys__host_worker(void *arg) {
  nsys__host_job *j = arg;
  const nsys_task *prev = nsys_task_enter(&j->wt); /* the connection's progress handler reads it */
  int64_t t0 = nsys_now_ns();
  j->ok = nsys__read_host_tables(&j->shadow, &j->wt, NULL);
  j->ns = nsys_now_ns() - t0;
  nsys_task_leave(prev);
  return NULL;
}

static bool nsys__host_start(nsys_profile *p, nsys_task *task, nsys__host_job *j, pthread_t *th) {
  memset(j, 0, sizeof *j);
  nsys_task_init_child(&j->wt, task);
  sqlite3 *db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &j->wt);
  if (!db) return false; /* the caller scans inline instead: the reason is not an error */
  memcpy(&j->shadow, p, sizeof *p); /* schema and strings shared read-only */
  j->shadow.db = db;
  memset(&j->shadow.info, 0, sizeof j->shadow.info);
  if (pthread_create(th, NULL, nsys__host_worker, j) != 0) {
    sqlite3_close(db);
    return false;
  }
  return true;
}

/* Joins the worker and merges its part into p->info; on failure records the
 * error on task unless `ok` is already false (the caller's error wins). */
static bool nsys__host_finish(nsys_profile *p, nsys_task *task, nsys__host_job *j, pthread_t th,
                              bool ok) {
  pthread_join(th, NULL);
  sqlite3_close(j->shadow.db);
  nsys_info *in = &p->info, *h = &j->shadow.info;
  if (ok && !j->ok) {
    if (nsys_task_cancelled(&j->wt)) nsys_task_fail_cancelled(task);
    else nsys_task_fail_from(task, &j->wt);
    ok = false;
  }
  if (ok) {
    in->n_runtime = h->n_runtime;
    in->n_syncs = h->n_syncs;
    in->n_graph_launches = h->n_graph_launches;
    in->n_cuda_events = h->n_cuda_events;
    in->n_nvtx = h->n_nvtx;
    in->n_osrt = h->n_osrt;
    in->n_cpu_samples = h->n_cpu_samples;
    if (h->has_span) nsys__span_add(in, h->span_start, h->span_end);
    for (int i = 0; i < h->n_tables; i++) {
      nsys__table_count(in, h->tables[i].name, h->tables[i].rows);
    }
  }
  nsys_info_free(h);
  return ok;
}

static bool nsys__info_build(nsys_profile *p, nsys_task *task, int *fused_nvtx_pos);

/* p->db replaced by a private NOMUTEX connection (kept as it is when none
 * opens: the scans then use the shared one); returns the shared one for
 * nsys__restore_db. */
static sqlite3 *nsys__use_own_db(nsys_profile *p) {
  sqlite3 *shared = p->db;
  nsys_task opening; /* its failure is tolerated */
  nsys_task_init(&opening);
  sqlite3 *own = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &opening);
  if (own) p->db = own;
  return shared;
}

static void nsys__restore_db(nsys_profile *p, sqlite3 *shared) {
  if (p->db != shared) sqlite3_close(p->db);
  p->db = shared;
}

/* The scans run on private NOMUTEX connections: the profile's own handle is
 * FULLMUTEX, which takes a lock in every sqlite3_column_*() call (a third of
 * the scan's CPU). `p` is not published yet (or is a job's shadow copy), so
 * nothing else reads p->db meanwhile. The calling thread must have `task`
 * bound (nsys_task_enter) for a cancellation to interrupt a statement.
 * fused_nvtx_pos non-NULL: everything but what the index build's readers
 * gather (the GPU tables' part, nsys__gpu_acc_apply; the runtime and NVTX
 * tables' counts and spans, nsys__host_part_apply). */
static bool nsys__info_build_own(nsys_profile *p, nsys_task *task, int *fused_nvtx_pos) {
  sqlite3 *shared = nsys__use_own_db(p);
  bool ok = nsys__info_build(p, task, fused_nvtx_pos); /* error messages are copied out of the connection */
  nsys__restore_db(p, shared);
  return ok;
}

bool nsys_info_build(nsys_profile *p, nsys_task *task) { return nsys__info_build_own(p, task, NULL); }

/* ---- the summary beside the index build (nsys_profile_open_begin) -------- */

/* With `acc` (nsys_profile_open_begin_indexed), the job leaves out the GPU
 * tables: the index build's GPU reader reads them anyway and summarises
 * each row as it goes (p->info_acc), so the cold open scans them once. The
 * job then aggregates the host tables alone, on one thread. finish applies
 * the reader's part, or scans the GPU tables itself when the reader did not
 * read them to their end (index from the cache, build failed or stopped). */
struct nsys_info_job {
  pthread_t th;
  nsys_profile shadow; /* p's schema, strings and paths (read-only), own info */
  nsys_task wt;        /* child of the request's task: cancelled with it; own errors, no progress */
  nsys_info_acc *acc; /* NULL: the job scans the GPU tables itself */
  bool ok;
  int64_t ns;
};

static void *nsys__info_job_main(void *arg) {
  nsys_info_job *j = arg;
  const nsys_task *prev = nsys_task_enter(&j->wt);
  int64_t t0 = nsys_now_ns();
  j->ok = nsys__info_build_own(&j->shadow, &j->wt, j->acc ? &j->acc->nvtx_pos : NULL);
  j->ns = nsys_now_ns() - t0;
  nsys_task_leave(prev);
  return NULL;
}

nsys_info_job *nsys_info_job_start(nsys_profile *p, nsys_task *task, bool gpu_from_index) {
  nsys_info_job *j = nsys_xcalloc(1, sizeof *j);
  memcpy(&j->shadow, p, sizeof *p);
  memset(&j->shadow.info, 0, sizeof j->shadow.info);
  j->shadow.info_job = NULL;
  j->shadow.info_acc = NULL;
  nsys_task_init_child(&j->wt, task);
  if (gpu_from_index) {
    j->acc = nsys_xcalloc(1, sizeof *j->acc);
    nsys__gpu_acc_init(j->acc, p, task);
  }
  if (pthread_create(&j->th, NULL, nsys__info_job_main, j) != 0) {
    if (j->acc) nsys__gpu_acc_clear(j->acc);
    free(j->acc);
    free(j);
    return NULL;
  }
  p->info_acc = j->acc;
  return j;
}

static void nsys__info_job_free(nsys_info_job *j) {
  if (j->acc) nsys__gpu_acc_clear(j->acc);
  free(j->acc);
  free(j);
}

/* The GPU tables' part scanned here (the index build did not gather it). */
static bool nsys__gpu_part_scan(nsys_profile *p, nsys_task *task, nsys_info_acc *a) {
  sqlite3 *shared = nsys__use_own_db(p);
  nsys__gpu_acc_clear(a);
  nsys__gpu_acc_init(a, p, task);
  bool ok = true;
  for (int i = 0; ok && i < NSYS__GPU_TABLES; i++) ok = nsys__scan_gpu_table(p, task, a, i);
  nsys__restore_db(p, shared);
  return ok;
}

/* A host table's count and span gathered by the index build's host reader
 * (runtime, NVTX): its row goes at `pos` of the table list. */
static void nsys__host_part_apply(nsys_profile *p, nsys_table t, int64_t *count, const nsys__span_scan *sc,
                                  int pos) {
  if (!p->schema.table[t]) return;
  nsys__tables_insert(&p->info, pos, p->schema.table[t], sc->rows);
  *count = sc->rows;
  nsys__span_scan_apply(&p->info, sc);
}

/* The same table aggregated here (the index build did not, or met a
 * non-integer time: then the built-in SQL), into a scratch summary. `count`
 * is a field of p->info. */
static bool nsys__host_part_scan(nsys_profile *p, nsys_task *task, nsys_table t, int64_t *count, int pos) {
  nsys_info kept = p->info;
  memset(&p->info, 0, sizeof p->info);
  sqlite3 *shared = nsys__use_own_db(p);
  int64_t n = 0;
  bool ok = nsys__aggregate(p, task, t, true, &n);
  nsys__restore_db(p, shared);
  nsys_info part = p->info;
  p->info = kept;
  if (ok) {
    *count = n;
    if (part.has_span) nsys__span_add(&p->info, part.span_start, part.span_end);
    if (part.n_tables == 1) nsys__tables_insert(&p->info, pos, part.tables[0].name, part.tables[0].rows);
  }
  nsys_info_free(&part);
  return ok;
}

static bool nsys__host_part(nsys_profile *p, nsys_task *task, nsys_table t, int64_t *count,
                            const nsys__span_scan *sc, bool gathered, int pos) {
  if (!gathered) return nsys__host_part_scan(p, task, t, count, pos);
  nsys__host_part_apply(p, t, count, sc, pos);
  return true;
}

bool nsys_info_job_finish(nsys_info_job *j, nsys_profile *p, nsys_task *task, int64_t *ns) {
  pthread_join(j->th, NULL);
  p->info_acc = NULL;
  bool ok = j->ok;
  if (ns) *ns = j->ns;
  if (ok) {
    nsys_info_free(&p->info);
    p->info = j->shadow.info;
    if (j->acc) {
      nsys_info_acc *a = j->acc;
      bool from_index = a->complete, rt_from_index = a->rt_complete, nvtx_from_index = a->nvtx_complete;
      /* the worker's list holds the host tables after the runtime one: the
       * NVTX row goes in first, then the GPU tables' rows and the runtime
       * one in front of them all */
      ok = nsys__host_part(p, task, NSYS_TBL_NVTX, &p->info.n_nvtx, &a->nvtx, nvtx_from_index, a->nvtx_pos);
      p->info.f_nvtx = p->info.n_nvtx > 0;
      if (ok && !from_index) ok = nsys__gpu_part_scan(p, task, a);
      int n_gpu = ok ? nsys__gpu_acc_apply(p, a) : 0;
      if (ok) ok = nsys__host_part(p, task, NSYS_TBL_RUNTIME, &p->info.n_runtime, &a->rt, rt_from_index, n_gpu);
      if (getenv("NSYS_AI_VERBOSE"))
        nsys_log("info: the GPU tables' part %s, the runtime table's %s, the NVTX table's %s",
                 from_index ? "read by the index build" : "scanned after it",
                 rt_from_index ? "read by the index build" : "scanned after it",
                 nvtx_from_index ? "read by the index build" : "scanned after it");
    }
  } else {
    if (nsys_task_cancelled(&j->wt) || nsys_task_cancelled(task)) nsys_task_fail_cancelled(task);
    else nsys_task_fail_from(task, &j->wt);
    nsys_info_free(&j->shadow.info);
  }
  nsys__info_job_free(j);
  return ok;
}

void nsys_info_job_discard(nsys_info_job *j) {
  if (!j) return;
  pthread_join(j->th, NULL);
  nsys_info_free(&j->shadow.info);
  nsys__info_job_free(j);
}

static bool nsys__info_build(nsys_profile *p, nsys_task *task, int *fused_nvtx_pos) {
  bool gpu = fused_nvtx_pos == NULL;
  nsys_info *in = &p->info;
  in->duration_ns = -1;
  if (!nsys__read_scalars(p, task)) return false;
  if (!nsys__read_gpus(p, task)) return false;
  nsys_task_progress(task, 10, "GPU activity");
  int64_t t_gpu = nsys_now_ns();

  /* host tables beside the GPU scan (inline when no thread or connection,
   * or when there is no GPU scan here) */
  nsys__host_job job;
  pthread_t th;
  bool threaded = gpu && !getenv("NSYS_AI_INFO_SERIAL") && nsys__host_start(p, task, &job, &th);

  bool ok = true;
  if (gpu) {
    nsys_info_acc acc;
    memset(&acc, 0, sizeof acc);
    nsys__gpu_acc_init(&acc, p, task);
    for (int i = 0; ok && i < NSYS__GPU_TABLES; i++) {
      ok = nsys__scan_gpu_table(p, task, &acc, i);
      nsys_task_progress(task, 30, "GPU activity");
    }
    if (ok) nsys__gpu_acc_apply(p, &acc);
    nsys__gpu_acc_clear(&acc);
  }

  nsys_task_progress(task, 45, "API calls and NVTX");
  int64_t t_host = nsys_now_ns();
  if (threaded) ok = nsys__host_finish(p, task, &job, th, ok);
  else ok = ok && nsys__read_host_tables(p, task, fused_nvtx_pos);
  if (!ok) return false;
  int64_t t_rest = nsys_now_ns();

  bool graph_events = false, node_events = false;
  if (!nsys__not_empty(p, task, NSYS_TBL_CUDA_GRAPH_EVENTS, &graph_events)) return false;
  if (!nsys__not_empty(p, task, NSYS_TBL_CUDA_GRAPH_NODE_EVENTS, &node_events)) return false;
  if (!nsys__not_empty(p, task, NSYS_TBL_CALLCHAINS, &in->f_cuda_callchains)) return false;

  in->f_nvtx = in->n_nvtx > 0;
  in->f_osrt = in->n_osrt > 0;
  in->f_cpu_sampling = in->n_cpu_samples > 0;
  if (in->n_graph_launches > 0 || graph_events || node_events) in->f_cuda_graphs = true;

  nsys_task_progress(task, 85, "processes");
  if (!nsys__read_processes(p, task)) return false;
  if (getenv("NSYS_AI_VERBOSE"))
    nsys_log("info: GPU tables %.1f ms, host tables %.1f ms (%s, %.1f ms after the GPU tables), rest %.1f ms",
             (double)(t_host - t_gpu) / 1e6, threaded ? (double)job.ns / 1e6 : (double)(t_rest - t_host) / 1e6,
             threaded ? "beside them" : gpu ? "after them" : "GPU tables read by the index build",
             (double)(t_rest - t_host) / 1e6, (double)(nsys_now_ns() - t_rest) / 1e6);
  if (!in->has_span) in->span_start = in->span_end = 0;
  return true;
}

void nsys_info_free(nsys_info *in) {
  free(in->nsys_version);
  free(in->schema_version);
  for (int i = 0; i < in->n_gpus; i++) free(in->gpus[i].name);
  free(in->gpus);
  for (int i = 0; i < in->n_devices; i++) free(in->devices[i].streams);
  free(in->devices);
  for (int i = 0; i < in->n_processes; i++) {
    for (int k = 0; k < in->processes[i].n_threads; k++) free(in->processes[i].threads[k].name);
    free(in->processes[i].threads);
    free(in->processes[i].name);
  }
  free(in->processes);
  for (int i = 0; i < in->n_tables; i++) free(in->tables[i].name);
  free(in->tables);
  memset(in, 0, sizeof *in);
}
