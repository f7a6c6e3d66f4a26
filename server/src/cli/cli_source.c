/* CLI commands of the source module: annotate, map, refine. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "source/workspace.h"

static cJSON *nsys__scope_from_args(const nsys_cli_args *a, int *exit_code) {
  const char *fn = nsys_cli_opt(a, "function");
  const char *lines = nsys_cli_opt(a, "lines");
  if (fn) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "function", fn);
    return s;
  }
  if (lines) {
    int s0 = 0, s1 = 0;
    if (sscanf(lines, "%d-%d", &s0, &s1) != 2 || s0 < 1 || s1 < s0) {
      *exit_code = nsys_cli_error(NSYS_EXIT_USAGE, "annotate: --lines expects A-B (1-based)");
      return NULL;
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "startLine", s0 - 1);
    cJSON_AddNumberToObject(s, "endLine", s1 - 1);
    return s;
  }
  return cJSON_CreateString("file");
}

static int nsys__cli_annotate(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage(argv[0]);
  if (a.n_pos != 1) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  bool remove = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "remove"));
  bool dry = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "dry-run"));
  bool stmt = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "statement"));
  const char *root = nsys_cli_opt(&a, "root");
  char cwd[PATH_MAX];
  if (!root) root = getcwd(cwd, sizeof cwd) ? cwd : ".";
  int code = 0;
  cJSON *params = cJSON_CreateObject();
  char *file_abs = realpath(a.pos[0], NULL);
  cJSON_AddStringToObject(params, "file", file_abs ? file_abs : a.pos[0]);
  cJSON_AddStringToObject(params, "workspaceRoot", root);
  cJSON_AddBoolToObject(params, "includeText", true);
  if (!remove) {
    cJSON *scope = nsys__scope_from_args(&a, &code);
    if (!scope) {
      cJSON_Delete(params);
      cJSON_Delete(a.opts);
      free(file_abs);
      return code;
    }
    cJSON_AddItemToObject(params, "scope", scope);
    cJSON_AddStringToObject(params, "granularity", stmt ? "statement" : "function");
  }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *res = nsys_cli_call(&s, remove ? "source/unannotate" : "source/annotate", params, &code);
  if (res) {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(res, "text");
    const cJSON *edits = cJSON_GetObjectItemCaseSensitive(res, "edits");
    const cJSON *marks = cJSON_GetObjectItemCaseSensitive(res, remove ? "removed" : "added");
    int n_edits = cJSON_GetArraySize(edits);
    if (!dry && n_edits > 0 && cJSON_IsString(text)) {
      char err[600];
      if (nsys_ws_write_file(file_abs ? file_abs : a.pos[0], text->valuestring,
                             strlen(text->valuestring), err, sizeof err) != 0)
        code = nsys_cli_error(NSYS_EXIT_INPUT, "%s", err);
    }
    if (a.format == NSYS_FMT_JSON) {
      cJSON_DeleteItemFromObjectCaseSensitive(res, "text");
      nsys_cli_print_json(res);
    } else if (dry && cJSON_IsString(text)) {
      fputs(text->valuestring, stdout);
    } else if (code == 0) {
      const cJSON *m;
      cJSON_ArrayForEach(m, marks) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, remove ? "text" : "tag");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(m, "line");
        printf("%s %d: %s\n", remove ? "removed" : "added", l ? l->valueint + 1 : 0,
               cJSON_IsString(t) ? t->valuestring : "");
      }
      printf("%d range%s %s%s\n", cJSON_GetArraySize(marks), cJSON_GetArraySize(marks) == 1 ? "" : "s",
             remove ? "removed" : "added", n_edits ? "" : " (file unchanged)");
    }
    cJSON_Delete(res);
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  free(file_abs);
  return code;
}

/* map / refine: open the profile, run the method, print. */
static int nsys__cli_profile_method(int argc, char **argv, const char *method) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage(argv[0]);
  if (a.n_pos != 1) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  const char *root = nsys_cli_opt(&a, "root");
  char cwd[PATH_MAX];
  if (!root) root = getcwd(cwd, sizeof cwd) ? cwd : ".";
  int code = 0;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  const char *pid = nsys_cli_open(&s, a.pos[0], &code);
  if (pid) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "profileId", pid);
    cJSON_AddStringToObject(params, "workspaceRoot", root);
    cJSON *res = nsys_cli_call(&s, method, params, &code);
    if (res && a.format == NSYS_FMT_JSON) {
      nsys_cli_print_json(res);
    } else if (res && strcmp(method, "source/map") == 0) {
      const cJSON *f, *l;
      double gpu = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "gpuTimeNs"));
      char gbuf[32];
      nsys_fmt_duration(gbuf, sizeof gbuf, (int64_t)gpu);
      printf("GPU kernel time %s; attributed: tag %.1f%%, callchain %.1f%%, module %.1f%%; "
             "definitions found for %.1f%%\n", gbuf,
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
                 cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "strategies"), "tag"), "pctGpu")),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
                 cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "strategies"), "callchain"), "pctGpu")),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
                 cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "strategies"), "module"), "pctGpu")),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
                 cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "strategies"), "definition"), "pctGpu")));
      cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(res, "files")) {
        printf("%s  (%.1f%%)\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "file")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(f, "pctGpu")));
        cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(f, "lines")) {
          const cJSON *ks = cJSON_GetObjectItemCaseSensitive(l, "kernels");
          const cJSON *k0 = cJSON_GetArrayItem(ks, 0);
          printf("  %6d  %6.2f%%  %7d kernels  %s%s\n",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "line")),
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "pctGpu")),
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "count")),
                 k0 ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k0, "name")) : "",
                 cJSON_GetArraySize(ks) > 1 ? " ..." : "");
        }
      }
    } else if (res) {
      const cJSON *c, *st;
      printf("coverage %.1f%% of GPU time maps to exactly one kernel per tagged line "
             "(tagged %.1f%%, %d tagged ranges)\n",
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "coverage")),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "taggedPct")),
             (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "taggedRanges")));
      cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(res, "candidates")) {
        printf("%s:%d  %.1f%%  %d distinct kernels  [%s]\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "file")),
               (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "line")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "pctGpu")),
               (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "distinctKernels")),
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "tag")));
        cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(c, "statements"))
          printf("    annotate next: line %d  %s\n",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "line")),
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "text")));
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "note"));
        if (note) printf("    %s\n", note);
      }
    }
    cJSON_Delete(res);
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

static int nsys__cli_map(int argc, char **argv) { return nsys__cli_profile_method(argc, argv, "source/map"); }
static int nsys__cli_refine(int argc, char **argv) {
  /* no PROFILE: the closed loop over the workspace's runs (runs compare) */
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage(argv[0]);
  int n_pos = a.n_pos;
  cJSON_Delete(a.opts);
  if (n_pos == 0) return nsys_cli_runs_compare_latest(argc, argv);
  return nsys__cli_profile_method(argc, argv, "source/refine");
}

const nsys_cli_command nsys_cli_source[] = {
    {"annotate", "FILE [--function F | --lines A-B] [--statement] [--root DIR] [--dry-run] [--remove] [--format json]",
     "wrap Python functions/statements in NVTX ranges tagged FILE:LINE (edits FILE unless --dry-run)",
     nsys__cli_annotate},
    {"map", "PROFILE [--root DIR] [--format json]", "which source lines launched which kernels",
     nsys__cli_map},
    {"refine", "[PROFILE|RUN] [--root DIR] [--format json]",
     "tagged ranges that still cover several kernels, and what to annotate next; without PROFILE, the latest run "
     "against the one before it (runs compare)",
     nsys__cli_refine},
    {NULL, NULL, NULL, NULL},
};
