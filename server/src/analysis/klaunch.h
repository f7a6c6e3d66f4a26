/* kernel_launch_overhead's per-name sums for any window in O(pairs x (log n
 * + NSYS_KLAUNCH_BLOCK)): over the short-name (name, track) index (kname.h),
 * what the analysis adds per kernel — launched by a launch API call (count),
 * its duration and its call's when launched, the queue time (its start after
 * the call's end, >= 0), kernels shorter than their call, kernels shorter
 * than NSYS_KLAUNCH_SMALL_NS (the smallKernelNs default; another value takes
 * the loop over the window's kernels) — summed per block of
 * NSYS_KLAUNCH_BLOCK positions as prefix sums, with the queue time's maximum
 * per block. A range's sums are two prefixes, each a block's prefix plus at
 * most BLOCK - 1 kernels recomputed from the index; its maximum is its whole
 * blocks' and at most two partial ones recomputed. Sums mod 2^64: the old
 * sums' bits whenever those did not overflow. Built once per nsys_acache on
 * first use (nsys_win_cached), O(n); under 1 byte per kernel (44 bytes per
 * block: the per-kernel values are read back from the index). */
#ifndef NSYS_ANALYSIS_KLAUNCH_H
#define NSYS_ANALYSIS_KLAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/kname.h"

#define NSYS_KLAUNCH_SMALL_NS 10000
#define NSYS_KLAUNCH_BLOCK 64u

/* What kernel_launch_overhead adds over a range of positions (mod 2^64). */
typedef struct nsys_klaunch_sums {
  uint32_t launched, shorter, small;
  uint64_t kern, api, queue;
} nsys_klaunch_sums;

typedef struct nsys_klaunch {
  const nsys_kname *kn;   /* the short-name index it extends (same cache) */
  nsys_klaunch_sums *pre; /* per block b (0..blocks): sums over positions [0, b·BLOCK) */
  int64_t *qblk;          /* per block: max queue time of its positions */
} nsys_klaunch;

/* Kernel op i's launch costs as kernel_launch_overhead counts them (the one
 * definition both its paths use): false when no launch API call launched it;
 * else its call's duration and its queue time (start after the call's end,
 * >= 0). */
bool nsys_klaunch_of(nsys_actx *c, uint32_t i, int64_t *api_ns, int64_t *queue_ns);

/* The cache's launch sums (built on first use), or NULL when the fast paths
 * are off or do not apply (kname.h) or the run was cancelled. */
const nsys_klaunch *nsys_actx_klaunch(nsys_actx *c);
void nsys_klaunch_free(nsys_klaunch *k);

/* Sums over positions [lo, hi). */
nsys_klaunch_sums nsys_klaunch_range(nsys_actx *c, const nsys_klaunch *k, uint32_t lo, uint32_t hi);

/* Max queue time over positions [lo, hi) (0 when empty: queue times are >= 0). */
int64_t nsys_klaunch_qmax(nsys_actx *c, const nsys_klaunch *k, uint32_t lo, uint32_t hi);

#endif
