/* Run history in ROOT/.nsys-ai/runs.db. Every connection sets WAL, a busy
 * timeout and synchronous=FULL; every write is one BEGIN IMMEDIATE
 * transaction, so concurrent writers queue instead of failing and a killed
 * writer loses at most its own uncommitted transaction. */
#include "capture/history.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define NSYS__HISTORY_VERSION 1
#define NSYS__BUSY_MS 30000

struct nsys_history {
  sqlite3 *db;
  char *dir;
};

static const char *const nsys__schema_sql =
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, created_ns INTEGER NOT NULL,"
    " status TEXT NOT NULL, pid INTEGER NOT NULL, command TEXT, nsys_flags TEXT, git_commit TEXT,"
    " git_dirty INTEGER NOT NULL DEFAULT -1, env TEXT, gpu TEXT, report TEXT, summary TEXT, error TEXT,"
    " before_id INTEGER REFERENCES runs(id), coverage REAL, tagged_pct REAL, tagged_ranges INTEGER);"
    "CREATE TABLE IF NOT EXISTS notes ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " created_ns INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS notes_run ON notes(run_id, id);";

static int64_t nsys__utc_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool nsys__fail(nsys_history *h, nsys_task *t, const char *what) {
  return nsys_task_fail(t, NSYS_E_IO, "run history (%s/runs.db): %s: %s", h->dir, what, sqlite3_errmsg(h->db));
}

static bool nsys__exec(nsys_history *h, nsys_task *t, const char *sql) {
  if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) == SQLITE_OK) return true;
  return nsys__fail(h, t, sql);
}

static bool nsys__begin(nsys_history *h, nsys_task *t) { return nsys__exec(h, t, "BEGIN IMMEDIATE"); }
static bool nsys__commit(nsys_history *h, nsys_task *t) {
  if (nsys__exec(h, t, "COMMIT")) return true;
  sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
  return false;
}
static void nsys__rollback(nsys_history *h) { sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL); }

/* In an open transaction: a prepared statement (prepare's result, bindings
 * done). */
static sqlite3_stmt *nsys__prepare(nsys_history *h, const char *sql) {
  sqlite3_stmt *st = NULL;
  return sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) == SQLITE_OK ? st : NULL;
}

/* Steps the one write `st` of the open transaction and commits it; rolls back
 * on failure. */
static bool nsys__write_commit(nsys_history *h, nsys_task *t, sqlite3_stmt *st, const char *what) {
  bool ok = st && sqlite3_step(st) == SQLITE_DONE;
  if (!ok) nsys__fail(h, t, what);
  sqlite3_finalize(st);
  if (!ok) {
    nsys__rollback(h);
    return false;
  }
  return nsys__commit(h, t);
}

