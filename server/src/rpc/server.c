#include "rpc/server.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "common/util.h"
#include "agent/llm.h"
#include "profile/profile.h"
#include "rpc/framing.h"
#include "rpc/jsonrpc.h"
#include "rpc/warm.h"

#define NSYS__READ_CHUNK 65536
#define NSYS__EXIT_GRACE_MS 5000 /* then pending writes are dropped */
#define NSYS__MAX_QUEUED 16384    /* jobs in flight before stdin is paused */

typedef enum { NSYS__UNINIT, NSYS__READY, NSYS__SHUTDOWN } nsys__life;

typedef struct nsys__server nsys__server;

/* One request running (or queued) on the thread pool. */
typedef struct nsys__job {
  uv_work_t work;
  nsys__server *srv;
  nsys_call call;
  nsys_method_fn fn;
  cJSON *root;  /* the whole request; call.params points into it */
  cJSON *id;    /* copy of the request id */
  char *key;    /* nsys_rpc_id_key(id), for $/cancelRequest */
  cJSON *token; /* copy of params.workDoneToken, or NULL */
  nsys_rpc_frame *frame; /* the reply, framed on the worker thread */
  char *warm_id;         /* profile/open's profileId: warmed after the reply (rpc/warm.h) */
  struct nsys__job *prev, *next;
} nsys__job;

/* A framed message queued by a worker thread ($/progress). */
typedef struct nsys__qmsg {
  struct nsys__qmsg *next;
  nsys_rpc_frame *frame;
} nsys__qmsg;

typedef struct nsys__write {
  uv_write_t req;
  nsys__server *srv;
  nsys_rpc_frame *frame;
} nsys__write;

typedef union {
  uv_handle_t handle;
  uv_stream_t stream;
  uv_pipe_t pipe;
  uv_tty_t tty;
  uv_tcp_t tcp;
} nsys__stream_h;

struct nsys__server {
  uv_loop_t loop;
  nsys_serve_options opt;
  /* input: a stream, or a regular file read from an idle handle */
  nsys__stream_h in;
  bool in_stream, in_open;
  uv_idle_t in_idle;
  bool in_idle_open;
  char in_buf[NSYS__READ_CHUNK];
  /* output: a stream, or blocking write(2) when fd 1 is a file */
  nsys__stream_h out;
  bool out_stream, out_open;
  uv_shutdown_t out_shutdown;
  size_t pending_writes;
  bool write_failed;
  /* worker -> loop messages */
  uv_async_t wake;
  uv_mutex_t qlock;
  nsys__qmsg *qhead, *qtail;
  uv_timer_t grace;
  bool grace_open;
  nsys_frame_reader reader;
  nsys_profile_registry *profiles;
  nsys__life life;
  bool exiting, finishing;
  int exit_code;
  nsys__job *jobs;
  size_t n_jobs;
  size_t max_queued; /* flow control: stop reading above this many jobs */
  bool paused;
  size_t n_requests, n_replies;
};

static nsys_log_level nsys__level = NSYS_LOG_WARN;

static void nsys__log(nsys_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void nsys__log(nsys_log_level level, const char *fmt, ...) {
  if (level > nsys__level) return;
  static const char *const names[] = {"error", "warn", "info", "debug"};
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  nsys_log("serve: %s: %s", names[level], line);
}

bool nsys_log_level_parse(const char *s, nsys_log_level *out) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; s && i < 4; i++)
    if (strcmp(s, names[i]) == 0) return *out = (nsys_log_level)i, true;
  return false;
}

/* ---- output ------------------------------------------------------------ */

static void nsys__maybe_finish(nsys__server *s);

static void nsys__begin_exit(nsys__server *s, bool cancel);

/* stdout is gone (EPIPE, ...): nobody can read our replies, so the client is
 * gone too. Cancel everything and exit as on end of input. */
