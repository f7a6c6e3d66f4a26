/* Cold build of the index from the SQLite export.
 *
 * Two readers run at once, each on its own read-only connection: a worker
 * thread reads the GPU op tables (kernels, memcpy, memset, graph launches) while the calling
 * thread reads CUDA API calls, NVTX ranges and thread names and reports
 * progress. Rows reach C through an aggregate SQL function called once per
 * row (no sqlite3_step round trip and no API call per column); names are
 * interned through a StringIds-id -> strtab-id array. Then:
 *   - ops are grouped by track (device, stream, process) with a counting sort
 *     and sorted by (start, end, kind, rowid) inside each track, so an op's
 *     index is a deterministic kernelId;
 *   - API calls and NVTX ranges are grouped by thread the same way;
 *   - each op is joined to its API call on (globalPid, correlationId) through
 *     a hash map (never correlationId alone: ids repeat across processes);
 *   - NVTX depth/parent come from a containment stack per thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index_internal.h"
#include "profile/profile.h"
#include "rpc/call.h"

/* ---- raw rows in source order ------------------------------------------ */

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid, *corr;
  uint32_t *tgroup;        /* temporary track id (see nsys__track_tmp) */
  uint32_t *name, *full;
  uint8_t *kind;
} nsys__raw_ops;

/* a GPU track: (deviceId, streamId, globalPid) */
typedef struct {
  int32_t device;
  int64_t stream;
  int64_t gpid;
  uint32_t tmp;
} nsys__track_key;

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid, *corr;
  uint32_t *thread, *name; /* thread: temporary thread id */
} nsys__raw_api;

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid;
  uint32_t *thread, *name, *dom; /* dom: index into domain keys */
} nsys__raw_nvtx;

#define NSYS__GROW(arr, cap) (arr) = nsys_xrealloc((arr), (size_t)(cap) * sizeof *(arr))

/* Large arrays (the row and index columns, megabytes each) are 2 MiB aligned
 * and marked for transparent huge pages: their first touch then costs one
 * page fault per 2 MiB instead of one per 4 KiB (the build's system time was
 * mostly those faults), and the gathers' random reads miss the TLB less.
 * Plain malloc'd memory: free() releases it. */
#define NSYS__HUGE ((size_t)2 << 20)

static void *nsys__big_alloc(size_t bytes) {
  if (bytes < NSYS__HUGE) return nsys_xmalloc(bytes);
  void *p = NULL;
  if (posix_memalign(&p, NSYS__HUGE, bytes) != 0) return nsys_xmalloc(bytes);
#ifdef MADV_HUGEPAGE
  if (!getenv("NSYS_AI_INDEX_NO_HUGEPAGES")) madvise(p, bytes & ~(NSYS__HUGE - 1), MADV_HUGEPAGE);
#endif
  return p;
}

/* realloc for large arrays: keeps the first old_bytes */
static void *nsys__big_realloc(void *old, size_t old_bytes, size_t bytes) {
  if (bytes < NSYS__HUGE) return nsys_xrealloc(old, bytes);
  void *p = nsys__big_alloc(bytes);
  if (old) {
    memcpy(p, old, old_bytes < bytes ? old_bytes : bytes);
    free(old);
  }
  return p;
}

#define NSYS__BIG_GROW(arr, old_cap, cap) \
  (arr) = nsys__big_realloc((arr), (size_t)(old_cap) * sizeof *(arr), (size_t)(cap) * sizeof *(arr))

static void nsys__raw_ops_reserve(nsys__raw_ops *r, uint32_t want) {
  if (want <= r->cap) return;
  uint32_t cap = r->cap ? r->cap : 1024;
  while (cap < want) cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
  uint32_t oc = r->n; /* only the rows read so far need copying */
  NSYS__BIG_GROW(r->start, oc, cap); NSYS__BIG_GROW(r->end, oc, cap); NSYS__BIG_GROW(r->rowid, oc, cap);
  NSYS__BIG_GROW(r->corr, oc, cap); NSYS__BIG_GROW(r->tgroup, oc, cap); NSYS__BIG_GROW(r->name, oc, cap);
  NSYS__BIG_GROW(r->full, oc, cap);
  NSYS__BIG_GROW(r->kind, oc, cap);
  r->cap = cap;
}

static void nsys__raw_ops_free(nsys__raw_ops *r) {
  free(r->start); free(r->end); free(r->rowid); free(r->corr); free(r->tgroup);
  free(r->name); free(r->full); free(r->kind);
  memset(r, 0, sizeof *r);
}

static void nsys__raw_api_reserve(nsys__raw_api *r, uint32_t want) {
  if (want <= r->cap) return;
  uint32_t cap = r->cap ? r->cap : 1024;
  while (cap < want) cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
  uint32_t oc = r->n;
  NSYS__BIG_GROW(r->start, oc, cap); NSYS__BIG_GROW(r->end, oc, cap); NSYS__BIG_GROW(r->rowid, oc, cap);
  NSYS__BIG_GROW(r->corr, oc, cap); NSYS__BIG_GROW(r->thread, oc, cap); NSYS__BIG_GROW(r->name, oc, cap);
  r->cap = cap;
}

static void nsys__raw_api_free(nsys__raw_api *r) {
  free(r->start); free(r->end); free(r->rowid); free(r->corr); free(r->thread); free(r->name);
  memset(r, 0, sizeof *r);
}

static void nsys__raw_nvtx_reserve(nsys__raw_nvtx *r, uint32_t want) {
  if (want <= r->cap) return;
  uint32_t cap = r->cap ? r->cap : 1024;
  while (cap < want) cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
  uint32_t oc = r->n;
  NSYS__BIG_GROW(r->start, oc, cap); NSYS__BIG_GROW(r->end, oc, cap); NSYS__BIG_GROW(r->rowid, oc, cap);
  NSYS__BIG_GROW(r->thread, oc, cap); NSYS__BIG_GROW(r->name, oc, cap); NSYS__BIG_GROW(r->dom, oc, cap);
  r->cap = cap;
}

static void nsys__raw_nvtx_free(nsys__raw_nvtx *r) {
  free(r->start); free(r->end); free(r->rowid); free(r->thread); free(r->name); free(r->dom);
  memset(r, 0, sizeof *r);
}

/* ---- shared build state ------------------------------------------------- */

typedef struct {
  nsys_profile *p;
  nsys_call *call;
  nsys_index *ix;            /* the worker fills tracks and ops, the caller the rest */
  nsys__strings strings;
  atomic_llong rows_done;
  int64_t rows_total;
  atomic_int stop;           /* set on cancel or error */
  /* GPU reader (worker thread) */
  nsys__raw_ops ops;
  nsys_strtab op_strings;    /* worker-local, merged afterwards */
  char op_err[256];
  bool op_failed;
  atomic_int op_done;
  /* The host reader's connection, handed to the GPU reader to close once that
   * one is done (closing unmaps the file: milliseconds that then overlap the
   * host's join and derivation); NSYS__HANDOFF_NONE: nothing to close. */
  pthread_mutex_t handoff_mu;
  pthread_cond_t handoff_cv;
  sqlite3 *host_db;
  /* GPU tracks seen by the reader: (device, stream, gpid) -> temporary id */
  nsys__track_key *tk_keys; uint32_t n_tk, cap_tk;
  uint32_t *tk_hv; uint32_t tk_hcap; /* open addressing: temporary id + 1 */
  uint32_t tk_last;                  /* last id returned, UINT32_MAX at first */
  int64_t *track_gpid;       /* per final track: its globalPid (for the join) */
  int64_t worker_cpu_ns;     /* the GPU reader thread's CPU time (timing log) */
  int64_t worker_read_cpu_ns; /* of which reading the tables */
  int64_t ops_max_end;       /* max end of the ops, INT64_MIN when none */
  /* host reader (calling thread) */
  nsys__raw_api api;
  nsys__raw_nvtx nvtx;
  char host_err[256];
  bool host_failed;
  /* temporary threads: globalTid per temp id */
  int64_t *tmp_gtid; uint32_t n_tmp, cap_tmp;
  int64_t *th_keys; uint32_t *th_vals; uint32_t th_cap; /* gtid -> tmp id + 1 */
  /* NVTX domains: (gpid, domainId) keys and their names */
  int64_t *dom_gpid; int64_t *dom_id; uint32_t *dom_name; uint32_t n_dom, cap_dom;
} nsys__build;

#define NSYS__TICK 4096
#define NSYS__HANDOFF_NONE ((sqlite3 *)&nsys__handoff_none)
static const char nsys__handoff_none;

