/* NCCL kernel-name parsing: collective, reduction op, dtype, algorithm and
 * protocol from the NCCL >= 2.19 form (ncclDevKernel_AllReduce_Sum_f32_RING_LL),
 * the 2.x form (ncclKernel_AllReduce_RING_LL_Sum_float) and the oldest
 * camel-case form (ncclAllReduceRingLLKernel_sum_f32). Unknown parts are "". */
#ifndef NSYS_NCCL_H
#define NSYS_NCCL_H

#include <stdbool.h>

typedef struct nsys_nccl_info {
  char collective[24]; /* AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, SendRecv, Send, Recv, AllToAll, Generic, other */
  char algorithm[16];  /* RING, TREE, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT */
  char protocol[8];    /* LL, LL128, SIMPLE */
  char dtype[16];      /* f32, bf16, ... (NCCL's spelling) */
  char redop[16];      /* Sum, Prod, Max, Min, PreMulSum, SumPostDiv */
} nsys_nccl_info;

/* False when the name is not an NCCL kernel. */
bool nsys_nccl_parse(const char *name, nsys_nccl_info *out);

#endif