nsys_history *nsys_history_open(const char *root, bool create, nsys_task *t) {
  char *real = realpath(root, NULL);
  struct stat st;
  if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    nsys_task_fail(t, NSYS_E_IO, "workspace root %s is not a directory", root);
    free(real);
    return NULL;
  }
  nsys_history *h = nsys_xcalloc(1, sizeof *h);
  h->dir = nsys_xasprintf("%s/.nsys-ai", real);
  free(real);
  char *path = nsys_xasprintf("%s/runs.db", h->dir);
  if (!create && access(path, F_OK) != 0) {
    nsys_task_fail(t, NSYS_E_NOT_FOUND, "no run history in %s (nsys-ai profile or runs/record starts one)", h->dir);
    free(path);
    free(h->dir);
    free(h);
    return NULL;
  }
  if (mkdir(h->dir, 0700) == 0) { /* new: keep it out of version control */
    char *gi = nsys_xasprintf("%s/.gitignore", h->dir);
    FILE *f = fopen(gi, "wx");
    if (f) {
      fputs("# nsys-ai's run history and captures (see docs/protocol.md, Capture)\n*\n", f);
      fclose(f);
    }
    free(gi);
  } else if (errno != EEXIST) {
    nsys_task_fail(t, NSYS_E_IO, "cannot create %s: %s", h->dir, strerror(errno));
    free(path);
    free(h->dir);
    free(h);
    return NULL;
  }
  int rc = sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX,
                           NULL);
  free(path);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(h->db, NSYS__BUSY_MS);
    sqlite3_extended_result_codes(h->db, 1);
  }
  bool ok = rc == SQLITE_OK && nsys__exec(h, t, "PRAGMA journal_mode=WAL") &&
            nsys__exec(h, t, "PRAGMA synchronous=FULL") && nsys__exec(h, t, "PRAGMA foreign_keys=ON");
  if (ok) {
    ok = nsys__begin(h, t);
    if (ok) {
      int ver = 0;
      sqlite3_stmt *q = NULL;
      if (sqlite3_prepare_v2(h->db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        ver = sqlite3_column_int(q, 0);
      sqlite3_finalize(q);
      if (ver > NSYS__HISTORY_VERSION) {
        nsys__rollback(h);
        nsys_task_fail(t, NSYS_E_IO, "%s/runs.db was written by a newer nsys-ai (history version %d)", h->dir, ver);
        ok = false;
      } else {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version=%d", NSYS__HISTORY_VERSION);
        ok = nsys__exec(h, t, nsys__schema_sql) && nsys__exec(h, t, sql);
        ok = ok ? nsys__commit(h, t) : (nsys__rollback(h), false);
      }
    }
  }
  if (!ok) {
    if (rc != SQLITE_OK) nsys_task_fail(t, NSYS_E_IO, "cannot open %s/runs.db: %s", h->dir, sqlite3_errstr(rc));
    nsys_history_close(h);
    return NULL;
  }
  return h;
}

void nsys_history_close(nsys_history *h) {
  if (!h) return;
  sqlite3_close(h->db);
  free(h->dir);
  free(h);
}

const char *nsys_history_dir(const nsys_history *h) { return h->dir; }

static void nsys__bind_text(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

static char *nsys__col_text(sqlite3_stmt *st, int i) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return s ? nsys_xstrdup((const char *)s) : NULL;
}

#define NSYS__RUN_COLS                                                                               \
  "id, name, created_ns, status, pid, command, nsys_flags, git_commit, git_dirty, env, gpu, report," \
  " summary, error, coalesce(before_id, 0), coverage, tagged_pct, tagged_ranges"

static bool nsys__pid_gone(int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return true;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void nsys__read_run(sqlite3_stmt *st, nsys_run *r) {
  memset(r, 0, sizeof *r);
  r->id = sqlite3_column_int64(st, 0);
  r->name = nsys__col_text(st, 1);
  r->created_ns = sqlite3_column_int64(st, 2);
  r->status = nsys__col_text(st, 3);
  r->pid = sqlite3_column_int64(st, 4);
  r->command = nsys__col_text(st, 5);
  r->nsys_flags = nsys__col_text(st, 6);
  r->git_commit = nsys__col_text(st, 7);
  r->git_dirty = sqlite3_column_int(st, 8);
  r->env = nsys__col_text(st, 9);
  r->gpu = nsys__col_text(st, 10);
  r->report = nsys__col_text(st, 11);
  r->summary = nsys__col_text(st, 12);
  r->error = nsys__col_text(st, 13);
  r->before_id = sqlite3_column_int64(st, 14);
  r->has_stats = sqlite3_column_type(st, 15) != SQLITE_NULL;
  r->coverage = sqlite3_column_double(st, 15);
  r->tagged_pct = sqlite3_column_double(st, 16);
  r->tagged_ranges = sqlite3_column_int64(st, 17);
  r->interrupted = r->status && strcmp(r->status, "capturing") == 0 && nsys__pid_gone(r->pid);
}

/* Runs a prepared query that yields runs; appends them to *out. */
static bool nsys__collect(nsys_history *h, sqlite3_stmt *st, nsys_run **out, int *n, nsys_task *t) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    *out = nsys_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    nsys__read_run(st, &(*out)[(*n)++]);
  }
  if (rc == SQLITE_DONE) return true;
  return nsys__fail(h, t, "reading runs");
}

