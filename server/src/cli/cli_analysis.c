/* CLI commands of the analysis module: analyze, report, ranks (diff: cli_diff.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "methods/analysis_render.h"
#include "analysis/report.h"
#include "methods/analysis_params.h"
#include "methods/reply_limit.h"
#include "rpc/json_int.h"
#include "cli/cli.h"

/* Prints a method result (JSON as is, else rendered as text or markdown) and frees it. */
static void nsys__emit(cJSON *res, nsys_cli_format fmt,
                       void (*render)(nsys_strbuf *, const cJSON *, bool markdown)) {
  if (!res) return;
  nsys_cli_print_result(res, fmt, render);
  cJSON_Delete(res);
}

static int nsys__cmd_analyze(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 2, &a)) return nsys_cli_usage("analyze");
  int rc = NSYS_EXIT_OK;
  if (a.n_pos == 1 && (!strcmp(a.pos[0], "list") || !strcmp(a.pos[0], "--list"))) {
    cJSON *list = nsys_analysis_list_json();
    if (a.format == NSYS_FMT_JSON) {
      nsys_cli_print_json(list);
    } else {
      for (const cJSON *it = list->child; it; it = it->next) {
        printf("%-24s %s\n", cJSON_GetObjectItem(it, "name")->valuestring,
               cJSON_GetObjectItem(it, "description")->valuestring);
        for (const cJSON *p = cJSON_GetObjectItem(it, "params")->child; p; p = p->next) {
          nsys_strbuf b;
          nsys_strbuf_init(&b);
          nsys_render_value(&b, NULL, cJSON_GetObjectItem(p, "default"));
          printf("    --param %s=%s  (%s) %s\n", cJSON_GetObjectItem(p, "name")->valuestring,
                 b.data ? b.data : "", cJSON_GetObjectItem(p, "type")->valuestring,
                 cJSON_GetObjectItem(p, "description")->valuestring);
          nsys_strbuf_free(&b);
        }
      }
    }
    cJSON_Delete(list);
    cJSON_Delete(a.opts);
    return rc;
  }
  if (a.n_pos != 2) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("analyze");
  }
  if (!nsys_analysis_find(a.pos[0])) {
    cJSON_Delete(a.opts);
    return nsys_cli_error(NSYS_EXIT_USAGE, "unknown analysis '%s' (see nsys-ai analyze list)", a.pos[0]);
  }
  for (const cJSON *o = a.opts->child; o; o = o->next)
    if (strcmp(o->string, "param") != 0) {
      nsys_cli_error(NSYS_EXIT_USAGE, "analyze: unknown option --%s (use --param k=v)", o->string);
      cJSON_Delete(a.opts);
      return nsys_cli_usage("analyze");
    }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  const char *id = nsys_cli_open(&s, a.pos[1], &rc);
  if (id) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "profileId", id);
    cJSON_AddStringToObject(params, "name", a.pos[0]);
    cJSON *pp = cJSON_DetachItemFromObjectCaseSensitive(a.opts, "param");
    if (pp) cJSON_AddItemToObject(params, "params", pp);
    /* a terminal or a pipe takes every row: no reply-size cap */
    cJSON_AddItemToObject(params, "maxBytes", nsys_json_i64(NSYS_REPLY_MAX_BYTES_CEIL));
    nsys__emit(nsys_cli_call(&s, "analysis/run", params, &rc), a.format, nsys_render_result);
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return rc;
}

static int nsys__cmd_report(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage("report");
  if (a.n_pos != 1 || a.opts->child) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("report");
  }
  int rc = NSYS_EXIT_OK;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  const char *id = nsys_cli_open(&s, a.pos[0], &rc);
  if (id) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "profileId", id);
    cJSON_AddItemToObject(params, "maxBytes", nsys_json_i64(NSYS_REPLY_MAX_BYTES_CEIL));
    nsys__emit(nsys_cli_call(&s, "report/generate", params, &rc), a.format, nsys_report_render);
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return rc;
}

/* Text/markdown for profile/openSet: the per-rank tables and the straggler verdict. */
static void nsys__render_ranks(nsys_strbuf *b, const cJSON *res, bool md) {
  static const char *const sections[][2] = {{"ranks", "Ranks (file, device) aligned on session start"},
                                            {"overlap", "Compute vs NCCL per rank"},
                                            {"nccl", "NCCL per rank"},
                                            {"iterations", "Iterations per rank"}};
  for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
    nsys_strbuf_printf(b, md ? "\n## %s\n\n" : "\n%s\n", sections[i][1]);
    nsys_render_table(b, cJSON_GetObjectItem(res, sections[i][0]), md, 0, 40);
  }
  const cJSON *st = cJSON_GetObjectItem(res, "stragglers");
  nsys_strbuf_printf(b, md ? "\n## Stragglers\n\n" : "\nStragglers (%s)\n",
                     md ? "" : cJSON_GetStringValue(cJSON_GetObjectItem(st, "rule")));
  nsys_render_table(b, cJSON_GetObjectItem(st, "ranks"), md, 0, 0);
  const cJSON *w = cJSON_GetObjectItem(st, "straggler");
  if (cJSON_IsNumber(w))
    nsys_strbuf_printf(b, "straggler: rank %d (last to start most of %d matched collectives)\n",
                       (int)w->valuedouble, (int)cJSON_GetNumberValue(cJSON_GetObjectItem(st, "matchedCollectives")));
  else
    nsys_strbuf_puts(b, "no straggler: no rank is last in more than half of the matched collectives\n");
}

static int nsys__cmd_ranks(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 8, &a)) return nsys_cli_usage("ranks");
  if (a.n_pos < 1 || a.opts->child) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("ranks");
  }
  int rc = NSYS_EXIT_OK;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *params = cJSON_CreateObject();
  cJSON *paths = cJSON_AddArrayToObject(params, "paths");
  for (int i = 0; i < a.n_pos; i++) cJSON_AddItemToArray(paths, cJSON_CreateString(a.pos[i]));
  nsys__emit(nsys_cli_call(&s, "profile/openSet", params, &rc), a.format, nsys__render_ranks);
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return rc;
}

const nsys_cli_command nsys_cli_analysis[] = {
    {"analyze", "NAME FILE [--param k=v]... [--format text|json|md]  |  analyze list",
     "run one analysis (nsys-ai analyze list shows them and their params)", nsys__cmd_analyze},
    {"report", "FILE [--format text|json|md]",
     "root-cause report: findings with evidence and recommendations", nsys__cmd_report},
    {"ranks", "FILE... [--format text|json|md]",
     "multi-rank set (profile/openSet): align ranks, per-rank tables, stragglers", nsys__cmd_ranks},
    {NULL, NULL, NULL, NULL},
};
