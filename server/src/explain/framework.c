/* The framework of a profile (see framework.h). */
#include "explain/framework.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "profile/profile.h"

#define NSYS__POLL 65536u

const char *nsys_xapi_name(nsys_xapi a) {
  static const char *const names[NSYS_XAPI_COUNT] = {"cublas", "cudnn",   "cufft",        "curand",        "cusparse",
                                                     "cusolver", "nccl", "driverLaunch", "runtimeLaunch", "graphLaunch"};
  return (unsigned)a < NSYS_XAPI_COUNT ? names[a] : "?";
}

nsys_framework nsys_framework_of_origin(const char *o) {
  static const struct {
    const char *origin;
    nsys_framework fw;
  } map[] = {{"pytorch", NSYS_FW_PYTORCH},       {"triton", NSYS_FW_PYTORCH},   {"apex", NSYS_FW_PYTORCH},
             {"flash-attention", NSYS_FW_PYTORCH}, {"transformer-engine", NSYS_FW_PYTORCH},
             {"xformers", NSYS_FW_PYTORCH},      {"nvfuser", NSYS_FW_PYTORCH},  {"torchvision", NSYS_FW_PYTORCH},
             {"fbgemm", NSYS_FW_PYTORCH},        {"vllm", NSYS_FW_PYTORCH},     {"megatron", NSYS_FW_PYTORCH},
             {"deepep", NSYS_FW_PYTORCH},        {"tensorrt", NSYS_FW_TENSORRT}, {"tensorrt-llm", NSYS_FW_TENSORRT},
             {"xla", NSYS_FW_XLA},               {"tensorflow", NSYS_FW_TENSORFLOW}, {"nvhpc", NSYS_FW_NVHPC},
             {"cupy", NSYS_FW_CUPY},             {"numba", NSYS_FW_NUMBA},      {"julia", NSYS_FW_JULIA}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(map); i++)
    if (strcmp(o, map[i].origin) == 0) return map[i].fw;
  return NSYS_FW_CUDA;
}

static bool nsys__ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* ---- NVTX ----------------------------------------------------------------- */

enum { NSYS__NV_NONE, NSYS__NV_PYTORCH, NSYS__NV_NVFUSER, NSYS__NV_TENSORRT, NSYS__NV_XLA, NSYS__NV_COUNT };

static uint8_t nsys__nvtx_class(const char *name, bool domain) {
  if (domain) {
    if (strcmp(name, "TensorRT") == 0) return NSYS__NV_TENSORRT;
    return NSYS__NV_NONE;
  }
  if (strncmp(name, "aten::", 6) == 0) return NSYS__NV_PYTORCH; /* emit_nvtx / autograd profiler op ranges */
  if (strncmp(name, "FusionDefinition", 16) == 0 || strncmp(name, "FusionCache", 11) == 0) return NSYS__NV_NVFUSER;
  if (strncmp(name, "myelin", 6) == 0) return NSYS__NV_TENSORRT; /* TensorRT's Myelin engine layers */
  if (strncmp(name, "XlaModule", 9) == 0 || strstr(name, "#hlo_op=") || strstr(name, "#hlo_module="))
    return NSYS__NV_XLA;
  return NSYS__NV_NONE;
}

/* Per string id, its class (0xFF: not yet classified). */
static uint8_t nsys__class_of(uint8_t *memo, const nsys_index *ix, uint32_t id, bool domain) {
  if (id >= ix->strings.count) return NSYS__NV_NONE;
  if (memo[id] == 0xFF) memo[id] = nsys__nvtx_class(nsys_strtab_get(&ix->strings, id), domain);
  return memo[id];
}

/* ---- API mix ----------------------------------------------------------- */

static int nsys__api_class(const char *n) {
  static const struct {
    const char *prefix;
    nsys_xapi a;
  } map[] = {{"cublas", NSYS_XAPI_CUBLAS},   {"cudnn", NSYS_XAPI_CUDNN},     {"cufft", NSYS_XAPI_CUFFT},
             {"curand", NSYS_XAPI_CURAND},   {"cusparse", NSYS_XAPI_CUSPARSE}, {"cusolver", NSYS_XAPI_CUSOLVER},
             {"nccl", NSYS_XAPI_NCCL},       {"cuLaunchKernel", NSYS_XAPI_DRIVER_LAUNCH},
             {"cuLaunchCooperativeKernel", NSYS_XAPI_DRIVER_LAUNCH}, {"cudaLaunchKernel", NSYS_XAPI_RUNTIME_LAUNCH},
             {"cudaLaunchCooperativeKernel", NSYS_XAPI_RUNTIME_LAUNCH}, {"cudaGraphLaunch", NSYS_XAPI_GRAPH_LAUNCH},
             {"cuGraphLaunch", NSYS_XAPI_GRAPH_LAUNCH}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(map); i++)
    if (strncasecmp(n, map[i].prefix, strlen(map[i].prefix)) == 0) return (int)map[i].a;
  return -1;
}

