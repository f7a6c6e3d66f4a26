/* The kernel table read in K rowid ranges at once (many-core machines).
 *
 * The GPU reader reads the first range itself, exactly as it reads a whole
 * table; K-1 extra threads, each with its own read-only connection (the same
 * open as every reader: nsys__src_open), read the others into per-range
 * buffers of plain values (times, rowid, correlation id, StringIds ids of the
 * names, a range-local track id) and their part of the summary. Then one
 * sequential pass, range after range in rowid order, does everything that
 * depends on first appearance as the single reader does: temporary track
 * ids (nsys__track_tmp), op name interning (the GPU reader's sid map), and
 * merges the summary's parts. The raw ops thus come out identical, row for
 * row and id for id, to a single reader's.
 *
 * The ranges split [min(rowid), max(rowid)] into K equal spans of rowid
 * values; sparse rowids only make them uneven. A table whose rows a rowid
 * range cannot select in full-scan order (a view, WITHOUT ROWID, a virtual
 * table, a column that shadows the name rowid) is read by one reader. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "index/index_build_internal.h"
#include "profile/profile.h"

/* Below this many rowids a table reads in well under 0.1 s on one thread:
 * another thread and connection (schema parse, page cache warm-up) and the
 * sequential pass would not pay for themselves. */
#define NSYS__RANGE_MIN_ROWS 200000
/* At most this many readers by default: beyond 4 the sequential pass, the
 * other tables and the host reader make most of the critical path (bench/
 * README.md, branch cold15), and each reader holds its own page cache. */
#define NSYS__RANGE_MAX_DEFAULT 4

/* the rows of one range, in rowid order */
typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid, *corr, *name_sid, *full_sid;
  uint32_t *ltrack; /* range-local track id, in order of first appearance in the range */
} nsys__range_rows;

struct nsys__range {
  nsys__build *b;
  char sql[2560];
  nsys_task task; /* its errors; a child of the GPU reader's task */
  nsys__range_rows rows;
  nsys__track_map tracks; /* range-local ids */
  nsys_info_gpu_part *info;
  const uint8_t *info_arg;
  uint32_t since;
  bool too_many;
  int64_t cpu_ns, wall_ns;
  pthread_t th;
  bool started;
};

static void nsys__range_rows_reserve(nsys__range_rows *r, uint32_t want) {
  if (want <= r->cap) return;
  uint32_t cap = r->cap ? r->cap : 1024;
  while (cap < want) cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
  NSYS__GROW(r->start, cap); NSYS__GROW(r->end, cap); NSYS__GROW(r->rowid, cap);
  NSYS__GROW(r->corr, cap); NSYS__GROW(r->name_sid, cap); NSYS__GROW(r->full_sid, cap);
  NSYS__GROW(r->ltrack, cap);
  r->cap = cap;
}

static void nsys__range_rows_free(nsys__range_rows *r) {
  free(r->start); free(r->end); free(r->rowid); free(r->corr);
  free(r->name_sid); free(r->full_sid); free(r->ltrack);
  memset(r, 0, sizeof *r);
}

/* args as the GPU reader's kernel rows: rowid, start, end, deviceId,
 * streamId, correlationId, globalPid, shortName, demangledName, then the
 * summary's columns */
static void nsys__range_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__range *rg = sqlite3_user_data(ctx);
  nsys__range_rows *r = &rg->rows;
  if (argc < 9) {
    sqlite3_result_error(ctx, "range reader: too few columns", -1);
    return;
  }
  if (r->n == r->cap) nsys__range_rows_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  int64_t s = nsys_time_clamp(sqlite3_value_int64(v[1])), e = nsys_time_clamp(sqlite3_value_int64(v[2]));
  r->start[i] = s;
  r->end[i] = e < s ? s : e;
  r->ltrack[i] = nsys__track_map_id(&rg->tracks, (int32_t)sqlite3_value_int64(v[3]), sqlite3_value_int64(v[4]),
                                    sqlite3_value_int64(v[6]));
  r->corr[i] = sqlite3_value_int64(v[5]);
  r->name_sid[i] = sqlite3_value_int64(v[7]);
  r->full_sid[i] = sqlite3_value_int64(v[8]);
  if (rg->info) {
    sqlite3_value *iv[NSYS_INFO_GPU_NCOLS];
    for (int k = 0; k < NSYS_INFO_GPU_NCOLS; k++) iv[k] = v[rg->info_arg[k]];
    nsys_info_gpu_part_row(rg->info, iv);
  }
  r->n++;
  if (r->n == UINT32_MAX - 1) {
    rg->too_many = true;
    sqlite3_result_error(ctx, "more than 4 billion GPU operations", -1);
    return;
  }
  if (!nsys__tick(rg->b, &rg->since)) sqlite3_result_error(ctx, "stopped", -1);
}

