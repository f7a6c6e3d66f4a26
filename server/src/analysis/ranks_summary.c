/* The per-rank summary of a rank set (the map step): one rank per device
 * with GPU ops; its NCCL kernels with their payloads (communicator, size,
 * rank), steps, and what the rank did before each collective. O(n log n) in
 * the file's events; cancellable. Definitions: docs/multirank.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/devunions.h"
#include "analysis/nccl.h"
#include "analysis/ranks.h"
#include "common/util.h"
#include "profile/profile.h"

const char *const nsys_cause_names[NSYS_CAUSE__N] = {"compute", "dataLoad", "h2d", "sync", "launchGap"};

/* An NCCL NVTX payload (nsys export --include-json=true) on its range. */
typedef struct {
  uint32_t pid, tid;
  int64_t start, end;
  int64_t comm, size, bytes, rank;
} nsys__payload;

static int nsys__cmp_payload(const void *a, const void *b) {
  const nsys__payload *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return (x->start > y->start) - (x->start < y->start);
}

/* The integer after `"key":` or `'key':` in a JSON-ish text, or -1. */
static int64_t nsys__json_int(const char *js, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = strstr(js, key); p; p = strstr(p + 1, key)) {
    if (p == js || (p[-1] != '"' && p[-1] != '\'') || (p[kl] != '"' && p[kl] != '\'')) continue;
    const char *q = p + kl + 1;
    while (*q == ' ') q++;
    if (*q != ':') continue;
    q++;
    while (*q == ' ' || *q == '"' || *q == '\'') q++;
    char *end;
    long long v = strtoll(q, &end, 0);
    return end == q || v < 0 ? -1 : (int64_t)v;
  }
  return -1;
}

/* NCCL payloads of the export, sorted by (pid, tid, start). */
static bool nsys__payloads(nsys_task *task, nsys_profile *p, nsys__payload **out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  const char *nv = p->schema.table[NSYS_TBL_NVTX];
  bool text = nsys_schema_has_column(p, NSYS_TBL_NVTX, "jsonText");
  bool tid = nsys_schema_has_column(p, NSYS_TBL_NVTX, "jsonTextId");
  if (!nv || (!text && !tid) || !nsys_schema_has_column(p, NSYS_TBL_NVTX, "globalTid")) return true;
  char *sql = nsys_xasprintf("SELECT globalTid, start, end, %s, %s FROM %s WHERE eventType IN (59, 60) AND end IS NOT NULL "
                             "AND (%s IS NOT NULL OR %s IS NOT NULL)",
                             text ? "jsonText" : "NULL", tid ? "jsonTextId" : "NULL", nv, text ? "jsonText" : "NULL",
                             tid ? "jsonTextId" : "NULL");
  sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
  free(sql);
  if (!st) return false;
  uint32_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *js = (const char *)sqlite3_column_text(st, 3);
    if (!js && sqlite3_column_type(st, 4) != SQLITE_NULL) js = nsys_profile_string(p, sqlite3_column_int64(st, 4));
    if (!js || !strstr(js, "NCCL communicator ID")) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 256;
      *out = nsys_xrealloc(*out, cap * sizeof **out);
    }
    int64_t g = sqlite3_column_int64(st, 0);
    nsys__payload *y = &(*out)[(*n)++];
    y->pid = (uint32_t)((g >> 24) & 0xFFFFFF);
    y->tid = (uint32_t)(g & 0xFFFFFF);
    y->start = sqlite3_column_int64(st, 1);
    y->end = sqlite3_column_int64(st, 2);
    y->comm = nsys__json_int(js, "NCCL communicator ID");
    y->size = nsys__json_int(js, "No. of ranks");
    y->bytes = nsys__json_int(js, "Message size [bytes]");
    y->rank = nsys__json_int(js, "Rank");
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return nsys_profile_sql_fail(p, task, rc, "NCCL payloads");
  if (*n > 1) qsort(*out, *n, sizeof **out, nsys__cmp_payload);
  return true;
}

