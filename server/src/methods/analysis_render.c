#include "methods/analysis_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool nsys__ends(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static void nsys__bytes(nsys_strbuf *b, double v) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (fabs(v) >= 1024 && i < 4) {
    v /= 1024;
    i++;
  }
  if (i == 0) nsys_strbuf_printf(b, "%.0f B", v);
  else nsys_strbuf_printf(b, "%.2f %s", v, u[i]);
}

void nsys_render_value(nsys_strbuf *b, const char *key, const cJSON *v) {
  if (!v || cJSON_IsNull(v)) {
    nsys_strbuf_puts(b, "-");
  } else if (cJSON_IsBool(v)) {
    nsys_strbuf_puts(b, cJSON_IsTrue(v) ? "yes" : "no");
  } else if (cJSON_IsString(v)) {
    nsys_strbuf_puts(b, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    int64_t iv = 0;
    if (key && (nsys__ends(key, "Ns") || !strcmp(key, "ns"))) {
      char tmp[64];
      nsys_fmt_duration(tmp, sizeof tmp, (int64_t)d);
      nsys_strbuf_puts(b, tmp);
    } else if (key && (nsys__ends(key, "Pct") || !strncmp(key, "pct", 3))) {
      nsys_strbuf_printf(b, "%.1f%%", d);
    } else if (key && (nsys__ends(key, "Bytes") || !strcmp(key, "bytes"))) {
      nsys__bytes(b, d);
    } else if (nsys_json_get_i64(v, &iv) && (fabs(d) < 1e15 || v->valuestring)) {
      nsys_strbuf_printf(b, "%lld", (long long)iv); /* timestamps with all their digits */
    } else {
      nsys_strbuf_printf(b, "%.3g", d);
    }
  } else if (cJSON_IsArray(v)) {
    int n = 0;
    for (const cJSON *it = v->child; it; it = it->next, n++) {
      if (n) nsys_strbuf_puts(b, ",");
      if (n >= 6) {
        nsys_strbuf_printf(b, "+%d", cJSON_GetArraySize(v) - n);
        break;
      }
      if (cJSON_IsObject(it)) {
        int m = 0;
        for (const cJSON *f = it->child; f; f = f->next, m++) {
          if (m) nsys_strbuf_puts(b, ":");
          nsys_render_value(b, f->string, f);
        }
      } else {
        nsys_render_value(b, key, it);
      }
    }
  } else if (cJSON_IsObject(v)) {
    int m = 0;
    for (const cJSON *f = v->child; f; f = f->next, m++) {
      if (m) nsys_strbuf_puts(b, " ");
      nsys_strbuf_printf(b, "%s=", f->string);
      nsys_render_value(b, f->string, f);
    }
  }
}

static char *nsys__cell(const char *key, const cJSON *v, int max_cell) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_render_value(&b, key, v);
  for (size_t i = 0; i < b.len; i++)
    if (b.data[i] == '\n' || b.data[i] == '|') b.data[i] = ' ';
  if (max_cell > 3 && b.len > (size_t)max_cell) {
    b.len = (size_t)max_cell - 3;
    nsys_strbuf_puts(&b, "...");
  }
  if (!b.data) nsys_strbuf_puts(&b, "");
  return nsys_strbuf_steal(&b);
}

/* Display width of UTF-8 text (code points). */
static int nsys__width(const char *s) {
  int w = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) w++;
  return w;
}

void nsys_render_table(nsys_strbuf *b, const cJSON *rows, bool md, int max_rows, int max_cell) {
  const cJSON *first = cJSON_IsArray(rows) ? rows->child : NULL;
  if (!first || !cJSON_IsObject(first)) {
    nsys_strbuf_puts(b, md ? "_(no rows)_\n" : "  (no rows)\n");
    return;
  }
  int nc = 0;
  const char *cols[32];
  for (const cJSON *f = first->child; f && nc < 32; f = f->next) cols[nc++] = f->string;
  int nr = 0;
  for (const cJSON *r = rows->child; r; r = r->next) nr++;
  if (max_rows > 0 && nr > max_rows) nr = max_rows;
  char **cells = nsys_xcalloc((size_t)(nr + 1) * nc, sizeof *cells);
  int *w = nsys_xcalloc((size_t)nc, sizeof *w);
  for (int j = 0; j < nc; j++) {
    cells[j] = nsys_xstrdup(cols[j]);
    w[j] = nsys__width(cols[j]);
  }
  int i = 1;
  for (const cJSON *r = rows->child; r && i <= nr; r = r->next, i++)
    for (int j = 0; j < nc; j++) {
      cells[i * nc + j] = nsys__cell(cols[j], cJSON_GetObjectItemCaseSensitive(r, cols[j]), max_cell);
      int cw = nsys__width(cells[i * nc + j]);
      if (cw > w[j]) w[j] = cw;
    }
  for (i = 0; i <= nr; i++) {
    nsys_strbuf_puts(b, md ? "|" : "  ");
    for (int j = 0; j < nc; j++) {
      const char *s = cells[i * nc + j];
      nsys_strbuf_printf(b, md ? " %s" : "%s", s);
      if (md || j + 1 < nc)
        for (int pad = nsys__width(s); pad < w[j]; pad++) nsys_strbuf_putc(b, ' ');
      nsys_strbuf_puts(b, md ? " |" : (j + 1 < nc ? "  " : ""));
    }
    nsys_strbuf_putc(b, '\n');
    if (i == 0 && md) {
      nsys_strbuf_puts(b, "|");
      for (int j = 0; j < nc; j++) {
        nsys_strbuf_puts(b, " ");
        for (int k = 0; k < (w[j] < 3 ? 3 : w[j]); k++) nsys_strbuf_putc(b, '-');
        nsys_strbuf_puts(b, " |");
      }
      nsys_strbuf_putc(b, '\n');
    }
  }
  for (i = 0; i < (nr + 1) * nc; i++) free(cells[i]);
  free(cells);
  free(w);
}

void nsys_render_result(nsys_strbuf *b, const cJSON *res, bool md) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(res, "name");
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(res, "window");
  int64_t ws = nsys_json_obj_i64(win, "start", 0), we = nsys_json_obj_i64(win, "end", 0);
  char dur[64];
  nsys_fmt_duration(dur, sizeof dur, we - ws);
  nsys_strbuf_printf(b, md ? "## %s\n\nWindow: `%lld` .. `%lld` ns (%s)\n\n" : "%s  window %lld..%lld ns (%s)\n\n",
                     cJSON_IsString(name) ? name->valuestring : "analysis", (long long)ws,
                     (long long)we, dur);
  nsys_render_table(b, cJSON_GetObjectItemCaseSensitive(res, "rows"), md, 0, md ? 0 : 60);
  const cJSON *sum = cJSON_GetObjectItemCaseSensitive(res, "summary");
  if (sum && sum->child) {
    nsys_strbuf_puts(b, md ? "\n### Summary\n\n" : "\nsummary:\n");
    for (const cJSON *f = sum->child; f; f = f->next) {
      if (cJSON_IsArray(f) && f->child && cJSON_IsObject(f->child)) {
        nsys_strbuf_printf(b, md ? "\n**%s**\n\n" : "  %s:\n", f->string);
        nsys_render_table(b, f, md, 0, md ? 0 : 60);
        continue;
      }
      nsys_strbuf_printf(b, md ? "- **%s**: " : "  %s: ", f->string);
      nsys_render_value(b, f->string, f);
      nsys_strbuf_putc(b, '\n');
    }
  }
}
