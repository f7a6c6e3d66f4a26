/* profile/diff as a typed result (no JSON here: methods/diff_json.c converts
 * it). Two profiles are compared on their steady state: iterations detected
 * in both (nsys_detect_iterations), warm-up excluded, per-iteration
 * components with a noise floor and a verdict, then ranked deltas per
 * kernel, family, launch configuration, NVTX path, stream and GPU, each with
 * an evidence window in both runs. Definitions: docs/analyses.md#diff. */
#ifndef NSYS_DIFF_H
#define NSYS_DIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/diff_gate.h"

struct nsys_profile;

typedef enum {
  NSYS_DC_STEP = 0,
  NSYS_DC_COMPUTE,
  NSYS_DC_NCCL, /* NCCL exposed: communication not overlapped by compute */
  NSYS_DC_IDLE,
  NSYS_DC_COPIES,
  NSYS_DC_LAUNCH, /* host time in the launch calls of the iteration's kernels */
  NSYS_DC__COUNT /* == NSYS_DIFF_NCOMP; names: nsys_diff_comp_names */
} nsys_diff_comp_id;

typedef enum { NSYS_DV_NO_CHANGE = 0, NSYS_DV_FASTER, NSYS_DV_SLOWER, NSYS_DV_UNKNOWN } nsys_diff_verdict;
const char *nsys_diff_verdict_name(nsys_diff_verdict v); /* no_change, faster, slower, unknown */

/* Robust summary of one run's steady-state values. */
typedef struct nsys_diff_stats {
  uint32_t n;
  int64_t median, mad, min, max; /* median of an even count: the lower middle + half the gap, floored */
} nsys_diff_stats;

/* One component (or the step time) compared. */
typedef struct nsys_diff_comp {
  nsys_diff_stats base, cmp;
  int64_t delta, noise; /* cmp.median - base.median; the noise floor */
  bool has_pct, has_p;
  double pct, p_value;
  nsys_diff_verdict verdict;
} nsys_diff_comp;

/* diff_stats.c: pure functions on plain arrays (unit-tested). */
/* Sorts v in place and summarises it. */
nsys_diff_stats nsys_diff_stats_of(int64_t *v, uint32_t n);
/* Two-sided Mann-Whitney U p-value (normal approximation, tie and
 * continuity corrected); a and b are sorted. -1 when a side has < 3 values. */
double nsys_diff_mann_whitney(const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb);
/* The comparison of two samples (each sorted in place); abs_floor: the
 * smallest change worth a verdict, in ns. */
nsys_diff_comp nsys_diff_compare(int64_t *a, uint32_t na, int64_t *b, uint32_t nb, int64_t abs_floor);

typedef struct nsys_diff_win {
  bool set;
  int64_t start, end;
} nsys_diff_win;

typedef struct nsys_diff_iter {
  int64_t start, end;         /* GPU window on the side's device */
  int64_t cpu_start, cpu_end; /* the marker range (gap-based: the GPU window) */
  uint32_t kernels;           /* GPU ops in the window (nsys_iter.kernels) */
  bool warmup;
  int64_t v[NSYS_DC__COUNT];
} nsys_diff_iter;

typedef enum {
  NSYS_DK_LAUNCH = 0, /* launch configuration of a kernel name */
  NSYS_DK_KERNEL,
  NSYS_DK_FAMILY,
  NSYS_DK_NVTX,
  NSYS_DK_STREAM,
  NSYS_DK_DEVICE,
  NSYS_DK__COUNT
} nsys_diff_kind;
/* "launchConfig", "kernel", "family", "nvtx", "stream", "device" */
extern const char *const nsys_diff_kind_names[NSYS_DK__COUNT];
/* The kind of a name, or -1. */
int nsys_diff_kind_find(const char *name);

typedef struct nsys_diff_launch {
  int64_t grid[3], block[3], regs, smem, count;
} nsys_diff_launch;

/* Per-key totals of one side in its steady window (diff_side.c). */
typedef struct nsys_diff_agg {
  char *key;      /* owned; unique within a kind */
  int64_t ns;     /* summed duration of the key's occurrences starting in the steady window */
  int64_t count;  /* those occurrences */
  nsys_diff_win ev; /* an occurrence: the first in the median steady iteration, else the first */
  int32_t device; /* stream/device kinds; -1 otherwise */
  int64_t stream;
  const char *family; /* kernel kind: its family (static) */
  nsys_diff_launch launch; /* launch kind: the dominant configuration */
} nsys_diff_agg;

