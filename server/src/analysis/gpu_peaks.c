#include "analysis/gpu_peaks.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "common/util.h"

/* Public datasheet dense (no sparsity) figures; GeForce parts use the FP16-accumulate
 * tensor figure (as the Python peer does). */
static const nsys_gpu_peak nsys__peaks[] = {
    {"B200", 2250, 4500, 1100, 8000},      {"B100", 1750, 3500, 875, 8000},
    {"GB200", 2250, 4500, 1100, 8000},     {"H200", 989, 1979, 494, 4800},
    {"H100 SXM", 989, 1979, 494, 3350},    {"H100 80GB HBM3", 989, 1979, 494, 3350},
    {"H100 PCIe", 756, 1513, 378, 2039},   {"H100 NVL", 835, 1671, 418, 3900},
    {"H100", 989, 1979, 494, 3350},        {"H800", 989, 1979, 494, 3350},
    {"L40S", 362, 733, 183, 864},          {"L40", 181, 362, 90, 864},
    {"L4", 121, 242, 60, 300},             {"RTX 6000 Ada", 364, 728, 182, 960},
    {"RTX 4090", 165, 330, 83, 1008},      {"RTX 4080", 204, 0, 49, 716},
    {"A100 SXM4 80GB", 312, 0, 156, 2039}, {"A100 SXM4 40GB", 312, 0, 156, 1555},
    {"A100 PCIE 80GB", 312, 0, 156, 1935}, {"A100 PCIE 40GB", 312, 0, 156, 1555},
    {"A100 80GB", 312, 0, 156, 2039},      {"A100", 312, 0, 156, 1555},
    {"A800", 312, 0, 156, 2039},           {"A30", 165, 0, 82, 933},
    {"A10G", 125, 0, 62, 600},             {"A10", 125, 0, 62, 600},
    {"A40", 150, 0, 75, 696},              {"RTX A6000", 310, 0, 155, 768},
    {"RTX 3090", 142, 0, 36, 936},         {"RTX 3080", 119, 0, 30, 760},
    {"RTX 3070", 81, 0, 20, 448},          {"RTX 3060", 51, 0, 13, 360},
    {"T4", 65, 0, 0, 320},                 {"V100", 125, 0, 0, 900},
    {"RTX 5090", 838, 1676, 105, 1792},
};

static void nsys__norm(const char *s, char *out, size_t cap) {
  size_t j = 0;
  for (; *s && j + 1 < cap; s++) {
    char ch = *s == '-' || *s == '_' ? ' ' : (char)toupper((unsigned char)*s);
    if (ch == ' ' && (j == 0 || out[j - 1] == ' ')) continue;
    out[j++] = ch;
  }
  out[j] = '\0';
}

const nsys_gpu_peak *nsys_gpu_peak_find(const char *gpu_name) {
  if (!gpu_name) return NULL;
  char name[256], key[64];
  nsys__norm(gpu_name, name, sizeof name);
  const nsys_gpu_peak *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__peaks); i++) {
    nsys__norm(nsys__peaks[i].name, key, sizeof key);
    const char *hit = strstr(name, key);
    if (!hit) continue;
    /* whole-token match: "A10" must not match "A100" */
    char after = hit[strlen(key)];
    if (after && after != ' ') continue;
    if (strlen(key) > best_len) {
      best = &nsys__peaks[i];
      best_len = strlen(key);
    }
  }
  return best;
}

double nsys_gpu_peak_tflops(const nsys_gpu_peak *g, const char *dtype) {
  if (!g) return 0;
  if (!dtype || !strcmp(dtype, "bf16") || !strcmp(dtype, "fp16")) return g->bf16;
  if (!strcmp(dtype, "fp8")) return g->fp8;
  if (!strcmp(dtype, "tf32")) return g->tf32;
  return 0;
}
