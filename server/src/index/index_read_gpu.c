/* The GPU ops reader: a worker thread with its own read-only connection
 * reads the kernel, memcpy, memset and CUDA graph launch tables into raw
 * rows (one temporary id per (device, stream, globalPid) track, names in a
 * worker-local string table), then groups and sorts them into the index's
 * tracks and ops (nsys__assemble_ops) while the host reader still runs. A
 * big kernel table is read in rowid ranges by more threads
 * (index_read_ranges.c); the rows come out the same. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_build_internal.h"
#include "profile/profile.h"

/* ---- GPU ops reader ----------------------------------------------------- */

static const char *const nsys__memcpy_names[] = {
    "[CUDA memcpy Unknown]", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memcpy HtoA]",
    "[CUDA memcpy AtoH]",    "[CUDA memcpy AtoA]", "[CUDA memcpy AtoD]", "[CUDA memcpy DtoA]",
    "[CUDA memcpy DtoD]",    "[CUDA memcpy HtoH]", "[CUDA memcpy PtoP]",
    "[CUDA memcpy Unified HtoD]", "[CUDA memcpy Unified DtoH]", "[CUDA memcpy Unified DtoD]",
};

static uint32_t nsys__track_hash(int32_t device, int64_t stream, int64_t gpid) {
  uint64_t h = ((uint64_t)(uint32_t)device * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)stream * 0xC2B2AE3D27D4EB4FULL) ^ ((uint64_t)gpid >> 24);
  h *= 0x165667B19E3779F9ULL;
  return (uint32_t)(h >> 32);
}

/* Id of the track (device, stream, gpid), in order of first appearance (the
 * GPU reader's temporary ids; a range reader's local ids). */
uint32_t nsys__track_map_id(nsys__track_map *m, int32_t device, int64_t stream, int64_t gpid) {
  if (m->last != UINT32_MAX) {
    const nsys__track_key *k = &m->keys[m->last];
    if (k->device == device && k->stream == stream && k->gpid == gpid) return m->last;
  }
  if ((m->n + 1) * 2 > m->hcap) { /* (re)hash */
    uint32_t ncap = m->hcap ? m->hcap * 2 : 64;
    uint32_t *nv = nsys_xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t t = 0; t < m->n; t++) {
      const nsys__track_key *k = &m->keys[t];
      uint32_t q = nsys__track_hash(k->device, k->stream, k->gpid) & (ncap - 1);
      while (nv[q]) q = (q + 1) & (ncap - 1);
      nv[q] = t + 1;
    }
    free(m->hv);
    m->hv = nv;
    m->hcap = ncap;
  }
  uint32_t mask = m->hcap - 1;
  uint32_t j = nsys__track_hash(device, stream, gpid) & mask;
  while (m->hv[j]) {
    const nsys__track_key *k = &m->keys[m->hv[j] - 1];
    if (k->device == device && k->stream == stream && k->gpid == gpid) return m->last = m->hv[j] - 1;
    j = (j + 1) & mask;
  }
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 16;
    NSYS__GROW(m->keys, m->cap);
  }
  uint32_t id = m->n++;
  m->keys[id] = (nsys__track_key){device, stream, gpid, id};
  m->hv[j] = id + 1;
  return m->last = id;
}

