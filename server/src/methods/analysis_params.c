/* The analyses' params in JSON: analysis/list's declarations, and the
 * parsing of a request's (or the CLI's --param k=v) `params` object into the
 * core's typed nsys_aparams, with errors that name the field. */
#include "methods/analysis_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/analysis_json.h"
#include "rpc/json_int.h"

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
    for (const nsys_aparam *p = nsys_analysis_common_params; p->name; p++) nsys__param_json(ps, p);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* A number item (exact integer text kept) as the value of a NUM or INT param. */
static bool nsys__set_number(nsys_aparams *ps, const nsys_aparam *d, const cJSON *num) {
  int64_t x;
  bool integral = nsys_json_get_i64(num, &x);
  if (d->type == NSYS_AP_INT) {
    if (!integral) return false; /* 1.5, 1e300 */
    nsys_aparams_set_int(ps, d->name, x);
  } else if (integral) {
    nsys_aparams_set_num_int(ps, d->name, x);
  } else {
    nsys_aparams_set_num(ps, d->name, num->valuedouble);
  }
  return true;
}

/* Sets param d from a JSON value (number, string as the CLI passes it, or
 * boolean) converted to its declared type; false on a type error. */
static bool nsys__coerce(nsys_aparams *ps, const nsys_aparam *d, const cJSON *raw) {
  if (cJSON_IsNumber(raw)) {
    if (d->type == NSYS_AP_STR) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.17g", raw->valuedouble);
      nsys_aparams_set_str(ps, d->name, buf);
      return true;
    }
    if (d->type == NSYS_AP_BOOL) return false;
    return nsys__set_number(ps, d, raw);
  }
  if (cJSON_IsBool(raw)) {
    if (d->type != NSYS_AP_BOOL) return false;
    nsys_aparams_set_bool(ps, d->name, cJSON_IsTrue(raw));
    return true;
  }
  if (!cJSON_IsString(raw)) return false;
  const char *text = raw->valuestring;
  switch (d->type) {
  case NSYS_AP_STR: nsys_aparams_set_str(ps, d->name, text); return true;
  case NSYS_AP_BOOL:
    if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes")) nsys_aparams_set_bool(ps, d->name, true);
    else if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no")) nsys_aparams_set_bool(ps, d->name, false);
    else return false;
    return true;
  case NSYS_AP_INT:
  case NSYS_AP_NUM: {
    cJSON *v = nsys_json_number_from_text(text); /* "1726751178667767434" exactly */
    bool ok = v && nsys__set_number(ps, d, v);
    cJSON_Delete(v);
    return ok;
  }
  }
  return false;
}

bool nsys_analysis_params_from_json(nsys_task *task, const nsys_analysis *a, const cJSON *given,
                                    nsys_aparams *out) {
  nsys_aparams_defaults(out, a);
  if (given && !cJSON_IsObject(given)) {
    nsys_aparams_dispose(out);
    return nsys_task_fail(task, NSYS_E_INVALID_PARAMS, "params.params: expected an object");
  }
  for (const cJSON *it = given ? given->child : NULL; it; it = it->next) {
    if (nsys_aparams_index(out, it->string) < 0) {
      nsys_aparams_dispose(out);
      return nsys_task_fail(task, NSYS_E_INVALID_PARAMS,
                            "params.params.%s: unknown parameter of analysis %s (see analysis/list)",
                            it->string, a->name);
    }
  }
  /* declaration order, so the first bad param named is the first declared */
  for (uint32_t i = 0; i < out->n; i++) {
    const nsys_aparam *d = nsys_aparams_decl(out, i);
    const cJSON *raw = given ? cJSON_GetObjectItemCaseSensitive(given, d->name) : NULL;
    if (!raw || cJSON_IsNull(raw)) continue; /* the default (or null) */
    if (!nsys__coerce(out, d, raw)) {
      nsys_aparams_dispose(out);
      return nsys_task_fail(task, NSYS_E_INVALID_PARAMS, "params.params.%s: expected %s %s", d->name,
                            d->type == NSYS_AP_INT ? "an" : "a", nsys__type_name(d->type));
    }
  }
  return true;
}

cJSON *nsys_analysis_run_json(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                              const cJSON *params, nsys_acache *cache) {
  const nsys_analysis *a = nsys_analysis_find_or_fail(task, name);
  if (!a) return NULL;
  nsys_aparams ps;
  if (!nsys_analysis_params_from_json(task, a, params, &ps)) return NULL;
  nsys_aresult *r = nsys_analysis_exec(task, p, ix, name, &ps, cache);
  nsys_aparams_dispose(&ps);
  cJSON *j = r ? nsys_aresult_json(r) : NULL;
  nsys_aresult_free(r);
  if (j && nsys_task_cancelled(task)) { /* cancelled while the answer was converted: still -32800 */
    cJSON_Delete(j);
    nsys_task_fail_cancelled(task);
    return NULL;
  }
  return j;
}
