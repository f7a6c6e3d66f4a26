/* Recommendations and their preconditions (see advice.h). */
#include "explain/advice.h"

#include <stdio.h>
#include <string.h>

/* Whether `name` is an item of the comma list. */
static bool nsys__in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return true;
    p = c ? c + 1 : NULL;
  }
  return false;
}

bool nsys_advice_kb_applies(const nsys_kb_pattern *pat, int i, const nsys_explain_context *cx, char *why, size_t cap) {
  if (cap) why[0] = '\0';
  if (!cx || !pat || i < 0 || i >= pat->n_suggestions) return true;
  const char *fws = pat->suggestion_frameworks ? pat->suggestion_frameworks[i] : NULL;
  const char *fw = nsys_framework_name(cx->framework);
  if (fws && !nsys__in_list(fws, fw)) {
    snprintf(why, cap, "applies to %s; this profile's framework is %s (%s)", fws, fw, cx->framework_evidence);
    return false;
  }
  int min_cc = pat->suggestion_min_cc ? pat->suggestion_min_cc[i] : 0;
  if (min_cc > 0 && cx->cc_major >= 0 && cx->cc_major * 10 + cx->cc_minor < min_cc) {
    snprintf(why, cap, "needs compute capability %d.%d or newer; %s is %d.%d", min_cc / 10, min_cc % 10,
             cx->gpu_name[0] ? cx->gpu_name : "the GPU", cx->cc_major, cx->cc_minor);
    return false;
  }
  return true;
}

const char *nsys_advice_launch_overhead(nsys_framework fw) {
  switch (fw) {
  case NSYS_FW_PYTORCH:
    return "fuse this op with its neighbours (torch.compile) or capture the step in a CUDA graph "
           "(torch.compile(mode='reduce-overhead') or torch.cuda.graphs) to remove per-launch overhead.";
  case NSYS_FW_TENSORRT:
    return "run the engine with CUDA graphs (trtexec --useCudaGraph, or capture enqueueV3 in a graph) so its many small "
           "kernels launch as one.";
  case NSYS_FW_XLA:
  case NSYS_FW_TENSORFLOW:
    return "XLA launches each fusion separately: larger jit-compiled functions (fewer host round trips, no Python loop "
           "around small steps) and command buffers (XLA_FLAGS=--xla_gpu_enable_command_buffer) cut the launches.";
  case NSYS_FW_NVHPC:
    return "each compute region is a launch: merge neighbouring loops into one region (acc kernels / a larger "
           "parallel loop, collapse) and queue them asynchronously (async / nowait) so the host does not wait.";
  case NSYS_FW_CUPY:
    return "fuse the elementwise chain (cupy.fuse or an ElementwiseKernel/RawKernel) or capture it in a CUDA graph "
           "(cupy.cuda.Graph).";
  case NSYS_FW_NUMBA:
  case NSYS_FW_JULIA:
    return "do more work per launch (a larger grid or a loop inside the kernel) so launch latency is amortised.";
  case NSYS_FW_NCCL_TESTS:
    return "small messages in an NCCL benchmark are latency-bound by design: compare with the large-message bus "
           "bandwidth before tuning.";
  default:
    return "fuse neighbouring kernels or capture the sequence in a CUDA graph (cudaStreamBeginCapture / "
           "cudaGraphLaunch) to remove per-launch overhead.";
  }
}

const char *nsys_advice_serial(nsys_framework fw) {
  switch (fw) {
  case NSYS_FW_NVHPC:
    return "The compiler did not parallelise this loop: -Minfo=accel (or -Minfo=mp) says why (loop-carried "
           "dependence, aliasing, a call inside); make the loop independent (acc loop independent / collapse, "
           "restrict pointers) so it runs over gangs and vectors.";
  case NSYS_FW_PYTORCH:
    return "A kernel with one thread in one block runs serially: if it is a custom extension, launch a grid over the "
           "data; if it is a scalar op in a loop, move the loop into tensor operations.";
  default:
    return "This kernel runs on one thread of one block: launch a grid over the data (blocks x threads covering "
           "the elements, e.g. 256 threads per block) or keep this serial work on the host.";
  }
}