void nsys__track_map_free(nsys__track_map *m) {
  free(m->keys);
  free(m->hv);
  *m = (nsys__track_map)NSYS__TRACK_MAP_INIT;
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
  nsys_info_acc *info; /* the summary's GPU-table part */
  uint8_t info_arg[NSYS_INFO_GPU_NCOLS]; /* argument of each of its columns */
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
  int64_t s = nsys_time_clamp(sqlite3_value_int64(v[1])), e = nsys_time_clamp(sqlite3_value_int64(v[2]));
  r->start[i] = s;
  r->end[i] = e < s ? s : e;
  r->tgroup[i] = nsys__track_map_id(&b->tk, (int32_t)sqlite3_value_int64(v[3]), sqlite3_value_int64(v[4]),
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
  if (g->info) {
    sqlite3_value *iv[NSYS_INFO_GPU_NCOLS];
    for (int k = 0; k < NSYS_INFO_GPU_NCOLS; k++) iv[k] = v[g->info_arg[k]];
    nsys_info_gpu_acc_row(g->info, iv);
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
  nsys_info_acc *acc = b->p->info_acc;
  nsys_table logical = t == NSYS__SRC_KERNEL   ? NSYS_TBL_KERNEL
                       : t == NSYS__SRC_MEMCPY ? NSYS_TBL_MEMCPY
                       : t == NSYS__SRC_MEMSET ? NSYS_TBL_MEMSET
                                               : NSYS_TBL_GRAPH_TRACE;
  if (acc && !nsys_info_gpu_acc_table(acc, logical)) acc = NULL;
  /* the reader's arguments, then the summary's columns that are not among them */
  nsys__args args = {.n = 0};
  const char *base[] = {"rowid", "start", "end", "deviceId", "streamId", corr, gpid};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(base); i++) nsys__args_add(&args, base[i]);
  if (t == NSYS__SRC_KERNEL) {
    bool has_short = nsys__src_has_column(src, t, "shortName");
    bool has_dem = nsys__src_has_column(src, t, "demangledName");
    const char *sn = has_short ? "shortName" : has_dem ? "demangledName" : "-1";
    nsys__args_add(&args, sn);
    nsys__args_add(&args, has_dem ? "demangledName" : sn);
  } else if (t == NSYS__SRC_MEMCPY) {
    nsys__args_add(&args, nsys__src_has_column(src, t, "copyKind") ? "copyKind" : "0");
  } else if (t == NSYS__SRC_GRAPH) {
    nsys__args_add(&args, nsys__src_has_column(src, t, "graphId") ? "graphId" : "NULL");
  }
  nsys__gpu_rows g;
  memset(&g, 0, sizeof g);
  if (acc) {
    /* each of the summary's columns read once: an expression the reader
     * already passes (deviceId, streamId, start, end, shortName) is that
     * argument again, the same value */
    char info[600];
    nsys_info_gpu_cols(b->p, logical, info, sizeof info);
    nsys__args_map(&args, info, g.info_arg, NSYS_INFO_GPU_NCOLS);
  }
  /* the kernel table in rowid ranges on several readers (index_read_ranges.c):
   * this thread reads the first, rowid < bound[0] */
  int64_t bound[NSYS__RANGES_MAX];
  int k = t == NSYS__SRC_KERNEL ? nsys__ranges_plan(src, t, bound) : 1;
  if (t == NSYS__SRC_KERNEL) b->n_readers = k;
  char sql[2560];
  char *list = nsys__args_join(&args);
  if (k > 1)
    snprintf(sql, sizeof sql, "SELECT nsys_ai_gpu_rows(%s) FROM %s WHERE rowid < %lld", list, tbl,
             (long long)bound[0]);
  else
    snprintf(sql, sizeof sql, "SELECT nsys_ai_gpu_rows(%s) FROM %s", list, tbl);
  g.b = b;
  g.sm = sm;
  g.info = acc;
  g.kind = t == NSYS__SRC_KERNEL   ? NSYS_OP_KERNEL
           : t == NSYS__SRC_MEMCPY ? NSYS_OP_MEMCPY
           : t == NSYS__SRC_GRAPH  ? NSYS_OP_GRAPH
                                   : NSYS_OP_MEMSET;
  g.memset_name = nsys_strtab_intern(&b->op_strings, "[CUDA memset]", 13);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__memcpy_names); i++)
    g.memcpy_names[i] = nsys_strtab_intern(&b->op_strings, nsys__memcpy_names[i],
                                           strlen(nsys__memcpy_names[i]));
  g.memcpy_other = nsys_strtab_intern(&b->op_strings, "[CUDA memcpy]", 13);
  nsys__range *ranges = k > 1 ? nsys__ranges_start(b, k, bound, list, tbl, acc, g.info_arg) : NULL;
  free(list);
  int rc = nsys__read_rows(src->db, "nsys_ai_gpu_rows", sql, nsys__gpu_row, &g);
  atomic_fetch_add(&b->rows_done, g.since);
  bool ok = true;
  if (g.too_many) {
    nsys_task_fail(&b->op_task, NSYS_E_CORRUPT, "more than 4 billion GPU operations");
    ok = false;
  } else if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) {
    nsys_task_fail(&b->op_task, NSYS_E_CORRUPT, "reading %s: %s", tbl, sqlite3_errmsg(src->db));
    ok = false;
  }
  if (ranges) ok = nsys__ranges_finish(b, ranges, k, ok && atomic_load(&b->stop) == 0, sm, acc);
  return ok && atomic_load(&b->stop) == 0;
}

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

