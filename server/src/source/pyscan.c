/* Python line-structure scanner; see pyscan.h. */
#include "source/pyscan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

enum { NSYS__CTX_CODE, NSYS__CTX_STR, NSYS__CTX_FSPEC };

typedef struct {
  uint8_t type;
  char quote;
  bool triple, fstr, fexpr; /* fexpr: CODE inside an f-string replacement field */
  int depth;                /* bracket depth (CODE) */
} nsys__ctx;

#define NSYS__MAX_CTX 64

enum { NSYS__TOK_NONE, NSYS__TOK_NAME, NSYS__TOK_CLOSE, NSYS__TOK_COLON, NSYS__TOK_DOT,
       NSYS__TOK_STRING, NSYS__TOK_OTHER };

typedef struct {
  nsys_py_file *f;
  nsys__ctx ctx[NSYS__MAX_CTX];
  int nctx;
  bool backslash;       /* the previous physical line ended with a continuation */
  int cur;              /* open statement index or -1 */
  int last_tok;         /* last significant token at any depth */
  bool colon_seen;      /* a depth-0 ':' in the current statement */
  bool after_colon_tok; /* significant token after the first depth-0 colon */
  bool last_is_colon;   /* last significant depth-0 token is ':' */
  bool only_strings;
  char dotted[96];      /* dotted name being read */
  int cap_stmts;
} nsys__scan;

static bool nsys__is_ident_start(unsigned char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}
static bool nsys__is_ident(unsigned char c) { return nsys__is_ident_start(c) || (c >= '0' && c <= '9'); }

static nsys_py_kind nsys__kw_kind(const char *w, size_t n) {
  static const struct { const char *w; nsys_py_kind k; } kws[] = {
      {"def", NSYS_PY_DEF},       {"class", NSYS_PY_CLASS},     {"if", NSYS_PY_IF},
      {"elif", NSYS_PY_ELIF},     {"else", NSYS_PY_ELSE},       {"for", NSYS_PY_FOR},
      {"while", NSYS_PY_WHILE},   {"with", NSYS_PY_WITH},       {"try", NSYS_PY_TRY},
      {"except", NSYS_PY_EXCEPT}, {"finally", NSYS_PY_FINALLY}, {"match", NSYS_PY_MATCH},
      {"case", NSYS_PY_CASE},     {"import", NSYS_PY_IMPORT},   {"from", NSYS_PY_FROM},
      {"return", NSYS_PY_RETURN}, {"pass", NSYS_PY_PASS},       {"break", NSYS_PY_BREAK},
      {"continue", NSYS_PY_CONTINUE}, {"global", NSYS_PY_GLOBAL}, {"nonlocal", NSYS_PY_NONLOCAL},
      {"raise", NSYS_PY_RAISE},
  };
  for (size_t i = 0; i < NSYS_ARRAY_LEN(kws); i++)
    if (strlen(kws[i].w) == n && memcmp(kws[i].w, w, n) == 0) return kws[i].k;
  return NSYS_PY_SIMPLE;
}

static bool nsys__compound(nsys_py_kind k) {
  switch (k) {
  case NSYS_PY_DEF: case NSYS_PY_CLASS: case NSYS_PY_IF: case NSYS_PY_ELIF: case NSYS_PY_ELSE:
  case NSYS_PY_FOR: case NSYS_PY_WHILE: case NSYS_PY_WITH: case NSYS_PY_TRY: case NSYS_PY_EXCEPT:
  case NSYS_PY_FINALLY: case NSYS_PY_MATCH: case NSYS_PY_CASE:
    return true;
  default:
    return false;
  }
}

bool nsys_py_is_clause(nsys_py_kind k) {
  return k == NSYS_PY_ELIF || k == NSYS_PY_ELSE || k == NSYS_PY_EXCEPT || k == NSYS_PY_FINALLY ||
         k == NSYS_PY_CASE;
}