static void nsys__output_failed(nsys__server *s, const char *why) {
  if (s->write_failed) return;
  s->write_failed = true;
  nsys__log(NSYS_LOG_INFO, "writing to stdout failed (%s): exiting", why);
  nsys__begin_exit(s, true);
}

static void nsys__on_write(uv_write_t *req, int status) {
  nsys__write *w = (nsys__write *)req;
  nsys__server *s = w->srv;
  nsys_rpc_frame_free(w->frame);
  free(w);
  s->pending_writes--;
  if (status < 0 && status != UV_ECANCELED) nsys__output_failed(s, uv_strerror(status));
  nsys__maybe_finish(s);
}

/* Writes frame f (consumed): its pieces in one uv_write, or one write(2)
 * loop per piece when stdout is a plain file. */
static void nsys__write_frame(nsys__server *s, nsys_rpc_frame *f) {
  size_t n = f->pieces.n;
  if (s->out_stream) {
    if (!s->out_open || s->write_failed) {
      nsys_rpc_frame_free(f);
      return;
    }
    /* uv_buf_t lengths are unsigned int: a piece over 1 GiB (the NVTX tree
     * of a 10M-kernel profile is 1.4 GB) goes as several buffers */
    const size_t max_buf = (size_t)1 << 30;
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
      size_t len;
      nsys_rpc_frame_piece(f, i, &len);
      nb += len ? (len + max_buf - 1) / max_buf : 0;
    }
    uv_buf_t one[4], *bufs = nb <= 4 ? one : nsys_xmalloc(nb * sizeof *bufs);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      size_t len;
      const char *p = nsys_rpc_frame_piece(f, i, &len);
      for (size_t off = 0; off < len; off += max_buf)
        bufs[k++] = uv_buf_init((char *)p + off, (unsigned)(len - off < max_buf ? len - off : max_buf));
    }
    nsys__write *w = nsys_xmalloc(sizeof *w);
    w->srv = s;
    w->frame = f;
    int rc = uv_write(&w->req, &s->out.stream, bufs, (unsigned)k, nsys__on_write); /* copies bufs */
    if (bufs != one) free(bufs);
    if (rc < 0) {
      nsys_rpc_frame_free(f);
      free(w);
      nsys__output_failed(s, uv_strerror(rc));
      return;
    }
    s->pending_writes++;
    return;
  }
  for (size_t i = 0; i < n && !s->write_failed; i++) {
    size_t len, done = 0;
    const char *p = nsys_rpc_frame_piece(f, i, &len);
    while (done < len && !s->write_failed) {
      ssize_t k = write(STDOUT_FILENO, p + done, len - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        nsys__output_failed(s, k < 0 ? strerror(errno) : "short write");
        break;
      }
      done += (size_t)k;
    }
  }
  nsys_rpc_frame_free(f);
}

/* Sends msg (consumed). */
static void nsys__send(nsys__server *s, cJSON *msg) { nsys__write_frame(s, nsys_rpc_frame_new(msg)); }

static void nsys__reply_error(nsys__server *s, const cJSON *id, nsys_err err, const char *msg) {
  s->n_replies++;
  nsys__send(s, nsys_rpc_error(id, nsys_err_rpc_code(err), msg, NULL));
}

/* Sends whatever worker threads queued. */
static void nsys__drain_queue(nsys__server *s) {
  uv_mutex_lock(&s->qlock);
  nsys__qmsg *q = s->qhead;
  s->qhead = s->qtail = NULL;
  uv_mutex_unlock(&s->qlock);
  while (q) {
    nsys__qmsg *next = q->next;
    nsys__write_frame(s, q->frame);
    free(q);
    q = next;
  }
}

static void nsys__on_wake(uv_async_t *a) { nsys__drain_queue(a->data); }

/* ---- progress (worker threads) -------------------------------------------- */

