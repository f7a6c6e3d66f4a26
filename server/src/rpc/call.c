#include "rpc/call.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void nsys_call_init(nsys_call *call, const char *method, cJSON *params,
                    struct nsys_profile_registry *profiles) {
  memset(call, 0, sizeof *call);
  call->method = method;
  call->params = params;
  call->profiles = profiles;
  atomic_init(&call->cancelled, 0);
  call->last_percent = -1;
  call->err = NSYS_OK;
}

void nsys_call_dispose(nsys_call *call) {
  if (call->err_data) cJSON_Delete(call->err_data);
  call->err_data = NULL;
}

cJSON *nsys_call_fail(nsys_call *call, nsys_err err, const char *fmt, ...) {
  if (call->err != NSYS_OK) return NULL; /* keep the first (most specific) error */
  call->err = err == NSYS_OK ? NSYS_E_INTERNAL : err;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->err_msg, sizeof call->err_msg, fmt, ap);
    va_end(ap);
  } else {
    snprintf(call->err_msg, sizeof call->err_msg, "%s", nsys_err_message(call->err));
  }
  return NULL;
}

cJSON *nsys_call_fail_cancelled(nsys_call *call) {
  return nsys_call_fail(call, NSYS_E_CANCELLED, "request cancelled");
}

void nsys_call_progress_begin(nsys_call *call, const char *title) {
  if (!call || !call->progress_fn || call->progress_begun) return;
  call->progress_begun = true;
  call->last_percent = 0;
  call->progress_fn(call, 0, title, NULL, 0);
}

void nsys_call_progress(nsys_call *call, int percent, const char *message) {
  if (!call || !call->progress_fn || !call->progress_begun) return;
  if (percent < 0) percent = 0;
  if (percent > 100) percent = 100;
  if (percent == call->last_percent && !message) return;
  if (percent == call->last_percent) return;
  call->last_percent = percent;
  call->progress_fn(call, 1, NULL, message, percent);
}

void nsys_call_progress_end(nsys_call *call, const char *message) {
  if (!call || !call->progress_fn || !call->progress_begun) return;
  call->progress_begun = false;
  call->progress_fn(call, 2, NULL, message, 100);
}
