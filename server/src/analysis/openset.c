/* profile/openSet: several per-rank exports aligned on their session start
 * (TARGET_INFO_SESSION_START_TIME.utcEpochNs). A rank is one (file, device)
 * pair. Per-rank tables from overlap, nccl_breakdown and iterations, and
 * straggler detection: matching the k-th NCCL kernel of every rank, the rank
 * that starts it last is the one the others wait for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/report.h"
#include "common/util.h"
#include "profile/profile.h"
#include "rpc/method_table.h"

typedef struct {
  nsys_profile *p;
  const nsys_index *ix;
  int32_t device;
  int64_t offset; /* add to profile times to get set time (ns since the earliest session start) */
  int64_t *starts; /* NCCL kernel starts, set time */
  uint32_t n_starts, cap;
  uint32_t last_count;
  int64_t late_sum;
} nsys__rank;

static void nsys__collect_nccl(nsys_actx *c, uint32_t op, void *ud) {
  nsys__rank *r = ud;
  if (!nsys_actx_is_nccl_op(c, op)) return;
  if (r->n_starts == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 256;
    r->starts = nsys_xrealloc(r->starts, r->cap * sizeof *r->starts);
  }
  r->starts[r->n_starts++] = c->ix->ops.start[op] + r->offset;
}

static const cJSON *nsys__find_dev(const cJSON *arr, int32_t dev) {
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "device");
    if (cJSON_IsNumber(d) && (int32_t)d->valuedouble == dev) return it;
  }
  return NULL;
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