static void nsys__progress(void *ctx, nsys_progress_kind kind, const char *title,
                           const char *message, int percent) {
  nsys__job *job = ctx;
  nsys__server *s = job->srv;
  static const char *const kinds[] = {"begin", "report", "end"};
  cJSON *params = cJSON_CreateObject();
  cJSON_AddItemToObject(params, "token", nsys_rpc_id_copy(job->token));
  cJSON *value = cJSON_AddObjectToObject(params, "value");
  cJSON_AddStringToObject(value, "kind", kinds[kind > NSYS_PROGRESS_END ? NSYS_PROGRESS_REPORT : kind]);
  if (kind == NSYS_PROGRESS_BEGIN && title) {
    char *t = nsys_rpc_echo(title, 200);
    cJSON_AddStringToObject(value, "title", t);
    free(t);
  }
  if (message) {
    char *m = nsys_rpc_echo(message, 500);
    cJSON_AddStringToObject(value, "message", m);
    free(m);
  }
  if (kind != NSYS_PROGRESS_END && percent >= 0) cJSON_AddNumberToObject(value, "percentage", percent);
  nsys__qmsg *q = nsys_xmalloc(sizeof *q);
  q->next = NULL;
  q->frame = nsys_rpc_frame_new(nsys_rpc_notification("$/progress", params));
  uv_mutex_lock(&s->qlock);
  if (s->qtail) s->qtail->next = q;
  else s->qhead = q;
  s->qtail = q;
  uv_mutex_unlock(&s->qlock);
  uv_async_send(&s->wake);
}

/* ---- requests ------------------------------------------------------------ */

static cJSON *nsys__finish_call(nsys__server *s, nsys_call *call, const cJSON *id, cJSON *result) {
  (void)s;
  if (result) return nsys_rpc_result(id, result);
  if (call->task.err == NSYS_OK)
    nsys_call_fail(call, NSYS_E_INTERNAL, "internal error: %s returned no result", call->method);
  cJSON *data = call->err_data;
  call->err_data = NULL;
  return nsys_rpc_error(id, nsys_err_rpc_code(call->task.err), call->task.err_msg, data);
}

/* Runs the method and frames its reply here, on the worker thread: writing a
 * multi-megabyte reply's text must not hold up the loop's other requests. */
static void nsys__work(uv_work_t *w) {
  nsys__job *job = w->data;
  cJSON *result = nsys_method_run(job->fn, &job->call);
  const cJSON *opened = result && strcmp(job->call.method, "profile/open") == 0
                            ? cJSON_GetObjectItemCaseSensitive(result, "profileId")
                            : NULL;
  if (cJSON_IsString(opened)) job->warm_id = nsys_xstrdup(opened->valuestring);
  job->frame = nsys_rpc_frame_new(nsys__finish_call(job->srv, &job->call, job->id, result));
}

static void nsys__job_free(nsys__job *job) {
  nsys_call_dispose(&job->call);
  nsys_rpc_frame_free(job->frame);
  free(job->warm_id);
  cJSON_Delete(job->root);
  cJSON_Delete(job->id);
  cJSON_Delete(job->token);
  free(job->key);
  free(job);
}

static void nsys__alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void nsys__on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);
static void nsys__on_idle_read(uv_idle_t *h);

/* Flow control: a client that pipelines faster than the pool answers is not
 * read from while max_queued jobs are in flight; reading resumes at half. */
static void nsys__flow(nsys__server *s) {
  if (s->exiting) return;
  if (!s->paused && s->n_jobs >= s->max_queued) {
    s->paused = true;
    if (s->in_open) uv_read_stop(&s->in.stream);
    if (s->in_idle_open) uv_idle_stop(&s->in_idle);
    nsys__log(NSYS_LOG_DEBUG, "input paused: %zu requests in flight", s->n_jobs);
  } else if (s->paused && s->n_jobs <= s->max_queued / 2) {
    s->paused = false;
    if (s->in_open) uv_read_start(&s->in.stream, nsys__alloc, nsys__on_read);
    if (s->in_idle_open) uv_idle_start(&s->in_idle, nsys__on_idle_read);
    nsys__log(NSYS_LOG_DEBUG, "input resumed: %zu requests in flight", s->n_jobs);
  }
}

