/* Kernel-name analysis (see kernel_name.h): a small recursive-descent
 * reader of demangled C++ names for the display form, and substring rules
 * for precision, tensor cores, tiles, SM arch and NCCL fields. */
#include "explain/kernel_name.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* ---------------------------------------------------------------------- */
/* Display name                                                            */

#define NSYS__MAX_NODES 192
#define NSYS__MAX_ARGS 12
#define NSYS__MAX_LEVEL 5
#define NSYS__MAX_INPUT 8192

enum { NSYS__N_ENTITY, NSYS__N_NUMBER, NSYS__N_POINTER };

typedef struct {
  int kind;
  const char *name;
  size_t name_len;
  int args[NSYS__MAX_ARGS];
  int nargs;
} nsys__node;

typedef struct {
  const char *s;
  nsys__node nodes[NSYS__MAX_NODES];
  int n;
} nsys__parser;

static bool nsys__starts(const char *s, size_t n, const char *lit) {
  size_t l = strlen(lit);
  return n >= l && memcmp(s, lit, l) == 0;
}

/* Length of a special bracketed identifier at s ("<unnamed>", "(anonymous
 * namespace)", "{anonymous}"), else 0. */
static size_t nsys__special(const char *s, size_t n) {
  static const char *const sp[] = {"<unnamed>", "(anonymous namespace)", "{anonymous}", "<lambda>"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(sp); i++)
    if (nsys__starts(s, n, sp[i])) return strlen(sp[i]);
  return 0;
}

/* s[i] is an opener; index after its closer, or n when unbalanced. */
static size_t nsys__skip_balanced(const char *s, size_t i, size_t n) {
  int depth = 0;
  while (i < n) {
    size_t sp = nsys__special(s + i, n - i);
    if (sp && depth > 0) {
      i += sp;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') depth++;
    else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (c == '>' && i > 0 && s[i - 1] == '-') { /* "->" */
        i++;
        continue;
      }
      depth--;
      if (depth <= 0) return i + 1;
    }
    i++;
  }
  return n;
}

static void nsys__trim(const char *s, size_t *a, size_t *b) {
  while (*a < *b && isspace((unsigned char)s[*a])) (*a)++;
  while (*b > *a && isspace((unsigned char)s[*b - 1])) (*b)--;
}

static int nsys__parse(nsys__parser *p, size_t a, size_t b, int level);

/* Parses "<...>" contents [a, b) into args of node. */
static void nsys__parse_args(nsys__parser *p, int node, size_t a, size_t b, int level) {
  const char *s = p->s;
  size_t start = a, i = a;
  while (i <= b) {
    if (i == b || s[i] == ',') {
      if (p->nodes[node].nargs < NSYS__MAX_ARGS) {
        int child = nsys__parse(p, start, i, level + 1);
        if (child >= 0) p->nodes[node].args[p->nodes[node].nargs++] = child;
      }
      start = i + 1;
      i++;
      continue;
    }
    size_t sp = nsys__special(s + i, b - i);
    if (sp) {
      i += sp;
      continue;
    }
    if (s[i] == '<' || s[i] == '(' || s[i] == '[' || s[i] == '{') {
      size_t j = nsys__skip_balanced(s, i, b);
      i = j > i ? j : i + 1;
      continue;
    }
    i++;
  }
}

