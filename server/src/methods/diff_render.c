/* Text and Markdown of a profile/diff result (the JSON the method answers). */
#include <string.h>

#include "methods/analysis_render.h"
#include "methods/diff_json.h"

static const cJSON *nsys__g(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const char *nsys__s(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(nsys__g(o, k));
  return s ? s : "";
}

static void nsys__side_line(nsys_strbuf *b, const char *label, const cJSON *s, bool md) {
  const cJSON *g = nsys__g(s, "gpus");
  const char *model = cJSON_GetStringValue(nsys__g(g, "model"));
  nsys_strbuf_printf(b, md ? "- %s: `%s` (%s x%d; " : "  %-8s %s\n           %s x%d; ", label, nsys__s(s, "file"),
                     model ? model : "GPU unknown", (int)cJSON_GetNumberValue(nsys__g(g, "count")));
  int n = (int)cJSON_GetNumberValue(nsys__g(s, "iterations"));
  if (n)
    nsys_strbuf_printf(b, "%d iterations by %s, %d warm-up, %d steady", n, nsys__s(s, "iterationMethod"),
                       (int)cJSON_GetNumberValue(nsys__g(s, "warmup")), (int)cJSON_GetNumberValue(nsys__g(s, "steady")));
  else
    nsys_strbuf_puts(b, "no iterations: compared whole");
  nsys_strbuf_puts(b, md ? ")\n" : "\n");
}

/* Copies the listed fields of each row (cells keep their key, so *Ns renders as a duration). */
static cJSON *nsys__pick(const cJSON *rows, const char *const *keys, size_t nk, const char *const *as, int max) {
  cJSON *t = cJSON_CreateArray();
  const cJSON *r;
  int n = 0;
  cJSON_ArrayForEach(r, rows) {
    if (max && n++ >= max) break;
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < nk; i++) {
      const cJSON *v = strchr(keys[i], '.') ? NULL : nsys__g(r, keys[i]);
      if (strchr(keys[i], '.')) { /* one level down: "base.medianNs" */
        char k0[32];
        size_t l = (size_t)(strchr(keys[i], '.') - keys[i]);
        memcpy(k0, keys[i], l);
        k0[l] = '\0';
        v = nsys__g(nsys__g(r, k0), strchr(keys[i], '.') + 1);
      }
      cJSON_AddItemToObject(o, as[i], v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
    }
    cJSON_AddItemToArray(t, o);
  }
  return t;
}

void nsys_diff_render(nsys_strbuf *b, const cJSON *d, bool md) {
  nsys_strbuf_puts(b, md ? "# nsys-ai diff\n\n" : "nsys-ai diff\n");
  nsys__side_line(b, "base:", nsys__g(d, "base"), md);
  nsys__side_line(b, "compare:", nsys__g(d, "compare"), md);
  const cJSON *cm = nsys__g(d, "comparability");
  nsys_strbuf_printf(b, "\n%sComparability %.2f (%s)\n", md ? "**" : "", cJSON_GetNumberValue(nsys__g(cm, "score")),
                     cJSON_IsTrue(nsys__g(cm, "comparable")) ? "comparable" : "NOT comparable");
  if (md) nsys_strbuf_puts(b, "**\n");
  const cJSON *r;
  cJSON_ArrayForEach(r, nsys__g(cm, "reasons"))
    nsys_strbuf_printf(b, "%s[%s] %s\n", md ? "- " : "  ", nsys__s(r, "severity"), nsys__s(r, "message"));
  nsys_strbuf_printf(b, "\n%s\n", nsys__s(nsys__g(d, "verdict"), "text"));
  static const char *const ck[] = {"name", "base.medianNs", "compare.medianNs", "deltaNs", "deltaPct", "noiseNs",
                                   "confidence", "verdict"};
  static const char *const ca[] = {"component", "baseNs", "compareNs", "deltaNs", "deltaPct", "noiseNs",
                                   "confidence", "verdict"};
  nsys_strbuf_puts(b, md ? "\n## Steady-state median per iteration\n\n" : "\nSteady-state median per iteration\n");
  cJSON *t = nsys__pick(nsys__g(d, "components"), ck, NSYS_ARRAY_LEN(ck), ca, 0);
  nsys_render_table(b, t, md, 0, 0);
  cJSON_Delete(t);
  static const char *const dk[] = {"kind", "change", "label", "baseNs", "compareNs", "deltaNs", "deltaPct"};
  nsys_strbuf_printf(b, md ? "\n## Where it changed (per iteration, ranked; %d of %d)\n\n"
                           : "\nWhere it changed (per iteration, ranked; %d of %d)\n",
                     cJSON_GetArraySize(nsys__g(d, "deltas")) < 25 ? cJSON_GetArraySize(nsys__g(d, "deltas")) : 25,
                     (int)cJSON_GetNumberValue(nsys__g(d, "deltasTotal")));
  t = nsys__pick(nsys__g(d, "deltas"), dk, NSYS_ARRAY_LEN(dk), dk, 25);
  nsys_render_table(b, t, md, 0, md ? 0 : 56);
  cJSON_Delete(t);
  const cJSON *g = nsys__g(d, "gate");
  if (g) {
    nsys_strbuf_printf(b, md ? "\n## Gate: %s\n\n" : "\nGate: %s\n", nsys__s(g, "status"));
    cJSON_ArrayForEach(r, nsys__g(g, "failures")) nsys_strbuf_printf(b, "%s%s\n", md ? "- " : "  ", nsys__s(r, "message"));
  }
}
