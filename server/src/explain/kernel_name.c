/* Kernel-name analysis (see kernel_name.h): substring rules for precision,
 * tensor cores, tiles, SM arch and NCCL fields. The display form lives in
 * common/kname_display.c (the index derives display names with it). */
#include "explain/kernel_name.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* ---------------------------------------------------------------------- */
/* Precision, tensor cores, tiles, arch                                    */

static void nsys__set(char *dst, size_t cap, const char *v) { snprintf(dst, cap, "%s", v); }
#define NSYS__SET(field, v) nsys__set((field), sizeof(field), (v))

static void nsys__lower(const char *s, char *out, size_t cap) {
  size_t i = 0;
  if (s)
    for (; s[i] && i + 1 < cap; i++) out[i] = (char)tolower((unsigned char)s[i]);
  out[i] = '\0';
}

static bool nsys__has(const char *s, const char *lit) { return strstr(s, lit) != NULL; }

/* "sm90_", "_sm80_", "cutlass3x_sm90_" -> 90; 0 when absent. */
static int nsys__arch(const char *l) {
  for (const char *p = l; (p = strstr(p, "sm")) != NULL; p += 2) {
    if (p != l && isalnum((unsigned char)p[-1]) && !isdigit((unsigned char)p[-1]) && p[-1] != 'x') continue;
    const char *d = p + 2;
    if (*d == '_') d++;
    int v = 0, nd = 0;
    while (isdigit((unsigned char)d[nd]) && nd < 4) v = v * 10 + (d[nd++] - '0');
    if (nd >= 2 && nd <= 3 && !isalpha((unsigned char)d[nd]) && v >= 30 && v <= 130) return v;
    if (nd >= 2 && nd <= 3 && d[nd] == 'a' && v >= 90) return v; /* sm90a */
  }
  const char *c = strstr(l, "cutlass_");
  if (c && isdigit((unsigned char)c[8]) && isdigit((unsigned char)c[9]) && c[10] == '_')
    return (c[8] - '0') * 10 + (c[9] - '0');
  static const struct {
    const char *prefix;
    int arch;
  } fam[] = {{"maxwell_", 50}, {"pascal_", 60}, {"volta_", 70}, {"turing_", 75},
             {"ampere_", 80}, {"ada_", 89},     {"hopper_", 90}, {"blackwell_", 100}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(fam); i++)
    if (strncmp(l, fam[i].prefix, strlen(fam[i].prefix)) == 0) return fam[i].arch;
  return 0;
}

/* First "AxB" or "AxBxC" (digits) bounded by non-alnum, after `after` when given. */
static bool nsys__tile(const char *l, const char *after, char *out, size_t cap) {
  const char *p = l;
  if (after) {
    p = strstr(l, after);
    if (!p) return false;
    p += strlen(after);
  }
  for (; *p; p++) {
    if (!isdigit((unsigned char)*p) || (p > l && isalnum((unsigned char)p[-1]) && !after)) continue;
    const char *q = p;
    int dims = 0;
    int v[3] = {0, 0, 0};
    while (dims < 3) {
      if (!isdigit((unsigned char)*q)) break;
      int x = 0;
      int nd = 0;
      while (isdigit((unsigned char)*q) && nd < 5) x = x * 10 + (*q++ - '0'), nd++;
      v[dims++] = x;
      if (*q == 'x' && isdigit((unsigned char)q[1])) q++;
      else break;
    }
    if (dims >= 2 && !isalnum((unsigned char)*q) && v[0] >= 8 && v[1] >= 8) {
      if (dims == 3) snprintf(out, cap, "%dx%dx%d", v[0], v[1], v[2]);
      else snprintf(out, cap, "%dx%d", v[0], v[1]);
      return true;
    }
    if (after) return false;
    while (isdigit((unsigned char)p[1])) p++;
  }
  return false;
}

