/* NVTX annotator and its inverse; see annotate.h. */
#include "source/annotate.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "source/pyscan.h"

/* ---- output lines with provenance, and the hunks between old and new ---- */

typedef struct {
  char *text;   /* content without terminator (owned) */
  size_t len;
  const char *term; size_t term_len;
  int orig;     /* old line index, or -1 for an inserted line */
} nsys__oline;

typedef struct {
  nsys__oline *v;
  int n, cap;
} nsys__olines;

static void nsys__out(nsys__olines *o, char *text, size_t len, const char *term, size_t tl, int orig) {
  if (o->n == o->cap) {
    o->cap = o->cap ? o->cap * 2 : 64;
    o->v = nsys_xrealloc(o->v, sizeof *o->v * (size_t)o->cap);
  }
  o->v[o->n++] = (nsys__oline){text, len, term, tl, orig};
}

static void nsys__olines_free(nsys__olines *o) {
  for (int i = 0; i < o->n; i++) free(o->v[i].text);
  free(o->v);
}

static int nsys__utf16_len(const char *s, size_t n) {
  int u = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + k > n) k = 1;
    bool ok = true;
    for (size_t j = 1; j < k; j++)
      if (((unsigned char)s[i + j] & 0xC0) != 0x80) ok = false;
    if (!ok) k = 1;
    u += k == 4 ? 2 : 1;
    i += k;
  }
  return u;
}

static bool nsys__same(const nsys_py_file *f, int old, const nsys__oline *nl) {
  const nsys_py_line *l = &f->lines[old];
  return nl->orig == old && nl->len == l->len && memcmp(nl->text, f->src + l->off, l->len) == 0 &&
         nl->term_len == l->term;
}

static void nsys__add_edit(nsys_annotate_result *r, nsys_text_edit e) {
  r->edits = nsys_xrealloc(r->edits, sizeof *r->edits * (size_t)(r->n_edits + 1));
  r->edits[r->n_edits++] = e;
}

static void nsys__emit_hunk(const nsys_py_file *f, const nsys__olines *o, int a0, int a1, int b0,
                            int b1, nsys_annotate_result *r) {
  nsys_text_edit e = {.start_line = a0, .start_char = 0};
  if (a1 < f->n_lines || f->n_lines == 0 || f->lines[f->n_lines - 1].term > 0) {
    e.end_line = a1;
    e.end_char = 0;
  } else { /* the hunk ends with the unterminated last line */
    e.end_line = f->n_lines - 1;
    const nsys_py_line *l = &f->lines[f->n_lines - 1];
    e.end_char = nsys__utf16_len(f->src + l->off, l->len);
  }
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  for (int j = b0; j < b1; j++) {
    nsys_strbuf_append(&b, o->v[j].text, o->v[j].len);
    nsys_strbuf_append(&b, o->v[j].term, o->v[j].term_len);
  }
  e.text = nsys_strbuf_steal(&b);
  nsys__add_edit(r, e);
}

/* Walks old and new lines in order (both keep the old order) and emits one
 * edit per maximal changed region; also assembles the new text. */
static void nsys__finish(const nsys_py_file *f, nsys__olines *o, nsys_annotate_result *r) {
  int a = 0, b = 0;
  while (a < f->n_lines || b < o->n) {
    if (a < f->n_lines && b < o->n && nsys__same(f, a, &o->v[b])) {
      a++, b++;
      continue;
    }
    int a0 = a, b0 = b;
    while (a < f->n_lines || b < o->n) {
      if (a < f->n_lines && b < o->n && nsys__same(f, a, &o->v[b])) break;
      if (b < o->n && o->v[b].orig == -1) b++;
      else if (b < o->n && o->v[b].orig == a) a++, b++;
      else a++; /* old line a was deleted */
    }
    nsys__emit_hunk(f, o, a0, a, b0, b, r);
  }
  nsys_strbuf s;
  nsys_strbuf_init(&s);
  for (int j = 0; j < o->n; j++) {
    nsys_strbuf_append(&s, o->v[j].text, o->v[j].len);
    nsys_strbuf_append(&s, o->v[j].term, o->v[j].term_len);
  }
  r->new_len = s.len;
  r->new_text = nsys_strbuf_steal(&s);
}

/* Moves a UTF-8 BOM to whatever line comes first in the new text. */
static void nsys__fix_bom(const nsys_py_file *f, nsys__olines *o) {
  if (!f->bom || o->n == 0 || o->v[0].orig == 0) return;
  for (int j = 0; j < o->n; j++) {
    if (o->v[j].orig == 0 && o->v[j].len >= 3 && memcmp(o->v[j].text, "\xEF\xBB\xBF", 3) == 0) {
      memmove(o->v[j].text, o->v[j].text + 3, o->v[j].len - 3);
      o->v[j].len -= 3;
      break;
    }
  }
  nsys__oline *first = &o->v[0];
  char *t = nsys_xmalloc(first->len + 4);
  memcpy(t, "\xEF\xBB\xBF", 3);
  memcpy(t + 3, first->text, first->len);
  free(first->text);
  first->text = t;
  first->len += 3;
}

