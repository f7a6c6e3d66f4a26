/* Capture health: each rule reads the profile's info (profile/info.c) and, for
 * overhead, NCCL's NVTX domain and the capture options, one scan of a small
 * table on a private read-only connection (overhead also reads the index's
 * tracks: each process's GPU-active window). Definitions: docs/analyses.md,
 * "Capture health". */
#include "capture/doctor.h"

#include <inttypes.h>
#include <stdint.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/intervals.h"
#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"

const char *nsys_doc_severity_name(nsys_doc_severity s) {
  return s == NSYS_DOC_ERROR ? "error" : s == NSYS_DOC_WARNING ? "warning" : "info";
}

static nsys_doc_finding *nsys__add(nsys_doc_report *r, const char *rule, nsys_doc_severity sev,
                                   char *title, char *evidence, char *fix) {
  r->findings = nsys_xrealloc(r->findings, (size_t)(r->n + 1) * sizeof *r->findings);
  nsys_doc_finding *f = &r->findings[r->n++];
  memset(f, 0, sizeof *f);
  f->rule = rule;
  f->severity = sev;
  f->title = title;
  f->evidence = evidence;
  f->fix = fix;
  return f;
}

static void nsys__flags(nsys_doc_finding *f, const char *a, const char *b, const char *c, const char *d) {
  const char *v[4] = {a, b, c, d};
  int n = 0;
  for (int i = 0; i < 4; i++)
    if (v[i]) f->flags[n++] = v[i];
}

static int nsys__interrupt(void *ctx) { return nsys_task_cancelled(ctx) ? 1 : 0; }

static bool nsys__has_table(const nsys_profile *p, const char *name) {
  for (int i = 0; i < p->schema.n_all_tables; i++)
    if (strcmp(p->schema.all_tables[i], name) == 0) return true;
  return false;
}

/* Runs a query returning one row of up to two integers; false on an error
 * other than "no row". */
static bool nsys__q2(sqlite3 *db, nsys_task *t, const char *sql, int64_t *a, int64_t *b) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      if (a) *a = sqlite3_column_int64(st, 0);
      if (b && sqlite3_column_count(st) > 1) *b = sqlite3_column_int64(st, 1);
      rc = SQLITE_DONE;
    }
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return true;
  if (nsys_task_cancelled(t)) return nsys_task_fail_cancelled(t);
  return nsys_task_fail(t, NSYS_E_CORRUPT, "doctor: %s", sqlite3_errmsg(db));
}

/* The GPU-active window of one process: first start to last end of the GPU
 * ops its streams ran (index tracks carry the owning process). */
typedef struct {
  uint32_t pid;
  int64_t s, e;
} nsys__pwin;

static int nsys__pwin_cmp(const void *a, const void *b) {
  const nsys__pwin *x = a, *y = b;
  return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The per-process windows, sorted by pid and merged; *unknown when some
 * track's process is unknown (exports without globalPid on GPU ops). */
static nsys__pwin *nsys__proc_windows(const nsys_index *ix, uint32_t *n_out, bool *unknown) {
  nsys__pwin *w = nsys_xmalloc((size_t)(ix->n_tracks ? ix->n_tracks : 1) * sizeof *w);
  uint32_t n = 0;
  *unknown = false;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (!tr->count) continue;
    int64_t e = INT64_MIN;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++)
      if (ix->ops.end[i] > e) e = ix->ops.end[i];
    if (tr->pid == 0) *unknown = true;
    w[n++] = (nsys__pwin){tr->pid, ix->ops.start[tr->first], e};
  }
  qsort(w, n, sizeof *w, nsys__pwin_cmp);
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (m && w[m - 1].pid == w[i].pid) {
      if (w[i].s < w[m - 1].s) w[m - 1].s = w[i].s;
      if (w[i].e > w[m - 1].e) w[m - 1].e = w[i].e;
    } else {
      w[m++] = w[i];
    }
  }
  *n_out = m;
  return w;
}

static const nsys__pwin *nsys__pwin_find(const nsys__pwin *w, uint32_t n, uint32_t pid) {
  nsys__pwin key = {pid, 0, 0};
  return bsearch(&key, w, n, sizeof *w, nsys__pwin_cmp);
}

