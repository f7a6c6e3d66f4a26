/* CLI commands of the explain module:
 *   nsys-ai explain FILE KERNEL [--id N] [--llm] [--format text|json|md]
 *   nsys-ai ask FILE QUESTION [--llm|--no-llm] [--format text|json|md]
 * KERNEL is a short or demangled kernel name; --id N explains the GPU
 * operation with kernelId N instead (KERNEL then omitted). FILE may be "-"
 * to explain a name from the knowledge base alone. --format json prints
 * exactly the result of kernel/explain (agent/ask). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"

static const char *nsys__str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool nsys__num(const cJSON *o, const char *key, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v)) return false;
  *out = v->valuedouble;
  return true;
}

static void nsys__print_text(const cJSON *r) {
  const char *disp = nsys__str(r, "displayName");
  printf("%s\n", disp ? disp : "?");
  const cJSON *pat = cJSON_GetObjectItemCaseSensitive(r, "pattern");
  if (cJSON_IsObject(pat) && nsys__str(pat, "title")) printf("  %s\n", nsys__str(pat, "title"));
  const char *bound = nsys__str(r, "bound");
  if (bound && strcmp(bound, "unknown") == 0)
    printf("  origin %s, category %s, bound unknown\n", nsys__str(r, "origin"), nsys__str(r, "category"));
  else
    printf("  origin %s, category %s, likely %s-bound\n", nsys__str(r, "origin"), nsys__str(r, "category"), bound);
  const cJSON *prec = cJSON_GetObjectItemCaseSensitive(r, "precision");
  if (nsys__str(prec, "dtype") || nsys__str(prec, "tile")) {
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(prec, "tensorCores");
    printf("  precision %s, tensor cores %s", nsys__str(prec, "dtype") ? nsys__str(prec, "dtype") : "?",
           cJSON_IsBool(tc) ? (cJSON_IsTrue(tc) ? "yes" : "no") : "?");
    if (nsys__str(prec, "tile")) printf(", tile %s", nsys__str(prec, "tile"));
    printf("\n");
  }
  const char *desc = nsys__str(r, "description");
  if (desc) printf("\n  %s\n", desc);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "stats");
  double v, w, x, y;
  if (cJSON_IsObject(st)) {
    printf("\n");
    if (nsys__num(st, "count", &v) && nsys__num(st, "totalNs", &w) && nsys__num(st, "pctGpuTime", &x))
      printf("  calls %.0f, total %.3f ms (%.1f%% of GPU time)\n", v, w / 1e6, x);
    if (nsys__num(st, "avgNs", &v) && nsys__num(st, "medianNs", &w) && nsys__num(st, "p95Ns", &x))
      printf("  avg %.1f us, median %.1f us, p95 %.1f us\n", v / 1e3, w / 1e3, x / 1e3);
    if (nsys__num(st, "rank", &v) && nsys__num(st, "distinctNames", &w)) printf("  rank %.0f of %.0f names by total time\n", v, w);
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "nvtx"), "paths");
    const cJSON *p0 = cJSON_GetArrayItem(paths, 0);
    if (p0 && nsys__str(p0, "path")) printf("  NVTX %s\n", nsys__str(p0, "path"));
  } else if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "inProfile"))) {
    printf("\n  (not found in this profile: knowledge-base explanation only)\n");
  }
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, "launch");
  if (cJSON_IsObject(l)) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(l, "grid"), *b = cJSON_GetObjectItemCaseSensitive(l, "block");
    printf("  launch grid %g x %g x %g, block %g x %g x %g", cJSON_GetArrayItem(g, 0)->valuedouble,
           cJSON_GetArrayItem(g, 1)->valuedouble, cJSON_GetArrayItem(g, 2)->valuedouble, cJSON_GetArrayItem(b, 0)->valuedouble,
           cJSON_GetArrayItem(b, 1)->valuedouble, cJSON_GetArrayItem(b, 2)->valuedouble);
    if (nsys__num(l, "registersPerThread", &v)) printf(", %.0f registers", v);
    if (nsys__num(l, "staticSharedMemory", &w) && nsys__num(l, "dynamicSharedMemory", &x)) printf(", %.0f B shared", w + x);
    printf("\n");
  }
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "occupancy");
  if (cJSON_IsObject(o) && nsys__num(o, "theoretical", &y))
    printf("  theoretical occupancy %.0f%% (limited by %s)\n", 100 * y, nsys__str(o, "limiter") ? nsys__str(o, "limiter") : "?");
  const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(r, "boundReasons"), *it;
  if (cJSON_GetArraySize(reasons) > 0) {
    printf("\nwhy:\n");
    cJSON_ArrayForEach(it, reasons) printf("  - %s\n", it->valuestring);
  }
  const cJSON *sugg = cJSON_GetObjectItemCaseSensitive(r, "suggestions");
  if (cJSON_GetArraySize(sugg) > 0) {
    printf("\nwhat to do:\n");
    cJSON_ArrayForEach(it, sugg) printf("  - %s\n", it->valuestring);
  }
  const cJSON *llm = cJSON_GetObjectItemCaseSensitive(r, "llm");
  if (cJSON_IsObject(llm) && nsys__str(llm, "text")) printf("\nassistant (%s):\n%s\n", nsys__str(llm, "model"), nsys__str(llm, "text"));
}

static int nsys__explain(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 2, &a)) return nsys_cli_usage(argv[0]);
  const char *id = nsys_cli_opt(&a, "id");
  bool llm = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "llm"));
  if (a.n_pos < 1 || (a.n_pos < 2 && !id) || (a.n_pos == 2 && id)) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  cJSON *params = cJSON_CreateObject();
  bool kb_only = strcmp(a.pos[0], "-") == 0;
  if (!kb_only) {
    const char *pid = nsys_cli_open(&s, a.pos[0], &code);
    if (!pid) {
      cJSON_Delete(params);
      goto done;
    }
    cJSON_AddStringToObject(params, "profileId", pid);
  }
  if (id) {
    char *end = NULL;
    long long v = strtoll(id, &end, 10);
    if (!end || *end || v < 0) {
      cJSON_Delete(params);
      code = nsys_cli_error(NSYS_EXIT_USAGE, "explain: --id expects a non-negative integer");
      goto done;
    }
    nsys_json_add_i64(params, "kernelId", v);
  } else {
    cJSON_AddStringToObject(params, "name", a.pos[1]);
  }
  if (llm) cJSON_AddTrueToObject(params, "llm");
  cJSON *res = nsys_cli_call(&s, "kernel/explain", params, &code);
  if (res) {
    if (a.format == NSYS_FMT_JSON) nsys_cli_print_json(res);
    else if (a.format == NSYS_FMT_MD) printf("%s", nsys__str(res, "markdown") ? nsys__str(res, "markdown") : "");
    else nsys__print_text(res);
    cJSON_Delete(res);
  }
done:
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

static int nsys__ask(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 2, &a)) return nsys_cli_usage(argv[0]);
  if (a.n_pos != 2) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  const char *pid = nsys_cli_open(&s, a.pos[0], &code);
  if (pid) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "profileId", pid);
    cJSON_AddStringToObject(params, "question", a.pos[1]);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "llm"))) cJSON_AddTrueToObject(params, "llm");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "no-llm"))) cJSON_AddFalseToObject(params, "llm");
    cJSON *res = nsys_cli_call(&s, "agent/ask", params, &code);
    if (res) {
      if (a.format == NSYS_FMT_JSON) nsys_cli_print_json(res);
      else printf("%s\n", nsys__str(res, "answer") ? nsys__str(res, "answer") : "");
      cJSON_Delete(res);
    }
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

const nsys_cli_command nsys_cli_explain[] = {
    {"explain", "FILE|- KERNEL [--id N] [--llm] [--format text|json|md]",
     "what a kernel is, whether it matters in this profile, and what to do about it", nsys__explain},
    {"ask", "FILE QUESTION [--llm|--no-llm] [--format text|json|md]",
     "answer a question about the profile with evidence (and an LLM when configured)", nsys__ask},
    {NULL, NULL, NULL, NULL},
};
