/* The host reader, run on the calling thread: CUDA API calls and NVTX
 * ranges into raw rows, keyed by a temporary thread id per globalTid and,
 * for NVTX, by (globalPid, domainId) domain keys. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index_build_internal.h"
#include "profile/profile.h"

/* ---- host reader -------------------------------------------------------- */

static uint32_t nsys__thread_tmp(nsys__build *b, int64_t gtid) {
  if ((b->n_tmp + 1) * 2 > b->th_cap) {
    uint32_t ncap = b->th_cap ? b->th_cap * 2 : 256;
    int64_t *nk = nsys_xmalloc(ncap * sizeof(int64_t));
    uint32_t *nv = nsys_xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t i = 0; i < b->th_cap; i++) {
      if (!b->th_vals[i]) continue;
      uint32_t j = (uint32_t)(((uint64_t)b->th_keys[i] * 0x9E3779B97F4A7C15ULL) >> 40) & (ncap - 1);
      while (nv[j]) j = (j + 1) & (ncap - 1);
      nk[j] = b->th_keys[i];
      nv[j] = b->th_vals[i];
    }
    free(b->th_keys);
    free(b->th_vals);
    b->th_keys = nk;
    b->th_vals = nv;
    b->th_cap = ncap;
  }
  uint32_t j = (uint32_t)(((uint64_t)gtid * 0x9E3779B97F4A7C15ULL) >> 40) & (b->th_cap - 1);
  while (b->th_vals[j]) {
    if (b->th_keys[j] == gtid) return b->th_vals[j] - 1;
    j = (j + 1) & (b->th_cap - 1);
  }
  if (b->n_tmp == b->cap_tmp) {
    b->cap_tmp = b->cap_tmp ? b->cap_tmp * 2 : 64;
    NSYS__GROW(b->tmp_gtid, b->cap_tmp);
  }
  uint32_t id = b->n_tmp++;
  b->tmp_gtid[id] = gtid;
  b->th_keys[j] = gtid;
  b->th_vals[j] = id + 1;
  return id;
}

static uint32_t nsys__domain_key(nsys__build *b, int64_t gpid, int64_t dom) {
  for (uint32_t i = b->n_dom; i-- > 0;)
    if (b->dom_gpid[i] == gpid && b->dom_id[i] == dom) return i;
  if (b->n_dom == b->cap_dom) {
    b->cap_dom = b->cap_dom ? b->cap_dom * 2 : 16;
    NSYS__GROW(b->dom_gpid, b->cap_dom);
    NSYS__GROW(b->dom_id, b->cap_dom);
    NSYS__GROW(b->dom_name, b->cap_dom);
  }
  b->dom_gpid[b->n_dom] = gpid;
  b->dom_id[b->n_dom] = dom;
  b->dom_name[b->n_dom] = NSYS_STR_NONE;
  return b->n_dom++;
}

static bool nsys__host_fail(nsys__build *b, nsys__src *src, const char *what) {
  nsys_task_fail(&b->host_task, NSYS_E_CORRUPT, "reading %s: %s", what, sqlite3_errmsg(src->db));
  atomic_store(&b->stop, 1);
  return false;
}

typedef struct {
  nsys__build *b;
  nsys_strtab *tab;
  nsys__sidmap *sm;
  uint32_t since;
  int64_t last_gtid;
  uint32_t last_tmp;
  nsys__raw_api bt; /* CUDA-backtrace rows, set aside (see nsys__merge_backtrace_rows) */
  nsys_info_acc *info; /* the summary's runtime or NVTX part */
  uint8_t info_arg[2];  /* runtime: the arguments of its 2 columns */
} nsys__host_rows;

/* eventClass of the rows that `nsys profile --cudabacktrace` adds to
 * CUPTI_ACTIVITY_KIND_RUNTIME: TRACE_PROCESS_EVENT_CUDABACKTRACE (67) and its
 * _START/_FINISH halves (68, 69). Such a row repeats a call already traced
 * (same globalTid and correlationId, a slightly wider interval) and carries
 * the call's callchainId. */
static bool nsys__is_backtrace_class(int64_t ec) { return ec >= 67 && ec <= 69; }

/* args: rowid, start, end, globalTid, correlationId, nameId, eventClass
 * (then the summary's start and end, nsys_info_rt_cols) */