cJSON *nsys_openset_build(nsys_task *task, nsys_profile **ps, const nsys_index **ixs, int n) {
  /* alignment */
  int64_t min_utc = INT64_MAX;
  bool all_utc = true;
  for (int i = 0; i < n; i++) {
    if (ps[i]->info.utc_epoch_ns <= 0) all_utc = false;
    else if (ps[i]->info.utc_epoch_ns < min_utc) min_utc = ps[i]->info.utc_epoch_ns;
  }
  nsys__rank *ranks = NULL;
  uint32_t nr = 0, cap = 0;
  cJSON *res = cJSON_CreateObject();
  cJSON *files = cJSON_AddArrayToObject(res, "files");
  cJSON *rank_rows = cJSON_CreateArray();
  cJSON *ov_rows = cJSON_CreateArray(), *nc_rows = cJSON_CreateArray(), *it_rows = cJSON_CreateArray();
  int64_t set_start = INT64_MAX, set_end = INT64_MIN;
  for (int i = 0; i < n; i++) {
    /* set time = UTC - min_utc: session-relative times add their own epoch,
     * UTC times (normalised exports) only subtract the earliest one */
    bool utc_clock = nsys__clock_is_utc(task, ps[i]);
    int64_t off = all_utc ? (utc_clock ? 0 : ps[i]->info.utc_epoch_ns) - min_utc : 0;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "profileId", ps[i]->id);
    cJSON_AddStringToObject(f, "path", ps[i]->path);
    if (ps[i]->info.utc_epoch_ns > 0) nsys_json_int(f, "utcEpochNs", ps[i]->info.utc_epoch_ns);
    else cJSON_AddNullToObject(f, "utcEpochNs");
    nsys_json_int(f, "offsetNs", off);
    cJSON_AddBoolToObject(f, "utcClock", utc_clock);
    cJSON_AddItemToArray(files, f);
    if (ixs[i]->span_end > ixs[i]->span_start) {
      set_start = NSYS_MIN(set_start, ixs[i]->span_start + off);
      set_end = NSYS_MAX(set_end, ixs[i]->span_end + off);
    }
    nsys_task_progress_begin(task, "profile/openSet");
    nsys_task_progress(task, 100 * i / n, ps[i]->path);
    cJSON *ov = nsys_analysis_run(task, ps[i], ixs[i], "overlap", NULL, NULL);
    cJSON *nc = ov ? nsys_analysis_run(task, ps[i], ixs[i], "nccl_breakdown", NULL, NULL) : NULL;
    cJSON *it = nc ? nsys_analysis_run(task, ps[i], ixs[i], "iterations", NULL, NULL) : NULL;
    if (!it) {
      cJSON_Delete(ov);
      cJSON_Delete(nc);
      goto fail;
    }
    /* one rank per device of this file */
    nsys_actx c;
    if (!nsys_actx_init(&c, task, ps[i], ixs[i], nsys_analysis_find("nccl_breakdown"), NULL)) {
      cJSON_Delete(ov);
      cJSON_Delete(nc);
      cJSON_Delete(it);
      goto fail;
    }
    int32_t *devs;
    uint32_t nd = nsys_actx_devices(&c, &devs);
    for (uint32_t d = 0; d < nd; d++) {
      if (nr == cap) {
        cap = cap ? cap * 2 : 8;
        ranks = nsys_xrealloc(ranks, cap * sizeof *ranks);
      }
      nsys__rank *r = &ranks[nr];
      memset(r, 0, sizeof *r);
      r->p = ps[i];
      r->ix = ixs[i];
      r->device = devs[d];
      r->offset = off;
      nsys_actx_device_each(&c, devs[d], INT64_MIN, INT64_MAX, nsys__collect_nccl, r);
      cJSON *rr = cJSON_CreateObject();
      nsys_json_int(rr, "rank", nr);
      cJSON_AddStringToObject(rr, "profileId", ps[i]->id);
      nsys_json_int(rr, "device", devs[d]);
      nsys_json_int(rr, "offsetNs", off);
      nsys_json_int(rr, "ncclKernels", r->n_starts);
      cJSON_AddItemToArray(rank_rows, rr);
      const cJSON *o = nsys__find_dev(cJSON_GetObjectItem(ov, "rows"), devs[d]);
      if (o) {
        cJSON *x = cJSON_Duplicate(o, true);
        nsys_json_int(x, "rank", nr);
        cJSON_ReplaceItemInObject(x, "start", nsys_json_i64(nsys_json_obj_i64(x, "start", 0) + off));
        cJSON_ReplaceItemInObject(x, "end", nsys_json_i64(nsys_json_obj_i64(x, "end", 0) + off));
        cJSON_AddItemToArray(ov_rows, x);
      }
      o = nsys__find_dev(cJSON_GetObjectItem(cJSON_GetObjectItem(nc, "summary"), "byRank"), devs[d]);
      if (o) {
        cJSON *x = cJSON_Duplicate(o, true);
        nsys_json_int(x, "rank", nr);
        cJSON_AddItemToArray(nc_rows, x);
      }
      const cJSON *its = cJSON_GetObjectItem(it, "rows"), *row;
      int64_t cnt = 0, sum = 0, mx = 0;
      cJSON_ArrayForEach(row, its) {
        if ((int32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(row, "device")) != devs[d]) continue;
        int64_t du = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(row, "durationNs"));
        cnt++;
        sum += du;
        if (du > mx) mx = du;
      }
      cJSON *x = cJSON_CreateObject();
      nsys_json_int(x, "rank", nr);
      nsys_json_int(x, "device", devs[d]);
      nsys_json_int(x, "iterations", cnt);
      nsys_json_num(x, "avgNs", cnt ? round((double)sum / cnt) : 0);
      nsys_json_int(x, "maxNs", mx);
      cJSON_AddStringToObject(x, "method", cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "summary"), "method")));
      cJSON_AddItemToArray(it_rows, x);
      nr++;
    }
    free(devs);
    bool stopped = c.stopped || nsys_task_cancelled(task);
    nsys_actx_dispose(&c);
    cJSON_Delete(ov);
    cJSON_Delete(nc);
    cJSON_Delete(it);
    if (stopped) {
      nsys_task_fail_cancelled(task);
      goto fail;
    }
  }
  /* stragglers: the k-th NCCL kernel of every rank */
  uint32_t common = UINT32_MAX;
  for (uint32_t r = 0; r < nr; r++) common = NSYS_MIN(common, ranks[r].n_starts);
  if (nr < 2) common = 0;
  for (uint32_t k = 0; k < common; k++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint32_t last = 0;
    for (uint32_t r = 0; r < nr; r++) {
      int64_t s = ranks[r].starts[k];
      lo = NSYS_MIN(lo, s);
      if (s > hi) {
        hi = s;
        last = r;
      }
    }
    ranks[last].last_count++;
    for (uint32_t r = 0; r < nr; r++) ranks[r].late_sum += ranks[r].starts[k] - lo;
  }
  cJSON *st = cJSON_AddObjectToObject(res, "stragglers");
  nsys_json_int(st, "matchedCollectives", common);
  cJSON *per = cJSON_AddArrayToObject(st, "ranks");
  int32_t worst = -1;
  for (uint32_t r = 0; r < nr; r++) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "rank", r);
    nsys_json_int(o, "lastCount", ranks[r].last_count);
    nsys_json_num(o, "lastPct", common ? nsys_round2(100.0 * ranks[r].last_count / common) : 0);
    nsys_json_num(o, "avgLateNs", common ? round((double)ranks[r].late_sum / common) : 0);
    cJSON_AddItemToArray(per, o);
    if (worst < 0 || ranks[r].last_count > ranks[worst].last_count) worst = (int32_t)r;
  }
  bool is_straggler = common > 0 && worst >= 0 && ranks[worst].last_count * 2 > common;
  if (is_straggler) nsys_json_int(st, "straggler", worst);
  else cJSON_AddNullToObject(st, "straggler");
  cJSON_AddStringToObject(st, "rule",
                          "the k-th NCCL kernel of every rank is one collective; the rank starting it last "
                          "makes the others wait; a straggler is last in more than half of them");
  cJSON_AddBoolToObject(res, "aligned", all_utc);
  cJSON *w = cJSON_AddObjectToObject(res, "window");
  nsys_json_int(w, "start", set_start == INT64_MAX ? 0 : set_start);
  nsys_json_int(w, "end", set_end == INT64_MIN ? 0 : set_end);
  cJSON_AddItemToObject(res, "ranks", rank_rows);
  cJSON_AddItemToObject(res, "overlap", ov_rows);
  cJSON_AddItemToObject(res, "nccl", nc_rows);
  cJSON_AddItemToObject(res, "iterations", it_rows);
  for (uint32_t r = 0; r < nr; r++) free(ranks[r].starts);
  free(ranks);
  return res;
fail:
  for (uint32_t r = 0; r < nr; r++) free(ranks[r].starts);
  free(ranks);
  cJSON_Delete(rank_rows);
  cJSON_Delete(ov_rows);
  cJSON_Delete(nc_rows);
  cJSON_Delete(it_rows);
  cJSON_Delete(res);
  return NULL;
}
