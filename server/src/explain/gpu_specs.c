/* The GPU datasheet table and its name matcher (see gpu_specs.h). */
#include "explain/gpu_specs.h"

#include <ctype.h>
#include <string.h>

typedef struct {
  nsys_gpu_spec spec;
  const char *aliases; /* '|'-separated, already normalised (see nsys__norm) */
} nsys__gpu_row;

/* name, arch, cc, SMs, bf16, fp16, fp8, tf32, fp32, GB/s, GB */
static const nsys__gpu_row nsys__gpus[] = {
    /* Pascal / Volta / Turing */
    {{"P100", "Pascal", 6, 0, 56, 0, 18.7, 0, 0, 9.3, 732, 16}, "p100"},
    {{"GTX 1060", "Pascal", 6, 1, 10, 0, 0, 0, 0, 4.4, 192, 6}, "gtx 1060"},
    {{"GTX 1080 Ti", "Pascal", 6, 1, 28, 0, 0, 0, 0, 11.3, 484, 11}, "gtx 1080 ti"},
    {{"V100 SXM2", "Volta", 7, 0, 80, 0, 125, 0, 0, 15.7, 900, 16}, "v100|v100 sxm2|v100 sxm3"},
    {{"V100 PCIe", "Volta", 7, 0, 80, 0, 112, 0, 0, 14, 900, 16}, "v100 pcie"},
    {{"V100S PCIe", "Volta", 7, 0, 80, 0, 130, 0, 0, 16.4, 1134, 32}, "v100s|v100s pcie"},
    {{"TITAN V", "Volta", 7, 0, 80, 0, 110, 0, 0, 14.9, 653, 12}, "titan v"},
    {{"T4", "Turing", 7, 5, 40, 0, 65, 0, 0, 8.1, 320, 16}, "t4"},
    {{"TITAN RTX", "Turing", 7, 5, 72, 0, 130, 0, 0, 16.3, 672, 24}, "titan rtx"},
    {{"RTX 2080 Ti", "Turing", 7, 5, 68, 0, 53.8, 0, 0, 13.4, 616, 11}, "rtx 2080 ti"},
    {{"RTX 2080", "Turing", 7, 5, 46, 0, 40.3, 0, 0, 10.1, 448, 8}, "rtx 2080"},
    {{"Quadro RTX 8000", "Turing", 7, 5, 72, 0, 130.5, 0, 0, 16.3, 672, 48}, "quadro rtx 8000|quadro rtx 6000"},
    /* Ampere datacenter */
    {{"A100 SXM4 80GB", "Ampere", 8, 0, 108, 312, 312, 0, 156, 19.5, 2039, 80},
     "a100|a100 sxm4 80gb|a100 80gb|a100 sxm 80gb|a800|a800 sxm4 80gb"},
    {{"A100 SXM4 40GB", "Ampere", 8, 0, 108, 312, 312, 0, 156, 19.5, 1555, 40}, "a100 sxm4 40gb|a100 sxm4|a100 40gb"},
    {{"A100 PCIe 80GB", "Ampere", 8, 0, 108, 312, 312, 0, 156, 19.5, 1935, 80}, "a100 80gb pcie|a100 pcie 80gb"},
    {{"A100 PCIe 40GB", "Ampere", 8, 0, 108, 312, 312, 0, 156, 19.5, 1555, 40}, "a100 pcie|a100 pcie 40gb|a100 40gb pcie"},
    {{"A30", "Ampere", 8, 0, 56, 165, 165, 0, 82, 10.3, 933, 24}, "a30"},
    {{"A40", "Ampere", 8, 6, 84, 149.7, 149.7, 0, 74.8, 37.4, 696, 48}, "a40"},
    {{"A10", "Ampere", 8, 6, 72, 125, 125, 0, 62.5, 31.2, 600, 24}, "a10"},
    {{"A10G", "Ampere", 8, 6, 80, 70, 70, 0, 35, 31.2, 600, 24}, "a10g"},
    {{"A16", "Ampere", 8, 6, 40, 35.9, 35.9, 0, 18, 18, 800, 64}, "a16"},
    {{"A2", "Ampere", 8, 6, 10, 18, 18, 0, 9, 4.5, 200, 16}, "a2"},
    /* Ampere workstation / GeForce (tensor figures: FP32 accumulate) */
    {{"RTX A6000", "Ampere", 8, 6, 84, 154.8, 154.8, 0, 77.4, 38.7, 768, 48}, "rtx a6000"},
    {{"RTX A5000", "Ampere", 8, 6, 64, 111.1, 111.1, 0, 55.6, 27.8, 768, 24}, "rtx a5000"},
    {{"RTX A4000", "Ampere", 8, 6, 48, 76.7, 76.7, 0, 38.4, 19.2, 448, 16}, "rtx a4000"},
    {{"RTX A2000", "Ampere", 8, 6, 26, 32, 32, 0, 16, 8, 288, 12}, "rtx a2000|rtx a2000 12gb"},
    {{"RTX 3090 Ti", "Ampere", 8, 6, 84, 80, 80, 0, 40, 40, 1008, 24}, "rtx 3090 ti"},
    {{"RTX 3090", "Ampere", 8, 6, 82, 71, 71, 0, 35.6, 35.6, 936, 24}, "rtx 3090"},
    {{"RTX 3080 Ti", "Ampere", 8, 6, 80, 68.2, 68.2, 0, 34.1, 34.1, 912, 12}, "rtx 3080 ti"},
    {{"RTX 3080", "Ampere", 8, 6, 68, 59.5, 59.5, 0, 29.8, 29.8, 760, 10}, "rtx 3080"},
    {{"RTX 3070 Ti", "Ampere", 8, 6, 48, 43.5, 43.5, 0, 21.7, 21.7, 608, 8}, "rtx 3070 ti"},
    {{"RTX 3070", "Ampere", 8, 6, 46, 40.6, 40.6, 0, 20.3, 20.3, 448, 8}, "rtx 3070"},
    {{"RTX 3060 Ti", "Ampere", 8, 6, 38, 32.4, 32.4, 0, 16.2, 16.2, 448, 8}, "rtx 3060 ti"},
    {{"RTX 3060", "Ampere", 8, 6, 28, 25.6, 25.6, 0, 12.7, 12.7, 360, 12}, "rtx 3060"},
    /* Ada */
    {{"L4", "Ada", 8, 9, 58, 121, 121, 242.5, 60, 30.3, 300, 24}, "l4"},
    {{"L40S", "Ada", 8, 9, 142, 362, 362, 733, 183, 91.6, 864, 48}, "l40s"},
    {{"L40", "Ada", 8, 9, 142, 181, 181, 362, 90.5, 90.5, 864, 48}, "l40"},
    {{"RTX 6000 Ada", "Ada", 8, 9, 142, 364.2, 364.2, 728.5, 182.1, 91.1, 960, 48}, "rtx 6000 ada|rtx 6000 ada generation"},
    {{"RTX 5000 Ada", "Ada", 8, 9, 100, 261.1, 261.1, 522.2, 130.5, 65.3, 576, 32}, "rtx 5000 ada|rtx 5000 ada generation"},
    {{"RTX 5000 Ada Laptop", "Ada", 8, 9, 76, 170, 170, 340, 85, 42.6, 576, 16},
     "rtx 5000 ada generation laptop|rtx 5000 ada laptop"},
    {{"RTX 4000 Ada", "Ada", 8, 9, 48, 106.9, 106.9, 213.8, 53.4, 26.7, 360, 20}, "rtx 4000 ada|rtx 4000 ada generation"},
    {{"RTX 4090", "Ada", 8, 9, 128, 165.2, 165.2, 330.3, 82.6, 82.6, 1008, 24}, "rtx 4090"},
    {{"RTX 4090 D", "Ada", 8, 9, 114, 147, 147, 294, 73.5, 73.5, 1008, 24}, "rtx 4090 d"},
    {{"RTX 4080 SUPER", "Ada", 8, 9, 80, 104.4, 104.4, 208.9, 52.2, 52.2, 736, 16}, "rtx 4080 super"},
    {{"RTX 4080", "Ada", 8, 9, 76, 97.5, 97.5, 194.9, 48.7, 48.7, 717, 16}, "rtx 4080"},
    {{"RTX 4070 Ti SUPER", "Ada", 8, 9, 66, 88.2, 88.2, 176.4, 44.1, 44.1, 672, 16}, "rtx 4070 ti super"},
    {{"RTX 4070 Ti", "Ada", 8, 9, 60, 80.2, 80.2, 160.4, 40.1, 40.1, 504, 12}, "rtx 4070 ti"},
    {{"RTX 4070 SUPER", "Ada", 8, 9, 56, 71, 71, 141.9, 35.5, 35.5, 504, 12}, "rtx 4070 super"},
    {{"RTX 4070", "Ada", 8, 9, 46, 58.3, 58.3, 116.6, 29.1, 29.1, 504, 12}, "rtx 4070"},
    {{"RTX 4060 Ti", "Ada", 8, 9, 34, 44.1, 44.1, 88.3, 22.1, 22.1, 288, 8}, "rtx 4060 ti"},
    {{"RTX 4060", "Ada", 8, 9, 24, 30.2, 30.2, 60.4, 15.1, 15.1, 272, 8}, "rtx 4060"},
    /* Hopper */
    {{"H100 SXM", "Hopper", 9, 0, 132, 989, 989, 1979, 494, 67, 3350, 80},
     "h100|h100 sxm|h100 sxm5|h100 80gb hbm3|h800|gh100"},
    {{"H100 PCIe", "Hopper", 9, 0, 114, 756, 756, 1513, 378, 51, 2039, 80}, "h100 pcie"},
    {{"H100 NVL", "Hopper", 9, 0, 132, 835, 835, 1671, 418, 60, 3900, 94}, "h100 nvl"},
    {{"H200", "Hopper", 9, 0, 132, 989, 989, 1979, 494, 67, 4800, 141}, "h200|h200 nvl|gh200"},
    {{"H20", "Hopper", 9, 0, 78, 148, 148, 296, 74, 44, 4000, 96}, "h20"},
    /* Blackwell */
    {{"B200", "Blackwell", 10, 0, 148, 2250, 2250, 4500, 1100, 75, 8000, 180}, "b200"},
    {{"B100", "Blackwell", 10, 0, 132, 1750, 1750, 3500, 875, 60, 8000, 180}, "b100"},
    {{"GB200", "Blackwell", 10, 0, 148, 2500, 2500, 5000, 1250, 80, 8000, 186}, "gb200"},
    {{"RTX PRO 6000 Blackwell", "Blackwell", 12, 0, 188, 503.8, 503.8, 1007.6, 126, 126, 1792, 96},
     "rtx pro 6000|rtx pro 6000 blackwell"},
    {{"RTX 5090", "Blackwell", 12, 0, 170, 209.5, 209.5, 419, 104.8, 104.8, 1792, 32}, "rtx 5090"},
    {{"RTX 5080", "Blackwell", 12, 0, 84, 112.6, 112.6, 225.1, 56.3, 56.3, 960, 16}, "rtx 5080"},
    {{"RTX 5070 Ti", "Blackwell", 12, 0, 70, 87.9, 87.9, 175.8, 43.9, 43.9, 896, 16}, "rtx 5070 ti"},
    {{"RTX 5070", "Blackwell", 12, 0, 48, 61.7, 61.7, 123.5, 30.9, 30.9, 672, 12}, "rtx 5070"},
    {{"RTX 5060 Ti", "Blackwell", 12, 0, 36, 47.4, 47.4, 94.8, 23.7, 23.7, 448, 16}, "rtx 5060 ti"},
    {{"RTX 5060", "Blackwell", 12, 0, 30, 38.4, 38.4, 76.7, 19.2, 19.2, 448, 8}, "rtx 5060"},
};