static int64_t nsys__thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool nsys__tick_slow(nsys__build *b, uint32_t *since) {
  atomic_fetch_add(&b->rows_done, *since);
  *since = 0;
  if (nsys_call_cancelled(b->call)) atomic_store(&b->stop, 1);
  return atomic_load(&b->stop) == 0;
}

/* per row: a counter; every NSYS__TICK rows, progress and the cancel check */
static inline bool nsys__tick(nsys__build *b, uint32_t *since) {
  return ++*since < NSYS__TICK || nsys__tick_slow(b, since);
}

static void nsys__report(nsys__build *b, int lo, int hi, const char *msg) {
  int64_t total = b->rows_total > 0 ? b->rows_total : 1;
  int64_t done = atomic_load(&b->rows_done);
  if (done > total) done = total;
  nsys_call_progress(b->call, lo + (int)((hi - lo) * done / total), msg);
}

/* ---- GPU ops reader ----------------------------------------------------- */

static const char *const nsys__memcpy_names[] = {
    "[CUDA memcpy Unknown]", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memcpy HtoA]",
    "[CUDA memcpy AtoH]",    "[CUDA memcpy AtoA]", "[CUDA memcpy AtoD]", "[CUDA memcpy DtoA]",
    "[CUDA memcpy DtoD]",    "[CUDA memcpy HtoH]", "[CUDA memcpy PtoP]",
    "[CUDA memcpy Unified HtoD]", "[CUDA memcpy Unified DtoH]", "[CUDA memcpy Unified DtoD]",
};

/* Rows are read through an aggregate SQL function: SQLite calls it once per
 * row with the selected columns (the same values sqlite3_column_* would give),
 * which avoids a sqlite3_step() round trip and one API call per column. A
 * callback stops the scan by raising an error (cancel, row limit). */
static void nsys__rows_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }

/* Runs `SELECT fn(cols) FROM ...` with fn = step on the private connection.
 * Returns the final sqlite3_step code (SQLITE_DONE on success). */
static int nsys__read_rows(sqlite3 *db, const char *fn, const char *sql,
                           void (*step)(sqlite3_context *, int, sqlite3_value **), void *ctx) {
  if (sqlite3_create_function_v2(db, fn, -1, SQLITE_UTF8, ctx, NULL, step, nsys__rows_final, NULL) !=
      SQLITE_OK)
    return SQLITE_ERROR;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
  }
  sqlite3_finalize(st);
  return rc;
}

static uint32_t nsys__track_hash(int32_t device, int64_t stream, int64_t gpid) {
  uint64_t h = ((uint64_t)(uint32_t)device * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)stream * 0xC2B2AE3D27D4EB4FULL) ^ ((uint64_t)gpid >> 24);
  h *= 0x165667B19E3779F9ULL;
  return (uint32_t)(h >> 32);
}

/* Temporary id of the track (device, stream, gpid), in order of first appearance. */
static uint32_t nsys__track_tmp(nsys__build *b, int32_t device, int64_t stream, int64_t gpid) {
  if (b->tk_last != UINT32_MAX) {
    const nsys__track_key *k = &b->tk_keys[b->tk_last];
    if (k->device == device && k->stream == stream && k->gpid == gpid) return b->tk_last;
  }
  if ((b->n_tk + 1) * 2 > b->tk_hcap) { /* (re)hash */
    uint32_t ncap = b->tk_hcap ? b->tk_hcap * 2 : 64;
    uint32_t *nv = nsys_xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t t = 0; t < b->n_tk; t++) {
      const nsys__track_key *k = &b->tk_keys[t];
      uint32_t q = nsys__track_hash(k->device, k->stream, k->gpid) & (ncap - 1);
      while (nv[q]) q = (q + 1) & (ncap - 1);
      nv[q] = t + 1;
    }
    free(b->tk_hv);
    b->tk_hv = nv;
    b->tk_hcap = ncap;
  }
  uint32_t mask = b->tk_hcap - 1;
  uint32_t j = nsys__track_hash(device, stream, gpid) & mask;
  while (b->tk_hv[j]) {
    const nsys__track_key *k = &b->tk_keys[b->tk_hv[j] - 1];
    if (k->device == device && k->stream == stream && k->gpid == gpid) return b->tk_last = b->tk_hv[j] - 1;
    j = (j + 1) & mask;
  }
  if (b->n_tk == b->cap_tk) {
    b->cap_tk = b->cap_tk ? b->cap_tk * 2 : 16;
    NSYS__GROW(b->tk_keys, b->cap_tk);
  }
  uint32_t id = b->n_tk++;
  b->tk_keys[id] = (nsys__track_key){device, stream, gpid, id};
  b->tk_hv[j] = id + 1;
  return b->tk_last = id;
}

typedef struct {
  nsys__build *b;
  nsys__sidmap *sm;
  uint8_t kind;
  uint32_t since;
  bool too_many;
  uint32_t memset_name, memcpy_other;
  uint32_t memcpy_names[NSYS_ARRAY_LEN(nsys__memcpy_names)];
  int64_t last_graph;   /* graph launches: graphId of last_graph_name */
  uint32_t last_graph_name;
  bool any_graph;
} nsys__gpu_rows;

/* "[CUDA graph <graphId>]", "[CUDA graph]" without one */
static uint32_t nsys__graph_name(nsys__gpu_rows *g, sqlite3_value *id) {
  bool has = sqlite3_value_type(id) != SQLITE_NULL;
  int64_t gid = has ? sqlite3_value_int64(id) : INT64_MIN;
  if (g->any_graph && gid == g->last_graph) return g->last_graph_name;
  char buf[64];
  int n = has ? snprintf(buf, sizeof buf, "[CUDA graph %lld]", (long long)gid)
              : snprintf(buf, sizeof buf, "[CUDA graph]");
  g->last_graph = gid;
  g->last_graph_name = nsys_strtab_intern(&g->b->op_strings, buf, (size_t)n);
  g->any_graph = true;
  return g->last_graph_name;
}

/* args: rowid, start, end, deviceId, streamId, correlationId, globalPid, then
 * shortName, demangledName (kernels), copyKind (memcpy) or graphId (graphs) */
static void nsys__gpu_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__gpu_rows *g = sqlite3_user_data(ctx);
  nsys__build *b = g->b;
  nsys__raw_ops *r = &b->ops;
  if (r->n == r->cap) nsys__raw_ops_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  int64_t s = sqlite3_value_int64(v[1]), e = sqlite3_value_int64(v[2]);
  r->start[i] = s;
  r->end[i] = e < s ? s : e;
  r->tgroup[i] = nsys__track_tmp(b, (int32_t)sqlite3_value_int64(v[3]), sqlite3_value_int64(v[4]),
                                 sqlite3_value_int64(v[6]));
  r->corr[i] = sqlite3_value_int64(v[5]);
  r->kind[i] = g->kind;
  if (g->kind == NSYS_OP_KERNEL && argc >= 9) {
    r->name[i] = nsys__sidmap_lookup(g->sm, &b->strings, &b->op_strings, sqlite3_value_int64(v[7]),
                                  NSYS__NAME_PLAIN);
    r->full[i] = nsys__sidmap_lookup(g->sm, &b->strings, &b->op_strings, sqlite3_value_int64(v[8]),
                                  NSYS__NAME_PLAIN);
  } else if (g->kind == NSYS_OP_GRAPH && argc >= 8) {
    r->name[i] = r->full[i] = nsys__graph_name(g, v[7]);
  } else if (g->kind == NSYS_OP_MEMCPY && argc >= 8) {
    int64_t ck = sqlite3_value_int64(v[7]);
    r->name[i] = r->full[i] =
        ck >= 0 && ck < (int64_t)NSYS_ARRAY_LEN(g->memcpy_names) ? g->memcpy_names[ck] : g->memcpy_other;
  } else {
    r->name[i] = r->full[i] = g->memset_name;
  }
  r->n++;
  if (r->n == UINT32_MAX - 1) {
    g->too_many = true;
    sqlite3_result_error(ctx, "more than 4 billion GPU operations", -1);
    return;
  }
  if (!nsys__tick(b, &g->since)) sqlite3_result_error(ctx, "stopped", -1);
}

