/* A small GPU peak-throughput table for mfu (dense tensor-core TFLOP/s and
 * memory bandwidth), matched on TARGET_INFO_GPU names. NOTE for the lead:
 * explain/ owns the full spec table (gpu_specs.{h,c}); this one exists because
 * it was not on main yet — dedupe by pointing mfu at explain's table. */
#ifndef NSYS_GPU_PEAKS_H
#define NSYS_GPU_PEAKS_H

typedef struct nsys_gpu_peak {
  const char *name;   /* matched as a substring after normalisation */
  double bf16;        /* = fp16 dense TFLOP/s */
  double fp8;         /* 0 when the GPU has no FP8 tensor cores */
  double tf32;
  double mem_gbps;
} nsys_gpu_peak;

/* Longest matching entry for a GPU name ("NVIDIA H100 80GB HBM3"), or NULL. */
const nsys_gpu_peak *nsys_gpu_peak_find(const char *gpu_name);
/* Peak for dtype "bf16"|"fp16"|"fp8"|"tf32" (NULL: bf16); 0 when unsupported. */
double nsys_gpu_peak_tflops(const nsys_gpu_peak *g, const char *dtype);

#endif
