/* Workspace definition index; see defs.h. */
#include "source/defs.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "source/workspace.h"

#define NSYS__DEFS_MAX_FILES 20000
#define NSYS__DEFS_MAX_DEPTH 16
#define NSYS__DEFS_MAX_BYTES (4u << 20)
#define NSYS__DEFS_TTL_NS (5LL * 1000000000LL)

const char *nsys_def_kind_name(nsys_def_kind k) {
  static const char *names[] = {"cuda-global", "triton", "inductor", "c-function",
                                "python-def",  "python-class", "python-attribute", "python-module"};
  return (unsigned)k < NSYS_DEF__COUNT ? names[k] : "unknown";
}

typedef struct {
  nsys_defs *d;
  uint32_t cap;
  uint32_t scanned;
} nsys__walk;

static bool nsys__id_start(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool nsys__id_char(char c) { return nsys__id_start(c) || (c >= '0' && c <= '9'); }

static void nsys__add(nsys__walk *w, const char *name, size_t nl, uint32_t file, int line,
                      nsys_def_kind kind) {
  if (nl == 0 || nl > 200) return;
  nsys_defs *d = w->d;
  if (d->n == w->cap) {
    w->cap = w->cap ? w->cap * 2 : 256;
    d->v = nsys_xrealloc(d->v, sizeof *d->v * w->cap);
  }
  d->v[d->n++] = (nsys_def){nsys_strtab_intern(&d->strs, name, nl), file, line, (uint8_t)kind};
}

static int nsys__line_of(const char *text, const char *p, int *cache_line, const char **cache_pos) {
  int line = *cache_line;
  for (const char *q = *cache_pos; q < p; q++)
    if (*q == '\n') line++;
  *cache_line = line;
  *cache_pos = p;
  return line;
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

static void nsys__scan_c(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  /* __global__ kernels */
  int cl = 1;
  const char *cp = text;
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
          if (r < text + n && *r == '{')
            nsys__add(w, last_id, last_len, file, nsys__line_of(text, last_id, &cl, &cp),
                      NSYS_DEF_CUDA_GLOBAL);
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
  /* host function definitions: "TYPE name(...) {" starting at column 0 */
  int line = 1;
  for (const char *p = text; p < text + n;) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
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
        bool brace = memchr(par, '{', (size_t)(e - par)) != NULL;
        if (!brace && e < text + n) {
          const char *nx = e + 1;
          while (nx < text + n && (*nx == ' ' || *nx == '\t' || *nx == '\r' || *nx == '\n')) nx++;
          brace = nx < text + n && *nx == '{';
        }
        if (nb < ne && nb > p && !ends_semi && brace && !nsys__is_c_keyword(nb, (size_t)(ne - nb)))
          nsys__add(w, nb, (size_t)(ne - nb), file, line, NSYS_DEF_C_FUNC);
      }
    }
    line++;
    p = e + 1;
  }
}

static void nsys__scan_py(nsys__walk *w, uint32_t file, const char *text, size_t n) {
  int line = 1;
  bool triton_deco = false;
  for (const char *p = text; p < text + n;) {
    const char *e = memchr(p, '\n', (size_t)(text + n - p));
    if (!e) e = text + n;
    const char *s = p;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    size_t len = (size_t)(e - s);
    if (len > 0 && *s == '@') {
      if (memmem(s, len, "triton.jit", 10) || (len >= 4 && memcmp(s, "@jit", 4) == 0))
        triton_deco = true;
    } else if (len > 4 && (memcmp(s, "def ", 4) == 0 || (len > 10 && memcmp(s, "async def ", 10) == 0))) {
      const char *q = s + (s[0] == 'a' ? 10 : 4);
      while (q < e && *q == ' ') q++;
      const char *b = q;
      while (q < e && nsys__id_char(*q)) q++;
      nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_PY_DEF);
      if (triton_deco) nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_TRITON);
      triton_deco = false;
    } else if (len > 6 && memcmp(s, "class ", 6) == 0) {
      const char *q = s + 6;
      const char *b = q;
      while (q < e && nsys__id_char(*q)) q++;
      nsys__add(w, b, (size_t)(q - b), file, line, NSYS_DEF_PY_CLASS);
      triton_deco = false;
    } else if (len > 0 && *s != '#') {
      triton_deco = false;
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

static int nsys__file_lang(const char *name) {
  const char *dot = strrchr(name, '.');
  if (!dot) return 0;
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
    if (w->scanned >= NSYS__DEFS_MAX_FILES) break;
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
            if (lang == 1) nsys__scan_c(w, fid, text, len);
            else nsys__scan_py(w, fid, text, len);
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

nsys_defs *nsys_defs_build(const char *root) {
  nsys_defs *d = nsys_xcalloc(1, sizeof *d);
  d->root = nsys_xstrdup(root);
  nsys_strtab_init(&d->strs);
  nsys__walk w = {.d = d};
  nsys__walk_dir(&w, root, "", 0);
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

nsys_defs *nsys_defs_get(const char *root) {
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
  nsys_defs *d = nsys_defs_build(root);
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
