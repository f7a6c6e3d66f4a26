/* Text and Markdown renderings of the report: a header (file, GPUs, window,
 * totals), the findings by severity with their numbers, then key tables. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "methods/analysis_render.h"

static double nsys__n(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
static const cJSON *nsys__g(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* New array of objects with only `cols` (NULL-terminated) of each row. */
static cJSON *nsys__pick(const cJSON *rows, const char *const *cols, int max) {
  cJSON *out = cJSON_CreateArray();
  const cJSON *r;
  int n = 0;
  cJSON_ArrayForEach(r, rows) {
    if (max && n++ >= max) break;
    cJSON *o = cJSON_CreateObject();
    for (const char *const *c = cols; *c; c++) {
      const cJSON *v = nsys__g(r, *c);
      cJSON_AddItemToObject(o, *c, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
    }
    cJSON_AddItemToArray(out, o);
  }
  return out;
}

static void nsys__wrap(nsys_strbuf *b, const char *first, const char *indent, const char *text, int width) {
  int col = (int)strlen(first);
  const char *p = text;
  nsys_strbuf_puts(b, first);
  while (*p) {
    const char *sp = strchr(p, ' ');
    int len = sp ? (int)(sp - p) : (int)strlen(p);
    if (col > (int)strlen(indent) && col + len + 1 > width) {
      nsys_strbuf_putc(b, '\n');
      nsys_strbuf_puts(b, indent);
      col = (int)strlen(indent);
    } else if (col > (int)strlen(first) || (col && p != text)) {
      nsys_strbuf_putc(b, ' ');
      col++;
    }
    nsys_strbuf_append(b, p, (size_t)len);
    col += len;
    p += len;
    while (*p == ' ') p++;
  }
  nsys_strbuf_putc(b, '\n');
}

static void nsys__section(nsys_strbuf *b, bool md, const char *title) {
  if (md) nsys_strbuf_printf(b, "\n## %s\n\n", title);
  else nsys_strbuf_printf(b, "\n%s\n", title);
}

void nsys_report_render(nsys_strbuf *b, const cJSON *rep, bool md) {
  const cJSON *file = nsys__g(rep, "file"), *win = nsys__g(rep, "window"), *tot = nsys__g(rep, "totals");
  int64_t t0 = nsys_json_obj_i64(win, "start", 0), t1 = nsys_json_obj_i64(win, "end", 0);
  char d1[32], d2[32], d3[32];
  nsys_fmt_duration(d1, sizeof d1, t1 - t0);
  if (md) nsys_strbuf_printf(b, "# nsys-ai report: `%s`\n\n", cJSON_IsString(file) ? file->valuestring : "?");
  else nsys_strbuf_printf(b, "nsys-ai report: %s\n", cJSON_IsString(file) ? file->valuestring : "?");
  /* GPUs */
  nsys_strbuf_puts(b, md ? "- **GPUs**: " : "GPUs:    ");
  /* runs of GPUs with the same name collapse: "4 x NVIDIA H100 80GB HBM3 (ids 0-3)" */
  const cJSON *g = nsys__g(rep, "gpus") ? nsys__g(rep, "gpus")->child : NULL;
  int ng = 0;
  while (g) {
    const cJSON *nm = nsys__g(g, "name");
    const char *name = cJSON_IsString(nm) ? nm->valuestring : "?";
    const cJSON *last = g;
    int run = 1;
    bool consecutive = true;
    for (const cJSON *h = g->next; h; h = h->next, run++) {
      const cJSON *hn = nsys__g(h, "name");
      if (!cJSON_IsString(hn) || strcmp(hn->valuestring, name) != 0) break;
      consecutive = consecutive && nsys__n(h, "id") == nsys__n(last, "id") + 1;
      last = h;
    }
    if (run == 1) nsys_strbuf_printf(b, "%s%.0f %s", ng ? ", " : "", nsys__n(g, "id"), name);
    else if (consecutive)
      nsys_strbuf_printf(b, "%s%d x %s (ids %.0f-%.0f)", ng ? ", " : "", run, name, nsys__n(g, "id"),
                         nsys__n(last, "id"));
    else nsys_strbuf_printf(b, "%s%d x %s", ng ? ", " : "", run, name);
    ng += run;
    g = last->next;
  }
  if (!ng) nsys_strbuf_printf(b, "%.0f device(s), names not recorded", nsys__n(tot, "devices"));
  nsys_strbuf_putc(b, '\n');
  nsys_fmt_duration(d2, sizeof d2, (int64_t)nsys__n(tot, "kernelNs"));
  nsys_fmt_duration(d3, sizeof d3, (int64_t)nsys__n(tot, "gpuBusyNs"));
  nsys_strbuf_printf(b, md ? "- **Window**: %s (%lld .. %lld ns)\n" : "Window:  %s (%lld .. %lld ns)\n", d1,
                     (long long)t0, (long long)t1);
  int ndev = (int)nsys__n(tot, "devices");
  nsys_strbuf_printf(b,
                     md ? "- **Totals**: %.0f kernels (%s kernel time, %s GPU busy over %d GPU%s), %.0f memcpy, "
                          "%.0f NVTX ranges\n"
                        : "Totals:  %.0f kernels (%s kernel time, %s GPU busy over %d GPU%s), %.0f memcpy, %.0f NVTX "
                          "ranges\n",
                     nsys__n(tot, "kernels"), d2, d3, ndev, ndev == 1 ? "" : "s", nsys__n(tot, "memcpys"),
                     nsys__n(tot, "nvtxRanges"));
  /* findings */
  const cJSON *cnt = nsys__g(rep, "counts");
  char title[128];
  snprintf(title, sizeof title, "Findings: %.0f critical, %.0f warning, %.0f info", nsys__n(cnt, "critical"),
           nsys__n(cnt, "warning"), nsys__n(cnt, "info"));
  nsys__section(b, md, title);
  const cJSON *f;
  int i = 0;
  cJSON_ArrayForEach(f, nsys__g(rep, "findings")) {
    const char *sev = cJSON_GetStringValue(nsys__g(f, "severity"));
    char up[16];
    size_t k = 0;
    for (; sev && sev[k] && k + 1 < sizeof up; k++) up[k] = (char)(sev[k] - 32 * (sev[k] >= 'a' && sev[k] <= 'z'));
    up[k] = '\0';
    const cJSON *ev = nsys__g(f, "evidence"), *ew = nsys__g(ev, "window");
    int64_t ws = nsys_json_obj_i64(ew, "start", 0), we = nsys_json_obj_i64(ew, "end", 0);
    char at[96] = "";
    if (ew && (double)(we - ws) < 0.9 * (double)(t1 - t0))
      snprintf(at, sizeof at, we - ws < 10000000 ? " [at +%.6f s .. +%.6f s]" : " [at +%.3f s .. +%.3f s]",
               (double)(ws - t0) / 1e9, (double)(we - t0) / 1e9);
    if (md) {
      nsys_strbuf_printf(b, "%d. **%s** %s%s  \n   _Fix:_ %s\n", ++i, up, cJSON_GetStringValue(nsys__g(f, "title")),
                         at, cJSON_GetStringValue(nsys__g(f, "recommendation")));
    } else {
      char head[640];
      snprintf(head, sizeof head, "[%s] %s%s", up, cJSON_GetStringValue(nsys__g(f, "title")), at);
      char num[16];
      snprintf(num, sizeof num, "%2d. ", ++i);
      nsys__wrap(b, num, "    ", head, 100);
      nsys__wrap(b, "    fix: ", "         ", cJSON_GetStringValue(nsys__g(f, "recommendation")), 100);
    }
  }
  if (!i) nsys_strbuf_puts(b, md ? "_No problems found by the rules._\n" : "  No problems found by the rules.\n");
  const cJSON *an = nsys__g(rep, "analyses");
  /* top kernels */
  static const char *const kcols[] = {"name", "count", "totalNs", "avgNs", "p95Ns", "pctOfGpu", NULL};
  nsys__section(b, md, "Top kernels");
  cJSON *t = nsys__pick(nsys__g(nsys__g(an, "top_kernels"), "rows"), kcols, 8);
  nsys_render_table(b, t, md, 0, md ? 0 : 48);
  cJSON_Delete(t);
  /* GPU time split per device */
  static const char *const ocols[] = {"device", "computeOnlyNs", "commOnlyNs", "overlapNs", "idleNs", "idlePct",
                                      "commHiddenPct", NULL};
  const cJSON *ov = nsys__g(nsys__g(an, "overlap"), "rows");
  if (cJSON_GetArraySize(ov)) {
    nsys__section(b, md, "GPU time per device (compute vs NCCL, on unions)");
    t = nsys__pick(ov, ocols, 0);
    nsys_render_table(b, t, md, 0, 0);
    cJSON_Delete(t);
  }
  /* iterations: the first GPU's rows (ranks of a data-parallel job agree) */
  const cJSON *its = nsys__g(an, "iterations");
  const cJSON *is = nsys__g(its, "summary");
  if (nsys__n(is, "count") > 0) {
    const cJSON *devs = nsys__g(is, "devices");
    int nd = cJSON_GetArraySize(devs);
    const cJSON *d0 = cJSON_GetArrayItem(devs, 0);
    char h[256];
    snprintf(h, sizeof h, "Iterations (%.0f%s by %s; median %s%s)", nsys__n(is, "count") / (nd ? nd : 1),
             nd > 1 ? " per GPU," : ",",
             cJSON_GetStringValue(nsys__g(is, "method")) ? cJSON_GetStringValue(nsys__g(is, "method")) : "?",
             (nsys_fmt_duration(d1, sizeof d1, (int64_t)nsys__n(d0, "medianNs")), d1),
             nd > 1 ? " on the first GPU shown" : "");
    nsys__section(b, md, h);
    static const char *const icols[] = {"index", "name", "durationNs", "computeNs", "ncclNs", "idleNs",
                                        "vsMedian", "outlier", NULL};
    cJSON *first = cJSON_CreateArray();
    const cJSON *r;
    int shown = 0, more = 0;
    cJSON_ArrayForEach(r, nsys__g(its, "rows")) {
      if (nsys__n(r, "device") != nsys__n(d0, "device")) continue;
      if (shown++ < 12) cJSON_AddItemToArray(first, cJSON_Duplicate(r, true));
      else more++;
    }
    t = nsys__pick(first, icols, 0);
    nsys_render_table(b, t, md, 0, 24);
    if (more) nsys_strbuf_printf(b, md ? "\n_... %d more_\n" : "  ... %d more\n", more);
    cJSON_Delete(t);
    cJSON_Delete(first);
  }
  /* largest device-level gaps (all streams idle) */
  cJSON *dg = cJSON_CreateArray();
  const cJSON *g2;
  cJSON_ArrayForEach(g2, nsys__g(nsys__g(an, "gpu_idle_gaps"), "rows")) {
    if (!cJSON_IsNull(nsys__g(g2, "stream")) || cJSON_GetArraySize(dg) >= 6) continue;
    cJSON_AddItemToArray(dg, cJSON_Duplicate(g2, true));
  }
  if (cJSON_GetArraySize(dg)) {
    nsys__section(b, md, "Largest GPU idle gaps (all streams idle)");
    static const char *const gcols[] = {"device", "start", "durationNs", "cause", "afterSync", "cpuNvtx", NULL};
    t = nsys__pick(dg, gcols, 0);
    cJSON *r;
    cJSON_ArrayForEach(r, t) {
      double st = nsys__n(r, "start");
      char rel[32];
      snprintf(rel, sizeof rel, "+%.3f s", (st - (double)t0) / 1e9);
      cJSON_ReplaceItemInObject(r, "start", cJSON_CreateString(rel));
    }
    nsys_render_table(b, t, md, 0, 40);
    cJSON_Delete(t);
  }
  cJSON_Delete(dg);
  if (!md) nsys_strbuf_puts(b, "\nDetails: nsys-ai analyze NAME FILE (nsys-ai analyze list); JSON: --format json\n");
}

void nsys_report_attach_rendering(cJSON *report, bool md) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_report_render(&b, report, md);
  cJSON_AddStringToObject(report, "rendered", b.data ? b.data : "");
  cJSON_AddStringToObject(report, "format", md ? "markdown" : "text");
  nsys_strbuf_free(&b);
}