static void nsys__after_work(uv_work_t *w, int status) {
  nsys__job *job = w->data;
  nsys__server *s = job->srv;
  if (status == UV_ECANCELED) nsys_call_fail_cancelled(&job->call);
  nsys__drain_queue(s); /* this request's $/progress goes out before its reply */
  s->n_replies++;
  if (job->frame) { /* the usual case: framed by nsys__work */
    nsys__write_frame(s, job->frame);
    job->frame = NULL;
  } else { /* cancelled before it started */
    nsys__send(s, nsys__finish_call(s, &job->call, job->id, NULL));
  }
  if (job->prev) job->prev->next = job->next;
  else s->jobs = job->next;
  if (job->next) job->next->prev = job->prev;
  s->n_jobs--;
  nsys_warm_requests(-1);
  if (job->warm_id) nsys_warm_start(s->profiles, job->warm_id); /* after its reply */
  nsys_warm_prune(s->profiles); /* a closed profile's warm-up stops */
  nsys__job_free(job);
  nsys__flow(s);
  nsys__maybe_finish(s);
}

static void nsys__cancel_job(nsys__job *job) {
  nsys_task_cancel(&job->call.task);
  uv_cancel((uv_req_t *)&job->work); /* succeeds only if it has not started */
}

static void nsys__capability_method(const char *name, void *ctx) {
  cJSON_AddItemToArray(ctx, cJSON_CreateString(name));
}

static cJSON *nsys__initialize_result(nsys__server *s) {
  cJSON *res = cJSON_CreateObject();
  cJSON *info = cJSON_AddObjectToObject(res, "serverInfo");
  cJSON_AddStringToObject(info, "name", "nsys-ai");
  cJSON_AddStringToObject(info, "version", NSYS_AI_VERSION);
  cJSON *caps = cJSON_AddObjectToObject(res, "capabilities");
  cJSON *methods = cJSON_AddArrayToObject(caps, "methods");
  nsys_method_each(nsys__capability_method, methods);
  cJSON_AddTrueToObject(caps, "workDoneProgress");
  cJSON_AddTrueToObject(caps, "cancelRequest");
  cJSON_AddFalseToObject(caps, "batch");
  cJSON_AddNumberToObject(caps, "maxFrameBytes", (double)s->reader.max_frame);
  return res;
}

/* initialize's initializationOptions.llm configures the optional LLM (the
 * same object agent/configure takes). Replies -32602 and returns false when
 * it is malformed. */
static bool nsys__apply_init_options(nsys__server *s, const cJSON *id, const cJSON *params) {
  const cJSON *opts = params ? cJSON_GetObjectItemCaseSensitive(params, "initializationOptions") : NULL;
  const cJSON *llm = cJSON_IsObject(opts) ? cJSON_GetObjectItemCaseSensitive(opts, "llm") : NULL;
  if (!llm || cJSON_IsNull(llm)) return true;
  char err[256] = "";
  if (cJSON_IsObject(llm) && nsys_llm_configure(llm, err, sizeof err)) return true;
  char msg[320];
  snprintf(msg, sizeof msg, "params.initializationOptions.llm: %s", err[0] ? err : "expected an object");
  nsys__reply_error(s, id, NSYS_E_INVALID_PARAMS, msg);
  return false;
}

