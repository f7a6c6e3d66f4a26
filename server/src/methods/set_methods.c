/* The set methods (set/collectives, set/stragglers, set/nccl, set/close):
 * the results of a rank set opened by profile/openSet, paged. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/param_specs.gen.h"
#include "common/util.h"
#include "methods/reply_limit.h"
#include "methods/set_open.h"
#include "methods/set_partial.h"
#include "rpc/json_int.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

static nsys_set *nsys__set_param(nsys_call *call) {
  const char *id = NULL;
  if (!nsys_param_string(call, "setId", true, &id)) return NULL;
  nsys_set *s = nsys_set_get(id);
  if (!s) nsys_call_fail(call, NSYS_E_NOT_FOUND, "params.setId: no open set %s", id);
  return s;
}

static uint64_t nsys__hash(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h * 31 + 7;
}

/* Page bounds from cursor/limit: *pos first row, *limit rows. */
static bool nsys__page(nsys_call *call, uint64_t key, int64_t limit_max, uint64_t *pos, int64_t *limit) {
  const char *cursor = NULL;
  *limit = 0;
  if (!nsys_param_string(call, "cursor", false, &cursor) || !nsys_param_int64(call, "limit", false, 1, limit_max, limit))
    return false;
  if (!*limit) *limit = 1000;
  *pos = 0;
  if (cursor && !nsys_cursor_decode(cursor, key, pos)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.cursor: not a next of this listing");
    return false;
  }
  return true;
}

static void nsys__next(cJSON *res, uint64_t key, uint64_t pos, uint64_t total) {
  if (pos < total) {
    char tok[NSYS_CURSOR_LEN + 1];
    nsys_cursor_encode(tok, key, pos);
    cJSON_AddStringToObject(res, "next", tok);
  } else {
    cJSON_AddNullToObject(res, "next");
  }
}

static void nsys__bw(cJSON *o, const char *k, double v) {
  if (v < 0) cJSON_AddNullToObject(o, k);
  else nsys_json_num(o, k, nsys_round2(v));
}

cJSON *nsys_method_set_collectives(nsys_call *call) {
  const char *type = NULL, *id = NULL;
  uint64_t pos;
  int64_t limit;
  cJSON *res = NULL;
  int64_t only_rank = -1, at = 0;
  if (!nsys_param_string(call, "type", false, &type) || !nsys_param_string(call, "setId", true, &id) ||
      !nsys_param_int64(call, NSYS_P_SET_COLLECTIVES_RANK, &only_rank) ||
      !nsys_param_int64(call, NSYS_P_SET_COLLECTIVES_AT, &at))
    return NULL;
  bool has_at = cJSON_GetObjectItemCaseSensitive(call->params, "at") != NULL;
  if ((only_rank >= 0) != has_at) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s: rank and at go together", has_at ? "rank" : "at");
    return NULL;
  }
  char member[48];
  snprintf(member, sizeof member, "%" PRId64 "@%" PRId64, only_rank, at);
  uint64_t key = nsys__hash(nsys__hash(nsys__hash(1469598103934665603ULL, id), type), member);
  if (!nsys__page(call, key, NSYS_P_SET_COLLECTIVES_LIMIT_MAX, &pos, &limit)) return NULL;
  nsys_set *s = nsys__set_param(call);
  if (!s) return NULL;
  const nsys_rankset *rs = &s->rs;
  if (only_rank >= (int64_t)rs->n_ranks) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.rank: the set has %u ranks", rs->n_ranks);
    nsys_set_put(s);
    return NULL;
  }
  res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "setId", s->id);
  nsys_json_int(res, "ranks", rs->n_ranks);
  cJSON *rows = cJSON_AddArrayToObject(res, "rows");
  uint64_t total = 0;
  for (uint32_t i = 0; i < rs->n_colls; i++) {
    const nsys_set_coll *c = &rs->colls[i];
    if (type && strcmp(type, c->type)) continue;
    if (only_rank >= 0) { /* the collective holding that rank's kernel starting at `at` */
      const nsys_rank_coll *m = nsys_set_coll_member(rs, c, (uint32_t)only_rank);
      if (!m || m->start + rs->ranks[only_rank].offset != at) continue;
    }
    uint64_t row = total++;
    if (row < pos || row >= pos + (uint64_t)limit) continue;
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "id", i);
    cJSON_AddStringToObject(o, "comm", c->comm);
    nsys_json_int(o, "seq", c->seq);
    cJSON_AddStringToObject(o, "type", c->type);
    if (c->bytes >= 0) nsys_json_int(o, "bytes", c->bytes);
    else cJSON_AddNullToObject(o, "bytes");
    nsys_json_int(o, "ranks", c->ranks);
    nsys_json_int(o, "start", c->start);
    nsys_json_int(o, "end", c->end);
    nsys_json_int(o, "step", c->step);
    nsys_json_int(o, "lastRank", c->last_rank);
    nsys_json_int(o, "skewNs", c->skew);
    cJSON *st = cJSON_AddArrayToObject(o, "startsNs"), *du = cJSON_AddArrayToObject(o, "durationsNs");
    for (uint32_t r = 0; r < rs->n_ranks; r++) {
      const nsys_rank_coll *m = nsys_set_coll_member(rs, c, r);
      cJSON_AddItemToArray(st, m ? nsys_json_i64(m->start + rs->ranks[r].offset) : cJSON_CreateNull());
      cJSON_AddItemToArray(du, m ? nsys_json_i64(m->end - m->start) : cJSON_CreateNull());
    }
    nsys__bw(o, "algBwGBps", c->alg_bw);
    nsys__bw(o, "busBwGBps", c->bus_bw);
    cJSON_AddItemToArray(rows, o);
  }
  nsys_json_int(res, "total", (int64_t)total);
  nsys__next(res, key, pos + (uint64_t)limit, total);
  nsys_set_put(s);
  return res;
}

