/* profile/query {profileId, sql, maxRows?, timeoutMs?}: one read-only SELECT
 * on the profile's SQLite file (the MCP tool sql_query).
 *
 * Four independent guards keep it read-only and bounded:
 *   1. a private connection opened like every other (nsys_profile_open_db:
 *      mode=ro&immutable=1, so SQLite itself cannot write the file);
 *   2. an authorizer that allows only SELECT, reading columns, functions and
 *      recursive CTEs: INSERT/UPDATE/DELETE, CREATE/DROP, ATTACH/DETACH,
 *      PRAGMA, transactions and the rest are refused while preparing;
 *   3. exactly one statement, and sqlite3_stmt_readonly() must agree;
 *   4. a progress handler that interrupts the query after timeoutMs or on
 *      cancellation, and maxRows / a byte limit on what is returned. */
#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/param_specs.gen.h"
#include "common/utf8.h"
#include "common/util.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

#define NSYS__QUERY_MAX_BYTES ((size_t)2 << 20) /* the reply-size rule (methods/reply_limit.h) */
#define NSYS__QUERY_CELL_MAX 4096               /* bytes of one text cell */
#define NSYS__QUERY_BLOB_MAX 64                 /* bytes of a blob shown, as hex */

typedef struct {
  nsys_call *call;
  int64_t deadline_ns;
  bool timed_out;
} nsys__query_watch;

static int nsys__query_authorize(void *ud, int action, const char *a, const char *b, const char *c,
                                 const char *d) {
  (void)ud, (void)a, (void)b, (void)c, (void)d;
  switch (action) {
  case SQLITE_SELECT:
  case SQLITE_READ:
  case SQLITE_FUNCTION:
  case SQLITE_RECURSIVE: return SQLITE_OK;
  default: return SQLITE_DENY;
  }
}

static int nsys__query_progress(void *ud) {
  nsys__query_watch *w = ud;
  if (nsys_call_cancelled(w->call)) return 1;
  if (nsys_now_ns() > w->deadline_ns) {
    w->timed_out = true;
    return 1;
  }
  return 0;
}

/* Skips whitespace, semicolons and SQL comments (an unterminated one runs to the end). */
static const char *nsys__sql_skip(const char *s) {
  for (;;) {
    if (*s == ';' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f') s++;
    else if (s[0] == '-' && s[1] == '-') s += strcspn(s, "\n");
    else if (s[0] == '/' && s[1] == '*') {
      const char *e = strstr(s + 2, "*/");
      s = e ? e + 2 : s + strlen(s);
    } else return s;
  }
}

/* True when s holds nothing but whitespace, semicolons and comments. */
static bool nsys__sql_blank(const char *s) { return *nsys__sql_skip(s) == '\0'; }

/* True when the statement starts with SELECT, WITH or VALUES: a statement the
 * authorizer is never asked about (REINDEX on a file without indexes) is
 * still refused. */
static bool nsys__sql_is_select(const char *s) {
  s = nsys__sql_skip(s);
  static const char *const kw[] = {"select", "with", "values"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(kw); i++) {
    size_t n = strlen(kw[i]);
    if (strncasecmp(s, kw[i], n) == 0 && !(isalnum((unsigned char)s[n]) || s[n] == '_')) return true;
  }
  return false;
}

static cJSON *nsys__query_cell(sqlite3_stmt *st, int i, size_t *bytes) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_INTEGER: *bytes += 20; return nsys_json_i64(sqlite3_column_int64(st, i));
  case SQLITE_FLOAT: *bytes += 24; return cJSON_CreateNumber(sqlite3_column_double(st, i));
  case SQLITE_NULL: *bytes += 4; return cJSON_CreateNull();
  case SQLITE_BLOB: {
    const unsigned char *v = sqlite3_column_blob(st, i);
    int n = sqlite3_column_bytes(st, i);
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    nsys_strbuf_puts(&b, "x'");
    for (int k = 0; k < n && k < NSYS__QUERY_BLOB_MAX; k++) nsys_strbuf_printf(&b, "%02x", v[k]);
    nsys_strbuf_puts(&b, n > NSYS__QUERY_BLOB_MAX ? "'..." : "'");
    *bytes += b.len;
    cJSON *o = cJSON_CreateString(b.data);
    nsys_strbuf_free(&b);
    return o;
  }
  default: {
    const char *t = (const char *)sqlite3_column_text(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    if (n > NSYS__QUERY_CELL_MAX) n = NSYS__QUERY_CELL_MAX; /* sanitizing repairs a cut character */
    char *s = nsys_utf8_sanitize(t ? t : "", n);
    *bytes += n + 2;
    cJSON *o = cJSON_CreateString(s);
    free(s);
    return o;
  }
  }
}

