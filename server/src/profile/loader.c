/* Opening a profile: file checks, the read-only SQLite connection, the file
 * identity used for change detection, and the profile's lifetime.
 *
 * Read-only guarantee: the database is opened through the URI
 * `file:PATH?mode=ro&immutable=1`. mode=ro never writes; immutable=1 also
 * stops SQLite from taking locks or creating -journal/-wal/-shm files beside
 * the user's file (a WAL-mode database opened mode=ro alone may create them).
 * Since immutable tells SQLite the file cannot change, we keep the stat
 * identity (dev, inode, size, mtime) and re-check it on profile/info:
 * a deleted or replaced file gives -32013, and an in-place rewrite that
 * SQLite trips over mid-read gives -32016. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index.h"
#include "profile/loader_internal.h"
#include "common/task.h"

static const char nsys__sqlite_magic[16] = "SQLite format 3";

bool nsys_file_has_sqlite_magic(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char head[16];
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  return n == (ssize_t)sizeof head && memcmp(head, nsys__sqlite_magic, sizeof head) == 0;
}

/* URI-escapes a path for `file:` URIs: everything but unreserved characters
 * and '/' is %XX-encoded, so '?', '#', '%' and spaces in names are safe. */
static char *nsys__file_uri(const char *path) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_puts(&b, "file:");
  for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
    unsigned char c = *s;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
        c == '-' || c == '_' || c == '.' || c == '~')
      nsys_strbuf_putc(&b, (char)c);
    else
      nsys_strbuf_printf(&b, "%%%02X", c);
  }
  nsys_strbuf_puts(&b, "?mode=ro&immutable=1");
  return nsys_strbuf_steal(&b);
}

static int64_t nsys__mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

bool nsys_sql_quote_ident(const char *name, char *out, size_t cap) {
  size_t j = 0;
  if (cap < 3) return false;
  out[j++] = '"';
  for (const char *s = name; *s; s++) {
    if (j + 3 >= cap) {
      out[0] = '\0';
      return false;
    }
    if (*s == '"') out[j++] = '"';
    out[j++] = *s;
  }
  out[j++] = '"';
  out[j] = '\0';
  return true;
}

bool nsys_profile_table_sql(const nsys_profile *p, nsys_table t, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  if (t < 0 || t >= NSYS_TBL__COUNT || !p->schema.table[t]) return false;
  return nsys_sql_quote_ident(p->schema.table[t], out, cap);
}

static bool nsys__sql_fail_raw(nsys_profile *p, nsys_task *task, int prim, const char *msg,
                               const char *what);

/* Error messages quote SQLite, which quotes the (untrusted) file: make the
 * recorded message one line of valid UTF-8 again (control characters become
 * single spaces), cutting only at character boundaries. */
static void nsys__sanitize_err(nsys_task *task) {
  if (!task) return;
  size_t n = strnlen(task->err_msg, sizeof task->err_msg);
  char *clean = nsys_utf8_sanitize(task->err_msg, n);
  size_t m = 0;
  for (size_t i = 0; clean[i] && m < sizeof task->err_msg - 1; i++) {
    char c = clean[i];
    if ((unsigned char)c < 0x20 || c == 0x7F) c = ' ';
    if (c == ' ' && m > 0 && task->err_msg[m - 1] == ' ') continue;
    task->err_msg[m++] = c;
  }
  while (m > 0 && ((unsigned char)task->err_msg[m - 1] & 0xC0) == 0x80) {
    /* drop a sequence cut by the buffer end */
    size_t k = m - 1;
    while (k > 0 && ((unsigned char)task->err_msg[k] & 0xC0) == 0x80) k--;
    if (nsys_utf8_valid(task->err_msg + k, m - k)) break;
    m = k;
  }
  if (m > 0 && !nsys_utf8_valid(task->err_msg, m)) m--; /* a lone lead byte */
  task->err_msg[m] = '\0';
  free(clean);
}