static const char *nsys__precision(const char *l, bool gemm_like) {
  if (nsys__has(l, "e4m3") || nsys__has(l, "e5m2") || nsys__has(l, "fp8") || nsys__has(l, "float8") ||
      nsys__has(l, "_f8") || nsys__has(l, "qgmma") || nsys__has(l, "nvfp4") || nsys__has(l, "mxfp8"))
    return "fp8";
  if (nsys__has(l, "bf16") || nsys__has(l, "bfloat16") || nsys__has(l, "bfloat"))
    return "bf16";
  if (nsys__has(l, "tf32")) return "tf32";
  if (nsys__has(l, "f16") || nsys__has(l, "fp16") || nsys__has(l, "half") || nsys__has(l, "h884") ||
      nsys__has(l, "h1688") || nsys__has(l, "h16816") || nsys__has(l, "hgemm") || nsys__has(l, "__half"))
    return "f16";
  if (nsys__has(l, "int8") || nsys__has(l, "i8816") || nsys__has(l, "imma") || nsys__has(l, "s8s8") ||
      nsys__has(l, "i8i8"))
    return "int8";
  if (nsys__has(l, "dgemm") || nsys__has(l, "double") || nsys__has(l, "f64") || nsys__has(l, "zgemm"))
    return "fp64";
  if (nsys__has(l, "sgemm") || nsys__has(l, "f32") || nsys__has(l, "float") || nsys__has(l, "ffma") ||
      nsys__has(l, "cgemm") || (gemm_like && nsys__has(l, "simt")))
    return "fp32";
  return "";
}

/* nvjet_<a><c><d>_...: type letters for A/B, compute, D. */
static const char *nsys__nvjet_precision(const char *l) {
  const char *p = strstr(l, "nvjet_");
  if (!p) return NULL;
  p += 6;
  if (strncmp(p, "sm", 2) == 0) { /* nvjet_sm100_tst_... */
    const char *u = strchr(p, '_');
    if (!u) return NULL;
    p = u + 1;
  }
  if (!isalpha((unsigned char)p[0]) || !isalpha((unsigned char)p[1]) || !isalpha((unsigned char)p[2]))
    return NULL;
  switch (p[0]) {
    case 't': return "bf16";
    case 'h': return "f16";
    case 'q': case 'e': case 'o': return "fp8";
    case 's': return "fp32";
    case 'd': return "fp64";
    case 'i': return "int8";
    default: return NULL;
  }
}