static bool nsys__read_gpu_table(nsys__build *b, nsys__src *src, nsys__src_table t,
                                 nsys__sidmap *sm) {
  if (!nsys__src_has(src, t)) return true;
  const char *tbl = src->table[t];
  const char *gpid = nsys__src_has_column(src, t, "globalPid") ? "globalPid" : "0";
  const char *corr = nsys__src_has_column(src, t, "correlationId") ? "correlationId" : "0";
  char sql[2048];
  if (t == NSYS__SRC_KERNEL) {
    bool has_short = nsys__src_has_column(src, t, "shortName");
    bool has_dem = nsys__src_has_column(src, t, "demangledName");
    const char *sn = has_short ? "shortName" : has_dem ? "demangledName" : "-1";
    const char *dn = has_dem ? "demangledName" : sn;
    snprintf(sql, sizeof sql,
             "SELECT nsys_ai_gpu_rows(rowid, start, end, deviceId, streamId, %s, %s, %s, %s) FROM %s",
             corr, gpid, sn, dn, tbl);
  } else if (t == NSYS__SRC_MEMCPY) {
    const char *ck = nsys__src_has_column(src, t, "copyKind") ? "copyKind" : "0";
    snprintf(sql, sizeof sql,
             "SELECT nsys_ai_gpu_rows(rowid, start, end, deviceId, streamId, %s, %s, %s) FROM %s",
             corr, gpid, ck, tbl);
  } else if (t == NSYS__SRC_GRAPH) {
    const char *gid = nsys__src_has_column(src, t, "graphId") ? "graphId" : "NULL";
    snprintf(sql, sizeof sql,
             "SELECT nsys_ai_gpu_rows(rowid, start, end, deviceId, streamId, %s, %s, %s) FROM %s",
             corr, gpid, gid, tbl);
  } else {
    snprintf(sql, sizeof sql,
             "SELECT nsys_ai_gpu_rows(rowid, start, end, deviceId, streamId, %s, %s) FROM %s", corr,
             gpid, tbl);
  }
  nsys__gpu_rows g;
  memset(&g, 0, sizeof g);
  g.b = b;
  g.sm = sm;
  g.kind = t == NSYS__SRC_KERNEL   ? NSYS_OP_KERNEL
           : t == NSYS__SRC_MEMCPY ? NSYS_OP_MEMCPY
           : t == NSYS__SRC_GRAPH  ? NSYS_OP_GRAPH
                                   : NSYS_OP_MEMSET;
  g.memset_name = nsys_strtab_intern(&b->op_strings, "[CUDA memset]", 13);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__memcpy_names); i++)
    g.memcpy_names[i] = nsys_strtab_intern(&b->op_strings, nsys__memcpy_names[i],
                                           strlen(nsys__memcpy_names[i]));
  g.memcpy_other = nsys_strtab_intern(&b->op_strings, "[CUDA memcpy]", 13);
  int rc = nsys__read_rows(src->db, "nsys_ai_gpu_rows", sql, nsys__gpu_row, &g);
  atomic_fetch_add(&b->rows_done, g.since);
  if (g.too_many) {
    snprintf(b->op_err, sizeof b->op_err, "more than 4 billion GPU operations");
    return false;
  }
  if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) {
    snprintf(b->op_err, sizeof b->op_err, "reading %s: %s", tbl, sqlite3_errmsg(src->db));
    return false;
  }
  return atomic_load(&b->stop) == 0;
}

static void nsys__assemble_ops(nsys__build *b, nsys_index *ix);

/* The GPU reader's last acts: say its data is ready, then wait for the host
 * reader's connection and close it (the host reader joins this thread only
 * at the end of the build). */
static void nsys__gpu_reader_done(nsys__build *b) {
  b->worker_cpu_ns = nsys__thread_cpu_ns();
  atomic_store(&b->op_done, 1);
  pthread_mutex_lock(&b->handoff_mu);
  while (!b->host_db) pthread_cond_wait(&b->handoff_cv, &b->handoff_mu);
  sqlite3 *db = b->host_db;
  pthread_mutex_unlock(&b->handoff_mu);
  if (db != NSYS__HANDOFF_NONE) sqlite3_close(db);
}

static void *nsys__gpu_reader(void *arg) {
  nsys__build *b = arg;
  nsys__src src;
  nsys__sidmap sm[1];
  memset(sm, 0, sizeof sm);
  if (!nsys__src_open(&src, b->p, b->op_err, sizeof b->op_err)) {
    b->op_failed = true;
    atomic_store(&b->stop, 1);
    nsys__gpu_reader_done(b);
    return NULL;
  }
  int64_t est = nsys__src_max_rowid(&src, NSYS__SRC_KERNEL) +
                nsys__src_max_rowid(&src, NSYS__SRC_MEMCPY) +
                nsys__src_max_rowid(&src, NSYS__SRC_MEMSET) +
                nsys__src_max_rowid(&src, NSYS__SRC_GRAPH);
  nsys__raw_ops_reserve(&b->ops, (uint32_t)NSYS_MIN(est + 16, (int64_t)UINT32_MAX - 2));
  static const nsys__src_table tabs[] = {NSYS__SRC_KERNEL, NSYS__SRC_MEMCPY, NSYS__SRC_MEMSET,
                                         NSYS__SRC_GRAPH};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(tabs); i++) {
    if (!nsys__read_gpu_table(b, &src, tabs[i], sm)) {
      if (atomic_load(&b->stop) == 0 || b->op_err[0]) b->op_failed = b->op_err[0] != '\0';
      atomic_store(&b->stop, 1);
      break;
    }
  }
  nsys__sidmap_free(&sm[0]);
  nsys__src_close(&src);
  b->worker_read_cpu_ns = nsys__thread_cpu_ns();
  /* group, sort and scatter the ops here, overlapping the host reader; names
   * stay in worker-local string ids until the caller remaps them */
  if (atomic_load(&b->stop) == 0 && !b->op_failed) {
    nsys__assemble_ops(b, b->ix);
    /* the GPU track series need nothing else: make them here, off the
     * calling thread's path (derive skips them) */
    nsys__derive_gpu_series(b->ix);
    /* the ops' part of the span (nsys__span) */
    for (uint32_t i = 0; i < b->ix->ops.n; i++)
      if (b->ix->ops.end[i] > b->ops_max_end) b->ops_max_end = b->ix->ops.end[i];
    nsys__raw_ops *r = &b->ops;
    free(r->start); free(r->end); free(r->rowid); free(r->tgroup);
    free(r->name); free(r->full); free(r->kind);
    r->start = r->end = r->rowid = NULL;
    r->tgroup = r->name = r->full = NULL; r->kind = NULL;
  }
  nsys__gpu_reader_done(b);
  return NULL;
}

/* ---- host reader -------------------------------------------------------- */

static uint32_t nsys__thread_tmp(nsys__build *b, int64_t gtid) {
  if ((b->n_tmp + 1) * 2 > b->th_cap) {
    uint32_t ncap = b->th_cap ? b->th_cap * 2 : 256;
    int64_t *nk = nsys_xmalloc(ncap * sizeof(int64_t));
    uint32_t *nv = nsys_xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t i = 0; i < b->th_cap; i++) {
      if (!b->th_vals[i]) continue;
      uint32_t j = (uint32_t)(((uint64_t)b->th_keys[i] * 0x9E3779B97F4A7C15ULL) >> 40) & (ncap - 1);
      while (nv[j]) j = (j + 1) & (ncap - 1);
      nk[j] = b->th_keys[i];
      nv[j] = b->th_vals[i];
    }
    free(b->th_keys);
    free(b->th_vals);
    b->th_keys = nk;
    b->th_vals = nv;
    b->th_cap = ncap;
  }
  uint32_t j = (uint32_t)(((uint64_t)gtid * 0x9E3779B97F4A7C15ULL) >> 40) & (b->th_cap - 1);
  while (b->th_vals[j]) {
    if (b->th_keys[j] == gtid) return b->th_vals[j] - 1;
    j = (j + 1) & (b->th_cap - 1);
  }
  if (b->n_tmp == b->cap_tmp) {
    b->cap_tmp = b->cap_tmp ? b->cap_tmp * 2 : 64;
    NSYS__GROW(b->tmp_gtid, b->cap_tmp);
  }
  uint32_t id = b->n_tmp++;
  b->tmp_gtid[id] = gtid;
  b->th_keys[j] = gtid;
  b->th_vals[j] = id + 1;
  return id;
}

static uint32_t nsys__domain_key(nsys__build *b, int64_t gpid, int64_t dom) {
  for (uint32_t i = b->n_dom; i-- > 0;)
    if (b->dom_gpid[i] == gpid && b->dom_id[i] == dom) return i;
  if (b->n_dom == b->cap_dom) {
    b->cap_dom = b->cap_dom ? b->cap_dom * 2 : 16;
    NSYS__GROW(b->dom_gpid, b->cap_dom);
    NSYS__GROW(b->dom_id, b->cap_dom);
    NSYS__GROW(b->dom_name, b->cap_dom);
  }
  b->dom_gpid[b->n_dom] = gpid;
  b->dom_id[b->n_dom] = dom;
  b->dom_name[b->n_dom] = NSYS_STR_NONE;
  return b->n_dom++;
}

