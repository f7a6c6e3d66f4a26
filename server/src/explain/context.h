/* The context an explanation is judged in, derived once per open profile
 * (cached per index) before any kernel is explained:
 *   - the GPU (the busiest device): compute capability, SM count, memory
 *     bandwidth and which tensor-core precisions it has;
 *   - the runtime/framework that launched the work (PyTorch, TensorRT,
 *     JAX/XLA, TensorFlow, NVHPC OpenACC/OpenMP, CuPy, Numba, Julia,
 *     NCCL tests, plain CUDA), from process names, NVTX domains and range
 *     names, the families of the kernels that carry the GPU time and the
 *     API mix (framework.c), with the evidence that decided it;
 *   - the whole-profile ranking of where GPU time goes: kernel families,
 *     each copy kind, memsets and GPU idle, largest first. It decides what
 *     is "first" to optimise.
 * No JSON here. Definitions: docs/analyses.md ("Kernel explanations"). */
#ifndef NSYS_EXPLAIN_CONTEXT_H
#define NSYS_EXPLAIN_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"
#include "explain/gpu_specs.h"
#include "index/index.h"

struct nsys_profile;
struct nsys_kb_pattern;

typedef enum {
  NSYS_FW_CUDA = 0, /* plain CUDA (nothing more specific found) */
  NSYS_FW_PYTORCH,
  NSYS_FW_TENSORRT,
  NSYS_FW_XLA,
  NSYS_FW_TENSORFLOW,
  NSYS_FW_NVHPC,
  NSYS_FW_CUPY,
  NSYS_FW_NUMBA,
  NSYS_FW_JULIA,
  NSYS_FW_NCCL_TESTS,
  NSYS_FW_COUNT
} nsys_framework;

/* "cuda", "pytorch", "tensorrt", "xla", "tensorflow", "nvhpc", "cupy",
 * "numba", "julia", "nccl-tests". */
const char *nsys_framework_name(nsys_framework f);

/* Library API calls counted in the CUDA API trace (the "API mix"). */
typedef enum {
  NSYS_XAPI_CUBLAS, NSYS_XAPI_CUDNN, NSYS_XAPI_CUFFT, NSYS_XAPI_CURAND, NSYS_XAPI_CUSPARSE, NSYS_XAPI_CUSOLVER,
  NSYS_XAPI_NCCL, NSYS_XAPI_DRIVER_LAUNCH, NSYS_XAPI_RUNTIME_LAUNCH, NSYS_XAPI_GRAPH_LAUNCH, NSYS_XAPI_COUNT
} nsys_xapi;

/* "cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nccl",
 * "driverLaunch" (cuLaunchKernel*), "runtimeLaunch" (cudaLaunchKernel*),
 * "graphLaunch" (cudaGraphLaunch / cuGraphLaunch). */
const char *nsys_xapi_name(nsys_xapi a);

#define NSYS_XCTX_MAX_ITEMS 32

typedef enum { NSYS_XITEM_KERNELS, NSYS_XITEM_COPY, NSYS_XITEM_MEMSET, NSYS_XITEM_IDLE } nsys_xitem_kind;

/* One line of the whole-profile ranking. */
typedef struct nsys_xctx_item {
  char label[128];   /* "cublas gemm", "user kernel vector_add", "[CUDA memcpy HtoD]", "GPU idle" */
  nsys_xitem_kind kind;
  int64_t ns;        /* summed duration (idle: summed idle gaps of every device) */
  uint32_t count;    /* operations (idle: devices) */
  uint32_t top_name; /* short-name id of its largest name (NSYS_STR_NONE for idle/other) */
} nsys_xctx_item;

typedef struct nsys_explain_context {
  nsys_framework framework;
  char framework_evidence[256];
  /* GPU of the busiest device; cc_major -1 and sm_count 0 when unknown */
  char gpu_name[128];
  const nsys_gpu_spec *spec;
  int cc_major, cc_minor, sm_count;
  double mem_bw_gbps;        /* 0 when unknown */
  bool tc_fp16, tc_int8, tc_tf32, tc_bf16, tc_fp8; /* tensor-core precisions of that cc */
  /* ranking, largest first; items beyond the first NSYS_XCTX_MAX_ITEMS - 1
   * are folded into a last "other" item */
  int n_items;
  nsys_xctx_item items[NSYS_XCTX_MAX_ITEMS];
  int64_t gpu_op_ns;         /* summed duration of every GPU operation */
  int64_t idle_ns;           /* summed idle time of every device between its first and last operation */
  uint32_t um_ops;           /* unified-memory migrations ([CUDA memcpy Unified ...]) */
  uint32_t api_calls[NSYS_XAPI_COUNT]; /* the API mix (framework.c) */
  /* what the detectors read from the profile's tables (detect.h), owned by
   * the context cache; NULL in copies of the context */
  struct nsys_detect_data *detect_data;
} nsys_explain_context;

/* The context of an open profile (computed on first use, then cached for
 * the index, four profiles at most). NULL after nsys_task_fail() when
 * cancelled. p and ix non-NULL. The caller reads it until
 * nsys_explain_context_release: a context evicted for another profile's
 * meanwhile is freed by its last release. */
const nsys_explain_context *nsys_explain_context_get(const struct nsys_profile *p, const nsys_index *ix,
                                                     nsys_task *task);
/* Ends a read of a context nsys_explain_context_get returned (NULL: nothing). */
void nsys_explain_context_release(const nsys_explain_context *cx);
/* The server's warm-up (rpc/warm.c): builds the context ahead only into a
 * free cache slot, never evicting another profile's (a request may be
 * reading it), and not when another caller is building it. The context when
 * it is cached now, held as nsys_explain_context_get's (release it); else NULL. */
const nsys_explain_context *nsys_explain_context_warm(const struct nsys_profile *p, const nsys_index *ix,
                                                      nsys_task *task);

/* Tensor-core precisions of a compute capability (all false when cc_major < 0). */
void nsys_explain_tc_caps(int cc_major, int cc_minor, nsys_explain_context *cx);

/* The ranking label of a kernel: "<origin> <category>" for a library kernel,
 * "user kernel <short name>" for one the knowledge base does not know. */
void nsys_explain_item_label(const struct nsys_kb_pattern *pat, const char *short_name, char *out, size_t cap);

/* Rank (1-based) of the item with this label, or 0 when absent. */
int nsys_explain_context_rank(const nsys_explain_context *cx, const char *label);

/* Drops the cache (tests). */
void nsys_explain_context_clear(void);

#endif