static void nsys__nccl(const char *name, nsys_kname_info *o) {
  static const char *const colls[] = {"ReduceScatter", "AllReduce", "AllGather", "AllToAll",
                                      "Broadcast",     "SendRecv",  "Reduce",    "Send",
                                      "Recv",          "Generic"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(colls); i++)
    if (strstr(name, colls[i])) {
      NSYS__SET(o->nccl_collective, colls[i]);
      break;
    }
  static const struct {
    const char *pat, *canon;
  } algos[] = {{"COLLNET_DIRECT", "COLLNET_DIRECT"}, {"COLLNET_CHAIN", "COLLNET_CHAIN"},
               {"NVLS_TREE", "NVLS_TREE"},           {"NVLS", "NVLS"},
               {"TREE", "TREE"},                     {"RING", "RING"},
               {"_PAT", "PAT"},                      {"CollNet", "COLLNET_DIRECT"},
               {"Tree", "TREE"},                     {"Ring", "RING"}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(algos); i++)
    if (strstr(name, algos[i].pat)) {
      NSYS__SET(o->nccl_algorithm, algos[i].canon);
      break;
    }
  static const struct {
    const char *pat, *canon;
  } protos[] = {{"LL128", "LL128"}, {"SIMPLE", "SIMPLE"}, {"Simple", "SIMPLE"}, {"LL", "LL"}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(protos); i++) {
    const char *p = strstr(name, protos[i].pat);
    /* "LL" must not be the "ll" of AllReduce: require it upper case, which
     * strstr is; and not followed by more letters except "128"/"Kernel" */
    if (p) {
      NSYS__SET(o->nccl_protocol, protos[i].canon);
      break;
    }
  }
  /* op and dtype from '_'-separated tokens (new and 2.x names), or the
   * "_op_dtype" tail of very old names ("..._sum_f32"). */
  static const struct {
    const char *tok, *canon;
  } ops[] = {{"Sum", "Sum"}, {"Prod", "Prod"}, {"Max", "Max"}, {"Min", "Min"},
             {"PreMulSum", "PreMulSum"}, {"SumPostDiv", "SumPostDiv"}, {"sum", "Sum"},
             {"prod", "Prod"}, {"max", "Max"}, {"min", "Min"}, {"premulsum", "PreMulSum"},
             {"sumpostdiv", "SumPostDiv"}};
  static const struct {
    const char *tok, *canon;
  } types[] = {{"int8_t", "int8"},   {"uint8_t", "uint8"},   {"int32_t", "int32"},  {"uint32_t", "uint32"},
               {"int64_t", "int64"}, {"uint64_t", "uint64"}, {"half", "f16"},       {"float", "fp32"},
               {"double", "fp64"},   {"__nv_bfloat16", "bf16"}, {"bf16", "bf16"},   {"f16", "f16"},
               {"f32", "fp32"},      {"f64", "fp64"},        {"i8", "int8"},        {"u8", "uint8"},
               {"i32", "int32"},     {"u32", "uint32"},      {"i64", "int64"},      {"u64", "uint64"},
               {"f8e4m3", "fp8_e4m3"}, {"f8e5m2", "fp8_e5m2"}, {"fp8_e4m3", "fp8_e4m3"},
               {"fp8_e5m2", "fp8_e5m2"}, {"__nv_fp8_e4m3", "fp8_e4m3"}, {"__nv_fp8_e5m2", "fp8_e5m2"}};
  const char *p = name;
  while (*p) {
    while (*p == '_') p++;
    const char *t = p;
    while (*p && *p != '_' && *p != '(' && *p != '<') p++;
    size_t len = (size_t)(p - t);
    if (len == 0) {
      if (*p) p++;
      continue;
    }
    for (size_t i = 0; i < NSYS_ARRAY_LEN(ops) && !o->nccl_op[0]; i++)
      if (strlen(ops[i].tok) == len && memcmp(t, ops[i].tok, len) == 0) NSYS__SET(o->nccl_op, ops[i].canon);
    for (size_t i = 0; i < NSYS_ARRAY_LEN(types) && !o->nccl_dtype[0]; i++) {
      size_t tl = strlen(types[i].tok);
      /* "int8_t" spans a '_': compare against the remaining text */
      if (strncmp(t, types[i].tok, tl) == 0 && !isalnum((unsigned char)t[tl])) {
        NSYS__SET(o->nccl_dtype, types[i].canon);
        if (tl > len) p = t + tl;
      }
    }
    if (*p == '(' || *p == '<') break;
  }
}

