/* Detectors: evidence from the profile around one kernel's instances, each
 * with a rule that says when it explains the kernel's time. No JSON.
 * Definitions (one per number): docs/analyses.md ("Kernel explanations:
 * detectors").
 *
 *   copies      pageable or synchronous host<->device copies adjacent to an
 *               instance on its stream (the op just before or just after
 *               it): a copy is "pageable" when its host side is pageable
 *               memory (copyKind HtoD with srcKind 0, DtoH with dstKind 0),
 *               "synchronous" when a blocking API launched it (cudaMemcpy,
 *               cudaMemcpy2D/3D, cuMemcpyHtoD/DtoH, no ...Async).
 *   unified     unified-memory migrations ([CUDA memcpy Unified ...] rows)
 *               on its device overlapping an instance; GPU page-fault events
 *               (CUDA_UM_GPU_PAGE_FAULT_EVENTS) on its device overlapping an
 *               instance; CPU page faults (CUDA_UM_CPU_PAGE_FAULT_EVENTS) of
 *               its process between an instance and the ops next to it on
 *               its stream (the host touching managed memory around it).
 *   launch      instances launched by a kernel-launch call (graph launches
 *               excluded) that ran shorter than that call, and that found
 *               their stream empty (the previous op on the stream ended
 *               before the call began, or there was none): the GPU waited
 *               for the CPU.
 *
 * Cost: O(k log k) in the kernel's k instances plus binary searches against
 * the profile's tables, which nsys_detect_data_load reads once per open
 * (O(m log m)); a pass over the device's ops only when the profile has
 * unified-memory migrations. */
#ifndef NSYS_EXPLAIN_DETECT_H
#define NSYS_EXPLAIN_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"
#include "index/index.h"

struct nsys_profile;
struct nsys_detect_data; /* what detect.c reads from the profile's tables, per open */

typedef struct nsys_detect {
  uint32_t instances;          /* the kernel's instances examined (on its device) */
  /* copies next to an instance on its stream */
  uint32_t copy_instances;     /* instances with such a copy just before or after */
  uint32_t copies;             /* distinct copies */
  uint32_t pageable_copies, sync_copies; /* of which pageable / synchronous (a copy can be both) */
  int64_t copy_bytes, copy_ns;
  /* unified memory */
  uint32_t um_migrations;      /* migrations overlapping an instance */
  int64_t um_ns, um_bytes;
  uint32_t um_instances;       /* instances overlapped by a migration */
  bool fault_tables;           /* the profile has the page-fault tables */
  uint32_t gpu_fault_events;   /* GPU page-fault events overlapping an instance */
  int64_t gpu_faults;          /* their summed numberOfPageFaults */
  int64_t gpu_fault_ns;        /* their summed duration */
  uint32_t gpu_fault_instances;/* instances overlapped by one */
  int64_t cpu_faults;          /* CPU page faults around instances */
  /* launch */
  uint32_t launched;           /* instances with a known kernel-launch call (not a graph launch) */
  uint32_t graph_launched;     /* instances launched by a graph */
  uint32_t shorter_than_launch;/* of `launched`: ran shorter than their launch call */
  uint32_t starved;            /* of `launched`: found their stream empty */
  int64_t launch_api_ns;       /* summed duration of those launch calls */
  int64_t launched_kernel_ns;  /* summed duration of those instances */
} nsys_detect;

/* Reads what the detectors need from the profile's tables (memcpy bytes and
 * memory kinds, the page-fault tables when present). NULL after
 * nsys_task_fail() when cancelled; tables or columns a schema lacks are
 * simply absent. Free with nsys_detect_data_free. */
struct nsys_detect_data *nsys_detect_data_load(const struct nsys_profile *p, nsys_task *task);
void nsys_detect_data_free(struct nsys_detect_data *d);

/* Runs every detector on the kernel instances among `ops` (a name's
 * instances, e.g. nsys_kstats_ops) that ran on `device`. scan_unified: the
 * profile has unified-memory migrations (context.h's um_ops), so the device's
 * ops are scanned for them (O(n)); otherwise the cost is O(k log k) in the
 * instances plus binary searches. False after nsys_task_fail() when
 * cancelled. d may be NULL (no table evidence: copies are judged by their
 * API call only, no bytes). */
bool nsys_detect_kernel(const nsys_index *ix, const struct nsys_detect_data *d, const uint32_t *ops, uint32_t n_ops,
                        int32_t device, bool scan_unified, nsys_task *task, nsys_detect *out);

/* A result remembered for (short-name id, device) in d (a bounded memo:
 * a repeated hover costs no pass); recall is false when it is not there. */
bool nsys_detect_recall(struct nsys_detect_data *d, uint32_t name_id, int32_t device, nsys_detect *out);
void nsys_detect_remember(struct nsys_detect_data *d, uint32_t name_id, int32_t device, const nsys_detect *det);

/* The rules: whether each finding explains the kernel's time. */
bool nsys_detect_copies_matter(const nsys_detect *d);
bool nsys_detect_um_matters(const nsys_detect *d, uint32_t launches, int64_t total_ns);
bool nsys_detect_launch_bound(const nsys_detect *d);

#endif