bool nsys_framework_decide(const nsys_profile *p, const nsys_index *ix, const double kernel_ns[NSYS_FW_COUNT],
                           nsys_task *task, nsys_explain_context *cx) {
  memset(cx->api_calls, 0, sizeof cx->api_calls);
  /* the API mix: each distinct name classified once */
  int8_t *api_memo = nsys_xmalloc(ix->strings.count ? ix->strings.count : 1);
  memset(api_memo, 0x7F, ix->strings.count ? ix->strings.count : 1);
  for (uint32_t i = 0; i < ix->api.n; i++) {
    if ((i + 1) % NSYS__POLL == 0 && nsys_task_cancelled(task)) {
      free(api_memo);
      return nsys_task_fail_cancelled(task);
    }
    uint32_t id = ix->api.name[i];
    if (id >= ix->strings.count) continue;
    if (api_memo[id] == 0x7F) api_memo[id] = (int8_t)nsys__api_class(nsys_strtab_get(&ix->strings, id));
    if (api_memo[id] >= 0) cx->api_calls[api_memo[id]]++;
  }
  free(api_memo);

  /* 1. process names (they name the program) */
  for (int i = 0; p && i < p->info.n_processes; i++) {
    const char *n = p->info.processes[i].name;
    if (!n) continue;
    const char *base = strrchr(n, '/');
    base = base ? base + 1 : n;
    nsys_framework f = NSYS_FW_CUDA;
    if (strcmp(base, "julia") == 0 || strncmp(base, "julia-", 6) == 0) f = NSYS_FW_JULIA;
    else if (strstr(base, "trtexec")) f = NSYS_FW_TENSORRT;
    else if (nsys__ends_with(base, "_perf") || nsys__ends_with(base, "_perf_mpi")) f = NSYS_FW_NCCL_TESTS;
    if (f != NSYS_FW_CUDA) {
      cx->framework = f;
      snprintf(cx->framework_evidence, sizeof cx->framework_evidence, "process '%.100s'", base);
      return true;
    }
  }

  /* 2. NVTX domains and range names */
  uint32_t nv[NSYS__NV_COUNT] = {0};
  uint8_t *memo = nsys_xmalloc(ix->strings.count ? ix->strings.count : 1);
  memset(memo, 0xFF, ix->strings.count ? ix->strings.count : 1);
  uint8_t *dmemo = nsys_xmalloc(ix->strings.count ? ix->strings.count : 1);
  memset(dmemo, 0xFF, ix->strings.count ? ix->strings.count : 1);
  for (uint32_t i = 0; i < ix->nvtx.n; i++) {
    if ((i + 1) % NSYS__POLL == 0 && nsys_task_cancelled(task)) {
      free(memo);
      free(dmemo);
      return nsys_task_fail_cancelled(task);
    }
    uint8_t c = nsys__class_of(memo, ix, ix->nvtx.name[i], false);
    if (c == NSYS__NV_NONE && ix->nvtx.domain) c = nsys__class_of(dmemo, ix, ix->nvtx.domain[i], true);
    nv[c]++;
  }
  free(memo);
  free(dmemo);
  static const struct {
    int cls;
    nsys_framework fw;
    const char *what;
  } nv_fw[] = {{NSYS__NV_TENSORRT, NSYS_FW_TENSORRT, "TensorRT NVTX ranges (its domain or Myelin layers)"},
               {NSYS__NV_XLA, NSYS_FW_XLA, "XLA NVTX ranges (XlaModule / #hlo_op=)"},
               {NSYS__NV_PYTORCH, NSYS_FW_PYTORCH, "PyTorch op NVTX ranges (aten::..., emit_nvtx)"},
               {NSYS__NV_NVFUSER, NSYS_FW_PYTORCH, "nvFuser NVTX ranges (FusionDefinition / FusionCache)"}};
  int best = -1;
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nv_fw); i++)
    if (nv[nv_fw[i].cls] > 0 && (best < 0 || nv[nv_fw[i].cls] > nv[nv_fw[best].cls])) best = (int)i;
  if (best >= 0) {
    cx->framework = nv_fw[best].fw;
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence, "%u %s", nv[nv_fw[best].cls], nv_fw[best].what);
    return true;
  }

  /* 3. the families that carry the kernel time */
  double kernel_fw_total = 0, top = 0;
  nsys_framework top_fw = NSYS_FW_CUDA;
  for (int f = 1; f < NSYS_FW_COUNT; f++) {
    kernel_fw_total += kernel_ns[f];
    if (kernel_ns[f] > top) top = kernel_ns[f], top_fw = (nsys_framework)f;
  }
  if (top > 0) {
    cx->framework = top_fw;
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence,
             "%.0f%% of the GPU time of framework-specific kernels is in %s kernels", 100.0 * top / kernel_fw_total,
             nsys_framework_name(top_fw));
    return true;
  }

  /* 4. plain CUDA, naming the libraries it calls */
  cx->framework = NSYS_FW_CUDA;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  for (int a = NSYS_XAPI_CUBLAS; a <= NSYS_XAPI_NCCL; a++)
    if (cx->api_calls[a] > 0) nsys_strbuf_printf(&b, "%s%s (%u)", b.len ? ", " : "", nsys_xapi_name((nsys_xapi)a), cx->api_calls[a]);
  if (b.len)
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence,
             "no process, NVTX range or kernel family of a framework: plain CUDA calling %.160s directly", b.data);
  else
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence,
             "no process, NVTX range or kernel family of a framework: plain CUDA (or libraries called directly)");
  nsys_strbuf_free(&b);
  return true;
}
