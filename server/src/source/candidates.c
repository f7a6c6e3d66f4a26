/* Candidate definitions and launch lines of a kernel; see candidates.h. */
#include "source/candidates.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static bool nsys__idc(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static const char *nsys__base(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* "dir/add_gpu_4.cu" -> "add_gpu_4"; "./async.out" -> "async" */
static void nsys__stem(const char *path, char *out, size_t cap) {
  const char *b = nsys__base(path);
  const char *dot = strrchr(b, '.');
  size_t n = dot && dot > b ? (size_t)(dot - b) : strlen(b);
  if (n >= cap) n = cap - 1;
  memcpy(out, b, n);
  out[n] = '\0';
}

/* `word` occurs in `text` delimited by non-identifier characters (and not
 * followed by '.', so "main" does not match "main.cu"). */
static bool nsys__has_word(const char *text, const char *word, bool allow_ext) {
  size_t wl = strlen(word);
  if (!wl) return false;
  for (const char *q = text; (q = strstr(q, word)) != NULL; q++) {
    bool lb = q == text || !(nsys__idc(q[-1]) || q[-1] == '.');
    char c = q[wl];
    bool rb = !nsys__idc(c) && (allow_ext || c != '.');
    if (lb && rb) return true;
  }
  return false;
}

uint32_t *nsys_exe_build_lines(const nsys_defs *d, const char *exe, uint32_t *n) {
  *n = 0;
  if (!exe || !*exe) return NULL;
  const char *base = nsys__base(exe);
  uint32_t *v = NULL;
  for (uint32_t b = 0; b < d->n_builds; b++) {
    if (!nsys__has_word(nsys_strtab_get(&d->strs, d->builds[b].text), base, false)) continue;
    v = nsys_xrealloc(v, sizeof *v * (*n + 1));
    v[(*n)++] = b;
  }
  return v;
}

/* Index k of the build lines to check for `f` (all of them without a list). */
static uint32_t nsys__n_builds(const nsys_defs *d, const nsys_kernel_facts *f) {
  return f->exe_builds ? f->n_exe_builds : d->n_builds;
}
static const nsys_build_line *nsys__build(const nsys_defs *d, const nsys_kernel_facts *f, uint32_t k) {
  return &d->builds[f->exe_builds ? f->exe_builds[k] : k];
}

/* ---- launch configurations ---- */

typedef struct {
  int n_args;
  int64_t grid, block; /* literal integers, -1 when not literal */
} nsys__launch_cfg;

static int64_t nsys__literal(const char *b, const char *e) {
  while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) b++;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
  if (b >= e || e - b > 12) return -1;
  int64_t v = 0;
  for (const char *q = b; q < e; q++) {
    if (*q < '0' || *q > '9') return -1;
    v = v * 10 + (*q - '0');
  }
  return v;
}

/* The arguments of a "<<<...>>>" launch (any other launch text has none). */
static nsys__launch_cfg nsys__parse_launch(const char *aux) {
  nsys__launch_cfg c = {0, -1, -1};
  size_t n = strlen(aux);
  if (n < 6 || strncmp(aux, "<<<", 3) != 0 || strcmp(aux + n - 3, ">>>") != 0) return c;
  const char *b = aux + 3, *e = aux + n - 3;
  int depth = 0;
  for (const char *q = b;; q++) {
    if (q < e && (*q == '(' || *q == '[' || *q == '{' || *q == '<')) depth++;
    else if (q < e && (*q == ')' || *q == ']' || *q == '}' || *q == '>') && depth > 0) depth--;
    else if (q == e || (*q == ',' && depth == 0)) {
      if (c.n_args == 0) c.grid = nsys__literal(b, q);
      else if (c.n_args == 1) c.block = nsys__literal(b, q);
      c.n_args++;
      b = q + 1;
      if (q == e) break;
    }
  }
  return c;
}

/* Why the profile rules this launch out ("" when it does not); *exact when
 * its literal grid and block match one of the profile's configurations,
 * *some when the one of them that is literal does (the other an expression). */