static cJSON *nsys__causes_obj(const int64_t *v, int64_t window) {
  cJSON *o = cJSON_CreateObject();
  static const char *const keys[] = {"computeNs", "dataLoadNs", "h2dNs", "syncNs", "launchGapNs"};
  for (int k = 0; k < NSYS_CAUSE__N; k++) nsys_json_int(o, keys[k], v[k]);
  nsys_json_int(o, "windowNs", window);
  return o;
}

cJSON *nsys_method_set_stragglers(nsys_call *call) {
  uint64_t pos;
  int64_t limit, step_off = 0, step_lim = 0, only = -1;
  const char *id = NULL;
  cJSON *res = NULL;
  if (!nsys_param_string(call, "setId", true, &id) ||
      !nsys_param_int64(call, NSYS_P_SET_STRAGGLERS_STEP_OFFSET, &step_off) ||
      !nsys_param_int64(call, NSYS_P_SET_STRAGGLERS_STEP_LIMIT, &step_lim))
    return NULL;
  const cJSON *rk = cJSON_GetObjectItemCaseSensitive(call->params, "rank");
  if (rk && !nsys_param_int64(call, NSYS_P_SET_STRAGGLERS_RANK, &only)) return NULL;
  if (!step_lim) step_lim = 256;
  char kb[64];
  snprintf(kb, sizeof kb, "%lld", (long long)only);
  uint64_t key = nsys__hash(nsys__hash(2166136261ULL, id), kb);
  if (!nsys__page(call, key, NSYS_P_SET_STRAGGLERS_LIMIT_MAX, &pos, &limit)) return NULL;
  nsys_set *s = nsys__set_param(call);
  if (!s) return NULL;
  const nsys_rankset *rs = &s->rs;
  res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "setId", s->id);
  cJSON *causes = cJSON_AddArrayToObject(res, "causes");
  for (int k = 0; k < NSYS_CAUSE__N; k++) cJSON_AddItemToArray(causes, cJSON_CreateString(nsys_cause_names[k]));
  nsys_json_int(res, "lateThresholdNs", rs->late_threshold);
  if (rs->straggler >= 0) nsys_json_int(res, "straggler", rs->straggler);
  else cJSON_AddNullToObject(res, "straggler");
  cJSON *ranks = cJSON_AddArrayToObject(res, "ranks");
  for (uint32_t r = 0; r < rs->n_ranks; r++) {
    const nsys_set_rank *x = &rs->ranks[r];
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "rank", r);
    nsys_json_int(o, "lateCount", x->late_count);
    nsys_json_num(o, "latePct", rs->n_colls ? nsys_round2(100.0 * x->late_count / rs->n_colls) : 0);
    nsys_json_int(o, "avgLateNs", x->late_count ? (int64_t)llround((double)x->late_sum / x->late_count) : 0);
    nsys_json_int(o, "maxLateNs", x->max_late);
    cJSON *cc = cJSON_AddObjectToObject(o, "causes");
    for (int k = 0; k < NSYS_CAUSE__N; k++) nsys_json_int(cc, nsys_cause_names[k], x->cause_count[k]);
    cJSON_AddItemToArray(ranks, o);
  }
  cJSON *events = cJSON_AddArrayToObject(res, "events");
  uint64_t total = 0;
  for (uint32_t i = 0; i < rs->n_events; i++) {
    const nsys_set_event *e = &rs->events[i];
    if (only >= 0 && e->rank != (uint64_t)only) continue;
    uint64_t at = total++;
    if (at < pos || at >= pos + (uint64_t)limit) continue;
    cJSON *o = nsys__causes_obj(e->rc->cause, e->rc->window);
    nsys_json_int(o, "collective", e->coll);
    nsys_json_int(o, "step", e->step);
    nsys_json_int(o, "rank", e->rank);
    nsys_json_int(o, "lateNs", e->late);
    cJSON_AddStringToObject(o, "cause", nsys_cause_names[e->cause]);
    if (e->carried_from >= 0) nsys_json_int(o, "carriedFrom", e->carried_from);
    else cJSON_AddNullToObject(o, "carriedFrom");
    cJSON_AddItemToObject(o, "peerMedian", nsys__causes_obj(e->peer_median, e->peer_median[NSYS_CAUSE__N]));
    cJSON_AddItemToArray(events, o);
  }
  nsys_json_int(res, "total", (int64_t)total);
  nsys__next(res, key, pos + (uint64_t)limit, total);
  /* rank x step skew: per step, sum over its collectives of (start - first start) */
  cJSON *skew = cJSON_AddObjectToObject(res, "skew");
  nsys_json_int(skew, "stepOffset", step_off);
  nsys_json_int(skew, "steps", rs->steps);
  int64_t w = (int64_t)rs->steps > step_off ? NSYS_MIN(step_lim, (int64_t)rs->steps - step_off) : 0;
  int64_t *m = nsys_xcalloc((size_t)(w * rs->n_ranks) + 1, sizeof *m);
  for (uint32_t i = 0; i < rs->n_colls; i++) {
    const nsys_set_coll *c = &rs->colls[i];
    if (c->step < step_off || c->step >= step_off + w) continue;
    for (uint32_t r = 0; r < rs->n_ranks; r++)
      if (c->member[r] != UINT32_MAX) m[(size_t)r * w + (c->step - step_off)] += nsys_set_coll_start(rs, c, r) - c->start;
  }
  cJSON *rows = cJSON_AddArrayToObject(skew, "rows");
  for (uint32_t r = 0; r < rs->n_ranks; r++) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "rank", r);
    cJSON *a = cJSON_AddArrayToObject(o, "lateNs");
    for (int64_t k = 0; k < w; k++) cJSON_AddItemToArray(a, nsys_json_i64(m[(size_t)r * w + k]));
    cJSON_AddItemToArray(rows, o);
  }
  free(m);
  nsys_set_put(s);
  return res;
}

