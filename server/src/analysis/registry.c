/* The analysis registry: typed params with defaults, the common result
 * shape and the run wrapper used by analysis/run, report and diff. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/amemo.h"
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

nsys_aresult *nsys_aresult_stub(void) {
  nsys_aresult *r = nsys_xcalloc(1, sizeof *r);
  r->rows = nsys_rtab_new(NULL);
  return r;
}

void nsys_aresult_free(nsys_aresult *r) {
  if (!r) return;
  nsys_aparams_dispose(&r->params);
  nsys_rtab_free(r->rows);
  nsys_rtab_free(r->summary.t);
  free(r);
}

nsys_aresult *nsys_analysis_exec(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                                 const nsys_aparams *params, nsys_acache *cache) {
  const nsys_analysis *a = nsys_analysis_find_or_fail(task, name);
  if (!a) return NULL;
  if (task && !task->progress_begun) nsys_task_progress_begin(task, a->name); /* before the memo's build */
  if (!cache && !nsys_amemo_get(task, p, ix, &cache)) return NULL; /* cancelled while it was built */
  nsys_actx c;
  if (!nsys_actx_init(&c, task, p, ix, a, params)) return NULL;
  if (cache && cache->ix == ix) { /* a cache of another index is never lent */
    c.cache = cache;
    if (!cache->lent) cache->lent = true; /* (already set, and only read, when runs share it on threads) */
  }
  nsys_aresult *res = nsys_xcalloc(1, sizeof *res);
  res->a = a;
  res->rows = nsys_rtab_new(a->row);
  res->summary = nsys_rrec_new(a->summary);
  bool ok = a->run(&c, res->rows, res->summary);
  if (ok && (c.stopped || nsys_task_cancelled(task))) { /* cut short: partial numbers are not an answer */
    ok = false;
    nsys_task_fail_cancelled(task);
  }
  if (!ok) {
    nsys_aresult_free(res);
    nsys_actx_dispose(&c);
    if (!nsys_task_failed(task)) nsys_task_fail(task, NSYS_E_INTERNAL, "analysis %s failed", name);
    return NULL;
  }
  res->t0 = c.t0;
  res->t1 = c.t1;
  res->params = c.params; /* moved */
  memset(&c.params, 0, sizeof c.params);
  nsys_actx_dispose(&c);
  return res;
}
