/* nsys-ai diff BASE COMPARE [--gate] [--threshold K=V]... [--gate-config FILE]:
 * profile/diff, and a CI gate with documented exit codes (docs/diff.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_gate.h"
#include "cli/cli.h"
#include "methods/diff_json.h"
#include "rpc/json_int.h"

/* Exit codes of the gate (docs/diff.md); 1 and 2 are the CLI's usage and input errors. */
enum { NSYS_EXIT_REGRESSION = 3, NSYS_EXIT_INCOMPARABLE = 4 };

#define NSYS__GATE_CONFIG_MAX (1 << 20)

static bool nsys__read_config(const char *path, nsys_diff_thresholds *t) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    nsys_cli_error(NSYS_EXIT_USAGE, "diff: --gate-config %s: cannot open", path);
    return false;
  }
  char *buf = nsys_xmalloc(NSYS__GATE_CONFIG_MAX + 1);
  size_t n = fread(buf, 1, NSYS__GATE_CONFIG_MAX + 1, f);
  bool rd_err = ferror(f);
  fclose(f);
  char err[320];
  bool ok = false;
  if (rd_err) nsys_cli_error(NSYS_EXIT_USAGE, "diff: --gate-config %s: read error", path);
  else if (n > NSYS__GATE_CONFIG_MAX) nsys_cli_error(NSYS_EXIT_USAGE, "diff: --gate-config %s: larger than 1 MiB", path);
  else if (!(ok = nsys_diff_gate_config_parse(t, buf, n, err, sizeof err)))
    nsys_cli_error(NSYS_EXIT_USAGE, "diff: %s: %s", path, err);
  free(buf);
  return ok;
}

static cJSON *nsys__thresholds_json(const nsys_diff_thresholds *t) {
  cJSON *o = cJSON_CreateObject();
  for (int c = 0; c < NSYS_DIFF_NCOMP; c++)
    if (t->set[c]) cJSON_AddNumberToObject(o, nsys_diff_comp_names[c], t->pct[c]);
  if (t->n_fam) {
    cJSON *f = cJSON_AddObjectToObject(o, "families");
    for (uint32_t i = 0; i < t->n_fam; i++) cJSON_AddNumberToObject(f, t->fam[i].family, t->fam[i].pct);
  }
  return o;
}

static int nsys__cmd_diff(int argc, char **argv) {
  const char *pos[2];
  int n_pos = 0;
  nsys_cli_format fmt = NSYS_FMT_TEXT;
  bool gate = false;
  int64_t limit = 50;
  nsys_diff_thresholds th;
  nsys_diff_thresholds_init(&th);
  char err[320];
  int rc = NSYS_EXIT_OK;
  for (int i = 1; i < argc && rc == NSYS_EXIT_OK; i++) {
    const char *a = argv[i], *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
    size_t kl = eq ? (size_t)(eq - a) : strlen(a);
    const char *val = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
#define NSYS__OPT(name) (kl == strlen(name) && !strncmp(a, name, kl))
    if (strncmp(a, "--", 2)) {
      if (n_pos == 2) rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: unexpected argument '%s'", a);
      else pos[n_pos++] = a;
      continue;
    }
    if (NSYS__OPT("--gate")) {
      gate = true;
      if (eq) rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: --gate takes no value");
      continue;
    }
    if (!val) {
      rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: %.*s needs a value", (int)kl, a);
      break;
    }
    if (!eq) i++;
    if (NSYS__OPT("--format")) {
      if (!nsys_cli_parse_format(val, &fmt)) rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: --format must be text, json or md");
    } else if (NSYS__OPT("--threshold")) {
      gate = true;
      if (!nsys_diff_threshold_parse(&th, val, err, sizeof err)) rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: %s", err);
    } else if (NSYS__OPT("--gate-config")) {
      gate = true;
      if (!nsys__read_config(val, &th)) rc = NSYS_EXIT_USAGE;
    } else if (NSYS__OPT("--limit")) {
      char *end = NULL;
      limit = strtoll(val, &end, 10);
      if (!*val || *end || limit < 1 || limit > 1000) rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: --limit must be 1..1000");
    } else {
      rc = nsys_cli_error(NSYS_EXIT_USAGE, "diff: unknown option '%.*s'", (int)kl, a);
    }
#undef NSYS__OPT
  }
  if (rc == NSYS_EXIT_OK && n_pos != 2) rc = nsys_cli_usage("diff");
  if (rc != NSYS_EXIT_OK) {
    nsys_diff_thresholds_free(&th);
    return rc;
  }
  if (gate && !nsys_diff_thresholds_any(&th)) nsys_diff_threshold_parse(&th, "step=5%", err, sizeof err);
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  const char *ida = nsys_cli_open(&s, pos[0], &rc);
  const char *idb = ida ? nsys_cli_open(&s, pos[1], &rc) : NULL;
  if (ida && idb) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "base", ida);
    cJSON_AddStringToObject(params, "compare", idb);
    nsys_json_add_i64(params, "limit", limit);
    if (gate) cJSON_AddItemToObject(params, "thresholds", nsys__thresholds_json(&th));
    cJSON *res = nsys_cli_call(&s, "profile/diff", params, &rc);
    if (res) {
      nsys_cli_print_result(res, fmt, nsys_diff_render);
      const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "gate"), "status"));
      if (gate && st && !strcmp(st, "regression")) rc = NSYS_EXIT_REGRESSION;
      else if (gate && st && !strcmp(st, "incomparable")) rc = NSYS_EXIT_INCOMPARABLE;
      cJSON_Delete(res);
    }
  }
  nsys_cli_session_dispose(&s);
  nsys_diff_thresholds_free(&th);
  return rc;
}

const nsys_cli_command nsys_cli_diff[] = {
    {"diff",
     "BASE COMPARE [--gate] [--threshold KEY=PCT]... [--gate-config FILE] [--limit N] [--format text|json|md]",
     "compare two profiles on their steady state: verdict beyond noise, components, ranked deltas; --gate exits 3 "
     "on a regression, 4 when incomparable (docs/diff.md)",
     nsys__cmd_diff},
    {NULL, NULL, NULL, NULL},
};