static bool nsys__host_fail(nsys__build *b, nsys__src *src, const char *what) {
  snprintf(b->host_err, sizeof b->host_err, "reading %s: %s", what, sqlite3_errmsg(src->db));
  b->host_failed = true;
  atomic_store(&b->stop, 1);
  return false;
}

typedef struct {
  nsys__build *b;
  nsys_strtab *tab;
  nsys__sidmap *sm;
  uint32_t since;
  int64_t last_gtid;
  uint32_t last_tmp;
} nsys__host_rows;

/* args: rowid, start, end, globalTid, correlationId, nameId */
static void nsys__api_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  nsys__host_rows *h = sqlite3_user_data(ctx);
  nsys__build *b = h->b;
  nsys__raw_api *r = &b->api;
  if (r->n == r->cap) nsys__raw_api_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  int64_t s = sqlite3_value_int64(v[1]), e = sqlite3_value_int64(v[2]);
  r->start[i] = s;
  r->end[i] = e < s ? s : e;
  int64_t g = sqlite3_value_int64(v[3]);
  if (g != h->last_gtid) {
    h->last_tmp = nsys__thread_tmp(b, g);
    h->last_gtid = g;
  }
  r->thread[i] = h->last_tmp;
  r->corr[i] = sqlite3_value_int64(v[4]);
  r->name[i] = nsys__sidmap_lookup(h->sm, &b->strings, h->tab, sqlite3_value_int64(v[5]),
                                NSYS__NAME_STRIP_VERSION);
  r->n++;
  if (!nsys__tick(b, &h->since)) {
    sqlite3_result_error(ctx, "stopped", -1);
    return;
  }
  if ((r->n & 0xFFFF) == 0) nsys__report(b, 0, 85, "reading CUDA API calls");
}

static bool nsys__read_runtime(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm) {
  if (!nsys__src_has(src, NSYS__SRC_RUNTIME)) return true;
  const char *tbl = src->table[NSYS__SRC_RUNTIME];
  const char *corr =
      nsys__src_has_column(src, NSYS__SRC_RUNTIME, "correlationId") ? "correlationId" : "0";
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SELECT nsys_ai_api_rows(rowid, start, end, globalTid, %s, nameId) FROM %s", corr, tbl);
  nsys__raw_api *r = &b->api;
  nsys__raw_api_reserve(r, (uint32_t)NSYS_MIN(nsys__src_max_rowid(src, NSYS__SRC_RUNTIME) + 16,
                                              (int64_t)UINT32_MAX - 2));
  nsys__host_rows h = {b, tab, sm, 0, INT64_MIN, 0};
  int rc = nsys__read_rows(src->db, "nsys_ai_api_rows", sql, nsys__api_row, &h);
  atomic_fetch_add(&b->rows_done, h.since);
  if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) return nsys__host_fail(b, src, tbl);
  return atomic_load(&b->stop) == 0;
}

/* ASCII without NUL (the usual NVTX text): valid UTF-8 that needs no
 * sanitizing. Eight bytes at a time. */
static bool nsys__plain_ascii(const unsigned char *s, size_t n) {
  const uint64_t lo7 = 0x7F7F7F7F7F7F7F7FULL, hi = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    /* a byte >= 0x80, or a zero byte ((b & 0x7F) + 0x7F sets bit 7 unless b == 0) */
    if ((w & hi) || (~((w & lo7) + lo7) & hi)) return false;
  }
  for (; i < n; i++)
    if (s[i] == 0 || s[i] >= 0x80) return false;
  return true;
}

/* args: rowid, start, end, eventType, globalTid, text, textId, domainId, endGlobalTid */
static void nsys__nvtx_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  nsys__host_rows *h = sqlite3_user_data(ctx);
  nsys__build *b = h->b;
  nsys_strtab *tab = h->tab;
  if (!nsys__tick(b, &h->since)) {
    sqlite3_result_error(ctx, "stopped", -1);
    return;
  }
  /* the SQL keeps 59..75; the types read here: push/pop (59), start/end (60),
   * their payload variants (70, 71) and domain create (75) */
  int64_t type = sqlite3_value_int64(v[3]);
  if (type != 59 && type != 60 && type != 70 && type != 71 && type != 75) return;
  if (sqlite3_value_type(v[3]) != SQLITE_INTEGER && sqlite3_value_double(v[3]) != (double)type)
    return; /* 59.5 is none of them */
  int64_t g = sqlite3_value_int64(v[4]);
  int64_t dom = sqlite3_value_int64(v[7]);
  /* name: text, else StringIds[textId] */
  uint32_t name;
  const unsigned char *text = sqlite3_value_text(v[5]);
  if (text) {
    size_t len = (size_t)sqlite3_value_bytes(v[5]);
    if (nsys__plain_ascii(text, len) || (nsys_utf8_valid((const char *)text, len) && !memchr(text, 0, len))) {
      name = nsys_strtab_intern(tab, (const char *)text, len);
    } else {
      char *clean = nsys_utf8_sanitize((const char *)text, len);
      name = nsys_strtab_intern(tab, clean, strlen(clean));
      free(clean);
    }
  } else if (sqlite3_value_type(v[6]) != SQLITE_NULL) {
    name = nsys__sidmap_lookup(h->sm, &b->strings, tab, sqlite3_value_int64(v[6]), NSYS__NAME_PLAIN);
  } else {
    name = nsys_strtab_intern(tab, "", 0);
  }
  if (type == 75) { /* domain create: its text names the domain in this process */
    uint32_t k = nsys__domain_key(b, nsys_gtid_gpid(g), dom);
    b->dom_name[k] = name;
    return;
  }
  if (sqlite3_value_type(v[2]) == SQLITE_NULL) return; /* not a closed range */
  if (sqlite3_value_type(v[8]) != SQLITE_NULL && sqlite3_value_int64(v[8]) != g)
    return; /* start/end range ended on another thread: not a range of this thread */
  int64_t s = sqlite3_value_int64(v[1]), e = sqlite3_value_int64(v[2]);
  if (e < s) return;
  nsys__raw_nvtx *r = &b->nvtx;
  if (r->n == r->cap) nsys__raw_nvtx_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  r->start[i] = s;
  r->end[i] = e;
  if (g != h->last_gtid) {
    h->last_tmp = nsys__thread_tmp(b, g);
    h->last_gtid = g;
  }
  r->thread[i] = h->last_tmp;
  r->name[i] = name;
  r->dom[i] = dom == 0 ? UINT32_MAX : nsys__domain_key(b, nsys_gtid_gpid(g), dom);
  r->n++;
  if ((r->n & 0xFFFF) == 0) nsys__report(b, 0, 85, "reading NVTX ranges");
}

static bool nsys__read_nvtx(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm) {
  if (!nsys__src_has(src, NSYS__SRC_NVTX)) return true;
  const char *tbl = src->table[NSYS__SRC_NVTX];
  /* An altered or partial export may lack the columns ranges need: no ranges, not an error. */
  if (!nsys__src_has_column(src, NSYS__SRC_NVTX, "eventType") ||
      !nsys__src_has_column(src, NSYS__SRC_NVTX, "globalTid") ||
      !nsys__src_has_column(src, NSYS__SRC_NVTX, "end"))
    return true;
  bool has_text = nsys__src_has_column(src, NSYS__SRC_NVTX, "text");
  bool has_textid = nsys__src_has_column(src, NSYS__SRC_NVTX, "textId");
  bool has_dom = nsys__src_has_column(src, NSYS__SRC_NVTX, "domainId");
  bool has_egt = nsys__src_has_column(src, NSYS__SRC_NVTX, "endGlobalTid");
  /* a range test, not IN (...): IN probes a temporary index per row */
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SELECT nsys_ai_nvtx_rows(rowid, start, end, eventType, globalTid, %s, %s, %s, %s) "
           "FROM %s WHERE eventType BETWEEN 59 AND 75",
           has_text ? "text" : "NULL", has_textid ? "textId" : "NULL", has_dom ? "domainId" : "0",
           has_egt ? "endGlobalTid" : "NULL", tbl);
  /* at most one range per row: reserved once (huge pages, nsys__big_alloc),
   * only the pages the ranges fill are ever touched; capped, since a table of
   * mostly marks would reserve far more than its ranges need (it grows then) */
  nsys__raw_nvtx_reserve(&b->nvtx, (uint32_t)NSYS_MIN(nsys__src_max_rowid(src, NSYS__SRC_NVTX) + 16,
                                                      (int64_t)1 << 22));
  nsys__host_rows h = {b, tab, sm, 0, INT64_MIN, 0};
  int rc = nsys__read_rows(src->db, "nsys_ai_nvtx_rows", sql, nsys__nvtx_row, &h);
  atomic_fetch_add(&b->rows_done, h.since);
  if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) return nsys__host_fail(b, src, tbl);
  return atomic_load(&b->stop) == 0;
}

