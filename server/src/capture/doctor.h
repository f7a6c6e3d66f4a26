/* Capture health ("doctor"): what a capture lacks for an analysis to be
 * trusted, each with the exact `nsys profile` flags that fix it. Rules and
 * thresholds are defined in docs/analyses.md (Capture health). No JSON here:
 * methods/capture_methods.c converts. */
#ifndef NSYS_CAPTURE_DOCTOR_H
#define NSYS_CAPTURE_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"

struct nsys_profile;

typedef enum { NSYS_DOC_INFO = 0, NSYS_DOC_WARNING, NSYS_DOC_ERROR } nsys_doc_severity;

typedef struct nsys_doc_finding {
  const char *rule;      /* stable id, e.g. "no_gpu_activity" (static) */
  nsys_doc_severity severity;
  char *title;           /* one line */
  char *evidence;        /* the numbers behind it */
  char *fix;             /* what to do, in words */
  const char *flags[6];  /* the nsys flags that fix it (static), NULL-terminated */
} nsys_doc_finding;

typedef struct nsys_doc_report {
  nsys_doc_finding *findings;
  int n;
  /* the numbers the rules read (exact) */
  int64_t gpu_ops;          /* kernels + memcpy + memset + graph launches */
  int64_t span_ns;          /* activity span; 0 when no timed event */
  int gpus_listed;          /* TARGET_INFO_GPU rows */
  int gpus_active;          /* devices with GPU activity */
  int64_t nvtx_ranges;
  bool nccl_kernels, nccl_nvtx;
  int64_t gpu_start, gpu_end; /* the GPU-active window (first op start, last op end); 0,0 without ops */
  int64_t overhead_ns;      /* wall time covered by the profiler's own overhead rows (PROFILER_OVERHEAD,
                               CUPTI_ACTIVITY_KIND_OVERHEAD: flushes, instrumentation), each clipped to
                               its process's GPU-active window (their union) */
  int64_t overhead_rows;    /* the rows counted there */
  bool capture_types_known; /* META_DATA_CAPTURE lists CAPTURE_EVENT_TYPE rows */
  bool traced_cuda, traced_nvtx; /* from META_DATA_CAPTURE when known */
  int64_t utc_epoch;        /* the session start (UTC ns); 0 when unknown */
} nsys_doc_report;

/* Runs every rule on p (its info, plus a few scans on a private read-only
 * connection that stop when t is cancelled). false after nsys_task_fail(). */
bool nsys_doctor_run(struct nsys_profile *p, nsys_task *t, nsys_doc_report *out);
void nsys_doctor_free(nsys_doc_report *r);

/* Reports of one job (one per rank or node), each already run through
 * nsys_doctor_run: adds to reps[0] the finding "clocks_not_aligned" when their
 * GPU-active windows, placed on UTC by each report's session start, have no
 * instant in common. Reports without a session clock or GPU operations are
 * left out (their own findings say why). names[i] names report i. */
void nsys_doctor_set(nsys_doc_report *reps, const char *const *names, int n);
const char *nsys_doc_severity_name(nsys_doc_severity s);

/* Thresholds (docs/analyses.md, Capture health). */
#define NSYS_DOC_MIN_SPAN_NS 200000000LL /* 200 ms */
#define NSYS_DOC_MIN_KERNELS 50
#define NSYS_DOC_OVERHEAD_PCT 1.0

#endif
