/* nsys_call: everything one request's handler may touch. The same struct is
 * used by the stdio server (one per JSON-RPC request, run on libuv's thread
 * pool) and by the CLI (run synchronously), so every method behaves the same
 * in both. Handlers:
 *   - read params with the helpers in rpc/params.h,
 *   - poll nsys_call_cancelled() between steps of long work,
 *   - report progress with nsys_call_progress(),
 *   - return a cJSON result, or NULL after nsys_call_fail(). */
#ifndef NSYS_CALL_H
#define NSYS_CALL_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/errors.h"

struct nsys_profile_registry;
struct nsys_config;

typedef struct nsys_call nsys_call;

/* Progress sink. kind: 0 begin, 1 report, 2 end. percent in [0,100] or -1. */
typedef void (*nsys_progress_fn)(nsys_call *call, int kind, const char *title,
                                 const char *message, int percent);

struct nsys_call {
  const char *method;
  cJSON *params;                          /* object, or NULL when absent */
  struct nsys_profile_registry *profiles; /* shared, thread-safe */
  atomic_int cancelled;                   /* set by $/cancelRequest or disconnect */
  nsys_progress_fn progress_fn;           /* NULL: no progress reporting */
  void *progress_ctx;                     /* owned by whoever set progress_fn */
  bool progress_begun;
  int last_percent;
  /* error, set by nsys_call_fail */
  nsys_err err;
  char err_msg[512];
  cJSON *err_data; /* optional; owned */
};

void nsys_call_init(nsys_call *call, const char *method, cJSON *params,
                    struct nsys_profile_registry *profiles);
void nsys_call_dispose(nsys_call *call); /* frees err_data; params belong to the caller */

/* Records an error and returns NULL so handlers can `return nsys_call_fail(...)`. */
cJSON *nsys_call_fail(nsys_call *call, nsys_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline bool nsys_call_cancelled(nsys_call *call) {
  return call && atomic_load_explicit(&call->cancelled, memory_order_relaxed) != 0;
}

/* Convenience: fail with NSYS_E_CANCELLED. */
cJSON *nsys_call_fail_cancelled(nsys_call *call);

/* Progress: begin once, then reports (rate-limited to whole-percent changes),
 * then end. Safe to call when no sink is attached. */
void nsys_call_progress_begin(nsys_call *call, const char *title);
void nsys_call_progress(nsys_call *call, int percent, const char *message);
void nsys_call_progress_end(nsys_call *call, const char *message);

#endif