/* The innermost payload range on (pid, tid) containing t, or NULL. Payload
 * ranges of one thread nest (push/pop), so the last one starting at or
 * before t that still covers t is the innermost. */
static const nsys__payload *nsys__payload_at(const nsys__payload *v, uint32_t n, uint32_t pid, uint32_t tid, int64_t t) {
  uint32_t lo = 0, hi = n;
  nsys__payload key = {.pid = pid, .tid = tid, .start = t};
  while (lo < hi) { /* first element > key */
    uint32_t m = lo + (hi - lo) / 2;
    if (nsys__cmp_payload(&v[m], &key) <= 0) lo = m + 1;
    else hi = m;
  }
  for (uint32_t i = lo; i-- > 0;) {
    if (v[i].pid != pid || v[i].tid != tid) break;
    if (v[i].end >= t) return &v[i];
    if (lo - i > 64) break; /* bounded: a range covering t is within the nesting depth */
  }
  return NULL;
}

/* TARGET_INFO_SYSTEM_ENV's Hostname, or NULL. */
static char *nsys__hostname(nsys_task *task, nsys_profile *p) {
  sqlite3_stmt *st = nsys_profile_prepare(
      p, task, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'TARGET_INFO_SYSTEM_ENV'");
  if (!st) return NULL;
  bool has = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  if (!has) return NULL;
  st = nsys_profile_prepare(p, task, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' LIMIT 1");
  if (!st) return NULL;
  char *h = NULL;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) && *sqlite3_column_text(st, 0))
    h = nsys_xstrdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return h;
}

/* Whether the export's timestamps are already UTC ns (`nsys export
 * --ts-normalize=true`, which adds utcEpochNs to every event): the export's
 * EXPORT_PARAM_TIME_NORMALIZE says so; an export without that key is judged
 * by its times (session-relative times are far below the UTC epoch). */
static bool nsys__clock_is_utc(nsys_task *task, nsys_profile *p) {
  const char *meta = p->schema.table[NSYS_TBL_META];
  if (meta && nsys_schema_has_column(p, NSYS_TBL_META, "name") && nsys_schema_has_column(p, NSYS_TBL_META, "value")) {
    char *sql = nsys_xasprintf("SELECT value FROM %s WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE'", meta);
    sqlite3_stmt *st = nsys_profile_prepare(p, task, sql);
    free(sql);
    if (st) {
      int known = -1;
      if (sqlite3_step(st) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        known = v && (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "TRUE") || !strcmp(v, "True"));
      }
      sqlite3_finalize(st);
      if (known >= 0) return known;
    } else {
      nsys_task_forgive(task, NSYS_OK); /* tolerate an odd metadata table: judge by the times */
    }
  }
  return p->info.has_span && p->info.utc_epoch_ns > 0 && p->info.span_start >= p->info.utc_epoch_ns / 2;
}

static bool nsys__is_dataload(const char *s) {
  return nsys_icontains(s, "dataloader") || nsys_icontains(s, "data_load") || nsys_icontains(s, "next_data") ||
         nsys_icontains(s, "data loading") || nsys_icontains(s, "data_loading");
}

static bool nsys__pred_h2d(nsys_actx *c, uint32_t op) {
  if (c->ix->ops.kind[op] != NSYS_OP_MEMCPY) return false;
  const char *s = nsys_strtab_get(&c->ix->strings, c->ix->ops.name[op]);
  return nsys_icontains(s, "HtoD") || nsys_icontains(s, "Host-to-Device");
}

typedef struct {
  int64_t s, e;
} nsys__span;

static int nsys__cmp_span(const void *a, const void *b) {
  const nsys__span *x = a, *y = b;
  return (x->s > y->s) - (x->s < y->s);
}

static void nsys__spans_to_ivls(nsys__span *v, uint32_t n, nsys_ivls *out) {
  if (n > 1) qsort(v, n, sizeof *v, nsys__cmp_span);
  for (uint32_t i = 0; i < n; i++) nsys_ivls_add_sorted(out, v[i].s, v[i].e);
  nsys_ivls_index(out);
}

