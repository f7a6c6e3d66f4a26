/* Compact JSON writer over cJSON trees; see json_write.h. */
#include "rpc/json_write.h"

#include "rpc/json_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  bool pretty; /* cJSON_Print's layout: tabs, one member per line */
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

static void nsys__tabs(nsys_strbuf *b, size_t n) {
  for (size_t i = 0; i < n; i++) nsys_strbuf_putc(b, '\t');
}

/* Every value is written here, numbers through nsys_json_number_text (so
 * integers keep all their digits); the text is cJSON's otherwise. */
static void nsys__value(nsys__writer *w, const cJSON *item, size_t depth) {
  nsys_strbuf *b = w->b;
  switch (item->type & 0xFF) {
  case cJSON_Raw: nsys__raw(w, item->valuestring); return;
  case cJSON_NULL: nsys_strbuf_puts(b, "null"); return;
  case cJSON_False: nsys_strbuf_puts(b, "false"); return;
  case cJSON_True: nsys_strbuf_puts(b, "true"); return;
  case cJSON_Number: nsys_json_number_text(b, item); return;
  case cJSON_String: nsys_json_escape(b, item->valuestring ? item->valuestring : ""); return;
  case cJSON_Array:
    nsys_strbuf_putc(b, '[');
    for (const cJSON *c = item->child; c; c = c->next) {
      nsys__value(w, c, depth + 1);
      if (c->next) nsys_strbuf_puts(b, w->pretty ? ", " : ",");
    }
    nsys_strbuf_putc(b, ']');
    return;
  case cJSON_Object:
    nsys_strbuf_putc(b, '{');
    if (w->pretty) nsys_strbuf_putc(b, '\n');
    for (const cJSON *c = item->child; c; c = c->next) {
      if (w->pretty) nsys__tabs(b, depth + 1);
      nsys_json_escape(b, c->string ? c->string : "");
      nsys_strbuf_puts(b, w->pretty ? ":\t" : ":");
      nsys__value(w, c, depth + 1);
      if (c->next) nsys_strbuf_putc(b, ',');
      if (w->pretty) nsys_strbuf_putc(b, '\n');
    }
    if (w->pretty) nsys__tabs(b, depth);
    nsys_strbuf_putc(b, '}');
    return;
  default: nsys_strbuf_puts(b, "null"); return; /* cJSON_Invalid */
  }
}

void nsys_json_write(nsys_strbuf *b, const cJSON *item) {
  if (!item) {
    nsys_strbuf_puts(b, "null");
    return;
  }
  nsys__writer w = {b, NULL, 0, false};
  nsys__value(&w, item, 0);
}

char *nsys_json_print(const cJSON *item, bool pretty) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys__writer w = {&b, NULL, 0, pretty};
  if (item) nsys__value(&w, item, 0);
  else nsys_strbuf_puts(&b, "null");
  return nsys_strbuf_steal(&b);
}

void nsys_json_write_pieces(nsys_json_pieces *out, const cJSON *item, size_t min_external) {
  nsys__writer w = {&out->text, out, min_external, false};
  if (item) nsys__value(&w, item, 0);
  else nsys_strbuf_puts(&out->text, "null");
  nsys__piece(out, NULL, out->mark, out->text.len - out->mark);
  out->mark = out->text.len;
}

void nsys_json_pieces_free(nsys_json_pieces *out) {
  nsys_strbuf_free(&out->text);
  free(out->piece);
  memset(out, 0, sizeof *out);
}