cJSON *nsys_method_set_nccl(nsys_call *call) {
  nsys_set *s = nsys__set_param(call);
  if (!s) return NULL;
  const nsys_rankset *rs = &s->rs;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "setId", s->id);
  cJSON *link = cJSON_AddObjectToObject(res, "link");
  cJSON_AddStringToObject(link, "kind", rs->link_kind);
  nsys__bw(link, "gbps", rs->link_gbps);
  cJSON_AddStringToObject(link, "source", rs->link_source);
  cJSON *rows = cJSON_AddArrayToObject(res, "rows");
  for (uint32_t i = 0; i < rs->n_nccl; i++) {
    const nsys_set_nccl_row *r = &rs->nccl[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", r->type);
    cJSON_AddStringToObject(o, "bucket", r->bucket);
    if (r->min_bytes >= 0) {
      nsys_json_int(o, "minBytes", r->min_bytes);
      nsys_json_int(o, "maxBytes", r->max_bytes);
    } else {
      cJSON_AddNullToObject(o, "minBytes");
      cJSON_AddNullToObject(o, "maxBytes");
    }
    nsys_json_int(o, "count", r->count);
    nsys_json_int(o, "totalNs", r->total_ns);
    nsys_json_int(o, "avgNs", r->count ? (int64_t)llround((double)r->total_ns / r->count) : 0);
    nsys__bw(o, "busBwGBps", r->bus_bw);
    nsys__bw(o, "maxBusBwGBps", r->max_bus_bw);
    nsys__bw(o, "pctOfLink", r->pct_of_link);
    cJSON_AddItemToArray(rows, o);
  }
  nsys_set_put(s);
  return res;
}

cJSON *nsys_method_set_close(nsys_call *call) {
  const char *id = NULL;
  if (!nsys_param_string(call, "setId", true, &id)) return NULL;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddBoolToObject(res, "closed", nsys_set_remove(id) || nsys_set_partial_drop(id)); /* a set or a partial reduce */
  return res;
}
