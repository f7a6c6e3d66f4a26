/* Workspace definition index; see defs.h. */
#include "source/defs.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/task.h"
#include "common/util.h"
#include "source/pyscan.h"
#include "source/workspace.h"

#define NSYS__DEFS_MAX_FILES 20000
#define NSYS__DEFS_MAX_DEPTH 16
#define NSYS__DEFS_MAX_BYTES (4u << 20)
#define NSYS__DEFS_TTL_NS (5LL * 1000000000LL)

const char *nsys_def_kind_name(nsys_def_kind k) {
  static const char *names[] = {"cuda-global", "triton",       "inductor",         "c-function",
                                "python-def",  "python-class", "python-attribute", "python-module",
                                "numba",       "cupy",         "launch",           "directive"};
  _Static_assert(sizeof names / sizeof *names == NSYS_DEF__COUNT, "one name per kind");
  return (unsigned)k < NSYS_DEF__COUNT ? names[k] : "unknown";
}

typedef struct {
  nsys_defs *d;
  uint32_t cap, bcap;
  uint32_t scanned;
  nsys_task *task;
} nsys__walk;

static bool nsys__id_start(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool nsys__id_char(char c) { return nsys__id_start(c) || (c >= '0' && c <= '9'); }

static void nsys__add_span(nsys__walk *w, const char *name, size_t nl, uint32_t file, int line,
                           int first, int last, nsys_def_kind kind, const char *aux, size_t al) {
  if (nl == 0 || nl > 200) return;
  nsys_defs *d = w->d;
  if (d->n == w->cap) {
    w->cap = w->cap ? w->cap * 2 : 256;
    d->v = nsys_xrealloc(d->v, sizeof *d->v * w->cap);
  }
  if (al > 300) al = 300;
  d->v[d->n++] = (nsys_def){nsys_strtab_intern(&d->strs, name, nl), file, line,
                            first > 0 && first <= line ? first : line,
                            last >= line ? last : line, (uint8_t)kind,
                            nsys_strtab_intern(&d->strs, aux ? aux : "", aux ? al : 0)};
}

static void nsys__add(nsys__walk *w, const char *name, size_t nl, uint32_t file, int line,
                      nsys_def_kind kind) {
  nsys__add_span(w, name, nl, file, line, line, line, kind, NULL, 0);
}

/* Line numbers of positions visited in increasing order (a cursor). */
typedef struct { const char *text, *pos; int line; } nsys__lines;
static int nsys__line_at(nsys__lines *lc, const char *p) {
  if (p < lc->pos) { lc->pos = lc->text; lc->line = 1; }
  for (const char *q = lc->pos; q < p; q++)
    if (*q == '\n') lc->line++;
  lc->pos = p;
  return lc->line;
}

static bool nsys__is_c_keyword(const char *w, size_t n) {
  static const char *kw[] = {"if", "for", "while", "switch", "return", "else", "do", "sizeof",
                             "typedef", "using", "namespace", "struct", "class", "template",
                             "extern", "static_assert", "__launch_bounds__", "__attribute__",
                             "decltype", "alignas", "catch", "defined"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(kw); i++)
    if (strlen(kw[i]) == n && memcmp(kw[i], w, n) == 0) return true;
  return false;
}

/* First line of a definition whose name is at `p`: earlier lines of the same
 * declaration ("template <...>", a return type, __global__ alone) count. */
static const char *nsys__decl_start(const char *text, const char *p) {
  const char *ls = p;
  while (ls > text && ls[-1] != '\n') ls--;
  for (int k = 0; k < 4 && ls > text; k++) {
    const char *pe = ls - 1, *pb = pe; /* previous line [pb, pe) */
    while (pb > text && pb[-1] != '\n') pb--;
    const char *t = pb;
    while (t < pe && (*t == ' ' || *t == '\t')) t++;
    const char *te = pe;
    while (te > t && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\r')) te--;
    if (te == t) break;
    bool tmpl = (size_t)(te - t) >= 8 && memcmp(t, "template", 8) == 0;
    bool open = te[-1] != ';' && te[-1] != '}' && te[-1] != '{' && te[-1] != ')' && *t != '#' &&
                !(te - t >= 2 && t[0] == '/' && (t[1] == '/' || t[1] == '*')) && te[-1] != '/';
    if (!tmpl && !open) break;
    ls = pb;
  }
  return ls;
}

/* The '}' closing the '{' at `open` (strings, chars and comments skipped). */
static const char *nsys__brace_end(const char *open, const char *end) {
  int depth = 0;
  for (const char *q = open; q < end; q++) {
    char c = *q;
    if (c == '/' && q + 1 < end && q[1] == '/') {
      while (q < end && *q != '\n') q++;
    } else if (c == '/' && q + 1 < end && q[1] == '*') {
      const char *e = memmem(q + 2, (size_t)(end - q - 2), "*/", 2);
      if (!e) return NULL;
      q = e + 1;
    } else if (c == '"' || c == '\'') {
      for (q++; q < end && *q != c && *q != '\n'; q++)
        if (*q == '\\') q++;
    } else if (c == '{') {
      depth++;
    } else if (c == '}' && --depth == 0) {
      return q;
    }
  }
  return NULL;
}

/* The identifier ending at e (exclusive) within [lim, e), or NULL. */
static const char *nsys__id_before(const char *lim, const char *e, size_t *len) {
  const char *b = e;
  while (b > lim && nsys__id_char(b[-1])) b--;
  if (b == e || !nsys__id_start(*b)) return NULL;
  *len = (size_t)(e - b);
  return b;
}

/* __global__ kernels; in a .py file (CuPy source strings) they are NSYS_DEF_CUPY. */
static void nsys__scan_globals(nsys__walk *w, uint32_t file, const char *text, size_t n,
                               nsys_def_kind kind) {
  nsys__lines lc = {text, text, 1};
  for (const char *p = text; (p = memmem(p, (size_t)(text + n - p), "__global__", 10)) != NULL; p += 10) {
    const char *q = p + 10, *lim = NSYS_MIN(text + n, p + 600);
    const char *last_id = NULL;
    size_t last_len = 0;
    while (q < lim) {
      if (nsys__id_start(*q)) {
        const char *b = q;
        while (q < lim && nsys__id_char(*q)) q++;
        last_id = b;
        last_len = (size_t)(q - b);
        continue;
      }
      if (*q == '(') {
        if (last_id && !nsys__is_c_keyword(last_id, last_len)) {
          /* a definition, not a declaration: the ')' is followed by '{', not ';' */
          const char *r = q;
          int depth = 0;
          while (r < text + n) {
            if (*r == '(') depth++;
            else if (*r == ')' && --depth == 0) break;
            r++;
          }
          while (r < text + n && *r != '{' && *r != ';') r++;
          if (r < text + n && *r == '{') {
            int line = nsys__line_at(&lc, last_id);
            const char *ds = nsys__decl_start(text, p);
            const char *be = nsys__brace_end(r, text + n);
            int first = line, last = line;
            for (const char *c = ds; c < last_id; c++)
              if (*c == '\n') first--;
            if (be) {
              last = line;
              for (const char *c = last_id; c < be; c++)
                if (*c == '\n') last++;
            }
            nsys__add_span(w, last_id, last_len, file, line, first, last, kind, NULL, 0);
          }
          break;
        }
        int depth = 0; /* skip __launch_bounds__(...) and friends */
        while (q < lim) {
          if (*q == '(') depth++;
          else if (*q == ')' && --depth == 0) break;
          q++;
        }
        last_id = NULL;
      } else if (*q == ';' || *q == '{') {
        break;
      }
      q++;
    }
  }
}

/* Launches in C/C++/CUDA text: NAME<<<...>>> (NAME<T><<<...>>> too),
 * cudaLaunchKernel[Ex]/cudaLaunchCooperativeKernel((void*)NAME, ...),
 * cuModuleGetFunction(&f, mod, "NAME"). */
static void nsys__scan_c_launches(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  nsys__lines lc = {text, text, 1};
  const char *end = text + n;
  for (const char *p = text; (p = memmem(p, (size_t)(end - p), "<<<", 3)) != NULL; p += 3) {
    const char *e = p;
    while (e > text && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if (e > text && e[-1] == '>') { /* template arguments */
      int depth = 0;
      const char *q = e;
      while (q > text && q > p - 300) {
        q--;
        if (*q == '>') depth++;
        else if (*q == '<' && --depth == 0) break;
      }
      e = q;
      while (e > text && (e[-1] == ' ' || e[-1] == '\t')) e--;
    }
    size_t nl = 0;
    const char *name = nsys__id_before(NSYS_MAX(text, e - 200), e, &nl);
    const char *close = memmem(p + 3, (size_t)NSYS_MIN(end - p - 3, 400), ">>>", 3);
    if (!name || !close) continue;
    nsys__add_span(w, name, nl, file, nsys__line_at(&lc, name), 0, 0, NSYS_DEF_LAUNCH, p,
                   (size_t)(close + 3 - p));
  }
  static const char *apis[] = {"cudaLaunchKernel(", "cudaLaunchKernelEx(", "cudaLaunchCooperativeKernel(",
                               "cuModuleGetFunction("};
  for (size_t a = 0; a < NSYS_ARRAY_LEN(apis); a++) {
    size_t al = strlen(apis[a]);
    for (const char *p = text; (p = memmem(p, (size_t)(end - p), apis[a], al)) != NULL; p += al) {
      if (p > text && nsys__id_char(p[-1])) continue;
      const char *q = p + al, *lim = NSYS_MIN(end, q + 300);
      const char *name = NULL;
      size_t nl = 0;
      if (a == 3) { /* the string literal argument */
        const char *s = memchr(q, '"', (size_t)(lim - q));
        const char *paren = memchr(q, ')', (size_t)(lim - q));
        if (!s || (paren && paren < s)) continue;
        const char *b = s + 1, *t = b;
        while (t < lim && nsys__id_char(*t)) t++;
        if (t < lim && *t == '"') name = b, nl = (size_t)(t - b);
      } else if (a == 1) { /* cudaLaunchKernelEx(&config, NAME, args...) */
        const char *c = memchr(q, ',', (size_t)(lim - q));
        if (c) q = c + 1;
      }
      if (!name) { /* skip casts, '&' and spaces to the first identifier not a type */
        while (q < lim) {
          if (*q == '(' || *q == ')' || *q == '&' || *q == '*' || *q == ' ' || *q == '\t' || *q == '\n') {
            q++;
            continue;
          }
          if (!nsys__id_start(*q)) break;
          const char *b = q;
          while (q < lim && (nsys__id_char(*q) || *q == ':')) q++;
          size_t l = (size_t)(q - b);
          bool type = (l == 4 && memcmp(b, "void", 4) == 0) || (l == 5 && memcmp(b, "const", 5) == 0) ||
                      (l == 16 && memcmp(b, "reinterpret_cast", 16) == 0) ||
                      (l == 11 && memcmp(b, "static_cast", 11) == 0);
          if (type) {
            if (*q == '<') { /* cast<...>( */
              const char *g = memchr(q, '>', (size_t)(lim - q));
              q = g ? g + 1 : lim;
            }
            continue;
          }
          const char *colon = NULL; /* ns::kernel -> kernel */
          for (const char *c = b; c < q; c++)
            if (*c == ':') colon = c;
          name = colon ? colon + 1 : b;
          nl = (size_t)(q - name);
          break;
        }
      }
      if (!name || !nl) continue;
      const char *ce = memchr(p, ')', (size_t)(lim - p));
      nsys__add_span(w, name, nl, file, nsys__line_at(&lc, p), 0, 0, NSYS_DEF_LAUNCH, p,
                     (size_t)((ce ? ce + 1 : lim) - p));
    }
  }
}

/* The word at q (up to e), lower-cased into w; returns the position after it. */
static const char *nsys__word(const char *q, const char *e, char *w, size_t cap) {
  while (q < e && (*q == ' ' || *q == '\t')) q++;
  size_t n = 0;
  while (q < e && nsys__id_char(*q)) {
    if (n + 1 < cap) w[n++] = (char)((*q >= 'A' && *q <= 'Z') ? *q + 32 : *q);
    q++;
  }
  w[n] = '\0';
  return q;
}

/* An OpenACC / OpenMP directive that makes GPU kernels (a compute construct):
 * acc parallel|kernels|serial, omp target [teams|parallel|...] (not target
 * data/update/enter/exit, not inner `acc loop`, not CPU `omp parallel`). */
static bool nsys__directive(const char *s, const char *e, bool fortran) {
  const char *q;
  if (fortran) {
    if (e - s < 5 || s[0] != '!' || s[1] != '$') return false;
    q = s + 2;
  } else {
    if (e - s < 8 || *s != '#') return false;
    char w[16];
    q = nsys__word(s + 1, e, w, sizeof w);
    if (strcmp(w, "pragma") != 0) return false;
  }
  char model[16], what[16], next[16];
  q = nsys__word(q, e, model, sizeof model);
  q = nsys__word(q, e, what, sizeof what);
  nsys__word(q, e, next, sizeof next);
  if (strcmp(model, "acc") == 0)
    return strcmp(what, "parallel") == 0 || strcmp(what, "kernels") == 0 || strcmp(what, "serial") == 0;
  if (strcmp(model, "omp") == 0)
    return strcmp(what, "target") == 0 && strcmp(next, "data") != 0 && strcmp(next, "update") != 0 &&
           strcmp(next, "enter") != 0 && strcmp(next, "exit") != 0;
  return false;
}

/* The line of the first loop (for / do / while) within 6 lines after the
 * line ending at `e`, or `line` itself when there is none: the line NVHPC
 * names a compute construct's kernel after. */
static int nsys__loop_after(const char *e, const char *end, int line, bool fortran) {
  const char *p = e;
  for (int k = 1; k <= 6 && p < end; k++) {
    p++; /* past the '\n' */
    const char *le = memchr(p, '\n', (size_t)(end - p));
    if (!le) le = end;
    const char *s = p;
    while (s < le && (*s == ' ' || *s == '\t')) s++;
    size_t len = (size_t)(le - s);
    bool loop = fortran ? (len >= 3 && strncasecmp(s, "do", 2) == 0 && (s[2] == ' ' || s[2] == '\t'))
                        : ((len >= 4 && memcmp(s, "for", 3) == 0 && (s[3] == '(' || s[3] == ' ')) ||
                           (len >= 6 && memcmp(s, "while", 5) == 0 && (s[5] == '(' || s[5] == ' ')));
    if (loop) return line + k;
    p = le;
  }
  return line;
}

static void nsys__scan_c(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  nsys__scan_globals(w, file, text, n, NSYS_DEF_CUDA_GLOBAL);
  nsys__scan_c_launches(w, file, text, n);
  /* host function definitions: "TYPE name(...) {" starting at column 0; directives */
  int line = 1;
  const char *func = NULL, *scanned_to = text;
  size_t func_len = 0;
  for (const char *p = text; p < text + n;) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
    const char *s = p;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    if (func && nsys__directive(s, e, false)) {
      const char *de = e;
      while (de > s && (de[-1] == '\r' || de[-1] == ' ')) de--;
      nsys__add_span(w, func, func_len, file, line, line, nsys__loop_after(e, text + n, line, false),
                     NSYS_DEF_PRAGMA, s, (size_t)(de - s));
    }
    if (nsys__id_start(*p)) {
      const char *par = memchr(p, '(', (size_t)(e - p));
      const char *semi = memchr(p, ';', (size_t)(e - p));
      const char *first = p;
      while (first < e && nsys__id_char(*first)) first++;
      if (par && (!semi || semi > par) && !nsys__is_c_keyword(p, (size_t)(first - p))) {
        const char *ne = par;
        while (ne > p && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
        const char *nb = ne;
        while (nb > p && nsys__id_char(nb[-1])) nb--;
        const char *tail = e;
        while (tail > p && (tail[-1] == ' ' || tail[-1] == '\t' || tail[-1] == '\r')) tail--;
        bool ends_semi = tail > p && tail[-1] == ';';
        const char *bp = memchr(par, '{', (size_t)(e - par));
        if (!bp && e < text + n) {
          const char *nx = e + 1;
          while (nx < text + n && (*nx == ' ' || *nx == '\t' || *nx == '\r' || *nx == '\n')) nx++;
          if (nx < text + n && *nx == '{') bp = nx;
        }
        if (nb < ne && nb > p && !ends_semi && bp && !nsys__is_c_keyword(nb, (size_t)(ne - nb))) {
          /* its body's span; bodies are scanned once each (one inside an
           * already scanned body, or after an unclosed one, keeps its line) */
          int last = line;
          if (bp >= scanned_to) {
            const char *be = nsys__brace_end(bp, text + n);
            scanned_to = be ? be + 1 : text + n;
            for (const char *c = p; be && c < be; c++) last += *c == '\n';
          }
          nsys__add_span(w, nb, (size_t)(ne - nb), file, line, line, last, NSYS_DEF_C_FUNC, NULL, 0);
          func = nb;
          func_len = (size_t)(ne - nb);
        }
      }
    }
    line++;
    p = e + 1;
  }
}

/* Fortran: program/subroutine/function units (C_FUNC, lower case, as NVHPC
 * names them) and !$acc / !$omp directives. */
static void nsys__scan_fortran(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  int line = 1;
  char unit[128] = "";
  for (const char *p = text; p < text + n;) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
    const char *s = p;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    if (unit[0] && nsys__directive(s, e, true)) {
      const char *de = e;
      while (de > s && (de[-1] == '\r' || de[-1] == ' ')) de--;
      nsys__add_span(w, unit, strlen(unit), file, line, line, nsys__loop_after(e, text + n, line, true),
                     NSYS_DEF_PRAGMA, s, (size_t)(de - s));
    }
    /* [prefixes] program|subroutine|function NAME */
    const char *q = s;
    for (int k = 0; k < 4 && q < e; k++) {
      const char *b = q;
      while (q < e && nsys__id_char(*q)) q++;
      size_t l = (size_t)(q - b);
      while (q < e && *q == ' ') q++;
      bool unit_kw = (l == 7 && strncasecmp(b, "program", 7) == 0) ||
                     (l == 10 && strncasecmp(b, "subroutine", 10) == 0) ||
                     (l == 8 && strncasecmp(b, "function", 8) == 0);
      if (unit_kw && q < e && nsys__id_start(*q)) {
        const char *nb = q;
        while (q < e && nsys__id_char(*q)) q++;
        size_t nl = NSYS_MIN((size_t)(q - nb), sizeof unit - 1);
        for (size_t i = 0; i < nl; i++) unit[i] = (char)((nb[i] >= 'A' && nb[i] <= 'Z') ? nb[i] + 32 : nb[i]);
        unit[nl] = '\0';
        nsys__add(w, unit, nl, file, line, NSYS_DEF_C_FUNC);
        break;
      }
      if (l == 3 && strncasecmp(b, "end", 3) == 0) break;
      if (!l) break;
    }
    line++;
    p = e + 1;
  }
}

/* A Python string literal at q (prefix letters allowed): its content in
 * [*b, *e) and the position after it, or NULL. */
static const char *nsys__py_string(const char *q, const char *end, const char **b, const char **e) {
  while (q < end && (*q == 'r' || *q == 'R' || *q == 'b' || *q == 'B' || *q == 'u' || *q == 'U' ||
                     *q == 'f' || *q == 'F'))
    q++;
  if (q >= end || (*q != '\'' && *q != '"')) return NULL;
  char quote = *q;
  bool triple = end - q >= 3 && q[1] == quote && q[2] == quote;
  if (triple) {
    const char delim[3] = {quote, quote, quote};
    const char *c = memmem(q + 3, (size_t)(end - q - 3), delim, 3);
    if (!c) return NULL;
    *b = q + 3;
    *e = c;
    return c + 3;
  }
  for (const char *c = q + 1; c < end && *c != '\n'; c++) {
    if (*c == '\\') { c++; continue; }
    if (*c == quote) { *b = q + 1; *e = c; return c + 1; }
  }
  return NULL;
}

/* CuPy kernels by name: RawKernel(code, 'NAME'), ElementwiseKernel(in, out,
 * op, 'NAME'), ReductionKernel(in, out, map, reduce, post, identity, 'NAME'),
 * or name='NAME' in any of them. */
static void nsys__scan_cupy(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  static const struct { const char *call; int pos; } kinds[] = {
      {"RawKernel(", 1}, {"ElementwiseKernel(", 3}, {"ReductionKernel(", 6}};
  nsys__lines lc = {text, text, 1};
  const char *end = text + n;
  for (size_t k = 0; k < NSYS_ARRAY_LEN(kinds); k++) {
    size_t cl = strlen(kinds[k].call);
    for (const char *p = text; (p = memmem(p, (size_t)(end - p), kinds[k].call, cl)) != NULL; p += cl) {
      if (p > text && nsys__id_char(p[-1])) continue;
      int depth = 1, arg = 0;
      const char *q = p + cl, *lim = NSYS_MIN(end, q + 200000);
      const char *nb = NULL, *ne = NULL, *arg_start = q;
      while (q < lim && depth > 0) {
        const char *sb, *se;
        const char *after = (depth == 1) ? nsys__py_string(q, lim, &sb, &se) : NULL;
        if (after && (q == arg_start || !nsys__id_char(q[-1]))) {
          /* a whole-argument string literal at the argument's start, or name= */
          const char *a = arg_start;
          while (a < q && (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r')) a++;
          bool kw_name = (size_t)(q - a) >= 5 && memcmp(a, "name", 4) == 0;
          if ((a == q && arg == kinds[k].pos) || kw_name) nb = sb, ne = se;
          q = after;
          continue;
        }
        if (*q == '#') { while (q < lim && *q != '\n') q++; continue; }
        if (*q == '(' || *q == '[' || *q == '{') depth++;
        else if (*q == ')' || *q == ']' || *q == '}') depth--;
        else if (*q == ',' && depth == 1) { arg++; arg_start = q + 1; }
        q++;
      }
      if (!nb || ne - nb > 200) continue;
      bool ident = ne > nb && nsys__id_start(*nb);
      for (const char *c = nb; c < ne && ident; c++) ident = nsys__id_char(*c);
      if (ident)
        nsys__add_span(w, nb, (size_t)(ne - nb), file, nsys__line_at(&lc, p), 0, 0, NSYS_DEF_CUPY,
                       kinds[k].call, cl - 1);
    }
  }
}

/* Python launch lines: NAME[grid](...) / NAME[grid, block](...) (Numba, Triton),
 * torch.ops.NS.NAME(...). */
static void nsys__scan_py_launches(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  nsys__lines lc = {text, text, 1};
  const char *end = text + n;
  for (const char *p = text; (p = memchr(p, '[', (size_t)(end - p))) != NULL; p++) {
    size_t nl;
    const char *name = nsys__id_before(NSYS_MAX(text, p - 200), p, &nl);
    if (!name || (name > text && (name[-1] == '.' || nsys__id_char(name[-1])))) continue;
    int depth = 0;
    const char *q = p;
    for (; q < end && q < p + 400; q++) {
      if (*q == '[') depth++;
      else if (*q == ']' && --depth == 0) break;
      else if (*q == '\n' && depth == 0) break;
    }
    if (q >= end || *q != ']' || q + 1 >= end || q[1] != '(') continue;
    nsys__add_span(w, name, nl, file, nsys__line_at(&lc, name), 0, 0, NSYS_DEF_LAUNCH, p,
                   (size_t)(q + 1 - p));
  }
  for (const char *p = text; (p = memmem(p, (size_t)(end - p), "((", 2)) != NULL; p += 2) {
    /* CuPy: NAME((grid,), (block,), (args...)) */
    size_t nl;
    const char *name = nsys__id_before(NSYS_MAX(text, p - 200), p, &nl);
    if (!name || (name > text && (name[-1] == '.' || nsys__id_char(name[-1])))) continue;
    const char *le = memchr(p, '\n', (size_t)(end - p));
    const char *ce = memmem(p, (size_t)((le ? le : end) - p), "), (", 4);
    if (!ce) continue;
    nsys__add_span(w, name, nl, file, nsys__line_at(&lc, name), 0, 0, NSYS_DEF_LAUNCH, p,
                   (size_t)((le ? le : end) - p));
  }
  for (const char *p = text; (p = memmem(p, (size_t)(end - p), "torch.ops.", 10)) != NULL; p += 10) {
    const char *q = p + 10, *last = NULL;
    while (q < end && (nsys__id_char(*q) || *q == '.')) {
      if (*q == '.') last = q + 1;
      q++;
    }
    if (!last || q >= end || last >= q) continue;
    const char *ne = q;
    if (ne - last == 7 && memcmp(last, "default", 7) == 0) { /* torch.ops.ns.op.default */
      const char *b = last - 1;
      while (b > p + 10 && b[-1] != '.') b--;
      if (b <= p + 10) continue;
      ne = last - 1;
      last = b;
    }
    if (*q != '(') continue;
    nsys__add_span(w, last, (size_t)(ne - last), file, nsys__line_at(&lc, p), 0, 0, NSYS_DEF_LAUNCH, p,
                   (size_t)(q - p));
  }
}

static void nsys__scan_py(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  nsys_py_file pf;
  nsys_py_scan(&pf, text, n);
  int line = 1;
  bool triton_deco = false, numba_deco = false;
  int deco_line = 0;
  for (const char *p = text; p < text + n;) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
    const char *s = p;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    size_t len = (size_t)(e - s);
    if (len > 0 && *s == '@') {
      if (!deco_line) deco_line = line;
      if (memmem(s, len, "triton.jit", 10) || (len >= 4 && memcmp(s, "@jit", 4) == 0 &&
                                               (len == 4 || !nsys__id_char(s[4]))))
        triton_deco = true;
      if (memmem(s, len, "cuda.jit", 8)) numba_deco = true;
    } else if (len > 4 && (memcmp(s, "def ", 4) == 0 || (len > 10 && memcmp(s, "async def ", 10) == 0))) {
      const char *q = s + (s[0] == 'a' ? 10 : 4);
      while (q < e && *q == ' ') q++;
      const char *b = q;
      while (q < e && nsys__id_char(*q)) q++;
      int st = nsys_py_stmt_at_line(&pf, line - 1), last = line;
      if (st >= 0 && pf.stmts[st].kind == NSYS_PY_DEF)
        last = pf.stmts[pf.stmts[st].block_end].last_line + 1;
      int first = deco_line ? deco_line : line;
      nsys__add_span(w, b, (size_t)(q - b), file, line, first, last, NSYS_DEF_PY_DEF, NULL, 0);
      if (triton_deco) nsys__add_span(w, b, (size_t)(q - b), file, line, first, last, NSYS_DEF_TRITON, NULL, 0);
      if (numba_deco) nsys__add_span(w, b, (size_t)(q - b), file, line, first, last, NSYS_DEF_NUMBA, NULL, 0);
      triton_deco = numba_deco = false;
      deco_line = 0;
    } else if (len > 6 && memcmp(s, "class ", 6) == 0) {
      const char *q = s + 6;
      const char *b = q;
      while (q < e && nsys__id_char(*q)) q++;
      nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_PY_CLASS);
      triton_deco = numba_deco = false;
      deco_line = 0;
    } else if (len > 0 && *s != '#' && nsys_py_stmt_at_line(&pf, line - 1) >= 0) {
      /* another statement ends the decorators (continuation lines of a
       * multi-line decorator start no statement) */
      triton_deco = numba_deco = false;
      deco_line = 0;
    }
    /* self.NAME = ...   (not ==) */
    for (const char *a = s; a && a < e; a++) {
      a = memmem(a, (size_t)(e - a), "self.", 5);
      if (!a) break;
      if (a > p && nsys__id_char(a[-1])) continue;
      const char *b = a + 5, *q = b;
      while (q < e && nsys__id_char(*q)) q++;
      const char *t = q;
      while (t < e && *t == ' ') t++;
      if (q > b && t < e && *t == '=' && (t + 1 >= e || t[1] != '=')) {
        nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_PY_ATTR);
        /* self.x = nn.Linear(...): remember the module class */
        const char *c = t + 1;
        while (c < e && *c == ' ') c++;
        const char *last = NULL, *cq = c;
        while (cq < e && (nsys__id_char(*cq) || *cq == '.')) {
          if (cq == c || cq[-1] == '.') last = cq;
          cq++;
        }
        if (last && cq < e && *cq == '(' && *last >= 'A' && *last <= 'Z')
          nsys__add(w, last, (size_t)(cq - last), file, line, NSYS_DEF_PY_MODULE);
      }
    }
    /* inductor: async_compile.triton('NAME', ...) */
    const char *ac = memmem(s, len, "async_compile.triton(", 21);
    if (ac) {
      const char *q = ac + 21;
      while (q < e && *q == ' ') q++;
      if (q < e && (*q == '\'' || *q == '"')) {
        const char *b = ++q;
        while (q < e && nsys__id_char(*q)) q++;
        nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_INDUCTOR);
      }
    }
    line++;
    p = e + 1;
  }
  nsys_py_free(&pf);
  nsys__scan_globals(w, file, text, n, NSYS_DEF_CUPY);
  nsys__scan_cupy(w, file, text, n);
  nsys__scan_py_launches(w, file, text, n);
}

