/* Compact JSON writer over cJSON trees; see json_write.h. */
#include "rpc/json_write.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON_IsRaw anywhere below (or at) item. Trees are small around raw items;
 * a large tree without any is walked once here and then printed by cJSON. */
static bool nsys__has_raw(const cJSON *item) {
  if (cJSON_IsRaw(item)) return true;
  if (!cJSON_IsObject(item) && !cJSON_IsArray(item)) return false;
  for (const cJSON *c = item->child; c; c = c->next)
    if (nsys__has_raw(c)) return true;
  return false;
}

void nsys_json_escape(nsys_strbuf *b, const char *s) {
  nsys_strbuf_reserve(b, strlen(s) + 2);
  nsys_strbuf_putc(b, '"');
  const char *run = s;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c >= 0x20 && *c != '"' && *c != '\\') continue;
    nsys_strbuf_append(b, run, (size_t)((const char *)c - run));
    switch (*c) {
    case '"': nsys_strbuf_puts(b, "\\\""); break;
    case '\\': nsys_strbuf_puts(b, "\\\\"); break;
    case '\b': nsys_strbuf_puts(b, "\\b"); break;
    case '\f': nsys_strbuf_puts(b, "\\f"); break;
    case '\n': nsys_strbuf_puts(b, "\\n"); break;
    case '\r': nsys_strbuf_puts(b, "\\r"); break;
    case '\t': nsys_strbuf_puts(b, "\\t"); break;
    default: nsys_strbuf_printf(b, "\\u%04x", *c); break;
    }
    run = (const char *)c + 1;
  }
  nsys_strbuf_puts(b, run);
  nsys_strbuf_putc(b, '"');
}

typedef struct {
  nsys_strbuf *b;
  nsys_json_pieces *pc; /* NULL: everything into b */
  size_t min_external;
} nsys__writer;

static void nsys__piece(nsys_json_pieces *pc, const char *ext, size_t off, size_t len) {
  if (!len) return;
  if (pc->n == pc->cap) {
    pc->cap = pc->cap ? 2 * pc->cap : 8;
    pc->piece = nsys_xrealloc(pc->piece, pc->cap * sizeof *pc->piece);
  }
  pc->piece[pc->n++] = (nsys_json_piece){ext, off, len};
}

static void nsys__raw(nsys__writer *w, const char *raw) {
  if (!raw) raw = "null";
  size_t n = strlen(raw);
  if (!w->pc || n < w->min_external) {
    nsys_strbuf_append(w->b, raw, n);
    return;
  }
  nsys_json_pieces *pc = w->pc;
  nsys__piece(pc, NULL, pc->mark, w->b->len - pc->mark);
  nsys__piece(pc, raw, 0, n);
  pc->mark = w->b->len;
}

static void nsys__value(nsys__writer *w, const cJSON *item) {
  nsys_strbuf *b = w->b;
  if (cJSON_IsRaw(item)) {
    nsys__raw(w, item->valuestring);
    return;
  }
  if (!nsys__has_raw(item)) {
    /* printed by cJSON itself: numbers and strings exactly as before */
    char *s = cJSON_PrintUnformatted(item);
    nsys_strbuf_puts(b, s ? s : "null");
    cJSON_free(s);
    return;
  }
  bool object = cJSON_IsObject(item);
  nsys_strbuf_putc(b, object ? '{' : '[');
  for (const cJSON *c = item->child; c; c = c->next) {
    if (c != item->child) nsys_strbuf_putc(b, ',');
    if (object) {
      nsys_json_escape(b, c->string ? c->string : "");
      nsys_strbuf_putc(b, ':');
    }
    nsys__value(w, c);
  }
  nsys_strbuf_putc(b, object ? '}' : ']');
}

void nsys_json_write(nsys_strbuf *b, const cJSON *item) {
  if (!item) {
    nsys_strbuf_puts(b, "null");
    return;
  }
  nsys__writer w = {b, NULL, 0};
  nsys__value(&w, item);
}

void nsys_json_write_pieces(nsys_json_pieces *out, const cJSON *item, size_t min_external) {
  nsys__writer w = {&out->text, out, min_external};
  if (item) nsys__value(&w, item);
  else nsys_strbuf_puts(&out->text, "null");
  nsys__piece(out, NULL, out->mark, out->text.len - out->mark);
  out->mark = out->text.len;
}

void nsys_json_pieces_free(nsys_json_pieces *out) {
  nsys_strbuf_free(&out->text);
  free(out->piece);
  memset(out, 0, sizeof *out);
}
