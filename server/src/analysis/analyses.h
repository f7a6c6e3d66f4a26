/* Internal: the run functions of every analysis (one file per family) and
 * the context lifecycle shared by the registry, report and diff. */
#ifndef NSYS_ANALYSES_H
#define NSYS_ANALYSES_H

#include "analysis/analysis.h"
#include "analysis/result_defs.h"

/* params NULL: the defaults of a. False (after nsys_task_fail) when the window is inverted. */
bool nsys_actx_init(nsys_actx *c, nsys_task *task, struct nsys_profile *p, const nsys_index *ix,
                    const nsys_analysis *a, const nsys_aparams *params);
/* Prepares `sql` on the run's profile, a failure recorded on its task
 * (nsys_profile_prepare with c->p and c->task; registry.c). */
struct sqlite3_stmt *nsys_actx_prepare(nsys_actx *c, const char *sql);
void nsys_actx_dispose(nsys_actx *c);

#define NSYS__ANALYSIS(fn) bool fn(nsys_actx *c, nsys_rtab *rows, nsys_rec summary)
NSYS__ANALYSIS(nsys_an_top_kernels);
NSYS__ANALYSIS(nsys_an_gpu_idle_gaps);
NSYS__ANALYSIS(nsys_an_overlap);
NSYS__ANALYSIS(nsys_an_nccl_breakdown);
NSYS__ANALYSIS(nsys_an_iterations);
NSYS__ANALYSIS(nsys_an_memory_transfers);
NSYS__ANALYSIS(nsys_an_kernel_launch_overhead);
NSYS__ANALYSIS(nsys_an_sync_cost);
NSYS__ANALYSIS(nsys_an_stream_classification);
NSYS__ANALYSIS(nsys_an_nvtx_summary);
NSYS__ANALYSIS(nsys_an_thread_utilization);
NSYS__ANALYSIS(nsys_an_schema_inspect);
NSYS__ANALYSIS(nsys_an_stage_overlap);
NSYS__ANALYSIS(nsys_an_mfu);

/* Iteration detection shared by iterations, overlap and mfu. */
typedef struct nsys_iter {
  int32_t device;
  int64_t cpu_start, cpu_end; /* the marker range (or, for gap-based, the GPU window) */
  int64_t start, end;         /* GPU window */
  uint32_t name;              /* strtab id of the marker, NSYS_STR_NONE for gap-based */
  uint32_t kernels;
} nsys_iter;
/* Fills *out (malloc'd) with iterations in time order per device; *method is
 * "nvtx" or "gap". Returns the count. */
uint32_t nsys_detect_iterations(nsys_actx *c, nsys_iter **out, const char **method);

#endif