/* ---- sorting helpers ---------------------------------------------------- */

typedef struct {
  const int64_t *start, *end, *rowid;
  const uint8_t *kind;
  bool end_desc;
} nsys__sort_ctx;

static inline int nsys__cmp_rows(const nsys__sort_ctx *c, uint32_t x, uint32_t y) {
  if (c->start[x] != c->start[y]) return c->start[x] < c->start[y] ? -1 : 1;
  if (c->end[x] != c->end[y]) return (c->end[x] < c->end[y]) != c->end_desc ? -1 : 1;
  if (c->kind && c->kind[x] != c->kind[y]) return c->kind[x] < c->kind[y] ? -1 : 1;
  if (c->rowid[x] != c->rowid[y]) return c->rowid[x] < c->rowid[y] ? -1 : 1;
  return 0;
}

static int nsys__cmp_idx(const void *a, const void *b, void *ctx_) {
  return nsys__cmp_rows(ctx_, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Merges a short sorted run into a long one: each short item's place by
 * binary search, the long run copied in blocks between them (a table of a
 * few memcpy rows merged into a stream of kernels costs a memcpy, not a
 * comparison per kernel). `small_first`: the short run came first, so it
 * wins ties, as in the plain merge. Returns the items written. */
static uint32_t nsys__merge_small(const nsys__sort_ctx *c, const uint32_t *big, uint32_t nbig,
                                  const uint32_t *small, uint32_t nsmall, bool small_first,
                                  uint32_t *dst) {
  uint32_t j = 0, out = 0;
  for (uint32_t i = 0; i < nsmall; i++) {
    uint32_t y = small[i];
    /* first k in [j, nbig) where y goes before big[k] */
    uint32_t lo = j, hi = nbig;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      int r = nsys__cmp_rows(c, big[mid], y);
      if (small_first ? r < 0 : r <= 0) lo = mid + 1;
      else hi = mid;
    }
    memcpy(dst + out, big + j, (size_t)(lo - j) * sizeof *dst);
    out += lo - j;
    j = lo;
    dst[out++] = y;
  }
  memcpy(dst + out, big + j, (size_t)(nbig - j) * sizeof *dst);
  return out + (nbig - j);
}

/* Sorts perm[0..n) by the context's key: a natural merge sort, so the usual
 * input (a few sorted runs: one per source table, or rows written per
 * thread buffer) costs one or two linear passes. Many runs fall back to qsort. */
static void nsys__sort_segment(uint32_t *perm, uint32_t n, nsys__sort_ctx *c) {
  uint32_t runs = 1;
  for (uint32_t i = 1; i < n; i++)
    if (nsys__cmp_rows(c, perm[i - 1], perm[i]) > 0) runs++;
  if (runs == 1) return;
  if (runs > 64) {
    qsort_r(perm, n, sizeof *perm, nsys__cmp_idx, c);
    return;
  }
  uint32_t *tmp = nsys__big_alloc((size_t)n * sizeof(uint32_t));
  uint32_t *src = perm, *dst = tmp;
  while (runs > 1) {
    uint32_t i = 0, out = 0;
    runs = 0;
    while (i < n) {
      uint32_t a = i, a_end = i + 1;
      while (a_end < n && nsys__cmp_rows(c, src[a_end - 1], src[a_end]) <= 0) a_end++;
      uint32_t b = a_end, b_end = b < n ? b + 1 : b;
      while (b_end < n && nsys__cmp_rows(c, src[b_end - 1], src[b_end]) <= 0) b_end++;
      uint32_t na = a_end - a, nb = b_end - b;
      if (nb && (uint64_t)nb * 32 < na) {
        out = nsys__merge_small(c, src + a, na, src + b, nb, false, dst + out) + out;
      } else if (nb && (uint64_t)na * 32 < nb) {
        out = nsys__merge_small(c, src + b, nb, src + a, na, true, dst + out) + out;
      } else {
        while (a < a_end && b < b_end) dst[out++] = nsys__cmp_rows(c, src[b], src[a]) < 0 ? src[b++] : src[a++];
        while (a < a_end) dst[out++] = src[a++];
        while (b < b_end) dst[out++] = src[b++];
      }
      i = b_end;
      runs++;
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)n * sizeof(uint32_t));
  free(tmp);
}

/* Counting sort of n items by group[i] in [0, ngroups): perm and per-group
 * first offsets (ngroups + 1 entries). Stable. */
static uint32_t *nsys__group(const uint32_t *group, uint32_t n, uint32_t ngroups, uint32_t **first_out) {
  uint32_t *first = nsys_xcalloc((size_t)ngroups + 1, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) first[group[i] + 1]++;
  for (uint32_t g = 0; g < ngroups; g++) first[g + 1] += first[g];
  uint32_t *pos = nsys_xmalloc(((size_t)ngroups + 1) * sizeof(uint32_t));
  memcpy(pos, first, ((size_t)ngroups + 1) * sizeof(uint32_t));
  uint32_t *perm = nsys__big_alloc((size_t)(n ? n : 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) perm[pos[group[i]]++] = i;
  free(pos);
  *first_out = first;
  return perm;
}

/* ---- assembling the index ---------------------------------------------- */

static int nsys__cmp_track_key(const void *a, const void *b) {
  const nsys__track_key *x = a, *y = b;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
  if (x->gpid != y->gpid) return x->gpid < y->gpid ? -1 : 1;
  return 0;
}

typedef struct {
  uint32_t pid, tid;
  int64_t gtid;
  uint32_t tmp;
} nsys__thread_key;

static int nsys__cmp_thread_key(const void *a, const void *b) {
  const nsys__thread_key *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->gtid != y->gtid) return x->gtid < y->gtid ? -1 : 1;
  return 0;
}

static bool nsys__name_is_nccl(const char *s) {
  return (s[0] == 'n' || s[0] == 'N') && (s[1] == 'c' || s[1] == 'C') &&
         (s[2] == 'c' || s[2] == 'C') && (s[3] == 'l' || s[3] == 'L');
}

/* dst[i] = src[perm[i]] into `spare` (a buffer of at least n elements); src's
 * buffer becomes the next spare: one new buffer for a chain of gathers of one
 * element size, instead of one per array (fewer page faults). */
#define NSYS__GATHER(dst, src, spare, perm, n)                  \
  do {                                                         \
    for (uint32_t i_ = 0; i_ < (n); i_++) (spare)[i_] = (src)[(perm)[i_]]; \
    void *freed_ = (src);                                      \
    (dst) = (spare);                                           \
    (spare) = freed_;                                          \
  } while (0)

/* Builds tracks and the ops arrays from b->ops (merging the worker's strings). */
static void nsys__assemble_ops(nsys__build *b, nsys_index *ix) {
  nsys__raw_ops *r = &b->ops;
  uint32_t n = r->n;
  /* distinct tracks: temporary ids given by the reader (nsys__track_tmp) */
  uint32_t ntk = b->n_tk;
  nsys__track_key *keys = b->tk_keys;
  uint32_t *tgroup = r->tgroup;
  r->tgroup = NULL;
  /* final track order */
  nsys__track_key *sorted = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof *sorted);
  if (ntk) memcpy(sorted, keys, (size_t)ntk * sizeof *sorted);
  qsort(sorted, ntk, sizeof *sorted, nsys__cmp_track_key);
  uint32_t *tmp2final = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof(uint32_t));
  for (uint32_t t = 0; t < ntk; t++) tmp2final[sorted[t].tmp] = t;
  b->track_gpid = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof(int64_t));
  for (uint32_t t = 0; t < ntk; t++) b->track_gpid[t] = sorted[t].gpid;
  for (uint32_t i = 0; i < n; i++) tgroup[i] = tmp2final[tgroup[i]];
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(tgroup, n, ntk, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, r->kind, false};
  ix->n_tracks = ntk;
  ix->tracks = nsys_xcalloc(ntk ? ntk : 1, sizeof *ix->tracks);
  for (uint32_t t = 0; t < ntk; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    nsys_gpu_track *tr = &ix->tracks[t];
    tr->device = sorted[t].device;
    tr->stream = sorted[t].stream;
    tr->pid = nsys_gtid_pid(sorted[t].gpid);
    tr->first = first[t];
    tr->count = first[t + 1] - first[t];
  }
  /* scatter into final order; corr too (for the join). Each gather
   * writes into the buffer the previous one freed (see NSYS__GATHER). */
  nsys_ops *o = &ix->ops;
  o->n = n;
  size_t nn = n ? n : 1;
  int64_t *spare8 = nsys__big_alloc(nn * sizeof(int64_t));
  uint32_t *spare4 = nsys__big_alloc(nn * sizeof(uint32_t));
  NSYS__GATHER(o->start, r->start, spare8, perm, n);
  NSYS__GATHER(o->end, r->end, spare8, perm, n);
  NSYS__GATHER(o->rowid, r->rowid, spare8, perm, n);
  NSYS__GATHER(r->corr, r->corr, spare8, perm, n); /* now in final op order */
  NSYS__GATHER(o->name, r->name, spare4, perm, n); /* worker-local ids: see nsys__remap_op_names */
  NSYS__GATHER(o->full_name, r->full, spare4, perm, n);
  NSYS__GATHER(o->track, tgroup, spare4, perm, n);
  o->api = (int32_t *)spare4; /* tgroup's buffer */
  spare4 = NULL;
  for (uint32_t i = 0; i < n; i++) o->api[i] = -1;
  o->kind = nsys__big_alloc(nn);
  for (uint32_t i = 0; i < n; i++) o->kind[i] = r->kind[perm[i]];
  free(spare8);
  r->start = r->end = r->rowid = NULL; /* their buffers now hold final arrays */
  r->name = r->full = NULL;
  tgroup = NULL;
  free(perm);
  free(first);
  free(tmp2final);
  free(sorted);
  /* per track: busy union and class */
  for (uint32_t t = 0; t < ntk; t++) {
    nsys_gpu_track *tr = &ix->tracks[t];
    int64_t busy = 0, cur_s = 0, cur_e = 0;
    bool open = false;
    uint32_t nccl = 0, other = 0;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
      int64_t s = o->start[i], e = o->end[i];
      if (!open || s > cur_e) {
        if (open) busy += cur_e - cur_s;
        cur_s = s;
        cur_e = e;
        open = true;
      } else if (e > cur_e) {
        cur_e = e;
      }
      if (o->kind[i] == NSYS_OP_KERNEL) {
        if (nsys__name_is_nccl(nsys_strtab_get(&b->op_strings, o->name[i]))) nccl++;
        else other++;
      } else if (o->kind[i] == NSYS_OP_GRAPH) {
        other++; /* a graph launch runs kernels: compute */
      }
    }
    if (open) busy += cur_e - cur_s;
    tr->busy_ns = busy;
    tr->cls = nccl && other ? NSYS_STREAM_MIXED
              : nccl        ? NSYS_STREAM_COMM
              : other       ? NSYS_STREAM_COMPUTE
                            : NSYS_STREAM_COPY;
  }
}

