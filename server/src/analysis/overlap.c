/* overlap (compute vs communication on unions), stream_classification and
 * stage_overlap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "common/util.h"

typedef struct {
  int64_t compute, comm, overlap, idle, span;
} nsys__ov;

static void nsys__overlap_in(nsys_actx *c, int32_t dev, int64_t a, int64_t b, nsys__ov *o) {
  nsys_ivls x, y;
  nsys_ivls_init(&x);
  nsys_ivls_init(&y);
  const nsys_op_pred preds[2] = {nsys_pred_compute, nsys_pred_comm};
  nsys_ivls *const outs[2] = {&x, &y};
  nsys_actx_device_unions(c, dev, a, b, preds, outs, 2);
  o->compute = nsys_ivls_total(&x);
  o->comm = nsys_ivls_total(&y);
  o->overlap = nsys_ivls_intersect_len(&x, &y);
  o->span = b - a;
  o->idle = o->span - (o->compute + o->comm - o->overlap);
  if (o->idle < 0) o->idle = 0;
  nsys_ivls_free(&x);
  nsys_ivls_free(&y);
}

static cJSON *nsys__ov_json(int32_t dev, int64_t a, int64_t b, const nsys__ov *o) {
  cJSON *j = cJSON_CreateObject();
  nsys_json_int(j, "device", dev);
  nsys_json_int(j, "start", a);
  nsys_json_int(j, "end", b);
  nsys_json_int(j, "computeOnlyNs", o->compute - o->overlap);
  nsys_json_int(j, "commOnlyNs", o->comm - o->overlap);
  nsys_json_int(j, "overlapNs", o->overlap);
  nsys_json_int(j, "idleNs", o->idle);
  nsys_json_int(j, "computeNs", o->compute);
  nsys_json_int(j, "commNs", o->comm);
  if (o->comm > 0) nsys_json_num(j, "commHiddenPct", nsys_round2(100.0 * (double)o->overlap / (double)o->comm));
  else cJSON_AddNullToObject(j, "commHiddenPct");
  nsys_json_num(j, "idlePct", o->span > 0 ? nsys_round2(100.0 * (double)o->idle / (double)o->span) : 0);
  return j;
}

bool nsys_an_overlap(nsys_actx *c, cJSON *rows, cJSON *summary) {
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  cJSON *sd = cJSON_AddArrayToObject(summary, "devices");
  nsys__ov tot = {0};
  for (uint32_t d = 0; d < nd; d++) {
    int64_t a, b;
    if (!nsys_actx_device_span(c, devs[d], nsys_pred_kernel_or_graph, &a, &b)) continue;
    nsys__ov o;
    nsys__overlap_in(c, devs[d], a, b, &o);
    cJSON_AddItemToArray(rows, nsys__ov_json(devs[d], a, b, &o));
    cJSON_AddItemToArray(sd, nsys__ov_json(devs[d], a, b, &o));
    tot.compute += o.compute;
    tot.comm += o.comm;
    tot.overlap += o.overlap;
    tot.idle += o.idle;
    tot.span += o.span;
  }
  cJSON *t = nsys__ov_json(-1, c->t0, c->t1, &tot);
  cJSON_DeleteItemFromObject(t, "device");
  cJSON_DeleteItemFromObject(t, "start");
  cJSON_DeleteItemFromObject(t, "end");
  cJSON_AddItemToObject(summary, "total", t);
  cJSON *iters = cJSON_AddArrayToObject(summary, "iterations");
  if (nsys_actx_bool(c, "perIteration")) {
    nsys_iter *its;
    const char *method;
    uint32_t n = nsys_detect_iterations(c, &its, &method);
    /* gap-based boundaries are a heuristic: per-iteration overlap only for markers */
    if (strcmp(method, "nvtx") == 0) {
      for (uint32_t i = 0; i < n; i++) {
        nsys__ov o;
        nsys__overlap_in(c, its[i].device, its[i].start, its[i].end, &o);
        cJSON *j = nsys__ov_json(its[i].device, its[i].start, its[i].end, &o);
        nsys_json_int(j, "iteration", i);
        cJSON_AddItemToArray(iters, j);
      }
    }
    cJSON_AddStringToObject(summary, "iterationMethod", method);
    free(its);
  }
  cJSON_AddStringToObject(summary, "commRule", "kernel name contains 'nccl' (case-insensitive)");
  free(devs);
  return true;
}

/* ------------------------------------------------------ stream_classification */

