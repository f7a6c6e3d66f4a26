/* Analyses over tables the index does not carry, read with SQL on the
 * read-only profile: memory_transfers (bytes, copy/memory kinds),
 * thread_utilization (CPU sampling / OSRT) and schema_inspect. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "common/util.h"
#include "profile/profile.h"

static bool nsys__need_db(nsys_actx *c) {
  if (c->p) return true;
  nsys_task_fail(c->task, NSYS_E_DATA_MISSING, "this analysis reads the profile database");
  return false;
}

static const char *const nsys__copy_kinds[] = {
    "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP",
    "UVM HtoD", "UVM DtoH", "UVM DtoD"};
static const char *const nsys__mem_kinds[] = {"Pageable", "Pinned", "Device", "Array",
                                              "Managed", "DeviceStatic", "ManagedStatic", "Unknown"};

static const char *nsys__copy_kind(int64_t k) {
  return k >= 0 && k < (int64_t)NSYS_ARRAY_LEN(nsys__copy_kinds) ? nsys__copy_kinds[k] : "Unknown";
}
static const char *nsys__mem_kind(int64_t k) {
  return k >= 0 && k < (int64_t)NSYS_ARRAY_LEN(nsys__mem_kinds) ? nsys__mem_kinds[k] : "Unknown";
}

/* Host memory kinds are pageable (0) on the host side of HtoD/DtoH. */
bool nsys_an_memory_transfers(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  if (!nsys__need_db(c)) return false;
  nsys_profile *p = c->p;
  const char *tbl = p->schema.table[NSYS_TBL_MEMCPY];
  int64_t n_all = 0, bytes_all = 0, ns_all = 0, pageable_n = 0, pageable_bytes = 0, sync_n = 0;
  int64_t ph2d_n = 0, ph2d_bytes = 0, ph2d_ns = 0, ph2d_s = 0, ph2d_e = 0;
  int64_t h2d_bytes = 0, h2d_ns = 0, h2d_n = 0;
  if (tbl) {
    bool has_kinds = nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "srcKind");
    char *sql = nsys_xasprintf(
        "SELECT copyKind, %s, %s, COUNT(*), SUM(bytes), SUM(\"end\"-start), MIN(start), MAX(\"end\") FROM %s "
        "WHERE start >= ?1 AND start < ?2 %s GROUP BY 1,2,3 ORDER BY 6 DESC",
        has_kinds ? "srcKind" : "-1", has_kinds ? "dstKind" : "-1", tbl,
        c->device >= 0 ? "AND deviceId = ?3" : "");
    sqlite3_stmt *st = nsys_actx_prepare(c, sql);
    free(sql);
    if (!st) return false;
    sqlite3_bind_int64(st, 1, c->t0);
    sqlite3_bind_int64(st, 2, c->t1);
    if (c->device >= 0) sqlite3_bind_int64(st, 3, c->device);
    while (sqlite3_step(st) == SQLITE_ROW) {
      int64_t ck = sqlite3_column_int64(st, 0), sk = sqlite3_column_int64(st, 1),
              dk = sqlite3_column_int64(st, 2), n = sqlite3_column_int64(st, 3),
              by = sqlite3_column_int64(st, 4), ns = sqlite3_column_int64(st, 5);
      bool pageable = (ck == 1 && sk == 0) || (ck == 2 && dk == 0);
      nsys_rec o = nsys_rtab_add(rows);
      nsys_rset_str(o, MEM_COPY_KIND, nsys__copy_kind(ck));
      nsys_rset_str(o, MEM_SRC_KIND, sk >= 0 ? nsys__mem_kind(sk) : NULL);
      nsys_rset_str(o, MEM_DST_KIND, dk >= 0 ? nsys__mem_kind(dk) : NULL);
      nsys_rset_i64(o, MEM_COUNT, n);
      nsys_rset_i64(o, MEM_BYTES, by);
      nsys_rset_i64(o, MEM_TOTAL_NS, ns);
      nsys_rset_f64(o, MEM_GB_PER_SEC, ns > 0 ? nsys_round2((double)by / (double)ns) : 0);
      nsys_rset_f64(o, MEM_AVG_BYTES, n ? round((double)by / n) : 0);
      nsys_rset_bool(o, MEM_PAGEABLE, pageable);
      n_all += n;
      bytes_all += by;
      ns_all += ns;
      if (pageable) {
        pageable_n += n;
        pageable_bytes += by;
      }
      if (ck == 1 && sk == 0) {
        if (!ph2d_n || sqlite3_column_int64(st, 6) < ph2d_s) ph2d_s = sqlite3_column_int64(st, 6);
        if (!ph2d_n || sqlite3_column_int64(st, 7) > ph2d_e) ph2d_e = sqlite3_column_int64(st, 7);
        ph2d_n += n;
        ph2d_bytes += by;
        ph2d_ns += ns;
      }
      if (ck == 1 || ck == 11) {
        h2d_n += n;
        h2d_bytes += by;
        h2d_ns += ns;
      }
    }
    sqlite3_finalize(st);
  }
  /* the busiest device's HtoD time (copies of several GPUs run in parallel):
   * per device, the union of its HtoD copies clipped to the window (several
   * copy engines overlap), so its share of the window stays <= 100% */
  int64_t h2d_max_dev = 0;
  int32_t h2d_dev = -1;
  if (tbl) {
    char *sql = nsys_xasprintf("SELECT deviceId, start, \"end\" FROM %s WHERE copyKind IN (1, 11) AND "
                               "start >= ?1 AND start < ?2 %s ORDER BY deviceId, start",
                               tbl, c->device >= 0 ? "AND deviceId = ?3" : "");
    sqlite3_stmt *st = nsys_actx_prepare(c, sql);
    free(sql);
    if (!st) return false;
    sqlite3_bind_int64(st, 1, c->t0);
    sqlite3_bind_int64(st, 2, c->t1);
    if (c->device >= 0) sqlite3_bind_int64(st, 3, c->device);
    int64_t dev = 0;
    bool have = false;
    nsys_ivls u;
    nsys_ivls_init(&u);
    for (uint32_t rows_seen = 0;; rows_seen++) {
      bool row = sqlite3_step(st) == SQLITE_ROW;
      int64_t d = row ? sqlite3_column_int64(st, 0) : 0;
      if (have && (!row || d != dev)) { /* device done */
        if (nsys_ivls_total(&u) > h2d_max_dev) {
          h2d_max_dev = nsys_ivls_total(&u);
          h2d_dev = (int32_t)dev;
        }
        nsys_ivls_clear(&u);
      }
      if (!row) break;
      if ((rows_seen & 0xFFFF) == 0 && nsys_task_cancelled(c->task)) {
        sqlite3_finalize(st);
        nsys_ivls_free(&u);
        nsys_task_fail_cancelled(c->task);
        return false;
      }
      dev = d;
      have = true;
      nsys_ivls_add_sorted(&u, sqlite3_column_int64(st, 1), NSYS_MIN(sqlite3_column_int64(st, 2), c->t1));
    }
    sqlite3_finalize(st);
    nsys_ivls_free(&u);
  }
  /* synchronous (blocking) copies: GPU copies whose launching API is not *Async */
  const nsys_index *ix = c->ix;
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++) {
    if (ix->ops.kind[i] != NSYS_OP_MEMCPY) continue;
    if (ix->ops.start[i] < c->t0 || ix->ops.start[i] >= c->t1) continue;
    if (!nsys_actx_device_selected(c, ix->tracks[ix->ops.track[i]].device)) continue;
    int32_t a = ix->ops.api[i];
    if (a >= 0 && nsys_actx_api_class(c, (uint32_t)a) == NSYS_API_MEMCPY_SYNC) sync_n++;
  }
  nsys_rset_i64(summary, MEMS_COUNT, n_all);
  nsys_rset_i64(summary, MEMS_BYTES, bytes_all);
  nsys_rset_i64(summary, MEMS_TOTAL_NS, ns_all);
  nsys_rset_i64(summary, MEMS_H2D_COUNT, h2d_n);
  nsys_rset_i64(summary, MEMS_H2D_BYTES, h2d_bytes);
  nsys_rset_i64(summary, MEMS_H2D_NS, h2d_ns);
  nsys_rset_i64(summary, MEMS_PAGEABLE_COUNT, pageable_n);
  nsys_rset_i64(summary, MEMS_PAGEABLE_BYTES, pageable_bytes);
  nsys_rset_i64(summary, MEMS_PH2D_COUNT, ph2d_n);
  nsys_rset_i64(summary, MEMS_PH2D_BYTES, ph2d_bytes);
  nsys_rset_i64(summary, MEMS_PH2D_NS, ph2d_ns);
  if (ph2d_n) {
    nsys_rec w = nsys_rset_obj(summary, MEMS_PH2D_WINDOW);
    nsys_rset_i64(w, WIN_START, ph2d_s);
    nsys_rset_i64(w, WIN_END, ph2d_e);
  } else {
    nsys_rset_null(summary, MEMS_PH2D_WINDOW);
  }
  nsys_rset_i64(summary, MEMS_SYNC_COPIES, sync_n);
  int64_t win = c->t1 - c->t0;
  if (h2d_dev >= 0) nsys_rset_i64(summary, MEMS_H2D_BUSIEST_DEVICE, h2d_dev);
  else nsys_rset_null(summary, MEMS_H2D_BUSIEST_DEVICE);
  nsys_rset_i64(summary, MEMS_H2D_BUSIEST_NS, h2d_max_dev);
  /* HtoD time of the busiest device as a share of the window */
  nsys_rset_f64(summary, MEMS_H2D_PCT_OF_WINDOW, win > 0 ? nsys_round2(100.0 * (double)h2d_max_dev / (double)win) : 0);
  nsys_rset_bool(summary, MEMS_MEMCPY_TABLE, tbl != NULL);
  return true;
}