/* Host intervals of process pid: data-loading NVTX ranges and synchronising API calls. */
static void nsys__host_ivls(nsys_actx *c, uint32_t pid, const uint8_t *load_name, nsys_ivls *load, nsys_ivls *sync) {
  const nsys_index *ix = c->ix;
  nsys__span *lv = NULL, *sv = NULL;
  uint32_t ln = 0, lc = 0, sn = 0, sc = 0;
  for (uint32_t t = 0; t < ix->n_threads && !c->stopped; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    if (th->pid != pid) continue;
    for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count; r++) {
      if (nsys_actx_stop(c, r)) break;
      if (!load_name[ix->nvtx.name[r]]) continue;
      if (ln == lc) lv = nsys_xrealloc(lv, (lc = lc ? lc * 2 : 64) * sizeof *lv);
      lv[ln++] = (nsys__span){ix->nvtx.start[r], ix->nvtx.end[r]};
    }
    for (uint32_t a = th->api_first; a < th->api_first + th->api_count; a++) {
      if (nsys_actx_stop(c, a)) break;
      nsys_api_class k = nsys_actx_api_class(c, a);
      if (k != NSYS_API_SYNC && k != NSYS_API_MEMCPY_SYNC) continue;
      if (sn == sc) sv = nsys_xrealloc(sv, (sc = sc ? sc * 2 : 64) * sizeof *sv);
      sv[sn++] = (nsys__span){ix->api.start[a], ix->api.end[a]};
    }
  }
  nsys__spans_to_ivls(lv, ln, load);
  nsys__spans_to_ivls(sv, sn, sync);
  free(lv);
  free(sv);
}

typedef struct {
  uint32_t *ops;
  uint32_t n, cap;
} nsys__opvec;

static void nsys__collect_nccl(nsys_actx *c, uint32_t op, void *ud) {
  nsys__opvec *v = ud;
  if (c->ix->ops.kind[op] != NSYS_OP_KERNEL || !nsys_actx_is_nccl_op(c, op)) return;
  if (v->n == v->cap) v->ops = nsys_xrealloc(v->ops, (v->cap = v->cap ? v->cap * 2 : 256) * sizeof *v->ops);
  v->ops[v->n++] = op;
}

