/* CLI commands of the capture module: doctor, runs, profile; and run names in
 * place of profile paths (nsys_cli_run_report, used by nsys_cli_open). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "methods/capture_json.h"
#include "profile/profile.h"

/* The workspace root: --root, else $NSYS_AI_WORKSPACE, else the nearest of the current
 * directory and its parents that holds a run history (.nsys-ai/runs.db, found as git finds
 * .git, so run names resolve from any subdirectory of the workspace), else the current
 * directory. */
static const char *nsys__root(const nsys_cli_args *a, char *buf, size_t cap) {
  const char *r = a ? nsys_cli_opt(a, "root") : NULL;
  if (!r) r = getenv("NSYS_AI_WORKSPACE");
  if (r && *r) return r;
  if (!getcwd(buf, cap)) return ".";
  char *dir = nsys_xstrdup(buf);
  for (;;) {
    char *db = nsys_xasprintf("%s/.nsys-ai/runs.db", strcmp(dir, "/") == 0 ? "" : dir);
    bool have = access(db, F_OK) == 0;
    free(db);
    if (have) {
      snprintf(buf, cap, "%s", dir);
      break;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || (slash == dir && dir[1] == '\0')) break; /* "/" tried: the current directory */
    slash[slash == dir ? 1 : 0] = '\0';                     /* up one level */
  }
  free(dir);
  return buf;
}

char *nsys_cli_run_report(const char *ref) {
  if (access(ref, F_OK) == 0) return NULL; /* a file: not a run */
  char cwd[PATH_MAX];
  const char *root = nsys__root(NULL, cwd, sizeof cwd);
  char *db = nsys_xasprintf("%s/.nsys-ai/runs.db", root);
  bool have = access(db, F_OK) == 0;
  free(db);
  if (!have) return NULL;
  nsys_task t;
  nsys_task_init(&t);
  nsys_history *h = nsys_history_open(root, false, &t);
  if (!h) return NULL;
  nsys_run r;
  char *out = NULL;
  if (nsys_history_get(h, ref, &r, &t)) {
    if (r.report) out = nsys_xstrdup(r.report);
    nsys_run_free(&r);
  }
  nsys_history_close(h);
  return out;
}

static void nsys__print_doctor(const cJSON *res, const char *what) {
  printf("%s: %s\n", what, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "verdict")));
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(res, "findings")) {
    printf("  [%s] %s\n      %s\n      fix: %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "severity")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "title")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "evidence")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "fix")));
    const cJSON *fl;
    bool first = true;
    cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(f, "flags")) {
      printf("%s%s", first ? "      flags: " : " ", fl->valuestring);
      first = false;
    }
    if (!first) putchar('\n');
  }
}

/* doctor on paths[0] (with the others as the same job's reports), printed as
 * text, or as JSON unless *doctor_out (optional) keeps the result. */
static int nsys__doctor_paths(nsys_cli_session *s, const char *const *paths, int n, nsys_cli_format fmt,
                              cJSON **doctor_out) {
  int code = 0;
  cJSON *params = cJSON_CreateObject();
  cJSON *with = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    const char *pid = nsys_cli_open(s, paths[i], &code);
    if (!pid) {
      cJSON_Delete(params);
      cJSON_Delete(with);
      return code;
    }
    if (i == 0) cJSON_AddStringToObject(params, "profileId", pid);
    else cJSON_AddItemToArray(with, cJSON_CreateString(pid));
  }
  if (n > 1) cJSON_AddItemToObject(params, "with", with);
  else cJSON_Delete(with);
  cJSON *res = nsys_cli_call(s, "profile/doctor", params, &code);
  if (!res) return code;
  if (fmt == NSYS_FMT_JSON && !doctor_out) nsys_cli_print_json(res);
  else if (fmt != NSYS_FMT_JSON) nsys__print_doctor(res, paths[0]);
  if (doctor_out) *doctor_out = res;
  else cJSON_Delete(res);
  return code;
}

static int nsys__cmd_doctor(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 8, &a)) return nsys_cli_usage(argv[0]);
  if (a.n_pos < 1) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = nsys__doctor_paths(&s, a.pos, a.n_pos, a.format, NULL);
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