/* When the first line, which carries the file's BOM, was deleted, give the
 * BOM to the new first line. (That line may itself start with BOM bytes as
 * content, e.g. a doubled BOM: it still gets the file's own.) */
static void nsys__restore_bom(const nsys_py_file *f, nsys__olines *o, bool first_deleted) {
  if (!f->bom || !first_deleted || o->n == 0) return;
  nsys__oline *first = &o->v[0];
  char *t = nsys_xmalloc(first->len + 4);
  memcpy(t, "\xEF\xBB\xBF", 3);
  memcpy(t + 3, first->text, first->len);
  free(first->text);
  first->text = t;
  first->len += 3;
}

/* ---- annotate ---- */

typedef struct {
  int s0, s1;       /* statements: first and last of the wrapped block */
  int l0, l1;       /* physical lines */
  int tag_line;     /* old 0-based line the tag names */
  char label[128];
  int depth;        /* number of new blocks strictly containing this one */
} nsys__block;

typedef struct {
  const nsys_py_file *f;
  nsys__block *v;
  int n, cap;
} nsys__blocks;

static size_t nsys__line_ws(const nsys_py_file *f, int line) {
  const nsys_py_line *l = &f->lines[line];
  const char *p = f->src + l->off;
  size_t i = (line == 0) ? f->bom : 0;
  while (i < l->len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\f')) i++;
  return i;
}

/* `word` as a whole word in [p, e). */
static bool nsys__has_kw(const char *p, const char *e, const char *word) {
  size_t wl = strlen(word);
  for (const char *q = p; q + wl <= e; q++) {
    if (memcmp(q, word, wl) != 0) continue;
    bool lb = q == p || !(isalnum((unsigned char)q[-1]) || q[-1] == '_');
    bool rb = q + wl == e || !(isalnum((unsigned char)q[wl]) || q[wl] == '_');
    if (lb && rb) return true;
  }
  return false;
}

/* Statements s0..s1 can suspend (yield, await, async for/with) outside any
 * def/class nested in them: a range around them would stay open while the
 * generator or coroutine is suspended, so they are not wrapped. Text in
 * strings or comments can only make this say yes (the safe answer). */
static bool nsys__suspends(const nsys_py_file *f, int s0, int s1) {
  for (int j = s0; j <= s1 && j < f->n_stmts;) {
    int d = j;
    while (d < s1 && f->stmts[d].kind == NSYS_PY_DECORATOR) d++;
    if (f->stmts[d].kind == NSYS_PY_DEF || f->stmts[d].kind == NSYS_PY_CLASS) {
      j = f->stmts[d].block_end + 1; /* its own body is its own business */
      continue;
    }
    const nsys_py_stmt *st = &f->stmts[j];
    const char *p = f->src + f->lines[st->first_line].off;
    const char *e = f->src + f->lines[st->last_line].off + f->lines[st->last_line].len;
    if (nsys__has_kw(p, e, "yield") || nsys__has_kw(p, e, "await") || nsys__has_kw(p, e, "async"))
      return true;
    j++;
  }
  return false;
}

static void nsys__add_block(nsys__blocks *bs, int s0, int s1, int tag_line, const char *label) {
  const nsys_py_file *f = bs->f;
  if (s0 < 0 || s1 < s0 || s1 >= f->n_stmts) return;
  if (nsys__suspends(f, s0, s1)) return;
  int l0 = f->stmts[s0].first_line, l1 = f->stmts[s1].last_line;
  for (int i = 0; i < bs->n; i++)
    if (bs->v[i].l0 == l0 && bs->v[i].l1 == l1) return;
  /* form feeds in indentation reset Python's column count: leave such blocks */
  for (int l = l0; l <= l1; l++) {
    if (f->lines[l].in_string) continue;
    const char *p = f->src + f->lines[l].off;
    size_t ws = nsys__line_ws(f, l);
    if (memchr(p, '\f', ws)) return;
  }
  if (bs->n == bs->cap) {
    bs->cap = bs->cap ? bs->cap * 2 : 16;
    bs->v = nsys_xrealloc(bs->v, sizeof *bs->v * (size_t)bs->cap);
  }
  nsys__block *b = &bs->v[bs->n++];
  memset(b, 0, sizeof *b);
  b->s0 = s0, b->s1 = s1, b->l0 = l0, b->l1 = l1, b->tag_line = tag_line;
  snprintf(b->label, sizeof b->label, "%s", label && *label ? label : "block");
}

static const char *nsys__kw_name(nsys_py_kind k) {
  switch (k) {
  case NSYS_PY_IF: return "if";
  case NSYS_PY_FOR: return "for";
  case NSYS_PY_WHILE: return "while";
  case NSYS_PY_WITH: return "with";
  case NSYS_PY_TRY: return "try";
  case NSYS_PY_MATCH: return "match";
  case NSYS_PY_RETURN: return "return";
  default: return "stmt";
  }
}

static void nsys__stmt_label(const nsys_py_stmt *s, char *out, size_t cap) {
  if (cap < 8) return;
  bool compound = s->opens_block || s->inline_body;
  if (compound && s->name[0]) snprintf(out, cap, "%s %.80s", nsys__kw_name(s->kind), s->name);
  else if (s->name[0]) snprintf(out, cap, "%s", s->name);
  else if (s->kind == NSYS_PY_SIMPLE && s->first_ident[0]) snprintf(out, cap, "%s", s->first_ident);
  else snprintf(out, cap, "%s", nsys__kw_name(s->kind));
}

static bool nsys__is_marker(const nsys_py_file *f, int s) {
  return s >= 0 && s < f->n_stmts && f->stmts[s].marker && f->stmts[s].kind == NSYS_PY_WITH &&
         f->stmts[s].opens_block;
}

/* First body statement of header h (after a docstring when skip_doc), or -1. */
static int nsys__body_start(const nsys_py_file *f, int h, bool skip_doc) {
  if (!f->stmts[h].opens_block || h + 1 > f->stmts[h].block_end) return -1;
  int c = h + 1;
  if (skip_doc && f->stmts[c].kind == NSYS_PY_STRING) c = nsys_py_unit_end(f, c) + 1;
  return c <= f->stmts[h].block_end ? c : -1;
}

/* The tag line an existing marker should carry, as an old line index: the
 * def line for a function-level marker (the sole body statement of a def,
 * after its docstring), else the first line of the statement it wraps. */
static int nsys__marker_target(const nsys_py_file *f, int m) {
  int p = f->stmts[m].parent;
  if (p >= 0 && f->stmts[p].kind == NSYS_PY_DEF) {
    int c = nsys__body_start(f, p, true);
    if (c == m && nsys_py_unit_end(f, m) == f->stmts[p].block_end) {
      /* ... and labelled with the function's name */
      char want[128];
      snprintf(want, sizeof want, " %.100s\")", f->stmts[p].name);
      const nsys_py_line *l = &f->lines[f->stmts[m].first_line];
      if (memmem(f->src + l->off, l->len, want, strlen(want))) return f->stmts[p].first_line;
    }
  }
  if (m + 1 <= f->stmts[m].block_end) return f->stmts[m + 1].first_line;
  return -1;
}

static void nsys__wrap_body(nsys__blocks *bs, int d) {
  const nsys_py_file *f = bs->f;
  if (!f->stmts[d].name[0]) return; /* not a valid def */
  int c = nsys__body_start(f, d, true);
  if (c < 0) return;
  int end = f->stmts[d].block_end;
  if (nsys__is_marker(f, c) && nsys_py_unit_end(f, c) == end) return; /* already annotated */
  nsys__add_block(bs, c, end, f->stmts[d].first_line, f->stmts[d].name);
}

static void nsys__stmts_in(nsys__blocks *bs, int a, int b, bool descend_defs, bool only_defs);

static void nsys__descend(nsys__blocks *bs, int h, bool descend_defs) {
  const nsys_py_file *f = bs->f;
  bool is_def = f->stmts[h].kind == NSYS_PY_DEF, is_class = f->stmts[h].kind == NSYS_PY_CLASS;
  int c = nsys__body_start(f, h, is_def || is_class);
  if (c < 0) return;
  nsys__stmts_in(bs, c, f->stmts[h].block_end, descend_defs, is_class);
}

static void nsys__stmts_in(nsys__blocks *bs, int a, int b, bool descend_defs, bool only_defs) {
  const nsys_py_file *f = bs->f;
  for (int u = a; u <= b && u < f->n_stmts;) {
    int e = nsys_py_unit_end(f, u);
    if (e < u) e = u;
    int d = u;
    while (d < e && f->stmts[d].kind == NSYS_PY_DECORATOR) d++;
    const nsys_py_stmt *s = &f->stmts[d];
    if (nsys__is_marker(f, u)) {
      /* already annotated: leave it, except that a function-level range is
       * refined by annotating the statements inside it */
      int p = f->stmts[u].parent;
      if (p >= 0 && nsys__marker_target(f, u) == f->stmts[p].first_line && u + 1 <= f->stmts[u].block_end)
        nsys__stmts_in(bs, u + 1, f->stmts[u].block_end, descend_defs, false);
    } else if (s->kind == NSYS_PY_DEF || s->kind == NSYS_PY_CLASS) {
      if (descend_defs) nsys__descend(bs, d, descend_defs);
    } else if (only_defs) {
      /* class bodies: only methods */
    } else if (s->opens_block) {
      if (!nsys_py_is_clause(s->kind) && s->header_call) {
        char label[96];
        nsys__stmt_label(s, label, sizeof label);
        nsys__add_block(bs, u, e, f->stmts[u].first_line, label);
      }
      /* the bodies of the header and of its clauses */
      for (int h = u; h <= e; h = f->stmts[h].block_end + 1)
        if (f->stmts[h].opens_block) nsys__descend(bs, h, descend_defs);
    } else if (nsys_py_is_clause(s->kind)) {
      /* an inline clause alone cannot be wrapped */
    } else {
      switch (s->kind) {
      case NSYS_PY_IMPORT: case NSYS_PY_FROM: case NSYS_PY_PASS: case NSYS_PY_BREAK:
      case NSYS_PY_CONTINUE: case NSYS_PY_GLOBAL: case NSYS_PY_NONLOCAL: case NSYS_PY_RAISE:
      case NSYS_PY_STRING: case NSYS_PY_DECORATOR:
        break;
      default:
        if (s->has_call || s->has_op) {
          char label[96];
          nsys__stmt_label(s, label, sizeof label);
          nsys__add_block(bs, u, e, f->stmts[u].first_line, label);
        }
      }
    }
    u = e + 1;
  }
}

static bool nsys__def_matches(const nsys_py_file *f, int d, const char *want) {
  const nsys_py_stmt *s = &f->stmts[d];
  if (s->kind != NSYS_PY_DEF) return false;
  const char *dot = strrchr(want, '.');
  if (!dot) return strcmp(s->name, want) == 0;
  if (strcmp(s->name, dot + 1) != 0) return false;
  int p = s->parent;
  size_t cl = (size_t)(dot - want);
  const char *cls = want;
  const char *d2 = NULL;
  for (const char *q = want; q < dot; q++)
    if (*q == '.') d2 = q;
  if (d2) cls = d2 + 1, cl = (size_t)(dot - cls);
  return p >= 0 && (f->stmts[p].kind == NSYS_PY_CLASS || f->stmts[p].kind == NSYS_PY_DEF) &&
         strlen(f->stmts[p].name) == cl && memcmp(f->stmts[p].name, cls, cl) == 0;
}

/* Top-level (not inside def/class) `import` statements: the names bound to
 * torch and to nvtx. */
static void nsys__find_imports(const nsys_py_file *f, char *torch, char *nvtx, size_t cap) {
  torch[0] = nvtx[0] = '\0';
  for (int s = 0; s < f->n_stmts; s++) {
    if (f->stmts[s].kind != NSYS_PY_IMPORT) continue;
    bool in_def = false;
    for (int p = f->stmts[s].parent; p >= 0; p = f->stmts[p].parent)
      if (f->stmts[p].kind == NSYS_PY_DEF || f->stmts[p].kind == NSYS_PY_CLASS) in_def = true;
    if (in_def) continue;
    const nsys_py_line *l0 = &f->lines[f->stmts[s].first_line];
    const nsys_py_line *l1 = &f->lines[f->stmts[s].last_line];
    const char *p = f->src + l0->off + f->stmts[s].indent_len;
    const char *end = f->src + l1->off + l1->len;
    if (end - p < 7) continue;
    p += 6; /* "import" */
    while (p < end) {
      /* one "a.b.c [as x]" item */
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\\' || *p == '\n' || *p == '\r' ||
                         *p == '(' || *p == ',')) p++;
      const char *m0 = p;
      while (p < end && (*p == '.' || *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                         (*p >= '0' && *p <= '9'))) p++;
      size_t ml = (size_t)(p - m0);
      if (ml == 0) break;
      const char *first_end = memchr(m0, '.', ml);
      size_t fl = first_end ? (size_t)(first_end - m0) : ml;
      while (p < end && (*p == ' ' || *p == '\t')) p++;
      char alias[64] = "";
      if (end - p > 3 && p[0] == 'a' && p[1] == 's' && (p[2] == ' ' || p[2] == '\t')) {
        p += 3;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        const char *a0 = p;
        while (p < end && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                           (*p >= '0' && *p <= '9'))) p++;
        snprintf(alias, sizeof alias, "%.*s", (int)(p - a0), a0);
      }
      bool is_torch = fl == 5 && memcmp(m0, "torch", 5) == 0;
      bool is_nvtx = ml == 4 && memcmp(m0, "nvtx", 4) == 0;
      if (is_torch && !torch[0]) {
        if (alias[0] && ml == 5) snprintf(torch, cap, "%s", alias);
        else if (!alias[0]) snprintf(torch, cap, "torch");
      }
      if (is_nvtx && !nvtx[0]) snprintf(nvtx, cap, "%s", alias[0] ? alias : "nvtx");
      while (p < end && *p != ',') {
        if (*p == '#') { p = end; break; }
        p++;
      }
    }
  }
}

