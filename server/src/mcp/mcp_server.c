/* `nsys-ai mcp` (see mcp_server.h).
 *
 * Threads: a reader thread splits stdin into lines and hands them to the
 * libuv loop (uv_async); the loop thread answers the cheap methods itself
 * and queues every tools/call on libuv's thread pool, where the tool runs
 * and its reply is written. Output is whole lines under one mutex, blocking
 * write(2): a line is never interleaved with another. */
#include "mcp/mcp_server.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "common/util.h"
#include "mcp/mcp_tools.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"

#define NSYS__MCP_MAX_LINE ((size_t)64 << 20)
#define NSYS__MCP_TEXT_MAX 8192 /* bytes of a tool result's text rendering */

static const char *const nsys__versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

typedef struct nsys__line {
  struct nsys__line *next;
  char *text; /* NULL: end of input; */
  size_t len;
  bool too_long;
} nsys__line;

typedef struct nsys__mcp nsys__mcp;

typedef struct nsys__mjob {
  uv_work_t work;
  nsys__mcp *srv;
  nsys_task task; /* the parent of the tool's call: cancel flag, progress sink */
  const nsys_mcp_tool *tool;
  cJSON *root; /* the request; args point into it */
  const cJSON *args;
  cJSON *id, *token;
  char *key;
  bool cancelled_by_client;
  double progress_sent;
  struct nsys__mjob *prev, *next;
} nsys__mjob;

struct nsys__mcp {
  uv_loop_t loop;
  uv_async_t wake;
  nsys_mcp_options opt;
  pthread_t reader;
  pthread_mutex_t qlock, out_lock;
  nsys__line *qhead, *qtail;
  bool eof, closing, initialized;
  nsys__mjob *jobs;
  size_t n_jobs;
  nsys_profile_registry *profiles;
  char *instructions;
  bool out_failed;
};

static nsys_log_level nsys__mcp_level = NSYS_LOG_WARN;