static int nsys__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The rank of one device. */
static void nsys__summarize_device(nsys_actx *c, int32_t dev, const nsys__payload *pay, uint32_t npay,
                                   const nsys_iter *its, uint32_t nits, const uint8_t *load_name,
                                   nsys_rank_summary *r) {
  const nsys_index *ix = c->ix;
  r->device = dev;
  r->payload_rank = -1;
  nsys_actx_device_span(c, dev, nsys_pred_any, &r->span_start, &r->span_end);
  nsys__opvec v = {0};
  nsys_actx_device_each(c, dev, INT64_MIN, INT64_MAX, nsys__collect_nccl, &v);
  r->n_nccl = v.n;
  /* the rank's process: owner of its NCCL stream, else of its first track */
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (ix->tracks[t].device == dev) {
      r->pid = ix->tracks[t].pid;
      break;
    }
  if (v.n) r->pid = ix->tracks[ix->ops.track[v.ops[0]]].pid;
  /* NCCL streams of the device, sorted: a kernel's stream ordinal */
  int64_t *streams = nsys_xmalloc(((size_t)v.n + 1) * sizeof *streams);
  for (uint32_t i = 0; i < v.n; i++) streams[i] = ix->tracks[ix->ops.track[v.ops[i]]].stream;
  if (v.n > 1) qsort(streams, v.n, sizeof *streams, nsys__cmp_i64);
  uint32_t ns = 0;
  for (uint32_t i = 0; i < v.n; i++)
    if (!ns || streams[ns - 1] != streams[i]) streams[ns++] = streams[i];
  nsys_ivls h2d, load, sync, expl, tmp;
  nsys_ivls_init(&h2d);
  nsys_ivls_init(&load);
  nsys_ivls_init(&sync);
  nsys_ivls_init(&expl);
  nsys_ivls_init(&tmp);
  nsys_actx_device_union(c, dev, nsys__pred_h2d, INT64_MIN, INT64_MAX, &h2d);
  nsys_ivls_index(&h2d);
  nsys__host_ivls(c, r->pid, load_name, &load, &sync);
  const nsys_devunions *du = nsys_actx_devunions(c, dev);
  if (du) {
    nsys_ivls_union(&du->any, &load, &tmp);
    nsys_ivls_union(&tmp, &sync, &expl);
  }
  nsys_ivls_index(&expl);
  r->colls = nsys_xcalloc((size_t)v.n + 1, sizeof *r->colls);
  int64_t prev_end = r->span_start;
  for (uint32_t i = 0; i < v.n && !c->stopped; i++) {
    uint32_t op = v.ops[i];
    nsys_rank_coll *k = &r->colls[r->n_colls++];
    k->start = ix->ops.start[op];
    k->end = ix->ops.end[op];
    k->bytes = -1;
    k->comm_size = -1;
    nsys_nccl_info ni;
    nsys_nccl_parse(nsys_strtab_get(&ix->strings, ix->ops.name[op]), &ni);
    snprintf(k->type, sizeof k->type, "%s", ni.collective);
    if (!strcmp(k->type, "other") || !strcmp(k->type, "Generic")) snprintf(k->type, sizeof k->type, "Other");
    int64_t stream = ix->tracks[ix->ops.track[op]].stream;
    uint32_t lo = 0, hi = ns;
    while (lo < hi) {
      uint32_t m = lo + (hi - lo) / 2;
      if (streams[m] < stream) lo = m + 1;
      else hi = m;
    }
    k->comm = lo;
    int32_t api = ix->ops.api[op];
    if (api >= 0 && npay) {
      const nsys_host_thread *th = &ix->threads[ix->api.thread[api]];
      const nsys__payload *y = nsys__payload_at(pay, npay, th->pid, th->tid, ix->api.start[api]);
      if (y && y->comm >= 0) {
        k->comm = (uint64_t)y->comm;
        k->comm_payload = true;
        k->comm_size = y->size > 0 && y->size < INT32_MAX ? (int32_t)y->size : -1;
        k->bytes = y->bytes;
        if (y->rank >= 0 && y->rank < INT32_MAX && r->payload_rank < 0) r->payload_rank = (int32_t)y->rank;
      }
    }
    /* step: the last iteration starting at or before the kernel */
    lo = 0, hi = nits;
    while (lo < hi) {
      uint32_t m = lo + (hi - lo) / 2;
      if (its[m].start <= k->start) lo = m + 1;
      else hi = m;
    }
    k->step = lo ? (int32_t)(lo - 1) : -1;
    int64_t w0 = prev_end < k->start ? prev_end : k->start;
    k->window = k->start - w0;
    if (du) k->cause[NSYS_CAUSE_COMPUTE] = nsys_ivls_len_in(&du->compute, w0, k->start);
    k->cause[NSYS_CAUSE_DATALOAD] = nsys_ivls_len_in(&load, w0, k->start);
    k->cause[NSYS_CAUSE_H2D] = nsys_ivls_len_in(&h2d, w0, k->start);
    k->cause[NSYS_CAUSE_SYNC] = nsys_ivls_len_in(&sync, w0, k->start);
    k->cause[NSYS_CAUSE_LAUNCH_GAP] = k->window - nsys_ivls_len_in(&expl, w0, k->start);
    if (k->end > prev_end) prev_end = k->end;
  }
  nsys_ivls_free(&h2d);
  nsys_ivls_free(&load);
  nsys_ivls_free(&sync);
  nsys_ivls_free(&expl);
  nsys_ivls_free(&tmp);
  free(streams);
  free(v.ops);
}

