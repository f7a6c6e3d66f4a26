/* StringIds, loaded once at open and decoded to valid UTF-8
 * (nsys_utf8_sanitize: Windows exports hold CP-1252 bytes).
 *
 * Ids are usually dense (0..n-1) but a cut export may keep 126 strings with
 * ids up to 3.4M, and a hostile one may use negative or 2^62 ids. Ids below
 * a dense limit (about twice the row count, at least 64Ki) go into the
 * directly indexed p->strings array; the rest into sorted sparse arrays. */
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "profile/loader_internal.h"
#include "common/task.h"

/* Longest string kept; longer values (a captured stdout log, say) are cut. */
#define NSYS__MAX_STRING_BYTES (1 << 20)

typedef struct {
  int64_t id;
  char *s;
} nsys__sparse;

static int nsys__cmp_sparse(const void *a, const void *b) {
  int64_t x = ((const nsys__sparse *)a)->id, y = ((const nsys__sparse *)b)->id;
  return x < y ? -1 : x > y;
}

static char *nsys__decode(sqlite3_stmt *st, int col) {
  const char *txt = (const char *)sqlite3_column_text(st, col);
  if (!txt) return NULL;
  size_t n = (size_t)sqlite3_column_bytes(st, col);
  if (n > NSYS__MAX_STRING_BYTES) {
    n = NSYS__MAX_STRING_BYTES;
    /* do not cut a UTF-8 sequence in half */
    while (n > 0 && ((unsigned char)txt[n] & 0xC0) == 0x80) n--;
  }
  return nsys_utf8_sanitize(txt, n);
}

bool nsys_strings_load(nsys_profile *p, nsys_task *task) {
  char tbl[512];
  if (!nsys_profile_table_sql(p, NSYS_TBL_STRING_IDS, tbl, sizeof tbl)) return true;
  bool has_id = nsys_schema_has_column(p, NSYS_TBL_STRING_IDS, "id");
  bool has_value = nsys_schema_has_column(p, NSYS_TBL_STRING_IDS, "value");
  if (!has_id || !has_value) return true; /* unusable: names stay unknown */

  /* Size the dense part from the row count. */
  int64_t rows = 0;
  char *sql = nsys_xasprintf("SELECT count(*) FROM %s", tbl);
  sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
  free(sql);
  if (!st) return false;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) rows = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return nsys_profile_sql_fail(p, task, rc, "StringIds");

  int64_t dense_cap = rows * 2 + 65536;
  int64_t n_dense = 0; /* 1 + highest dense id seen */
  char **dense = NULL;
  int64_t dense_alloc = 0;
  nsys__sparse *sparse = NULL;
  int64_t n_sparse = 0, sparse_alloc = 0;

  sql = nsys_xasprintf("SELECT id, value FROM %s", tbl);
  st = nsys_profile_prepare(p, task, sql);
  free(sql);
  if (!st) return false;
  int64_t seen = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if ((++seen & 0xFFFF) == 0 && nsys_task_cancelled(task)) break;
    if (sqlite3_column_type(st, 0) == SQLITE_NULL) continue;
    int64_t id = sqlite3_column_int64(st, 0);
    char *s = nsys__decode(st, 1);
    if (!s) continue;
    if (id >= 0 && id < dense_cap) {
      if (id >= dense_alloc) {
        int64_t na = dense_alloc ? dense_alloc : 1024;
        while (na <= id) na *= 2;
        if (na > dense_cap) na = dense_cap;
        dense = nsys_xrealloc(dense, (size_t)na * sizeof *dense);
        memset(dense + dense_alloc, 0, (size_t)(na - dense_alloc) * sizeof *dense);
        dense_alloc = na;
      }
      free(dense[id]); /* a hostile table may repeat ids: last one wins */
      dense[id] = s;
      if (id + 1 > n_dense) n_dense = id + 1;
    } else {
      if (n_sparse == sparse_alloc) {
        sparse_alloc = sparse_alloc ? sparse_alloc * 2 : 64;
        sparse = nsys_xrealloc(sparse, (size_t)sparse_alloc * sizeof *sparse);
      }
      sparse[n_sparse].id = id;
      sparse[n_sparse].s = s;
      n_sparse++;
    }
  }
  sqlite3_finalize(st);
  p->strings = dense;
  p->n_strings = n_dense;
  if (n_sparse > 1) qsort(sparse, (size_t)n_sparse, sizeof *sparse, nsys__cmp_sparse);
  /* drop repeated sparse ids, keeping the first */
  int64_t w = 0;
  for (int64_t i = 0; i < n_sparse; i++) {
    if (w > 0 && sparse[w - 1].id == sparse[i].id) {
      free(sparse[i].s);
      continue;
    }
    sparse[w++] = sparse[i];
  }
  n_sparse = w;
  if (n_sparse) {
    p->sparse_ids = nsys_xmalloc((size_t)n_sparse * sizeof *p->sparse_ids);
    p->sparse_strings = nsys_xmalloc((size_t)n_sparse * sizeof *p->sparse_strings);
    for (int64_t i = 0; i < n_sparse; i++) {
      p->sparse_ids[i] = sparse[i].id;
      p->sparse_strings[i] = sparse[i].s;
    }
  }
  p->n_sparse = n_sparse;
  free(sparse);
  if (nsys_task_cancelled(task)) {
    nsys_task_fail_cancelled(task);
    return false;
  }
  if (rc != SQLITE_DONE) return nsys_profile_sql_fail(p, task, rc, "StringIds");
  return true;
}

void nsys_strings_free(nsys_profile *p) {
  for (int64_t i = 0; i < p->n_strings; i++) free(p->strings[i]);
  free(p->strings);
  for (int64_t i = 0; i < p->n_sparse; i++) free(p->sparse_strings[i]);
  free(p->sparse_ids);
  free(p->sparse_strings);
  p->strings = NULL;
  p->sparse_ids = NULL;
  p->sparse_strings = NULL;
  p->n_strings = p->n_sparse = 0;
}
