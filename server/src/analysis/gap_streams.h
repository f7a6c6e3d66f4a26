/* gpu_idle_gaps' stream gaps for any window without walking its ops.
 *
 * On a compute (or mixed) stream the analysis walks the window's ops in start
 * order, skipping those ending at or before the window's start, and finds a
 * gap before op i when it starts after the running max end of the ops taken
 * before it. Every op before i that ends after the window's start is taken,
 * so once one has been (i past the track's first op ending after the start,
 * nsys_win_track_first_live) the window's running max is the whole track's
 * (nsys_win_track_pmax) and the window's gaps are exactly the whole walk's
 * gaps at the ops after that first live op and starting before the window's
 * end: one index range per track. A track with an op ending before it starts
 * (whose gap the window skips) is marked and takes the analysis's walk.
 *
 * Kept per track, built once per nsys_acache on first use (the area warm-up
 * builds it: awarm.c), O(n + g log d) for g kept gaps and d device gaps:
 *  - the HTA split's sums (host, kernel and other wait, the default
 *    kernelWaitNs) of the whole walk's gaps at the ops before each
 *    NSYS_WIN_BLOCK-th one: a window's sums are a difference plus at most two
 *    partial blocks walked again (24 bytes per 32 ops);
 *  - the whole walk's gaps of at least NSYS_SGAPS_MIN_NS (the default
 *    minGapNs; larger ones filter them), by op: the op that ends each, its
 *    start and whether it equals a gap of the device's whole union (which a
 *    window holding it also has: the analysis drops such a stream gap);
 *    13 bytes each. */
#ifndef NSYS_ANALYSIS_GAP_STREAMS_H
#define NSYS_ANALYSIS_GAP_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/window.h"

#define NSYS_SGAPS_MIN_NS 1000000 /* the default minGapNs */
#define NSYS_SGAPS_KWAIT_NS 30    /* the default kernelWaitNs */

/* The HTA split of a stream gap of `gap` ns from `start` to op i: 0 host wait
 * (i's launch call began after the gap began), 1 kernel wait (shorter than
 * kwait), 2 other. One definition for gpu_idle_gaps' split sums, its rows'
 * `streamSplit` and the sums kept here. */
static inline int nsys_gap_split(const nsys_index *ix, uint32_t i, int64_t start, int64_t gap, int64_t kwait) {
  int32_t a = ix->ops.api[i];
  if (a >= 0 && ix->api.start[a] > start) return 0;
  return gap < kwait ? 1 : 2;
}

typedef struct nsys_sgaps_track {
  bool used;      /* a compute or mixed stream (copy and communication ones have no stream gaps) */
  bool ok;        /* no op ends before it starts: the window reads it */
  int64_t *sum;   /* 3 per block b (0..count/NSYS_WIN_BLOCK): host, kernel, other wait before its first op */
  uint32_t n;     /* kept gaps */
  uint32_t *op;   /* the op ending each, ascending */
  int64_t *start; /* its start (the running max end before that op) */
  uint8_t *dup;   /* 1: equal to a gap of the device's whole union */
} nsys_sgaps_track;

typedef struct nsys_sgaps {
  uint32_t n_tracks;
  nsys_sgaps_track *t; /* by track */
} nsys_sgaps;

/* The cache's (built on first use), or NULL: the window index is off or does
 * not apply, or the run was cancelled (c->stopped). */
const nsys_sgaps *nsys_actx_sgaps(nsys_actx *c);
void nsys_sgaps_free(nsys_sgaps *g);

/* The window [a, b)'s gaps on track t (g->t[t].ok): the kept ones are
 * [*lo, *hi) of its arrays; split[3] the HTA sums (host, kernel, other). */
void nsys_sgaps_window(const nsys_sgaps *g, const nsys_winidx *w, const nsys_index *ix, uint32_t t, int64_t a,
                       int64_t b, uint32_t *lo, uint32_t *hi, int64_t split[3]);

#endif