static void nsys__mlog(nsys_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nsys__mlog(nsys_log_level level, const char *fmt, ...) {
  if (level > nsys__mcp_level) return;
  static const char *const names[] = {"error", "warn", "info", "debug"};
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  nsys_log("mcp: %s: %s", names[level], line);
}

/* ---- output (any thread) -------------------------------------------------- */

/* Writes msg (consumed) as one line. */
static void nsys__mcp_send(nsys__mcp *s, cJSON *msg) {
  size_t len;
  char *text = nsys_rpc_print(msg, &len);
  cJSON_Delete(msg);
  pthread_mutex_lock(&s->out_lock);
  size_t done = 0;
  while (!s->out_failed && done < len + 1) {
    const char *p = done < len ? text + done : "\n";
    size_t n = done < len ? len - done : 1;
    ssize_t k = write(STDOUT_FILENO, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      s->out_failed = true; /* the client is gone: the end of input follows */
      nsys__mlog(NSYS_LOG_INFO, "writing to stdout failed: %s", k < 0 ? strerror(errno) : "short write");
      break;
    }
    done += (size_t)k;
  }
  pthread_mutex_unlock(&s->out_lock);
  free(text);
}

static void nsys__mcp_error(nsys__mcp *s, const cJSON *id, nsys_err err, const char *msg) {
  nsys__mcp_send(s, nsys_rpc_error(id, nsys_err_rpc_code(err), msg, NULL));
}

/* ---- input (the reader thread) ----------------------------------------------- */

static void nsys__mcp_push(nsys__mcp *s, nsys__line *l) {
  pthread_mutex_lock(&s->qlock);
  if (s->qtail) s->qtail->next = l;
  else s->qhead = l;
  s->qtail = l;
  pthread_mutex_unlock(&s->qlock);
  uv_async_send(&s->wake);
}

static void nsys__mcp_push_line(nsys__mcp *s, nsys_strbuf *b, bool too_long) {
  size_t n = b->len;
  if (n && b->data[n - 1] == '\r') n--;
  bool blank = true;
  for (size_t i = 0; i < n && blank; i++) blank = b->data[i] == ' ' || b->data[i] == '\t';
  if (!blank || too_long) {
    nsys__line *l = nsys_xcalloc(1, sizeof *l);
    l->too_long = too_long;
    l->len = too_long ? 0 : n;
    l->text = too_long ? nsys_xstrdup("") : nsys_strbuf_steal(b);
    if (!too_long) l->text[n] = '\0';
    nsys__mcp_push(s, l);
  }
  nsys_strbuf_free(b);
  nsys_strbuf_init(b);
}

static void *nsys__mcp_reader(void *ud) {
  nsys__mcp *s = ud;
  size_t max = s->opt.max_line_bytes ? s->opt.max_line_bytes : NSYS__MCP_MAX_LINE;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  bool skipping = false; /* inside a line over max: dropped up to its newline */
  char buf[65536];
  for (;;) {
    ssize_t k = read(STDIN_FILENO, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    const char *p = buf, *end = buf + k;
    while (p < end) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      size_t n = (size_t)((nl ? nl : end) - p);
      if (!skipping && b.len + n > max) {
        skipping = true;
        nsys_strbuf_free(&b);
        nsys_strbuf_init(&b);
      }
      if (!skipping) nsys_strbuf_append(&b, p, n);
      if (nl) {
        nsys__mcp_push_line(s, &b, skipping);
        skipping = false;
      }
      p += n + (nl ? 1 : 0);
    }
  }
  if (b.len && !skipping) nsys__mcp_push_line(s, &b, false); /* a last line without its newline */
  nsys_strbuf_free(&b);
  nsys__mcp_push(s, nsys_xcalloc(1, sizeof(nsys__line))); /* end of input */
  return NULL;
}

/* ---- tools/call (worker threads) ------------------------------------------------ */

static void nsys__mcp_progress(void *ctx, nsys_progress_kind kind, const char *title, const char *message,
                               int percent) {
  nsys__mjob *job = ctx;
  double v = kind == NSYS_PROGRESS_BEGIN ? 0 : kind == NSYS_PROGRESS_END ? 100 : percent;
  if (v < 0 || (v <= job->progress_sent && kind != NSYS_PROGRESS_BEGIN)) return; /* must increase */
  if (kind == NSYS_PROGRESS_BEGIN && job->progress_sent >= 0) return;             /* a nested begin */
  job->progress_sent = v;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddItemToObject(p, "progressToken", nsys_rpc_id_copy(job->token));
  cJSON_AddNumberToObject(p, "progress", v);
  cJSON_AddNumberToObject(p, "total", 100);
  const char *m = message ? message : title;
  if (m) {
    char *e = nsys_rpc_echo(m, 300);
    cJSON_AddStringToObject(p, "message", e);
    free(e);
  }
  nsys__mcp_send(job->srv, nsys_rpc_notification("notifications/progress", p));
}

static void nsys__mcp_work(uv_work_t *w) {
  nsys__mjob *job = w->data;
  nsys__mcp *s = job->srv;
  int code = 0;
  char msg[600] = "";
  cJSON *res = nsys_mcp_tool_run(job->tool, job->args, &job->task, job->token != NULL, s->profiles, &code, msg,
                                 sizeof msg);
  if (!res && nsys_task_cancelled(&job->task) && job->cancelled_by_client) {
    nsys__mlog(NSYS_LOG_DEBUG, "tools/call %s cancelled: no reply", job->tool->name);
    return; /* MCP: a cancelled request is not answered */
  }
  cJSON *out = cJSON_CreateObject();
  cJSON *content = cJSON_AddArrayToObject(out, "content");
  cJSON *text = cJSON_CreateObject();
  cJSON_AddStringToObject(text, "type", "text");
  if (res) {
    char *t = nsys_mcp_result_text(job->tool, res, NSYS__MCP_TEXT_MAX);
    cJSON_AddStringToObject(text, "text", t);
    free(t);
    cJSON_AddItemToArray(content, text);
    cJSON_AddItemToObject(out, "structuredContent", res);
    cJSON_AddFalseToObject(out, "isError");
  } else {
    char *t = nsys_xasprintf("error %d: %s", code, msg);
    cJSON_AddStringToObject(text, "text", t);
    free(t);
    cJSON_AddItemToArray(content, text);
    cJSON_AddTrueToObject(out, "isError");
  }
  nsys__mcp_send(s, nsys_rpc_result(job->id, out));
}

static void nsys__mcp_maybe_close(nsys__mcp *s);

static void nsys__mcp_after_work(uv_work_t *w, int status) {
  nsys__mjob *job = w->data;
  nsys__mcp *s = job->srv;
  (void)status; /* cancelled before it started (end of input): nobody is left to answer */
  if (job->prev) job->prev->next = job->next;
  else s->jobs = job->next;
  if (job->next) job->next->prev = job->prev;
  s->n_jobs--;
  cJSON_Delete(job->root);
  cJSON_Delete(job->id);
  cJSON_Delete(job->token);
  free(job->key);
  free(job);
  nsys__mcp_maybe_close(s);
}

/* ---- requests (the loop thread) ------------------------------------------------- */

static cJSON *nsys__mcp_initialize(nsys__mcp *s, const cJSON *params) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
  const char *version = nsys__versions[0];
  for (size_t i = 0; cJSON_IsString(v) && i < NSYS_ARRAY_LEN(nsys__versions); i++)
    if (strcmp(v->valuestring, nsys__versions[i]) == 0) version = nsys__versions[i];
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "protocolVersion", version);
  cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
  cJSON_AddFalseToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged");
  cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
  cJSON_AddStringToObject(info, "name", "nsys-ai");
  cJSON_AddStringToObject(info, "title", "nsys-ai: Nsight Systems profiles");
  cJSON_AddStringToObject(info, "version", NSYS_AI_VERSION);
  cJSON_AddStringToObject(r, "instructions", s->instructions);
  return r;
}