static void nsys__print_run(const cJSON *r) {
  const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "status"));
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "interrupted"))) status = "interrupted";
  const cJSON *created = cJSON_GetObjectItemCaseSensitive(r, "createdNs");
  time_t secs = (time_t)(nsys_json_i64_or(created, 0) / 1000000000LL);
  struct tm tm;
  char when[32] = "?";
  if (gmtime_r(&secs, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  const cJSON *git = cJSON_GetObjectItemCaseSensitive(r, "git");
  const char *commit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(git, "commit"));
  const cJSON *summary = cJSON_GetObjectItemCaseSensitive(r, "summary");
  const cJSON *stats = cJSON_GetObjectItemCaseSensitive(r, "stats");
  printf("%-8s %s UTC  %-11s %.10s%s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "name")), when,
         status, commit ? commit : "-",
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(git, "dirty")) ? "+dirty" : "");
  const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(summary, "verdict"));
  if (verdict) printf("  doctor %s", verdict);
  if (cJSON_IsObject(stats))
    printf("  coverage %.1f%%", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(stats, "coverage")));
  const char *before = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "before"));
  if (before) printf("  after %s", before);
  putchar('\n');
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(r, "command"), *e;
  if (cJSON_IsArray(cmd)) {
    printf("         $");
    cJSON_ArrayForEach(e, cmd) printf(" %s", e->valuestring);
    putchar('\n');
  }
  const char *rep = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "report"));
  if (rep) printf("         %s\n", rep);
  const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "error"));
  if (err) printf("         error: %s\n", err);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "notes"))
      printf("         %s: %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "kind")),
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "text")));
}

static void nsys__print_compare(const cJSON *res) {
  const char *sides[2] = {"before", "after"};
  for (int i = 0; i < 2; i++) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(res, sides[i]);
    printf("%-6s %-8s coverage %5.1f%%  tagged %5.1f%%  %d tags (%d with kernels, %d split)  %d kernels\n", sides[i],
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "run")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "coverage")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "taggedPct")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "tags")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "taggedRanges")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "split")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "kernels")));
  }
  const char *lists[4][2] = {
      {"rangesAdded", "added"}, {"rangesRemoved", "removed"}, {"innermost", "innermost"}, {"idle", "no kernel"}};
  for (int i = 0; i < 4; i++) {
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(res, lists[i][0]))
        printf("  %-9s %s  (%d kernel names, %d launches)\n", lists[i][1],
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "tag")),
               (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "distinctKernels")),
               (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "kernels")));
  }
  printf("converged: %s\ncoverage over time:",
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "converged")) ? "yes" : "no");
  const cJSON *h;
  cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(res, "history"))
      printf(" %s %.1f%%", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "run")),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "coverage")));
  putchar('\n');
}

/* The next annotations when the later run has split tags: source/refine on its report. */
static void nsys__print_next(nsys_cli_session *s, const cJSON *cmp, const char *root) {
  const cJSON *after = cJSON_GetObjectItemCaseSensitive(cmp, "after");
  if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(after, "split")) <= 0) return;
  int code = 0;
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "workspaceRoot", root);
  cJSON_AddStringToObject(params, "run", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(after, "run")));
  cJSON *got = nsys_cli_call(s, "runs/get", params, &code);
  const char *report = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(got, "run"), "report"));
  const char *pid = report ? nsys_cli_open(s, report, &code) : NULL;
  cJSON_Delete(got);
  if (!pid) return;
  params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "profileId", pid);
  cJSON_AddStringToObject(params, "workspaceRoot", root);
  cJSON_AddNumberToObject(params, "limit", 5);
  cJSON *ref = nsys_cli_call(s, "source/refine", params, &code);
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(ref, "candidates")) {
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(c, "annotate");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(ap, "scope");
    printf("next: %s (%d kernel names)", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "tag")),
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "distinctKernels")));
    if (sc)
      printf(": nsys-ai annotate %s --statement --lines %d-%d\n",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ap, "file")),
             (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sc, "startLine")) + 1,
             (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sc, "endLine")) + 1);
    else
    {
      const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "note"));
      printf(": %s\n", note ? note : "annotate what it calls");
    }
  }
  cJSON_Delete(ref);
}