bool nsys_an_stream_classification(nsys_actx *c, cJSON *rows, cJSON *summary) {
  const nsys_index *ix = c->ix;
  uint32_t counts[4] = {0};
  static const char *const cls_names[4] = {"compute", "comm", "copy", "mixed"};
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (!nsys_actx_device_selected(c, tr->device)) continue;
    uint64_t kern = 0, comm = 0, copies = 0;
    int64_t busy = 0;
    int32_t purpose = -1; /* strtab id of the common innermost NVTX of comm kernels */
    bool purpose_mixed = false, any_purpose = false;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
      if (ix->ops.start[i] < c->t0 || ix->ops.start[i] >= c->t1) continue;
      busy += nsys_op_dur(ix, i);
      if (ix->ops.kind[i] == NSYS_OP_GRAPH) { /* a graph launch: compute work, as in overlap */
        kern++;
        continue;
      }
      if (ix->ops.kind[i] != NSYS_OP_KERNEL) {
        copies++;
        continue;
      }
      kern++;
      if (!nsys_actx_is_nccl_op(c, i)) continue;
      comm++;
      int32_t a = ix->ops.api[i];
      int32_t r = a >= 0 ? nsys_actx_innermost_nvtx(ix, ix->api.thread[a], ix->api.start[a], ix->api.end[a]) : -1;
      int32_t nm = r >= 0 ? (int32_t)ix->nvtx.name[r] : -1;
      if (!any_purpose) {
        purpose = nm;
        any_purpose = true;
      } else if (nm != purpose) {
        purpose_mixed = true;
      }
    }
    if (!kern && !copies) continue;
    /* one-sided purity: kernels decide (copies never break purity); a stream
     * with kernels of both kinds, or whose comm kernels disagree on the
     * enclosing NVTX purpose, is mixed. */
    int cls;
    if (!kern) cls = NSYS_STREAM_COPY;
    else if (comm == kern) cls = purpose_mixed ? NSYS_STREAM_MIXED : NSYS_STREAM_COMM;
    else if (comm == 0) cls = NSYS_STREAM_COMPUTE;
    else cls = NSYS_STREAM_MIXED;
    counts[cls]++;
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "device", tr->device);
    nsys_json_int(o, "stream", tr->stream);
    cJSON_AddStringToObject(o, "class", cls_names[cls]);
    nsys_json_int(o, "kernels", (int64_t)kern);
    nsys_json_int(o, "commKernels", (int64_t)comm);
    nsys_json_int(o, "copies", (int64_t)copies);
    nsys_json_int(o, "busyNs", busy);
    if (comm && purpose_mixed) cJSON_AddStringToObject(o, "purpose", "(disagreeing NVTX ranges)");
    else if (comm && purpose >= 0) cJSON_AddStringToObject(o, "purpose", nsys_strtab_get(&ix->strings, (uint32_t)purpose));
    else cJSON_AddNullToObject(o, "purpose");
    cJSON_AddItemToArray(rows, o);
  }
  for (int k = 0; k < 4; k++) nsys_json_int(summary, cls_names[k], counts[k]);
  cJSON_AddStringToObject(summary, "rule",
                          "comm: every kernel is NCCL and their innermost NVTX agree; compute: no NCCL "
                          "kernel; copy: memcpy/memset only; else mixed");
  return true;
}

/* ---------------------------------------------------------------- stage_overlap */

typedef struct {
  uint32_t name;
  int32_t device;
  uint32_t ranges;
  int64_t comm, overlap, exposed, gpu;
  double min_frac, max_frac;
  uint32_t comm_kernels;
} nsys__stage;

typedef struct {
  nsys_ivls *compute;
  nsys__stage *st;
} nsys__stage_ud;

static void nsys__stage_kernel(nsys_actx *c, uint32_t op, void *ud) {
  nsys__stage_ud *u = ud;
  if (!nsys_actx_is_nccl_op(c, op)) return;
  int64_t s = c->ix->ops.start[op], e = c->ix->ops.end[op];
  if (e <= s) return;
  double f = (double)nsys_ivls_len_in(u->compute, s, e) / (double)(e - s);
  if (!u->st->comm_kernels || f < u->st->min_frac) u->st->min_frac = f;
  if (!u->st->comm_kernels || f > u->st->max_frac) u->st->max_frac = f;
  u->st->comm_kernels++;
}