/* Build files: lines naming a C/C++/CUDA/Fortran source. */
static void nsys__scan_build(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  int line = 1;
  for (const char *p = text; p < text + n; line++) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
    size_t len = (size_t)(e - p);
    if (len < 1000 && (memmem(p, len, ".cu", 3) || memmem(p, len, ".c", 2) || memmem(p, len, ".f", 2) ||
                       memmem(p, len, ".F", 2))) {
      nsys_defs *d = w->d;
      if (d->n_builds == w->bcap) {
        w->bcap = w->bcap ? w->bcap * 2 : 64;
        d->builds = nsys_xrealloc(d->builds, sizeof *d->builds * w->bcap);
      }
      d->builds[d->n_builds++] = (nsys_build_line){file, line, nsys_strtab_intern(&d->strs, p, len)};
    }
    p = e + 1;
  }
}

static bool nsys__skip_dir(const char *name) {
  static const char *skip[] = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv",
                               "venv", ".tox", ".mypy_cache", ".pytest_cache", "dist",
                               "site-packages", ".cache", ".idea", ".vscode"};
  if (strncmp(name, "build", 5) == 0) return true;
  for (size_t i = 0; i < NSYS_ARRAY_LEN(skip); i++)
    if (strcmp(name, skip[i]) == 0) return true;
  return false;
}

