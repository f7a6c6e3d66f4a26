/* overlap (compute vs communication on unions) and stream_classification
 * (stage_overlap: stage_overlap.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/devunions.h"
#include "common/util.h"

typedef struct {
  int64_t compute, comm, overlap, idle, span;
} nsys__ov;

/* Window sums on the device's cached whole-time unions: O(log n) per window,
 * however many windows (per-iteration rows) overlap. */
static void nsys__overlap_in(nsys_actx *c, int32_t dev, int64_t a, int64_t b, nsys__ov *o) {
  const nsys_devunions *u = nsys_actx_devunions(c, dev);
  o->compute = nsys_ivls_len_in(&u->compute, a, b);
  o->comm = nsys_ivls_len_in(&u->comm, a, b);
  o->overlap = nsys_ivls_len_in(&u->both, a, b);
  o->span = b - a;
  o->idle = o->span - (o->compute + o->comm - o->overlap);
  if (o->idle < 0) o->idle = 0;
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
    for (uint32_t i = tr->first; i < tr->first + tr->count && !nsys_actx_stop(c, i); i++) {
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
      int32_t r = a >= 0 ? nsys_actx_innermost_nvtx(c, ix->api.thread[a], ix->api.start[a], ix->api.end[a]) : -1;
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