void nsys_kname_analyze(const char *short_name, const char *full_name, nsys_kname_info *out) {
  memset(out, 0, sizeof *out);
  out->tensor_cores = -1;
  char ls[1024], lf[2048];
  nsys__lower(short_name ? short_name : "", ls, sizeof ls);
  nsys__lower(full_name ? full_name : "", lf, sizeof lf);
  /* wrapper short names ("Kernel2", "device_kernel") carry nothing: use the full name */
  const char *base = ls[0] ? ls : lf;
  if (lf[0] && (strcmp(ls, "kernel2") == 0 || strcmp(ls, "kernel") == 0 || strcmp(ls, "device_kernel") == 0 ||
                strcmp(ls, "_kernel_agent") == 0))
    base = lf;
  const char *orig = (short_name && *short_name) ? short_name : (full_name ? full_name : "");

  /* NCCL */
  if (strncmp(base, "nccl", 4) == 0 || strstr(base, "ncclkernel") || strstr(base, "nccldevkernel")) {
    out->is_nccl = true;
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", orig);
    nsys__nccl(tmp, out);
    return;
  }

  out->sm_arch = nsys__arch(base);
  bool gemm_like = nsys__has(base, "gemm") || nsys__has(base, "nvjet") || nsys__has(base, "xmma") ||
                   nsys__has(base, "cutlass") || nsys__has(base, "matmul") || nsys__has(base, "conv") ||
                   nsys__has(lf, "cutlass::gemm") || nsys__has(base, "scudnn") || nsys__has(base, "h1688cudnn") ||
                   nsys__has(base, "h884cudnn");
  bool attn = nsys__has(base, "flash") || nsys__has(base, "fmha") || nsys__has(base, "attention") ||
              nsys__has(lf, "flash::");

  /* precision: the short name first (cuBLAS/CUTLASS encode it), then the
   * template arguments of the demangled name */
  const char *prec = nsys__nvjet_precision(base);
  if (!prec || !*prec) prec = nsys__precision(base, gemm_like);
  if (!*prec) {
    /* skip the parameter list: "(float *, ...)" says little about compute */
    char targs[2048];
    snprintf(targs, sizeof targs, "%s", lf);
    prec = nsys__precision(targs, gemm_like);
  }
  NSYS__SET(out->precision, prec);

  /* tensor cores / MMA kind. No tensor cores: pooling (TensorRT's
   * sm50_xmma_pooling_* is CUDA-core work), a kernel built for an
   * architecture before Volta (sm50_xmma_*, maxwell_*), legacy fp32 scudnn */
  if (nsys__has(base, "pooling") || (out->sm_arch > 0 && out->sm_arch < 70) || nsys__has(base, "scudnn")) {
    out->tensor_cores = 0;
    if (gemm_like && !nsys__has(base, "pooling")) NSYS__SET(out->mma, "ffma");
  } else if (gemm_like || attn) {
    if (nsys__has(base, "ffma") || nsys__has(base, "sgemm") || nsys__has(base, "simt") ||
        nsys__has(base, "dgemm") || nsys__has(base, "_fp32_fp32")) {
      if (!nsys__has(base, "tf32")) {
        out->tensor_cores = 0;
        NSYS__SET(out->mma, "ffma");
      }
    }
    if (out->tensor_cores != 0) {
      if (nsys__has(base, "wgmma") || nsys__has(base, "gmma") || nsys__has(base, "warpgroup") ||
          nsys__has(base, "warpspecialized") || nsys__has(lf, "sm90") || (out->sm_arch >= 90 && out->sm_arch < 120)) {
        out->tensor_cores = 1;
        NSYS__SET(out->mma, "wgmma");
      } else if (nsys__has(base, "imma") || nsys__has(base, "i8816") || strcmp(out->precision, "int8") == 0) {
        out->tensor_cores = 1;
        NSYS__SET(out->mma, "imma");
      } else if (nsys__has(base, "hmma") || nsys__has(base, "16816") || nsys__has(base, "1688") ||
                 nsys__has(base, "884") || nsys__has(base, "tensorop") || nsys__has(base, "xmma") ||
                 nsys__has(base, "nvjet") || attn || nsys__has(base, "_tc_") ||
                 (prec[0] && strcmp(prec, "fp32") != 0 && strcmp(prec, "fp64") != 0)) {
        out->tensor_cores = 1;
        NSYS__SET(out->mma, nsys__has(base, "nvjet") ? "" : "hmma");
      }
    }
  }

  /* tile */
  if (!nsys__tile(base, "tilesize", out->tile, sizeof out->tile)) {
    const char *traits = strstr(lf, "kernel_traits<");
    if (attn && traits) {
      /* Flash_fwd_kernel_traits<(int)kHeadDim, (int)kBlockM, (int)kBlockN, ...> */
      int v[3] = {0, 0, 0};
      int k = 0;
      for (const char *q = traits; *q && *q != '>' && k < 3; q++) {
        if (isdigit((unsigned char)*q) && !isalnum((unsigned char)q[-1]) && q[-1] != '_') {
          v[k++] = (int)(strtol(q, NULL, 10) % 100000);
          while (isdigit((unsigned char)q[1])) q++;
        }
      }
      if (k == 3) snprintf(out->tile, sizeof out->tile, "%dx%d", v[1], v[2]);
    } else if (gemm_like) {
      nsys__tile(base, NULL, out->tile, sizeof out->tile);
    }
  }
}