static void nsys__split_lines(nsys_py_file *f) {
  int cap = 64;
  f->lines = nsys_xmalloc(sizeof *f->lines * (size_t)cap);
  size_t i = 0;
  while (i < f->n) {
    size_t s = i;
    while (i < f->n && f->src[i] != '\n' && f->src[i] != '\r') i++;
    size_t len = i - s, term = 0;
    if (i < f->n) {
      term = (f->src[i] == '\r' && i + 1 < f->n && f->src[i + 1] == '\n') ? 2 : 1;
      i += term;
    }
    if (f->n_lines == cap) {
      cap *= 2;
      f->lines = nsys_xrealloc(f->lines, sizeof *f->lines * (size_t)cap);
    }
    f->lines[f->n_lines++] = (nsys_py_line){.off = s, .len = len, .term = term};
  }
}

static nsys_py_stmt *nsys__cur(nsys__scan *sc) { return &sc->f->stmts[sc->cur]; }

static void nsys__sig(nsys__scan *sc, int tok, bool depth0) {
  if (sc->cur < 0) return;
  if (tok != NSYS__TOK_STRING) sc->only_strings = false;
  if (depth0) {
    if (sc->colon_seen) sc->after_colon_tok = true;
    sc->last_is_colon = false;
  }
  sc->last_tok = tok;
}

static void nsys__start_stmt(nsys__scan *sc, int line, size_t ws) {
  nsys_py_file *f = sc->f;
  if (f->n_stmts == sc->cap_stmts) {
    sc->cap_stmts = sc->cap_stmts ? sc->cap_stmts * 2 : 32;
    f->stmts = nsys_xrealloc(f->stmts, sizeof *f->stmts * (size_t)sc->cap_stmts);
  }
  nsys_py_stmt *s = &f->stmts[f->n_stmts];
  memset(s, 0, sizeof *s);
  s->first_line = s->last_line = line;
  s->indent_len = ws;
  const char *p = f->src + f->lines[line].off;
  int cols = 0;
  for (size_t i = (line == 0 ? f->bom : 0); i < ws; i++) {
    if (p[i] == '\t') {
      cols = (cols / 8 + 1) * 8;
      f->uses_tabs = true;
    } else if (p[i] == '\f') {
      cols = 0;
    } else {
      cols++;
    }
  }
  s->indent_cols = cols;
  s->parent = -1;
  s->block_end = f->n_stmts;
  sc->cur = f->n_stmts++;
  sc->last_tok = NSYS__TOK_NONE;
  sc->colon_seen = sc->after_colon_tok = sc->last_is_colon = false;
  sc->only_strings = true;
  sc->dotted[0] = '\0';
  /* kind from the first word(s) */
  size_t i = ws, n = f->lines[line].len;
  if (i < n && p[i] == '@') {
    s->kind = NSYS_PY_DECORATOR;
    return;
  }
  for (int word = 0; word < 2; word++) {
    size_t b = i;
    while (i < n && nsys__is_ident((unsigned char)p[i])) i++;
    if (i == b) return;
    if (word == 0 && i - b == 5 && memcmp(p + b, "async", 5) == 0) {
      while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
      continue;
    }
    if (i < n && (p[i] == '\'' || p[i] == '"')) return; /* a string prefix such as f"..." */
    s->kind = nsys__kw_kind(p + b, i - b);
    if (s->kind == NSYS_PY_DEF || s->kind == NSYS_PY_CLASS) {
      while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
      size_t nb = i;
      while (i < n && nsys__is_ident((unsigned char)p[i])) i++;
      size_t nl = NSYS_MIN(i - nb, sizeof s->name - 1);
      memcpy(s->name, p + nb, nl);
      s->name[nl] = '\0';
    }
    return;
  }
}

static void nsys__end_stmt(nsys__scan *sc, int line) {
  if (sc->cur < 0) return;
  nsys_py_stmt *s = nsys__cur(sc);
  s->last_line = line;
  bool comp = nsys__compound(s->kind);
  if ((s->kind == NSYS_PY_MATCH || s->kind == NSYS_PY_CASE) && !sc->colon_seen) {
    s->kind = NSYS_PY_SIMPLE;
    comp = false;
  }
  if (comp && sc->colon_seen) {
    if (sc->last_is_colon && !sc->after_colon_tok) s->opens_block = true;
    else s->inline_body = true;
  }
  if (s->kind == NSYS_PY_SIMPLE && sc->only_strings && sc->last_tok == NSYS__TOK_STRING)
    s->kind = NSYS_PY_STRING;
  sc->cur = -1;
}