/* ---------------------------------------------------------------- threads */

bool nsys_an_thread_utilization(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  if (!nsys__need_db(c)) return false;
  nsys_profile *p = c->p;
  const nsys_index *ix = c->ix;
  int64_t limit = nsys_actx_int(c, "limit");
  const char *samp = p->schema.table[NSYS_TBL_SAMPLING];
  const char *osrt = p->schema.table[NSYS_TBL_OSRT];
  const char *source = samp ? "cpu_sampling" : osrt ? "osrt" : "cuda_api";
  /* CPU data often extends beyond the GPU/CUDA activity the index spans:
   * without an explicit window, use the whole profile's span */
  if (!nsys_aparams_get(&c->params, "start")->set && p->info.span_end > p->info.span_start)
    c->t0 = NSYS_MIN(c->t0, p->info.span_start);
  if (!nsys_aparams_get(&c->params, "end")->set && p->info.span_end > p->info.span_start)
    c->t1 = NSYS_MAX(c->t1, p->info.span_end + 1);
  /* Collect per thread: samples (sampling) or OSRT time, and CUDA API time from the index. */
  typedef struct {
    int64_t gtid;
    int64_t samples, osrt_ns, api_ns;
  } th_t;
  th_t *v = NULL;
  size_t n = 0, cap = 0;
  int64_t total_samples = 0;
  if (samp || osrt) {
    char *sql = samp ? nsys_xasprintf("SELECT globalTid, COUNT(*) FROM %s WHERE start >= ?1 AND start < ?2 "
                                      "GROUP BY globalTid ORDER BY 2 DESC", samp)
                     /* outermost calls only (a nested call lies inside its parent),
                      * clipped at the window's end: at most the window per thread */
                     : nsys_xasprintf("SELECT globalTid, SUM(MIN(\"end\", ?2) - start) FROM %s WHERE start >= ?1 "
                                      "AND start < ?2 AND \"end\" >= start %s GROUP BY globalTid ORDER BY 2 DESC",
                                      osrt, nsys_schema_has_column(p, NSYS_TBL_OSRT, "nestingLevel")
                                                ? "AND nestingLevel = 0" : "");
    sqlite3_stmt *st = nsys_actx_prepare(c, sql);
    free(sql);
    if (!st) return false;
    sqlite3_bind_int64(st, 1, c->t0);
    sqlite3_bind_int64(st, 2, c->t1);
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (n == cap) {
        cap = cap ? cap * 2 : 64;
        v = nsys_xrealloc(v, cap * sizeof *v);
      }
      memset(&v[n], 0, sizeof *v);
      v[n].gtid = sqlite3_column_int64(st, 0);
      if (samp) {
        v[n].samples = sqlite3_column_int64(st, 1);
        total_samples += v[n].samples;
      } else {
        v[n].osrt_ns = sqlite3_column_int64(st, 1);
      }
      n++;
    }
    sqlite3_finalize(st);
  }
  /* CUDA API time per index thread: the union of its calls clipped to the
   * window (calls in start order), so nested calls count once and the share
   * of the window stays <= 100% */
  nsys_ivls u;
  nsys_ivls_init(&u);
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    nsys_ivls_clear(&u);
    for (uint32_t k = th->api_first; k < th->api_first + th->api_count && !nsys_actx_stop(c, k); k++)
      nsys_ivls_add_sorted(&u, NSYS_MAX(ix->api.start[k], c->t0), NSYS_MIN(ix->api.end[k], c->t1));
    int64_t api = nsys_ivls_total(&u);
    size_t j = 0;
    for (; j < n; j++)
      if (nsys_gtid_pid(v[j].gtid) == th->pid && nsys_gtid_tid(v[j].gtid) == th->tid) break;
    if (j == n) {
      if (!api) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 64;
        v = nsys_xrealloc(v, cap * sizeof *v);
      }
      memset(&v[n], 0, sizeof *v);
      v[n].gtid = ((int64_t)th->pid << 24) | th->tid;
      n++;
    }
    v[j].api_ns = api;
  }
  nsys_ivls_free(&u);
  int64_t win = c->t1 - c->t0;
  size_t shown = (limit > 0 && (size_t)limit < n) ? (size_t)limit : n;
  for (size_t i = 0; i < shown; i++) {
    nsys_rec o = nsys_rtab_add(rows);
    uint32_t pid = nsys_gtid_pid(v[i].gtid), tid = nsys_gtid_tid(v[i].gtid);
    nsys_rset_i64(o, TU_PID, pid);
    nsys_rset_i64(o, TU_TID, tid);
    const char *name = NULL;
    for (int k = 0; k < p->info.n_processes && !name; k++)
      if (p->info.processes[k].pid == pid)
        for (int m = 0; m < p->info.processes[k].n_threads; m++)
          if (p->info.processes[k].threads[m].tid == tid) name = p->info.processes[k].threads[m].name;
    nsys_rset_str(o, TU_NAME, name);
    if (samp) {
      nsys_rset_i64(o, TU_SAMPLES, v[i].samples);
      nsys_rset_f64(o, TU_CPU_PCT, total_samples ? nsys_round2(100.0 * (double)v[i].samples / (double)total_samples) : 0);
    } else if (osrt) {
      nsys_rset_i64(o, TU_OSRT_NS, v[i].osrt_ns);
      nsys_rset_f64(o, TU_OSRT_PCT, win > 0 ? nsys_round2(100.0 * (double)v[i].osrt_ns / (double)win) : 0);
    }
    nsys_rset_i64(o, TU_CUDA_API_NS, v[i].api_ns);
    nsys_rset_f64(o, TU_CUDA_API_PCT, win > 0 ? nsys_round2(100.0 * (double)v[i].api_ns / (double)win) : 0);
  }
  nsys_rset_str(summary, TUS_SOURCE, source);
  nsys_rset_i64(summary, TUS_THREADS, (int64_t)n);
  nsys_rset_i64(summary, TUS_SAMPLES, total_samples);
  nsys_rset_str(summary, TUS_CPU_PCT_BASIS,
                samp ? "share of all CPU samples in the window"
                     : osrt ? "OS runtime call time / window (blocked time, not CPU)"
                            : "no sampling or OSRT data: CUDA API time only");
  free(v);
  return true;
}

