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
static const nsys_aparam nsys__common_params[] = {
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

static const char *nsys__type_name(nsys_aparam_type t) {
  switch (t) {
  case NSYS_AP_INT: return "integer";
  case NSYS_AP_NUM: return "number";
  case NSYS_AP_STR: return "string";
  case NSYS_AP_BOOL: return "boolean";
  }
  return "string";
}

static void nsys__param_json(cJSON *arr, const nsys_aparam *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", p->name);
  cJSON_AddStringToObject(o, "type", nsys__type_name(p->type));
  if (!p->def) cJSON_AddNullToObject(o, "default");
  else if (p->type == NSYS_AP_STR) cJSON_AddStringToObject(o, "default", p->def);
  else if (p->type == NSYS_AP_BOOL) cJSON_AddBoolToObject(o, "default", strcmp(p->def, "true") == 0);
  else cJSON_AddNumberToObject(o, "default", strtod(p->def, NULL));
  cJSON_AddStringToObject(o, "description", p->desc);
  cJSON_AddItemToArray(arr, o);
}

cJSON *nsys_analysis_list_json(void) {
  cJSON *arr = cJSON_CreateArray();
  for (const nsys_analysis *a = nsys_analyses; a->name; a++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", a->name);
    cJSON_AddStringToObject(o, "description", a->description);
    cJSON *ps = cJSON_AddArrayToObject(o, "params");
    for (const nsys_aparam *p = a->params; p && p->name; p++) nsys__param_json(ps, p);
    for (const nsys_aparam *p = nsys__common_params; p->name; p++) nsys__param_json(ps, p);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* Converts a raw value (JSON number/string/bool or default text) to the
 * declared type. Returns NULL on a type error. */
static cJSON *nsys__coerce(const nsys_aparam *p, const cJSON *raw, const char *text) {
  char buf[64];
  if (raw && cJSON_IsString(raw)) text = raw->valuestring;
  else if (raw && cJSON_IsNumber(raw)) {
    if (p->type == NSYS_AP_STR) {
      snprintf(buf, sizeof buf, "%.17g", raw->valuedouble);
      return cJSON_CreateString(buf);
    }
    if (p->type == NSYS_AP_BOOL) return NULL;
    int64_t x;
    if (p->type == NSYS_AP_INT && !nsys_json_get_i64(raw, &x)) return NULL; /* 1.5, 1e300 */
    return cJSON_Duplicate(raw, false); /* keeps an integer's exact text */
  } else if (raw && cJSON_IsBool(raw)) {
    if (p->type != NSYS_AP_BOOL) return NULL;
    return cJSON_CreateBool(cJSON_IsTrue(raw));
  } else if (raw) {
    return NULL;
  }
  if (!text) return NULL;
  switch (p->type) {
  case NSYS_AP_STR: return cJSON_CreateString(text);
  case NSYS_AP_BOOL:
    if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes"))
      return cJSON_CreateTrue();
    if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no"))
      return cJSON_CreateFalse();
    return NULL;
  case NSYS_AP_INT:
  case NSYS_AP_NUM: {
    cJSON *v = nsys_json_number_from_text(text); /* "1726751178667767434" exactly */
    int64_t x;
    if (v && p->type == NSYS_AP_INT && !nsys_json_get_i64(v, &x)) {
      cJSON_Delete(v);
      return NULL;
    }
    return v;
  }
  }
  return NULL;
}

static bool nsys__declared(const nsys_analysis *a, const char *name) {
  for (const nsys_aparam *p = a->params; p && p->name; p++)
    if (!strcmp(p->name, name)) return true;
  for (const nsys_aparam *p = nsys__common_params; p->name; p++)
    if (!strcmp(p->name, name)) return true;
  return false;
}

static bool nsys__resolve_list(nsys_call *call, const nsys_aparam *list, const cJSON *given,
                               cJSON *out) {
  for (const nsys_aparam *p = list; p && p->name; p++) {
    const cJSON *raw = given ? cJSON_GetObjectItemCaseSensitive(given, p->name) : NULL;
    if (raw && cJSON_IsNull(raw)) raw = NULL;
    if (!raw && !p->def) {
      cJSON_AddNullToObject(out, p->name);
      continue;
    }
    cJSON *v = nsys__coerce(p, raw, p->def);
    if (!v) {
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.params.%s: expected %s %s", p->name,
                     p->type == NSYS_AP_INT ? "an" : "a", nsys__type_name(p->type));
      return false;
    }
    cJSON_AddItemToObject(out, p->name, v);
  }
  return true;
}

void nsys_actx_dispose(nsys_actx *c) {
  nsys_acache_dispose(&c->own);
  cJSON_Delete(c->params);
  memset(c, 0, sizeof *c);
}

bool nsys_actx_init(nsys_actx *c, nsys_call *call, struct nsys_profile *p, const nsys_index *ix,
                    const nsys_analysis *a, const cJSON *params) {
  memset(c, 0, sizeof *c);
  c->call = call;
  c->p = p;
  c->ix = ix;
  nsys_acache_init(&c->own, ix);
  c->cache = &c->own;
  if (params && !cJSON_IsObject(params)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.params: expected an object");
    return false;
  }
  for (const cJSON *it = params ? params->child : NULL; it; it = it->next) {
    if (!nsys__declared(a, it->string)) {
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                     "params.params.%s: unknown parameter of analysis %s (see analysis/list)",
                     it->string, a->name);
      return false;
    }
  }
  c->params = cJSON_CreateObject();
  if (!nsys__resolve_list(call, a->params, params, c->params) ||
      !nsys__resolve_list(call, nsys__common_params, params, c->params)) {
    cJSON_Delete(c->params);
    c->params = NULL;
    return false;
  }
  c->t0 = ix->span_start;
  c->t1 = ix->span_end;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(c->params, "start");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(c->params, "end");
  c->t0 = nsys_json_i64_or(s, c->t0);
  c->t1 = nsys_json_i64_or(e, c->t1);
  if (c->t1 < c->t0) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.params.end: must be >= start");
    cJSON_Delete(c->params);
    c->params = NULL;
    return false;
  }
  c->device = (int32_t)nsys_actx_int(c, "device");
  return true;
}

