/* The phase of a GPU idle gap: whether it is an ordinary steady-state bubble
 * or belongs to a phase whose idle time is expected and whose cure is not the
 * bubble's (no synchronisation or data loading to remove):
 *
 *   process_switch  a process's first GPU op on the device starts the work
 *                   after the gap: the gap is that program's start-up (or the
 *                   wait between two programs sharing the GPU);
 *   startup         the gap ends at or before the GPU start of the first
 *                   iteration marked by NVTX (the iterations analysis's
 *                   auto-detected marker, over the whole profile): model
 *                   build, data loading, compilation before training starts;
 *   first_launch    the op after the gap is the first launch of its kernel in
 *                   its process on that device: lazy module loading, JIT
 *                   compilation (Triton, CuPy, NVRTC, torch.compile) and other
 *                   first-call costs;
 *   steady          none of these.
 * Checked in this order; the first that holds is the phase. Built once per
 * run in O(n) over the ops (plus iteration detection when the profile has
 * NVTX), then O(log n) per gap. No JSON here. */
#ifndef NSYS_GAP_PHASE_H
#define NSYS_GAP_PHASE_H

#include <stdint.h>

#include "analysis/analysis.h"

typedef enum {
  NSYS_GAP_STEADY = 0,
  NSYS_GAP_PROCESS_SWITCH,
  NSYS_GAP_STARTUP,
  NSYS_GAP_FIRST_LAUNCH,
  NSYS_GAP__PHASES
} nsys_gap_phase;

/* One (device, process)'s first op, or the first op of one kernel name in a
 * (device, process): sorted by (device, start). */
typedef struct nsys_gap_first {
  int32_t device;
  uint32_t pid;
  int64_t start;
  uint32_t name; /* strtab id of the kernel's name (first launches), NSYS_STR_NONE otherwise */
} nsys_gap_first;

typedef struct nsys_gap_phaser {
  nsys_gap_first *procs; uint32_t n_procs;   /* first op per (device, pid) */
  nsys_gap_first *kernels; uint32_t n_kernels; /* first launch per (device, pid, kernel name) */
  int32_t *it_device; int64_t *it_start; uint32_t n_it; /* per device: GPU start of the first marked iteration */
} nsys_gap_phaser;

typedef struct nsys_gap_phase_info {
  nsys_gap_phase phase;
  uint32_t pid;            /* process_switch, first_launch: the process whose op ends the gap */
  uint32_t kernel;         /* first_launch: strtab id of the kernel name; NSYS_STR_NONE otherwise */
  int64_t first_iteration; /* startup: GPU start of the device's first marked iteration */
} nsys_gap_phase_info;

/* False when the run was cancelled (g is then empty: dispose it anyway). */
bool nsys_gap_phaser_init(nsys_gap_phaser *g, nsys_actx *c);
void nsys_gap_phaser_dispose(nsys_gap_phaser *g);
/* The phaser depends on the index alone: the run's cache keeps one, built by
 * the first run that asks (under a lock: the memo is shared by concurrent
 * requests; a cancelled build keeps nothing). Returns the cache's, or `own`
 * initialised for this run when the window fast paths are off
 * (NSYS_AI_WINDOW_FAST=0); NULL when cancelled. Dispose `own` either way. */
const nsys_gap_phaser *nsys_gap_phaser_get(nsys_actx *c, nsys_gap_phaser *own);
/* Disposes and frees a heap phaser (NULL is fine). */
void nsys_gap_phaser_free(nsys_gap_phaser *g);
/* The phase of the gap [a, b) on `device` (info may be NULL). */
nsys_gap_phase nsys_gap_phase_of(const nsys_gap_phaser *g, int32_t device, int64_t a, int64_t b,
                                 nsys_gap_phase_info *info);
/* "steady", "process_switch", "startup", "first_launch". */
const char *nsys_gap_phase_name(nsys_gap_phase phase);

#endif