static bool nsys__launch_contradicted(const nsys_kernel_facts *f, const char *aux, char *why, size_t cap,
                                      bool *exact, bool *some, bool *streamed) {
  nsys__launch_cfg c = nsys__parse_launch(aux);
  *exact = *some = *streamed = false;
  why[0] = '\0';
  if (c.n_args == 0) return false;
  *streamed = c.n_args >= 4;
  if (f->n_streams > 1 && c.n_args < 4) {
    snprintf(why, cap, "its launch %.70s uses one stream, the profile ran the kernel on %u streams",
             aux, f->n_streams);
    return true;
  }
  if (f->n_configs == 0 || (c.grid < 0 && c.block < 0)) return false;
  bool grid_ok = c.grid < 0, block_ok = c.block < 0;
  for (uint32_t k = 0; k < f->n_configs; k++) {
    const int32_t *g = f->configs[k];
    bool gm = c.grid >= 0 && g[0] == c.grid && g[1] == 1 && g[2] == 1;
    bool bm = c.block >= 0 && g[3] == c.block && g[4] == 1 && g[5] == 1;
    if (gm) grid_ok = true;
    if (bm) block_ok = true;
    if ((gm || c.grid < 0) && (bm || c.block < 0) && c.grid >= 0 && c.block >= 0) *exact = true;
    if ((gm && c.block < 0) || (bm && c.grid < 0)) *some = true;
  }
  if (!grid_ok || !block_ok) {
    const int32_t *g = f->configs[0];
    snprintf(why, cap, "its launch %.70s does not match the profile's grid (%d,%d,%d) block (%d,%d,%d)",
             aux, g[0], g[1], g[2], g[3], g[4], g[5]);
    return true;
  }
  return false;
}

/* ---- candidates ---- */

static bool nsys__kernel_kind(uint8_t k) {
  return k == NSYS_DEF_CUDA_GLOBAL || k == NSYS_DEF_TRITON || k == NSYS_DEF_INDUCTOR ||
         k == NSYS_DEF_NUMBA || k == NSYS_DEF_CUPY;
}

/* A kind whose definition line is the kernel's own code (not a call that names it). */
static bool nsys__code_kind(const nsys_defs *d, const nsys_def *v) {
  if (v->kind == NSYS_DEF_CUPY) return nsys_strtab_get(&d->strs, v->aux)[0] == '\0';
  return v->kind == NSYS_DEF_CUDA_GLOBAL || v->kind == NSYS_DEF_TRITON || v->kind == NSYS_DEF_NUMBA;
}

