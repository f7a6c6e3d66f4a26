#include "rpc/call.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void nsys_call_init(nsys_call *call, const char *method, cJSON *params,
                    struct nsys_profile_registry *profiles) {
  memset(call, 0, sizeof *call);
  nsys_task_init(&call->task);
  call->method = method;
  call->params = params;
  call->profiles = profiles;
}

void nsys_call_dispose(nsys_call *call) {
  if (call->err_data) cJSON_Delete(call->err_data);
  call->err_data = NULL;
}

cJSON *nsys_call_fail(nsys_call *call, nsys_err err, const char *fmt, ...) {
  if (!call || call->task.err != NSYS_OK) return NULL; /* keep the first (most specific) error */
  if (!fmt) {
    nsys_task_fail(&call->task, err, NULL);
    return NULL;
  }
  char msg[sizeof call->task.err_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  nsys_task_fail(&call->task, err, "%s", msg);
  return NULL;
}

cJSON *nsys_call_fail_cancelled(nsys_call *call) {
  if (call) nsys_task_fail_cancelled(&call->task);
  return NULL;
}