/* The one run `sql` selects with id bound to its parameter; when there is none,
 * NSYS_E_NOT_FOUND saying no run has that id, or (previous: the name of run id)
 * that none precedes it. */
static bool nsys__get_one_by_id(nsys_history *h, const char *sql, int64_t id, const char *previous, nsys_run *out,
                                nsys_task *t) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return nsys__fail(h, t, "reading a run");
  sqlite3_bind_int64(st, 1, id);
  nsys_run *v = NULL;
  int n = 0;
  bool ok = nsys__collect(h, st, &v, &n, t);
  sqlite3_finalize(st);
  if (ok && n == 0 && previous)
    ok = nsys_task_fail(t, NSYS_E_NOT_FOUND,
                        "no run with a report before %s in %s: profile again (nsys-ai profile --before %s)"
                        " to have two runs to compare",
                        previous, h->dir, previous);
  else if (ok && n == 0)
    ok = nsys_task_fail(t, NSYS_E_NOT_FOUND, "no run #%lld in %s", (long long)id, h->dir);
  if (ok) {
    *out = v[0];
    free(v);
  } else {
    nsys_runs_free(v, n);
  }
  return ok;
}

bool nsys_history_get_id(nsys_history *h, int64_t id, nsys_run *out, nsys_task *t) {
  return nsys__get_one_by_id(h, "SELECT " NSYS__RUN_COLS " FROM runs WHERE id = ?", id, NULL, out, t);
}

bool nsys_history_previous(nsys_history *h, const nsys_run *run, nsys_run *out, nsys_task *t) {
  return nsys__get_one_by_id(h,
                             "SELECT " NSYS__RUN_COLS " FROM runs WHERE report IS NOT NULL AND status IN ('ok', 'recorded')"
                             " AND id < ? ORDER BY id DESC LIMIT 1",
                             run->id, run->name, out, t);
}

bool nsys_history_add(nsys_history *h, const nsys_run *spec, nsys_run *out, nsys_task *t) {
  return nsys_history_add_with_note(h, spec, NULL, NULL, out, t);
}

bool nsys_history_add_with_note(nsys_history *h, const nsys_run *spec, const char *kind, const char *text,
                                nsys_run *out, nsys_task *t) {
  if (!nsys__begin(h, t)) return false;
  sqlite3_stmt *st = NULL;
  bool ok = sqlite3_prepare_v2(h->db,
                               "INSERT INTO runs (name, created_ns, status, pid, command, nsys_flags, git_commit,"
                               " git_dirty, env, gpu, report, summary, error, before_id)"
                               " VALUES (coalesce(?1, 'tmp-' || hex(randomblob(8))), ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
                               " ?9, ?10, ?11, ?12, ?13, nullif(?14, 0))",
                               -1, &st, NULL) == SQLITE_OK;
  if (ok) {
    nsys__bind_text(st, 1, spec->name);
    sqlite3_bind_int64(st, 2, nsys__utc_ns());
    nsys__bind_text(st, 3, spec->status ? spec->status : "recorded");
    sqlite3_bind_int64(st, 4, (int64_t)getpid());
    nsys__bind_text(st, 5, spec->command);
    nsys__bind_text(st, 6, spec->nsys_flags);
    nsys__bind_text(st, 7, spec->git_commit);
    sqlite3_bind_int(st, 8, spec->git_dirty);
    nsys__bind_text(st, 9, spec->env);
    nsys__bind_text(st, 10, spec->gpu);
    nsys__bind_text(st, 11, spec->report);
    nsys__bind_text(st, 12, spec->summary);
    nsys__bind_text(st, 13, spec->error);
    sqlite3_bind_int64(st, 14, spec->before_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
      ok = (sqlite3_extended_errcode(h->db) == SQLITE_CONSTRAINT_UNIQUE)
               ? nsys_task_fail(t, NSYS_E_INVALID_PARAMS, "a run named '%s' exists already", spec->name)
               : nsys__fail(h, t, "adding a run");
    }
  } else {
    nsys__fail(h, t, "adding a run");
  }
  sqlite3_finalize(st);
  int64_t id = sqlite3_last_insert_rowid(h->db);
  if (ok && !spec->name) {
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE runs SET name = 'r' || id WHERE id = %lld", (long long)id);
    ok = nsys__exec(h, t, sql);
  }
  if (ok && text) { /* in the same transaction: a killed writer leaves the run with its note or neither */
    sqlite3_stmt *nt = NULL;
    ok = sqlite3_prepare_v2(h->db, "INSERT INTO notes (run_id, created_ns, kind, text) VALUES (?, ?, ?, ?)", -1, &nt,
                            NULL) == SQLITE_OK;
    if (ok) {
      sqlite3_bind_int64(nt, 1, id);
      sqlite3_bind_int64(nt, 2, nsys__utc_ns());
      nsys__bind_text(nt, 3, kind);
      nsys__bind_text(nt, 4, text);
      ok = sqlite3_step(nt) == SQLITE_DONE;
    }
    sqlite3_finalize(nt);
    if (!ok) nsys__fail(h, t, "adding a note");
  }
  if (!ok) {
    nsys__rollback(h);
    return false;
  }
  if (!nsys__commit(h, t)) return false;
  return nsys_history_get_id(h, id, out, t);
}