/* Whether an overhead row is the profiler's own steady-state work (CUPTI's
 * buffer flushes and instrumentation), which stalls the traced threads:
 * overheadType 3 or 4 where the export has the column (ENUM_CUPTI_OVERHEAD_TYPE),
 * else a name naming a flush or NVIDIA's "CUDA profiling [stop] overhead".
 * Set-up (initialisation, dlopen, TLS and buffer allocation) and what the
 * driver does with or without a profiler (module and lazy function loading,
 * JIT, a full command buffer) are not. */
static bool nsys__profiler_work(const char *name, bool has_type, int64_t type) {
  if (has_type) return type == 3 || type == 4;
  if (!name) return false;
  char low[128];
  size_t i = 0;
  for (; name[i] && i < sizeof low - 1; i++) low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
  low[i] = 0;
  return strstr(low, "flush") || strcmp(low, "cuda profiling overhead") == 0 ||
         strcmp(low, "cuda profiling stop overhead") == 0;
}

typedef struct {
  int64_t s, e;
} nsys__span;

static int nsys__span_cmp(const void *a, const void *b) {
  const nsys__span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

typedef struct {
  int64_t name_id, ns;
} nsys__name_ns;

/* Adds one table's profiler-overhead rows to the union *all (wall time: rows
 * of several threads that overlap count once), each clipped to the GPU-active
 * window of its own process, so the start-up before a process's first GPU op
 * and the flushes at its exit after its last one are left out; *top gets the
 * costliest name (by summed clipped time). */
static bool nsys__overhead(const nsys_profile *p, sqlite3 *db, nsys_task *t, const char *table,
                           const nsys__pwin *pw, uint32_t n_pw, bool pid_unknown, nsys_doc_report *r,
                           nsys_ivls *all, int64_t *top_ns, char **top_name) {
  if (!nsys__has_table(p, table) || r->gpu_end <= r->gpu_start) return true;
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT overheadType FROM \"%s\" LIMIT 0", table);
  sqlite3_stmt *st = NULL;
  bool has_type = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK;
  sqlite3_finalize(st);
  snprintf(sql, sizeof sql, "SELECT start, \"end\", globalTid, nameId, %s FROM \"%s\" WHERE \"end\" > %" PRId64
           " AND start < %" PRId64, has_type ? "overheadType" : "0", table, r->gpu_start, r->gpu_end);
  st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    if (nsys_task_cancelled(t)) return nsys_task_fail_cancelled(t);
    return nsys_task_fail(t, NSYS_E_CORRUPT, "doctor: %s", sqlite3_errmsg(db));
  }
  nsys__span *sp = NULL;
  nsys__name_ns *names = NULL;
  size_t n_sp = 0, cap_sp = 0, n_names = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
    int64_t id = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3);
    const char *name = id >= 0 ? nsys_profile_string(p, id) : NULL;
    if (!nsys__profiler_work(name, has_type, sqlite3_column_int64(st, 4))) continue;
    const nsys__pwin *w = nsys__pwin_find(pw, n_pw, nsys_gtid_pid(sqlite3_column_int64(st, 2)));
    int64_t ws = w ? w->s : r->gpu_start, we = w ? w->e : r->gpu_end;
    if (!w && !pid_unknown) continue; /* a process that ran no GPU op */
    if (s < ws) s = ws;
    if (e > we) e = we;
    if (e <= s) continue;
    if (n_sp == cap_sp) sp = nsys_xrealloc(sp, (cap_sp = cap_sp ? 2 * cap_sp : 64) * sizeof *sp);
    sp[n_sp++] = (nsys__span){s, e};
    r->overhead_rows++;
    size_t k = 0;
    while (k < n_names && names[k].name_id != id) k++;
    if (k == n_names) {
      names = nsys_xrealloc(names, (n_names + 1) * sizeof *names);
      names[n_names++] = (nsys__name_ns){id, 0};
    }
    names[k].ns += e - s;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    free(sp), free(names);
    if (nsys_task_cancelled(t)) return nsys_task_fail_cancelled(t);
    return nsys_task_fail(t, NSYS_E_CORRUPT, "doctor: %s", sqlite3_errmsg(db));
  }
  if (n_sp > 1) qsort(sp, n_sp, sizeof *sp, nsys__span_cmp);
  nsys_ivls one, merged;
  nsys_ivls_init(&one);
  nsys_ivls_init(&merged);
  for (size_t i = 0; i < n_sp; i++) nsys_ivls_add_sorted(&one, sp[i].s, sp[i].e);
  nsys_ivls_union(all, &one, &merged);
  nsys_ivls_free(&one);
  nsys_ivls_free(all);
  *all = merged;
  r->overhead_ns = nsys_ivls_total(all);
  for (size_t k = 0; k < n_names; k++) {
    const char *name = names[k].name_id >= 0 ? nsys_profile_string(p, names[k].name_id) : NULL;
    if (name && names[k].ns > *top_ns) {
      *top_ns = names[k].ns;
      free(*top_name);
      *top_name = nsys_xstrdup(name);
    }
  }
  free(sp), free(names);
  return true;
}

