/* Whole-table row counts, exact and cancellable (nsys_profile_count_rows).
 *
 * COUNT(*) without a WHERE is one virtual-machine step (SQLite walks the
 * table's pages itself) that never calls the progress handler, so a
 * cancelled request could not stop it (hundreds of ms on a 10M-row table).
 * sqlite3_interrupt() does stop it, but it stops every statement of the
 * connection: the counts therefore run on a private connection, and a watcher
 * thread interrupts that one when the task is cancelled. Tables the summary
 * already counted at open (nsys_info.tables, the same file: the registry
 * re-checks its identity) are answered from there without SQL. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cond_wait.h"
#include "common/util.h"
#include "profile/profile.h"

#define NSYS__WATCH_MS 5 /* how often the watcher reads the cancel flag */

typedef struct {
  sqlite3 *db;
  const nsys_task *task;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
} nsys__watch;

static void *nsys__watcher(void *arg) {
  nsys__watch *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->done) {
    /* again at every tick: an interrupt between two statements is forgotten
     * when the next one starts. The connection outlives this thread (joined
     * before it closes). */
    if (nsys_task_cancelled(w->task)) sqlite3_interrupt(w->db);
    nsys_cond_wait_ms(&w->cv, &w->mu, NSYS__WATCH_MS);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static int64_t nsys__summary_rows(const nsys_profile *p, const char *table) {
  for (int i = 0; i < p->info.n_tables; i++)
    if (strcmp(p->info.tables[i].name, table) == 0) return p->info.tables[i].rows;
  return -1;
}

static bool nsys__count_sql(sqlite3 *db, nsys_task *task, const char *table, int64_t *out) {
  char *sql = nsys_xasprintf("SELECT COUNT(*) FROM \"%s\"", table);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  free(sql);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return true;
  if ((rc & 0xFF) == SQLITE_INTERRUPT || nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task);
  *out = -1; /* a table SQLite cannot read (a virtual table of a missing module, say): no count */
  return true;
}

bool nsys_profile_count_rows(nsys_profile *p, nsys_task *task, const char *const *tables, int n,
                             int64_t *counts) {
  int todo = 0;
  for (int i = 0; i < n; i++) {
    counts[i] = strchr(tables[i], '"') ? -1 : nsys__summary_rows(p, tables[i]);
    if (counts[i] < 0 && !strchr(tables[i], '"')) todo++;
  }
  if (!todo) return !nsys_task_cancelled(task) || nsys_task_fail_cancelled(task);
  sqlite3 *db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, task);
  if (!db) return false;
  nsys__watch w = {.db = db, .task = task};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  pthread_t th;
  bool watching = pthread_create(&th, NULL, nsys__watcher, &w) == 0; /* else: not interruptible */
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    if (nsys_task_cancelled(task)) ok = nsys_task_fail_cancelled(task);
    else if (counts[i] < 0 && !strchr(tables[i], '"')) ok = nsys__count_sql(db, task, tables[i], &counts[i]);
  }
  if (watching) {
    pthread_mutex_lock(&w.mu);
    w.done = true;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(th, NULL);
  }
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  sqlite3_close(db);
  return ok;
}
