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

/* The measures of o (what summary.total holds). */
static void nsys__ov_fill(nsys_rec j, const nsys__ov *o) {
  nsys_rset_i64(j, OV_COMPUTE_ONLY_NS, o->compute - o->overlap);
  nsys_rset_i64(j, OV_COMM_ONLY_NS, o->comm - o->overlap);
  nsys_rset_i64(j, OV_OVERLAP_NS, o->overlap);
  nsys_rset_i64(j, OV_IDLE_NS, o->idle);
  nsys_rset_i64(j, OV_COMPUTE_NS, o->compute);
  nsys_rset_i64(j, OV_COMM_NS, o->comm);
  if (o->comm > 0) nsys_rset_f64(j, OV_COMM_HIDDEN_PCT, nsys_round2(100.0 * (double)o->overlap / (double)o->comm));
  else nsys_rset_null(j, OV_COMM_HIDDEN_PCT);
  nsys_rset_f64(j, OV_IDLE_PCT, o->span > 0 ? nsys_round2(100.0 * (double)o->idle / (double)o->span) : 0);
}

/* A new row of t: device, window and the measures of o. */
static nsys_rec nsys__ov_add(nsys_rtab *t, int32_t dev, int64_t a, int64_t b, const nsys__ov *o) {
  nsys_rec j = nsys_rtab_add(t);
  nsys_rset_i64(j, OV_DEVICE, dev);
  nsys_rset_i64(j, OV_START, a);
  nsys_rset_i64(j, OV_END, b);
  nsys__ov_fill(j, o);
  return j;
}

bool nsys_an_overlap(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  nsys_rtab *sd = nsys_rset_arr(summary, OVS_DEVICES);
  nsys__ov tot = {0};
  for (uint32_t d = 0; d < nd; d++) {
    int64_t a, b;
    if (!nsys_actx_device_span(c, devs[d], nsys_pred_kernel_or_graph, &a, &b)) continue;
    nsys__ov o;
    nsys__overlap_in(c, devs[d], a, b, &o);
    nsys__ov_add(rows, devs[d], a, b, &o);
    nsys__ov_add(sd, devs[d], a, b, &o);
    tot.compute += o.compute;
    tot.comm += o.comm;
    tot.overlap += o.overlap;
    tot.idle += o.idle;
    tot.span += o.span;
  }
  nsys__ov_fill(nsys_rset_obj(summary, OVS_TOTAL), &tot);
  nsys_rtab *iters = nsys_rset_arr(summary, OVS_ITERATIONS);
  if (nsys_actx_bool(c, "perIteration")) {
    nsys_iter *its;
    const char *method;
    uint32_t n = nsys_detect_iterations(c, &its, &method);
    /* gap-based boundaries are a heuristic: per-iteration overlap only for markers */
    if (strcmp(method, "nvtx") == 0) {
      for (uint32_t i = 0; i < n; i++) {
        nsys__ov o;
        nsys__overlap_in(c, its[i].device, its[i].start, its[i].end, &o);
        nsys_rset_i64(nsys__ov_add(iters, its[i].device, its[i].start, its[i].end, &o), OV_ITERATION, i);
      }
    }
    nsys_rset_str(summary, OVS_ITERATION_METHOD, method);
    free(its);
  }
  nsys_rset_str(summary, OVS_COMM_RULE, "kernel name contains 'nccl' (case-insensitive)");
  free(devs);
  return true;
}

/* ------------------------------------------------------ stream_classification */

bool nsys_an_stream_classification(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  uint32_t counts[4] = {0};
  /* a class's name is its summary column's key */
  _Static_assert((int)SCS_COMPUTE__i == (int)NSYS_STREAM_COMPUTE && (int)SCS_COMM__i == (int)NSYS_STREAM_COMM &&
                     (int)SCS_COPY__i == (int)NSYS_STREAM_COPY && (int)SCS_MIXED__i == (int)NSYS_STREAM_MIXED,
                 "stream classes are the first columns of nsys_rd_sc_sum");
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
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_i64(o, SC_DEVICE, tr->device);
    nsys_rset_i64(o, SC_STREAM, tr->stream);
    nsys_rset_str(o, SC_CLASS, nsys_rd_sc_sum.cols[cls].key);
    nsys_rset_i64(o, SC_KERNELS, (int64_t)kern);
    nsys_rset_i64(o, SC_COMM_KERNELS, (int64_t)comm);
    nsys_rset_i64(o, SC_COPIES, (int64_t)copies);
    nsys_rset_i64(o, SC_BUSY_NS, busy);
    if (comm && purpose_mixed) nsys_rset_str(o, SC_PURPOSE, "(disagreeing NVTX ranges)");
    else if (comm && purpose >= 0) nsys_rset_str(o, SC_PURPOSE, nsys_strtab_get(&ix->strings, (uint32_t)purpose));
    else nsys_rset_null(o, SC_PURPOSE);
  }
  for (int k = 0; k < 4; k++) nsys_rset_i64(summary, nsys_rcol_i64(&nsys_rd_sc_sum, k), counts[k]);
  nsys_rset_str(summary, SCS_RULE,
                "comm: every kernel is NCCL and their innermost NVTX agree; compute: no NCCL "
                "kernel; copy: memcpy/memset only; else mixed");
  return true;
}
