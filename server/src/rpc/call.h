/* nsys_call: everything one request's handler may touch. The same struct is
 * used by the stdio server (one per JSON-RPC request, run on libuv's thread
 * pool) and by the CLI (run synchronously), so every method behaves the same
 * in both. Handlers:
 *   - read params with the helpers in rpc/params.h,
 *   - hand &call->task to the core (common/task.h: cancellation, progress,
 *     errors, no JSON),
 *   - return a cJSON result, or NULL after nsys_call_fail(). */
#ifndef NSYS_CALL_H
#define NSYS_CALL_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/errors.h"
#include "common/task.h"

struct nsys_profile_registry;
struct nsys_config;

typedef struct nsys_call nsys_call;

struct nsys_call {
  nsys_task task;                         /* cancel flag, progress sink, status: what the core sees */
  const char *method;
  cJSON *params;                          /* object, or NULL when absent */
  struct nsys_profile_registry *profiles; /* shared, thread-safe */
  cJSON *err_data;                        /* optional error data; owned */
};

void nsys_call_init(nsys_call *call, const char *method, cJSON *params,
                    struct nsys_profile_registry *profiles);
void nsys_call_dispose(nsys_call *call); /* frees err_data; params belong to the caller */

/* Records an error (on call->task) and returns NULL so handlers can
 * `return nsys_call_fail(...)`. */
cJSON *nsys_call_fail(nsys_call *call, nsys_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline bool nsys_call_cancelled(nsys_call *call) {
  return call && nsys_task_cancelled(&call->task);
}

/* Convenience: fail with NSYS_E_CANCELLED. */
cJSON *nsys_call_fail_cancelled(nsys_call *call);

/* Progress on call->task (common/task.h). */
static inline void nsys_call_progress_begin(nsys_call *call, const char *title) {
  if (call) nsys_task_progress_begin(&call->task, title);
}
static inline void nsys_call_progress(nsys_call *call, int percent, const char *message) {
  if (call) nsys_task_progress(&call->task, percent, message);
}
static inline void nsys_call_progress_end(nsys_call *call, const char *message) {
  if (call) nsys_task_progress_end(&call->task, message);
}

#endif