bool nsys_history_finish(nsys_history *h, int64_t id, const char *status, const char *report, const char *summary,
                         const char *error, const char *gpu, nsys_task *t) {
  if (!nsys__begin(h, t)) return false;
  sqlite3_stmt *st = nsys__prepare(h, "UPDATE runs SET status = coalesce(?1, status), report = coalesce(?2, report),"
                                      " summary = coalesce(?3, summary), error = coalesce(?4, error),"
                                      " gpu = coalesce(?5, gpu) WHERE id = ?6");
  if (st) {
    nsys__bind_text(st, 1, status);
    nsys__bind_text(st, 2, report);
    nsys__bind_text(st, 3, summary);
    nsys__bind_text(st, 4, error);
    nsys__bind_text(st, 5, gpu);
    sqlite3_bind_int64(st, 6, id);
  }
  return nsys__write_commit(h, t, st, "updating a run");
}

bool nsys_history_set_stats(nsys_history *h, int64_t id, double coverage, double tagged_pct, int64_t tagged_ranges,
                            nsys_task *t) {
  if (!nsys__begin(h, t)) return false;
  sqlite3_stmt *st = nsys__prepare(h, "UPDATE runs SET coverage = ?1, tagged_pct = ?2, tagged_ranges = ?3 WHERE id = ?4");
  if (st) {
    sqlite3_bind_double(st, 1, coverage);
    sqlite3_bind_double(st, 2, tagged_pct);
    sqlite3_bind_int64(st, 3, tagged_ranges);
    sqlite3_bind_int64(st, 4, id);
  }
  return nsys__write_commit(h, t, st, "updating a run");
}

bool nsys_history_list(nsys_history *h, int64_t limit, nsys_run **out, int *n, nsys_task *t) {
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, "SELECT " NSYS__RUN_COLS " FROM runs ORDER BY id DESC LIMIT ?", -1, &st, NULL) !=
      SQLITE_OK)
    return nsys__fail(h, t, "listing runs");
  sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1);
  bool ok = nsys__collect(h, st, out, n, t);
  sqlite3_finalize(st);
  if (!ok) {
    nsys_runs_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return ok;
}