static void nsys__api_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__host_rows *h = sqlite3_user_data(ctx);
  nsys__build *b = h->b;
  if (h->info) {
    sqlite3_value *iv[2] = {v[h->info_arg[0]], v[h->info_arg[1]]};
    nsys_info_rt_row(h->info, iv);
  }
  nsys__raw_api *r = nsys__is_backtrace_class(sqlite3_value_int64(v[6])) ? &h->bt : &b->api;
  if (r->n == r->cap) nsys__raw_api_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  int64_t s = nsys_time_clamp(sqlite3_value_int64(v[1])), e = nsys_time_clamp(sqlite3_value_int64(v[2]));
  r->start[i] = s;
  r->end[i] = e < s ? s : e;
  int64_t g = sqlite3_value_int64(v[3]);
  if (g != h->last_gtid) {
    h->last_tmp = nsys__thread_tmp(b, g);
    h->last_gtid = g;
  }
  r->thread[i] = h->last_tmp;
  r->corr[i] = sqlite3_value_int64(v[4]);
  r->name[i] = nsys__sidmap_lookup(h->sm, &b->strings, h->tab, sqlite3_value_int64(v[5]),
                                NSYS__NAME_STRIP_VERSION);
  r->n++;
  if (!nsys__tick(b, &h->since)) {
    sqlite3_result_error(ctx, "stopped", -1);
    return;
  }
  if ((r->n & 0xFFFF) == 0) nsys__report(b, 0, 85, "reading CUDA API calls");
}

static uint32_t nsys__bt_slot(int64_t corr, uint32_t thread, uint32_t mask) {
  uint64_t k = (uint64_t)corr * 0x9E3779B97F4A7C15ULL ^ (uint64_t)thread * 0xC2B2AE3D27D4EB4FULL;
  return (uint32_t)(k >> 32) & mask;
}

/* A backtrace row whose call was also traced as an ordinary row (same
 * thread, same correlationId) is dropped: every analysis then counts the call
 * once. One without such a twin (an export that kept only backtrace rows) is
 * the only record of its call and is kept. Linear: the backtrace rows are
 * hashed, the ordinary rows probe them once. */
static void nsys__merge_backtrace_rows(nsys__raw_api *r, nsys__raw_api *bt) {
  if (!bt->n) return;
  uint32_t cap = 16;
  while (cap < bt->n * 2u) cap *= 2;
  uint32_t *slot = nsys_xcalloc(cap, sizeof *slot); /* bt index + 1 */
  bool *twin = nsys_xcalloc(bt->n, sizeof *twin);
  for (uint32_t i = 0; i < bt->n; i++) {
    uint32_t j = nsys__bt_slot(bt->corr[i], bt->thread[i], cap - 1);
    while (slot[j]) j = (j + 1) & (cap - 1);
    slot[j] = i + 1;
  }
  for (uint32_t k = 0; k < r->n; k++) {
    for (uint32_t j = nsys__bt_slot(r->corr[k], r->thread[k], cap - 1); slot[j]; j = (j + 1) & (cap - 1)) {
      uint32_t i = slot[j] - 1;
      if (bt->corr[i] == r->corr[k] && bt->thread[i] == r->thread[k]) twin[i] = true;
    }
  }
  for (uint32_t i = 0; i < bt->n; i++) {
    if (twin[i]) continue;
    if (r->n == r->cap) nsys__raw_api_reserve(r, r->n + 1);
    r->start[r->n] = bt->start[i];
    r->end[r->n] = bt->end[i];
    r->rowid[r->n] = bt->rowid[i];
    r->corr[r->n] = bt->corr[i];
    r->thread[r->n] = bt->thread[i];
    r->name[r->n] = bt->name[i];
    r->n++;
  }
  free(slot);
  free(twin);
}