/* Takes ownership of msg->root. */
static void nsys__on_request(nsys__server *s, nsys_rpc_msg *msg) {
  const char *method = msg->method;
  const cJSON *id = msg->id;
  s->n_requests++;
  nsys_lifecycle life = nsys_lifecycle_find(method);
  if (life == NSYS_LIFE_INITIALIZE) {
    if (s->life == NSYS__SHUTDOWN) {
      nsys__reply_error(s, id, NSYS_E_SHUTTING_DOWN, "server is shutting down");
    } else if (s->life == NSYS__READY) {
      nsys__reply_error(s, id, NSYS_E_INVALID_REQUEST, "invalid request: initialize was already called");
    } else if (msg->params && !cJSON_IsObject(msg->params)) {
      nsys__reply_error(s, id, NSYS_E_INVALID_PARAMS, "params: expected an object");
    } else if (!nsys__apply_init_options(s, id, msg->params)) {
      /* replied with the bad field */
    } else {
      s->life = NSYS__READY;
      s->n_replies++;
      nsys__send(s, nsys_rpc_result(id, nsys__initialize_result(s)));
      nsys__log(NSYS_LOG_INFO, "initialized");
    }
    return;
  }
  if (s->life == NSYS__UNINIT) {
    nsys__reply_error(s, id, NSYS_E_NOT_INITIALIZED,
                      "server not initialized: send initialize first");
    return;
  }
  if (s->life == NSYS__SHUTDOWN) {
    nsys__reply_error(s, id, NSYS_E_SHUTTING_DOWN,
                      "server is shutting down: only the exit notification is accepted");
    return;
  }
  if (life == NSYS_LIFE_SHUTDOWN) {
    s->life = NSYS__SHUTDOWN;
    s->n_replies++;
    nsys__send(s, nsys_rpc_result(id, NULL));
    nsys__log(NSYS_LOG_INFO, "shutdown requested");
    return;
  }
  const nsys_method *m = nsys_method_lookup(method, s->opt.test_methods);
  if (!m) {
    char *name = nsys_rpc_echo(method, 100);
    char text[200];
    snprintf(text, sizeof text, "method not found: '%s'", name);
    free(name);
    nsys__reply_error(s, id, NSYS_E_METHOD_NOT_FOUND, text);
    return;
  }
  const cJSON *token = cJSON_IsObject(msg->params)
                           ? cJSON_GetObjectItemCaseSensitive(msg->params, "workDoneToken")
                           : NULL;
  if (token && !cJSON_IsNull(token) && !nsys_rpc_id_valid(token)) {
    nsys__reply_error(s, id, NSYS_E_INVALID_PARAMS,
                      "params.workDoneToken: expected a string or an integer");
    return;
  }
  if (token && cJSON_IsNull(token)) token = NULL;
  if (m->flags & NSYS_METHOD_INLINE) {
    nsys_call call;
    nsys_call_init(&call, m->name, msg->params, s->profiles);
    cJSON *result = nsys_method_run(m->fn, &call);
    s->n_replies++;
    nsys__send(s, nsys__finish_call(s, &call, id, result));
    nsys_call_dispose(&call);
    return;
  }
  nsys__job *job = nsys_xcalloc(1, sizeof *job);
  job->srv = s;
  job->fn = m->fn;
  job->root = msg->root;
  msg->root = NULL; /* the job owns the request now; params stay valid */
  job->id = cJSON_Duplicate(id, 1);
  job->key = nsys_rpc_id_key(id);
  nsys_call_init(&job->call, m->name, msg->params, s->profiles);
  if (token) {
    job->token = cJSON_Duplicate(token, 1);
    job->call.task.progress_fn = nsys__progress;
    job->call.task.progress_ctx = job;
  }
  job->work.data = job;
  job->next = s->jobs;
  if (s->jobs) s->jobs->prev = job;
  s->jobs = job;
  s->n_jobs++;
  nsys_warm_requests(1);
  nsys__flow(s);
  int rc = uv_queue_work(&s->loop, &job->work, nsys__work, nsys__after_work);
  if (rc < 0) { /* cannot happen with valid arguments; still answer exactly once */
    nsys_call_fail(&job->call, NSYS_E_INTERNAL, "internal error: cannot queue work: %s",
                   uv_strerror(rc));
    nsys__after_work(&job->work, 0);
  }
}

