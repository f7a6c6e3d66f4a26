/* The windowed (start/end) paths of the analyses: O(k + log n) for a window
 * holding k ops, where the whole-profile loops cost O(n).
 *
 * Every GPU track's ops are contiguous in the index and sorted by start
 * (index_assemble.c), so the ops that *start* in [a, b) are one index range
 * per track (two binary searches), and the ops still running at a (start
 * before a, end after it) are found from running maxima of op ends kept per
 * block of NSYS_WIN_BLOCK ops: O(log n + NSYS_WIN_BLOCK) per track, exact
 * whatever the ops' overlaps (no bounded walk back).
 *
 * The index is checked once (nsys_winidx.ok); an index that breaks that
 * layout, or NSYS_AI_WINDOW_FAST=0 (tests: the old whole-profile paths, for
 * comparison), makes every caller take its whole-profile loop. Built once
 * per nsys_acache on first use under a lock of its own (the analyses' memo
 * is shared by concurrent requests): O(n), 2 x 8 bytes per block. */
#ifndef NSYS_ANALYSIS_WINDOW_H
#define NSYS_ANALYSIS_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"

#define NSYS_WIN_BLOCK 32u

typedef struct nsys_winidx {
  bool ok;               /* tracks partition the ops in order, starts sorted within each */
  uint32_t *blk;         /* per track: index of its first block in the arrays below */
  int64_t *pm_any;       /* per block: max end over the track's ops up to the block's last */
  int64_t *pm_kg;        /* the same over kernels and CUDA graph launches (INT64_MIN: none) */
} nsys_winidx;

/* False when NSYS_AI_WINDOW_FAST=0: every windowed path takes its old
 * whole-profile loop (tests compare the two). */
bool nsys_win_fast_enabled(void);

/* *slot of the run's cache, built by build(c) on first use: one request
 * builds, concurrent ones wait (polling their cancellation), a cancelled build
 * (build returns NULL) keeps nothing. NULL when this run was cancelled
 * (c->stopped is then set). Everything a slot holds depends on the index
 * alone, so the memo, shared by concurrent requests, may hold it. */
void *nsys_win_cached(nsys_actx *c, void **slot, bool *building, void *(*build)(nsys_actx *c));

/* *slot as it is now (NULL: not built), never building nor waiting. */
void *nsys_win_peek(void *const *slot);
/* The run was given a window (start or end) covering a quarter of the
 * index's span or more: worth building an index that a smaller window reads
 * when built but does not build (its own loop costs less than the build). A
 * whole-profile call (no start, no end: the report's) does not build either:
 * it runs once, and the index would cost it time and memory (kname.h,
 * klaunch.h) for the area selections that may never come. */
bool nsys_win_large(const nsys_actx *c);

/* The cache's window index (built on first use), or NULL when the fast
 * paths are off or do not apply to this index. */
const nsys_winidx *nsys_actx_winidx(nsys_actx *c);
void nsys_winidx_free(nsys_winidx *w);

/* Ops of track t starting in [a, b): [*lo, *hi) (absolute op indices). */
void nsys_win_track_starts(const nsys_index *ix, uint32_t t, int64_t a, int64_t b, uint32_t *lo, uint32_t *hi);
/* First op of track t with end > a, or the track's end when none: every op
 * before it ends at or before a. */
uint32_t nsys_win_track_first_live(const nsys_winidx *w, const nsys_index *ix, uint32_t t, int64_t a);
/* Max end over the ops of track t before op i (i in [first, first+count]),
 * over every op (kg false) or kernels and graph launches only (kg true);
 * INT64_MIN when there is none. */
int64_t nsys_win_track_pmax(const nsys_winidx *w, const nsys_index *ix, uint32_t t, uint32_t i, bool kg);

/* nsys_actx_device_span for nsys_pred_kernel_or_graph or nsys_pred_any in
 * O(tracks x log n + k): *handled false when the fast path does not apply
 * (other predicates, no window index); else the return is device_span's. */
bool nsys_win_device_span(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t *s, int64_t *e, bool *handled);

/* Index ranges that hold every op of a selected device starting in
 * [c->t0, c->t1), in index order (the order of a loop over every op), *n of
 * them (malloc'd): one per track with the fast path, else the whole op
 * array. Callers keep their filters (start, device, kind): the ranges only
 * skip ops those filters reject. */
typedef struct nsys_oprange {
  uint32_t lo, hi;
} nsys_oprange;
nsys_oprange *nsys_win_start_ranges(nsys_actx *c, uint32_t *n);

/* Iteration detection's NVTX ranges for the auto-detected marker (the
 * iterations analysis's default): per thread, the ranges whose name
 * normalises to the marker and that end after they start, in index (start)
 * order, with the running max of their ends, so a window's are found by a
 * binary search instead of a walk over every NVTX range. */
typedef struct nsys_markers {
  bool found;      /* an auto-detected marker exists (else no NVTX iterations) */
  uint32_t *first; /* per thread: its ranges are r[first[t] .. first[t+1]) */
  uint32_t *r;     /* NVTX range indices */
  int64_t *pmax;   /* per entry of r: max end over its thread's entries up to it */
} nsys_markers;
/* The cache's marker ranges (built on first use by nsys_iter_markers_build,
 * iterations.c); NULL when the fast paths are off or the run was cancelled. */
const nsys_markers *nsys_actx_markers(nsys_actx *c);
nsys_markers *nsys_iter_markers_build(nsys_actx *c);
void nsys_markers_free(nsys_markers *m);
/* First entry of thread t's ranges in m whose running max end is >= a: every
 * range before it ends before a. */
uint32_t nsys_markers_from(const nsys_markers *m, uint32_t t, int64_t a);

/* Clips a whole-time union to [a, b) by bisection into out: the union of the
 * same ops clipped to the window (O(log n + intervals in it)). */
void nsys_ivls_clip(const nsys_ivls *whole, int64_t a, int64_t b, nsys_ivls *out);

#endif
