/* kernel_launch_overhead's per-name sums for any window in O(pairs x log n):
 * prefix sums over the short-name (name, track) index (kname.h) of what the
 * analysis adds per kernel — launched by a launch API call (count), its
 * duration and its call's when launched, the queue time (its start after the
 * call's end, >= 0), kernels shorter than their call, kernels shorter than
 * NSYS_KLAUNCH_SMALL_NS (the smallKernelNs default; another value takes the
 * loop over the window's kernels) — and the queue time's maximum per block
 * of NSYS_KLAUNCH_BLOCK positions (a range's maximum: its whole blocks and at
 * most two partial ones). Sums mod 2^64: the old sums' bits whenever those
 * did not overflow. Built once per nsys_acache on first use (nsys_win_cached),
 * O(n); 36 bytes per kernel. */
#ifndef NSYS_ANALYSIS_KLAUNCH_H
#define NSYS_ANALYSIS_KLAUNCH_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/kname.h"

#define NSYS_KLAUNCH_SMALL_NS 10000
#define NSYS_KLAUNCH_BLOCK 64u

typedef struct nsys_klaunch {
  const nsys_kname *kn; /* the short-name index it extends (same cache) */
  /* per position + 1: sums over the positions before it */
  uint32_t *launched, *shorter, *small;
  uint64_t *kern, *api, *queue;
  int64_t *q;    /* per position: its queue time (0 when not launched) */
  int64_t *qblk; /* per block of NSYS_KLAUNCH_BLOCK positions: max of q */
} nsys_klaunch;

/* The cache's launch sums (built on first use), or NULL when the fast paths
 * are off or do not apply (kname.h) or the run was cancelled. */
const nsys_klaunch *nsys_actx_klaunch(nsys_actx *c);
void nsys_klaunch_free(nsys_klaunch *k);

/* Max of q over positions [lo, hi) (0 when empty: queue times are >= 0). */
int64_t nsys_klaunch_qmax(const nsys_klaunch *k, uint32_t lo, uint32_t hi);

#endif
