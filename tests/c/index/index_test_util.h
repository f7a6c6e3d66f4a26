/* Helpers shared by the index C tests: open a profile (through the loader
 * when it works, else a minimal read-only profile built here), make small
 * SQLite exports by hand; assertions are tests/c/common/nsys_check.h. */
#ifndef NSYS_INDEX_TEST_UTIL_H
#define NSYS_INDEX_TEST_UTIL_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/nsys_check.h"
#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "common/task.h"

typedef struct {
  nsys_profile *p;
  bool manual;
} t_profile;

static inline t_profile t_open(const char *path) {
  t_profile tp = {0};
  nsys_task task;
  nsys_task_init(&task);
  tp.p = nsys_profile_open(path, &task);
  if (tp.p) return tp;
  /* the loader is not available: a minimal profile (the index resolves the
   * schema and strings itself in that case) */
  nsys_profile *p = nsys_xcalloc(1, sizeof *p);
  p->path = nsys_xstrdup(path);
  p->sqlite_path = nsys_xstrdup(path);
  struct stat st;
  if (stat(path, &st) == 0) {
    p->st_dev = st.st_dev;
    p->st_ino = st.st_ino;
    p->st_size = st.st_size;
    p->st_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  }
  if (sqlite3_open_v2(path, &p->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  atomic_store(&p->refcount, 1);
  tp.p = p;
  tp.manual = true;
  return tp;
}

static inline void t_close(t_profile *tp) {
  if (!tp->p) return;
  if (tp->manual) {
    nsys_index_free(atomic_load(&tp->p->index));
    sqlite3_close(tp->p->db);
    free(tp->p->path);
    free(tp->p->sqlite_path);
    free(tp->p);
  } else {
    nsys_profile_release(tp->p);
  }
  tp->p = NULL;
}

static inline const nsys_index *t_index(t_profile *tp) {
  nsys_task task;
  nsys_task_init(&task);
  const nsys_index *ix = nsys_index_get(tp->p, &task);
  if (!ix) fprintf(stderr, "index build failed: %s\n", task.err_msg);
  nsys_index_wait_saves(); /* a fresh index is saved in the background: tests look at the file */
  return ix;
}

static inline void t_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "SQL failed: %s\n  %s\n", err, sql);
    exit(2);
  }
}

/* The nsys tables the index reads, with the 2026 column sets (subset). */
static inline void t_create_schema(sqlite3 *db) {
  t_exec(db,
         "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
         "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
         "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION','3.25.0');"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
         " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
         " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
         " shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER, blockX INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
         " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
         " correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
         " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
         " correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
         " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
         " returnValue INTEGER, callchainId INTEGER);"
         "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
         " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
         " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);"
         "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);");
}

/* The whole file (malloc'd, *n its length), or NULL when it cannot be read. */
static inline unsigned char *t_slurp(const char *file, size_t *n) {
  FILE *f = fopen(file, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = nsys_xmalloc((size_t)(sz > 0 ? sz : 0) + 1);
  *n = fread(buf, 1, (size_t)(sz > 0 ? sz : 0), f);
  fclose(f);
  return buf;
}

/* Calls fn on each of the shared real exports NSYS_AI_SHARED/profiles/<name>.sqlite
 * that exists; returns how many did. */
static inline int t_each_real(const char *const *names, size_t n, void (*fn)(const char *path)) {
  const char *shared = getenv("NSYS_AI_SHARED");
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    char *path = nsys_xasprintf("%s/profiles/%s.sqlite", shared ? shared : "../shared", names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      found++;
      fn(path);
    }
    free(path);
  }
  return found;
}

#endif
