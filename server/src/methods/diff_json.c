/* profile/diff result -> JSON (exact integers through rpc/json_int). */
#include "methods/diff_json.h"

#include <stdio.h>
#include <string.h>

#include "rpc/json_int.h"

static void nsys__num_or_null(cJSON *o, const char *k, bool has, double v) {
  if (has) cJSON_AddNumberToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

static cJSON *nsys__win(nsys_diff_win w) {
  if (!w.set) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "start", w.start);
  nsys_json_add_i64(o, "end", w.end);
  return o;
}

static cJSON *nsys__side(const nsys_diff_side *s) {
  cJSON *o = cJSON_CreateObject();
  nsys_json_str(o, "profileId", s->profile_id ? s->profile_id : "");
  nsys_json_str(o, "file", s->file);
  cJSON_AddItemToObject(o, "window", nsys__win((nsys_diff_win){true, s->span_start, s->span_end}));
  cJSON *g = cJSON_AddObjectToObject(o, "gpus");
  nsys_json_str(g, "model", s->gpu_model);
  nsys_json_add_i64(g, "count", s->gpu_count);
  cJSON *dv = cJSON_AddArrayToObject(o, "devices");
  for (uint32_t i = 0; i < s->n_devices; i++) cJSON_AddItemToArray(dv, nsys_json_i64(s->devices[i]));
  if (s->device >= 0) nsys_json_add_i64(o, "device", s->device);
  else cJSON_AddNullToObject(o, "device");
  cJSON_AddStringToObject(o, "iterationMethod", s->method);
  nsys_json_add_i64(o, "iterations", s->n_iters);
  nsys_json_add_i64(o, "warmup", s->warmup);
  nsys_json_add_i64(o, "steady", s->steady);
  cJSON_AddItemToObject(o, "steadyWindow", nsys__win(s->steady ? s->steady_win : (nsys_diff_win){0}));
  return o;
}

static cJSON *nsys__stats(const nsys_diff_stats *s) {
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "n", s->n);
  nsys_json_add_i64(o, "medianNs", s->median);
  nsys_json_add_i64(o, "madNs", s->mad);
  nsys_json_add_i64(o, "minNs", s->min);
  nsys_json_add_i64(o, "maxNs", s->max);
  return o;
}

