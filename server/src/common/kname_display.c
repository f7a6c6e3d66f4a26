/* Simplified display names of kernels (see kname_display.h): a small
 * recursive-descent reader of demangled C++ names. Pure string code, shared
 * by the index (display names derived per distinct kernel name) and explain/. */
#include "common/kname_display.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
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
                                  "int64_t", "int32_t", "uint32_t", "uint64_t", "size_t",
                                  /* element types: BinaryFunctor<BFloat16, BFloat16, BFloat16, MulFunctor<float>>
                                   * is about MulFunctor */
                                  "BFloat16", "Half", "bfloat16_t", "half_t", "__half", "__nv_bfloat16",
                                  "Float8_e4m3fn", "Float8_e5m2", "complex"};
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
  /* runs of the same plain type fold: <float, float, float> -> <float>,
   * <int, float, float, float> -> <int, float> */
  int w = 0;
  for (int k = 0; k < nk; k++) {
    const nsys__node *y = &p->nodes[kept[k]];
    if (w > 0) {
      const nsys__node *x = &p->nodes[kept[w - 1]];
      if (!x->nargs && !y->nargs && x->name_len == y->name_len && memcmp(x->name, y->name, x->name_len) == 0)
        continue;
    }
    kept[w++] = kept[k];
  }
  nk = w;
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
  } else if (b.len > len) {
    /* eliding deep arguments ("<…>") can lengthen a short name: never
     * display more than the name itself */
    nsys__copy_capped(src, len, out, cap, NSYS_KNAME_DISPLAY_MAX);
  } else {
    nsys__copy_capped(b.data, b.len, out, cap, NSYS_KNAME_DISPLAY_MAX);
  }
  nsys_strbuf_free(&b);
  free(p);
}