static void nsys__gpu_read(nsys__build *b);

/* The thread's task is the build's op_task: a cancelled request interrupts
 * the reader's statements (the progress handler of its connection). */
void *nsys__gpu_reader(void *arg) {
  nsys__build *b = arg;
  const nsys_task *prev = nsys_task_enter(&b->op_task);
  nsys__gpu_read(b);
  nsys_task_leave(prev);
  return NULL;
}

static void nsys__gpu_read(nsys__build *b) {
  int64_t t0 = nsys_now_ns();
  nsys__src src;
  nsys__sidmap sm[1];
  memset(sm, 0, sizeof sm);
  if (!nsys__src_open(&src, b->p, &b->op_task)) {
    atomic_store(&b->stop, 1);
    nsys__gpu_reader_done(b);
    return;
  }
  int64_t est = nsys__src_max_rowid(&src, NSYS__SRC_KERNEL) +
                nsys__src_max_rowid(&src, NSYS__SRC_MEMCPY) +
                nsys__src_max_rowid(&src, NSYS__SRC_MEMSET) +
                nsys__src_max_rowid(&src, NSYS__SRC_GRAPH);
  nsys__raw_ops_reserve(&b->ops, (uint32_t)NSYS_MIN(est + 16, (int64_t)UINT32_MAX - 2));
  if (b->p->info_acc) nsys_info_gpu_acc_begin(b->p->info_acc);
  static const nsys__src_table tabs[] = {NSYS__SRC_KERNEL, NSYS__SRC_MEMCPY, NSYS__SRC_MEMSET,
                                         NSYS__SRC_GRAPH};
  bool timing = getenv("NSYS_AI_INDEX_TIMING") != NULL;
  if (timing) nsys_log("index build: GPU reader before its tables: thread CPU %.1f ms", (double)nsys__thread_cpu_ns() / 1e6);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(tabs); i++) {
    int64_t c0 = nsys__thread_cpu_ns(), w0 = nsys_now_ns();
    uint32_t n0 = b->ops.n;
    if (!nsys__read_gpu_table(b, &src, tabs[i], sm)) {
      atomic_store(&b->stop, 1);
      break;
    }
    if (timing && nsys__src_has(&src, tabs[i]))
      nsys_log("index build: GPU reader table %s: %u rows, wall %.1f ms, thread CPU %.1f ms", src.table[tabs[i]],
               b->ops.n - n0, (double)(nsys_now_ns() - w0) / 1e6, (double)(nsys__thread_cpu_ns() - c0) / 1e6);
  }
  if (b->p->info_acc && atomic_load(&b->stop) == 0 && !nsys_task_failed(&b->op_task))
    nsys_info_gpu_acc_complete(b->p->info_acc);
  nsys__sidmap_free(&sm[0]);
  nsys__src_close(&src);
  b->worker_read_cpu_ns = nsys__thread_cpu_ns();
  b->worker_read_wall_ns = nsys_now_ns() - t0;
  /* group, sort and scatter the ops here, overlapping the host reader; names
   * stay in worker-local string ids until the caller remaps them */
  if (atomic_load(&b->stop) == 0 && !nsys_task_failed(&b->op_task)) {
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
}