static cJSON *nsys__iters(const nsys_diff_side *s, uint32_t limit, bool *truncated) {
  cJSON *a = cJSON_CreateArray();
  if (s->n_iters > limit) *truncated = true;
  for (uint32_t i = 0; i < s->n_iters && i < limit; i++) {
    const nsys_diff_iter *it = &s->iters[i];
    cJSON *o = cJSON_CreateObject();
    nsys_json_add_i64(o, "index", i);
    nsys_json_add_i64(o, "start", it->start);
    nsys_json_add_i64(o, "end", it->end);
    cJSON_AddBoolToObject(o, "warmup", it->warmup);
    for (int c = 0; c < NSYS_DC__COUNT; c++) {
      char k[48];
      snprintf(k, sizeof k, "%sNs", nsys_diff_comp_names[c]);
      nsys_json_add_i64(o, k, it->v[c]);
    }
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *nsys__launch(const nsys_diff_launch *l) {
  if (!l) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON *g = cJSON_AddArrayToObject(o, "grid"), *b = cJSON_AddArrayToObject(o, "block");
  for (int k = 0; k < 3; k++) {
    cJSON_AddItemToArray(g, nsys_json_i64(l->grid[k]));
    cJSON_AddItemToArray(b, nsys_json_i64(l->block[k]));
  }
  nsys_json_add_i64(o, "registersPerThread", l->regs);
  nsys_json_add_i64(o, "sharedMemBytes", l->smem);
  nsys_json_add_i64(o, "count", l->count);
  return o;
}

static cJSON *nsys__delta(const nsys_diff_delta *x) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", nsys_diff_kind_names[x->kind]);
  cJSON_AddStringToObject(o, "key", x->key);
  cJSON_AddStringToObject(o, "label", x->label);
  cJSON_AddStringToObject(o, "change", nsys_diff_change_names[x->change]);
  nsys_json_add_i64(o, "baseNs", x->base_ns);
  nsys_json_add_i64(o, "compareNs", x->cmp_ns);
  nsys_json_add_i64(o, "deltaNs", x->delta);
  nsys__num_or_null(o, "deltaPct", x->has_pct, x->pct);
  nsys_json_add_i64(o, "baseCount", x->base_count);
  nsys_json_add_i64(o, "compareCount", x->cmp_count);
  nsys_json_add_i64(o, "impactNs", x->impact);
  cJSON *ev = cJSON_AddObjectToObject(o, "evidence");
  cJSON_AddItemToObject(ev, "base", nsys__win(x->ev_base));
  cJSON_AddItemToObject(ev, "compare", nsys__win(x->ev_cmp));
  if (x->device >= 0) nsys_json_add_i64(o, "device", x->device);
  else cJSON_AddNullToObject(o, "device");
  if (x->has_stream) nsys_json_add_i64(o, "stream", x->stream);
  else cJSON_AddNullToObject(o, "stream");
  nsys_json_str(o, "family", x->family);
  if (x->kind == NSYS_DK_LAUNCH) {
    cJSON *l = cJSON_AddObjectToObject(o, "launch");
    cJSON_AddItemToObject(l, "base", nsys__launch(x->lb));
    cJSON_AddItemToObject(l, "compare", nsys__launch(x->lc));
  }
  return o;
}

cJSON *nsys_diff_json(const nsys_diff *d, const nsys_diff_page *page) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "base", nsys__side(&d->base));
  cJSON_AddItemToObject(r, "compare", nsys__side(&d->cmp));
  cJSON *cm = cJSON_AddObjectToObject(r, "comparability");
  cJSON_AddNumberToObject(cm, "score", d->score);
  cJSON_AddBoolToObject(cm, "comparable", d->comparable);
  cJSON_AddNumberToObject(cm, "kernelTimeOverlap", d->kernel_overlap);
  cJSON *rs = cJSON_AddArrayToObject(cm, "reasons");
  for (uint32_t i = 0; i < d->n_reasons; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", d->reasons[i].code);
    cJSON_AddStringToObject(o, "severity", d->reasons[i].severity);
    cJSON_AddStringToObject(o, "message", d->reasons[i].message);
    cJSON_AddItemToArray(rs, o);
  }
  cJSON *v = cJSON_AddObjectToObject(r, "verdict");
  cJSON_AddStringToObject(v, "overall", d->overall);
  nsys__num_or_null(v, "confidence", d->has_conf, d->conf);
  cJSON_AddStringToObject(v, "text", d->verdict_text);
  cJSON *cs = cJSON_AddArrayToObject(r, "components");
  for (int c = 0; c < NSYS_DC__COUNT; c++) {
    const nsys_diff_comp *x = &d->comps[c];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nsys_diff_comp_names[c]);
    cJSON_AddItemToObject(o, "base", nsys__stats(&x->base));
    cJSON_AddItemToObject(o, "compare", nsys__stats(&x->cmp));
    nsys_json_add_i64(o, "deltaNs", x->delta);
    nsys__num_or_null(o, "deltaPct", x->has_pct, x->pct);
    nsys_json_add_i64(o, "noiseNs", x->noise);
    nsys__num_or_null(o, "pValue", x->has_p, x->p_value);
    nsys__num_or_null(o, "confidence", x->has_p, 1 - x->p_value);
    cJSON_AddStringToObject(o, "verdict", nsys_diff_verdict_name(x->verdict));
    cJSON_AddItemToArray(cs, o);
  }
  cJSON *it = cJSON_AddObjectToObject(r, "iterations");
  bool trunc = false;
  cJSON_AddItemToObject(it, "base", nsys__iters(&d->base, page->iteration_limit, &trunc));
  cJSON_AddItemToObject(it, "compare", nsys__iters(&d->cmp, page->iteration_limit, &trunc));
  cJSON_AddBoolToObject(it, "truncated", trunc);
  cJSON *ds = cJSON_AddArrayToObject(r, "deltas");
  uint32_t total = 0;
  for (uint32_t i = 0; i < d->n_deltas; i++) {
    const nsys_diff_delta *x = &d->deltas[i];
    if (page->kinds && !(page->kinds & (1u << x->kind))) continue;
    if (total >= page->offset && total - page->offset < page->limit) cJSON_AddItemToArray(ds, nsys__delta(x));
    total++;
  }
  nsys_json_add_i64(r, "deltasTotal", total);
  nsys_json_add_i64(r, "offset", page->offset);
  nsys_json_add_i64(r, "limit", page->limit);
  if (d->has_gate) {
    cJSON *g = cJSON_AddObjectToObject(r, "gate");
    cJSON_AddStringToObject(g, "status", d->gate.status);
    cJSON_AddBoolToObject(g, "passed", !strcmp(d->gate.status, "pass"));
    cJSON *fs = cJSON_AddArrayToObject(g, "failures");
    for (uint32_t i = 0; i < d->gate.n_fails; i++) {
      const nsys_diff_failure *f = &d->gate.fails[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "target", f->target);
      cJSON_AddNumberToObject(o, "thresholdPct", f->threshold);
      nsys__num_or_null(o, "deltaPct", f->has_pct, f->pct);
      cJSON_AddStringToObject(o, "verdict", f->verdict);
      cJSON_AddStringToObject(o, "message", f->message);
      cJSON_AddItemToArray(fs, o);
    }
  }
  cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "summary"), "text", d->text);
  return r;
}