/* runs [list] | runs note RUN TEXT [--kind K] | runs record REPORT [--name N] [--before RUN] | runs compare [BEFORE AFTER] */
static int nsys__cmd_runs(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 3, &a)) return nsys_cli_usage(argv[0]);
  char cwd[PATH_MAX];
  const char *root = nsys__root(&a, cwd, sizeof cwd);
  const char *sub = a.n_pos ? a.pos[0] : "list";
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "workspaceRoot", root);
  const char *method = NULL;
  if (strcmp(sub, "list") == 0 && a.n_pos <= 1) {
    method = "runs/list";
    const char *lim = nsys_cli_opt(&a, "limit");
    if (lim) cJSON_AddNumberToObject(params, "limit", atoi(lim));
  } else if (strcmp(sub, "show") == 0 && a.n_pos == 2) {
    method = "runs/get";
    cJSON_AddStringToObject(params, "run", a.pos[1]);
  } else if (strcmp(sub, "note") == 0 && a.n_pos == 3) {
    method = "runs/note";
    cJSON_AddStringToObject(params, "run", a.pos[1]);
    cJSON_AddStringToObject(params, "text", a.pos[2]);
    const char *kind = nsys_cli_opt(&a, "kind");
    if (kind) cJSON_AddStringToObject(params, "kind", kind);
  } else if (strcmp(sub, "record") == 0 && a.n_pos == 2) {
    method = "runs/record";
    cJSON_AddStringToObject(params, "report", a.pos[1]);
    const char *k[3][2] = {{"name", "name"}, {"before", "before"}, {"note", "note"}};
    for (int i = 0; i < 3; i++)
      if (nsys_cli_opt(&a, k[i][0])) cJSON_AddStringToObject(params, k[i][1], nsys_cli_opt(&a, k[i][0]));
  } else if (strcmp(sub, "compare") == 0 && (a.n_pos == 1 || a.n_pos == 3)) {
    method = "runs/compare";
    if (a.n_pos == 3) {
      cJSON_AddStringToObject(params, "before", a.pos[1]);
      cJSON_AddStringToObject(params, "after", a.pos[2]);
    }
  }
  if (!method) {
    cJSON_Delete(params);
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  int code = 0;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *res = nsys_cli_call(&s, method, params, &code);
  if (res && a.format == NSYS_FMT_JSON) {
    nsys_cli_print_json(res);
  } else if (res && strcmp(method, "runs/list") == 0) {
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(res, "runs")) nsys__print_run(r);
    if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "runs")))
      printf("no runs in %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "historyPath")));
  } else if (res && strcmp(method, "runs/compare") == 0) {
    nsys__print_compare(res);
    nsys__print_next(&s, res, root);
  } else if (res && strcmp(method, "runs/note") == 0) {
    printf("%s: %s added\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "run")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "note"), "kind")));
  } else if (res) {
    nsys__print_run(cJSON_GetObjectItemCaseSensitive(res, "run"));
  }
  cJSON_Delete(res);
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

int nsys_cli_runs_compare_latest(int argc, char **argv) {
  char runs[] = "runs", compare[] = "compare";
  char **args = nsys_xmalloc((size_t)(argc + 2) * sizeof *args);
  args[0] = runs;
  args[1] = compare;
  for (int i = 1; i < argc; i++) args[i + 1] = argv[i];
  args[argc + 1] = NULL;
  int code = nsys__cmd_runs(argc + 1, args);
  free(args);
  return code;
}

/* nsys-ai profile [--name N] [--root DIR] [--trace T] [--nsys-flag F]... [--note TEXT] [--format F] -- CMD ... */
static int nsys__cmd_profile(int argc, char **argv) {
  int dash = -1;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  if (dash < 0 || dash == argc - 1) return nsys_cli_usage(argv[0]);
  /* options before "--": --nsys-flag may repeat, so walk them here */
  nsys_strv extra = {0};
  const char *name = NULL, *trace = NULL, *note = NULL, *root_opt = NULL, *before = NULL;
  nsys_cli_format fmt = NSYS_FMT_TEXT;
  for (int i = 1; i < dash; i += 2) { /* KEY VALUE pairs */
    const char *k = argv[i];
    const char *v = i + 1 < dash ? argv[i + 1] : NULL;
    if (!v) {
      nsys_strv_free(&extra);
      return nsys_cli_usage(argv[0]);
    }
    if (strcmp(k, "--name") == 0) name = v;
    else if (strcmp(k, "--trace") == 0) trace = v;
    else if (strcmp(k, "--note") == 0) note = v;
    else if (strcmp(k, "--root") == 0) root_opt = v;
    else if (strcmp(k, "--before") == 0) before = v;
    else if (strcmp(k, "--nsys-flag") == 0) nsys_strv_push(&extra, v);
    else if (strcmp(k, "--format") == 0 && nsys_cli_parse_format(v, &fmt)) {
    } else {
      nsys_strv_free(&extra);
      return nsys_cli_usage(argv[0]);
    }
  }
  char cwd[PATH_MAX];
  const char *root = root_opt ? root_opt : nsys__root(NULL, cwd, sizeof cwd);
  nsys_capture_spec spec = {.root = root, .cmd = argv + dash + 1, .n_cmd = argc - dash - 1, .trace = trace,
                            .extra = extra.v, .n_extra = extra.n};
  nsys_task t;
  nsys_task_init(&t);
  int code = NSYS_EXIT_OK;
  nsys_history *h = nsys_history_open(root, true, &t);
  if (!h) {
    nsys_strv_free(&extra);
    return nsys_cli_error(nsys_err_exit_code(t.err), "%s", t.err_msg);
  }
  char *nsys = nsys_find_nsys();
  nsys_strv flags = {0}, cmd = {0}, env = {0};
  nsys_capture_flags(&spec, &flags);
  for (int i = 0; i < spec.n_cmd; i++) nsys_strv_push(&cmd, spec.cmd[i]);
  nsys_capture_env(&env);
  nsys_run run_spec = {0}, run = {0}, prev = {0};
  if (before && !nsys_history_get(h, before, &prev, &t)) goto fail;
  run_spec.name = (char *)name;
  run_spec.status = "capturing";
  run_spec.command = nsys_strv_json_text(&cmd);
  run_spec.nsys_flags = nsys_strv_json_text(&flags);
  run_spec.env = nsys_strv_json_text(&env);
  run_spec.before_id = prev.id;
  nsys_capture_git(root, &run_spec.git_commit, &run_spec.git_dirty);
  bool added = nsys_history_add_with_note(h, &run_spec, "hypothesis", note, &run, &t);
  free(run_spec.command), free(run_spec.nsys_flags), free(run_spec.env), free(run_spec.git_commit);
  if (!added) goto fail;
  if (!nsys) {
    nsys_task_fail(&t, NSYS_E_NSYS_UNAVAILABLE,
                   "nsys is not installed (or not on PATH; NSYS_AI_NSYS names it): install NVIDIA Nsight Systems");
    nsys_history_finish(h, run.id, "failed", NULL, NULL, t.err_msg, NULL, &(nsys_task){0});
    goto fail;
  }
  char *dir = nsys_xasprintf("%s/runs", nsys_history_dir(h));
  mkdir(dir, 0700);
  free(dir);
  dir = nsys_xasprintf("%s/runs/%s", nsys_history_dir(h), run.name);
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    nsys_task_fail(&t, NSYS_E_IO, "cannot create %s: %s", dir, strerror(errno));
    free(dir);
    nsys_history_finish(h, run.id, "failed", NULL, NULL, t.err_msg, NULL, &(nsys_task){0});
    goto fail;
  }
  fprintf(stderr, "nsys-ai: run %s: %s profile", run.name, nsys);
  for (int i = 0; i < flags.n; i++) fprintf(stderr, " %s", flags.v[i]);
  fprintf(stderr, " -- ...\n");
  char *sqlite = NULL;
  bool captured = nsys_capture_run(nsys, &flags, &spec, dir, &sqlite, &t);
  free(dir);
  if (!captured) {
    nsys_history_finish(h, run.id, "failed", NULL, NULL, t.err_msg, NULL, &(nsys_task){0});
    goto fail;
  }
  /* the report's doctor, kept as the run's summary */
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  cJSON *doc = NULL;
  if (fmt != NSYS_FMT_JSON) printf("run %s: %s\n", run.name, sqlite);
  const char *paths[1] = {sqlite};
  code = nsys__doctor_paths(&s, paths, 1, fmt, &doc);
  char *summary = doc ? nsys_doctor_summary_text(doc) : NULL;
  char *gpu = NULL;
  if (s.n_profiles) { /* GPU names from the report */
    nsys_profile *p = nsys_registry_get(s.profiles, s.profile_id[0]);
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    for (int i = 0; p && i < p->info.n_gpus; i++)
      nsys_strbuf_printf(&b, "%s%s", i ? ", " : "", p->info.gpus[i].name ? p->info.gpus[i].name : "?");
    gpu = b.len ? nsys_strbuf_steal(&b) : NULL;
    nsys_strbuf_free(&b);
    if (p) nsys_profile_release(p);
  }
  nsys_history_finish(h, run.id, "ok", sqlite, summary, NULL, gpu, &t);
  nsys_run done_run = {0};
  if (!t.err && fmt == NSYS_FMT_JSON && doc && nsys_history_get_id(h, run.id, &done_run, &t)) {
    cJSON *out = cJSON_CreateObject(), *rj = nsys_run_json(h, &done_run, &t);
    if (rj) {
      cJSON_AddItemToObject(out, "run", rj);
      cJSON_AddItemToObject(out, "doctor", doc);
      doc = NULL;
      nsys_cli_print_json(out);
    }
    cJSON_Delete(out);
    nsys_run_free(&done_run);
  }
  if (t.err) code = nsys_cli_error(nsys_err_exit_code(t.err), "%s", t.err_msg);
  free(summary), free(gpu), free(sqlite);
  cJSON_Delete(doc);
  nsys_cli_session_dispose(&s);
  goto done;
fail:
  if (fmt == NSYS_FMT_JSON) { /* the error as JSON-RPC would answer it, for clients driving the CLI */
    cJSON *out = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(out, "error");
    cJSON_AddNumberToObject(e, "code", nsys_err_rpc_code(t.err));
    cJSON_AddStringToObject(e, "message", t.err_msg);
    if (run.name) cJSON_AddStringToObject(e, "run", run.name);
    nsys_cli_print_json(out);
    cJSON_Delete(out);
  }
  code = nsys_cli_error(nsys_err_exit_code(t.err), "%s%s%s%s", run.name ? "run " : "", run.name ? run.name : "",
                        run.name ? ": " : "", t.err_msg);
done:
  nsys_run_free(&run), nsys_run_free(&prev);
  nsys_strv_free(&flags), nsys_strv_free(&cmd), nsys_strv_free(&env), nsys_strv_free(&extra);
  free(nsys);
  nsys_history_close(h);
  return code;
}

const nsys_cli_command nsys_cli_capture[] = {
    {"doctor", "FILE|RUN [OTHER_RANK ...] [--format text|json]",
     "checks a capture's health (and the clocks of one job's reports) and names the nsys flags that fix it",
     nsys__cmd_doctor},
    {"runs", "[list|show RUN|note RUN TEXT [--kind K]|record REPORT [--name N] [--before RUN]|compare [BEFORE AFTER]] "
             "[--root DIR] [--format text|json]",
     "the workspace's run history (.nsys-ai/runs.db): runs, notes, annotation progress", nsys__cmd_runs},
    {"profile", "[--name N] [--trace T] [--nsys-flag F]... [--note TEXT] [--before RUN] [--root DIR] -- CMD ...",
     "runs nsys profile with ML defaults, exports SQLite into .nsys-ai/runs/, records the run, prints its doctor",
     nsys__cmd_profile},
    {NULL, NULL, NULL, NULL},
};
