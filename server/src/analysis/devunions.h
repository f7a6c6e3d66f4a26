/* A device's GPU ops in start order across all its tracks (k-way heap merge,
 * O(log tracks) per op), and the whole-device unions built from it once per
 * nsys_acache (one analysis run, or every analysis of a report or diff), so
 * that the covered length of any window costs two binary searches whatever
 * the number of windows, streams or ops per window. */
#ifndef NSYS_DEVUNIONS_H
#define NSYS_DEVUNIONS_H

#include <stdint.h>

#include "analysis/analysis.h"

typedef struct nsys_opmerge {
  const nsys_index *ix;
  uint32_t *cur, *end; /* per cursor: next op, end of its track */
  uint32_t *heap, hn;  /* cursor ids keyed by the start of their next op */
} nsys_opmerge;

/* Cursors on every track of `device`, each at the first op that may overlap
 * [a, ...) (INT64_MIN: the track's first op). */
void nsys_opmerge_init(nsys_opmerge *m, const nsys_index *ix, int32_t device, int64_t a);
/* Next op in start order, ties by track then position (one total order), or
 * -1 when every track is done. */
int64_t nsys_opmerge_next(nsys_opmerge *m);
void nsys_opmerge_free(nsys_opmerge *m);

/* A device's ops in the order nsys_opmerge yields them from INT64_MIN,
 * recorded by the first nsys_opiter that walks them all. */
typedef struct nsys_devorder {
  int32_t device;
  int64_t min_start; /* earliest op start of the device (INT64_MAX: no ops) */
  int64_t max_end;   /* latest op end of the device (INT64_MIN: no ops) */
  uint32_t n_ops;    /* ops on its tracks */
  uint32_t *ops, n;  /* the recorded order (n == n_ops once whole) */
  bool whole;        /* recorded to the end (never set by a cancelled run) */
  bool recording;    /* an nsys_opiter is recording it now */
} nsys_devorder;

/* Ops of a device in start order from `a`: exactly the sequence of
 * nsys_opmerge_init(device, a) + nsys_opmerge_next. When a precedes every op
 * of the device that sequence does not depend on a, so it is read from the
 * cache's recorded order (an array walk instead of a heap), recorded by the
 * first such walk when the cache is lent to several runs (a run's own cache
 * records nothing: one walk would not repay it); otherwise it is merged by a
 * heap. */
typedef struct nsys_opiter {
  nsys_actx *c;
  const uint32_t *ord; /* the recorded order, or NULL: heap */
  uint32_t i, n;
  nsys_opmerge m;
  nsys_devorder *rec;  /* the order this heap walk records, or NULL */
} nsys_opiter;

void nsys_opiter_init(nsys_opiter *it, nsys_actx *c, int32_t device, int64_t a);
/* Next op, or -1 when every op is done (inline: once per op of every walk). */
static inline int64_t nsys_opiter_next(nsys_opiter *it) {
  if (it->ord) return it->i < it->n ? (int64_t)it->ord[it->i++] : -1;
  int64_t op = nsys_opmerge_next(&it->m);
  if (op >= 0 && it->rec) it->rec->ops[it->rec->n++] = (uint32_t)op;
  return op;
}
/* Ends the walk; a recording walk stopped early finishes its recording
 * (unless the run was cancelled). */
void nsys_opiter_free(nsys_opiter *it);
/* Frees the recorded orders of a cache (nsys_acache_dispose). */
void nsys_devorder_free(nsys_acache *k);

/* Distinct devices of the tracks (sorted) into *out (malloc'd); returns the count. */
uint32_t nsys_track_devices(const nsys_index *ix, int32_t **out);

/* Unions of one device over all time, each indexed (nsys_ivls_len_in). */
typedef struct nsys_devunions {
  int32_t device;
  nsys_ivls compute; /* nsys_pred_compute */
  nsys_ivls comm;    /* nsys_pred_comm */
  nsys_ivls any;     /* every op */
  nsys_ivls both;    /* compute ∩ comm */
  nsys_ivls kernel;  /* nsys_pred_kernel: built only in a lent cache (with_kernel) */
  bool with_kernel;
} nsys_devunions;

/* The cached unions of `device` (built for every device on first use). */
const nsys_devunions *nsys_actx_devunions(nsys_actx *c, int32_t device);
/* The whole-time unions of `device` when [a,b) holds every op of the device
 * (a <= every start, b >= every end: then the union of any op filter clipped
 * to [a,b) is its whole-time union, built from the same ops in the same
 * order) and the cache is lent to several runs (worth building them all);
 * NULL otherwise. */
const nsys_devunions *nsys_actx_devunions_covering(nsys_actx *c, int32_t device, int64_t a, int64_t b);
/* The union of `du` for the ops of pred, or NULL when du has none for it. */
const nsys_ivls *nsys_devunions_of(const nsys_devunions *du, nsys_op_pred pred);
/* The unions of every device (sorted by device); returns their count. */
uint32_t nsys_actx_devunions_all(nsys_actx *c, const nsys_devunions **all);
/* Frees the unions of a cache (nsys_acache_dispose). */
void nsys_devunions_free(nsys_acache *k);

#endif
