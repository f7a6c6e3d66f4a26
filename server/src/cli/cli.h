/* The CLI: `nsys-ai COMMAND ...`. Every command runs the same method
 * handlers as the server, synchronously, so `--format json` prints exactly
 * the RPC result. Exit codes: 0 ok, 1 usage, 2 input error (one line on
 * stderr). Each module lists its commands in an array ending with {NULL}. */
#ifndef NSYS_CLI_H
#define NSYS_CLI_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "rpc/call.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"

enum { NSYS_EXIT_OK = 0, NSYS_EXIT_USAGE = 1, NSYS_EXIT_INPUT = 2 };

typedef enum { NSYS_FMT_TEXT, NSYS_FMT_JSON, NSYS_FMT_MD } nsys_cli_format;

typedef struct nsys_cli_command {
  const char *name;
  const char *usage;   /* "FILE [--format text|json]" */
  const char *summary; /* one line for --help */
  int (*run)(int argc, char **argv); /* argv[0] is the command name */
} nsys_cli_command;

extern const nsys_cli_command nsys_cli_profile[];
extern const nsys_cli_command nsys_cli_timeline[];
extern const nsys_cli_command nsys_cli_analysis[];
extern const nsys_cli_command nsys_cli_diff[];
extern const nsys_cli_command nsys_cli_explain[];
extern const nsys_cli_command nsys_cli_source[];
extern const nsys_cli_command nsys_cli_server[];
extern const nsys_cli_command nsys_cli_capture[];
extern const nsys_cli_command nsys_cli_ranks[];

/* The report of a run named `ref` in the workspace's history (cwd or
 * $NSYS_AI_WORKSPACE) when ref is not an existing file; NULL otherwise.
 * Caller frees. */
char *nsys_cli_run_report(const char *ref);
/* `runs compare [--root DIR] [--format F]` with argv[1..] as its options: the
 * latest run against the one before it, and the next annotations (what
 * `refine` without a PROFILE prints). */
int nsys_cli_runs_compare_latest(int argc, char **argv);

/* A CLI session: a private profile registry plus the profiles it opened. */
typedef struct nsys_cli_session {
  struct nsys_profile_registry *profiles;
  char profile_id[16][16];
  int n_profiles;
} nsys_cli_session;

void nsys_cli_session_init(nsys_cli_session *s);
void nsys_cli_session_dispose(nsys_cli_session *s);

/* Runs `method` with `params` (consumed) synchronously. Shows a progress bar
 * on stderr when stderr is a TTY. On error prints "nsys-ai: MESSAGE" to
 * stderr, sets *exit_code and returns NULL. */
cJSON *nsys_cli_call(nsys_cli_session *s, const char *method, cJSON *params, int *exit_code);

/* profile/open on path; returns the profileId (owned by the session) or NULL
 * after printing the error and setting *exit_code. */
const char *nsys_cli_open(nsys_cli_session *s, const char *path, int *exit_code);

/* Parses "--format X" / "--format=X"; returns false on a bad value. */
bool nsys_cli_parse_format(const char *value, nsys_cli_format *out);

/* Pretty-prints JSON to stdout followed by a newline. */
void nsys_cli_print_json(const cJSON *json);
/* Prints a method result: JSON as is, else rendered as text or Markdown. */
void nsys_cli_print_result(const cJSON *res, nsys_cli_format fmt,
                           void (*render)(nsys_strbuf *, const cJSON *, bool markdown));

/* Prints "nsys-ai: msg" to stderr and returns `code`. */
int nsys_cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Usage error for a command: prints its usage line and returns 1. */
int nsys_cli_usage(const char *command);

/* Generic argument walker for the common shape
 *   CMD [positional...] [--format F] [--param k=v]... [--key value]...
 * Positionals go to pos[] (up to max_pos); "--format" is parsed into *fmt;
 * any other "--key value" / "--key=value" / "--flag" goes to `opts` as a
 * JSON object (value strings; flags become true; repeated --param k=v are
 * collected into opts.param as an object). Returns false on a usage error
 * (message already printed). */
typedef struct nsys_cli_args {
  const char *pos[8];
  int n_pos;
  nsys_cli_format format;
  cJSON *opts; /* owned; free with cJSON_Delete */
} nsys_cli_args;

bool nsys_cli_parse_args(int argc, char **argv, int max_pos, nsys_cli_args *out);
const char *nsys_cli_opt(const nsys_cli_args *a, const char *key); /* string value or NULL */

int nsys_cli_main(int argc, char **argv);

#endif