bool nsys_history_get(nsys_history *h, const char *ref, nsys_run *out, nsys_task *t) {
  sqlite3_stmt *st = NULL;
  const char *sql;
  int64_t k = -1;
  if (strcmp(ref, "latest") == 0 || strncmp(ref, "latest~", 7) == 0) {
    k = 0;
    if (ref[6] == '~') {
      char *end = NULL;
      errno = 0;
      long long v = strtoll(ref + 7, &end, 10);
      if (errno || !end || *end || end == ref + 7 || v < 0)
        return nsys_task_fail(t, NSYS_E_INVALID_PARAMS, "bad run reference '%s' (latest~K, K >= 0)", ref);
      k = v;
    }
    sql = "SELECT " NSYS__RUN_COLS " FROM runs WHERE report IS NOT NULL AND status IN ('ok', 'recorded')"
          " ORDER BY id DESC LIMIT 1 OFFSET ?";
  } else if (ref[0] == '#') {
    sql = "SELECT " NSYS__RUN_COLS " FROM runs WHERE id = CAST(substr(?, 2) AS INTEGER)";
  } else {
    sql = "SELECT " NSYS__RUN_COLS " FROM runs WHERE name = ?";
  }
  if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) return nsys__fail(h, t, "reading a run");
  if (k >= 0) sqlite3_bind_int64(st, 1, k);
  else sqlite3_bind_text(st, 1, ref, -1, SQLITE_TRANSIENT);
  nsys_run *v = NULL;
  int n = 0;
  bool ok = nsys__collect(h, st, &v, &n, t);
  sqlite3_finalize(st);
  if (ok && n == 0) ok = nsys_task_fail(t, NSYS_E_NOT_FOUND, "no run '%s' in %s", ref, h->dir);
  if (ok) {
    *out = v[0];
    free(v);
  } else {
    nsys_runs_free(v, n);
  }
  return ok;
}

bool nsys_history_add_note(nsys_history *h, int64_t run_id, const char *kind, const char *text, nsys_run_note *out,
                           nsys_task *t) {
  if (!nsys__begin(h, t)) return false;
  int64_t now = nsys__utc_ns();
  sqlite3_stmt *st = nsys__prepare(h, "INSERT INTO notes (run_id, created_ns, kind, text) VALUES (?, ?, ?, ?)");
  if (st) {
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, now);
    nsys__bind_text(st, 3, kind);
    nsys__bind_text(st, 4, text);
  }
  if (!nsys__write_commit(h, t, st, "adding a note")) return false;
  int64_t id = sqlite3_last_insert_rowid(h->db); /* this connection's: other writers do not change it */
  out->id = id;
  out->run_id = run_id;
  out->created_ns = now;
  out->kind = nsys_xstrdup(kind);
  out->text = nsys_xstrdup(text);
  return true;
}

bool nsys_history_notes(nsys_history *h, int64_t run_id, nsys_run_note **out, int *n, nsys_task *t) {
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, "SELECT id, run_id, created_ns, kind, text FROM notes WHERE run_id = ? ORDER BY id",
                         -1, &st, NULL) != SQLITE_OK)
    return nsys__fail(h, t, "reading notes");
  sqlite3_bind_int64(st, 1, run_id);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    *out = nsys_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    nsys_run_note *o = &(*out)[(*n)++];
    o->id = sqlite3_column_int64(st, 0);
    o->run_id = sqlite3_column_int64(st, 1);
    o->created_ns = sqlite3_column_int64(st, 2);
    o->kind = nsys__col_text(st, 3);
    o->text = nsys__col_text(st, 4);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return true;
  nsys_run_notes_free(*out, *n);
  *out = NULL;
  *n = 0;
  return nsys__fail(h, t, "reading notes");
}

void nsys_run_free(nsys_run *r) {
  if (!r) return;
  free(r->name), free(r->status), free(r->command), free(r->nsys_flags), free(r->git_commit), free(r->env);
  free(r->gpu), free(r->report), free(r->summary), free(r->error);
  memset(r, 0, sizeof *r);
}

void nsys_runs_free(nsys_run *r, int n) {
  for (int i = 0; i < n; i++) nsys_run_free(&r[i]);
  free(r);
}

void nsys_run_note_free(nsys_run_note *n) {
  if (!n) return;
  free(n->kind), free(n->text);
  memset(n, 0, sizeof *n);
}

void nsys_run_notes_free(nsys_run_note *n, int count) {
  for (int i = 0; i < count; i++) nsys_run_note_free(&n[i]);
  free(n);
}