bool nsys_profile_sql_fail(nsys_profile *p, nsys_task *task, int rc, const char *what) {
  int prim = rc & 0xFF;
  const char *msg = p && p->db ? sqlite3_errmsg(p->db) : sqlite3_errstr(rc);
  bool ok = nsys__sql_fail_raw(p, task, prim, msg, what);
  nsys__sanitize_err(task);
  return ok;
}

static bool nsys__sql_fail_raw(nsys_profile *p, nsys_task *task, int prim, const char *msg,
                               const char *what) {
  (void)p;
  /* a statement stopped by a cancelled request's progress handler */
  if (prim == SQLITE_INTERRUPT && nsys_task_cancelled(task)) {
    nsys_task_fail_cancelled(task);
    return false;
  }
  if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB || prim == SQLITE_IOERR ||
      prim == SQLITE_FORMAT || prim == SQLITE_RANGE || prim == SQLITE_MISMATCH ||
      prim == SQLITE_TOOBIG)
    nsys_task_fail(task, NSYS_E_CORRUPT, "profile database is corrupt (%s while reading %s)", msg,
                   what);
  else if (prim == SQLITE_NOMEM)
    nsys_task_fail(task, NSYS_E_INTERNAL, "out of memory while reading %s", what);
  else
    nsys_task_fail(task, NSYS_E_CORRUPT, "cannot read %s: %s", what, msg);
  return false;
}

sqlite3_stmt *nsys_profile_prepare(nsys_profile *p, nsys_task *task, const char *sql) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(p->db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    nsys_profile_sql_fail(p, task, rc, "the schema");
    return NULL;
  }
  return st;
}

bool nsys_profile_check_unchanged(const nsys_profile *p, nsys_task *task) {
  struct stat st;
  if (stat(p->path, &st) != 0) {
    nsys_task_fail(task, NSYS_E_PROFILE_CHANGED,
                   "profile %s was deleted or moved while open (%s); close it and open it again",
                   p->path, strerror(errno));
    return false;
  }
  if (st.st_dev != p->st_dev || st.st_ino != p->st_ino || (int64_t)st.st_size != p->st_size ||
      nsys__mtime_ns(&st) != p->st_mtime_ns) {
    nsys_task_fail(task, NSYS_E_PROFILE_CHANGED,
                   "profile %s was replaced or modified while open; close it and open it again",
                   p->path);
    return false;
  }
  return true;
}

static void nsys__profile_free(nsys_profile *p) {
  nsys_info_job_discard(p->info_job); /* first: it reads p's schema, strings and paths */
  p->info_job = NULL;
  p->info_acc = NULL; /* the job's */
  if (p->memo && p->memo_free) p->memo_free(p->memo); /* derived from the index: before it */
  if (p->search_memo && p->search_memo_free) p->search_memo_free(p->search_memo);
  nsys_index_free(atomic_load(&p->index));
  if (p->db) sqlite3_close_v2(p->db);
  nsys_strings_free(p);
  nsys_schema_free(&p->schema);
  nsys_info_free(&p->info);
  free(p->path);
  free(p->sqlite_path);
  free(p);
}

void nsys_profile_retain(nsys_profile *p) { atomic_fetch_add(&p->refcount, 1); }

void nsys_profile_release(nsys_profile *p) {
  if (p && atomic_fetch_sub(&p->refcount, 1) == 1) nsys__profile_free(p);
}

