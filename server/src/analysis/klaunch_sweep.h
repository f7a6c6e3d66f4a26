/* kernel_launch_overhead's per-device sweep (exposed launch time, small-kernel
 * storms) for any window without walking the window's kernels.
 *
 * The sweep is a state machine over a device's kernels in merged start order
 * (nsys_lsweep_step; the analysis's loop runs the same function). For each
 * device its kernels are kept in that order with the machine's state after
 * every NSYS_KSWEEP_BLOCK-th kernel of a sweep from the first one (the
 * running max end, the open run, exposed time so far) and the storms that
 * sweep closes. A window's sweep starts fresh at its first kernel; as soon as
 * its state equals the whole sweep's at a block's end (the open run closed by
 * a long kernel or a pause, the running max end caught up) every later step
 * is the same, so the blocks in between are a difference of the recorded
 * sums and the storms recorded there, and only the steps before that point
 * and after the last whole block are run. A window whose state never meets
 * the whole sweep's runs every step: the same answers, the old cost.
 *
 A window starting before every op of the device walks the recorded order
 * (devunions.h): its sweep is the recorded one's first kernels, exact
 * whatever the ties. Any other window runs the loop's own walk (the heap
 * from its start) until the states meet, then the recorded order, which is
 * the same answer only if ties cannot change it: a device with a group of
 * kernels of several streams starting together that differ in size, or that
 * have launch calls while the GPU is idle before them, or a kernel ending
 * before it starts, is marked inexact. An inexact device of at most
 * NSYS_KSWEEP_HEAP_TRACKS streams still jumps when the walk's heap is
 * arranged as the whole walk's was at that block end (recorded per block:
 * which stream's cursor is at each heap place, 4 bits each; the cursors'
 * positions are the same in both walks there, every op starting at or
 * before the block's last start taken), since from there on both heaps pop
 * every op, ties included, in the same order (a device of 3 streams, whose
 * heap is [root; x, y] or [root; y, x] by its history, also has a second
 * recorded sweep in the other arrangement; after a jump the walk goes on from
 * the heap rebuilt in the record's arrangement); a device with a kernel ending
 * before it starts never jumps and takes the old loop, as does one with more
 * streams. Only the default smallKernelNs, stormMaxGapNs and stormMinKernels
 * (others take the old loop). Built once per nsys_acache on first use:
 * O(n log tracks), 4 bytes per kernel plus a state and a heap code per block
 * (twice for a 3-stream heap device: about 6 bytes per kernel there). */
#ifndef NSYS_ANALYSIS_KLAUNCH_SWEEP_H
#define NSYS_ANALYSIS_KLAUNCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"

#define NSYS_KSWEEP_BLOCK 32u
#define NSYS_KSWEEP_SMALL_NS 10000
#define NSYS_KSWEEP_MAX_GAP_NS 100000
#define NSYS_KSWEEP_MIN_RUN 100
#define NSYS_KSWEEP_HEAP_TRACKS 16u /* 4-bit stream places: a heap code in 64 bits */
#define NSYS_KSWEEP_NO_HEAP 0xffu   /* hn of a block end whose heap was not recorded */

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
  bool exact;         /* ties of kernels of several streams cannot change a sweep (above) */
  bool heap;          /* inexact, but heap codes recorded: windows jump where the heaps agree */
  uint32_t trk0;      /* its first track (tracks are sorted by device): heap places by track - trk0 */
  int64_t op_min, k_min; /* first start of its ops, of its kernels (INT64_MIN: one ends before it starts) */
  uint32_t n;         /* kernels */
  uint32_t *k;        /* its kernels in merged start order */
  nsys_lsweep *blk;   /* state after position (b + 1) * NSYS_KSWEEP_BLOCK - 1, per whole block b */
  uint64_t *hcode;    /* per whole block (heap only): the heap's stream places when every op starting at
                       * or before that position's start was taken, 4 bits each */
  uint8_t *hn;        /* per whole block (heap only): the heap's size then, or NSYS_KSWEEP_NO_HEAP */
  /* heap only: a second whole sweep whose heap of 3 streams has its two
   * children the other way round (swapped again at each block end where it
   * came back to the first sweep's arrangement: vflip), recorded as above */
  nsys_lsweep *vblk;
  uint64_t *vcode;
  uint8_t *vhn, *vflip;
  nsys_kstorm *vstorm;
  uint32_t n_vstorm;
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

/* The recorded sweep serves windows of device v from a (exact, heap codes or a prefix). */
bool nsys_ksweep_usable(const nsys_ksweep_dev *v, int64_t a);

/* A window from a walks the recorded order from its first kernel (a
 * precedes every op of the device, devunions.h): its sweep is the recorded
 * one cut at the window's end, whatever the ties. */
bool nsys_ksweep_prefix(const nsys_ksweep_dev *v, int64_t a);

/* The steps of device v's kernels in [a, b) (as the loop over the heap walk
 * from a would run them) applied to a fresh state *w, every closed run
 * passed to emit(ud, run) in order, the state at the end left in *w. */
void nsys_ksweep_run(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, nsys_lsweep *w,
                     void (*emit)(void *ud, const nsys_lrun *run), void *ud);

#endif