/* ---------------------------------------------------------------- schema */

bool nsys_an_schema_inspect(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  if (!nsys__need_db(c)) return false;
  nsys_profile *p = c->p;
  bool counts = nsys_actx_bool(c, "rowCounts");
  int64_t total_rows = 0;
  /* whole-table counts from the open-time summary, or COUNT(*) on a private
   * connection a cancellation interrupts (profile/row_count.c) */
  int n_tables = p->schema.n_all_tables;
  int64_t *nrows = counts ? nsys_xcalloc((size_t)n_tables + 1, sizeof *nrows) : NULL;
  if (counts && !nsys_profile_count_rows(p, c->task, (const char *const *)p->schema.all_tables, n_tables, nrows)) {
    free(nrows);
    return false;
  }
  for (int i = 0; i < n_tables; i++) {
    const char *t = p->schema.all_tables[i];
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_str(o, SCH_TABLE, t);
    nsys_rtab *cols = nsys_rset_arr(o, SCH_COLUMNS);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(p->db, "SELECT name, type FROM pragma_table_info(?1)", -1, &st, NULL) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
      while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_rec col = nsys_rtab_add(cols);
        nsys_rset_str(col, SCHC_NAME, (const char *)sqlite3_column_text(st, 0));
        const unsigned char *ty = sqlite3_column_text(st, 1);
        nsys_rset_str(col, SCHC_TYPE, ty ? (const char *)ty : "");
      }
    }
    sqlite3_finalize(st);
    if (counts) {
      int64_t cnt = nrows[i];
      if (cnt >= 0) {
        nsys_rset_i64(o, SCH_ROW_COUNT, cnt);
        total_rows += cnt;
      } else {
        nsys_rset_null(o, SCH_ROW_COUNT);
      }
    } else {
      nsys_rset_null(o, SCH_ROW_COUNT);
    }
    if (nsys_task_cancelled(c->task)) {
      free(nrows);
      nsys_task_fail_cancelled(c->task);
      return false;
    }
  }
  free(nrows);
  nsys_rset_i64(summary, SCHS_TABLES, p->schema.n_all_tables);
  if (counts) nsys_rset_i64(summary, SCHS_ROWS, total_rows);
  nsys_rset_str(summary, SCHS_SCHEMA_VERSION, p->info.schema_version);
  nsys_rset_str(summary, SCHS_NSYS_VERSION, p->info.nsys_version);
  return true;
}
