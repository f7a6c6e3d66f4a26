/* GPU datasheet table: SM count, dense tensor/vector peaks and memory
 * bandwidth per product, matched on the GPU names Nsight Systems writes to
 * TARGET_INFO_GPU ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB",
 * "NVIDIA GeForce RTX 4090 D", ...). Used by MFU (analysis/) and by kernel
 * explanations (explain/). Pure data and lookups: no JSON, no SQLite.
 *
 * Figures are DENSE (no 2:4 sparsity) peak TFLOP/s at boost clock from the
 * vendor datasheets/whitepapers. For GeForce/consumer parts the tensor
 * figures are those with FP32 accumulation (what PyTorch autocast uses),
 * which is half the FP16-accumulate figure on those parts. A field is 0
 * when the GPU has no such unit (e.g. bf16 on V100/T4, fp8 before Ada).
 *
 * STABLE HEADER: other modules include it; only add fields at the end. */
#ifndef NSYS_GPU_SPECS_H
#define NSYS_GPU_SPECS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nsys_gpu_spec {
  const char *name;        /* canonical product name: "H100 SXM" */
  const char *arch;        /* "Hopper", "Ampere", ... */
  int cc_major, cc_minor;  /* compute capability */
  int sm_count;
  double bf16_tflops;      /* dense tensor-core BF16 (0: unsupported) */
  double fp16_tflops;      /* dense tensor-core FP16 */
  double fp8_tflops;       /* dense tensor-core FP8 (0: unsupported) */
  double tf32_tflops;      /* dense tensor-core TF32 (0: unsupported) */
  double fp32_tflops;      /* non-tensor FP32 (FFMA) */
  double mem_bw_gbps;      /* DRAM bandwidth, GB/s (1e9 bytes/s) */
  double mem_gb;           /* memory size of the common SKU, GB */
} nsys_gpu_spec;

/* The row for a TARGET_INFO_GPU name, or NULL when the part is unknown.
 * The name must equal one of a row's aliases as words, case-insensitive,
 * ignoring "NVIDIA"/"Tesla"/"GeForce", "GPU", "Generation" and punctuation;
 * failing that, the same without memory size/type words ("Tesla
 * V100-SXM2-16GB" is "v100 sxm2"). So "RTX 4070 SUPER" is not "RTX 4070" and
 * "RTX 4060 Laptop GPU" is not "RTX 4060" (unknown). A MIG slice ("A30 MIG
 * 2g.12gb") matches its full GPU: see nsys_gpu_name_is_mig. */
const nsys_gpu_spec *nsys_gpu_spec_match(const char *gpu_name);

/* Same, and when the name is unknown, a generic spec of the compute
 * capability (sm_count 0, peaks 0) when cc_major >= 0; else NULL. */
const nsys_gpu_spec *nsys_gpu_spec_match_or_cc(const char *gpu_name, int cc_major, int cc_minor);

/* Peak TFLOP/s for a precision word: "bf16", "f16"/"fp16", "fp8", "tf32",
 * "fp32"; 0 when unknown or unsupported. */
double nsys_gpu_spec_peak(const nsys_gpu_spec *s, const char *precision);

/* Whether the name is a MIG slice ("... MIG 1g.10gb"): the spec matched is
 * the full GPU's; its peaks apply to the SMs the slice has. */
bool nsys_gpu_name_is_mig(const char *gpu_name);

/* Iteration over the table (for tests and docs). */
size_t nsys_gpu_spec_count(void);
const nsys_gpu_spec *nsys_gpu_spec_at(size_t i);

#endif