bool nsys__read_runtime(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm) {
  if (!nsys__src_has(src, NSYS__SRC_RUNTIME)) return true;
  const char *tbl = src->table[NSYS__SRC_RUNTIME];
  const char *corr =
      nsys__src_has_column(src, NSYS__SRC_RUNTIME, "correlationId") ? "correlationId" : "0";
  const char *ec = nsys__src_has_column(src, NSYS__SRC_RUNTIME, "eventClass") ? "eventClass" : "0";
  char sql[2048], info[128];
  nsys_info_acc *acc = b->p->info_acc;
  if (acc && nsys_info_rt_cols(b->p, info, sizeof info)) nsys_info_rt_begin(acc);
  else acc = NULL;
  nsys__host_rows h = {b, tab, sm, 0, INT64_MIN, 0, {0}, acc, {0, 0}};
  /* the reader's arguments, then the summary's columns not among them
   * (start and end are: each decoded once per row) */
  nsys__args args = {.n = 0};
  const char *base[] = {"rowid", "start", "end", "globalTid", corr, "nameId", ec};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(base); i++) nsys__args_add(&args, base[i]);
  if (acc) nsys__args_map(&args, info, h.info_arg, 2);
  char *list = nsys__args_join(&args);
  snprintf(sql, sizeof sql, "SELECT nsys_ai_api_rows(%s) FROM %s", list, tbl);
  free(list);
  nsys__raw_api *r = &b->api;
  nsys__raw_api_reserve(r, (uint32_t)NSYS_MIN(nsys__src_max_rowid(src, NSYS__SRC_RUNTIME) + 16,
                                              (int64_t)UINT32_MAX - 2));
  int rc = nsys__read_rows(src->db, "nsys_ai_api_rows", sql, nsys__api_row, &h);
  if (acc && rc == SQLITE_DONE) nsys_info_rt_complete(acc);
  atomic_fetch_add(&b->rows_done, h.since);
  if (rc == SQLITE_DONE) nsys__merge_backtrace_rows(r, &h.bt);
  free(h.bt.start); free(h.bt.end); free(h.bt.rowid); free(h.bt.corr); free(h.bt.thread); free(h.bt.name);
  if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) return nsys__host_fail(b, src, tbl);
  return atomic_load(&b->stop) == 0;
}

/* ASCII without NUL (the usual NVTX text): valid UTF-8 that needs no
 * sanitizing. Eight bytes at a time. */
static bool nsys__plain_ascii(const unsigned char *s, size_t n) {
  const uint64_t lo7 = 0x7F7F7F7F7F7F7F7FULL, hi = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    /* a byte >= 0x80, or a zero byte ((b & 0x7F) + 0x7F sets bit 7 unless b == 0) */
    if ((w & hi) || (~((w & lo7) + lo7) & hi)) return false;
  }
  for (; i < n; i++)
    if (s[i] == 0 || s[i] >= 0x80) return false;
  return true;
}

/* args: rowid, start, end, eventType, globalTid, text, textId, domainId,
 * endGlobalTid, and when the summary's part is gathered (every row of the
 * table read) `eventType BETWEEN 59 AND 75`, the WHERE of the plain read */
static void nsys__nvtx_row(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  nsys__host_rows *h = sqlite3_user_data(ctx);
  nsys__build *b = h->b;
  nsys_strtab *tab = h->tab;
  if (!nsys__tick(b, &h->since)) {
    sqlite3_result_error(ctx, "stopped", -1);
    return;
  }
  if (argc == 10) {
    nsys_info_nvtx_row(h->info, v + 1); /* (start, end) */
    if (sqlite3_value_int64(v[9]) != 1) return; /* 0, or NULL for a NULL eventType */
  }
  /* the SQL keeps 59..75; the types read here: push/pop (59), start/end (60),
   * their payload variants (70, 71) and domain create (75) */
  int64_t type = sqlite3_value_int64(v[3]);
  if (type != 59 && type != 60 && type != 70 && type != 71 && type != 75) return;
  if (sqlite3_value_type(v[3]) != SQLITE_INTEGER && sqlite3_value_double(v[3]) != (double)type)
    return; /* 59.5 is none of them */
  int64_t g = sqlite3_value_int64(v[4]);
  int64_t dom = sqlite3_value_int64(v[7]);
  /* name: text, else StringIds[textId] */
  uint32_t name;
  const unsigned char *text = sqlite3_value_text(v[5]);
  if (text) {
    size_t len = (size_t)sqlite3_value_bytes(v[5]);
    if (nsys__plain_ascii(text, len) || (nsys_utf8_valid((const char *)text, len) && !memchr(text, 0, len))) {
      name = nsys_strtab_intern(tab, (const char *)text, len);
    } else {
      char *clean = nsys_utf8_sanitize((const char *)text, len);
      name = nsys_strtab_intern(tab, clean, strlen(clean));
      free(clean);
    }
  } else if (sqlite3_value_type(v[6]) != SQLITE_NULL) {
    name = nsys__sidmap_lookup(h->sm, &b->strings, tab, sqlite3_value_int64(v[6]), NSYS__NAME_PLAIN);
  } else {
    name = nsys_strtab_intern(tab, "", 0);
  }
  if (type == 75) { /* domain create: its text names the domain in this process */
    uint32_t k = nsys__domain_key(b, nsys_gtid_gpid(g), dom);
    b->dom_name[k] = name;
    return;
  }
  if (sqlite3_value_type(v[2]) == SQLITE_NULL) return; /* not a closed range */
  if (sqlite3_value_type(v[8]) != SQLITE_NULL && sqlite3_value_int64(v[8]) != g)
    return; /* start/end range ended on another thread: not a range of this thread */
  int64_t s = nsys_time_clamp(sqlite3_value_int64(v[1])), e = nsys_time_clamp(sqlite3_value_int64(v[2]));
  if (e < s) return;
  nsys__raw_nvtx *r = &b->nvtx;
  if (r->n == r->cap) nsys__raw_nvtx_reserve(r, r->n + 1);
  uint32_t i = r->n;
  r->rowid[i] = sqlite3_value_int64(v[0]);
  r->start[i] = s;
  r->end[i] = e;
  if (g != h->last_gtid) {
    h->last_tmp = nsys__thread_tmp(b, g);
    h->last_gtid = g;
  }
  r->thread[i] = h->last_tmp;
  r->name[i] = name;
  r->dom[i] = dom == 0 ? UINT32_MAX : nsys__domain_key(b, nsys_gtid_gpid(g), dom);
  r->n++;
  if ((r->n & 0xFFFF) == 0) nsys__report(b, 0, 85, "reading NVTX ranges");
}