/* ---------------------------------------------------------------------- */
/* Short name from a full name                                             */

static void nsys__copy_span(char *out, size_t cap, const char *s, size_t n) {
  if (cap == 0) return;
  if (n >= cap) n = cap - 1;
  memcpy(out, s, n);
  out[n] = '\0';
}

/* Itanium mangling: _Z [N] (<len><ident>)+ ...: the nested names joined by
 * "::" into qual, the last into out. False when not of that form. */
static bool nsys__short_mangled(const char *s, char *out, size_t cap, char *qual, size_t qcap) {
  if (strncmp(s, "_Z", 2) != 0) return false;
  const char *p = s + 2;
  if (*p == 'N') p++;
  const char *last = NULL;
  size_t last_len = 0, ql = 0;
  if (qual && qcap) qual[0] = '\0';
  while (isdigit((unsigned char)*p)) {
    size_t len = 0;
    while (isdigit((unsigned char)*p) && len < 100000) len = len * 10 + (size_t)(*p++ - '0');
    if (len == 0 || strnlen(p, len) < len) return false;
    if (qual && qcap) {
      int w = snprintf(qual + ql, ql < qcap ? qcap - ql : 0, "%s%.*s", ql ? "::" : "", (int)len, p);
      if (w > 0) ql = NSYS_MIN(ql + (size_t)w, qcap - 1);
    }
    last = p;
    last_len = len;
    p += len;
  }
  if (!last) return false;
  nsys__copy_span(out, cap, last, last_len);
  return true;
}

void nsys_kname_short(const char *name, char *out, size_t cap, char *qual, size_t qcap) {
  if (cap) out[0] = '\0';
  if (qual && qcap) qual[0] = '\0';
  if (!name || cap == 0) return;
  if (nsys__short_mangled(name, out, cap, qual, qcap)) return;
  /* demangled: the qualified name ends at the first '(' outside template
   * brackets that does not open "(anonymous namespace)" */
  static const char anon[] = "(anonymous namespace)";
  const char *end = NULL;
  int depth = 0;
  for (const char *p = name; *p; p++) {
    if (*p == '<') depth++;
    else if (*p == '>' && depth > 0) depth--;
    else if (*p == '(' && depth == 0) {
      if (strncmp(p, anon, sizeof anon - 1) == 0) {
        p += sizeof anon - 2;
        continue;
      }
      end = p;
      break;
    }
  }
  if (!end) end = name + strlen(name);
  /* drop trailing template arguments */
  const char *e = end;
  while (e > name && e[-1] == ' ') e--;
  if (e > name && e[-1] == '>') {
    int d = 0;
    const char *q = e;
    while (q > name) {
      q--;
      if (*q == '>') d++;
      else if (*q == '<' && --d == 0) break;
    }
    if (d == 0) e = q;
  }
  /* the qualified name starts after the last space outside brackets (the
   * return type precedes it) */
  const char *start = name;
  depth = 0;
  for (const char *p = name; p < e; p++) {
    if (*p == '<' || *p == '(') depth++;
    else if ((*p == '>' || *p == ')') && depth > 0) depth--;
    else if (*p == ' ' && depth == 0) start = p + 1;
  }
  if (strncmp(start, anon, sizeof anon - 1) == 0 && start > name) start = name;
  if (qual && qcap) nsys__copy_span(qual, qcap, start, (size_t)(e - start));
  const char *last = start;
  for (const char *p = start; p + 1 < e; p++)
    if (p[0] == ':' && p[1] == ':') last = p + 2;
  if (last >= e) last = start;
  nsys__copy_span(out, cap, last, (size_t)(e - last));
  if (!out[0]) nsys__copy_span(out, cap, name, strlen(name));
}
