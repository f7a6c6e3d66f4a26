/* OpenACC trace records around CUDA API calls; see openacc_trace.h. */
#include "source/openacc_trace.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"

typedef struct {
  uint32_t pid, tid;
  int64_t start, end;
  int64_t file, func;
  int line;
  bool launch;
} nsys__acc_rec;

typedef struct {
  uint32_t pid, tid;
  int64_t t;
  uint32_t api;
} nsys__acc_call;

static int nsys__rec_cmp(const void *x, const void *y) {
  const nsys__acc_rec *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return (a->end < b->end) - (a->end > b->end); /* the outer one first */
}

static int nsys__call_cmp(const void *x, const void *y) {
  const nsys__acc_call *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return (a->t > b->t) - (a->t < b->t);
}

static bool nsys__has_col(sqlite3 *db, const char *table, const char *col) {
  char *sql = nsys_xasprintf("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
  sqlite3_stmt *st = NULL;
  bool ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  free(sql);
  return ok;
}

/* Appends the records of one table; false on a read error or cancel. */
static bool nsys__read_table(sqlite3 *db, const char *table, bool launch, nsys__acc_rec **v, uint32_t *n,
                             uint32_t *cap, nsys_task *task) {
  static const char *need[] = {"start", "end", "globalTid", "srcFile", "lineNo"};
  for (size_t k = 0; k < NSYS_ARRAY_LEN(need); k++)
    if (!nsys__has_col(db, table, need[k])) return true; /* not this export's */
  bool func = nsys__has_col(db, table, "funcName");
  char *sql = nsys_xasprintf("SELECT start, end, globalTid, srcFile, lineNo, %s FROM %s WHERE srcFile IS NOT NULL "
                             "AND lineNo > 0 AND globalTid IS NOT NULL AND start IS NOT NULL AND end IS NOT NULL",
                             func ? "funcName" : "NULL", table);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  free(sql);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    if (!nsys_task_cancelled(task))
      nsys_task_fail(task, NSYS_E_CORRUPT, "cannot read the profile's OpenACC records: %s", sqlite3_errmsg(db));
    return false;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == *cap) {
      *cap = *cap ? *cap * 2 : 256;
      *v = nsys_xrealloc(*v, sizeof **v * *cap);
    }
    int64_t g = sqlite3_column_int64(st, 2), line = sqlite3_column_int64(st, 4);
    if (line > 1000000000) continue;
    (*v)[(*n)++] = (nsys__acc_rec){nsys_gtid_pid(g), nsys_gtid_tid(g), sqlite3_column_int64(st, 0),
                                    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 3),
                                    sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5),
                                    (int)line, launch};
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    if (!nsys_task_cancelled(task))
      nsys_task_fail(task, NSYS_E_CORRUPT, "cannot read the profile's OpenACC records: %s", sqlite3_errmsg(db));
    return false;
  }
  return true;
}

static bool nsys__table_exists(sqlite3 *db, const char *name) {
  sqlite3_stmt *st = NULL;
  bool ok = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  return ok;
}

bool nsys_openacc_sites(sqlite3 *db, const nsys_index *ix, nsys_acc_site *out, nsys_task *task) {
  for (uint32_t a = 0; a < ix->api.n; a++) out[a] = (nsys_acc_site){0, -1, 0, false};
  static const struct { const char *table; bool launch; } tabs[] = {
      {"CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH", true},
      {"CUPTI_ACTIVITY_KIND_OPENACC_OTHER", false},
  };
  nsys__acc_rec *rec = NULL;
  uint32_t nr = 0, cap = 0;
  for (size_t k = 0; k < NSYS_ARRAY_LEN(tabs); k++) {
    if (!nsys__table_exists(db, tabs[k].table)) continue;
    if (!nsys__read_table(db, tabs[k].table, tabs[k].launch, &rec, &nr, &cap, task)) {
      free(rec);
      return false;
    }
  }
  if (!nr) return true;
  /* the calls that launched a kernel, by (thread, start) */
  nsys__acc_call *calls = nsys_xmalloc(sizeof *calls * (ix->api.n + 1));
  uint32_t nc = 0;
  for (uint32_t a = 0; a < ix->api.n; a++) {
    int32_t op = ix->api.first_op[a];
    if (op < 0 || (uint32_t)op >= ix->ops.n || ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
    calls[nc++] = (nsys__acc_call){th->pid, th->tid, ix->api.start[a], a};
  }
  qsort(rec, nr, sizeof *rec, nsys__rec_cmp);
  qsort(calls, nc, sizeof *calls, nsys__call_cmp);
  /* one sweep per thread: records open in start order on a stack (popped
   * lazily once ended); a call's innermost record is the top that holds it */
  uint32_t *stack = nsys_xmalloc(sizeof *stack * (nr + 1));
  uint32_t r = 0, depth = 0;
  for (uint32_t c = 0; c < nc; c++) {
    if ((c & 4095) == 0 && nsys_task_cancelled(task)) break;
    const nsys__acc_call *k = &calls[c];
    if (c == 0 || calls[c - 1].pid != k->pid || calls[c - 1].tid != k->tid) depth = 0;
    /* skip the records of earlier threads */
    while (r < nr && (rec[r].pid < k->pid || (rec[r].pid == k->pid && rec[r].tid < k->tid))) r++;
    while (r < nr && rec[r].pid == k->pid && rec[r].tid == k->tid && rec[r].start <= k->t) {
      stack[depth++] = r;
      r++;
    }
    while (depth && rec[stack[depth - 1]].end < k->t) depth--;
    if (depth) {
      const nsys__acc_rec *h = &rec[stack[depth - 1]];
      out[k->api] = (nsys_acc_site){h->file, h->func, h->line, h->launch};
    }
  }
  free(stack);
  free(calls);
  free(rec);
  if (nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task), false;
  return true;
}
