/* kernel_launch_overhead's per-device sweep (exposed launch time, small-kernel
 * storms) for any window without walking the window's kernels.
 *
 * The sweep is a state machine over a device's kernels in start order
 * (nsys_lsweep_step; the analysis's loop runs the same function), a total
 * order: (start, track, position in the track), the device merge's
 * (devunions.h), so a walk from any window start takes, past that start,
 * exactly the whole walk's kernels in the whole walk's order (ties
 * included). For each device its kernels are kept in that order with the
 * machine's state after every NSYS_KSWEEP_BLOCK-th kernel of a sweep from the
 * first one (the running max end, the open run, exposed time so far) and the
 * storms that sweep closes. A window's sweep starts fresh: the kernels
 * starting at or before its start that still run there come from the loop's
 * own walk (the merge from the window's start: a binary search and a walk
 * back of at most 64 ops per stream), the later ones from the recorded order
 * (the whole merge's, or the order the memo recorded: amemo_file.c's
 * version 2, whose ties are the same). As soon as its state equals the
 * whole sweep's at a block's end (the open run closed by a long kernel or a
 * pause, the running max end caught up) every later step is the same, so
 * the blocks up to the last whole one before the window's end are a
 * difference of the recorded sums and the storms recorded there, and only the
 * steps before that point and after it are run: O(kernels until the states
 * meet + NSYS_KSWEEP_BLOCK + log n) whatever the number of streams. A window
 * whose state never meets the whole sweep's runs every step: the same
 * answers, the old cost. A kernel ending before it starts (at or before the
 * window's start while starting after it: the window's walk skips it, the
 * whole sweep does not) ends a jump before it (its positions are kept).
 * Only the default smallKernelNs, stormMaxGapNs and stormMinKernels (others
 * take the old loop). Built once per nsys_acache on first use: O(n log
 * tracks), 4 bytes per kernel plus a state per block (about 5.3 bytes per
 * kernel). */
#ifndef NSYS_ANALYSIS_KLAUNCH_SWEEP_H
#define NSYS_ANALYSIS_KLAUNCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"

#define NSYS_KSWEEP_BLOCK 32u
#define NSYS_KSWEEP_SMALL_NS 10000
#define NSYS_KSWEEP_MAX_GAP_NS 100000
#define NSYS_KSWEEP_MIN_RUN 100

/* The sweep's state: the running max of kernel ends, the open run of small
 * kernels (run_n of them, first start run_s, max end run_e), exposed time. */
typedef struct nsys_lsweep {
  int64_t busy_end, run_s, run_e;
  uint64_t exposed; /* mod 2^64 */
  uint32_t run_n;
  bool have_busy;
} nsys_lsweep;

/* A run the step closed (n kernels, possibly 0). */
typedef struct nsys_lrun {
  uint32_t n;
  int64_t s, e;
} nsys_lrun;

/* One kernel [s, e), launched by an API call [as, ae) when has_api: updates
 * w, writes the runs it closes (at most 2, in order) to out, returns their count. */
static inline int nsys_lsweep_step(nsys_lsweep *w, int64_t small, int64_t max_gap, int64_t s, int64_t e, bool has_api,
                                   int64_t as, int64_t ae, nsys_lrun out[2]) {
  int nc = 0;
  if (w->have_busy && s > w->busy_end && has_api) {
    int64_t lo = w->busy_end > as ? w->busy_end : as, hi = s < ae ? s : ae;
    if (hi > lo) w->exposed += (uint64_t)(hi - lo);
  }
  if (!w->have_busy || e > w->busy_end) w->busy_end = e;
  w->have_busy = true;
  if (w->run_n && s - w->run_e > max_gap) { /* a pause ends a burst */
    out[nc++] = (nsys_lrun){w->run_n, w->run_s, w->run_e};
    w->run_n = 0;
  }
  if (e - s < small) {
    if (!w->run_n) w->run_s = s;
    w->run_n++;
    w->run_e = w->run_e > e ? w->run_e : e;
    if (w->run_n == 1) w->run_e = e;
  } else {
    out[nc++] = (nsys_lrun){w->run_n, w->run_s, w->run_e};
    w->run_n = 0;
  }
  return nc;
}

typedef struct nsys_kstorm {
  uint32_t at; /* the step (position) that closed it */
  nsys_lrun run;
} nsys_kstorm;

typedef struct nsys_ksweep_dev {
  int32_t device;
  uint32_t n;         /* kernels */
  uint32_t *k;        /* its kernels in start order */
  nsys_lsweep *blk;   /* state after position (b + 1) * NSYS_KSWEEP_BLOCK - 1, per whole block b */
  uint32_t *back;     /* positions of its kernels ending before they start, ascending */
  uint32_t n_back;
  nsys_kstorm *storm; /* the whole sweep's storms (runs of >= NSYS_KSWEEP_MIN_RUN), by at */
  uint32_t n_storm;
} nsys_ksweep_dev;

typedef struct nsys_ksweep {
  uint32_t n_dev;
  nsys_ksweep_dev *dev; /* by device, ascending */
} nsys_ksweep;

const nsys_ksweep *nsys_actx_ksweep(nsys_actx *c);
void nsys_ksweep_free(nsys_ksweep *k);
/* Device d's entry, or NULL. */
const nsys_ksweep_dev *nsys_ksweep_find(const nsys_ksweep *k, int32_t device);

/* The steps of device v's kernels running in [a, b) (as the loop over the
 * merge from a runs them) applied to a fresh state *w, every closed run
 * passed to emit(ud, run) in order, the state at the end left in *w. */
void nsys_ksweep_run(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, nsys_lsweep *w,
                     void (*emit)(void *ud, const nsys_lrun *run), void *ud);

#endif