/* Worker-local string ids of op names -> ix->strings. */
static void nsys__remap_op_names(nsys__build *b, nsys_index *ix) {
  uint32_t *remap = nsys_xmalloc(((size_t)b->op_strings.count + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < b->op_strings.count; i++)
    remap[i] = nsys_strtab_intern(&ix->strings, b->op_strings.strs[i], b->op_strings.lens[i]);
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    ix->ops.name[i] = remap[ix->ops.name[i]];
    ix->ops.full_name[i] = remap[ix->ops.full_name[i]];
  }
  free(remap);
}

/* Threads: sorted by (pid, tid); names from ThreadNames (highest priority). */
static uint32_t *nsys__assemble_threads(nsys__build *b, nsys_index *ix, nsys__src *src,
                                        nsys__sidmap *sm) {
  uint32_t nt = b->n_tmp;
  nsys__thread_key *k = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof *k);
  for (uint32_t i = 0; i < nt; i++)
    k[i] = (nsys__thread_key){nsys_gtid_pid(b->tmp_gtid[i]), nsys_gtid_tid(b->tmp_gtid[i]),
                              b->tmp_gtid[i], i};
  qsort(k, nt, sizeof *k, nsys__cmp_thread_key);
  uint32_t *tmp2final = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof(uint32_t));
  ix->n_threads = nt;
  ix->threads = nsys_xcalloc(nt ? nt : 1, sizeof *ix->threads);
  uint32_t empty = nsys_strtab_intern(&ix->strings, "", 0);
  int64_t *prio = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
  for (uint32_t t = 0; t < nt; t++) {
    tmp2final[k[t].tmp] = t;
    ix->threads[t].pid = k[t].pid;
    ix->threads[t].tid = k[t].tid;
    ix->threads[t].name = empty;
    prio[t] = INT64_MIN;
  }
  if (nsys__src_has(src, NSYS__SRC_THREAD_NAMES) && nt) {
    char sql[1024];
    bool has_prio = nsys__src_has_column(src, NSYS__SRC_THREAD_NAMES, "priority");
    snprintf(sql, sizeof sql, "SELECT globalTid, nameId, %s FROM %s", has_prio ? "priority" : "0",
             src->table[NSYS__SRC_THREAD_NAMES]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(src->db, sql, -1, &st, NULL) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t g = sqlite3_column_int64(st, 0);
        nsys__thread_key key = {nsys_gtid_pid(g), nsys_gtid_tid(g), g, 0};
        nsys__thread_key *hit = bsearch(&key, k, nt, sizeof *k, nsys__cmp_thread_key);
        if (!hit) continue;
        uint32_t t = (uint32_t)(hit - k);
        int64_t pr = sqlite3_column_int64(st, 2);
        if (pr < prio[t]) continue;
        prio[t] = pr;
        ix->threads[t].name = nsys__sidmap_get(sm, &b->strings, &ix->strings,
                                               sqlite3_column_int64(st, 1), NSYS__NAME_PLAIN);
      }
    }
    sqlite3_finalize(st);
  }
  free(prio);
  free(k);
  return tmp2final;
}

static void nsys__assemble_api(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final) {
  nsys__raw_api *r = &b->api;
  uint32_t n = r->n;
  for (uint32_t i = 0; i < n; i++) r->thread[i] = tmp2final[r->thread[i]];
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(r->thread, n, ix->n_threads, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, NULL, false};
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    ix->threads[t].api_first = first[t];
    ix->threads[t].api_count = first[t + 1] - first[t];
  }
  nsys_api_calls *a = &ix->api;
  size_t nn = n ? n : 1;
  a->n = n;
  int64_t *spare8 = nsys__big_alloc(nn * sizeof(int64_t));
  uint32_t *spare4 = nsys__big_alloc(nn * sizeof(uint32_t));
  NSYS__GATHER(a->start, r->start, spare8, perm, n);
  NSYS__GATHER(a->end, r->end, spare8, perm, n);
  NSYS__GATHER(a->correlation, r->corr, spare8, perm, n);
  NSYS__GATHER(a->rowid, r->rowid, spare8, perm, n);
  NSYS__GATHER(a->name, r->name, spare4, perm, n);
  NSYS__GATHER(a->thread, r->thread, spare4, perm, n);
  a->first_op = (int32_t *)spare4; /* the raw thread buffer */
  for (uint32_t i = 0; i < n; i++) a->first_op[i] = -1;
  free(spare8);
  r->start = r->end = r->corr = r->rowid = NULL; /* their buffers now hold final arrays */
  r->name = r->thread = NULL;
  free(perm);
  free(first);
}

/* API <-> op join on (globalPid, correlationId), in two halves: the lookup
 * table from the API calls alone (built by the host reader while the GPU
 * reader may still run), then one probe per op. */
enum { NSYS__JOIN_MAXP = 256 };

typedef struct {
  /* direct: per process, correlation ids are a dense counter (the usual
   * case): a corr -> call table per process, read in nearly sequential order */
  int32_t *direct;
  uint32_t np;
  int64_t pg[NSYS__JOIN_MAXP], plo[NSYS__JOIN_MAXP], phi[NSYS__JOIN_MAXP];
  size_t off[NSYS__JOIN_MAXP];
  /* else: open addressing on (gpid, corr), value = call index + 1 */
  uint32_t *slot;
  uint32_t mask;
} nsys__join_table;

#define NSYS__JH(g, c) \
  ((uint32_t)((((uint64_t)(c) * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(g) >> 24) * 0xC2B2AE3D27D4EB4FULL) >> 29))