static void nsys__py_quote(nsys_strbuf *b, const char *s) {
  nsys_strbuf_putc(b, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      nsys_strbuf_putc(b, '\\');
      nsys_strbuf_putc(b, (char)c);
    } else if (c < 0x20 || c == 0x7f) {
      nsys_strbuf_printf(b, "\\x%02x", c);
    } else {
      nsys_strbuf_putc(b, (char)c);
    }
  }
  nsys_strbuf_putc(b, '"');
}

static int nsys__block_cmp(const void *x, const void *y) {
  const nsys__block *a = x, *b = y;
  if (a->l0 != b->l0) return a->l0 < b->l0 ? -1 : 1;
  if (a->l1 != b->l1) return a->l1 > b->l1 ? -1 : 1;
  return 0;
}

static const char *nsys__default_term(const nsys_py_file *f, size_t *len) {
  for (int i = 0; i < f->n_lines; i++)
    if (f->lines[i].term) {
      *len = f->lines[i].term;
      return f->src + f->lines[i].off + f->lines[i].len;
    }
  *len = 1;
  return "\n";
}

/* Rewrites the LINE of a marker's tag "PATH:LINE label" (PATH == rel) to
 * `line` (1-based). Returns a new line content or NULL when unchanged. */
static char *nsys__renumber(const char *p, size_t n, const char *rel, int line) {
  nsys_strbuf q;
  nsys_strbuf_init(&q);
  nsys__py_quote(&q, rel);
  q.data[q.len - 1] = ':'; /* the escaped path, opening quote included, then ':' */
  char *hit = q.len <= n ? memmem(p, n, q.data, q.len) : NULL;
  size_t ql = q.len;
  nsys_strbuf_free(&q);
  if (!hit) return NULL;
  const char *d0 = hit + ql, *d1 = d0;
  while (d1 < p + n && *d1 >= '0' && *d1 <= '9') d1++;
  if (d1 == d0 || d1 - d0 > 9) return NULL;
  char num[16];
  snprintf(num, sizeof num, "%d", line);
  if ((size_t)(d1 - d0) == strlen(num) && memcmp(d0, num, strlen(num)) == 0) return NULL;
  nsys_strbuf out;
  nsys_strbuf_init(&out);
  nsys_strbuf_append(&out, p, (size_t)(d0 - p));
  nsys_strbuf_puts(&out, num);
  nsys_strbuf_append(&out, d1, (size_t)(p + n - d1));
  return nsys_strbuf_steal(&out);
}