cJSON *nsys_method_profile_query(nsys_call *call) {
  const char *sql = NULL;
  int64_t max_rows = 200, timeout_ms = 5000;
  if (!nsys_param_string(call, "sql", true, &sql)) return NULL;
  if (!nsys_param_int64(call, NSYS_P_PROFILE_QUERY_MAX_ROWS, &max_rows)) return NULL;
  if (!nsys_param_int64(call, NSYS_P_PROFILE_QUERY_TIMEOUT_MS, &timeout_ms)) return NULL;
  if (nsys__sql_blank(sql)) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.sql: no statement");
  if (!nsys__sql_is_select(sql))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.sql: only a read-only SELECT (or WITH ... SELECT) is allowed");
  nsys_profile *p = nsys_param_profile(call, "profileId");
  if (!p) return NULL;
  sqlite3 *db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &call->task);
  nsys_profile_release(p);
  if (!db) return NULL;
  int64_t t0 = nsys_now_ns();
  nsys__query_watch watch = {call, t0 + timeout_ms * 1000000, false};
  sqlite3_set_authorizer(db, nsys__query_authorize, NULL);
  sqlite3_progress_handler(db, 1000, nsys__query_progress, &watch);
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
  cJSON *res = NULL;
  if (rc != SQLITE_OK || !st) {
    if (nsys_call_cancelled(call)) nsys_call_fail_cancelled(call);
    else if (watch.timed_out)
      nsys_call_fail(call, NSYS_E_QUERY_TIMEOUT, "the query was not prepared within %lld ms", (long long)timeout_ms);
    else {
      char *m = nsys_rpc_echo(st || rc != SQLITE_OK ? sqlite3_errmsg(db) : "no statement", 300);
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.sql: %s%s", m,
                     rc == SQLITE_AUTH ? " (only a read-only SELECT is allowed: no writes, ATTACH or PRAGMA)" : "");
      free(m);
    }
    goto done;
  }
  if (!nsys__sql_blank(tail)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.sql: one statement only");
    goto done;
  }
  if (!sqlite3_stmt_readonly(st)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.sql: only a read-only SELECT is allowed");
    goto done;
  }
  res = cJSON_CreateObject();
  cJSON *cols = cJSON_AddArrayToObject(res, "columns");
  int nc = sqlite3_column_count(st);
  for (int i = 0; i < nc; i++) {
    const char *name = sqlite3_column_name(st, i);
    char *s = nsys_utf8_sanitize(name ? name : "", name ? strlen(name) : 0);
    cJSON_AddItemToArray(cols, cJSON_CreateString(s));
    free(s);
  }
  cJSON *rows = cJSON_AddArrayToObject(res, "rows");
  int64_t n = 0;
  size_t bytes = 0;
  bool truncated = false;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n >= max_rows || bytes >= NSYS__QUERY_MAX_BYTES) {
      truncated = true;
      break;
    }
    cJSON *row = cJSON_CreateArray();
    for (int i = 0; i < nc; i++) cJSON_AddItemToArray(row, nsys__query_cell(st, i, &bytes));
    cJSON_AddItemToArray(rows, row);
    n++;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    cJSON_Delete(res);
    res = NULL;
    if (nsys_call_cancelled(call)) nsys_call_fail_cancelled(call);
    else if (watch.timed_out)
      nsys_call_fail(call, NSYS_E_QUERY_TIMEOUT, "the query ran past timeoutMs (%lld ms) and was interrupted",
                     (long long)timeout_ms);
    else {
      char *m = nsys_rpc_echo(sqlite3_errmsg(db), 300);
      nsys_call_fail(call, rc == SQLITE_CORRUPT ? NSYS_E_CORRUPT : NSYS_E_INVALID_PARAMS, "params.sql: %s", m);
      free(m);
    }
    goto done;
  }
  nsys_json_add_i64(res, "rowCount", n);
  cJSON_AddBoolToObject(res, "truncated", truncated);
  cJSON_AddNumberToObject(res, "elapsedMs", (double)(nsys_now_ns() - t0) / 1e6);
done:
  sqlite3_finalize(st);
  sqlite3_close(db);
  return res;
}