static void nsys__mcp_call(nsys__mcp *s, nsys_rpc_msg *msg) {
  const cJSON *params = msg->params;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  if (!cJSON_IsObject(params) || !cJSON_IsString(name)) {
    nsys__mcp_error(s, msg->id, NSYS_E_INVALID_PARAMS, "params.name: expected the name of a tool");
    return;
  }
  const nsys_mcp_tool *tool = nsys_mcp_tool_find(name->valuestring);
  if (!tool) {
    char *e = nsys_rpc_echo(name->valuestring, 100);
    char text[200];
    snprintf(text, sizeof text, "unknown tool: '%s' (see tools/list)", e);
    free(e);
    nsys__mcp_error(s, msg->id, NSYS_E_INVALID_PARAMS, text);
    return;
  }
  if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
    nsys__mcp_error(s, msg->id, NSYS_E_INVALID_PARAMS, "params.arguments: expected an object");
    return;
  }
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
  if (token && !nsys_rpc_id_valid(token)) {
    nsys__mcp_error(s, msg->id, NSYS_E_INVALID_PARAMS, "params._meta.progressToken: expected a string or an integer");
    return;
  }
  nsys__mjob *job = nsys_xcalloc(1, sizeof *job);
  job->srv = s;
  job->tool = tool;
  nsys_task_init(&job->task);
  job->progress_sent = -1;
  job->root = msg->root;
  msg->root = NULL; /* args point into it */
  job->args = args;
  job->id = cJSON_Duplicate(msg->id, true);
  job->key = nsys_rpc_id_key(msg->id);
  if (token) {
    job->token = cJSON_Duplicate(token, true);
    job->task.progress_fn = nsys__mcp_progress;
    job->task.progress_ctx = job;
  }
  job->work.data = job;
  job->next = s->jobs;
  if (s->jobs) s->jobs->prev = job;
  s->jobs = job;
  s->n_jobs++;
  int rc = uv_queue_work(&s->loop, &job->work, nsys__mcp_work, nsys__mcp_after_work);
  if (rc < 0) {
    nsys__mcp_error(s, job->id, NSYS_E_INTERNAL, "internal error: cannot queue the call");
    nsys__mcp_after_work(&job->work, rc);
  }
}