static bool nsys__is_future_or_doc(const nsys_py_file *f, int s) {
  const nsys_py_stmt *st = &f->stmts[s];
  if (st->parent != -1) return false;
  if (s == 0 && st->kind == NSYS_PY_STRING) return true;
  if (st->kind != NSYS_PY_FROM) return false;
  const nsys_py_line *l = &f->lines[st->first_line];
  const char *p = f->src + l->off + st->indent_len + 4;
  const char *e = f->src + l->off + l->len;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  return e - p >= 10 && memcmp(p, "__future__", 10) == 0;
}

static int nsys__annotate_once(const char *src, size_t n, const nsys_annotate_opts *o,
                               nsys_annotate_result *r) {
  memset(r, 0, sizeof *r);
  nsys_py_file f;
  nsys_py_scan(&f, src, n);
  nsys__blocks bs = {.f = &f};
  const char *fn = o->function ? o->function : "";
  /* Indentation that Python would reject ("unexpected indent", a dedent to no
   * outer level) makes the block structure ambiguous: annotate nothing. So
   * does text Python would not read as source at all: invalid UTF-8 (PEP 3120)
   * or NUL bytes, or text that ends inside brackets or a string. */
  bool valid = nsys_utf8_valid(src, n) && memchr(src, '\0', n) == NULL && !f.incomplete;
  if (valid) {
    int *first = nsys_xmalloc(sizeof *first * ((size_t)f.n_stmts + 1));
    for (int j = 0; j <= f.n_stmts; j++) first[j] = -1;
    for (int j = 0; j < f.n_stmts && valid; j++) {
      int k = f.stmts[j].parent + 1;
      if (first[k] < 0) first[k] = f.stmts[j].indent_cols;
      else if (first[k] != f.stmts[j].indent_cols) valid = false;
    }
    free(first);
  }
  switch (valid ? o->scope : (nsys_annot_scope)-1) {
  default:
    break;
  case NSYS_ANNOT_FILE:
    if (o->statement) {
      int c = 0;
      if (f.n_stmts > 0 && f.stmts[0].kind == NSYS_PY_STRING) c = nsys_py_unit_end(&f, 0) + 1;
      nsys__stmts_in(&bs, c, f.n_stmts - 1, true, false);
    } else {
      for (int d = 0; d < f.n_stmts; d++)
        if (f.stmts[d].kind == NSYS_PY_DEF) nsys__wrap_body(&bs, d);
    }
    break;
  case NSYS_ANNOT_FUNCTION:
    for (int d = 0; d < f.n_stmts; d++) {
      if (!nsys__def_matches(&f, d, fn)) continue;
      r->functions_matched++;
      if (o->statement) nsys__descend(&bs, d, true);
      else nsys__wrap_body(&bs, d);
    }
    break;
  case NSYS_ANNOT_LINES: {
    int a = o->start_line, b = o->end_line;
    /* top statements: first line in range, parent's first line not */
    int prev_parent = -2, run0 = -1, run_last = -1;
    for (int s = 0; s <= f.n_stmts; s++) {
      bool top = false;
      if (s < f.n_stmts) {
        const nsys_py_stmt *st = &f.stmts[s];
        top = st->first_line >= a && st->first_line <= b &&
              (st->parent < 0 || f.stmts[st->parent].first_line < a);
        if (top && run_last >= 0 && s <= run_last) continue; /* inside the previous unit */
      }
      if (top && o->statement) {
        int e = nsys_py_unit_end(&f, s);
        nsys__stmts_in(&bs, s, e, true, false);
        run_last = e;
        continue;
      }
      bool extends = top && run0 >= 0 && f.stmts[s].parent == prev_parent && s == run_last + 1;
      if (run0 >= 0 && !extends) {
        /* close the run [run0, run_last] */
        if (!(nsys__is_marker(&f, run0) && nsys_py_unit_end(&f, run0) == run_last)) {
          char label[96] = "";
          for (int k = run0; k <= run_last && !label[0]; k++)
            if (f.stmts[k].name[0]) nsys__stmt_label(&f.stmts[k], label, sizeof label);
          nsys__add_block(&bs, run0, run_last, f.stmts[run0].first_line, label[0] ? label : "lines");
        }
        run0 = -1;
      }
      if (!top || s >= f.n_stmts) continue;
      const nsys_py_stmt *st = &f.stmts[s];
      int e = nsys_py_unit_end(&f, s);
      if (nsys_py_is_clause(st->kind) || nsys__is_future_or_doc(&f, s) ||
          (st->marker && st->kind == NSYS_PY_IMPORT)) {
        run_last = e;
        continue;
      }
      if (run0 < 0) {
        run0 = s;
        prev_parent = st->parent;
      }
      run_last = e;
    }
    break;
  }
  }

  int rc = (o->scope == NSYS_ANNOT_FUNCTION && r->functions_matched == 0) ? -1 : 0;
  if (bs.n > 0) qsort(bs.v, (size_t)bs.n, sizeof *bs.v, nsys__block_cmp);
  {
    /* blocks nest (they come from the statement tree): depth by a stack */
    int *stack = nsys_xmalloc(sizeof *stack * ((size_t)bs.n + 1));
    int top = 0;
    for (int i = 0; i < bs.n; i++) {
      while (top > 0 && bs.v[stack[top - 1]].l1 < bs.v[i].l0) top--;
      bs.v[i].depth = top;
      stack[top++] = i;
    }
    free(stack);
  }

  /* which API, and the import line */
  char torch[64], nvtx[64];
  nsys__find_imports(&f, torch, nvtx, sizeof torch);
  int import_line = -1;
  if (torch[0]) {
    snprintf(r->api_buf, sizeof r->api_buf, "%s.cuda.nvtx.range", torch);
  } else if (nvtx[0]) {
    snprintf(r->api_buf, sizeof r->api_buf, "%s.annotate", nvtx);
  } else {
    snprintf(r->api_buf, sizeof r->api_buf, "torch.cuda.nvtx.range");
    if (bs.n > 0) {
      for (int s = 0; s < f.n_stmts; s++) {
        const nsys_py_stmt *st = &f.stmts[s];
        if (st->parent != -1 || nsys__is_future_or_doc(&f, s)) continue;
        import_line = st->first_line;
        break;
      }
      if (import_line < 0) bs.n = 0; /* nowhere valid to import: change nothing */
      else r->import_added = true;
    }
  }
  r->api = r->api_buf;

  /* per-line prefix counts */
  const char *P = f.uses_tabs ? "\t" : "    ";
  size_t PL = strlen(P);
  int *pcount = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *pcount);
  int *mcount = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *mcount); /* markers inserted before line */
  for (int i = 0; i < bs.n; i++) {
    for (int l = bs.v[i].l0; l <= bs.v[i].l1; l++) pcount[l]++;
    mcount[bs.v[i].l0]++;
  }
  /* final 0-based line of old line L (the line itself, after inserted lines) */
  int *final_of = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *final_of);
  {
    int shift = 0;
    for (int l = 0; l < f.n_lines; l++) {
      if (l == import_line) shift++;
      shift += mcount[l];
      final_of[l] = l + shift;
    }
  }
  /* existing markers whose tag LINE is stale: renumber (keeps tags current
   * when a later pass inserts lines above them) */
  char **rewrite = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *rewrite);
  for (int m = 0; m < f.n_stmts && bs.n >= 0; m++) {
    if (!nsys__is_marker(&f, m) || f.stmts[m].first_line != f.stmts[m].last_line) continue;
    int target = nsys__marker_target(&f, m);
    if (target < 0 || !o->rel_path) continue;
    const nsys_py_line *ml = &f.lines[f.stmts[m].first_line];
    rewrite[f.stmts[m].first_line] =
        nsys__renumber(f.src + ml->off, ml->len, o->rel_path, final_of[target] + 1);
  }
  size_t dterm_len;
  const char *dterm = nsys__default_term(&f, &dterm_len);
  nsys__olines out = {0};
  int bi = 0;
  for (int l = 0; l < f.n_lines; l++) {
    const nsys_py_line *ln = &f.lines[l];
    if (l == import_line) {
      char *t = nsys_xasprintf("import torch  # nsys-ai");
      nsys__out(&out, t, strlen(t), ln->term ? f.src + ln->off + ln->len : dterm,
                ln->term ? ln->term : dterm_len, -1);
    }
    for (; bi < bs.n && bs.v[bi].l0 == l; bi++) {
      nsys__block *b = &bs.v[bi];
      nsys_strbuf t;
      nsys_strbuf_init(&t);
      for (int k = 0; k < b->depth; k++) nsys_strbuf_puts(&t, P);
      size_t ws0 = (l == 0) ? f.bom : 0;
      nsys_strbuf_append(&t, f.src + ln->off + ws0, nsys__line_ws(&f, l) - ws0);
      nsys_strbuf tag;
      nsys_strbuf_init(&tag);
      nsys_strbuf_printf(&tag, "%s:%d %s", o->rel_path ? o->rel_path : "", final_of[b->tag_line] + 1,
                         b->label);
      nsys_strbuf_printf(&t, "with %s(", r->api);
      nsys__py_quote(&t, tag.data ? tag.data : "");
      nsys_strbuf_puts(&t, "):  # nsys-ai");
      r->markers = nsys_xrealloc(r->markers, sizeof *r->markers * (size_t)(r->n_markers + 1));
      r->markers[r->n_markers++] = (nsys_annot_marker){out.n, nsys_strbuf_steal(&tag)};
      size_t tl = t.len;
      nsys__out(&out, nsys_strbuf_steal(&t), tl, ln->term ? f.src + ln->off + ln->len : dterm,
                ln->term ? ln->term : dterm_len, -1);
    }
    int k = (ln->blank || ln->in_string) ? 0 : pcount[l];
    size_t skip = (l == 0) ? f.bom : 0;
    const char *body = rewrite[l] ? rewrite[l] : f.src + ln->off;
    size_t blen = rewrite[l] ? strlen(rewrite[l]) : ln->len;
    char *t = nsys_xmalloc(blen + (size_t)k * PL + 1);
    memcpy(t, body, skip);
    for (int j = 0; j < k; j++) memcpy(t + skip + (size_t)j * PL, P, PL);
    memcpy(t + skip + (size_t)k * PL, body + skip, blen - skip);
    nsys__out(&out, t, blen + (size_t)k * PL, f.src + ln->off + ln->len, ln->term, l);
    if (rewrite[l]) r->n_renumbered++;
    free(rewrite[l]);
  }
  free(rewrite);
  nsys__fix_bom(&f, &out);
  nsys__finish(&f, &out, r);
  nsys__olines_free(&out);
  free(pcount);
  free(mcount);
  free(final_of);
  free(bs.v);
  nsys_py_free(&f);
  return rc;
}