static int nsys__cmp_stage(const void *a, const void *b) {
  const nsys__stage *x = a, *y = b;
  if (x->exposed != y->exposed) return x->exposed > y->exposed ? -1 : 1;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

bool nsys_an_stage_overlap(nsys_actx *c, cJSON *rows, cJSON *summary) {
  const nsys_index *ix = c->ix;
  const char *pat = nsys_actx_str(c, "stagePattern");
  uint32_t ns = ix->strings.count;
  uint8_t *match = nsys_xcalloc((size_t)ns + 1, 1);
  for (uint32_t k = 0; k < ns; k++) {
    const char *s = nsys_strtab_get(&ix->strings, k);
    if (!pat || !*pat) {
      match[k] = nsys_icontains(s, "forward") || nsys_icontains(s, "backward") ||
                 nsys_icontains(s, "fwd") || nsys_icontains(s, "bwd") || nsys_icontains(s, "stage");
    } else {
      /* '|' separates alternatives */
      const char *p = pat;
      while (*p && !match[k]) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char alt[128];
        if (len >= sizeof alt) len = sizeof alt - 1;
        memcpy(alt, p, len);
        alt[len] = '\0';
        if (len && nsys_icontains(s, alt)) match[k] = 1;
        p = bar ? bar + 1 : p + len;
      }
    }
  }
  nsys__stage *st = NULL;
  uint32_t nst = 0, cap = 0;
  nsys_ivls comp, comm;
  nsys_ivls_init(&comp);
  nsys_ivls_init(&comm);
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    for (uint32_t r = th->nvtx_first; r < th->nvtx_first + th->nvtx_count; r++) {
      uint32_t nm = ix->nvtx.name[r];
      if (nm >= ns || !match[nm]) continue;
      if (ix->nvtx.end[r] < c->t0 || ix->nvtx.start[r] >= c->t1) continue;
      /* GPU window of the stage: ops launched from inside the range */
      const nsys_host_thread *h = th;
      int64_t gs = 0, ge = 0;
      int32_t dev = -1;
      uint32_t nops = 0;
      uint32_t lo = 0, hi = h->api_count;
      while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (ix->api.start[h->api_first + m] < ix->nvtx.start[r]) lo = m + 1;
        else hi = m;
      }
      for (uint32_t k = h->api_first + lo; k < h->api_first + h->api_count; k++) {
        if (ix->api.start[k] > ix->nvtx.end[r]) break;
        if (ix->api.end[k] > ix->nvtx.end[r]) continue;
        for (int32_t op = ix->api.first_op[k]; op >= 0; op = ix->op_next[op]) {
          if (!nops || ix->ops.start[op] < gs) gs = ix->ops.start[op];
          if (!nops || ix->ops.end[op] > ge) ge = ix->ops.end[op];
          if (!nops) dev = ix->tracks[ix->ops.track[op]].device;
          nops++;
        }
      }
      if (!nops || !nsys_actx_device_selected(c, dev)) continue;
      uint32_t si = 0;
      while (si < nst && !(st[si].name == nm && st[si].device == dev)) si++;
      if (si == nst) {
        if (nst == cap) {
          cap = cap ? cap * 2 : 16;
          st = nsys_xrealloc(st, cap * sizeof *st);
        }
        memset(&st[nst], 0, sizeof *st);
        st[nst].name = nm;
        st[nst].device = dev;
        nst++;
      }
      nsys__stage *S = &st[si];
      const nsys_op_pred preds[2] = {nsys_pred_compute, nsys_pred_comm};
      nsys_ivls *const outs[2] = {&comp, &comm};
      nsys_actx_device_unions(c, dev, gs, ge, preds, outs, 2);
      nsys_ivls_index(&comp);
      int64_t cm = nsys_ivls_total(&comm), ov = nsys_ivls_intersect_len(&comp, &comm);
      S->ranges++;
      S->gpu += ge - gs;
      S->comm += cm;
      S->overlap += ov;
      S->exposed += cm - ov;
      nsys__stage_ud u = {&comp, S};
      nsys_actx_device_each(c, dev, gs, ge, nsys__stage_kernel, &u);
    }
  }
  if (nst > 1) qsort(st, nst, sizeof *st, nsys__cmp_stage);
  int64_t exposed = 0;
  for (uint32_t i = 0; i < nst; i++) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_int(o, "device", st[i].device);
    cJSON_AddStringToObject(o, "stage", nsys_strtab_get(&ix->strings, st[i].name));
    nsys_json_int(o, "ranges", st[i].ranges);
    nsys_json_int(o, "gpuNs", st[i].gpu);
    nsys_json_int(o, "commNs", st[i].comm);
    nsys_json_int(o, "exposedCommNs", st[i].exposed);
    if (st[i].comm > 0) nsys_json_num(o, "overlapPct", nsys_round2(100.0 * (double)st[i].overlap / (double)st[i].comm));
    else cJSON_AddNullToObject(o, "overlapPct");
    nsys_json_int(o, "commKernels", st[i].comm_kernels);
    if (st[i].comm_kernels) {
      nsys_json_num(o, "minKernelOverlapPct", nsys_round2(100.0 * st[i].min_frac));
      nsys_json_num(o, "maxKernelOverlapPct", nsys_round2(100.0 * st[i].max_frac));
    } else {
      cJSON_AddNullToObject(o, "minKernelOverlapPct");
      cJSON_AddNullToObject(o, "maxKernelOverlapPct");
    }
    cJSON_AddItemToArray(rows, o);
    exposed += st[i].exposed;
  }
  nsys_json_int(summary, "stages", nst);
  nsys_json_int(summary, "exposedCommNs", exposed);
  nsys_json_str(summary, "stagePattern", pat && *pat ? pat : "forward|backward|fwd|bwd|stage");
  nsys_ivls_free(&comp);
  nsys_ivls_free(&comm);
  free(st);
  free(match);
  return true;
}