/* Generic per-compute-capability entries (no peaks) for unknown names. */
static const nsys_gpu_spec nsys__generic[] = {
    {"sm_60 GPU", "Pascal", 6, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_61 GPU", "Pascal", 6, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_70 GPU", "Volta", 7, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_72 GPU", "Volta", 7, 2, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_75 GPU", "Turing", 7, 5, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_80 GPU", "Ampere", 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_86 GPU", "Ampere", 8, 6, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_87 GPU", "Ampere", 8, 7, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_89 GPU", "Ada", 8, 9, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_90 GPU", "Hopper", 9, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_100 GPU", "Blackwell", 10, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_103 GPU", "Blackwell", 10, 3, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm_120 GPU", "Blackwell", 12, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

#define NSYS_GPU_SPEC_COUNT_() (sizeof nsys__gpus / sizeof nsys__gpus[0])

/* Lower-case words of alphanumerics joined by single spaces, without the
 * vendor words ("nvidia", "tesla", "geforce") and the filler words "gpu" and
 * "generation" ("RTX 5000 Ada Generation Laptop GPU" -> "rtx 5000 ada
 * laptop"). Words from "mig" on (a MIG slice: "A30 MIG 2g.12gb") are cut and
 * *mig set. Without memory words (keep_mem false), sizes ("80gb") and memory
 * types ("hbm3", "gddr6x") are dropped too. */
static void nsys__norm(const char *in, bool keep_mem, char *out, size_t cap, bool *mig) {
  size_t o = 0;
  out[0] = '\0';
  if (mig) *mig = false;
  const char *p = in;
  while (*p) {
    while (*p && !isalnum((unsigned char)*p)) p++;
    const char *w = p;
    while (*p && isalnum((unsigned char)*p)) p++;
    size_t len = (size_t)(p - w);
    if (len == 0) break;
    char word[32];
    if (len >= sizeof word) continue;
    for (size_t i = 0; i < len; i++) word[i] = (char)tolower((unsigned char)w[i]);
    word[len] = '\0';
    if (!strcmp(word, "mig")) {
      if (mig) *mig = true;
      break;
    }
    if (!strcmp(word, "nvidia") || !strcmp(word, "tesla") || !strcmp(word, "geforce") ||
        !strcmp(word, "gpu") || !strcmp(word, "generation"))
      continue;
    if (!keep_mem) {
      size_t d = 0;
      while (d < len && isdigit((unsigned char)word[d])) d++;
      bool size = d > 0 && !strcmp(word + d, "gb");
      if (size || !strncmp(word, "hbm", 3) || !strncmp(word, "gddr", 4)) continue;
    }
    if (o + len + 2 >= cap) break;
    if (o) out[o++] = ' ';
    memcpy(out + o, word, len);
    o += len;
    out[o] = '\0';
  }
}

/* The row one of whose aliases equals `name` (normalised), or NULL. With
 * keep_mem false, only aliases without memory words take part. */
static const nsys_gpu_spec *nsys__find_alias(const char *name, bool keep_mem) {
  for (size_t i = 0; i < NSYS_GPU_SPEC_COUNT_(); i++) {
    const char *a = nsys__gpus[i].aliases;
    while (*a) {
      const char *bar = strchr(a, '|');
      size_t len = bar ? (size_t)(bar - a) : strlen(a);
      char raw[64], alias[64], full[64];
      if (len < sizeof raw) {
        memcpy(raw, a, len);
        raw[len] = '\0';
        nsys__norm(raw, keep_mem, alias, sizeof alias, NULL);
        nsys__norm(raw, true, full, sizeof full, NULL);
        if ((keep_mem || !strcmp(alias, full)) && !strcmp(alias, name)) return &nsys__gpus[i].spec;
      }
      a += len;
      if (*a == '|') a++;
    }
  }
  return NULL;
}

const nsys_gpu_spec *nsys_gpu_spec_match(const char *gpu_name) {
  if (!gpu_name || !*gpu_name) return NULL;
  char name[260];
  nsys__norm(gpu_name, true, name, sizeof name, NULL);
  if (!name[0]) return NULL;
  const nsys_gpu_spec *s = nsys__find_alias(name, true);
  if (s) return s;
  nsys__norm(gpu_name, false, name, sizeof name, NULL);
  return name[0] ? nsys__find_alias(name, false) : NULL;
}

bool nsys_gpu_name_is_mig(const char *gpu_name) {
  if (!gpu_name) return false;
  char name[260];
  bool mig = false;
  nsys__norm(gpu_name, true, name, sizeof name, &mig);
  return mig;
}

const nsys_gpu_spec *nsys_gpu_spec_match_or_cc(const char *gpu_name, int cc_major, int cc_minor) {
  const nsys_gpu_spec *s = nsys_gpu_spec_match(gpu_name);
  if (s || cc_major < 0) return s;
  const nsys_gpu_spec *best = NULL;
  for (size_t i = 0; i < sizeof nsys__generic / sizeof nsys__generic[0]; i++) {
    const nsys_gpu_spec *g = &nsys__generic[i];
    if (g->cc_major == cc_major && g->cc_minor == cc_minor) return g;
    /* nearest lower minor of the same major */
    if (g->cc_major == cc_major && g->cc_minor <= cc_minor) best = g;
  }
  return best;
}

double nsys_gpu_spec_peak(const nsys_gpu_spec *s, const char *precision) {
  if (!s || !precision) return 0;
  if (strcmp(precision, "bf16") == 0) return s->bf16_tflops;
  if (strcmp(precision, "f16") == 0 || strcmp(precision, "fp16") == 0) return s->fp16_tflops;
  if (strcmp(precision, "fp8") == 0) return s->fp8_tflops;
  if (strcmp(precision, "tf32") == 0) return s->tf32_tflops;
  if (strcmp(precision, "fp32") == 0 || strcmp(precision, "f32") == 0) return s->fp32_tflops;
  return 0;
}

size_t nsys_gpu_spec_count(void) { return NSYS_GPU_SPEC_COUNT_(); }

const nsys_gpu_spec *nsys_gpu_spec_at(size_t i) {
  return i < NSYS_GPU_SPEC_COUNT_() ? &nsys__gpus[i].spec : NULL;
}
