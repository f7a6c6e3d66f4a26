/* Cold build of the index from the SQLite export.
 *
 * Two readers run at once, each on its own read-only connection: a worker
 * thread reads the GPU op tables (kernels, memcpy, memset, graph launches) while the calling
 * thread reads CUDA API calls, NVTX ranges and thread names and reports
 * progress (on 3+ cores the GPU reader splits a big kernel table into rowid
 * ranges read by more threads: index_read_ranges.c). Rows reach C through
 * an aggregate SQL function called once per
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

#include "common/util.h"
#include "index/index_build_internal.h"
#include "profile/profile.h"
#include "common/task.h"

/* ---- raw rows in source order (types: index_build_internal.h) ----------- */

/* Large arrays (the row and index columns, megabytes each) are 2 MiB aligned
 * and marked for transparent huge pages: their first touch then costs one
 * page fault per 2 MiB instead of one per 4 KiB (the build's system time was
 * mostly those faults), and the gathers' random reads miss the TLB less.
 * Plain malloc'd memory: free() releases it. */
#define NSYS__HUGE ((size_t)2 << 20)

void *nsys__big_alloc(size_t bytes) {
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

void nsys__raw_ops_reserve(nsys__raw_ops *r, uint32_t want) {
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

void nsys__raw_api_reserve(nsys__raw_api *r, uint32_t want) {
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

void nsys__raw_nvtx_reserve(nsys__raw_nvtx *r, uint32_t want) {
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

/* ---- shared build state (nsys__build: index_build_internal.h) ----------- */

const char nsys__handoff_none = 0;

int64_t nsys__thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool nsys__tick_slow(nsys__build *b, uint32_t *since) {
  atomic_fetch_add(&b->rows_done, *since);
  *since = 0;
  if (nsys_task_cancelled(b->task)) atomic_store(&b->stop, 1);
  return atomic_load(&b->stop) == 0;
}

void nsys__report(nsys__build *b, int lo, int hi, const char *msg) {
  int64_t total = b->rows_total > 0 ? b->rows_total : 1;
  int64_t done = atomic_load(&b->rows_done);
  if (done > total) done = total;
  nsys_task_progress(b->task, lo + (int)((hi - lo) * done / total), msg);
}

/* Rows are read through an aggregate SQL function: SQLite calls it once per
 * row with the selected columns (the same values sqlite3_column_* would give),
 * which avoids a sqlite3_step() round trip and one API call per column. A
 * callback stops the scan by raising an error (cancel, row limit). */
static void nsys__rows_final(sqlite3_context *ctx) { sqlite3_result_null(ctx); }

/* Runs `SELECT fn(cols) FROM ...` with fn = step on the private connection.
 * Returns the final sqlite3_step code (SQLITE_DONE on success). */
int nsys__read_rows(sqlite3 *db, const char *fn, const char *sql,
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

static void nsys__build_free(nsys__build *b) {
  pthread_mutex_destroy(&b->handoff_mu);
  pthread_cond_destroy(&b->handoff_cv);
  nsys__track_map_free(&b->tk);
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

nsys_index *nsys__index_build_fresh(nsys_profile *p, nsys_task *task) {
  nsys__timing_on = getenv("NSYS_AI_INDEX_TIMING") != NULL;
  nsys__t_last = nsys_now_ns();
  int64_t cpu0 = nsys__thread_cpu_ns();
  nsys__cpu_last = cpu0;
  nsys__build *b = nsys_xcalloc(1, sizeof *b);
  b->p = p;
  b->task = task;
  b->tk = (nsys__track_map)NSYS__TRACK_MAP_INIT;
  b->ops_max_end = INT64_MIN;
  pthread_mutex_init(&b->handoff_mu, NULL);
  pthread_cond_init(&b->handoff_cv, NULL);
  nsys_strtab_init(&b->op_strings);
  nsys_task_init_child(&b->op_task, task);
  nsys_task_init_child(&b->host_task, task);
  nsys__src src;
  if (!nsys__src_open(&src, p, task)) {
    pthread_mutex_destroy(&b->handoff_mu);
    pthread_cond_destroy(&b->handoff_cv);
    free(b);
    return NULL;
  }
  nsys__strings_init(&b->strings, p, &src);
  b->rows_total = nsys__src_max_rowid(&src, NSYS__SRC_KERNEL) +
                  nsys__src_max_rowid(&src, NSYS__SRC_MEMCPY) +
                  nsys__src_max_rowid(&src, NSYS__SRC_MEMSET) +
                  nsys__src_max_rowid(&src, NSYS__SRC_GRAPH) +
                  nsys__src_max_rowid(&src, NSYS__SRC_RUNTIME) +
                  nsys__src_max_rowid(&src, NSYS__SRC_NVTX);
  nsys_task_progress_begin(task, "Indexing profile");
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
      if (nsys_task_cancelled(task)) atomic_store(&b->stop, 1);
      if (spins % 20 == 0) nsys__report(b, 0, 85, "reading GPU activity");
      struct timespec ts = {0, 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  nsys__phase("wait for the GPU reader");
  if (nsys__timing_on)
    nsys_log("index build: GPU reader thread CPU %.1f ms (reading %.1f ms, wall %.1f ms; this thread so far"
             " %.1f ms); kernel table readers %d, the extra ones' CPU %.1f ms",
             (double)b->worker_cpu_ns / 1e6, (double)b->worker_read_cpu_ns / 1e6,
             (double)b->worker_read_wall_ns / 1e6,
             (double)(nsys__thread_cpu_ns() - cpu0) / 1e6, b->n_readers ? b->n_readers : 1,
             (double)b->ranges_cpu_ns / 1e6);
  bool failed = !host_ok || nsys_task_failed(&b->op_task) || atomic_load(&b->stop);
  if (failed) {
    if (nsys_task_cancelled(task)) nsys_task_fail_cancelled(task);
    else if (nsys_task_failed(&b->host_task)) nsys_task_fail_from(task, &b->host_task);
    else if (nsys_task_failed(&b->op_task)) nsys_task_fail_from(task, &b->op_task);
    else nsys_task_fail_cancelled(task);
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
  nsys_task_progress(task, 86, "joining API calls and GPU operations");
  nsys__remap_op_names(b, ix);
  nsys__phase("ops: names");
  nsys_task_progress(task, 90, "joining API calls and GPU operations");
  nsys__join_finish(b, ix, thread_gpid, &jt);
  nsys__phase("join");
  nsys_task_progress(task, 94, "nesting NVTX ranges");
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