cJSON *nsys_analysis_run(nsys_call *call, struct nsys_profile *p, const nsys_index *ix,
                         const char *name, const cJSON *params) {
  return nsys_analysis_run_cached(call, p, ix, name, params, NULL);
}

cJSON *nsys_analysis_run_cached(nsys_call *call, struct nsys_profile *p, const nsys_index *ix,
                                const char *name, const cJSON *params, nsys_acache *cache) {
  const nsys_analysis *a = nsys_analysis_find(name);
  if (!a)
    return nsys_call_fail(call, NSYS_E_UNKNOWN_ANALYSIS,
                          "params.name: unknown analysis '%s' (see analysis/list)",
                          name ? name : "");
  nsys_actx c;
  if (!nsys_actx_init(&c, call, p, ix, a, params)) return NULL;
  if (cache && cache->ix == ix) { /* a cache of another index is never lent */
    c.cache = cache;
    cache->lent = true;
  }
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "name", a->name);
  cJSON_AddItemToObject(res, "params", cJSON_Duplicate(c.params, true));
  cJSON *rows = cJSON_CreateArray(), *summary = cJSON_CreateObject();
  if (call && !call->task.progress_begun) nsys_call_progress_begin(call, a->name);
  bool ok = a->run(&c, rows, summary);
  if (ok && (c.stopped || nsys_call_cancelled(call))) { /* cut short: partial numbers are not an answer */
    ok = false;
    nsys_call_fail_cancelled(call);
  }
  if (!ok) {
    cJSON_Delete(rows);
    cJSON_Delete(summary);
    cJSON_Delete(res);
    nsys_actx_dispose(&c);
    if (call->task.err == NSYS_OK) nsys_call_fail(call, NSYS_E_INTERNAL, "analysis %s failed", name);
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