static void nsys__on_notification(nsys__server *s, nsys_rpc_msg *msg) {
  const char *method = msg->method;
  nsys_lifecycle life = nsys_lifecycle_find(method);
  if (life == NSYS_LIFE_EXIT) {
    s->exit_code = s->life == NSYS__SHUTDOWN ? 0 : 1;
    nsys__log(NSYS_LOG_INFO, "exit (code %d)", s->exit_code);
    nsys__begin_exit(s, true);
    return;
  }
  if (life == NSYS_LIFE_CANCEL_REQUEST) {
    const cJSON *id =
        cJSON_IsObject(msg->params) ? cJSON_GetObjectItemCaseSensitive(msg->params, "id") : NULL;
    if (!nsys_rpc_id_valid(id)) {
      nsys__log(NSYS_LOG_WARN, "$/cancelRequest without a valid params.id: ignored");
      return;
    }
    char *key = nsys_rpc_id_key(id);
    for (nsys__job *j = s->jobs; j; j = j->next)
      if (strcmp(j->key, key) == 0) nsys__cancel_job(j);
    free(key);
    return;
  }
  if (s->life == NSYS__UNINIT && life != NSYS_LIFE_INITIALIZED)
    nsys__log(NSYS_LOG_DEBUG, "notification %s before initialize: dropped", method);
  /* initialized and unknown notifications: nothing to do. */
}

static void nsys__on_body(nsys__server *s, char *body, size_t len) {
  nsys_rpc_msg msg;
  nsys_rpc_parse(body, len, &msg);
  free(body);
  switch (msg.kind) {
  case NSYS_MSG_INVALID:
    nsys__log(NSYS_LOG_INFO, "%s", msg.err_msg);
    nsys__reply_error(s, msg.id, msg.err, msg.err_msg);
    break;
  case NSYS_MSG_REQUEST: nsys__on_request(s, &msg); break;
  case NSYS_MSG_NOTIFICATION: nsys__on_notification(s, &msg); break;
  case NSYS_MSG_RESPONSE: nsys__log(NSYS_LOG_DEBUG, "ignoring a response from the client"); break;
  }
  nsys_rpc_msg_free(&msg);
}

static void nsys__on_bytes(nsys__server *s, const char *data, size_t n) {
  if (s->exiting) return;
  nsys_frame_push(&s->reader, data, n);
  nsys_frame_event ev;
  while (!s->exiting && nsys_frame_next(&s->reader, &ev) != NSYS_FRAME_NONE) {
    if (ev.kind == NSYS_FRAME_MESSAGE) {
      nsys__on_body(s, ev.body, ev.len);
    } else {
      nsys__log(NSYS_LOG_WARN, "%s", ev.msg);
      /* an oversized request's id, as the framing reader's scanner found it */
      cJSON *id = nsys_id_scan_parse(ev.id, ev.id_len);
      nsys__reply_error(s, id, ev.err, ev.msg);
      cJSON_Delete(id);
    }
  }
}

/* ---- input --------------------------------------------------------------- */

static void nsys__on_closed(uv_handle_t *h) { (void)h; }

static void nsys__on_input_end(nsys__server *s, bool client_gone) {
  if (nsys_frame_pending(&s->reader))
    nsys__log(NSYS_LOG_INFO, "input ended inside a frame; the partial frame is dropped");
  if (!s->exiting) {
    s->exit_code = s->life == NSYS__SHUTDOWN ? 0 : 1;
    nsys__log(NSYS_LOG_INFO, "end of input: %s", client_gone ? "client gone" : "input file done");
  }
  nsys__begin_exit(s, client_gone);
}

static void nsys__alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  nsys__server *s = h->data;
  (void)suggested;
  *buf = uv_buf_init(s->in_buf, sizeof s->in_buf);
}

