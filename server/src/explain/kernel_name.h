/* Kernel-name analysis: pure functions over the names CUPTI records
 * (shortName and demangledName). No JSON, no SQLite, no allocation that
 * outlives a call. Every function accepts any byte string (fuzzed).
 *
 *   nsys_kname_display()  "void at::native::vectorized_elementwise_kernel<(int)4,
 *                          at::native::FillFunctor<float>, std::array<...>>(int, T2, T3)"
 *                         -> "vectorized_elementwise_kernel<FillFunctor<float>>"
 *   nsys_kname_analyze()  precision, tensor-core use, MMA kind, tile shape, SM
 *                         arch and NCCL fields inferred from the name. */
#ifndef NSYS_KERNEL_NAME_H
#define NSYS_KERNEL_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* nsys_kname_display() and NSYS_KNAME_DISPLAY_MAX (moved to common/ so the
 * index can derive display names without depending on explain/). */
#include "common/kname_display.h"

typedef struct nsys_kname_info {
  char precision[12];   /* "fp8", "bf16", "f16", "tf32", "fp32", "fp64", "int8", "" unknown */
  int tensor_cores;     /* 1 uses tensor cores, 0 does not (FFMA/SIMT), -1 unknown */
  char mma[8];          /* "wgmma", "hmma", "imma", "ffma", "dmma", "" */
  char tile[40];        /* "128x256x64", "128x128", "" */
  int sm_arch;          /* 90 for sm90_*, 80 for ampere_*, 0 unknown */
  bool is_nccl;
  char nccl_collective[16]; /* AllReduce, AllGather, ReduceScatter, Broadcast, Reduce,
                               SendRecv, Send, Recv, AllToAll, Generic, "" */
  char nccl_algorithm[16];  /* RING, TREE, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT */
  char nccl_protocol[8];    /* LL, LL128, SIMPLE */
  char nccl_op[12];         /* Sum, Prod, Max, Min, PreMulSum, SumPostDiv */
  char nccl_dtype[12];      /* int8, uint8, int32, uint32, int64, uint64, f16, fp32, fp64,
                               bf16, fp8_e4m3, fp8_e5m2 */
} nsys_kname_info;

/* The function name CUPTI would record as shortName, derived from a full
 * name given alone (a hover or a question names a kernel by its demangled
 * or mangled form): "void at::native::(anonymous namespace)::
 * CatArrayBatchedCopy<float, ...>(float*, ...)" -> "CatArrayBatchedCopy";
 * "_ZN2at6native13reduce_kernelILi512E..." -> "reduce_kernel". Writes the
 * qualified form ("at::native::reduce_kernel", "" when the name is neither)
 * to `qual` when non-NULL. A name that is already short is copied. Always
 * NUL-terminates (cap >= 1). */
void nsys_kname_short(const char *name, char *out, size_t cap, char *qual, size_t qcap);

/* Fills *out from the short and full names (either may be NULL). */
void nsys_kname_analyze(const char *short_name, const char *full_name, nsys_kname_info *out);

#endif
