/* What to recommend where: every recommendation an explanation makes states
 * its preconditions and is given only where they hold, in the framework's
 * own terms. Knowledge-base suggestions carry their preconditions as data
 * (frameworks, minCc; see kb.h); the recommendations derived from the
 * profile's evidence are phrased here per framework. No JSON. Documented in
 * docs/analyses.md ("Kernel explanations: preconditions"). */
#ifndef NSYS_EXPLAIN_ADVICE_H
#define NSYS_EXPLAIN_ADVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "explain/context.h"
#include "explain/kb.h"

/* Whether suggestion i of pat applies in cx. cx NULL (a name explained
 * without a profile): true, nothing can be judged. When false, `why` says
 * which precondition failed ("needs PyTorch; this profile is TensorRT"). */
bool nsys_advice_kb_applies(const nsys_kb_pattern *pat, int i, const nsys_explain_context *cx, char *why, size_t cap);

/* How to remove per-launch overhead in this framework. */
const char *nsys_advice_launch_overhead(nsys_framework fw);

/* A kernel launched with one thread in one block: what to do. */
const char *nsys_advice_serial(nsys_framework fw);

/* Unified-memory migrations during a kernel: what to do. */
const char *nsys_advice_unified_memory(nsys_framework fw);

/* Pageable or synchronous host<->device copies next to a kernel on its
 * stream: what to do. */
const char *nsys_advice_copies(nsys_framework fw);

/* An FP32 GEMM/convolution from `origin` running without tensor cores:
 * the advice that fits the GPU's compute capability and the framework, or
 * "" when none does (e.g. a CUTLASS kernel: its template fixes the math;
 * an unknown GPU). */
void nsys_advice_fp32_gemm(const nsys_explain_context *cx, const char *origin, char *out, size_t cap);

#endif