typedef struct nsys_diff_side {
  char *profile_id, *file;
  int64_t span_start, span_end;
  char *gpu_model; /* distinct GPU names joined by ", "; NULL when unknown */
  int32_t gpu_count;
  int32_t *devices;
  uint32_t n_devices;
  int32_t device;     /* whose iterations are the steps; -1: no iterations */
  const char *method; /* "nvtx", "gap" or "none" */
  bool irregular;     /* gap-based windows found but too irregular to be steps */
  uint32_t n_iters, warmup, steady;
  nsys_diff_iter *iters;
  nsys_diff_win steady_win;  /* first steady start .. last end (GPU); no iterations: the span */
  nsys_diff_win steady_cpu;  /* the same on the marker ranges (for NVTX totals) */
  uint32_t median_iter; /* index into iters of the median steady iteration (when steady) */
  nsys_diff_win *dev_steady, *dev_median; /* per devices[i] with as many iterations (else unset) */
  nsys_diff_agg *agg[NSYS_DK__COUNT];
  uint32_t n_agg[NSYS_DK__COUNT];
} nsys_diff_side;

/* The family of a kernel name: nccl, gemm, attention, norm, softmax, conv,
 * reduce, elementwise, triton, other (first match in that order). */
const char *nsys_diff_family(const char *name);

/* Fills s from one profile (p may be NULL in unit tests: no GPU names and no
 * launch configurations). False after nsys_task_fail (cancelled). */
bool nsys_diff_side_build(nsys_diff_side *s, nsys_task *task, struct nsys_profile *p, const nsys_index *ix);
void nsys_diff_side_free(nsys_diff_side *s);
/* dst = a deep copy of src (free it with nsys_diff_side_free). */
void nsys_diff_side_copy(nsys_diff_side *dst, const nsys_diff_side *src);

typedef enum {
  NSYS_DCH_ADDED = 0,
  NSYS_DCH_REMOVED,
  NSYS_DCH_SLOWER,
  NSYS_DCH_FASTER,
  NSYS_DCH_NO_CHANGE,
  NSYS_DCH_CHANGED /* launch configuration */
} nsys_diff_change;
extern const char *const nsys_diff_change_names[];

typedef struct nsys_diff_delta {
  nsys_diff_kind kind;
  const char *key;   /* borrowed from a side's agg */
  char *label;       /* owned */
  nsys_diff_change change;
  int64_t base_ns, cmp_ns, delta, impact; /* per steady iteration */
  int64_t base_count, cmp_count;
  bool has_pct;
  double pct;
  nsys_diff_win ev_base, ev_cmp;
  int32_t device; /* -1 when not per device */
  bool has_stream;
  int64_t stream;
  const char *family;
  const nsys_diff_launch *lb, *lc; /* launch kind: each side's (NULL when absent) */
} nsys_diff_delta;

typedef struct nsys_diff_reason {
  const char *code, *severity;
  char *message;
} nsys_diff_reason;

typedef struct nsys_diff {
  nsys_diff_side base, cmp;
  double score, kernel_overlap;
  bool comparable;
  nsys_diff_reason *reasons;
  uint32_t n_reasons;
  nsys_diff_comp comps[NSYS_DC__COUNT];
  const char *overall; /* faster, slower, no_change, incomparable, unknown */
  bool has_conf;
  double conf;
  nsys_diff_delta *deltas; /* every delta, ranked (docs/analyses.md#diff) */
  uint32_t n_deltas;
  nsys_diff_gate_result gate; /* evaluated when thresholds were given */
  bool has_gate;
  char *verdict_text, *text;
} nsys_diff;

/* Compares two indexed profiles; th NULL: no gate. False after
 * nsys_task_fail (cancelled); d is then empty (free it anyway). */
bool nsys_diff_run(nsys_diff *d, nsys_task *task, struct nsys_profile *a, const nsys_index *ia,
                   struct nsys_profile *b, const nsys_index *ib, const nsys_diff_thresholds *th);
/* The comparison of two built sides (takes them over; unit tests call it on
 * hand-built sides). */
void nsys_diff_compare_sides(nsys_diff *d, nsys_diff_side *base, nsys_diff_side *cmp,
                             const nsys_diff_thresholds *th);
void nsys_diff_free(nsys_diff *d);

#endif