/* ---- unannotate ---- */

int nsys_unannotate(const char *src, size_t n, nsys_annotate_result *r) {
  memset(r, 0, sizeof *r);
  nsys_py_file f;
  nsys_py_scan(&f, src, n);
  const char *P = f.uses_tabs ? "\t" : "    ";
  size_t PL = strlen(P);
  int *strip = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *strip);
  bool *del = nsys_xcalloc((size_t)f.n_lines + 1, sizeof *del);
  for (int s = 0; s < f.n_stmts; s++) {
    const nsys_py_stmt *st = &f.stmts[s];
    if (!st->marker) continue;
    bool is_with = nsys__is_marker(&f, s);
    bool is_import = st->kind == NSYS_PY_IMPORT && !st->inline_body;
    if (!is_with && !is_import) continue;
    if (is_import) {
      /* only the import this tool adds */
      const nsys_py_line *l0 = &f.lines[st->first_line];
      const char *p = f.src + l0->off + (st->first_line == 0 ? f.bom : 0);
      size_t len = l0->len - (st->first_line == 0 ? f.bom : 0);
      if (st->first_line != st->last_line || st->indent_len != (st->first_line == 0 ? f.bom : 0) ||
          len != 23 || memcmp(p, "import torch  # nsys-ai", 23) != 0)
        continue;
    }
    for (int l = st->first_line; l <= st->last_line; l++) del[l] = true;
    if (is_with && s + 1 <= st->block_end) {
      int l0 = f.stmts[s + 1].first_line, l1 = f.stmts[st->block_end].last_line;
      for (int l = l0; l <= l1; l++) strip[l]++;
      const nsys_py_line *ml = &f.lines[st->first_line];
      r->markers = nsys_xrealloc(r->markers, sizeof *r->markers * (size_t)(r->n_markers + 1));
      r->markers[r->n_markers++] =
          (nsys_annot_marker){st->first_line, nsys_xstrndup(f.src + ml->off, ml->len)};
    }
  }
  nsys__olines out = {0};
  for (int l = 0; l < f.n_lines; l++) {
    const nsys_py_line *ln = &f.lines[l];
    if (del[l]) continue;
    size_t skip = (l == 0) ? f.bom : 0;
    const char *p = f.src + ln->off;
    size_t cut = 0;
    if (!ln->blank && !ln->in_string) {
      for (int k = 0; k < strip[l]; k++) {
        if (skip + cut + PL <= ln->len && memcmp(p + skip + cut, P, PL) == 0) cut += PL;
        else break;
      }
    }
    char *t = nsys_xmalloc(ln->len - cut + 1);
    memcpy(t, p, skip);
    memcpy(t + skip, p + skip + cut, ln->len - skip - cut);
    nsys__out(&out, t, ln->len - cut, p + ln->len, ln->term, l);
  }
  nsys__restore_bom(&f, &out, f.n_lines > 0 && del[0]);
  nsys__finish(&f, &out, r);
  nsys__olines_free(&out);
  free(strip);
  free(del);
  nsys_py_free(&f);
  r->api = "";
  return 0;
}

