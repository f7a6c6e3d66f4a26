/* Which runtime or framework launched a profile's work (context.h's
 * `framework`), decided from the strongest evidence found, in this order:
 *   1. process names: julia, trtexec, NCCL tests' *_perf binaries;
 *   2. NVTX: PyTorch's op ranges (emit_nvtx / autograd profiler "aten::...",
 *      nvFuser's "FusionDefinition"/"FusionCache" ranges), TensorRT's
 *      domain or its myelin ranges, XLA's "XlaModule"/"#hlo_op=" ranges;
 *   3. the knowledge-base families of the kernels that carry the GPU time;
 *   4. otherwise plain CUDA, with the libraries it calls directly (cuBLAS,
 *      cuDNN, cuFFT, ... API calls) named in the evidence.
 * Also counts the API mix (context.h's api_calls). No JSON. */
#ifndef NSYS_EXPLAIN_FRAMEWORK_H
#define NSYS_EXPLAIN_FRAMEWORK_H

#include <stdbool.h>

#include "common/task.h"
#include "explain/context.h"
#include "index/index.h"

struct nsys_profile;

/* The framework a knowledge-base origin belongs to (NSYS_FW_CUDA: none). */
nsys_framework nsys_framework_of_origin(const char *origin);

/* Sets cx->framework, cx->framework_evidence and cx->api_calls. kernel_ns[f]
 * is the GPU time of kernels whose family belongs to framework f. False
 * after nsys_task_fail() when cancelled. */
bool nsys_framework_decide(const struct nsys_profile *p, const nsys_index *ix, const double kernel_ns[NSYS_FW_COUNT],
                           nsys_task *task, nsys_explain_context *cx);

#endif