static void nsys__range_read(nsys__range *rg) {
  nsys__build *b = rg->b;
  nsys__src src;
  if (!nsys__src_open(&src, b->p, &rg->task)) {
    atomic_store(&b->stop, 1);
    return;
  }
  int rc = nsys__read_rows(src.db, "nsys_ai_gpu_range", rg->sql, nsys__range_row, rg);
  atomic_fetch_add(&b->rows_done, rg->since);
  if (rg->too_many) nsys_task_fail(&rg->task, NSYS_E_CORRUPT, "more than 4 billion GPU operations");
  else if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0)
    nsys_task_fail(&rg->task, NSYS_E_CORRUPT, "reading %s: %s", src.table[NSYS__SRC_KERNEL],
                   sqlite3_errmsg(src.db));
  if (nsys_task_failed(&rg->task)) atomic_store(&b->stop, 1);
  nsys__src_close(&src);
}

static void *nsys__range_thread(void *arg) {
  nsys__range *rg = arg;
  int64_t t0 = nsys_now_ns();
  const nsys_task *prev = nsys_task_enter(&rg->task);
  nsys__range_read(rg);
  nsys_task_leave(prev);
  rg->cpu_ns = nsys__thread_cpu_ns();
  rg->wall_ns = nsys_now_ns() - t0;
  return NULL;
}

/* ---- how many readers ---------------------------------------------------- */

/* true when `WHERE rowid ...` selects the table's rows in the order of a
 * full scan: an ordinary rowid table, no column named like the rowid */