void nsys_annotate_result_free(nsys_annotate_result *r) {
  for (int i = 0; i < r->n_edits; i++) free(r->edits[i].text);
  free(r->edits);
  for (int i = 0; i < r->n_markers; i++) free(r->markers[i].tag);
  free(r->markers);
  free(r->new_text);
  memset(r, 0, sizeof *r);
}

/* "PATH:LINE" at the start of `text`, then the end or a space. A path
 * with spaces is taken only when `spaces` says so, or when it is explicit
 * (absolute, ./, ../ or ~/): "see foo.py:12 for" is free text. */
static bool nsys__source_tag(const char *text, char *path, size_t cap, int *line, bool spaces) {
  if (!text) return false;
  for (const char *c = text; *c; c++) {
    if (*c == '\n') return false;
    if (*c != ':' || c == text) continue;
    const char *d = c + 1;
    long v = 0;
    int nd = 0;
    while (*d >= '0' && *d <= '9' && nd < 9) v = v * 10 + (*d++ - '0'), nd++;
    if (nd == 0 || (*d != '\0' && *d != ' ')) continue;
    size_t pl = (size_t)(c - text);
    if (text[0] == ' ' || text[pl - 1] == ' ' || v < 1) return false;
    if (pl >= cap) return false;
    /* no ", " or parentheses (PyTorch op ranges) */
    bool spaced = false;
    for (size_t k = 0; k < pl; k++) {
      if (text[k] == ',' || text[k] == '(' || text[k] == ')') return false;
      spaced |= text[k] == ' ';
    }
    bool explicit_path = text[0] == '/' || strncmp(text, "./", 2) == 0 || strncmp(text, "../", 3) == 0 ||
                         strncmp(text, "~/", 2) == 0;
    if (spaced && !spaces && !explicit_path) return false;
    memcpy(path, text, pl);
    path[pl] = '\0';
    *line = (int)v;
    return true;
  }
  return false;
}

