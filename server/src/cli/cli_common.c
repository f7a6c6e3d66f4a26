#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/method_table.h"

void nsys_cli_session_init(nsys_cli_session *s) {
  memset(s, 0, sizeof *s);
  s->profiles = nsys_registry_new();
}

void nsys_cli_session_dispose(nsys_cli_session *s) {
  nsys_registry_free(s->profiles);
  s->profiles = NULL;
}

int nsys_cli_error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("nsys-ai: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}

/* Progress bar on a TTY: "title [#####.....]  42% message" redrawn in place. */
typedef struct {
  char title[64];
} nsys__bar;

static void nsys__cli_progress(void *ctx, nsys_progress_kind kind, const char *title,
                               const char *message, int percent) {
  nsys__bar *bar = ctx;
  if (kind == NSYS_PROGRESS_BEGIN) {
    snprintf(bar->title, sizeof bar->title, "%s", title ? title : "working");
  }
  if (kind == NSYS_PROGRESS_END) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    return;
  }
  int width = 30, filled = percent * width / 100;
  char cells[31];
  for (int i = 0; i < width; i++) cells[i] = i < filled ? '#' : '.';
  cells[width] = '\0';
  fprintf(stderr, "\r\033[K%s [%s] %3d%% %s", bar->title, cells, percent, message ? message : "");
  fflush(stderr);
}

cJSON *nsys_cli_call(nsys_cli_session *s, const char *method, cJSON *params, int *exit_code) {
  const nsys_method *m = nsys_method_find(method);
  if (!m) {
    cJSON_Delete(params);
    *exit_code = nsys_cli_error(NSYS_EXIT_USAGE, "unknown method %s", method);
    return NULL;
  }
  nsys_call call;
  nsys_call_init(&call, method, params, s->profiles);
  nsys__bar bar = {{0}};
  if (isatty(STDERR_FILENO) && !getenv("NSYS_AI_NO_PROGRESS")) {
    call.task.progress_fn = nsys__cli_progress;
    call.task.progress_ctx = &bar;
  }
  cJSON *result = nsys_method_run(m->fn, &call);
  if (!result) {
    if (call.task.err == NSYS_OK) nsys_call_fail(&call, NSYS_E_INTERNAL, "%s returned no result", method);
    *exit_code = nsys_cli_error(nsys_err_exit_code(call.task.err), "%s", call.task.err_msg);
  } else {
    *exit_code = NSYS_EXIT_OK;
  }
  nsys_call_dispose(&call);
  cJSON_Delete(params);
  return result;
}

const char *nsys_cli_open(nsys_cli_session *s, const char *path, int *exit_code) {
  if ((size_t)s->n_profiles >= NSYS_ARRAY_LEN(s->profile_id)) {
    *exit_code = nsys_cli_error(NSYS_EXIT_USAGE, "too many profiles");
    return NULL;
  }
  char *run = nsys_cli_run_report(path); /* a run's name: its report */
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "path", run ? run : path);
  free(run);
  cJSON *res = nsys_cli_call(s, "profile/open", params, exit_code);
  if (!res) return NULL;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(res, "profileId");
  if (!cJSON_IsString(id)) {
    cJSON_Delete(res);
    *exit_code = nsys_cli_error(NSYS_EXIT_INPUT, "profile/open returned no profileId");
    return NULL;
  }
  char *slot = s->profile_id[s->n_profiles++];
  snprintf(slot, sizeof s->profile_id[0], "%s", id->valuestring);
  cJSON_Delete(res);
  return slot;
}

bool nsys_cli_parse_format(const char *value, nsys_cli_format *out) {
  if (!value) return false;
  if (strcmp(value, "text") == 0) *out = NSYS_FMT_TEXT;
  else if (strcmp(value, "json") == 0) *out = NSYS_FMT_JSON;
  else if (strcmp(value, "md") == 0 || strcmp(value, "markdown") == 0) *out = NSYS_FMT_MD;
  else return false;
  return true;
}

void nsys_cli_print_json(const cJSON *json) {
  char *s = nsys_json_print(json, true); /* integers exact (rpc/json_int.h) */
  fputs(s, stdout);
  fputc('\n', stdout);
  free(s);
}

static const nsys_cli_command *nsys__find_command(const char *name);

int nsys_cli_usage(const char *command) {
  const nsys_cli_command *c = nsys__find_command(command);
  if (c) fprintf(stderr, "usage: nsys-ai %s %s\n", c->name, c->usage);
  else fprintf(stderr, "usage: nsys-ai COMMAND ... (see nsys-ai --help)\n");
  return NSYS_EXIT_USAGE;
}