/* Reads an identifier/number at p[i]; returns the index after it. */
static size_t nsys__word(const char *p, size_t i, size_t n) {
  while (i < n && (nsys__is_ident((unsigned char)p[i]) || p[i] == '.')) {
    if (p[i] == '.' && !(i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9')) break;
    i++;
  }
  return i;
}

static void nsys__push(nsys__scan *sc, nsys__ctx c) {
  if (sc->nctx < NSYS__MAX_CTX) sc->ctx[sc->nctx++] = c;
}

/* Scans one physical line's bytes [0, n) with the context stack. */
static void nsys__scan_line(nsys__scan *sc, int line) {
  nsys_py_file *f = sc->f;
  const char *p = f->src + f->lines[line].off;
  size_t n = f->lines[line].len;
  size_t i = 0;
  if (line == 0 && f->bom) i = f->bom;
  bool top_fresh = sc->nctx == 1 && sc->ctx[0].depth == 0 && !sc->backslash;
  f->lines[line].in_string = sc->nctx > 1;
  sc->backslash = false;
  {
    size_t k = i;
    while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\f')) k++;
    f->lines[line].blank = (k == n) && sc->nctx == 1;
    if (top_fresh) {
      if (k == n || p[k] == '#') {
        if (k < n && sc->cur >= 0) { /* cannot happen: statements end at fresh lines */ }
        return; /* blank or comment-only line between statements */
      }
      if (sc->cur >= 0) nsys__end_stmt(sc, line - 1);
      nsys__start_stmt(sc, line, k);
      i = k;
    }
  }
  while (i < n) {
    nsys__ctx *c = &sc->ctx[sc->nctx - 1];
    unsigned char ch = (unsigned char)p[i];
    if (c->type == NSYS__CTX_STR) {
      if (ch == '\\') {
        if (i + 1 >= n) { /* escaped newline: the string continues */
          sc->backslash = true;
          i++;
          continue;
        }
        i += 2;
        continue;
      }
      if (c->fstr && ch == '{') {
        if (i + 1 < n && p[i + 1] == '{') { i += 2; continue; }
        nsys__push(sc, (nsys__ctx){.type = NSYS__CTX_CODE, .fexpr = true});
        i++;
        continue;
      }
      if (ch == (unsigned char)c->quote) {
        if (!c->triple) { sc->nctx--; i++; continue; }
        if (i + 2 < n && p[i + 1] == c->quote && p[i + 2] == c->quote) {
          sc->nctx--;
          i += 3;
          continue;
        }
      }
      i++;
      continue;
    }
    if (c->type == NSYS__CTX_FSPEC) {
      if (ch == '{') {
        nsys__push(sc, (nsys__ctx){.type = NSYS__CTX_CODE, .fexpr = true});
      } else if (ch == '}') {
        sc->nctx--;
      }
      i++;
      continue;
    }
    /* CODE */
    bool depth0 = sc->nctx == 1 && c->depth == 0;
    if (ch == ' ' || ch == '\t' || ch == '\f') { i++; continue; }
    if (ch == '#') {
      if (sc->nctx == 1 && sc->cur >= 0) {
        size_t e = n;
        while (e > i && (p[e - 1] == ' ' || p[e - 1] == '\t')) e--;
        nsys__cur(sc)->marker = (e - i == 9 && memcmp(p + i, "# nsys-ai", 9) == 0);
      }
      break;
    }
    if (ch == '\\' && i + 1 == n) {
      sc->backslash = true;
      i++;
      continue;
    }
    if (nsys__is_ident_start(ch) || (ch >= '0' && ch <= '9')) {
      size_t b = i;
      i = nsys__word(p, i, n);
      if (i < n && (p[i] == '\'' || p[i] == '"') && i - b <= 3) { /* string prefix */
        bool fs = false, ok = true;
        for (size_t k = b; k < i; k++) {
          char l = p[k] | 0x20;
          if (l == 'f' || l == 't') fs = true;
          else if (l != 'r' && l != 'b' && l != 'u') ok = false;
        }
        if (ok) {
          char q = p[i];
          bool tri = i + 2 < n && p[i + 1] == q && p[i + 2] == q;
          nsys__sig(sc, NSYS__TOK_STRING, depth0);
          nsys__push(sc, (nsys__ctx){.type = NSYS__CTX_STR, .quote = q, .triple = tri, .fstr = fs});
          i += tri ? 3 : 1;
          continue;
        }
      }
      if (ch >= '0' && ch <= '9') {
        nsys__sig(sc, NSYS__TOK_OTHER, depth0);
        continue;
      }
      if (sc->cur >= 0 && sc->nctx == 1) {
        nsys_py_stmt *s = nsys__cur(sc);
        size_t wl = i - b;
        if (!s->first_ident[0]) {
          size_t l = NSYS_MIN(wl, sizeof s->first_ident - 1);
          memcpy(s->first_ident, p + b, l);
          s->first_ident[l] = '\0';
        }
        size_t cur = sc->last_tok == NSYS__TOK_DOT ? strlen(sc->dotted) : 0;
        if (cur > 0 && cur + 1 < sizeof sc->dotted) sc->dotted[cur++] = '.';
        if (cur + wl + 1 < sizeof sc->dotted) {
          memcpy(sc->dotted + cur, p + b, wl);
          sc->dotted[cur + wl] = '\0';
        } else {
          sc->dotted[0] = '\0';
        }
      }
      nsys__sig(sc, NSYS__TOK_NAME, depth0);
      continue;
    }
    if (ch == '\'' || ch == '"') {
      bool tri = i + 2 < n && p[i + 1] == (char)ch && p[i + 2] == (char)ch;
      nsys__sig(sc, NSYS__TOK_STRING, depth0);
      nsys__push(sc, (nsys__ctx){.type = NSYS__CTX_STR, .quote = (char)ch, .triple = tri});
      i += tri ? 3 : 1;
      continue;
    }
    int prev = sc->last_tok;
    switch (ch) {
    case '(': case '[': case '{':
      if (sc->cur >= 0 && sc->nctx == 1) {
        nsys_py_stmt *s = nsys__cur(sc);
        bool callable = prev == NSYS__TOK_NAME || prev == NSYS__TOK_CLOSE;
        if (ch == '(' && callable) {
          s->has_call = true;
          if (!sc->colon_seen) s->header_call = true;
          if (!s->name[0] && prev == NSYS__TOK_NAME && s->kind != NSYS_PY_DEF &&
              s->kind != NSYS_PY_CLASS)
            snprintf(s->name, sizeof s->name, "%s", sc->dotted);
        } else if (ch == '[' && callable) {
          s->has_op = true;
        }
      }
      nsys__sig(sc, NSYS__TOK_OTHER, depth0);
      c->depth++;
      i++;
      continue;
    case ')': case ']': case '}':
      if (c->depth == 0 && c->fexpr) {
        sc->nctx--; /* end of an f-string replacement field */
        i++;
        continue;
      }
      if (c->depth > 0) c->depth--;
      nsys__sig(sc, NSYS__TOK_CLOSE, depth0);
      i++;
      continue;
    case ':':
      if (c->fexpr && c->depth == 0) {
        c->type = NSYS__CTX_FSPEC;
        i++;
        continue;
      }
      if (i + 1 < n && p[i + 1] == '=') {
        nsys__sig(sc, NSYS__TOK_OTHER, depth0);
        i += 2;
        continue;
      }
      if (depth0 && sc->cur >= 0) {
        if (sc->colon_seen) sc->after_colon_tok = true;
        sc->colon_seen = true;
        sc->last_is_colon = true;
        sc->last_tok = NSYS__TOK_COLON;
        i++;
        continue;
      }
      nsys__sig(sc, NSYS__TOK_OTHER, depth0);
      i++;
      continue;
    case '.':
      nsys__sig(sc, NSYS__TOK_DOT, depth0);
      i++;
      continue;
    case '@': case '+': case '-': case '*': case '/': case '%': case '&': case '|': case '^':
    case '~':
      if (sc->cur >= 0 && sc->nctx == 1 && !(ch == '@' && nsys__cur(sc)->kind == NSYS_PY_DECORATOR))
        if (!(ch == '-' && i + 1 < n && p[i + 1] == '>')) nsys__cur(sc)->has_op = true;
      nsys__sig(sc, NSYS__TOK_OTHER, depth0);
      i++;
      continue;
    default:
      nsys__sig(sc, NSYS__TOK_OTHER, depth0);
      i++;
      continue;
    }
  }
  /* End of the physical line: an unterminated single-quoted string ends here
   * (error recovery), unless escaped. */
  if (!sc->backslash) {
    for (int k = 1; k < sc->nctx; k++) {
      if (sc->ctx[k].type == NSYS__CTX_STR && !sc->ctx[k].triple) {
        sc->nctx = k;
        break;
      }
    }
  }
  if (sc->nctx == 1 && sc->ctx[0].depth == 0 && !sc->backslash && sc->cur >= 0)
    nsys__end_stmt(sc, line);
}

static void nsys__structure(nsys_py_file *f) {
  int *stack = nsys_xmalloc(sizeof *stack * (size_t)(f->n_stmts + 1));
  int top = 0;
  for (int j = 0; j < f->n_stmts; j++) {
    nsys_py_stmt *s = &f->stmts[j];
    while (top > 0 && f->stmts[stack[top - 1]].indent_cols >= s->indent_cols) top--;
    s->parent = top > 0 ? stack[top - 1] : -1;
    for (int k = 0; k < top; k++) f->stmts[stack[k]].block_end = j;
    if (s->opens_block) stack[top++] = j;
  }
  free(stack);
}

void nsys_py_scan(nsys_py_file *f, const char *src, size_t n) {
  memset(f, 0, sizeof *f);
  f->src = src;
  f->n = n;
  if (n >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0) f->bom = 3;
  nsys__split_lines(f);
  nsys__scan sc;
  memset(&sc, 0, sizeof sc);
  sc.f = f;
  sc.nctx = 1;
  sc.cur = -1;
  for (int l = 0; l < f->n_lines; l++) nsys__scan_line(&sc, l);
  f->incomplete = sc.nctx > 1 || sc.ctx[0].depth > 0 || sc.backslash;
  if (sc.cur >= 0) nsys__end_stmt(&sc, f->n_lines - 1);
  nsys__structure(f);
}

void nsys_py_free(nsys_py_file *f) {
  free(f->lines);
  free(f->stmts);
  memset(f, 0, sizeof *f);
}

int nsys_py_stmt_at_line(const nsys_py_file *f, int line) {
  int lo = 0, hi = f->n_stmts - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (f->stmts[mid].first_line == line) return mid;
    if (f->stmts[mid].first_line < line) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

int nsys_py_unit_end(const nsys_py_file *f, int s) {
  int j = s;
  while (j < f->n_stmts && f->stmts[j].kind == NSYS_PY_DECORATOR) j++;
  if (j >= f->n_stmts) return f->n_stmts - 1;
  int parent = f->stmts[j].parent, indent = f->stmts[j].indent_cols;
  int end = f->stmts[j].block_end;
  nsys_py_kind k0 = f->stmts[j].kind;
  if (k0 == NSYS_PY_DEF || k0 == NSYS_PY_CLASS || k0 == NSYS_PY_CASE) return end;
  while (end + 1 < f->n_stmts) {
    const nsys_py_stmt *nx = &f->stmts[end + 1];
    if (nx->parent != parent || nx->indent_cols != indent || !nsys_py_is_clause(nx->kind)) break;
    if (nx->kind == NSYS_PY_CASE) break;
    end = nx->block_end;
  }
  return end;
}