const char *nsys_profile_string(const nsys_profile *p, int64_t id) {
  if (id >= 0 && id < p->n_strings) return p->strings[id];
  int64_t lo = 0, hi = p->n_sparse - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (p->sparse_ids[mid] == id) return p->sparse_strings[mid];
    if (p->sparse_ids[mid] < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* stat + type checks on the user's path; records -32001 on failure. */
static bool nsys__stat_input(const char *path, struct stat *st, nsys_task *task) {
  if (stat(path, st) != 0) {
    nsys_task_fail(task, NSYS_E_FILE_NOT_FOUND, "cannot open profile %s: %s", path,
                   strerror(errno));
    return false;
  }
  if (S_ISDIR(st->st_mode)) {
    nsys_task_fail(task, NSYS_E_FILE_NOT_FOUND, "cannot open profile %s: it is a directory", path);
    return false;
  }
  if (!S_ISREG(st->st_mode)) {
    nsys_task_fail(task, NSYS_E_FILE_NOT_FOUND, "cannot open profile %s: not a regular file",
                   path);
    return false;
  }
  if (access(path, R_OK) != 0) {
    nsys_task_fail(task, NSYS_E_FILE_NOT_FOUND, "cannot read profile %s: %s", path,
                   strerror(errno));
    return false;
  }
  return true;
}

/* SQLite calls this every NSYS__SQL_POLL virtual-machine steps of a statement,
 * on the thread that steps it: a non-zero return interrupts the statement
 * (SQLITE_INTERRUPT), which nsys_profile_sql_fail() reports as cancelled.
 * Connections are shared between threads (p->db is FULLMUTEX), so the handler
 * reads the stepping thread's task, not one fixed when the connection opened.
 * 4096 steps take well under a millisecond. (COUNT(*) of a whole table is one
 * step that ignores the handler: nsys_profile_count_rows() interrupts it.) */
#define NSYS__SQL_POLL 4096

static int nsys__sql_poll(void *unused) {
  (void)unused;
  if (!nsys_task_cancelled(nsys_task_current())) return 0;
  nsys_task_note_interrupt();
  return 1;
}

/* Every connection to a profile: read-only whatever a query says, temp data
 * (sorts) in memory and never beside the user's file, bounded values (a
 * hostile file must not make one query allocate without bound), cancellable. */
static void nsys__configure_db(sqlite3 *db) {
  sqlite3_exec(db, "PRAGMA query_only=1; PRAGMA temp_store=MEMORY;", NULL, NULL, NULL);
  sqlite3_extended_result_codes(db, 1);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 256 * 1024 * 1024);
  sqlite3_progress_handler(db, NSYS__SQL_POLL, nsys__sql_poll, NULL);
}

sqlite3 *nsys_profile_open_db(const nsys_profile *p, int flags, nsys_task *task) {
  const char *path = p->sqlite_path ? p->sqlite_path : p->path;
  char *uri = nsys__file_uri(path);
  sqlite3 *db = NULL;
  int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | flags, NULL);
  free(uri);
  if (rc != SQLITE_OK) {
    nsys_task_fail(task, NSYS_E_IO, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return NULL;
  }
  nsys__configure_db(db);
  return db;
}

static bool nsys__open_db(nsys_profile *p, nsys_task *task) {
  int fd = open(p->sqlite_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    nsys_task_fail(task, NSYS_E_FILE_NOT_FOUND, "cannot read profile %s: %s", p->path,
                   strerror(errno));
    return false;
  }
  char head[16];
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n != (ssize_t)sizeof head || memcmp(head, nsys__sqlite_magic, sizeof head) != 0) {
    nsys_task_fail(task, NSYS_E_NOT_SQLITE,
                   "%s is not a SQLite database (export a report with: nsys export --type=sqlite)",
                   p->path);
    return false;
  }
  char *uri = nsys__file_uri(p->sqlite_path);
  int rc = sqlite3_open_v2(uri, &p->db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, NULL);
  free(uri);
  if (rc != SQLITE_OK) {
    int prim = rc & 0xFF;
    nsys_err e = prim == SQLITE_NOTADB ? NSYS_E_NOT_SQLITE
                 : prim == SQLITE_CANTOPEN ? NSYS_E_FILE_NOT_FOUND
                                           : NSYS_E_CORRUPT;
    nsys_task_fail(task, e, "cannot open %s as SQLite: %s", p->path,
                   p->db ? sqlite3_errmsg(p->db) : sqlite3_errstr(rc));
    return false;
  }
  nsys__configure_db(p->db);
  return true;
}

nsys_profile *nsys_profile_open(const char *path, nsys_task *task) {
  nsys_profile *p = nsys_profile_open_begin(path, task);
  if (p && !nsys_profile_open_finish(p, task)) {
    nsys_profile_release(p);
    return NULL;
  }
  return p;
}