static void nsys__on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  nsys__server *s = st->data;
  if (nread > 0) nsys__on_bytes(s, buf->base, (size_t)nread);
  else if (nread < 0) {
    if (nread != UV_EOF) nsys__log(NSYS_LOG_INFO, "reading stdin failed: %s", uv_strerror((int)nread));
    nsys__on_input_end(s, true);
  }
}

static void nsys__on_idle_read(uv_idle_t *h) {
  nsys__server *s = h->data;
  ssize_t k = read(STDIN_FILENO, s->in_buf, sizeof s->in_buf);
  if (k < 0 && errno == EINTR) return;
  if (k > 0) {
    nsys__on_bytes(s, s->in_buf, (size_t)k);
    return;
  }
  if (k < 0) nsys__log(NSYS_LOG_INFO, "reading stdin failed: %s", strerror(errno));
  nsys__on_input_end(s, false);
}

static void nsys__stop_input(nsys__server *s) {
  if (s->in_open) {
    s->in_open = false;
    uv_read_stop(&s->in.stream);
    uv_close(&s->in.handle, nsys__on_closed);
  }
  if (s->in_idle_open) {
    s->in_idle_open = false;
    uv_idle_stop(&s->in_idle);
    uv_close((uv_handle_t *)&s->in_idle, nsys__on_closed);
  }
}

/* ---- exit ---------------------------------------------------------------- */

static void nsys__close_output(nsys__server *s) {
  if (s->grace_open) {
    s->grace_open = false;
    uv_timer_stop(&s->grace);
    uv_close((uv_handle_t *)&s->grace, nsys__on_closed);
  }
  if (s->out_open) {
    s->out_open = false;
    uv_close(&s->out.handle, nsys__on_closed);
  }
  if (!uv_is_closing((uv_handle_t *)&s->wake)) uv_close((uv_handle_t *)&s->wake, nsys__on_closed);
}

static void nsys__on_out_shutdown(uv_shutdown_t *req, int status) {
  (void)status;
  nsys__close_output(req->data);
}

static void nsys__on_grace(uv_timer_t *t) {
  nsys__server *s = t->data;
  nsys__log(NSYS_LOG_WARN, "stdout did not drain within %d ms; dropping %zu pending writes",
            NSYS__EXIT_GRACE_MS, s->pending_writes);
  nsys__close_output(s);
}

/* Once exiting and every job has answered: flush, then close all handles so
 * uv_run() returns. */
static void nsys__maybe_finish(nsys__server *s) {
  if (!s->exiting || s->n_jobs || s->finishing) return;
  s->finishing = true;
  nsys__drain_queue(s);
  if (s->out_open && s->pending_writes && !s->write_failed) {
    s->out_shutdown.data = s;
    if (uv_shutdown(&s->out_shutdown, &s->out.stream, nsys__on_out_shutdown) == 0) {
      uv_timer_init(&s->loop, &s->grace);
      s->grace.data = s;
      s->grace_open = true;
      uv_timer_start(&s->grace, nsys__on_grace, NSYS__EXIT_GRACE_MS, 0);
      uv_unref((uv_handle_t *)&s->grace);
      return;
    }
  }
  nsys__close_output(s);
}

static void nsys__begin_exit(nsys__server *s, bool cancel) {
  if (!s->exiting) {
    s->exiting = true;
    nsys__stop_input(s);
  }
  if (cancel)
    for (nsys__job *j = s->jobs; j; j = j->next) nsys__cancel_job(j);
  nsys__maybe_finish(s);
}

/* ---- setup --------------------------------------------------------------- */

