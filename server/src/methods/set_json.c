/* JSON of rank sets: profile/openSet's result from the typed set, and the
 * per-rank summaries both ways (`nsys-ai rank-summary` prints them, Dask
 * gathers them, `nsys-ai ranks-reduce` reads them back). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/util.h"
#include "methods/set_open.h"
#include "methods/set_packed.h"
#include "rpc/json_int.h"

static const cJSON *nsys__find_dev(const cJSON *arr, int32_t dev) {
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "device");
    if (cJSON_IsNumber(d) && (int32_t)d->valuedouble == dev) return it;
  }
  return NULL;
}

/* The set file of set rank r (files without GPU ops have no ranks, so the
 * reduction's file numbers are not the set's). */
static uint32_t nsys__file_of(const nsys_set *s, uint32_t r) {
  const char *path = s->rs.sums[s->rs.ranks[r].summary].path;
  for (uint32_t f = 0; f < s->n_files; f++)
    if (!strcmp(s->files[f].path, path)) return f;
  return UINT32_MAX;
}

/* The per-rank analysis tables of profile/openSet (from the files' analysis results). */
static void nsys__rank_tables(const nsys_set *s, uint32_t r, cJSON *ov_rows, cJSON *nc_rows, cJSON *it_rows) {
  const nsys_rankset *rs = &s->rs;
  const nsys_set_rank *rk = &rs->ranks[r];
  const nsys_rank_summary *sum = &rs->sums[rk->summary];
  uint32_t f = nsys__file_of(s, r);
  const cJSON *t = f < s->n_files ? s->files[f].tables : NULL;
  if (!t) return;
  int32_t dev = sum->device;
  const cJSON *o = nsys__find_dev(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "overlap"), "rows"), dev);
  if (o) {
    cJSON *x = cJSON_Duplicate(o, true);
    nsys_json_int(x, "rank", r);
    cJSON_ReplaceItemInObject(x, "start", nsys_json_i64(nsys_json_obj_i64(x, "start", 0) + rk->offset));
    cJSON_ReplaceItemInObject(x, "end", nsys_json_i64(nsys_json_obj_i64(x, "end", 0) + rk->offset));
    cJSON_AddItemToArray(ov_rows, x);
  }
  o = nsys__find_dev(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "nccl"), "summary"), "byRank"), dev);
  if (o) {
    cJSON *x = cJSON_Duplicate(o, true);
    nsys_json_int(x, "rank", r);
    cJSON_AddItemToArray(nc_rows, x);
  }
  const cJSON *it = cJSON_GetObjectItem(t, "iterations"), *row;
  int64_t cnt = 0, total = 0, mx = 0;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(it, "rows")) {
    if ((int32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(row, "device")) != dev) continue;
    int64_t du = nsys_json_obj_i64(row, "durationNs", 0);
    cnt++;
    total += du;
    if (du > mx) mx = du;
  }
  cJSON *x = cJSON_CreateObject();
  nsys_json_int(x, "rank", r);
  nsys_json_int(x, "device", dev);
  nsys_json_int(x, "iterations", cnt);
  nsys_json_num(x, "avgNs", cnt ? round((double)total / cnt) : 0);
  nsys_json_int(x, "maxNs", mx);
  cJSON_AddStringToObject(x, "method", cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "summary"), "method")));
  cJSON_AddItemToArray(it_rows, x);
}

static int nsys__top_cause(const nsys_set_rank *r) {
  int best = -1;
  for (int k = 0; k < NSYS_CAUSE__N; k++)
    if (r->cause_count[k] && (best < 0 || r->cause_count[k] > r->cause_count[best])) best = k;
  return best;
}

