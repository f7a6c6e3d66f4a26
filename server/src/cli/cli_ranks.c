/* CLI commands of rank sets: ranks (profile/openSet and the set methods,
 * rendered) and rank-summary (set/summarize: one file's rank summaries as
 * JSON, what a Dask worker runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "methods/analysis_render.h"
#include "rpc/json_int.h"

/* Text/markdown: the ranks, the clock, the collectives, the per-rank tables,
 * stragglers with causes and the NCCL summary. */
static void nsys__render(nsys_strbuf *b, const cJSON *res, bool md) {
  static const char *const sections[][2] = {{"ranks", "Ranks (file, device) on one clock"},
                                            {"overlap", "Compute vs NCCL per rank"},
                                            {"nccl", "NCCL per rank"},
                                            {"iterations", "Iterations per rank"}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(sections); i++) {
    nsys_strbuf_printf(b, md ? "\n## %s\n\n" : "\n%s\n", sections[i][1]);
    nsys_render_table(b, cJSON_GetObjectItem(res, sections[i][0]), md, 0, 40);
  }
  const cJSON *ck = cJSON_GetObjectItem(res, "clock");
  nsys_strbuf_printf(b, md ? "\n## Clock (%s)\n\n" : "\nClock (%s)\n", cJSON_GetStringValue(cJSON_GetObjectItem(ck, "method")));
  nsys_render_table(b, cJSON_GetObjectItem(ck, "nodes"), md, 0, 40);
  const cJSON *co = cJSON_GetObjectItem(res, "collectives");
  nsys_strbuf_printf(b, "\n%d collectives matched by %s (%d NCCL kernels unmatched)\n",
                     (int)cJSON_GetNumberValue(cJSON_GetObjectItem(co, "count")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(co, "matchedBy")),
                     (int)cJSON_GetNumberValue(cJSON_GetObjectItem(co, "unmatched")));
  const cJSON *st = cJSON_GetObjectItem(res, "stragglers");
  nsys_strbuf_printf(b, md ? "\n## Stragglers\n\n" : "\nStragglers\n");
  nsys_render_table(b, cJSON_GetObjectItem(st, "ranks"), md, 0, 0);
  const cJSON *w = cJSON_GetObjectItem(st, "straggler");
  if (cJSON_IsNumber(w)) nsys_strbuf_printf(b, "straggler: rank %d\n", (int)w->valuedouble);
  else nsys_strbuf_puts(b, "no straggler\n");
  const cJSON *ev = cJSON_GetObjectItem(res, "lateEvents");
  if (ev) {
    nsys_strbuf_printf(b, md ? "\n## Late arrivals\n\n" : "\nLate arrivals\n");
    nsys_render_table(b, ev, md, 40, 0);
  }
  const cJSON *nc = cJSON_GetObjectItem(res, "ncclSummary");
  if (nc) {
    nsys_strbuf_printf(b, md ? "\n## NCCL by type and size (link %s)\n\n" : "\nNCCL by type and size (link %s)\n",
                       cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(nc, "link"), "kind")));
    nsys_render_table(b, cJSON_GetObjectItem(nc, "rows"), md, 0, 0);
  }
}

/* The events without their per-cause breakdown (a table to read). */
static cJSON *nsys__events_table(const cJSON *st) {
  cJSON *out = cJSON_CreateArray();
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItem(st, "events")) {
    cJSON *o = cJSON_CreateObject();
    static const char *const keep[] = {"collective", "step", "rank", "lateNs", "cause"};
    for (size_t i = 0; i < NSYS_ARRAY_LEN(keep); i++)
      cJSON_AddItemToObject(o, keep[i], cJSON_Duplicate(cJSON_GetObjectItem(e, keep[i]), true));
    cJSON_AddItemToArray(out, o);
  }
  return out;
}

static int nsys__cmd_ranks(int argc, char **argv) {
  nsys_cli_format fmt = NSYS_FMT_TEXT;
  cJSON *params = cJSON_CreateObject();
  cJSON *paths = cJSON_AddArrayToObject(params, "paths");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--format") && i + 1 < argc) {
      if (!nsys_cli_parse_format(argv[++i], &fmt)) goto usage;
    } else if ((!strcmp(a, "--memory-budget-mb") || !strcmp(a, "--threads")) && i + 1 < argc) {
      char *end;
      long long v = strtoll(argv[++i], &end, 10);
      if (*end) goto usage;
      nsys_json_add_i64(params, a[2] == 'm' ? "memoryBudgetMb" : "threads", v);
    } else if (!strncmp(a, "--", 2)) {
      goto usage;
    } else {
      cJSON_AddItemToArray(paths, cJSON_CreateString(a));
    }
  }
  if (!cJSON_GetArraySize(paths)) goto usage;
  int rc = NSYS_EXIT_OK;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *res = nsys_cli_call(&s, "profile/openSet", params, &rc);
  if (res && fmt != NSYS_FMT_JSON) {
    const char *sid = cJSON_GetStringValue(cJSON_GetObjectItem(res, "setId"));
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "setId", sid);
    cJSON *st = nsys_cli_call(&s, "set/stragglers", p, &rc);
    if (st) cJSON_AddItemToObject(res, "lateEvents", nsys__events_table(st));
    cJSON_Delete(st);
    p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "setId", sid);
    cJSON *nc = nsys_cli_call(&s, "set/nccl", p, &rc);
    if (nc) cJSON_AddItemToObject(res, "ncclSummary", nc);
  }
  if (res) {
    if (fmt == NSYS_FMT_JSON) {
      nsys_cli_print_json(res);
    } else {
      nsys_strbuf b;
      nsys_strbuf_init(&b);
      nsys__render(&b, res, fmt == NSYS_FMT_MD);
      if (b.data) fputs(b.data, stdout);
      nsys_strbuf_free(&b);
    }
    cJSON_Delete(res);
  }
  nsys_cli_session_dispose(&s);
  return rc;
usage:
  cJSON_Delete(params);
  return nsys_cli_usage("ranks");
}

static int nsys__cmd_rank_summary(int argc, char **argv) {
  const char *file = NULL;
  bool packed = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--packed")) packed = true;
    else if (!strncmp(argv[i], "--", 2) || file) return nsys_cli_usage("rank-summary");
    else file = argv[i];
  }
  if (!file) return nsys_cli_usage("rank-summary");
  int rc = NSYS_EXIT_OK;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "path", file);
  if (packed) cJSON_AddTrueToObject(params, "packed");
  cJSON *res = nsys_cli_call(&s, "set/summarize", params, &rc);
  if (res) nsys_cli_print_json(res);
  cJSON_Delete(res);
  nsys_cli_session_dispose(&s);
  return rc;
}

const nsys_cli_command nsys_cli_ranks[] = {
    {"ranks", "FILE... [--memory-budget-mb N] [--threads N] [--format text|json|md]",
     "multi-rank set (profile/openSet): one clock, collectives matched, stragglers with causes, NCCL bandwidth",
     nsys__cmd_ranks},
    {"rank-summary", "FILE [--packed]",
     "one rank file's summary as JSON (set/summarize; what a Dask worker runs; --packed: collectives packed)",
     nsys__cmd_rank_summary},
    {NULL, NULL, NULL, NULL},
};