static void nsys__join_prepare(const nsys_index *ix, const int64_t *thread_gpid, nsys__join_table *jt) {
  const nsys_api_calls *a = &ix->api;
  memset(jt, 0, sizeof *jt);
  if (!a->n) return;
  {
    uint32_t pn[NSYS__JOIN_MAXP];
    uint32_t np = 0;
    bool ok = true;
    uint32_t last_t = UINT32_MAX, last_p = 0;
    for (uint32_t i = 0; i < a->n && ok; i++) {
      if (a->correlation[i] == 0) continue;
      if (a->thread[i] != last_t) {
        int64_t g = thread_gpid[a->thread[i]];
        uint32_t k = 0;
        while (k < np && jt->pg[k] != g) k++;
        if (k == np) {
          if (np == NSYS__JOIN_MAXP) {
            ok = false;
            break;
          }
          jt->pg[np] = g;
          jt->plo[np] = INT64_MAX;
          jt->phi[np] = INT64_MIN;
          pn[np++] = 0;
        }
        last_t = a->thread[i];
        last_p = k;
      }
      int64_t cv = a->correlation[i];
      if (cv < jt->plo[last_p]) jt->plo[last_p] = cv;
      if (cv > jt->phi[last_p]) jt->phi[last_p] = cv;
      pn[last_p]++;
    }
    size_t total = 0;
    for (uint32_t k = 0; k < np && ok; k++) {
      if (jt->plo[k] < 0 || jt->phi[k] - jt->plo[k] >= (int64_t)pn[k] * 4 + 4096) ok = false;
      else total += (size_t)(jt->phi[k] - jt->plo[k] + 1);
    }
    if (!np) return; /* no correlation ids: nothing joins */
    if (ok) {
      jt->np = np;
      jt->direct = nsys__big_alloc(total * sizeof(int32_t));
      memset(jt->direct, 0xFF, total * sizeof(int32_t));
      size_t acc_off = 0;
      for (uint32_t k = 0; k < np; k++) {
        jt->off[k] = acc_off;
        acc_off += (size_t)(jt->phi[k] - jt->plo[k] + 1);
      }
      last_t = UINT32_MAX;
      for (uint32_t i = 0; i < a->n; i++) {
        if (a->correlation[i] == 0) continue;
        if (a->thread[i] != last_t) {
          int64_t g = thread_gpid[a->thread[i]];
          last_p = 0;
          while (jt->pg[last_p] != g) last_p++;
          last_t = a->thread[i];
        }
        int32_t *slot = &jt->direct[jt->off[last_p] + (size_t)(a->correlation[i] - jt->plo[last_p])];
        if (*slot < 0) *slot = (int32_t)i; /* an id repeated within a process: the first call wins */
      }
      return;
    }
  }
  uint64_t cap = 1024;
  while (cap < (uint64_t)a->n * 2) cap *= 2;
  jt->mask = (uint32_t)(cap - 1);
  jt->slot = nsys_xcalloc(cap, sizeof(uint32_t));
  for (uint32_t i = 0; i < a->n; i++) {
    if (a->correlation[i] == 0) continue;
    int64_t g = thread_gpid[a->thread[i]];
    uint32_t j = NSYS__JH(g, a->correlation[i]) & jt->mask;
    while (jt->slot[j]) j = (j + 1) & jt->mask;
    jt->slot[j] = i + 1; /* probing finds the first call of a repeated id first */
  }
}

static void nsys__join_finish(nsys__build *b, nsys_index *ix, const int64_t *thread_gpid,
                              nsys__join_table *jt) {
  nsys_api_calls *a = &ix->api;
  nsys_ops *o = &ix->ops;
  uint32_t n_ops = o->n;
  ix->op_next = nsys__big_alloc((size_t)(n_ops ? n_ops : 1) * sizeof(int32_t));
  for (uint32_t i = 0; i < n_ops; i++) ix->op_next[i] = -1;
  const int64_t *corr = b->ops.corr, *tg = b->track_gpid;
  if (jt->direct) {
    int64_t last_g = INT64_MIN;
    int32_t kp = -1;
    for (uint32_t i = 0; i < n_ops; i++) {
      int64_t cv = corr[i];
      if (cv == 0) continue;
      int64_t g = tg[o->track[i]];
      if (g != last_g) {
        last_g = g;
        kp = -1;
        for (uint32_t k = 0; k < jt->np; k++)
          if (jt->pg[k] == last_g) kp = (int32_t)k;
      }
      if (kp < 0 || cv < jt->plo[kp] || cv > jt->phi[kp]) continue;
      o->api[i] = jt->direct[jt->off[kp] + (size_t)(cv - jt->plo[kp])];
    }
  } else if (jt->slot) {
    for (uint32_t i = 0; i < n_ops; i++) {
      if (corr[i] == 0) continue;
      int64_t g = tg[o->track[i]];
      uint32_t j = NSYS__JH(g, corr[i]) & jt->mask;
      uint32_t v;
      while ((v = jt->slot[j]) != 0) {
        uint32_t ai = v - 1;
        if (a->correlation[ai] == corr[i] && thread_gpid[a->thread[ai]] == g) {
          o->api[i] = (int32_t)ai;
          break;
        }
        j = (j + 1) & jt->mask;
      }
    }
  }
  free(jt->direct);
  free(jt->slot);
  jt->direct = NULL;
  jt->slot = NULL;
  for (uint32_t i = n_ops; i-- > 0;) {
    int32_t ai = o->api[i];
    if (ai < 0) continue;
    ix->op_next[i] = a->first_op[ai];
    a->first_op[ai] = (int32_t)i;
  }
}
#undef NSYS__JH

static void nsys__assemble_nvtx(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final) {
  nsys__raw_nvtx *r = &b->nvtx;
  uint32_t n = r->n;
  for (uint32_t i = 0; i < n; i++) r->thread[i] = tmp2final[r->thread[i]];
  uint32_t empty = nsys_strtab_intern(&ix->strings, "", 0);
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(r->thread, n, ix->n_threads, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, NULL, true}; /* start asc, end desc */
  nsys_nvtx_ranges *v = &ix->nvtx;
  size_t nn = n ? n : 1;
  v->n = n;
  v->start = nsys__big_alloc(nn * sizeof(int64_t));
  v->end = nsys__big_alloc(nn * sizeof(int64_t));
  v->name = nsys__big_alloc(nn * sizeof(uint32_t));
  v->domain = nsys__big_alloc(nn * sizeof(uint32_t));
  v->thread = nsys__big_alloc(nn * sizeof(uint32_t));
  v->depth = nsys__big_alloc(nn * sizeof(uint16_t));
  v->parent = nsys__big_alloc(nn * sizeof(int32_t));
  uint32_t *stack = nsys__big_alloc(nn * sizeof(uint32_t));
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    ix->threads[t].nvtx_first = first[t];
    ix->threads[t].nvtx_count = first[t + 1] - first[t];
    uint32_t sp = 0;
    uint16_t maxd = 0;
    for (uint32_t i = first[t]; i < first[t + 1]; i++) {
      uint32_t s = perm[i];
      v->start[i] = r->start[s];
      v->end[i] = r->end[s];
      v->name[i] = r->name[s];
      v->domain[i] = r->dom[s] == UINT32_MAX || b->dom_name[r->dom[s]] == NSYS_STR_NONE
                         ? empty : b->dom_name[r->dom[s]];
      v->thread[i] = t;
      /* pop ranges that ended before this one starts */
      while (sp && v->end[stack[sp - 1]] < v->start[i]) sp--;
      /* nearest enclosing range (start/end ranges may cross) */
      int32_t parent = -1;
      for (uint32_t k = sp; k-- > 0;) {
        if (v->end[stack[k]] >= v->end[i]) {
          parent = (int32_t)stack[k];
          break;
        }
      }
      v->parent[i] = parent;
      uint32_t d = parent < 0 ? 0 : (uint32_t)v->depth[parent] + 1;
      v->depth[i] = (uint16_t)(d > UINT16_MAX ? UINT16_MAX : d);
      if (v->depth[i] > maxd) maxd = v->depth[i];
      stack[sp++] = i;
    }
    ix->threads[t].nvtx_max_depth = maxd;
  }
  free(stack);
  free(perm);
  free(first);
}

static void nsys__build_free(nsys__build *b) {
  pthread_mutex_destroy(&b->handoff_mu);
  pthread_cond_destroy(&b->handoff_cv);
  free(b->tk_keys);
  free(b->tk_hv);
  free(b->track_gpid);
  nsys__raw_ops_free(&b->ops);
  nsys__raw_api_free(&b->api);
  nsys__raw_nvtx_free(&b->nvtx);
  nsys_strtab_free(&b->op_strings);
  nsys__strings_free(&b->strings);
  free(b->tmp_gtid);
  free(b->th_keys);
  free(b->th_vals);
  free(b->dom_gpid);
  free(b->dom_id);
  free(b->dom_name);
}