/* The facts the rules need beyond p->info. */
static bool nsys__scan(nsys_profile *p, nsys_task *t, nsys_doc_report *r, int64_t *top_ns, char **top_name) {
  sqlite3 *db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, t);
  if (!db) return false;
  sqlite3_progress_handler(db, 100000, nsys__interrupt, t);
  bool ok = true;
  char tbl[256], sql[768];
  /* the GPU-active window: first GPU op start .. last GPU op end */
  static const nsys_table gpu_tables[] = {NSYS_TBL_KERNEL, NSYS_TBL_MEMCPY, NSYS_TBL_MEMSET, NSYS_TBL_GRAPH_TRACE};
  r->gpu_start = INT64_MAX;
  r->gpu_end = INT64_MIN;
  for (size_t i = 0; ok && i < NSYS_ARRAY_LEN(gpu_tables); i++) {
    if (!nsys_profile_table_sql(p, gpu_tables[i], tbl, sizeof tbl)) continue;
    int64_t a = INT64_MAX, b = INT64_MIN, n = 0;
    snprintf(sql, sizeof sql, "SELECT min(start), max(\"end\"), count(*) FROM %s", tbl);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 2);
      if (n > 0) a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
      rc = SQLITE_DONE;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) ok = nsys_task_cancelled(t) ? nsys_task_fail_cancelled(t)
                                                       : nsys_task_fail(t, NSYS_E_CORRUPT, "doctor: %s", sqlite3_errmsg(db));
    if (n > 0 && a < r->gpu_start) r->gpu_start = a;
    if (n > 0 && b > r->gpu_end) r->gpu_end = b;
  }
  if (r->gpu_end < r->gpu_start) r->gpu_start = r->gpu_end = 0;
  /* NCCL's NVTX: its domain, or its range names in a non-default domain (a cut
   * export can lack the domain's create row) */
  if (ok && r->nccl_kernels && nsys_profile_table_sql(p, NSYS_TBL_NVTX, tbl, sizeof tbl)) {
    int64_t n = 0;
    bool dom = nsys_schema_has_column(p, NSYS_TBL_NVTX, "domainId");
    bool tid = nsys_schema_has_column(p, NSYS_TBL_NVTX, "textId");
    char strtab[256] = "";
    bool strs = tid && nsys_profile_table_sql(p, NSYS_TBL_STRING_IDS, strtab, sizeof strtab);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT 1 FROM %s WHERE (eventType = 75 AND text = 'NCCL')%s%s%s%s%s LIMIT 1)", tbl,
             dom ? " OR (domainId != 0 AND (text LIKE 'nccl%'" : "",
             dom && strs ? " OR textId IN (SELECT id FROM " : "", dom && strs ? strtab : "",
             dom && strs ? " WHERE value LIKE 'nccl%')" : "", dom ? "))" : "");
    ok = nsys__q2(db, t, sql, &n, NULL);
    r->nccl_nvtx = n > 0;
  }
  if (ok && nsys_profile_table_sql(p, NSYS_TBL_META_CAPTURE, tbl, sizeof tbl)) {
    int64_t any = 0, cuda = 0, nvtx = 0;
    snprintf(sql, sizeof sql, "SELECT count(*), sum(value = 'Cuda') FROM %s WHERE name = 'CAPTURE_EVENT_TYPE'", tbl);
    ok = nsys__q2(db, t, sql, &any, &cuda);
    snprintf(sql, sizeof sql, "SELECT sum(value LIKE 'Nvtx%%') FROM %s WHERE name = 'CAPTURE_EVENT_TYPE'", tbl);
    if (ok) ok = nsys__q2(db, t, sql, &nvtx, NULL);
    r->capture_types_known = any > 0;
    r->traced_cuda = cuda > 0;
    r->traced_nvtx = nvtx > 0;
  }
  const nsys_index *ix = ok ? nsys_index_get(p, t) : NULL;
  ok = ok && ix;
  uint32_t n_pw = 0;
  bool pid_unknown = false;
  nsys__pwin *pw = ix ? nsys__proc_windows(ix, &n_pw, &pid_unknown) : NULL;
  nsys_ivls overhead;
  nsys_ivls_init(&overhead);
  if (ok) ok = nsys__overhead(p, db, t, "PROFILER_OVERHEAD", pw, n_pw, pid_unknown, r, &overhead, top_ns, top_name);
  if (ok)
    ok = nsys__overhead(p, db, t, "CUPTI_ACTIVITY_KIND_OVERHEAD", pw, n_pw, pid_unknown, r, &overhead, top_ns,
                        top_name);
  nsys_ivls_free(&overhead);
  free(pw);
  sqlite3_close(db);
  return ok;
}

