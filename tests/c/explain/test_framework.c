/* The framework decision from NVTX ranges and the API mix (framework.c) on
 * hand-built indexes: which evidence wins, and what is counted. */
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/strtab.h"
#include "explain/framework.h"
#include "index/index.h"

/* An index with only NVTX ranges named `names` (in domain `domain`, "" for
 * the default) and API calls named `apis`. */
static nsys_index *build(const char *const *names, int n_names, const char *domain, const char *const *apis,
                         int n_apis) {
  nsys_index *ix = calloc(1, sizeof *ix);
  nsys_strtab_init(&ix->strings);
  ix->nvtx.n = (uint32_t)n_names;
  ix->nvtx.name = calloc((size_t)n_names + 1, sizeof(uint32_t));
  ix->nvtx.domain = calloc((size_t)n_names + 1, sizeof(uint32_t));
  for (int i = 0; i < n_names; i++) {
    ix->nvtx.name[i] = nsys_strtab_intern(&ix->strings, names[i], strlen(names[i]));
    ix->nvtx.domain[i] = nsys_strtab_intern(&ix->strings, domain, strlen(domain));
  }
  ix->api.n = (uint32_t)n_apis;
  ix->api.name = calloc((size_t)n_apis + 1, sizeof(uint32_t));
  for (int i = 0; i < n_apis; i++) ix->api.name[i] = nsys_strtab_intern(&ix->strings, apis[i], strlen(apis[i]));
  return ix;
}

static void release(nsys_index *ix) {
  free(ix->nvtx.name);
  free(ix->nvtx.domain);
  free(ix->api.name);
  nsys_strtab_free(&ix->strings);
  free(ix);
}

static nsys_framework decide(const char *const *names, int n, const char *domain, const char *const *apis, int na,
                             const double *kernel_ns, nsys_explain_context *cx) {
  static const double none[NSYS_FW_COUNT] = {0};
  nsys_index *ix = build(names, n, domain, apis, na);
  nsys_task task;
  nsys_task_init(&task);
  memset(cx, 0, sizeof *cx);
  CHECK(nsys_framework_decide(NULL, ix, kernel_ns ? kernel_ns : none, &task, cx));
  release(ix);
  return cx->framework;
}

int main(void) {
  nsys_explain_context cx;
  static const char *const aten[] = {"aten::linear, seq = 3", "aten::addmm", "step 1"};
  CHECK(decide(aten, 3, "", NULL, 0, NULL, &cx) == NSYS_FW_PYTORCH);
  CHECK(strstr(cx.framework_evidence, "2 PyTorch op NVTX ranges") != NULL);
  static const char *const trt[] = {"conv1 + relu", "pool2"};
  CHECK(decide(trt, 2, "TensorRT", NULL, 0, NULL, &cx) == NSYS_FW_TENSORRT);
  static const char *const myelin[] = {"myelinGraphUpdate", "Reformatting CopyNode"};
  CHECK(decide(myelin, 2, "", NULL, 0, NULL, &cx) == NSYS_FW_TENSORRT);
  static const char *const xla[] = {"XlaModule:#hlo_module=jit_step,program_id=3#", "Thunk:#hlo_op=fusion.1#"};
  CHECK(decide(xla, 2, "", NULL, 0, NULL, &cx) == NSYS_FW_XLA);
  static const char *const nvf[] = {"FusionDefinition.execute", "FusionCache.lookup"};
  CHECK(decide(nvf, 2, "", NULL, 0, NULL, &cx) == NSYS_FW_PYTORCH);
  /* NVTX outranks kernel families: a TensorRT engine whose kernels look like PyTorch's */
  double pt[NSYS_FW_COUNT] = {0};
  pt[NSYS_FW_PYTORCH] = 1e9;
  CHECK(decide(trt, 2, "TensorRT", NULL, 0, pt, &cx) == NSYS_FW_TENSORRT);
  /* names that merely contain the words decide nothing */
  static const char *const plain[] = {"my aten:: wrapper", "forward", "TensorRT build"};
  CHECK(decide(plain, 3, "MyApp", NULL, 0, NULL, &cx) == NSYS_FW_CUDA);
  CHECK(decide(plain, 3, "MyApp", NULL, 0, pt, &cx) == NSYS_FW_PYTORCH); /* then kernel families */
  /* the API mix: counted, named in the plain-CUDA evidence */
  static const char *const apis[] = {"cublasSgemm_v2", "cublasCreate_v2", "cudnnConvolutionForward", "cuLaunchKernel",
                                     "cudaLaunchKernel_v7000", "cudaGraphLaunch_v10000", "cudaMemcpy_v3020",
                                     "cuLaunchKernelEx", "cufftExecC2C"};
  CHECK(decide(plain, 0, "", apis, 9, NULL, &cx) == NSYS_FW_CUDA);
  CHECK(cx.api_calls[NSYS_XAPI_CUBLAS] == 2 && cx.api_calls[NSYS_XAPI_CUDNN] == 1 && cx.api_calls[NSYS_XAPI_CUFFT] == 1);
  CHECK(cx.api_calls[NSYS_XAPI_DRIVER_LAUNCH] == 2 && cx.api_calls[NSYS_XAPI_RUNTIME_LAUNCH] == 1);
  CHECK(cx.api_calls[NSYS_XAPI_GRAPH_LAUNCH] == 1 && cx.api_calls[NSYS_XAPI_NCCL] == 0);
  CHECK(strstr(cx.framework_evidence, "cublas (2), cudnn (1), cufft (1)") != NULL);
  return nsys_check_done("explain_framework");
}