static void nsys__mcp_request(nsys__mcp *s, nsys_rpc_msg *msg) {
  const char *m = msg->method;
  if (strcmp(m, "initialize") == 0) {
    if (msg->params && !cJSON_IsObject(msg->params)) {
      nsys__mcp_error(s, msg->id, NSYS_E_INVALID_PARAMS, "params: expected an object");
      return;
    }
    s->initialized = true;
    nsys__mcp_send(s, nsys_rpc_result(msg->id, nsys__mcp_initialize(s, msg->params)));
  } else if (strcmp(m, "ping") == 0) {
    nsys__mcp_send(s, nsys_rpc_result(msg->id, cJSON_CreateObject()));
  } else if (strcmp(m, "tools/list") == 0) {
    size_t n;
    const nsys_mcp_tool *t = nsys_mcp_tools(&n);
    cJSON *r = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(r, "tools");
    for (size_t i = 0; i < n; i++) {
      cJSON *d = cJSON_Duplicate(t[i].def, true);
      cJSON_DeleteItemFromObjectCaseSensitive(d, "_nsys");
      cJSON_AddItemToArray(arr, d);
    }
    nsys__mcp_send(s, nsys_rpc_result(msg->id, r));
  } else if (strcmp(m, "tools/call") == 0) {
    nsys__mcp_call(s, msg);
  } else {
    char *e = nsys_rpc_echo(m, 100);
    char text[200];
    snprintf(text, sizeof text, "method not found: '%s'", e);
    free(e);
    nsys__mcp_error(s, msg->id, NSYS_E_METHOD_NOT_FOUND, text);
  }
}

static void nsys__mcp_notification(nsys__mcp *s, nsys_rpc_msg *msg) {
  if (strcmp(msg->method, "notifications/cancelled") != 0) return; /* initialized, roots, ...: nothing to do */
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg->params, "requestId");
  if (!nsys_rpc_id_valid(id)) {
    nsys__mlog(NSYS_LOG_WARN, "notifications/cancelled without a valid params.requestId: ignored");
    return;
  }
  char *key = nsys_rpc_id_key(id);
  for (nsys__mjob *j = s->jobs; j; j = j->next)
    if (strcmp(j->key, key) == 0) {
      j->cancelled_by_client = true;
      nsys_task_cancel(&j->task);
      uv_cancel((uv_req_t *)&j->work);
    }
  free(key);
}

static void nsys__mcp_line(nsys__mcp *s, nsys__line *l) {
  if (l->too_long) {
    nsys__mcp_error(s, NULL, NSYS_E_PARSE, "parse error: the message is longer than the line limit; skipped");
    return;
  }
  nsys_rpc_msg msg;
  nsys_rpc_parse(l->text, l->len, &msg);
  switch (msg.kind) {
  case NSYS_MSG_INVALID: nsys__mcp_error(s, msg.id, msg.err, msg.err_msg); break;
  case NSYS_MSG_REQUEST: nsys__mcp_request(s, &msg); break;
  case NSYS_MSG_NOTIFICATION: nsys__mcp_notification(s, &msg); break;
  case NSYS_MSG_RESPONSE: break; /* this server sends no requests */
  }
  nsys_rpc_msg_free(&msg);
}

static void nsys__mcp_on_closed(uv_handle_t *h) { (void)h; }

static void nsys__mcp_maybe_close(nsys__mcp *s) {
  if (s->eof && !s->n_jobs && !s->closing) {
    s->closing = true;
    uv_close((uv_handle_t *)&s->wake, nsys__mcp_on_closed);
  }
}