static bool nsys__rowid_table(const nsys__src *src, nsys__src_table t) {
  const char *name = src->p->schema.table[NSYS_TBL_KERNEL];
  if (t != NSYS__SRC_KERNEL || !name) return false;
  sqlite3_stmt *st = NULL;
  bool ok = false;
  if (sqlite3_prepare_v2(src->db,
                         "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1"
                         " AND sql NOT LIKE '%WITHOUT%ROWID%' AND sql NOT LIKE 'CREATE VIRTUAL%'),"
                         " (SELECT count(*) FROM pragma_table_info(?1)"
                         " WHERE lower(name) IN ('rowid', 'oid', '_rowid_'))",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    ok = sqlite3_column_int64(st, 0) == 1 && sqlite3_column_int64(st, 1) == 0;
  sqlite3_finalize(st);
  return ok;
}

int nsys__ranges_plan(const nsys__src *src, nsys__src_table t, int64_t *bound) {
  int k;
  const char *env = getenv("NSYS_AI_INDEX_READERS");
  bool forced = env && *env;
  if (forced) {
    k = atoi(env);
    if (k < 1) k = 1;
    if (k > NSYS__RANGES_MAX) k = NSYS__RANGES_MAX;
  } else {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    k = cores - 1 < NSYS__RANGE_MAX_DEFAULT ? (int)(cores - 1) : NSYS__RANGE_MAX_DEFAULT;
  }
  if (k <= 1 || !nsys__rowid_table(src, t)) return 1;
  char sql[512];
  /* two subqueries: each a b-tree end (O(log n)); min() and max() in one
   * SELECT would scan the whole table */
  snprintf(sql, sizeof sql, "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s)", src->table[t],
           src->table[t]);
  sqlite3_stmt *st = NULL;
  bool any = false;
  int64_t lo = 0, hi = 0;
  if (sqlite3_prepare_v2(src->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) == SQLITE_INTEGER && sqlite3_column_type(st, 1) == SQLITE_INTEGER) {
    lo = sqlite3_column_int64(st, 0);
    hi = sqlite3_column_int64(st, 1);
    any = true;
  }
  sqlite3_finalize(st);
  if (!any) return 1;
  uint64_t span = (uint64_t)hi - (uint64_t)lo; /* rowids - 1, exact in unsigned arithmetic */
  if (!forced && span < NSYS__RANGE_MIN_ROWS) return 1;
  uint64_t step = span / (uint64_t)k;
  if (step == 0) return 1;
  /* range i: [bound[i-1], bound[i]), the first from -inf, the last to +inf;
   * bound[k-1]: the max rowid (the last range's size estimate) */
  for (int i = 1; i < k; i++) bound[i - 1] = (int64_t)((uint64_t)lo + step * (uint64_t)i);
  bound[k - 1] = hi;
  return k;
}

/* a range's first reservation at most (rows; 60 bytes each) */
#define NSYS__RANGE_RESERVE_MAX (1u << 22)

/* ---- start, finish -------------------------------------------------------- */

nsys__range *nsys__ranges_start(nsys__build *b, int k, const int64_t *bound, const char *list,
                                const char *tbl, nsys_info_acc *acc, const uint8_t *info_arg) {
  nsys__range *rg = nsys_xcalloc((size_t)k, sizeof *rg);
  rg[0].cpu_ns = nsys__thread_cpu_ns(); /* range 0: the caller's, from here */
  rg[0].wall_ns = nsys_now_ns();
  for (int i = 1; i < k; i++) {
    nsys__range *r = &rg[i];
    r->b = b;
    r->tracks = (nsys__track_map)NSYS__TRACK_MAP_INIT;
    nsys_task_init_child(&r->task, &b->op_task);
    if (i < k - 1)
      snprintf(r->sql, sizeof r->sql, "SELECT nsys_ai_gpu_range(%s) FROM %s WHERE rowid >= %lld AND rowid < %lld",
               list, tbl, (long long)bound[i - 1], (long long)bound[i]);
    else
      snprintf(r->sql, sizeof r->sql, "SELECT nsys_ai_gpu_range(%s) FROM %s WHERE rowid >= %lld", list, tbl,
               (long long)bound[i - 1]);
    if (acc) {
      r->info = nsys_info_gpu_part_new(acc);
      r->info_arg = info_arg;
    }
    /* rowids in the range: its rows when they are dense; sparse ones would
     * reserve too much, hence the cap (the buffers grow by doubling) */
    uint64_t est = (uint64_t)bound[i] - (uint64_t)bound[i - 1] + 16;
    nsys__range_rows_reserve(&r->rows, (uint32_t)NSYS_MIN(est, (uint64_t)NSYS__RANGE_RESERVE_MAX));
    r->started = pthread_create(&r->th, NULL, nsys__range_thread, r) == 0;
    if (!r->started) nsys__range_thread(r); /* no thread: read it here, in order */
  }
  return rg;
}

/* Appends range r's rows to the raw ops in rowid order: what nsys__gpu_row
 * does per row that depends on the rows before it. */
static bool nsys__range_append(nsys__build *b, nsys__range *r, nsys__sidmap *sm) {
  nsys__raw_ops *o = &b->ops;
  const nsys__range_rows *rr = &r->rows;
  if ((uint64_t)o->n + rr->n >= UINT32_MAX - 1) {
    nsys_task_fail(&b->op_task, NSYS_E_CORRUPT, "more than 4 billion GPU operations");
    return false;
  }
  nsys__raw_ops_reserve(o, o->n + rr->n);
  uint32_t base = o->n;
  memcpy(o->start + base, rr->start, (size_t)rr->n * sizeof *rr->start);
  memcpy(o->end + base, rr->end, (size_t)rr->n * sizeof *rr->end);
  memcpy(o->rowid + base, rr->rowid, (size_t)rr->n * sizeof *rr->rowid);
  memcpy(o->corr + base, rr->corr, (size_t)rr->n * sizeof *rr->corr);
  memset(o->kind + base, NSYS_OP_KERNEL, rr->n);
  /* local track -> temporary track id, given at the track's first row */
  uint32_t nt = r->tracks.n;
  uint32_t *tmp = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof *tmp);
  for (uint32_t t = 0; t < nt; t++) tmp[t] = UINT32_MAX;
  for (uint32_t i = 0; i < rr->n; i++) {
    uint32_t lt = rr->ltrack[i];
    if (tmp[lt] == UINT32_MAX) {
      const nsys__track_key *k = &r->tracks.keys[lt];
      tmp[lt] = nsys__track_map_id(&b->tk, k->device, k->stream, k->gpid);
    }
    o->tgroup[base + i] = tmp[lt];
    o->name[base + i] = nsys__sidmap_lookup(sm, &b->strings, &b->op_strings, rr->name_sid[i], NSYS__NAME_PLAIN);
    o->full[base + i] = nsys__sidmap_lookup(sm, &b->strings, &b->op_strings, rr->full_sid[i], NSYS__NAME_PLAIN);
  }
  free(tmp);
  /* the single reader's last-track cache ends on the last row's track */
  if (rr->n) b->tk.last = o->tgroup[base + rr->n - 1];
  o->n += rr->n;
  return true;
}

bool nsys__ranges_finish(nsys__build *b, nsys__range *rg, int k, bool first_ok, nsys__sidmap *sm,
                         nsys_info_acc *acc) {
  bool ok = first_ok;
  if (!ok) atomic_store(&b->stop, 1);
  bool timing = getenv("NSYS_AI_INDEX_TIMING") != NULL;
  int64_t wait_ns = 0, append_ns = 0, append_cpu_ns = 0;
  if (timing)
    nsys_log("index build: kernel range reader 0 (the GPU reader): %u rows, wall %.1f ms, thread CPU %.1f ms",
             b->ops.n, (double)(nsys_now_ns() - rg[0].wall_ns) / 1e6,
             (double)(nsys__thread_cpu_ns() - rg[0].cpu_ns) / 1e6);
  for (int i = 1; i < k; i++) {
    nsys__range *r = &rg[i];
    int64_t t0 = nsys_now_ns();
    if (r->started) pthread_join(r->th, NULL);
    int64_t t1 = nsys_now_ns(), c1 = nsys__thread_cpu_ns();
    wait_ns += t1 - t0;
    if (nsys_task_failed(&r->task)) {
      nsys_task_fail_from(&b->op_task, &r->task);
      atomic_store(&b->stop, 1);
      ok = false;
    }
    if (ok && atomic_load(&b->stop) != 0) ok = false;
    if (ok) ok = nsys__range_append(b, r, sm);
    append_ns += nsys_now_ns() - t1;
    append_cpu_ns += nsys__thread_cpu_ns() - c1;
    if (r->info) {
      if (ok) nsys_info_gpu_part_merge(acc, r->info);
      else nsys_info_gpu_part_merge(NULL, r->info);
      r->info = NULL;
    }
    b->ranges_cpu_ns += r->cpu_ns;
    if (timing)
      nsys_log("index build: kernel range reader %d: %u rows, wall %.1f ms, thread CPU %.1f ms", i, r->rows.n,
               (double)r->wall_ns / 1e6, (double)r->cpu_ns / 1e6);
    nsys__range_rows_free(&r->rows);
    nsys__track_map_free(&r->tracks);
  }
  free(rg);
  if (timing)
    nsys_log("index build: kernel ranges: waited %.1f ms for readers 1..%d, sequential pass %.1f ms"
             " (thread CPU %.1f ms)", (double)wait_ns / 1e6, k - 1, (double)append_ns / 1e6,
             (double)append_cpu_ns / 1e6);
  if (!ok) atomic_store(&b->stop, 1);
  return ok;
}