cJSON *nsys_set_json_open(const nsys_set *s) {
  const nsys_rankset *rs = &s->rs;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "setId", s->id);
  cJSON *files = cJSON_AddArrayToObject(res, "files");
  for (uint32_t f = 0; f < s->n_files; f++) {
    const nsys_set_file *sf = &s->files[f];
    uint32_t rf = 0; /* the reduction's number of the file */
    while (rf < rs->n_files && strcmp(rs->files[rf], sf->path)) rf++;
    const nsys_rank_summary *sum = rf < rs->n_files ? &rs->sums[rs->file_sum[rf]] : NULL;
    cJSON *o = cJSON_CreateObject();
    nsys_json_str(o, "profileId", sf->profile_id[0] ? sf->profile_id : NULL);
    cJSON_AddStringToObject(o, "path", sf->path);
    if (sum && sum->utc_epoch_ns > 0) nsys_json_int(o, "utcEpochNs", sum->utc_epoch_ns);
    else cJSON_AddNullToObject(o, "utcEpochNs");
    nsys_json_int(o, "offsetNs", sum ? rs->file_offset[rf] : 0);
    cJSON_AddBoolToObject(o, "utcClock", sum && sum->utc_clock);
    nsys_json_str(o, "host", sum ? sum->host : NULL);
    nsys_json_int(o, "node", sum ? rs->file_node[rf] : 0);
    cJSON_AddBoolToObject(o, "cached", sf->cached);
    cJSON_AddItemToArray(files, o);
  }
  cJSON *ranks = cJSON_AddArrayToObject(res, "ranks");
  cJSON *ov = cJSON_CreateArray(), *nc = cJSON_CreateArray(), *it = cJSON_CreateArray();
  for (uint32_t r = 0; r < rs->n_ranks; r++) {
    const nsys_set_rank *rk = &rs->ranks[r];
    const nsys_rank_summary *sum = &rs->sums[rk->summary];
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "rank", r);
    uint32_t f = nsys__file_of(s, r);
    const char *pid = f < s->n_files && s->files[f].profile_id[0] ? s->files[f].profile_id : NULL;
    nsys_json_str(o, "profileId", pid);
    nsys_json_int(o, "file", f);
    nsys_json_int(o, "device", sum->device);
    nsys_json_int(o, "pid", sum->pid);
    nsys_json_int(o, "offsetNs", rk->offset);
    if (rk->global_rank >= 0) nsys_json_int(o, "globalRank", rk->global_rank);
    else cJSON_AddNullToObject(o, "globalRank");
    cJSON_AddStringToObject(o, "rankSource", rk->rank_source);
    nsys_json_int(o, "node", rk->node);
    nsys_json_int(o, "clockCorrectionNs", rs->nodes[rk->node].correction);
    nsys_json_int(o, "ncclKernels", sum->n_nccl);
    nsys_json_int(o, "collectives", rk->collectives);
    nsys_json_int(o, "steps", sum->steps);
    cJSON_AddItemToArray(ranks, o);
    nsys__rank_tables(s, r, ov, nc, it);
  }
  cJSON_AddBoolToObject(res, "aligned", rs->aligned);
  cJSON *w = cJSON_AddObjectToObject(res, "window");
  nsys_json_int(w, "start", rs->window_start);
  nsys_json_int(w, "end", rs->window_end);
  cJSON_AddItemToObject(res, "overlap", ov);
  cJSON_AddItemToObject(res, "nccl", nc);
  cJSON_AddItemToObject(res, "iterations", it);
  cJSON *st = cJSON_AddObjectToObject(res, "stragglers");
  nsys_json_int(st, "matchedCollectives", rs->n_colls);
  cJSON *per = cJSON_AddArrayToObject(st, "ranks");
  for (uint32_t r = 0; r < rs->n_ranks; r++) {
    const nsys_set_rank *rk = &rs->ranks[r];
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "rank", r);
    nsys_json_int(o, "lastCount", rk->last_count);
    nsys_json_num(o, "lastPct", rs->n_colls ? nsys_round2(100.0 * rk->last_count / rs->n_colls) : 0);
    nsys_json_num(o, "avgLateNs", rk->collectives ? round((double)rk->behind_sum / rk->collectives) : 0);
    nsys_json_int(o, "lateCount", rk->late_count);
    nsys_json_int(o, "maxLateNs", rk->max_late);
    int top = nsys__top_cause(rk);
    nsys_json_str(o, "topCause", top >= 0 ? nsys_cause_names[top] : NULL);
    cJSON_AddItemToArray(per, o);
  }
  if (rs->straggler >= 0) nsys_json_int(st, "straggler", rs->straggler);
  else cJSON_AddNullToObject(st, "straggler");
  cJSON_AddStringToObject(st, "rule",
                          "collectives are matched by communicator and sequence; the rank starting one last makes the "
                          "others wait; the straggler has the most total lateness over its late arrivals "
                          "(set/stragglers), twice the next rank's, else is last in more than half the collectives");
  cJSON *ck = cJSON_AddObjectToObject(res, "clock");
  cJSON_AddStringToObject(ck, "method", rs->clock_method);
  nsys_json_int(ck, "thresholdNs", rs->clock_threshold);
  cJSON *nodes = cJSON_AddArrayToObject(ck, "nodes");
  for (uint32_t i = 0; i < rs->n_nodes; i++) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "node", i);
    nsys_json_str(o, "host", rs->nodes[i].host);
    nsys_json_int(o, "files", rs->nodes[i].files);
    nsys_json_int(o, "correctionNs", rs->nodes[i].correction);
    nsys_json_int(o, "disagreementNs", rs->nodes[i].disagreement);
    nsys_json_int(o, "samples", rs->nodes[i].samples);
    cJSON_AddItemToArray(nodes, o);
  }
  cJSON *co = cJSON_AddObjectToObject(res, "collectives");
  nsys_json_int(co, "count", rs->n_colls);
  cJSON_AddStringToObject(co, "matchedBy", rs->matched_by);
  nsys_json_int(co, "unmatched", rs->unmatched);
  nsys_json_int(co, "communicators", rs->communicators);
  cJSON *types = cJSON_AddArrayToObject(co, "types");
  for (uint32_t i = 0; i < rs->n_types; i++) cJSON_AddItemToArray(types, cJSON_CreateString(rs->types[i]));
  cJSON *pa = cJSON_AddObjectToObject(res, "parallel");
  nsys_json_int(pa, "threads", s->threads);
  nsys_json_int(pa, "memoryBudgetMb", s->budget_mb);
  nsys_json_int(pa, "estimatedMb", s->est_mb);
  cJSON_AddBoolToObject(pa, "keptOpen", s->kept_open);
  return res;
}