bool nsys_cli_parse_args(int argc, char **argv, int max_pos, nsys_cli_args *out) {
  memset(out, 0, sizeof *out);
  out->format = NSYS_FMT_TEXT;
  out->opts = cJSON_CreateObject();
  const char *cmd = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0 || strcmp(a, "--") == 0 || a[2] == '\0') {
      if (strcmp(a, "--") == 0) continue;
      if (out->n_pos >= max_pos || out->n_pos >= (int)NSYS_ARRAY_LEN(out->pos)) {
        nsys_cli_error(NSYS_EXIT_USAGE, "%s: unexpected argument '%s'", cmd, a);
        goto fail;
      }
      out->pos[out->n_pos++] = a;
      continue;
    }
    char key[64];
    const char *val = NULL;
    const char *eq = strchr(a + 2, '=');
    size_t klen = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
    if (klen >= sizeof key) {
      nsys_cli_error(NSYS_EXIT_USAGE, "%s: option too long", cmd);
      goto fail;
    }
    memcpy(key, a + 2, klen);
    key[klen] = '\0';
    if (eq) val = eq + 1;
    else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) val = argv[++i];
    if (strcmp(key, "format") == 0) {
      if (!nsys_cli_parse_format(val, &out->format)) {
        nsys_cli_error(NSYS_EXIT_USAGE, "%s: --format must be text, json or md", cmd);
        goto fail;
      }
    } else if (strcmp(key, "param") == 0) {
      const char *peq = val ? strchr(val, '=') : NULL;
      if (!peq || peq == val) {
        nsys_cli_error(NSYS_EXIT_USAGE, "%s: --param expects k=v", cmd);
        goto fail;
      }
      cJSON *param = cJSON_GetObjectItemCaseSensitive(out->opts, "param");
      if (!param) param = cJSON_AddObjectToObject(out->opts, "param");
      char *k = nsys_xstrndup(val, (size_t)(peq - val));
      cJSON_DeleteItemFromObjectCaseSensitive(param, k);
      cJSON_AddStringToObject(param, k, peq + 1);
      free(k);
    } else if (val) {
      cJSON_DeleteItemFromObjectCaseSensitive(out->opts, key);
      cJSON_AddStringToObject(out->opts, key, val);
    } else {
      cJSON_DeleteItemFromObjectCaseSensitive(out->opts, key);
      cJSON_AddTrueToObject(out->opts, key);
    }
  }
  return true;
fail:
  cJSON_Delete(out->opts);
  out->opts = NULL;
  return false;
}

void nsys_cli_print_result(const cJSON *res, nsys_cli_format fmt,
                           void (*render)(nsys_strbuf *, const cJSON *, bool markdown)) {
  if (fmt == NSYS_FMT_JSON) {
    nsys_cli_print_json(res);
    return;
  }
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  render(&b, res, fmt == NSYS_FMT_MD);
  if (b.data) fputs(b.data, stdout);
  nsys_strbuf_free(&b);
}

const char *nsys_cli_opt(const nsys_cli_args *a, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(a->opts, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const nsys_cli_command *const nsys__cli_tables[] = {
    nsys_cli_profile, nsys_cli_timeline, nsys_cli_analysis, nsys_cli_diff,
    nsys_cli_explain, nsys_cli_source, nsys_cli_capture, nsys_cli_server,
};

static const nsys_cli_command *nsys__find_command(const char *name) {
  if (!name) return NULL;
  for (size_t t = 0; t < NSYS_ARRAY_LEN(nsys__cli_tables); t++)
    for (const nsys_cli_command *c = nsys__cli_tables[t]; c->name; c++)
      if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

static void nsys__print_help(FILE *f) {
  fprintf(f,
          "nsys-ai %s: answers from NVIDIA Nsight Systems profiles\n\n"
          "usage: nsys-ai COMMAND [ARGS] [--format text|json|md]\n\n"
          "commands:\n",
          NSYS_AI_VERSION);
  for (size_t t = 0; t < NSYS_ARRAY_LEN(nsys__cli_tables); t++)
    for (const nsys_cli_command *c = nsys__cli_tables[t]; c->name; c++)
      fprintf(f, "  %-10s %s\n             %s\n", c->name, c->usage, c->summary);
  fprintf(f,
          "\n--format json prints exactly what the server's method returns.\n"
          "Exit codes: 0 ok, 1 usage error, 2 input error.\n"
          "Environment: NSYS_AI_CACHE_DIR (index cache), NSYS_AI_NO_PROGRESS.\n");
}

int nsys_cli_main(int argc, char **argv) {
  if (argc < 2) {
    nsys__print_help(stderr);
    return NSYS_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    nsys__print_help(stdout);
    return NSYS_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
    printf("nsys-ai %s\n", NSYS_AI_VERSION);
    return NSYS_EXIT_OK;
  }
  const nsys_cli_command *c = nsys__find_command(cmd);
  if (!c) return nsys_cli_error(NSYS_EXIT_USAGE, "unknown command '%s' (see nsys-ai --help)", cmd);
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: nsys-ai %s %s\n  %s\n", c->name, c->usage, c->summary);
      return NSYS_EXIT_OK;
    }
  }
  int rc = c->run(argc - 1, argv + 1);
  /* The answer goes out now; a freshly built index is still being saved to
   * the cache in the background (seconds at 10M kernels): say so on a TTY
   * while waiting for it, rather than hang silently before the prompt. */
  fflush(stdout);
  if (nsys_index_saves_pending() && isatty(STDERR_FILENO) && !getenv("NSYS_AI_NO_PROGRESS")) {
    fputs("nsys-ai: saving the index cache for the next run...", stderr);
    fflush(stderr);
    nsys_index_wait_saves();
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  return rc;
}
