/* The analysis registry: typed params with defaults, the common result
 * shape and the run wrapper used by analysis/run, report and diff. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analyses.h"
#include "analysis/devunions.h"
#include "common/util.h"
#include "profile/profile.h"

/* Params every analysis accepts (the window and the device filter). */
const nsys_aparam nsys_analysis_common_params[] = {
    {"start", NSYS_AP_INT, NULL, "window start (ns, profile clock); default: start of the profile"},
    {"end", NSYS_AP_INT, NULL, "window end (ns); default: end of the profile"},
    {"device", NSYS_AP_INT, "-1", "only this CUDA device (-1: all devices)"},
    {NULL, 0, NULL, NULL},
};

const nsys_analysis *nsys_analysis_find(const char *name) {
  if (!name) return NULL;
  for (const nsys_analysis *a = nsys_analyses; a->name; a++)
    if (strcmp(a->name, name) == 0) return a;
  return NULL;
}

sqlite3_stmt *nsys_actx_prepare(nsys_actx *c, const char *sql) { return nsys_profile_prepare(c->p, c->task, sql); }

void nsys_actx_dispose(nsys_actx *c) {
  nsys_acache_dispose(&c->own);
  nsys_aparams_dispose(&c->params);
  memset(c, 0, sizeof *c);
}

bool nsys_actx_init(nsys_actx *c, nsys_task *task, struct nsys_profile *p, const nsys_index *ix,
                    const nsys_analysis *a, const nsys_aparams *params) {
  memset(c, 0, sizeof *c);
  c->task = task;
  c->p = p;
  c->ix = ix;
  nsys_acache_init(&c->own, ix);
  c->cache = &c->own;
  if (params && params->a == a) nsys_aparams_copy(&c->params, params);
  else nsys_aparams_defaults(&c->params, a);
  const nsys_aval *s = nsys_aparams_get(&c->params, "start"), *e = nsys_aparams_get(&c->params, "end");
  c->t0 = s->set ? s->i : ix->span_start;
  c->t1 = e->set ? e->i : ix->span_end;
  if (c->t1 < c->t0) {
    nsys_task_fail(task, NSYS_E_INVALID_PARAMS, "params.params.end: must be >= start");
    nsys_aparams_dispose(&c->params);
    return false;
  }
  c->device = (int32_t)nsys_actx_int(c, "device");
  return true;
}

const nsys_analysis *nsys_analysis_find_or_fail(nsys_task *task, const char *name) {
  const nsys_analysis *a = nsys_analysis_find(name);
  if (!a)
    nsys_task_fail(task, NSYS_E_UNKNOWN_ANALYSIS, "params.name: unknown analysis '%s' (see analysis/list)",
                   name ? name : "");
  return a;
}

cJSON *nsys_analysis_run(nsys_task *task, struct nsys_profile *p, const nsys_index *ix,
                         const char *name, const nsys_aparams *params, nsys_acache *cache) {
  const nsys_analysis *a = nsys_analysis_find_or_fail(task, name);
  if (!a) return NULL;
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, a, params)) return NULL;
  if (cache && cache->ix == ix) { /* a cache of another index is never lent */
    c.cache = cache;
    if (!cache->lent) cache->lent = true; /* (already set, and only read, when runs share it on threads) */
  }
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "name", a->name);
  cJSON_AddItemToObject(res, "params", nsys_aparams_json(&c.params));
  cJSON *rows = cJSON_CreateArray(), *summary = cJSON_CreateObject();
  if (task && !task->progress_begun) nsys_task_progress_begin(task, a->name);
  bool ok = a->run(&c, rows, summary);
  if (ok && (c.stopped || nsys_task_cancelled(task))) { /* cut short: partial numbers are not an answer */
    ok = false;
    nsys_task_fail_cancelled(task);
  }
  if (!ok) {
    cJSON_Delete(rows);
    cJSON_Delete(summary);
    cJSON_Delete(res);
    nsys_actx_dispose(&c);
    if (!nsys_task_failed(task)) nsys_task_fail(task, NSYS_E_INTERNAL, "analysis %s failed", name);
    return NULL;
  }
  cJSON *w = cJSON_AddObjectToObject(res, "window");
  nsys_json_int(w, "start", c.t0);
  nsys_json_int(w, "end", c.t1);
  cJSON_AddItemToObject(res, "rows", rows);
  cJSON_AddItemToObject(res, "summary", summary);
  nsys_actx_dispose(&c);
  return res;
}

/* The resolved params as the result's `params` object (declaration order;
 * null where unset). Moves to methods/ with the rest of the result's JSON. */
cJSON *nsys_aparams_json(const nsys_aparams *ps) {
  cJSON *o = cJSON_CreateObject();
  for (uint32_t i = 0; i < ps->n; i++) {
    const nsys_aparam *d = nsys_aparams_decl(ps, i);
    const nsys_aval *v = &ps->v[i];
    if (!v->set) cJSON_AddNullToObject(o, d->name);
    else if (d->type == NSYS_AP_STR) cJSON_AddStringToObject(o, d->name, v->str);
    else if (d->type == NSYS_AP_BOOL) cJSON_AddBoolToObject(o, d->name, v->b);
    else if (d->type == NSYS_AP_INT || v->integral) nsys_json_add_i64(o, d->name, v->i);
    else cJSON_AddNumberToObject(o, d->name, v->num);
  }
  return o;
}
