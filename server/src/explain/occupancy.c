/* Theoretical occupancy (see occupancy.h). The limits are the CUDA
 * programming guide's "Technical Specifications per Compute Capability"
 * table and the Occupancy Calculator's allocation granularities. */
#include "explain/occupancy.h"

#include <stdio.h>
#include <string.h>

#define KB 1024

static const nsys_sm_limits nsys__limits[] = {
    /* cc    thr/SM warps blk  regs   r/t  ru  wg  smem/SM    smem/blk   su  res  thr/blk */
    {6, 0, 2048, 64, 32, 65536, 255, 256, 2, 64 * KB, 48 * KB, 256, 0, 1024},
    {6, 1, 2048, 64, 32, 65536, 255, 256, 4, 96 * KB, 48 * KB, 256, 0, 1024},
    {6, 2, 2048, 64, 32, 65536, 255, 256, 4, 64 * KB, 48 * KB, 256, 0, 1024},
    {7, 0, 2048, 64, 32, 65536, 255, 256, 4, 96 * KB, 96 * KB, 256, 0, 1024},
    {7, 2, 2048, 64, 32, 65536, 255, 256, 4, 96 * KB, 96 * KB, 256, 0, 1024},
    {7, 5, 1024, 32, 16, 65536, 255, 256, 4, 64 * KB, 64 * KB, 256, 0, 1024},
    {8, 0, 2048, 64, 32, 65536, 255, 256, 4, 164 * KB, 163 * KB, 128, 1 * KB, 1024},
    {8, 6, 1536, 48, 16, 65536, 255, 256, 4, 100 * KB, 99 * KB, 128, 1 * KB, 1024},
    {8, 7, 1536, 48, 16, 65536, 255, 256, 4, 164 * KB, 163 * KB, 128, 1 * KB, 1024},
    {8, 9, 1536, 48, 24, 65536, 255, 256, 4, 100 * KB, 99 * KB, 128, 1 * KB, 1024},
    {9, 0, 2048, 64, 32, 65536, 255, 256, 4, 228 * KB, 227 * KB, 128, 1 * KB, 1024},
    {10, 0, 2048, 64, 32, 65536, 255, 256, 4, 228 * KB, 227 * KB, 128, 1 * KB, 1024},
    {10, 3, 2048, 64, 32, 65536, 255, 256, 4, 228 * KB, 227 * KB, 128, 1 * KB, 1024},
    {12, 0, 1536, 48, 32, 65536, 255, 256, 4, 128 * KB, 99 * KB, 128, 1 * KB, 1024},
};

const nsys_sm_limits *nsys_sm_limits_for(int cc_major, int cc_minor) {
  const nsys_sm_limits *best = NULL;
  for (size_t i = 0; i < sizeof nsys__limits / sizeof nsys__limits[0]; i++) {
    const nsys_sm_limits *l = &nsys__limits[i];
    if (l->cc_major != cc_major) continue;
    if (l->cc_minor == cc_minor) return l;
    if (l->cc_minor < cc_minor) best = l;
    else if (!best) best = l;
  }
  return best;
}

const char *nsys_occ_limiter_name(nsys_occ_limiter l) {
  switch (l) {
    case NSYS_OCC_LIMIT_WARPS: return "warps";
    case NSYS_OCC_LIMIT_REGISTERS: return "registers";
    case NSYS_OCC_LIMIT_SHARED_MEMORY: return "sharedMemory";
    case NSYS_OCC_LIMIT_BLOCKS: return "blocks";
    default: return "none";
  }
}

static int64_t nsys__ceil_to(int64_t v, int64_t unit) {
  return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

void nsys_occupancy_compute(const nsys_launch *l, const nsys_sm_limits *lim, int sm_count,
                            nsys_occupancy *out) {
  memset(out, 0, sizeof *out);
  if (!l || !lim) {
    snprintf(out->why, sizeof out->why, "unknown compute capability");
    return;
  }
  int64_t threads = l->block[0] * l->block[1] * l->block[2];
  int64_t blocks = l->grid[0] * l->grid[1] * l->grid[2];
  out->total_blocks = blocks > 0 ? blocks : 0;
  out->max_warps_per_sm = lim->max_warps_per_sm;
  if (l->block[0] <= 0 || l->block[1] <= 0 || l->block[2] <= 0 || threads <= 0 ||
      threads > lim->max_threads_per_block) {
    snprintf(out->why, sizeof out->why, "block of %lld threads is outside 1..%d", (long long)threads,
             lim->max_threads_per_block);
    return;
  }
  out->threads_per_block = (int)threads;
  int warps = (int)((threads + 31) / 32);
  out->warps_per_block = warps;

  /* warps / block slots */
  out->limit_warps = lim->max_warps_per_sm / warps;
  out->limit_blocks = lim->max_blocks_per_sm;

  /* registers: allocated per warp in reg_alloc_unit chunks; warps in
   * groups of warp_alloc_granularity */
  int regs = l->regs_per_thread;
  if (regs > lim->max_regs_per_thread) {
    snprintf(out->why, sizeof out->why, "%d registers per thread exceeds the limit of %d", regs,
             lim->max_regs_per_thread);
    return;
  }
  if (regs > 0) {
    int64_t per_warp = nsys__ceil_to((int64_t)regs * 32, lim->reg_alloc_unit);
    int64_t warps_by_regs = lim->regs_per_sm / per_warp;
    warps_by_regs = warps_by_regs / lim->warp_alloc_granularity * lim->warp_alloc_granularity;
    out->limit_regs = (int)(warps_by_regs / warps);
  } else {
    out->limit_regs = NSYS_OCC_UNLIMITED;
  }

  /* shared memory */
  int64_t smem = l->static_smem + l->dynamic_smem;
  if (smem < 0) smem = 0;
  int64_t smem_sm = lim->smem_per_sm;
  if (l->smem_config > 0 && l->smem_config <= lim->smem_per_sm) smem_sm = l->smem_config;
  if (smem > lim->max_smem_per_block) {
    snprintf(out->why, sizeof out->why, "%lld bytes of shared memory per block exceeds %d", (long long)smem,
             lim->max_smem_per_block);
    return;
  }
  if (smem > 0) {
    int64_t per_block = nsys__ceil_to(smem + lim->smem_reserved_per_block, lim->smem_alloc_unit);
    out->limit_smem = (int)(smem_sm / per_block);
  } else {
    out->limit_smem = NSYS_OCC_UNLIMITED;
  }

  int b = out->limit_warps;
  out->limiter = NSYS_OCC_LIMIT_WARPS;
  if (out->limit_regs < b) {
    b = out->limit_regs;
    out->limiter = NSYS_OCC_LIMIT_REGISTERS;
  }
  if (out->limit_smem < b) {
    b = out->limit_smem;
    out->limiter = NSYS_OCC_LIMIT_SHARED_MEMORY;
  }
  if (out->limit_blocks < b) {
    b = out->limit_blocks;
    out->limiter = NSYS_OCC_LIMIT_BLOCKS;
  }
  out->blocks_per_sm = b;
  out->active_warps_per_sm = b * warps;
  out->occupancy = (double)out->active_warps_per_sm / lim->max_warps_per_sm;
  if (b <= 0) {
    snprintf(out->why, sizeof out->why, "not even one block fits on an SM (limited by %s)",
             nsys_occ_limiter_name(out->limiter));
    out->occupancy = 0;
    out->valid = false;
    return;
  }
  out->valid = true;
  if (sm_count > 0 && blocks > 0) out->waves = (double)blocks / ((double)b * sm_count);
}