bool nsys_profile_open_finish(nsys_profile *p, nsys_task *task) {
  if (!p->info_job) return true;
  nsys_info_job *j = p->info_job;
  p->info_job = NULL;
  int64_t t0 = nsys_now_ns(), ns = 0;
  if (!nsys_info_job_finish(j, p, task, &ns)) {
    nsys__sanitize_err(task);
    return false;
  }
  nsys_info_cache_save(p);
  if (getenv("NSYS_AI_VERBOSE"))
    nsys_log("opened %s: info %.1f ms beside the index (waited %.1f ms)", p->path, (double)ns / 1e6,
             (double)(nsys_now_ns() - t0) / 1e6);
  return true;
}

static nsys_profile *nsys__open_begin(const char *path, nsys_task *task, bool indexed);

nsys_profile *nsys_profile_open_begin(const char *path, nsys_task *task) {
  return nsys__open_begin(path, task, false);
}

nsys_profile *nsys_profile_open_begin_indexed(const char *path, nsys_task *task) {
  return nsys__open_begin(path, task, true);
}

static nsys_profile *nsys__open_begin(const char *path, nsys_task *task, bool indexed) {
  if (!path || !*path) {
    nsys_task_fail(task, NSYS_E_INVALID_PARAMS, "params.path: expected a non-empty path");
    return NULL;
  }
  struct stat st;
  if (!nsys__stat_input(path, &st, task)) return NULL;
  int64_t t0 = nsys_now_ns();

  nsys_profile *p = nsys_xcalloc(1, sizeof *p);
  atomic_init(&p->refcount, 1);
  atomic_init(&p->index, NULL);
  char *abs = realpath(path, NULL);
  p->path = abs ? abs : nsys_xstrdup(path);
  p->st_dev = st.st_dev;
  p->st_ino = st.st_ino;
  p->st_size = (int64_t)st.st_size;
  p->st_mtime_ns = nsys__mtime_ns(&st);
  p->info.duration_ns = -1;

  nsys_task_progress_begin(task, "Opening profile");
  if (nsys_path_is_report(p->path) && !nsys_file_has_sqlite_magic(p->path)) {
    p->sqlite_path = nsys_report_to_sqlite(p->path, &st, task);
    if (!p->sqlite_path) goto fail;
  } else {
    p->sqlite_path = nsys_xstrdup(p->path);
  }

  if (!nsys__open_db(p, task)) goto fail;
  if (!nsys_schema_load(p, task)) goto fail;
  nsys_task_progress(task, 5, "strings");
  if (!nsys_strings_load(p, task)) goto fail;
  if (nsys_task_cancelled(task)) {
    nsys_task_fail_cancelled(task);
    goto fail;
  }
  int64_t t1 = nsys_now_ns();
  bool cached = nsys_info_cache_load(p);
  if (!cached && !getenv("NSYS_AI_INFO_SYNC")) p->info_job = nsys_info_job_start(p, task, indexed);
  if (!cached && !p->info_job) {
    if (!nsys_info_build(p, task)) goto fail;
    nsys_info_cache_save(p);
  }
  if (getenv("NSYS_AI_VERBOSE"))
    nsys_log("opened %s: schema+strings %.1f ms, info %.1f ms%s", p->path, (double)(t1 - t0) / 1e6,
             (double)(nsys_now_ns() - t1) / 1e6,
             cached ? " (cached)" : p->info_job ? " (computing beside the index)" : "");
  return p;
fail:
  nsys__sanitize_err(task);
  nsys_profile_release(p);
  return NULL;
}

char *nsys_profile_cache_file(const nsys_profile *p, const char *prefix, uint64_t *path_hash) {
  char *dir = nsys_cache_dir();
  if (!dir) return NULL;
  uint64_t h = nsys_fnv1a(p->path, strlen(p->path), NSYS_FNV_SEED);
  *path_hash = h;
  uint64_t id[4] = {(uint64_t)p->st_dev, (uint64_t)p->st_ino, (uint64_t)p->st_size, (uint64_t)p->st_mtime_ns};
  h = nsys_fnv1a(id, sizeof id, h);
  char *path = nsys_xasprintf("%s/%s-%016llx.bin", dir, prefix, (unsigned long long)h);
  free(dir);
  return path;
}