static char *nsys__ms(int64_t ns) {
  char b[32];
  nsys_fmt_duration(b, sizeof b, ns);
  return nsys_xstrdup(b);
}

bool nsys_doctor_run(nsys_profile *p, nsys_task *t, nsys_doc_report *r) {
  memset(r, 0, sizeof *r);
  const nsys_info *in = &p->info;
  r->gpu_ops = in->n_kernels + in->n_memcpy + in->n_memset + in->n_graph_launches;
  r->span_ns = in->has_span ? in->span_end - in->span_start : 0;
  r->gpus_listed = in->n_gpus;
  r->gpus_active = in->n_devices;
  r->nvtx_ranges = in->n_nvtx;
  r->nccl_kernels = in->f_nccl;
  r->utc_epoch = in->has_utc_epoch ? in->utc_epoch_ns : 0;
  int64_t top_ns = 0;
  char *top_name = NULL;
  if (!nsys__scan(p, t, r, &top_ns, &top_name)) {
    free(top_name);
    nsys_doctor_free(r);
    return false;
  }
  nsys_doc_finding *f;

  /* 1. the capture itself failed */
  if (p->schema.gen == NSYS_GEN_UNKNOWN && !in->has_span) {
    f = nsys__add(r, "capture_failed", NSYS_DOC_ERROR,
                  nsys_xstrdup("the capture failed: no metadata table and no timed event"),
                  nsys_xasprintf("%d tables, none of them with a timed row; no META_DATA_EXPORT/EXPORT_META_DATA",
                                 p->schema.n_all_tables),
                  nsys_xstrdup("the target crashed or nsys was stopped before it wrote the report: run it "
                               "again, let the program exit normally (or bound the capture with --duration), "
                               "and read nsys's own output for the cause"));
    nsys__flags(f, "--trace=cuda,nvtx,osrt", "--wait=all", NULL, NULL);
    free(top_name);
    return true; /* nothing else can be judged */
  }

  /* 2. GPU activity */
  if (r->gpu_ops == 0) {
    bool cuda_traced = r->capture_types_known ? r->traced_cuda : in->n_runtime > 0;
    if (!cuda_traced) {
      f = nsys__add(r, "no_gpu_activity", NSYS_DOC_ERROR, nsys_xstrdup("CUDA was not traced: no GPU activity"),
                    nsys_xasprintf("0 kernels, memcpy, memset or graph launches; 0 CUDA API calls%s",
                                   r->capture_types_known ? "; the capture options do not list Cuda" : ""),
                    nsys_xstrdup("trace CUDA (the default trace set of nsys profile does; an explicit -t/--trace "
                                 "must name cuda)"));
      nsys__flags(f, "--trace=cuda,nvtx,osrt", NULL, NULL, NULL);
    } else {
      f = nsys__add(r, "no_gpu_activity", NSYS_DOC_ERROR,
                    nsys_xstrdup("no GPU activity in the captured window"),
                    nsys_xasprintf("0 kernels, memcpy, memset or graph launches; %" PRId64 " CUDA API calls",
                                   in->n_runtime),
                    nsys_xstrdup("CUDA was traced but no GPU work landed in the window: the window ended before "
                                 "the GPU work (move it with a capture range around the steps), the work runs "
                                 "in a child process nsys did not follow, or the program exited before CUPTI "
                                 "flushed its buffers (synchronize and exit normally)"));
      nsys__flags(f, "--capture-range=cudaProfilerApi", "--trace-fork-before-exec=true", "--cuda-flush-interval=1000",
                  NULL);
    }
  }

  /* 3. only some GPUs / ranks */
  if (r->gpu_ops > 0 && r->gpus_listed > r->gpus_active) {
    f = nsys__add(r, "partial_gpus", r->nccl_kernels ? NSYS_DOC_WARNING : NSYS_DOC_INFO,
                  nsys_xasprintf("%d of %d GPUs have activity in this report", r->gpus_active, r->gpus_listed),
                  nsys_xasprintf("TARGET_INFO_GPU lists %d GPUs; kernels/memcpy/memset ran on %d", r->gpus_listed,
                                 r->gpus_active),
                  nsys_xstrdup(r->nccl_kernels
                                   ? "a multi-GPU job (NCCL) with GPUs missing: profile every rank (one report per "
                                     "rank, opened together with profile/openSet), or follow the launcher's children"
                                   : "if the job should use every GPU, the others were idle or ran in processes "
                                     "nsys did not follow; otherwise nothing to fix"));
    nsys__flags(f, "--trace-fork-before-exec=true", "--output=report_%q{RANK}", NULL, NULL);
  }
  if (r->nccl_kernels && r->gpus_active == 1) {
    f = nsys__add(r, "single_rank", NSYS_DOC_INFO,
                  nsys_xstrdup("NCCL collectives with one GPU in this report: the other ranks are elsewhere"),
                  nsys_xstrdup("NCCL kernels on 1 device"),
                  nsys_xstrdup("communication waits depend on the other ranks: capture each rank "
                               "(-o report_%q{RANK}) and open the reports together (profile/openSet)"));
    nsys__flags(f, "--output=report_%q{RANK}", NULL, NULL, NULL);
  }

  /* 4. NVTX */
  if (r->gpu_ops > 0 && in->n_nvtx == 0) {
    bool traced = r->capture_types_known ? r->traced_nvtx : false;
    f = nsys__add(r, "no_nvtx", NSYS_DOC_WARNING,
                  nsys_xstrdup("no NVTX ranges: kernels cannot be tied to steps, layers or source lines"),
                  nsys_xstrdup(r->capture_types_known ? (traced ? "NVTX was traced; the program emitted no range"
                                                                : "the capture options do not list NVTX")
                                                      : "0 NVTX rows"),
                  nsys_xstrdup(traced ? "mark the steps in the program (nsys-ai annotate FILE, or "
                                        "torch.cuda.nvtx.range); PyTorch can emit ranges per op"
                                      : "trace NVTX and mark the steps (nsys-ai annotate FILE)"));
    nsys__flags(f, "--trace=cuda,nvtx,osrt", traced ? "--pytorch=autograd-nvtx" : NULL, NULL, NULL);
  }
  if (r->nccl_kernels && !r->nccl_nvtx) {
    f = nsys__add(r, "nccl_without_nvtx", NSYS_DOC_WARNING,
                  nsys_xstrdup("NCCL kernels without NCCL's NVTX ranges: collectives cannot be named or sized"),
                  nsys_xstrdup("NCCL kernels present; no NVTX domain named NCCL"),
                  nsys_xstrdup("trace NVTX and leave NCCL's ranges on (unset NCCL_NVTX_DISABLE); nsys 2025.6+ "
                               "with NCCL 2.28+ can also trace NCCL itself"));
    nsys__flags(f, "--trace=cuda,nvtx,osrt", "--env-var=NCCL_NVTX_DISABLE=0", NULL, NULL);
  }

  /* 5. a window too short to judge */
  if (r->gpu_ops > 0 && (r->span_ns < NSYS_DOC_MIN_SPAN_NS || in->n_kernels < NSYS_DOC_MIN_KERNELS)) {
    char *span = nsys__ms(r->span_ns), *min = nsys__ms(NSYS_DOC_MIN_SPAN_NS);
    f = nsys__add(r, "short_window", NSYS_DOC_WARNING,
                  nsys_xstrdup("the captured window is too short to judge steady state"),
                  nsys_xasprintf("span %s, %" PRId64 " kernels (below %s or %d kernels)", span, in->n_kernels, min,
                                 NSYS_DOC_MIN_KERNELS),
                  nsys_xstrdup("capture several steady-state steps: skip warm-up with a capture range (or "
                               "--delay) and let it run for several steps"));
    nsys__flags(f, "--capture-range=cudaProfilerApi", "--capture-range-end=stop", "--delay=SECONDS",
                "--duration=SECONDS");
    free(span), free(min);
  }

  /* 6. profiler overhead inside the GPU-active window */
  int64_t gw = r->gpu_end - r->gpu_start;
  if (r->overhead_rows > 0 && gw > 0 && (double)r->overhead_ns * 100.0 / (double)gw >= NSYS_DOC_OVERHEAD_PCT) {
    char *ov = nsys__ms(r->overhead_ns), *span = nsys__ms(gw);
    f = nsys__add(r, "profiler_overhead", NSYS_DOC_WARNING,
                  nsys_xasprintf("profiler overhead is visible: %.1f%% of the GPU-active window",
                                 (double)r->overhead_ns * 100.0 / (double)gw),
                  nsys_xasprintf("%" PRId64 " rows of the profiler's own work (buffer flushes, instrumentation) "
                                 "cover %s of wall time while their processes ran GPU work, in a %s GPU-active "
                                 "window%s%s", r->overhead_rows,
                                 ov, span, top_name ? "; most: " : "", top_name ? top_name : ""),
                  nsys_xstrdup("timings near those rows are inflated: flush CUPTI's buffers on a timer instead of "
                               "when full, trace less (no CPU sampling or context switches, no backtraces), or "
                               "shorten the window"));
    nsys__flags(f, "--cuda-flush-interval=100", "--sample=none", "--cpuctxsw=none", "--cudabacktrace=none");
    free(ov), free(span);
  }

  /* 7. clocks */
  if (in->has_span && !in->has_utc_epoch) {
    f = nsys__add(r, "no_session_clock", NSYS_DOC_INFO,
                  nsys_xstrdup("no session start time: this report's clock cannot be aligned with other nodes'"),
                  nsys_xstrdup("TARGET_INFO_SESSION_START_TIME is absent or empty"),
                  nsys_xstrdup("reports from several nodes are aligned by their UTC session start; export from "
                               "the .nsys-rep with a current nsys, or export absolute timestamps"));
    nsys__flags(f, "nsys export --type=sqlite --ts-normalize=true", NULL, NULL, NULL);
  }

  /* 8. GPU metadata */
  if (r->gpu_ops > 0 && r->gpus_listed == 0) {
    f = nsys__add(r, "no_gpu_metadata", NSYS_DOC_WARNING,
                  nsys_xstrdup("GPU metadata missing: names, SM counts and clocks are unknown"),
                  nsys_xasprintf("%" PRId64 " GPU operations on %d devices; no GPU information table rows",
                                 r->gpu_ops, r->gpus_active),
                  nsys_xstrdup("MFU, occupancy and per-architecture advice need them: export the whole .nsys-rep "
                               "again rather than a cut copy"));
    nsys__flags(f, "nsys export --type=sqlite", NULL, NULL, NULL);
  }
  free(top_name);
  return true;
}