bool nsys_rank_summarize(nsys_task *task, nsys_profile *p, const nsys_index *ix, nsys_rank_summary **out, uint32_t *n,
                         uint32_t *cap) {
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, nsys_analysis_find("iterations"), NULL)) return false;
  nsys__payload *pay = NULL;
  uint32_t npay = 0;
  bool ok = nsys__payloads(task, p, &pay, &npay);
  char *host = ok ? nsys__hostname(task, p) : NULL;
  bool utc = ok && nsys__clock_is_utc(task, p);
  ok = ok && task->err == NSYS_OK;
  nsys_iter *its = NULL;
  const char *method = NULL;
  uint32_t nits = ok ? nsys_detect_iterations(&c, &its, &method) : 0;
  uint8_t *load_name = nsys_xcalloc((size_t)ix->strings.count + 1, 1);
  for (uint32_t r = 0; r < ix->nvtx.n; r++) {
    uint32_t nm = ix->nvtx.name[r];
    if (nm < ix->strings.count && !load_name[nm]) load_name[nm] = nsys__is_dataload(nsys_strtab_get(&ix->strings, nm)) ? 1 : 2;
  }
  for (uint32_t k = 0; k <= ix->strings.count; k++) load_name[k] = load_name[k] == 1;
  int32_t *devs = NULL;
  uint32_t nd = ok ? nsys_actx_devices(&c, &devs) : 0;
  uint32_t it0 = 0;
  for (uint32_t d = 0; d < nd && !c.stopped; d++) {
    while (it0 < nits && its[it0].device < devs[d]) it0++;
    uint32_t it1 = it0;
    while (it1 < nits && its[it1].device == devs[d]) it1++;
    if (*n == *cap) *out = nsys_xrealloc(*out, (*cap = *cap ? *cap * 2 : 8) * sizeof **out);
    nsys_rank_summary *r = &(*out)[*n];
    memset(r, 0, sizeof *r);
    r->path = nsys_xstrdup(p->path);
    r->host = host ? nsys_xstrdup(host) : NULL;
    r->cc_major = -1;
    const nsys_gpu_info *gpu = p->info.n_gpus ? &p->info.gpus[0] : NULL;
    for (int g = 0; g < p->info.n_gpus; g++)
      if (p->info.gpus[g].id == devs[d]) gpu = &p->info.gpus[g];
    r->gpu = gpu && gpu->name ? nsys_xstrdup(gpu->name) : NULL;
    r->cc_major = gpu ? gpu->cc_major : -1;
    r->utc_epoch_ns = p->info.utc_epoch_ns;
    r->utc_clock = utc;
    r->steps = it1 - it0;
    nsys__summarize_device(&c, devs[d], pay, npay, its + it0, it1 - it0, load_name, r);
    (*n)++;
    it0 = it1;
  }
  if (ok && !nd && !c.stopped) { /* no GPU ops: the file still counts (its clock, its host) */
    if (*n == *cap) *out = nsys_xrealloc(*out, (*cap = *cap ? *cap * 2 : 8) * sizeof **out);
    nsys_rank_summary *r = &(*out)[(*n)++];
    memset(r, 0, sizeof *r);
    r->path = nsys_xstrdup(p->path);
    r->host = host ? nsys_xstrdup(host) : NULL;
    r->cc_major = -1;
    r->device = -1;
    r->payload_rank = -1;
    r->utc_epoch_ns = p->info.utc_epoch_ns;
    r->utc_clock = utc;
  }
  bool stopped = c.stopped || nsys_task_cancelled(task);
  free(devs);
  free(load_name);
  free(its);
  free(host);
  free(pay);
  nsys_actx_dispose(&c);
  if (ok && stopped) return nsys_task_fail_cancelled(task);
  return ok;
}

void nsys_rank_summary_dispose(nsys_rank_summary *r) {
  free(r->path);
  free(r->host);
  free(r->gpu);
  free(r->colls);
  memset(r, 0, sizeof *r);
}