bool nsys_parse_source_tag(const char *text, char *path, size_t cap, int *line) {
  return nsys__source_tag(text, path, cap, line, false);
}

bool nsys_parse_source_tag_spaced(const char *text, char *path, size_t cap, int *line) {
  return nsys__source_tag(text, path, cap, line, true);
}

/* The promises of annotate, checked on every result before it is returned:
 * unannotate gives back the unannotated input byte for byte, and (outside line ranges,
 * whose numbers move) annotating the result again adds nothing. Text the
 * scanner misreads (garbage, syntax errors it does not model) fails the check
 * and is left untouched rather than edited wrongly. */
int nsys_annotate(const char *src, size_t n, const nsys_annotate_opts *o, nsys_annotate_result *r) {
  int rc = nsys__annotate_once(src, n, o, r);
  if (r->n_edits == 0) return rc;
  /* Removing every marker from the result must give what removing every
   * marker from the input gives (the input itself when it had none). */
  nsys_annotate_result u, base;
  nsys_unannotate(r->new_text, r->new_len, &u);
  nsys_unannotate(src, n, &base);
  bool ok = u.new_len == base.new_len && memcmp(u.new_text, base.new_text, base.new_len) == 0;
  nsys_annotate_result_free(&u);
  nsys_annotate_result_free(&base);
  if (ok && o->scope != NSYS_ANNOT_LINES) {
    nsys_annotate_result again;
    nsys__annotate_once(r->new_text, r->new_len, o, &again);
    ok = again.n_edits == 0;
    nsys_annotate_result_free(&again);
  }
  if (!ok) { /* keep api/functions_matched; drop every edit */
    for (int i = 0; i < r->n_edits; i++) free(r->edits[i].text);
    free(r->edits);
    for (int i = 0; i < r->n_markers; i++) free(r->markers[i].tag);
    free(r->markers);
    r->edits = NULL;
    r->markers = NULL;
    r->n_edits = r->n_markers = r->n_renumbered = 0;
    r->import_added = false;
    r->new_text = nsys_xrealloc(r->new_text, n + 1);
    memcpy(r->new_text, src, n);
    r->new_text[n] = '\0';
    r->new_len = n;
    r->refused = true;
  }
  return rc;
}