const char *nsys_advice_unified_memory(nsys_framework fw) {
  switch (fw) {
  case NSYS_FW_NVHPC:
    return "With -gpu=managed (or stdpar) the data migrates on first touch: keep it on the device across regions "
           "(acc data / enter data), or prefetch it (cudaMemPrefetchAsync) before the loop.";
  case NSYS_FW_PYTORCH:
  case NSYS_FW_CUPY:
    return "Managed memory pages migrate while the kernel runs: allocate device memory for the hot tensors or "
           "prefetch the managed buffers (cudaMemPrefetchAsync) before the kernel.";
  default:
    return "Pages migrate while the kernel runs: prefetch the managed buffers to the GPU (cudaMemPrefetchAsync) "
           "before the launch, set cudaMemAdviseSetPreferredLocation, or use device memory for data the GPU owns.";
  }
}

const char *nsys_advice_copies(nsys_framework fw) {
  switch (fw) {
  case NSYS_FW_PYTORCH:
    return "Copy from pinned memory without blocking: DataLoader(pin_memory=True) or tensor.pin_memory(), then "
           ".to('cuda', non_blocking=True), and avoid .item()/.cpu() in the step so the copy overlaps compute.";
  case NSYS_FW_CUPY:
    return "Stage host data in pinned memory (cupyx.empty_pinned / cupy.cuda.alloc_pinned_memory) and copy with "
           "ndarray.set(..., stream=s) on a non-default stream so the copy overlaps kernels.";
  case NSYS_FW_NVHPC:
    return "Keep the arrays on the device across regions (acc data / enter data) and move updates with "
           "acc update ... async so the transfers overlap the compute regions.";
  case NSYS_FW_JULIA:
    return "Allocate host buffers pinned (CUDA.pin or Mem.alloc(Mem.Host)) and copy with copyto! on a task's own "
           "stream so the transfer overlaps kernels.";
  default:
    return "Allocate the host buffers pinned (cudaMallocHost / cudaHostRegister) and copy with cudaMemcpyAsync on "
           "a non-default stream, so the copy runs at full link bandwidth and overlaps kernels on other streams "
           "instead of blocking the host.";
  }
}

void nsys_advice_fp32_gemm(const nsys_explain_context *cx, const char *origin, char *out, size_t cap) {
  if (cap) out[0] = '\0';
  if (!cx || cx->cc_major < 0) return;
  /* the library picks its kernel by math mode; a CUTLASS or user kernel's
   * math is fixed by its template: no library switch applies */
  if (strcmp(origin, "cublas") != 0 && strcmp(origin, "cudnn") != 0) return;
  const char *gpu = cx->gpu_name[0] ? cx->gpu_name : "this GPU";
  if (cx->tc_tf32) {
    switch (cx->framework) {
    case NSYS_FW_PYTORCH:
      snprintf(out, cap,
               "This FP32 %s runs without tensor cores on %s (compute capability %d.%d, which has TF32 tensor cores): "
               "allow TF32 (torch.set_float32_matmul_precision('high'), torch.backends.cudnn.allow_tf32) or run "
               "under torch.autocast(dtype=torch.bfloat16).",
               strcmp(origin, "cudnn") == 0 ? "convolution" : "GEMM", gpu, cx->cc_major, cx->cc_minor);
      break;
    case NSYS_FW_TENSORFLOW:
    case NSYS_FW_XLA:
      snprintf(out, cap,
               "This FP32 GEMM runs without tensor cores on %s (compute capability %d.%d): TF32 is the default in "
               "TensorFlow >= 2.4 unless disabled (tf.config.experimental.enable_tensor_float_32_execution); in JAX "
               "set jax.default_matmul_precision('tensorfloat32') or use bfloat16.",
               gpu, cx->cc_major, cx->cc_minor);
      break;
    case NSYS_FW_CUDA:
    case NSYS_FW_CUPY:
      snprintf(out, cap,
               "This FP32 GEMM runs without tensor cores on %s (compute capability %d.%d): allow TF32 "
               "(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH); CuPy: CUPY_TF32=1) if its precision suffices.",
               gpu, cx->cc_major, cx->cc_minor);
      break;
    default:
      break;
    }
  } else if (cx->tc_fp16) {
    if (cx->framework == NSYS_FW_PYTORCH)
      snprintf(out, cap,
               "%s (compute capability %d.%d) has FP16 tensor cores but no TF32 or BF16 (those need 8.0): run this "
               "layer under torch.autocast(dtype=torch.float16) with a GradScaler to reach tensor cores.",
               gpu, cx->cc_major, cx->cc_minor);
    else if (cx->framework == NSYS_FW_CUDA)
      snprintf(out, cap,
               "%s (compute capability %d.%d) has FP16 tensor cores but no TF32 or BF16: FP16 inputs "
               "(cublasGemmEx with CUDA_R_16F, FP32 compute) reach them.",
               gpu, cx->cc_major, cx->cc_minor);
  }
}
