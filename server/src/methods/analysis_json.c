/* The converter of typed results to JSON (methods/analysis_json.h). */
#include "methods/analysis_json.h"

#include "rpc/json_int.h"

static cJSON *nsys__rlist_json(const nsys_rtab *t);

static cJSON *nsys__rval_json(const nsys_rcol *col, const nsys_rval *v) {
  if (v->st == NSYS_RV_NULL) return cJSON_CreateNull();
  switch (col->type) {
    case NSYS_RT_i64: return nsys_json_i64(v->u.i);
    case NSYS_RT_f64: return cJSON_CreateNumber(v->u.d);
    case NSYS_RT_str: return cJSON_CreateString(v->u.s);
    case NSYS_RT_bool: return cJSON_CreateBool(v->u.b);
    case NSYS_RT_obj: return nsys_rrec_json(nsys_rtab_row(v->u.t, 0));
    case NSYS_RT_arr: return nsys_rtab_json(v->u.t);
    case NSYS_RT_list: return nsys__rlist_json(v->u.t);
  }
  return cJSON_CreateNull();
}

cJSON *nsys_rrec_json(nsys_rec o) {
  cJSON *j = cJSON_CreateObject();
  if (!o.t) return j;
  const nsys_rdef *d = o.t->def;
  for (uint16_t i = 0; i < d->n; i++) {
    const nsys_rval *v = nsys_rrec_val(o, i);
    if (v->st != NSYS_RV_ABSENT) cJSON_AddItemToObject(j, d->cols[i].key, nsys__rval_json(&d->cols[i], v));
  }
  return j;
}

cJSON *nsys_rtab_json(const nsys_rtab *t) {
  cJSON *a = cJSON_CreateArray();
  for (uint32_t r = 0; r < nsys_rtab_len(t); r++) cJSON_AddItemToArray(a, nsys_rrec_json(nsys_rtab_row(t, r)));
  return a;
}

/* A list: its rows' one value each, bare. */
static cJSON *nsys__rlist_json(const nsys_rtab *t) {
  cJSON *a = cJSON_CreateArray();
  for (uint32_t r = 0; r < nsys_rtab_len(t); r++)
    cJSON_AddItemToArray(a, nsys__rval_json(&t->def->cols[0], nsys_rrec_val(nsys_rtab_row(t, r), 0)));
  return a;
}

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

cJSON *nsys_aresult_json(const nsys_aresult *r) {
  cJSON *res = cJSON_CreateObject();
  if (r->a) {
    cJSON_AddStringToObject(res, "name", r->a->name);
    cJSON_AddItemToObject(res, "params", nsys_aparams_json(&r->params));
    cJSON *w = cJSON_AddObjectToObject(res, "window");
    nsys_json_add_i64(w, "start", r->t0);
    nsys_json_add_i64(w, "end", r->t1);
  }
  cJSON_AddItemToObject(res, "rows", nsys_rtab_json(r->rows));
  cJSON_AddItemToObject(res, "summary", nsys_rrec_json(r->summary));
  return res;
}

cJSON *nsys_report_json(const nsys_report *r) {
  cJSON *res = nsys_rrec_json(r->rec);
  cJSON *an = cJSON_AddObjectToObject(res, "analyses");
  for (int i = 0; i < NSYS_REPORT_ANALYSES; i++)
    if (r->results[i]) cJSON_AddItemToObject(an, r->names[i], nsys_aresult_json(r->results[i]));
  return res;
}