__attribute__((format(printf, 3, 4))) static void nsys__append(char *buf, size_t cap, const char *fmt,
                                                               ...) {
  size_t n = strlen(buf);
  if (n + 4 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

/* `word` is one of the tokens of `name` split at '_', '-', '.' and digits'
 * boundaries are kept ("vecadd_ex1" has "vecadd" and "ex1"). */
static bool nsys__has_token(const char *name, const char *word) {
  size_t wl = strlen(word);
  if (!wl) return false;
  for (const char *q = name; (q = strstr(q, word)) != NULL; q++) {
    bool lb = q == name || q[-1] == '_' || q[-1] == '-' || q[-1] == '.';
    char e = q[wl];
    if (lb && (e == '\0' || e == '_' || e == '-' || e == '.')) return true;
  }
  return false;
}

int nsys_exe_names_file(const char *exe, const char *file) {
  if (!exe || !*exe || !file) return 0;
  char estem[256], stem[256];
  nsys__stem(exe, estem, sizeof estem);
  nsys__stem(file, stem, sizeof stem);
  if (stem[0] && strcmp(stem, estem) == 0) return 3;
  if (strlen(stem) >= 2 && nsys__has_token(estem, stem)) return 2;
  return 0;
}

/* What the process name `exe` says about the candidate in `file`: appends
 * the evidence, returns its weight (0 when it says nothing). */
static int nsys__exe_evidence(const nsys_defs *d, const nsys_kernel_facts *f, const char *exe, const char *who,
                              const char *file, char *ev, size_t cap) {
  if (!exe || !*exe) return 0;
  char stem[256];
  nsys__stem(file, stem, sizeof stem);
  const char *ebase = nsys__base(exe), *fbase = nsys__base(file);
  int score = nsys_exe_names_file(exe, file);
  if (score == 3) nsys__append(ev, cap, "; the %s %s is named after this file", who, ebase);
  else if (score == 2) nsys__append(ev, cap, "; the %s %s is named after this file (%s)", who, ebase, stem);
  for (uint32_t k = 0; k < nsys__n_builds(d, f); k++) {
    const nsys_build_line *bl = nsys__build(d, f, k);
    const char *t = nsys_strtab_get(&d->strs, bl->text);
    if (nsys__has_word(t, ebase, false) && nsys__has_word(t, fbase, true)) {
      score += 3;
      nsys__append(ev, cap, "; %.80s:%d builds %.60s from this file", nsys_strtab_get(&d->strs, bl->file),
                   bl->line, ebase);
      break;
    }
  }
  return score;
}

static uint32_t nsys__by_name(const nsys_defs *d, const char *name, nsys_src_cand *out, uint32_t n,
                              float conf) {
  uint32_t cnt, d0 = nsys_defs_find(d, name, &cnt);
  for (uint32_t k = d0; k < d0 + cnt && n < NSYS_CAND_MAX; k++) {
    const nsys_def *v = &d->v[k];
    if (!nsys__kernel_kind(v->kind)) continue;
    /* a file holding the kernel's code does not also offer the call naming it */
    if (!nsys__code_kind(d, v)) {
      bool coded = false;
      for (uint32_t j = d0; j < d0 + cnt; j++)
        if (d->v[j].file == v->file && nsys__code_kind(d, &d->v[j])) coded = true;
      if (coded) continue;
    }
    nsys_src_cand *c = &out[n++];
    memset(c, 0, sizeof *c);
    c->file = v->file;
    c->line = v->line;
    c->first_line = v->first_line;
    c->last_line = v->last_line;
    c->kind = v->kind;
    c->confidence = conf;
    snprintf(c->evidence, sizeof c->evidence, "kernel name %.100s matches the %s definition", name,
             nsys_def_kind_name((nsys_def_kind)v->kind));
  }
  return n;
}

static int nsys__cand_rank(const void *x, const void *y) {
  const nsys_src_cand *a = x, *b = y;
  if (a->confidence != b->confidence) return a->confidence > b->confidence ? -1 : 1;
  if (a->file != b->file) return a->file < b->file ? -1 : 1;
  return (a->line > b->line) - (a->line < b->line);
}

uint32_t nsys_kernel_candidates(const nsys_defs *d, const nsys_kernel_facts *f, nsys_src_cand *out,
                                const char **family) {
  char base[256], module[256], alt[256];
  if (family) *family = "name";
  nsys_kernel_def_name(f->name, base, sizeof base, module, sizeof module);
  if (!base[0]) return 0;
  uint32_t n = nsys__by_name(d, base, out, 0, 0.9f);
  if (n == 0 && nsys_triton_strip_suffix(base, alt, sizeof alt)) n = nsys__by_name(d, alt, out, 0, 0.8f);
  int nv_line = 0;
  char func[256];
  if (n == 0 && nsys_nvhpc_kernel(base, func, sizeof func, &nv_line)) {
    /* NVHPC: the compute construct at line nv_line of function func */
    if (family) *family = "nvhpc";
    uint32_t cnt, d0 = nsys_defs_find(d, func, &cnt);
    /* a file whose directive has its loop at that line (exact: NVHPC names
     * a compute construct after its loop's line) rules out files where the
     * line is merely below, or on, a directive */
    bool exact_any = false;
    for (uint32_t k = d0; k < d0 + cnt; k++) {
      const nsys_def *v = &d->v[k];
      exact_any |= v->kind == NSYS_DEF_PRAGMA && v->last_line == nv_line && v->line < nv_line;
    }
    for (uint32_t k = d0; k < d0 + cnt && n < NSYS_CAND_MAX; k++) {
      const nsys_def *v = &d->v[k];
      if (v->kind != NSYS_DEF_PRAGMA || v->line > nv_line || v->line < nv_line - 40) continue;
      bool exact = v->last_line == nv_line && v->line < nv_line;
      if (exact_any && !exact) continue;
      uint32_t j = 0;
      while (j < n && out[j].file != v->file) j++;
      if (j == n) {
        memset(&out[n++], 0, sizeof *out);
      } else if (out[j].first_line >= v->line) {
        continue; /* the directive listed for this file is at least as near */
      }
      nsys_src_cand *c = &out[j];
      c->file = v->file;
      c->line = nv_line;
      c->first_line = v->line;
      c->last_line = nv_line;
      c->kind = NSYS_DEF_PRAGMA;
      c->confidence = exact ? 0.9f : 0.5f;
      snprintf(c->evidence, sizeof c->evidence,
               "NVHPC kernel name %.80s: function %.60s, line %d, %s the directive \"%.100s\" at line %d",
               base, func, nv_line, exact ? "the loop of" : "below", nsys_strtab_get(&d->strs, v->aux), v->line);
    }
    for (uint32_t k = d0; k < d0 + cnt && n == 0; k++) { /* the function, without a directive */
      const nsys_def *v = &d->v[k];
      if (v->kind != NSYS_DEF_C_FUNC || v->line > nv_line) continue;
      for (uint32_t j = d0; j < d0 + cnt && n < NSYS_CAND_MAX; j++) {
        const nsys_def *w = &d->v[j];
        if (w->kind != NSYS_DEF_C_FUNC || w->line > nv_line) continue;
        bool dup = false;
        for (uint32_t i = 0; i < n; i++) dup |= out[i].file == w->file;
        if (dup) continue;
        nsys_src_cand *c = &out[n++];
        memset(c, 0, sizeof *c);
        c->file = w->file;
        c->line = c->first_line = c->last_line = nv_line;
        c->kind = NSYS_DEF_C_FUNC;
        c->confidence = 0.6f;
        snprintf(c->evidence, sizeof c->evidence,
                 "NVHPC kernel name %.80s: function %.60s (defined at line %d), line %d; no OpenACC/OpenMP "
                 "directive found before that line",
                 base, func, w->line, nv_line);
      }
    }
  }
  if (n == 0 && nsys_lambda_parent(f->name, func, sizeof func)) {
    /* stdpar / Thrust / CUB: a lambda's enclosing host function */
    if (family) *family = "lambda";
    uint32_t cnt, d0 = nsys_defs_find(d, func, &cnt);
    for (uint32_t k = d0; k < d0 + cnt && n < NSYS_CAND_MAX; k++) {
      const nsys_def *v = &d->v[k];
      if (v->kind != NSYS_DEF_C_FUNC) continue;
      nsys_src_cand *c = &out[n++];
      memset(c, 0, sizeof *c);
      c->file = v->file;
      c->line = c->first_line = c->last_line = v->line;
      c->kind = NSYS_DEF_C_FUNC;
      c->confidence = 0.6f;
      snprintf(c->evidence, sizeof c->evidence,
               "the kernel runs a lambda defined in function %.60s (from the demangled name)", func);
    }
  }
  if (n == 0) return 0;
  if (module[0] && family && strcmp(*family, "name") == 0) *family = "numba";
  if (n == 1) return 1;

  /* Several: weigh what the profile says about each. */
  uint32_t sib[NSYS_CAND_MAX] = {0}, sib_max = 0, sib_min = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    nsys_src_cand *c = &out[i];
    const char *file = nsys_strtab_get(&d->strs, c->file);
    char why[300];
    /* the Numba module names the file */
    if (module[0] && strcmp(module, "__main__") != 0) {
      char mpath[300];
      snprintf(mpath, sizeof mpath, "%s.py", module);
      for (char *q = mpath; *q && q < mpath + strlen(module); q++)
        if (*q == '.') *q = '/';
      size_t fl = strlen(file), ml = strlen(mpath);
      if (fl >= ml && strcmp(file + fl - ml, mpath) == 0 && (fl == ml || file[fl - ml - 1] == '/')) {
        c->score += 3;
        nsys__append(c->evidence, sizeof c->evidence, "; the Numba module %s is this file", module);
      } else {
        c->contradicted = true;
        nsys__append(c->evidence, sizeof c->evidence, "; not the Numba module %s", module);
      }
    }
    /* the executable (as PROCESSES names it, and as its main thread does) */
    int exe_score = nsys__exe_evidence(d, f, f->exe, "process", file, c->evidence, sizeof c->evidence);
    if (!exe_score && f->exe_alt && (!f->exe || strcmp(f->exe_alt, f->exe) != 0))
      exe_score = nsys__exe_evidence(d, f, f->exe_alt, "process's main thread", file, c->evidence,
                                     sizeof c->evidence);
    c->score += exe_score;
    /* its launches in its own file */
    uint32_t cnt, d0 = nsys_defs_find(d, base, &cnt);
    int sites = 0, contra = 0;
    bool exact = false, some = false, streamed = false;
    char first_why[300] = "";
    for (uint32_t k = d0; k < d0 + cnt; k++) {
      const nsys_def *v = &d->v[k];
      if (v->kind != NSYS_DEF_LAUNCH || v->file != c->file) continue;
      bool ex, so, st;
      sites++;
      if (nsys__launch_contradicted(f, nsys_strtab_get(&d->strs, v->aux), why, sizeof why, &ex, &so, &st)) {
        contra++;
        if (!first_why[0]) snprintf(first_why, sizeof first_why, "%s", why);
      } else {
        exact |= ex;
        some |= so;
        streamed |= st;
      }
    }
    if (sites && contra == sites) {
      c->contradicted = true;
      nsys__append(c->evidence, sizeof c->evidence, "; ruled out: %s", first_why);
    } else if (exact) {
      c->score += 2;
      nsys__append(c->evidence, sizeof c->evidence, "%s", "; its launch's literal grid and block match the profile");
    } else if (some) {
      c->score += 1;
      nsys__append(c->evidence, sizeof c->evidence, "%s",
                   "; its launch's literal grid or block matches the profile (the other is an expression)");
    } else if (streamed && f->n_streams > 1) {
      c->score += 1;
      nsys__append(c->evidence, sizeof c->evidence, "%s", "; it launches on explicit streams, as the profile shows");
    }
    /* the frame that launched it */
    if (f->callchain_file && strcmp(f->callchain_file, file) == 0) {
      if (f->callchain_launch > 0) {
        c->score += 4;
        nsys__append(c->evidence, sizeof c->evidence,
                     "; confirmed by the launching call's backtrace, which passes through its launch line %d",
                     f->callchain_launch);
      } else {
        c->score += 2;
        nsys__append(c->evidence, sizeof c->evidence, "%s", "; the launching call's backtrace is in this file");
      }
    }
    sib[i] = f->siblings ? f->siblings(f->siblings_ctx, c->file) : 0;
    if (sib[i] > sib_max) sib_max = sib[i];
    if (sib[i] < sib_min) sib_min = sib[i];
  }
  for (uint32_t i = 0; i < n; i++)
    if (sib_max > sib_min && sib[i] == sib_max) {
      out[i].score += 1;
      char w[120];
      snprintf(w, sizeof w, "; defines %u other kernels of the same process", sib[i]);
      nsys__append(out[i].evidence, sizeof out[i].evidence, "%s", w);
    }
  /* rank */
  uint32_t alive = 0;
  for (uint32_t i = 0; i < n; i++) alive += !out[i].contradicted;
  if (alive == 0)
    for (uint32_t i = 0; i < n; i++) out[i].contradicted = false, alive++;
  int best = -1;
  for (uint32_t i = 0; i < n; i++)
    if (!out[i].contradicted && out[i].score > best) best = out[i].score;
  uint32_t winners = 0;
  for (uint32_t i = 0; i < n; i++) winners += !out[i].contradicted && out[i].score == best;
  bool decided = winners == 1 && (best > 0 || alive < n);
  char head[120];
  for (uint32_t i = 0; i < n; i++) {
    nsys_src_cand *c = &out[i];
    float base_conf = c->confidence;
    char tmp[480];
    if (c->contradicted) {
      c->confidence = 0.05f;
      snprintf(head, sizeof head, "one of %u candidates, unlikely", n);
    } else if (c->score == best && decided) {
      c->confidence = base_conf * 0.85f;
      snprintf(head, sizeof head, "the most likely of %u candidates", n);
    } else if (c->score == best) {
      c->confidence = base_conf / (float)winners;
      snprintf(head, sizeof head, "ambiguous: one of %u equally likely candidates", winners);
    } else {
      c->confidence = 0.15f;
      snprintf(head, sizeof head, "one of %u candidates, less likely", n);
    }
    snprintf(tmp, sizeof tmp, "%s (%s)", c->evidence, head);
    memcpy(c->evidence, tmp, sizeof tmp);
  }
  qsort(out, n, sizeof *out, nsys__cand_rank);
  return n;
}

bool nsys_launch_refuted(const nsys_defs *d, const nsys_kernel_facts *f, const char *file, int line, char *why,
                         size_t cap) {
  char base[256], module[256];
  why[0] = '\0';
  nsys_kernel_def_name(f->name, base, sizeof base, module, sizeof module);
  uint32_t fid = file ? nsys_strtab_find(&d->strs, file, strlen(file)) : NSYS_STR_NONE;
  if (!base[0] || fid == NSYS_STR_NONE) return false;
  uint32_t cnt, d0 = nsys_defs_find(d, base, &cnt), seen = 0, contra = 0;
  for (uint32_t k = d0; k < d0 + cnt; k++) {
    const nsys_def *v = &d->v[k];
    if (v->kind != NSYS_DEF_LAUNCH || v->file != fid || v->line != line) continue;
    bool ex, so, st;
    seen++;
    contra += nsys__launch_contradicted(f, nsys_strtab_get(&d->strs, v->aux), why, cap, &ex, &so, &st);
  }
  return seen && contra == seen;
}

uint32_t nsys_kernel_launches(const nsys_defs *d, const nsys_kernel_facts *f, const nsys_src_cand *def,
                              uint32_t n_cands, nsys_src_cand *out, uint32_t cap) {
  char base[256], module[256];
  nsys_kernel_def_name(f->name, base, sizeof base, module, sizeof module);
  if (!base[0] || def->kind == NSYS_DEF_PRAGMA || def->kind == NSYS_DEF_C_FUNC) return 0;
  const char *def_file = nsys_strtab_get(&d->strs, def->file);
  const char *exe_base = f->exe ? nsys__base(f->exe) : NULL;
  uint32_t cnt, d0 = nsys_defs_find(d, base, &cnt);
  uint32_t n = 0;
  /* pass 0: the definition's file; 1: files the build lines of the executable name; 2: anywhere */
  for (int pass = 0; pass < 3 && n == 0; pass++) {
    if (pass == 2 && n_cands > 1) break;
    for (uint32_t k = d0; k < d0 + cnt && n < cap; k++) {
      const nsys_def *v = &d->v[k];
      if (v->kind != NSYS_DEF_LAUNCH) continue;
      const char *file = nsys_strtab_get(&d->strs, v->file);
      if (pass == 0 && v->file != def->file) continue;
      if (pass == 1) {
        bool built = false;
        for (uint32_t j = 0; j < nsys__n_builds(d, f) && exe_base && !built; j++) {
          const char *t = nsys_strtab_get(&d->strs, nsys__build(d, f, j)->text);
          built = nsys__has_word(t, exe_base, false) && nsys__has_word(t, nsys__base(file), true);
        }
        if (!built) continue;
      }
      const char *aux = nsys_strtab_get(&d->strs, v->aux);
      char why[300];
      bool ex, so, st;
      if (nsys__launch_contradicted(f, aux, why, sizeof why, &ex, &so, &st)) continue;
      nsys_src_cand *c = &out[n++];
      memset(c, 0, sizeof *c);
      c->file = v->file;
      c->line = c->first_line = c->last_line = v->line;
      c->kind = NSYS_DEF_LAUNCH;
      c->confidence = def->confidence;
      bool cfg = strncmp(aux, "<<<", 3) == 0;
      snprintf(c->evidence, sizeof c->evidence, "launches %.80s%s%.100s (the kernel defined at %.120s:%d%s)",
               base, cfg ? "" : " via ", aux, def_file, def->line,
               pass == 1 ? ", a file the executable's build line names" : "");
    }
  }
  if (n > 1)
    for (uint32_t i = 0; i < n; i++) out[i].confidence /= (float)n;
  return n;
}
