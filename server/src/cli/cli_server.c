/* CLI commands of the server: `nsys-ai serve`. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mcp/mcp_server.h"
#include "rpc/framing.h"
#include "rpc/server.h"

/* "123", "64k", "64M", "1g" -> bytes; false on anything else or 0. */
static bool nsys__parse_size(const char *s, size_t *out) {
  if (!s || !*s || *s == '-' || *s == '+') return false;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  unsigned shift = 0;
  if (*end == 'k' || *end == 'K') shift = 10, end++;
  else if (*end == 'm' || *end == 'M') shift = 20, end++;
  else if (*end == 'g' || *end == 'G') shift = 30, end++;
  if (*end == 'i' || *end == 'I') { /* KiB, MiB */
    if (!shift) return false;
    end++;
  }
  if ((*end == 'b' || *end == 'B')) end++;
  if (*end || v == 0 || v > (((unsigned long long)SIZE_MAX / 4) >> shift)) return false;
  *out = (size_t)(v << shift);
  return true;
}

static int nsys__cli_serve(int argc, char **argv) {
  nsys_serve_options opt = {NSYS_FRAME_DEFAULT_MAX, NSYS_LOG_WARN, false};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    size_t klen = eq ? (size_t)(eq - a) : strlen(a);
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    bool inline_val = eq != NULL;
    if (klen == 17 && strncmp(a, "--max-frame-bytes", klen) == 0) {
      if (!nsys__parse_size(val, &opt.max_frame_bytes))
        return nsys_cli_error(NSYS_EXIT_USAGE, "serve: --max-frame-bytes expects a positive size "
                                               "in bytes (suffixes k, M, G allowed)");
      if (!inline_val) i++;
    } else if (klen == 11 && strncmp(a, "--log-level", klen) == 0) {
      if (!nsys_log_level_parse(val, &opt.log_level))
        return nsys_cli_error(NSYS_EXIT_USAGE, "serve: --log-level must be error, warn, info or debug");
      if (!inline_val) i++;
    } else if (strcmp(a, "--test-methods") == 0) {
      opt.test_methods = true;
    } else if (strcmp(a, "--stdio") == 0) {
      /* accepted for editors that always pass it; stdio is the only transport */
    } else {
      nsys_cli_error(NSYS_EXIT_USAGE, "serve: unknown argument '%s'", a);
      return nsys_cli_usage("serve");
    }
  }
  return nsys_serve(&opt);
}

/* mcp [--profile PATH]... [--log-level L]: the MCP server (mcp/mcp_server.h). */
static int nsys__cli_mcp(int argc, char **argv) {
  nsys_mcp_options opt = {NSYS_LOG_WARN, 0, NULL, 0};
  const char **profiles = nsys_xcalloc((size_t)argc, sizeof *profiles);
  opt.profiles = profiles;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    size_t klen = eq ? (size_t)(eq - a) : strlen(a);
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    bool known = (klen == 9 && strncmp(a, "--profile", klen) == 0) || (klen == 11 && strncmp(a, "--log-level", klen) == 0);
    if (!known || !val || !*val) {
      free(profiles);
      if (known) return nsys_cli_error(NSYS_EXIT_USAGE, "mcp: %.*s expects a value", (int)klen, a);
      nsys_cli_error(NSYS_EXIT_USAGE, "mcp: unknown argument '%s'", a);
      return nsys_cli_usage("mcp");
    }
    if (klen == 9) profiles[opt.n_profiles++] = val;
    else if (!nsys_log_level_parse(val, &opt.log_level)) {
      free(profiles);
      return nsys_cli_error(NSYS_EXIT_USAGE, "mcp: --log-level must be error, warn, info or debug");
    }
    if (!eq) i++;
  }
  int code = nsys_mcp_serve(&opt);
  free(profiles);
  return code;
}

/* call METHOD PARAMS_JSON [--profile PATH]: runs any method once, in
 * process (PATH is opened first and its id put in params.profileId), and
 * prints its JSON result: exactly what the server would answer. */
static int nsys__cli_call(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 2, &a)) return nsys_cli_usage(argv[0]);
  if (a.n_pos != 2) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage(argv[0]);
  }
  cJSON *params = nsys_json_parse(a.pos[1], strlen(a.pos[1]), NULL);
  if (!cJSON_IsObject(params)) {
    cJSON_Delete(params);
    cJSON_Delete(a.opts);
    return nsys_cli_error(NSYS_EXIT_USAGE, "call: PARAMS must be a JSON object");
  }
  int code = 0;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  const char *prof = nsys_cli_opt(&a, "profile");
  const char *pid = prof ? nsys_cli_open(&s, prof, &code) : NULL;
  if (prof && !pid) {
    cJSON_Delete(params);
  } else {
    if (pid) {
      cJSON_DeleteItemFromObjectCaseSensitive(params, "profileId");
      cJSON_AddStringToObject(params, "profileId", pid);
    }
    cJSON *res = nsys_cli_call(&s, a.pos[0], params, &code);
    if (res) nsys_cli_print_json(res);
    cJSON_Delete(res);
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

const nsys_cli_command nsys_cli_server[] = {
    {"call", "METHOD PARAMS_JSON [--profile PATH]",
     "run one server method in process and print its JSON result (scripting and debugging)",
     nsys__cli_call},
    {"mcp", "[--profile PATH]... [--log-level error|warn|info|debug]",
     "Model Context Protocol server on stdin/stdout (newline-delimited JSON-RPC): every analysis as a tool "
     "for agents (docs/agents.md)",
     nsys__cli_mcp},
    {"serve", "[--max-frame-bytes N] [--log-level error|warn|info|debug] [--test-methods]",
     "JSON-RPC 2.0 server on stdin/stdout (LSP framing); logs go to stderr",
     nsys__cli_serve},
    {NULL, NULL, NULL, NULL},
};