void nsys_doctor_set(nsys_doc_report *reps, const char *const *names, int n) {
  int64_t lo = INT64_MIN, hi = INT64_MAX; /* the intersection of the windows on UTC */
  int used = 0, first = -1, last = -1;
  for (int i = 0; i < n; i++) {
    const nsys_doc_report *r = &reps[i];
    if (!r->utc_epoch || r->gpu_end <= r->gpu_start) continue;
    int64_t a = r->utc_epoch + r->gpu_start, b = r->utc_epoch + r->gpu_end;
    if (a > lo) lo = a, last = i;
    if (b < hi) hi = b, first = i;
    used++;
  }
  if (used < 2 || lo < hi) return;
  char *gap = nsys__ms(lo - hi);
  nsys_doc_finding *f = nsys__add(
      &reps[0], "clocks_not_aligned", NSYS_DOC_WARNING,
      nsys_xasprintf("the reports' GPU activity does not overlap on UTC: clocks differ across nodes, or the "
                     "captures were not simultaneous"),
      nsys_xasprintf("%s ends its GPU activity %s before %s starts its own (each placed by its session start)",
                     names[first], gap, names[last]),
      nsys_xstrdup("synchronise the nodes' clocks (NTP/PTP) and start every rank's capture together, e.g. a capture "
                   "range on the same training step"));
  nsys__flags(f, "--capture-range=cudaProfilerApi", "--capture-range-end=stop", NULL, NULL);
  free(gap);
}

void nsys_doctor_free(nsys_doc_report *r) {
  for (int i = 0; i < r->n; i++) {
    free(r->findings[i].title);
    free(r->findings[i].evidence);
    free(r->findings[i].fix);
  }
  free(r->findings);
  memset(r, 0, sizeof *r);
}
