/* Theoretical occupancy from a kernel's launch configuration and the
 * per-compute-capability SM limits (the CUDA Occupancy Calculator model):
 * blocks per SM are limited by warps, registers, shared memory and the
 * block-slot count; occupancy = active warps / max warps per SM.
 * Pure functions: no JSON, no SQLite. */
#ifndef NSYS_OCCUPANCY_H
#define NSYS_OCCUPANCY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nsys_sm_limits {
  int cc_major, cc_minor;
  int max_threads_per_sm;
  int max_warps_per_sm;
  int max_blocks_per_sm;
  int regs_per_sm;            /* 32-bit registers */
  int max_regs_per_thread;
  int reg_alloc_unit;         /* registers, allocated per warp */
  int warp_alloc_granularity; /* warps, for the register limit */
  int smem_per_sm;            /* bytes, largest carveout */
  int max_smem_per_block;     /* bytes, with opt-in */
  int smem_alloc_unit;        /* bytes */
  int smem_reserved_per_block;/* bytes the runtime reserves per block (sm_80+) */
  int max_threads_per_block;
} nsys_sm_limits;

/* Limits for a compute capability; falls back to the nearest lower known
 * minor of the same major, then NULL for unknown majors. */
const nsys_sm_limits *nsys_sm_limits_for(int cc_major, int cc_minor);

typedef struct nsys_launch {
  int64_t grid[3], block[3];
  int regs_per_thread;        /* 0 when unknown */
  int64_t static_smem, dynamic_smem; /* bytes */
  int64_t smem_config;        /* sharedMemoryExecuted: carveout actually used (0: unknown) */
  int64_t local_mem_per_thread;
} nsys_launch;

typedef enum {
  NSYS_OCC_LIMIT_NONE = 0,
  NSYS_OCC_LIMIT_WARPS,
  NSYS_OCC_LIMIT_REGISTERS,
  NSYS_OCC_LIMIT_SHARED_MEMORY,
  NSYS_OCC_LIMIT_BLOCKS,
} nsys_occ_limiter;

#define NSYS_OCC_UNLIMITED 0x7fffffff /* a resource the kernel does not use */

typedef struct nsys_occupancy {
  bool valid;                 /* false: launch impossible or limits unknown */
  int threads_per_block;
  int warps_per_block;
  int blocks_per_sm;          /* active blocks per SM */
  int active_warps_per_sm;
  int max_warps_per_sm;
  double occupancy;           /* 0..1 */
  int limit_warps, limit_regs, limit_smem, limit_blocks; /* blocks per SM by each limit */
  nsys_occ_limiter limiter;
  int64_t total_blocks;       /* grid size */
  double waves;               /* total_blocks / (blocks_per_sm * sm_count); 0 when sm_count unknown */
  char why[160];              /* when !valid, or a note */
} nsys_occupancy;

/* Computes theoretical occupancy. sm_count may be 0 (then waves = 0). */
void nsys_occupancy_compute(const nsys_launch *l, const nsys_sm_limits *lim, int sm_count,
                            nsys_occupancy *out);

const char *nsys_occ_limiter_name(nsys_occ_limiter l); /* "warps", "registers", ... */

#endif