static int nsys__open_stream(nsys__server *s, nsys__stream_h *h, int fd, bool readable) {
  uv_handle_type t = uv_guess_handle(fd);
  int rc;
  switch (t) {
  case UV_NAMED_PIPE:
    rc = uv_pipe_init(&s->loop, &h->pipe, 0);
    if (rc == 0) rc = uv_pipe_open(&h->pipe, fd);
    break;
  case UV_TTY: rc = uv_tty_init(&s->loop, &h->tty, fd, readable); break;
  case UV_TCP:
    rc = uv_tcp_init(&s->loop, &h->tcp);
    if (rc == 0) rc = uv_tcp_open(&h->tcp, fd);
    break;
  default: return 1; /* a file (or unknown): the caller falls back */
  }
  if (rc < 0) {
    nsys__log(NSYS_LOG_ERROR, "cannot use fd %d: %s", fd, uv_strerror(rc));
    if (!uv_is_closing(&h->handle) && h->handle.loop) uv_close(&h->handle, NULL);
    return rc;
  }
  h->handle.data = s;
  return 0;
}

static int nsys__setup(nsys__server *s) {
  int rc = nsys__open_stream(s, &s->in, STDIN_FILENO, true);
  if (rc < 0) return rc;
  if (rc == 0) {
    s->in_stream = s->in_open = true;
    rc = uv_read_start(&s->in.stream, nsys__alloc, nsys__on_read);
    if (rc < 0) return rc;
  } else {
    uv_idle_init(&s->loop, &s->in_idle);
    s->in_idle.data = s;
    s->in_idle_open = true;
    uv_idle_start(&s->in_idle, nsys__on_idle_read);
  }
  rc = nsys__open_stream(s, &s->out, STDOUT_FILENO, false);
  if (rc < 0) return rc;
  s->out_stream = s->out_open = rc == 0;
  return 0;
}

int nsys_serve(const nsys_serve_options *opt) {
  nsys_tune_malloc();
  signal(SIGPIPE, SIG_IGN);
  /* Enough pool threads that cheap requests are answered while a big index
   * builds; must be set before the first uv_queue_work. */
  setenv("UV_THREADPOOL_SIZE", "8", 0);
  nsys__server *s = nsys_xcalloc(1, sizeof *s);
  s->opt = *opt;
  nsys__level = opt->log_level;
  if (!s->opt.test_methods) {
    const char *e = getenv("NSYS_AI_TEST_METHODS");
    s->opt.test_methods = e && strcmp(e, "1") == 0;
  }
  nsys_frame_reader_init(&s->reader, opt->max_frame_bytes);
  const char *mq = getenv("NSYS_AI_MAX_QUEUED"); /* tuning and tests */
  s->max_queued = mq && atol(mq) >= 2 ? (size_t)atol(mq) : NSYS__MAX_QUEUED;
  s->exit_code = 1;
  uv_loop_init(&s->loop);
  uv_mutex_init(&s->qlock);
  uv_async_init(&s->loop, &s->wake, nsys__on_wake);
  s->wake.data = s;
  s->profiles = nsys_registry_new();
  int code;
  if (nsys__setup(s) < 0) {
    nsys__log(NSYS_LOG_ERROR, "cannot set up stdin/stdout");
    code = 2;
    nsys__begin_exit(s, true);
    uv_run(&s->loop, UV_RUN_DEFAULT);
  } else {
    nsys__log(NSYS_LOG_INFO, "serving on stdin/stdout (max frame %zu bytes%s)", s->reader.max_frame,
              s->opt.test_methods ? ", test methods on" : "");
    uv_run(&s->loop, UV_RUN_DEFAULT);
    code = s->exit_code;
  }
  nsys__log(NSYS_LOG_INFO, "%zu requests, %zu replies, %zu framing errors; exit %d", s->n_requests,
            s->n_replies, s->reader.n_errors, code);
  /* Every handle is closed: let their close callbacks run, then free. */
  uv_run(&s->loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&s->loop) != 0) nsys__log(NSYS_LOG_WARN, "event loop closed with open handles");
  nsys__drain_queue(s); /* nothing should be left; frees it if so */
  nsys_warm_stop();
  uv_mutex_destroy(&s->qlock);
  nsys_frame_reader_free(&s->reader);
  nsys_registry_free(s->profiles);
  free(s);
  uv_library_shutdown(); /* joins the thread-pool threads */
  return code;
}