/* --- summaries --- */

#define NSYS__COLL_FIELDS(X)                                                                                   \
  X("start", start) X("end", end) X("bytes", bytes) X("commSize", comm_size) X("step", step) X("window", window) \
  X("compute", cause[NSYS_CAUSE_COMPUTE]) X("dataLoad", cause[NSYS_CAUSE_DATALOAD]) X("h2d", cause[NSYS_CAUSE_H2D]) \
  X("sync", cause[NSYS_CAUSE_SYNC]) X("launchGap", cause[NSYS_CAUSE_LAUNCH_GAP])

cJSON *nsys_rank_summaries_json(const nsys_rank_summary *v, uint32_t n, bool packed) {
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; i < n; i++) {
    const nsys_rank_summary *r = &v[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", r->path);
    nsys_json_str(o, "host", r->host);
    nsys_json_str(o, "gpu", r->gpu);
    nsys_json_int(o, "ccMajor", r->cc_major);
    nsys_json_int(o, "device", r->device);
    nsys_json_int(o, "pid", r->pid);
    nsys_json_int(o, "utcEpochNs", r->utc_epoch_ns);
    cJSON_AddBoolToObject(o, "utcClock", r->utc_clock);
    nsys_json_int(o, "payloadRank", r->payload_rank);
    nsys_json_int(o, "spanStart", r->span_start);
    nsys_json_int(o, "spanEnd", r->span_end);
    nsys_json_int(o, "steps", r->steps);
    nsys_json_int(o, "ncclKernels", r->n_nccl);
    if (packed) {
      cJSON_AddItemToObject(o, "collectives", nsys_rank_colls_packed_json(r->colls, r->n_colls));
      cJSON_AddItemToArray(arr, o);
      continue;
    }
    cJSON *c = cJSON_AddObjectToObject(o, "collectives");
#define NSYS__W(key, field)                                                               \
  {                                                                                       \
    cJSON *a = cJSON_AddArrayToObject(c, key);                                            \
    for (uint32_t k = 0; k < r->n_colls; k++) cJSON_AddItemToArray(a, nsys_json_i64(r->colls[k].field)); \
  }
    NSYS__COLL_FIELDS(NSYS__W)
#undef NSYS__W
    cJSON *comm = cJSON_AddArrayToObject(c, "comm"), *type = cJSON_AddArrayToObject(c, "type");
    for (uint32_t k = 0; k < r->n_colls; k++) {
      char buf[40];
      snprintf(buf, sizeof buf, "%s%llx", r->colls[k].comm_payload ? "p" : "s", (unsigned long long)r->colls[k].comm);
      cJSON_AddItemToArray(comm, cJSON_CreateString(buf));
      cJSON_AddItemToArray(type, cJSON_CreateString(r->colls[k].type));
    }
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

static bool nsys__get(const cJSON *o, const char *k, int64_t *out) {
  return nsys_json_get_i64(cJSON_GetObjectItemCaseSensitive(o, k), out);
}

static char *nsys__dup_or_null(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
  return s ? nsys_xstrdup(s) : NULL;
}

/* The columns form of a summary's collectives (one JSON array per field) into
 * *out (calloc'd) and *count; false after a message in err. */
static bool nsys__colls_from_columns(const cJSON *c, int idx, nsys_rank_coll **out, int *count, char *err, size_t errcap) {
  const cJSON *comm = cJSON_GetObjectItemCaseSensitive(c, "comm"), *type = cJSON_GetObjectItemCaseSensitive(c, "type");
  int nc = cJSON_GetArraySize(comm);
  if (cJSON_GetArraySize(type) != nc) {
    snprintf(err, errcap, "[%d].collectives: arrays of different lengths", idx);
    return false;
  }
  nsys_rank_coll *colls = nsys_xcalloc((size_t)nc + 1, sizeof *colls);
#define NSYS__R(key, field)                                                                  \
  {                                                                                          \
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c, key);                               \
    if (cJSON_GetArraySize(a) != nc) {                                                       \
      snprintf(err, errcap, "[%d].collectives.%s: expected %d integers", idx, key, nc);      \
      free(colls);                                                                           \
      return false;                                                                          \
    }                                                                                        \
    int k = 0;                                                                               \
    const cJSON *e;                                                                          \
    cJSON_ArrayForEach(e, a) {                                                               \
      int64_t v;                                                                             \
      if (!nsys_json_get_i64(e, &v)) {                                                       \
        snprintf(err, errcap, "[%d].collectives.%s[%d]: expected an integer", idx, key, k); \
        free(colls);                                                                         \
        return false;                                                                        \
      }                                                                                      \
      colls[k++].field = (__typeof__(colls[0].field))v;                                      \
    }                                                                                        \
  }
  NSYS__COLL_FIELDS(NSYS__R)
#undef NSYS__R
  int k = 0;
  const cJSON *e, *t = type->child;
  cJSON_ArrayForEach(e, comm) {
    const char *cs = cJSON_GetStringValue(e), *ts = cJSON_GetStringValue(t);
    if (!cs || (cs[0] != 'p' && cs[0] != 's') || !ts) {
      snprintf(err, errcap, "[%d].collectives.comm[%d]: expected p<hex> or s<hex>", idx, k);
      free(colls);
      return false;
    }
    colls[k].comm_payload = cs[0] == 'p';
    colls[k].comm = strtoull(cs + 1, NULL, 16);
    snprintf(colls[k].type, sizeof colls[k].type, "%s", ts);
    t = t->next;
    k++;
  }
  *out = colls;
  *count = nc;
  return true;
}

bool nsys_rank_summaries_from_json(const cJSON *arr, nsys_rank_summary **out, uint32_t *n, uint32_t *cap, char *err,
                                   size_t errcap) {
  if (!cJSON_IsArray(arr)) {
    snprintf(err, errcap, "expected an array of rank summaries");
    return false;
  }
  const cJSON *o;
  int idx = 0;
  cJSON_ArrayForEach(o, arr) {
    int64_t x[8];
    static const char *const ints[] = {"ccMajor", "device", "pid", "utcEpochNs", "payloadRank", "spanStart", "spanEnd", "steps"};
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "path"));
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "collectives");
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(c, "comm"), *type = cJSON_GetObjectItemCaseSensitive(c, "type");
    bool packed = cJSON_GetObjectItemCaseSensitive(c, "packed") != NULL;
    if (!path || !cJSON_IsObject(c) || (!packed && (!cJSON_IsArray(comm) || !cJSON_IsArray(type)))) {
      snprintf(err, errcap, "[%d]: expected path and collectives", idx);
      return false;
    }
    for (size_t i = 0; i < NSYS_ARRAY_LEN(ints); i++)
      if (!nsys__get(o, ints[i], &x[i])) {
        snprintf(err, errcap, "[%d].%s: expected an integer", idx, ints[i]);
        return false;
      }
    int64_t nn = 0;
    nsys__get(o, "ncclKernels", &nn);
    nsys_rank_coll *colls = NULL;
    int nc = 0;
    if (packed) {
      char why[160];
      uint32_t pn = 0;
      if (!nsys_rank_colls_from_packed(c, &colls, &pn, why, sizeof why)) {
        snprintf(err, errcap, "[%d].collectives%s", idx, why);
        return false;
      }
      nc = (int)pn;
    } else if (!nsys__colls_from_columns(c, idx, &colls, &nc, err, errcap)) {
      return false;
    }
    if (*n == *cap) *out = nsys_xrealloc(*out, (*cap = *cap ? *cap * 2 : 16) * sizeof **out);
    nsys_rank_summary *r = &(*out)[(*n)++];
    memset(r, 0, sizeof *r);
    r->path = nsys_xstrdup(path);
    r->host = nsys__dup_or_null(o, "host");
    r->gpu = nsys__dup_or_null(o, "gpu");
    r->cc_major = (int)x[0];
    r->device = (int32_t)x[1];
    r->pid = (uint32_t)x[2];
    r->utc_epoch_ns = x[3];
    r->utc_clock = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "utcClock"));
    r->payload_rank = (int32_t)x[4];
    r->span_start = x[5];
    r->span_end = x[6];
    r->steps = (uint32_t)x[7];
    r->n_nccl = (uint32_t)nn;
    r->colls = colls;
    r->n_colls = (uint32_t)nc;
    idx++;
  }
  return true;
}