enum { NSYS__LANG_NONE, NSYS__LANG_C, NSYS__LANG_PY, NSYS__LANG_FORTRAN, NSYS__LANG_BUILD };

static int nsys__file_lang(const char *name) {
  if (strcmp(name, "Makefile") == 0 || strcmp(name, "makefile") == 0 || strcmp(name, "GNUmakefile") == 0 ||
      strcmp(name, "CMakeLists.txt") == 0)
    return NSYS__LANG_BUILD;
  const char *dot = strrchr(name, '.');
  if (!dot) return 0;
  static const char *b_ext[] = {".mk", ".cmake", ".sh", ".make"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(b_ext); i++)
    if (strcmp(dot, b_ext[i]) == 0) return NSYS__LANG_BUILD;
  static const char *f_ext[] = {".f", ".f90", ".F90", ".F", ".f95", ".f03", ".F03", ".for"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(f_ext); i++)
    if (strcmp(dot, f_ext[i]) == 0) return NSYS__LANG_FORTRAN;
  static const char *c_ext[] = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(c_ext); i++)
    if (strcmp(dot, c_ext[i]) == 0) return 1;
  if (strcmp(dot, ".py") == 0) return 2;
  return 0;
}

static void nsys__walk_dir(nsys__walk *w, const char *abs, const char *rel, int depth) {
  if (depth > NSYS__DEFS_MAX_DEPTH) return;
  DIR *dir = opendir(abs);
  if (!dir) return;
  struct dirent *de;
  char **names = NULL;
  size_t nn = 0, cap = 0;
  while ((de = readdir(dir)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (nn == cap) {
      cap = cap ? cap * 2 : 32;
      names = nsys_xrealloc(names, sizeof *names * cap);
    }
    names[nn++] = nsys_xstrdup(de->d_name);
  }
  closedir(dir);
  /* deterministic order */
  for (size_t i = 1; i < nn; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (size_t i = 0; i < nn; i++) {
    const char *nm = names[i];
    if (w->scanned >= NSYS__DEFS_MAX_FILES || nsys_task_cancelled(w->task)) break;
    char *pa = nsys_xasprintf("%s/%s", abs, nm);
    char *pr = rel[0] ? nsys_xasprintf("%s/%s", rel, nm) : nsys_xstrdup(nm);
    struct stat st;
    if (lstat(pa, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        if (!nsys__skip_dir(nm)) nsys__walk_dir(w, pa, pr, depth + 1);
      } else if (S_ISREG(st.st_mode) && (size_t)st.st_size <= NSYS__DEFS_MAX_BYTES) {
        int lang = nsys__file_lang(nm);
        if (lang) {
          char err[256];
          size_t len = 0;
          char *text = nsys_ws_read_file(pa, NSYS__DEFS_MAX_BYTES, &len, err, sizeof err);
          if (text) {
            uint32_t fid = nsys_strtab_intern(&w->d->strs, pr, strlen(pr));
            if (lang == NSYS__LANG_C) nsys__scan_c(w, fid, text, len);
            else if (lang == NSYS__LANG_PY) nsys__scan_py(w, fid, text, len);
            else if (lang == NSYS__LANG_FORTRAN) nsys__scan_fortran(w, fid, text, len);
            else nsys__scan_build(w, fid, text, len);
            w->scanned++;
            free(text);
          }
        }
      }
    }
    free(pa);
    free(pr);
  }
  for (size_t i = 0; i < nn; i++) free(names[i]);
  free(names);
}

static const nsys_defs *nsys__sort_ctx;
static int nsys__def_cmp(const void *x, const void *y) {
  const nsys_def *a = x, *b = y;
  int c = strcmp(nsys_strtab_get(&nsys__sort_ctx->strs, a->name),
                 nsys_strtab_get(&nsys__sort_ctx->strs, b->name));
  if (c) return c;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  c = strcmp(nsys_strtab_get(&nsys__sort_ctx->strs, a->file),
             nsys_strtab_get(&nsys__sort_ctx->strs, b->file));
  if (c) return c;
  return (a->line > b->line) - (a->line < b->line);
}

static pthread_mutex_t nsys__sort_lock = PTHREAD_MUTEX_INITIALIZER;

nsys_defs *nsys_defs_build(const char *root, nsys_task *task) {
  nsys_defs *d = nsys_xcalloc(1, sizeof *d);
  d->root = nsys_xstrdup(root);
  nsys_strtab_init(&d->strs);
  nsys_strtab_intern(&d->strs, "", 0);
  nsys__walk w = {.d = d, .task = task};
  nsys__walk_dir(&w, root, "", 0);
  if (nsys_task_cancelled(task)) {
    nsys_task_fail_cancelled(task);
    nsys_defs_free(d);
    return NULL;
  }
  d->n_files = w.scanned;
  pthread_mutex_lock(&nsys__sort_lock);
  nsys__sort_ctx = d;
  if (d->n) qsort(d->v, d->n, sizeof *d->v, nsys__def_cmp);
  pthread_mutex_unlock(&nsys__sort_lock);
  d->built_ns = nsys_now_ns();
  return d;
}

void nsys_defs_free(nsys_defs *d) {
  if (!d) return;
  free(d->root);
  nsys_strtab_free(&d->strs);
  free(d->v);
  free(d->builds);
  free(d);
}

uint32_t nsys_defs_find(const nsys_defs *d, const char *name, uint32_t *count) {
  *count = 0;
  uint32_t lo = 0, hi = d->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (strcmp(nsys_strtab_get(&d->strs, d->v[mid].name), name) < 0) lo = mid + 1;
    else hi = mid;
  }
  uint32_t e = lo;
  while (e < d->n && strcmp(nsys_strtab_get(&d->strs, d->v[e].name), name) == 0) e++;
  *count = e - lo;
  return lo;
}

/* ---- cache ---- */

#define NSYS__DEFS_CACHE 4
static pthread_mutex_t nsys__cache_lock = PTHREAD_MUTEX_INITIALIZER;
static nsys_defs *nsys__cache[NSYS__DEFS_CACHE];

nsys_defs *nsys_defs_get(const char *root, nsys_task *task) {
  pthread_mutex_lock(&nsys__cache_lock);
  int64_t now = nsys_now_ns();
  for (int i = 0; i < NSYS__DEFS_CACHE; i++) {
    nsys_defs *d = nsys__cache[i];
    if (d && strcmp(d->root, root) == 0) {
      if (now - d->built_ns <= NSYS__DEFS_TTL_NS) {
        d->refs++;
        pthread_mutex_unlock(&nsys__cache_lock);
        return d;
      }
      nsys__cache[i] = NULL;
      if (--d->refs == 0) nsys_defs_free(d);
    }
  }
  pthread_mutex_unlock(&nsys__cache_lock);
  nsys_defs *d = nsys_defs_build(root, task);
  if (!d) return NULL;
  pthread_mutex_lock(&nsys__cache_lock);
  int slot = 0;
  for (int i = 0; i < NSYS__DEFS_CACHE; i++) {
    if (!nsys__cache[i]) { slot = i; break; }
    if (nsys__cache[i]->built_ns < nsys__cache[slot]->built_ns) slot = i;
  }
  if (nsys__cache[slot] && --nsys__cache[slot]->refs == 0) nsys_defs_free(nsys__cache[slot]);
  nsys__cache[slot] = d;
  d->refs = 2; /* the cache and the caller */
  pthread_mutex_unlock(&nsys__cache_lock);
  return d;
}

void nsys_defs_release(nsys_defs *d) {
  if (!d) return;
  pthread_mutex_lock(&nsys__cache_lock);
  bool free_it = --d->refs == 0;
  pthread_mutex_unlock(&nsys__cache_lock);
  if (free_it) nsys_defs_free(d);
}

/* ---- names ---- */

void nsys_symbol_base_name(const char *sym, char *out, size_t cap) {
  out[0] = '\0';
  if (!sym || cap == 0) return;
  const char *p = sym;
  const char *best = NULL;
  size_t best_len = 0;
  int tdepth = 0;
  const char *last_id = NULL;
  size_t last_len = 0;
  const char *id_before_template = NULL;
  size_t id_before_len = 0;
  for (; *p; p++) {
    char c = *p;
    if (tdepth == 0 && nsys__id_start(c)) {
      const char *b = p;
      while (nsys__id_char(p[1])) p++;
      last_id = b;
      last_len = (size_t)(p - b + 1);
      continue;
    }
    if (c == '<') {
      if (tdepth == 0) {
        id_before_template = last_id;
        id_before_len = last_len;
      }
      tdepth++;
      continue;
    }
    if (c == '>') {
      if (tdepth > 0) tdepth--;
      if (tdepth == 0) {
        last_id = id_before_template;
        last_len = id_before_len;
      }
      continue;
    }
    if (tdepth > 0) continue;
    if (c == '(') {
      if (strncmp(p + 1, "anonymous namespace)", 20) == 0) {
        p += 20;
        last_id = NULL;
        continue;
      }
      if (last_id) {
        best = last_id;
        best_len = last_len;
        break;
      }
      /* "(anonymous namespace)": skip to the ')' */
      const char *q = strchr(p, ')');
      if (!q) break;
      p = q;
      last_id = NULL;
      continue;
    }
    if (c == ' ' || c == ':' || c == '*' || c == '&') continue;
    last_id = NULL;
  }
  if (!best) {
    best = last_id;
    best_len = last_len;
  }
  if (!best) return;
  if (best_len >= cap) best_len = cap - 1;
  memcpy(out, best, best_len);
  out[best_len] = '\0';
}

int nsys_triton_strip_suffix(const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  /* "_0d1d2de", "_0d1d23", "_0123": the tail after the last '_' made of digits, 'd', 'e', 'c' */
  const char *us = strrchr(name, '_');
  if (!us || us == name || us[1] < '0' || us[1] > '9') return 0;
  bool has_d = false;
  for (const char *q = us + 1; *q; q++) {
    if (*q == 'd') has_d = true;
    else if (!((*q >= '0' && *q <= '9') || *q == 'e' || *q == 'c')) return 0;
  }
  if (!has_d) return 0;
  size_t k = (size_t)(us - name);
  if (k >= cap) return 0;
  memcpy(out, name, k);
  out[k] = '\0';
  (void)n;
  return 1;
}

void nsys_kernel_def_name(const char *sym, char *out, size_t cap, char *module, size_t mcap) {
  out[0] = '\0';
  if (module && mcap) module[0] = '\0';
  if (!sym || cap == 0) return;
  /* drop Numba's "[abi:...]" and "$241" decorations */
  size_t n = strlen(sym);
  char *buf = nsys_xmalloc(n + 1);
  size_t k = 0;
  bool numba = false;
  for (size_t i = 0; i < n;) {
    if (strncmp(sym + i, "[abi:", 5) == 0) {
      int depth = 0;
      while (i < n) {
        if (sym[i] == '[') depth++;
        else if (sym[i] == ']' && --depth == 0) { i++; break; }
        i++;
      }
      numba = true;
      continue;
    }
    if (sym[i] == '$' && i + 1 < n && sym[i + 1] >= '0' && sym[i + 1] <= '9') {
      i++;
      while (i < n && sym[i] >= '0' && sym[i] <= '9') i++;
      numba = true;
      continue;
    }
    buf[k++] = sym[i++];
  }
  buf[k] = '\0';
  nsys_symbol_base_name(buf, out, cap);
  if (numba && module && mcap && out[0]) {
    /* "[void ][cudapy::]a.b::NAME(" -> "a.b" */
    size_t ol = strlen(out);
    const char *paren = strchr(buf, '(');
    const char *hit = NULL;
    for (const char *q = buf; (q = strstr(q, out)) != NULL && (!paren || q < paren); q++)
      if (q >= buf + 2 && q[-1] == ':' && q[-2] == ':' && !nsys__id_char(q[ol])) hit = q - 2;
    if (hit) {
      const char *b = hit;
      while (b > buf && b[-1] != ' ' && !(b - buf >= 2 && b[-1] == ':' && b[-2] == ':')) b--;
      if (hit - b == 6 && strncmp(b, "cudapy", 6) == 0) b = hit; /* no module */
      size_t ml = NSYS_MIN((size_t)(hit - b), mcap - 1);
      memcpy(module, b, ml);
      module[ml] = '\0';
    }
  }
  free(buf);
}

static bool nsys__all_digits(const char *b, const char *e) {
  if (b >= e) return false;
  for (const char *q = b; q < e; q++)
    if (*q < '0' || *q > '9') return false;
  return true;
}

static bool nsys__digits(const char *b, const char *e, int *v) {
  if (b >= e || e - b > 9) return false;
  int x = 0;
  for (const char *q = b; q < e; q++) {
    if (*q < '0' || *q > '9') return false;
    x = x * 10 + (*q - '0');
  }
  *v = x;
  return x > 0;
}

bool nsys_nvhpc_kernel(const char *name, char *func, size_t cap, int *line) {
  if (!name || cap == 0) return false;
  size_t n = strlen(name);
  const char *fb, *fe;
  if (strncmp(name, "nvkernel_", 9) == 0) {
    /* nvkernel_FUNC_F<n>L<line>_<n> */
    const char *e = name + n, *u = e;
    while (u > name && u[-1] != '_') u--;
    if (u <= name + 9 || !nsys__all_digits(u, e)) return false;
    const char *f = u - 1; /* the '_' before the counter */
    const char *b = f;
    while (b > name && b[-1] != '_') b--;
    if (b[0] != 'F') return false;
    const char *l = memchr(b, 'L', (size_t)(f - b));
    int fileno;
    if (!l || !nsys__digits(b + 1, l, &fileno) || !nsys__digits(l + 1, f, line)) return false;
    fb = name + 9;
    fe = b - 1;
  } else {
    /* FUNC_<line>_gpu[__red][_<n>] */
    const char *g = NULL;
    for (const char *q = name; (q = strstr(q, "_gpu")) != NULL; q++) g = q;
    if (!g) return false;
    const char *rest = g + 4;
    if (strncmp(rest, "__red", 5) == 0) rest += 5;
    if (*rest && !(*rest == '_' && nsys__all_digits(rest + 1, name + n))) return false;
    const char *b = g;
    while (b > name && b[-1] >= '0' && b[-1] <= '9') b--;
    if (b == g || b <= name + 1 || b[-1] != '_' || !nsys__digits(b, g, line)) return false;
    fb = name;
    fe = b - 1;
  }
  if (fe - fb > 3 && fb[0] == '_' && fb[1] == 'Z') {
    /* a mangled C++ function: _Z5solve... or _ZN2ns5solveE... -> solve */
    const char *q = fb + 2, *last = NULL;
    size_t last_len = 0;
    bool nested = q < fe && *q == 'N';
    if (nested) q++;
    while (q < fe && *q >= '0' && *q <= '9') {
      size_t l = 0;
      while (q < fe && *q >= '0' && *q <= '9') l = l * 10 + (size_t)(*q++ - '0');
      if (l == 0 || l > (size_t)(fe - q)) break;
      last = q;
      last_len = l;
      q += l;
      if (!nested) break;
    }
    if (!last) return false;
    fb = last;
    fe = last + last_len;
  }
  if (fe <= fb || (size_t)(fe - fb) >= cap) return false;
  for (const char *q = fb; q < fe; q++)
    if (!nsys__id_char(*q)) return false;
  memcpy(func, fb, (size_t)(fe - fb));
  func[fe - fb] = '\0';
  return true;
}

bool nsys_lambda_parent(const char *sym, char *out, size_t cap) {
  if (!sym || cap == 0) return false;
  out[0] = '\0';
  /* nvcc extended lambdas: __nv_dl_tag<void (*)(...), &FUNC, 1u> */
  const char *tag = strstr(sym, "__nv_dl_tag<");
  if (!tag) tag = strstr(sym, "__nv_hdl_helper<");
  if (tag) {
    const char *amp = strstr(tag, ", &");
    if (amp) amp += 2; /* the '&' */
    if (amp) {
      const char *b = amp + 1, *e = b;
      while (nsys__id_char(*e) || *e == ':') e++;
      const char *last = b;
      for (const char *q = b; q < e; q++)
        if (*q == ':') last = q + 1;
      if (e > last && nsys__id_start(*last) && (size_t)(e - last) < cap) {
        memcpy(out, last, (size_t)(e - last));
        out[e - last] = '\0';
        return true;
      }
    }
  }
  const char *lam = strstr(sym, "::{lambda");
  if (!lam) lam = strstr(sym, "::<lambda");
  if (!lam) return false;
  const char *e = lam;
  if (e > sym && e[-1] == ')') { /* the enclosing function's parameters */
    int depth = 0;
    while (e > sym) {
      e--;
      if (*e == ')') depth++;
      else if (*e == '(' && --depth == 0) break;
    }
  }
  if (e > sym && e[-1] == '>') { /* its template arguments */
    int depth = 0;
    while (e > sym) {
      e--;
      if (*e == '>') depth++;
      else if (*e == '<' && --depth == 0) break;
    }
  }
  size_t nl;
  const char *b = nsys__id_before(sym, e, &nl);
  if (!b || nl >= cap) return false;
  memcpy(out, b, nl);
  out[nl] = '\0';
  return true;
}