static int nsys__parse(nsys__parser *p, size_t a, size_t b, int level) {
  const char *s = p->s;
  nsys__trim(s, &a, &b);
  if (a >= b || p->n >= NSYS__MAX_NODES || level > NSYS__MAX_LEVEL) return -1;
  static const char *const prefixes[] = {"void ", "const ", "volatile ", "struct ", "class ",
                                         "typename ", "enum ", "__global__ "};
  for (bool again = true; again;) {
    again = false;
    for (size_t k = 0; k < NSYS_ARRAY_LEN(prefixes); k++) {
      if (nsys__starts(s + a, b - a, prefixes[k])) {
        a += strlen(prefixes[k]);
        again = true;
      }
    }
  }
  nsys__trim(s, &a, &b);
  if (a >= b) return -1;
  int id = p->n++;
  nsys__node *nd = &p->nodes[id];
  memset(nd, 0, sizeof *nd);
  nd->kind = NSYS__N_ENTITY;
  /* trailing cv-qualifiers and pointers */
  while (b > a + 6 && memcmp(s + b - 6, " const", 6) == 0) b -= 6;
  nsys__trim(s, &a, &b);
  if (b > a && (s[b - 1] == '*' || s[b - 1] == '&')) {
    nd->kind = NSYS__N_POINTER;
    return id;
  }
  char c0 = s[a];
  if (isdigit((unsigned char)c0) || c0 == '-' || (c0 == '(' && !nsys__special(s + a, b - a)) ||
      nsys__starts(s + a, b - a, "true") || nsys__starts(s + a, b - a, "false")) {
    nd->kind = NSYS__N_NUMBER;
    return id;
  }
  /* split into "::" components at depth 0 */
  size_t cs[32], ce[32];
  int nc = 0;
  size_t i = a, start = a;
  while (i < b) {
    size_t sp = nsys__special(s + i, b - i);
    if (sp) {
      i += sp;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      size_t j = nsys__skip_balanced(s, i, b);
      i = j > i ? j : i + 1;
      continue;
    }
    if (c == ':' && i + 1 < b && s[i + 1] == ':') {
      if (nc < 32) {
        cs[nc] = start;
        ce[nc] = i;
        nc++;
      }
      i += 2;
      start = i;
      continue;
    }
    i++;
  }
  if (nc < 32) {
    cs[nc] = start;
    ce[nc] = b;
    nc++;
  }
  /* the meaningful component: the function enclosing the first lambda, else the last */
  int pick = nc - 1;
  for (int k = 0; k < nc; k++) {
    char f = s[cs[k]];
    if (f == '[' || f == '{' || nsys__starts(s + cs[k], ce[k] - cs[k], "<lambda")) {
      for (int m = k - 1; m >= 0; m--) {
        size_t len = ce[m] - cs[m];
        if (nsys__starts(s + cs[m], len, "operator") || nsys__special(s + cs[m], len)) continue;
        pick = m;
        break;
      }
      break;
    }
  }
  size_t ca = cs[pick], cb = ce[pick];
  nsys__trim(s, &ca, &cb);
  /* identifier up to '<' or '(' */
  size_t j = ca;
  if (nsys__starts(s + ca, cb - ca, "operator")) {
    j = ca + 8;
    while (j < cb && s[j] == ' ') j++;
    if (j + 1 < cb && s[j] == '(' && s[j + 1] == ')') j += 2;
    while (j < cb && s[j] != '(' && s[j] != '<') j++;
  } else {
    size_t sp = nsys__special(s + ca, cb - ca);
    if (sp) j = ca + sp;
    while (j < cb && s[j] != '<' && s[j] != '(') j++;
  }
  size_t ne = j;
  while (ne > ca && isspace((unsigned char)s[ne - 1])) ne--;
  nd->name = s + ca;
  nd->name_len = ne - ca;
  if (j < cb && s[j] == '<') {
    size_t close = nsys__skip_balanced(s, j, cb);
    if (close > j + 1 && close <= cb && s[close - 1] == '>') nsys__parse_args(p, id, j + 1, close - 1, level);
  }
  return id;
}

static bool nsys__name_is(const nsys__node *n, const char *lit) {
  size_t l = strlen(lit);
  return n->name_len == l && memcmp(n->name, lit, l) == 0;
}

static bool nsys__name_has(const nsys__node *n, const char *lit) {
  size_t l = strlen(lit);
  if (l > n->name_len) return false;
  for (size_t i = 0; i + l <= n->name_len; i++)
    if (memcmp(n->name + i, lit, l) == 0) return true;
  return false;
}

static bool nsys__builtin(const nsys__node *n) {
  static const char *const b[] = {"float", "double", "int", "long", "short", "char", "bool",
                                  "unsigned int", "unsigned long", "unsigned long long", "long long",
                                  "unsigned char", "signed char", "unsigned short", "unsigned",
                                  "int64_t", "int32_t", "uint32_t", "uint64_t", "size_t"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(b); i++)
    if (nsys__name_is(n, b[i])) return true;
  return false;
}

static bool nsys__noise(const nsys__parser *p, int id) {
  const nsys__node *n = &p->nodes[id];
  if (n->kind != NSYS__N_ENTITY || n->name_len == 0) return true;
  static const char *const noise[] = {
      "array", "TrivialOffsetCalculator", "OffsetCalculator", "LoadWithCast", "StoreWithCast",
      "LoadWithoutCast", "StoreWithoutCast", "TensorListMetadata", "TensorListScalarListMetadata",
      "identity_decomposer_t", "use_default", "null_type", "NullType", "OpaqueType", "Params",
      "function_traits", "ScanTileState", "GridEvenShare", "integral_constant", "tuple",
      "<unnamed>", "(anonymous namespace)", "unsigned int", "unsigned long", "unsigned long long",
      "CatArrInputTensorMetadata", "TensorSizeStride", "__nv_bool"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(noise); i++)
    if (nsys__name_is(n, noise[i])) return true;
  if (nsys__name_has(n, "Policy")) return true;
  if (nsys__name_has(n, "operator")) return true;
  return false;
}