bool nsys__read_nvtx(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm) {
  if (!nsys__src_has(src, NSYS__SRC_NVTX)) return true;
  const char *tbl = src->table[NSYS__SRC_NVTX];
  /* An altered or partial export may lack the columns ranges need: no ranges, not an error. */
  if (!nsys__src_has_column(src, NSYS__SRC_NVTX, "eventType") ||
      !nsys__src_has_column(src, NSYS__SRC_NVTX, "globalTid") ||
      !nsys__src_has_column(src, NSYS__SRC_NVTX, "end"))
    return true;
  bool has_text = nsys__src_has_column(src, NSYS__SRC_NVTX, "text");
  bool has_textid = nsys__src_has_column(src, NSYS__SRC_NVTX, "textId");
  bool has_dom = nsys__src_has_column(src, NSYS__SRC_NVTX, "domainId");
  bool has_egt = nsys__src_has_column(src, NSYS__SRC_NVTX, "endGlobalTid");
  /* The summary's count and span of this table (profile/info) are gathered
   * here when it waits for them (a first open): then every row is read and
   * the range test is a column, else it is the WHERE. A range test, not IN
   * (...): IN probes a temporary index per row. */
  nsys_info_acc *acc = b->p->info_acc;
  if (acc && !nsys_info_nvtx_gathered(b->p)) acc = NULL;
  if (acc) nsys_info_nvtx_begin(acc);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SELECT nsys_ai_nvtx_rows(rowid, start, end, eventType, globalTid, %s, %s, %s, %s%s) "
           "FROM %s%s",
           has_text ? "text" : "NULL", has_textid ? "textId" : "NULL", has_dom ? "domainId" : "0",
           has_egt ? "endGlobalTid" : "NULL", acc ? ", eventType BETWEEN 59 AND 75" : "", tbl,
           acc ? "" : " WHERE eventType BETWEEN 59 AND 75");
  /* at most one range per row: reserved once (huge pages, nsys__big_alloc),
   * only the pages the ranges fill are ever touched; capped, since a table of
   * mostly marks would reserve far more than its ranges need (it grows then) */
  nsys__raw_nvtx_reserve(&b->nvtx, (uint32_t)NSYS_MIN(nsys__src_max_rowid(src, NSYS__SRC_NVTX) + 16,
                                                      (int64_t)1 << 22));
  nsys__host_rows h = {b, tab, sm, 0, INT64_MIN, 0, {0}, acc, {0, 0}};
  int rc = nsys__read_rows(src->db, "nsys_ai_nvtx_rows", sql, nsys__nvtx_row, &h);
  if (acc && rc == SQLITE_DONE) nsys_info_nvtx_complete(acc);
  atomic_fetch_add(&b->rows_done, h.since);
  if (rc != SQLITE_DONE && atomic_load(&b->stop) == 0) return nsys__host_fail(b, src, tbl);
  return atomic_load(&b->stop) == 0;
}