static void nsys__mcp_wake(uv_async_t *a) {
  nsys__mcp *s = a->data;
  pthread_mutex_lock(&s->qlock);
  nsys__line *q = s->qhead;
  s->qhead = s->qtail = NULL;
  pthread_mutex_unlock(&s->qlock);
  while (q) {
    nsys__line *next = q->next;
    if (!q->text) {
      s->eof = true; /* the client is gone: stop what runs, answer nobody */
      for (nsys__mjob *j = s->jobs; j; j = j->next) {
        nsys_task_cancel(&j->task);
        uv_cancel((uv_req_t *)&j->work);
      }
    } else if (!s->eof) {
      nsys__mcp_line(s, q);
    }
    free(q->text);
    free(q);
    q = next;
  }
  nsys__mcp_maybe_close(s);
}

/* ---- setup ------------------------------------------------------------------------ */

/* Opens the --profile files; their ids go into the instructions. */
static bool nsys__mcp_open_profiles(nsys__mcp *s) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_puts(&b,
                   "Tools over NVIDIA Nsight Systems profiles (nsys SQLite exports). Open one with profile_open "
                   "(or see profile_list), then pass its profileId to the other tools. Times are integer "
                   "nanoseconds on the profile's clock. Start with profile_info and report, then the analysis_* "
                   "tools, search, timeline_summary, nvtx_tree and kernel_explain; sql_query answers anything "
                   "else read-only.");
  bool ok = true;
  const nsys_mcp_tool *open = nsys_mcp_tool_find("profile_open");
  for (int i = 0; i < s->opt.n_profiles && ok; i++) {
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "path", s->opt.profiles[i]);
    nsys_task task;
    nsys_task_init(&task);
    int code = 0;
    char msg[600];
    cJSON *r = nsys_mcp_tool_run(open, args, &task, false, s->profiles, &code, msg, sizeof msg);
    cJSON_Delete(args);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "profileId");
    if (cJSON_IsString(id))
      nsys_strbuf_printf(&b, "%s Open: profileId \"%s\" is %s.", i ? "" : "\n", id->valuestring, s->opt.profiles[i]);
    else {
      nsys_log("mcp: --profile %s: %s", s->opt.profiles[i], msg);
      ok = false;
    }
    cJSON_Delete(r);
  }
  s->instructions = nsys_strbuf_steal(&b);
  return ok;
}

int nsys_mcp_serve(const nsys_mcp_options *opt) {
  nsys_tune_malloc();
  signal(SIGPIPE, SIG_IGN);
  setenv("UV_THREADPOOL_SIZE", "8", 0);
  nsys__mcp *s = nsys_xcalloc(1, sizeof *s);
  s->opt = *opt;
  nsys__mcp_level = opt->log_level;
  pthread_mutex_init(&s->qlock, NULL);
  pthread_mutex_init(&s->out_lock, NULL);
  s->profiles = nsys_registry_new();
  int code = 0;
  if (!nsys__mcp_open_profiles(s)) {
    code = 2;
  } else {
    uv_loop_init(&s->loop);
    uv_async_init(&s->loop, &s->wake, nsys__mcp_wake);
    s->wake.data = s;
    if (pthread_create(&s->reader, NULL, nsys__mcp_reader, s) != 0) {
      nsys_log("mcp: cannot start the reader thread");
      code = 2;
      uv_close((uv_handle_t *)&s->wake, nsys__mcp_on_closed);
      uv_run(&s->loop, UV_RUN_DEFAULT);
    } else {
      nsys__mlog(NSYS_LOG_INFO, "serving MCP on stdin/stdout");
      uv_run(&s->loop, UV_RUN_DEFAULT);
      pthread_join(s->reader, NULL); /* it has pushed the end of input already */
    }
    uv_loop_close(&s->loop);
    nsys__line *q = s->qhead; /* nothing should be left; freed if so */
    while (q) {
      nsys__line *next = q->next;
      free(q->text);
      free(q);
      q = next;
    }
  }
  nsys_registry_free(s->profiles);
  free(s->instructions);
  pthread_mutex_destroy(&s->qlock);
  pthread_mutex_destroy(&s->out_lock);
  free(s);
  uv_library_shutdown();
  return code;
}
