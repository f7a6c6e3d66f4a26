/* nsys Python backtraces at CUDA API calls; see python_backtrace.h. */
#include "source/python_backtrace.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "source/defs.h"
#include "source/workspace.h"

static uint64_t nsys__le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

bool nsys_pybt_decode(const uint8_t *data, size_t n, nsys_pybt_frame *out, uint32_t cap, uint32_t *nframes) {
  *nframes = 0;
  if (!data || n < 16) return false;
  uint64_t nf = nsys__le64(data + 8);
  if (nf == 0 || nf > NSYS_PYBT_MAX_FRAMES || n != 16 + 24 * nf) return false;
  for (uint64_t k = 0; k < nf; k++) {
    const uint8_t *f = data + 16 + 24 * k;
    uint64_t func = nsys__le64(f), file = nsys__le64(f + 8), line = nsys__le64(f + 16);
    if (func > INT64_MAX || file > INT64_MAX || line > INT64_MAX) return false;
    if (k < cap) out[k] = (nsys_pybt_frame){(int64_t)func, (int64_t)file, (int64_t)line};
  }
  *nframes = (uint32_t)nf;
  return true;
}

static int nsys__hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int nsys__b64val(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool nsys_pybt_text_bytes(const char *text, size_t n, uint8_t **out, size_t *outn) {
  *out = NULL;
  *outn = 0;
  if (!text) return false;
  if (n >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text += 2, n -= 2;
  bool hex = n > 0 && n % 2 == 0;
  for (size_t i = 0; i < n && hex; i++) hex = nsys__hexval(text[i]) >= 0;
  if (hex) {
    uint8_t *b = nsys_xmalloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++)
      b[i] = (uint8_t)(nsys__hexval(text[2 * i]) << 4 | nsys__hexval(text[2 * i + 1]));
    *out = b;
    *outn = n / 2;
    return true;
  }
  /* base64 (standard alphabet, '=' padding) */
  if (n == 0 || n % 4 != 0) return false;
  size_t pad = (text[n - 1] == '=') + (n >= 2 && text[n - 2] == '=');
  uint8_t *b = nsys_xmalloc(n / 4 * 3 + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int v[4];
    for (int k = 0; k < 4; k++) {
      bool padded = i + (size_t)k >= n - pad;
      v[k] = padded ? 0 : nsys__b64val(text[i + (size_t)k]);
      if (v[k] < 0) {
        free(b);
        return false;
      }
    }
    uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    b[o++] = (uint8_t)(w >> 16);
    b[o++] = (uint8_t)(w >> 8);
    b[o++] = (uint8_t)w;
  }
  *out = b;
  *outn = o - pad;
  return true;
}

/* ---- reading the marks ---- */

typedef struct {
  uint32_t pid, tid;
  int64_t t;
  nsys_pybt_site site;
} nsys__mark;

typedef struct {
  uint32_t pid, tid;
  int64_t start, end;
  uint32_t api;
} nsys__call;

static int nsys__mark_cmp(const void *x, const void *y) {
  const nsys__mark *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return (a->t > b->t) - (a->t < b->t);
}

static int nsys__call_cmp(const void *x, const void *y) {
  const nsys__call *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return (a->api > b->api) - (a->api < b->api);
}

typedef struct { uint32_t pid; int64_t domain; } nsys__dom;
static int nsys__dom_cmp(const void *x, const void *y) {
  const nsys__dom *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  return (a->domain > b->domain) - (a->domain < b->domain);
}

/* An installed package or the interpreter, not the user's code. */
static bool nsys__library_path(const char *f) {
  return strstr(f, "site-packages") || strstr(f, "dist-packages") || strstr(f, "/lib/python") || f[0] == '<';
}

/* The launching frame of one payload. */
static bool nsys__pick(nsys_profile *p, const nsys_defs *defs, const char *root, const nsys_pybt_frame *fr,
                       uint32_t nf, nsys_pybt_site *out) {
  for (uint32_t k = 0; k < nf; k++) {
    if (fr[k].line < 1 || fr[k].line > 100000000) continue;
    const char *file = nsys_profile_string(p, fr[k].file);
    if (!file || !*file) continue;
    const char *rel = nsys_ws_relative(root, file);
    bool take = defs ? nsys_strtab_find(&defs->strs, rel, strlen(rel)) != NSYS_STR_NONE : !nsys__library_path(file);
    if (!take) continue;
    *out = (nsys_pybt_site){fr[k].file, fr[k].func, (int)fr[k].line, k};
    return true;
  }
  return false;
}

static bool nsys__fail(nsys_task *task, sqlite3 *db) {
  if (!nsys_task_cancelled(task))
    nsys_task_fail(task, NSYS_E_CORRUPT, "cannot read the profile's Python backtraces: %s", sqlite3_errmsg(db));
  return false;
}

bool nsys_python_backtraces(sqlite3 *db, nsys_profile *p, const nsys_index *ix, const nsys_defs *defs,
                            const char *root, nsys_pybt_site *out, nsys_task *task) {
  for (uint32_t a = 0; a < ix->api.n; a++) out[a] = (nsys_pybt_site){0, 0, 0, 0};
  const char *nt = p->schema.table[NSYS_TBL_NVTX];
  if (!nt || !nsys_schema_has_column(p, NSYS_TBL_NVTX, "binaryData") ||
      !nsys_schema_has_column(p, NSYS_TBL_NVTX, "domainId") || !nsys_schema_has_column(p, NSYS_TBL_NVTX, "text") ||
      !nsys_schema_has_column(p, NSYS_TBL_NVTX, "eventType") || !nsys_schema_has_column(p, NSYS_TBL_NVTX, "globalTid"))
    return true;
  /* the domains named "Python Backtrace", per process */
  bool text_id = nsys_schema_has_column(p, NSYS_TBL_NVTX, "textId");
  char *sql = nsys_xasprintf("SELECT DISTINCT globalTid, domainId FROM %s WHERE eventType = 75 AND "
                             "(text = 'Python Backtrace'%s) AND domainId IS NOT NULL",
                             nt, text_id ? " OR textId IN (SELECT id FROM StringIds WHERE value = 'Python Backtrace')"
                                         : "");
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  free(sql);
  if (rc != SQLITE_OK) return sqlite3_finalize(st), nsys__fail(task, db);
  nsys__dom *dom = NULL;
  uint32_t nd = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    dom = nsys_xrealloc(dom, sizeof *dom * (nd + 1));
    dom[nd++] = (nsys__dom){nsys_gtid_pid(sqlite3_column_int64(st, 0)), sqlite3_column_int64(st, 1)};
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return free(dom), nsys__fail(task, db);
  if (!nd) return true;
  qsort(dom, nd, sizeof *dom, nsys__dom_cmp);
  /* the marks with a payload */
  sql = nsys_xasprintf("SELECT start, globalTid, domainId, binaryData FROM %s WHERE eventType = 34 AND "
                       "binaryData IS NOT NULL AND start IS NOT NULL AND globalTid IS NOT NULL",
                       nt);
  rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  free(sql);
  if (rc != SQLITE_OK) return free(dom), sqlite3_finalize(st), nsys__fail(task, db);
  nsys__mark *mk = NULL;
  uint32_t nm = 0, cap = 0, rows = 0;
  nsys_pybt_frame *fr = nsys_xmalloc(sizeof *fr * NSYS_PYBT_MAX_FRAMES);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if ((++rows & 4095) == 0 && nsys_task_cancelled(task)) break;
    int64_t g = sqlite3_column_int64(st, 1);
    nsys__dom key = {nsys_gtid_pid(g), sqlite3_column_int64(st, 2)};
    if (!bsearch(&key, dom, nd, sizeof *dom, nsys__dom_cmp)) continue;
    const uint8_t *bytes = NULL;
    uint8_t *owned = NULL;
    size_t n = 0;
    if (sqlite3_column_type(st, 3) == SQLITE_BLOB) {
      bytes = sqlite3_column_blob(st, 3);
      n = (size_t)sqlite3_column_bytes(st, 3);
    } else {
      const char *text = (const char *)sqlite3_column_text(st, 3);
      if (nsys_pybt_text_bytes(text, (size_t)sqlite3_column_bytes(st, 3), &owned, &n)) bytes = owned;
    }
    uint32_t nf = 0;
    nsys_pybt_site site;
    if (bytes && nsys_pybt_decode(bytes, n, fr, NSYS_PYBT_MAX_FRAMES, &nf) && nsys__pick(p, defs, root, fr, nf, &site)) {
      if (nm == cap) {
        cap = cap ? cap * 2 : 256;
        mk = nsys_xrealloc(mk, sizeof *mk * cap);
      }
      mk[nm++] = (nsys__mark){key.pid, nsys_gtid_tid(g), sqlite3_column_int64(st, 0), site};
    }
    free(owned);
  }
  sqlite3_finalize(st);
  free(fr);
  free(dom);
  if (nsys_task_cancelled(task)) return free(mk), nsys_task_fail_cancelled(task), false;
  if (rc != SQLITE_DONE) return free(mk), nsys__fail(task, db);
  if (!nm) return true;
  /* every CUDA call by (thread, start); marks by (thread, time) */
  nsys__call *calls = nsys_xmalloc(sizeof *calls * (ix->api.n + 1));
  for (uint32_t a = 0; a < ix->api.n; a++) {
    const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
    calls[a] = (nsys__call){th->pid, th->tid, ix->api.start[a], ix->api.end[a], a};
  }
  qsort(calls, ix->api.n, sizeof *calls, nsys__call_cmp);
  qsort(mk, nm, sizeof *mk, nsys__mark_cmp);
  /* sweep: for each call, the latest mark of its thread at or before its
   * end and after the end of the thread's previous call */
  uint32_t m = 0;
  for (uint32_t c = 0; c < ix->api.n; c++) {
    if ((c & 4095) == 0 && nsys_task_cancelled(task)) break;
    const nsys__call *k = &calls[c];
    bool first = c == 0 || calls[c - 1].pid != k->pid || calls[c - 1].tid != k->tid;
    int64_t after = first ? INT64_MIN : calls[c - 1].end;
    while (m < nm && (mk[m].pid < k->pid || (mk[m].pid == k->pid && mk[m].tid < k->tid))) m++;
    /* advance to the last mark of this thread with t <= end */
    uint32_t j = m, last = UINT32_MAX;
    while (j < nm && mk[j].pid == k->pid && mk[j].tid == k->tid && mk[j].t <= k->end) last = j++;
    if (last != UINT32_MAX) m = last; /* later calls start no earlier */
    int32_t op = ix->api.first_op[k->api];
    if (last == UINT32_MAX || mk[last].t <= after || op < 0 || (uint32_t)op >= ix->ops.n ||
        ix->ops.kind[op] != NSYS_OP_KERNEL)
      continue;
    out[k->api] = mk[last].site;
  }
  free(calls);
  free(mk);
  if (nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task), false;
  return true;
}