/* Templates that only wrap the interesting argument. */
static bool nsys__wrapper(const nsys__node *n) {
  static const char *const w[] = {
      "gpu_kernel_impl", "gpu_kernel_impl_nocast", "ReduceOp", "func_wrapper_t", "BinaryFunctor",
      "AUnaryFunctor", "BUnaryFunctor", "UnaryFunctor", "Kernel", "Kernel2", "device_kernel",
      "gpu_index_kernel", "_kernel_agent", "ParallelForAgent", "launch_kernel", "MultiTensorApply",
      "enable_sm80_to_sm89", "enable_sm90_or_later", "enable_sm80_or_later", "GemmUniversal_kernel"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(w); i++)
    if (nsys__name_is(n, w[i])) return true;
  return false;
}

static int nsys__best_arg(const nsys__parser *p, int id) {
  const nsys__node *n = &p->nodes[id];
  int first = -1;
  for (int k = 0; k < n->nargs; k++) {
    int a = n->args[k];
    if (nsys__noise(p, a)) continue;
    if (first < 0) first = a;
    if (p->nodes[a].nargs > 0 || !nsys__builtin(&p->nodes[a])) return a;
  }
  return first;
}

static void nsys__render(const nsys__parser *p, int id, int level, nsys_strbuf *out) {
  if (out->len > NSYS_KNAME_DISPLAY_MAX + 16) return;
  const nsys__node *n = &p->nodes[id];
  for (int guard = 0; nsys__wrapper(n) && guard < 8; guard++) {
    int best = nsys__best_arg(p, id);
    if (best < 0) break;
    id = best;
    n = &p->nodes[id];
  }
  nsys_strbuf_append(out, n->name, n->name_len);
  int kept[NSYS__MAX_ARGS], nk = 0;
  for (int k = 0; k < n->nargs; k++)
    if (!nsys__noise(p, n->args[k])) kept[nk++] = n->args[k];
  if (nk == 0) return;
  /* <float, float, float> -> <float> */
  bool same = true;
  for (int k = 1; k < nk; k++) {
    const nsys__node *x = &p->nodes[kept[0]], *y = &p->nodes[kept[k]];
    if (x->nargs || y->nargs || x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0)
      same = false;
  }
  if (same) nk = 1;
  if (level >= 2) {
    nsys_strbuf_puts(out, "<\xE2\x80\xA6>");
    return;
  }
  nsys_strbuf_putc(out, '<');
  for (int k = 0; k < nk; k++) {
    if (k) nsys_strbuf_puts(out, ", ");
    nsys__render(p, kept[k], level + 1, out);
  }
  nsys_strbuf_putc(out, '>');
}

/* Copies at most max bytes of s to out, cutting at a UTF-8 boundary and
 * appending an ellipsis when cut. */
static void nsys__copy_capped(const char *s, size_t len, char *out, size_t cap, size_t max) {
  if (cap == 0) return;
  size_t lim = NSYS_MIN(max, cap - 1);
  if (len <= lim) {
    memcpy(out, s, len);
    out[len] = '\0';
    return;
  }
  size_t cut = lim >= 3 ? lim - 3 : 0;
  while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
  memcpy(out, s, cut);
  if (lim >= 3) {
    memcpy(out + cut, "\xE2\x80\xA6", 3);
    cut += 3;
  }
  out[cut] = '\0';
}

void nsys_kname_display(const char *full, const char *short_name, char *out, size_t cap) {
  if (!out || cap == 0) return;
  out[0] = '\0';
  const char *src = (full && *full) ? full : short_name;
  if (!src || !*src) return;
  size_t len = strnlen(src, NSYS__MAX_INPUT);
  /* not a C++ name ("[CUDA memcpy HtoD]", "[CUDA memset]"): keep as is */
  if (src[0] == '[') {
    nsys__copy_capped(src, len, out, cap, NSYS_KNAME_DISPLAY_MAX);
    return;
  }
  nsys__parser *p = nsys_xmalloc(sizeof *p);
  p->s = src;
  p->n = 0;
  int root = nsys__parse(p, 0, len, 0);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  if (root >= 0) nsys__render(p, root, 0, &b);
  if (b.len == 0) {
    const char *fb = (short_name && *short_name) ? short_name : src;
    nsys__copy_capped(fb, strnlen(fb, NSYS__MAX_INPUT), out, cap, NSYS_KNAME_DISPLAY_MAX);
  } else {
    nsys__copy_capped(b.data, b.len, out, cap, NSYS_KNAME_DISPLAY_MAX);
  }
  nsys_strbuf_free(&b);
  free(p);
}

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
                   nsys__has(lf, "cutlass::gemm");
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

  /* tensor cores / MMA kind */
  if (gemm_like || attn) {
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