/* The profile's span: min start and max end over everything. The host side
 * (API calls, NVTX ranges) is folded in before the wait for the GPU reader. */
typedef struct {
  bool any;
  int64_t lo, hi;
} nsys__span_acc;

static void nsys__span_add(nsys__span_acc *s, const int64_t *start, const int64_t *end, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (!s->any || start[i] < s->lo) s->lo = start[i];
    if (!s->any || end[i] > s->hi) s->hi = end[i];
    s->any = true;
  }
}

static void nsys__span(nsys_index *ix, nsys__span_acc host, int64_t ops_max_end) {
  nsys__span_acc s = host;
  /* ops are sorted per track, so only each track's first start matters */
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (!tr->count) continue;
    int64_t st = ix->ops.start[tr->first];
    if (!s.any || st < s.lo) s.lo = st;
    if (!s.any || st > s.hi) s.hi = st;
    s.any = true;
  }
  if (ix->ops.n && ops_max_end > s.hi) s.hi = ops_max_end; /* computed by the GPU reader */
  ix->span_start = s.any ? s.lo : 0;
  ix->span_end = s.any ? s.hi : 0;
}

static bool nsys__timing_on;
static int64_t nsys__t_last, nsys__cpu_last;
static void nsys__phase(const char *what) {
  if (!nsys__timing_on) return;
  int64_t now = nsys_now_ns(), cpu = nsys__thread_cpu_ns();
  nsys_log("index build: %-28s %8.1f ms (thread CPU %.1f ms)", what, (double)(now - nsys__t_last) / 1e6,
           (double)(cpu - nsys__cpu_last) / 1e6);
  nsys__t_last = now;
  nsys__cpu_last = cpu;
}

nsys_index *nsys__index_build_fresh(nsys_profile *p, nsys_call *call) {
  nsys__timing_on = getenv("NSYS_AI_INDEX_TIMING") != NULL;
  nsys__t_last = nsys_now_ns();
  int64_t cpu0 = nsys__thread_cpu_ns();
  nsys__cpu_last = cpu0;
  nsys__build *b = nsys_xcalloc(1, sizeof *b);
  b->p = p;
  b->call = call;
  b->tk_last = UINT32_MAX;
  b->ops_max_end = INT64_MIN;
  pthread_mutex_init(&b->handoff_mu, NULL);
  pthread_cond_init(&b->handoff_cv, NULL);
  nsys_strtab_init(&b->op_strings);
  nsys__src src;
  char err[256];
  if (!nsys__src_open(&src, p, err, sizeof err)) {
    pthread_mutex_destroy(&b->handoff_mu);
    pthread_cond_destroy(&b->handoff_cv);
    free(b);
    nsys_call_fail(call, NSYS_E_IO, "%s", err);
    return NULL;
  }
  nsys__strings_init(&b->strings, p, &src);
  b->rows_total = nsys__src_max_rowid(&src, NSYS__SRC_KERNEL) +
                  nsys__src_max_rowid(&src, NSYS__SRC_MEMCPY) +
                  nsys__src_max_rowid(&src, NSYS__SRC_MEMSET) +
                  nsys__src_max_rowid(&src, NSYS__SRC_GRAPH) +
                  nsys__src_max_rowid(&src, NSYS__SRC_RUNTIME) +
                  nsys__src_max_rowid(&src, NSYS__SRC_NVTX);
  nsys_call_progress_begin(call, "Indexing profile");
  nsys_index *ix = nsys_xcalloc(1, sizeof *ix);
  nsys_strtab_init(&ix->strings);
  nsys_strtab_intern(&ix->strings, "", 0); /* id 0 = "" */
  ix->priv = nsys_xcalloc(1, sizeof(nsys__index_priv)); /* the GPU reader fills gpu_series */
  b->ix = ix;
  pthread_t worker;
  bool threaded = pthread_create(&worker, NULL, nsys__gpu_reader, b) == 0;
  if (!threaded) nsys__gpu_reader(b);

  nsys__sidmap sm;
  memset(&sm, 0, sizeof sm);
  bool host_ok = nsys__read_runtime(b, &src, &ix->strings, &sm);
  nsys__phase("read CUDA API calls");
  host_ok = host_ok && nsys__read_nvtx(b, &src, &ix->strings, &sm);
  nsys__phase("read NVTX ranges");
  /* The host side (threads, API calls, NVTX ranges) needs nothing from the GPU
   * reader: assemble it while the worker still reads or sorts the ops. Thread
   * names are interned before the op names, in the same order as before. */
  uint32_t *tmp2final = NULL;
  int64_t *thread_gpid = NULL;
  nsys__join_table jt;
  memset(&jt, 0, sizeof jt);
  nsys__span_acc span = {false, 0, 0};
  if (host_ok && atomic_load(&b->stop) == 0) {
    tmp2final = nsys__assemble_threads(b, ix, &src, &sm);
    thread_gpid = nsys_xmalloc((size_t)(b->n_tmp ? b->n_tmp : 1) * sizeof(int64_t));
    for (uint32_t i = 0; i < b->n_tmp; i++) thread_gpid[tmp2final[i]] = nsys_gtid_gpid(b->tmp_gtid[i]);
    nsys__assemble_api(b, ix, tmp2final);
    nsys__raw_api_free(&b->api);
    nsys__assemble_nvtx(b, ix, tmp2final);
    nsys__phase("host: threads, api, nvtx");
    /* the API calls' half of the join and of the span need nothing from the GPU reader */
    nsys__join_prepare(ix, thread_gpid, &jt);
    nsys__span_add(&span, ix->api.start, ix->api.end, ix->api.n);
    nsys__span_add(&span, ix->nvtx.start, ix->nvtx.end, ix->nvtx.n);
    nsys__phase("host: join table, span");
  }
  nsys__sidmap_free(&sm);
  if (threaded) { /* the GPU reader closes it once done (always handed: it waits for it) */
    pthread_mutex_lock(&b->handoff_mu);
    b->host_db = src.db ? src.db : NSYS__HANDOFF_NONE;
    pthread_cond_signal(&b->handoff_cv);
    pthread_mutex_unlock(&b->handoff_mu);
    src.db = NULL;
  }
  nsys__src_close(&src);
  if (threaded) {
    for (unsigned spins = 0; !atomic_load(&b->op_done); spins++) {
      if (nsys_call_cancelled(call)) atomic_store(&b->stop, 1);
      if (spins % 20 == 0) nsys__report(b, 0, 85, "reading GPU activity");
      struct timespec ts = {0, 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  nsys__phase("wait for the GPU reader");
  if (nsys__timing_on)
    nsys_log("index build: GPU reader thread CPU %.1f ms (reading %.1f ms; this thread so far %.1f ms)",
             (double)b->worker_cpu_ns / 1e6, (double)b->worker_read_cpu_ns / 1e6,
             (double)(nsys__thread_cpu_ns() - cpu0) / 1e6);
  bool failed = !host_ok || b->op_failed || atomic_load(&b->stop);
  if (failed) {
    if (nsys_call_cancelled(call)) nsys_call_fail_cancelled(call);
    else if (b->host_failed) nsys_call_fail(call, NSYS_E_CORRUPT, "%s", b->host_err);
    else if (b->op_failed) nsys_call_fail(call, NSYS_E_CORRUPT, "%s", b->op_err);
    else nsys_call_fail_cancelled(call);
    free(tmp2final);
    free(thread_gpid);
    free(jt.direct);
    free(jt.slot);
    if (threaded) pthread_join(worker, NULL);
    nsys__build_free(b);
    free(b);
    nsys_index_free(ix);
    return NULL;
  }
  nsys_call_progress(call, 86, "joining API calls and GPU operations");
  nsys__remap_op_names(b, ix);
  nsys__phase("ops: names");
  nsys_call_progress(call, 90, "joining API calls and GPU operations");
  nsys__join_finish(b, ix, thread_gpid, &jt);
  nsys__phase("join");
  nsys_call_progress(call, 94, "nesting NVTX ranges");
  free(tmp2final);
  free(thread_gpid);
  int64_t ops_max_end = b->ops_max_end;
  if (threaded) pthread_join(worker, NULL); /* it has closed the host reader's connection */
  nsys__phase("join the GPU reader");
  nsys__build_free(b);
  free(b);
  nsys__span(ix, span, ops_max_end);
  nsys__phase("span");
  return ix;
}
