/* Hidden test/... methods (see rpc/server.h). Off unless enabled. */
#include <time.h>

#include "common/util.h"
#include "rpc/params.h"
#include "rpc/server.h"

cJSON *nsys_method_test_sleep(nsys_call *call) {
  int64_t ms = 0;
  if (!nsys_param_int64(call, "ms", false, 0, 600000, &ms)) return NULL;
  nsys_call_progress_begin(call, "test/sleep");
  int64_t start = nsys_now_ns(), total = ms * 1000000;
  for (;;) {
    if (nsys_call_cancelled(call)) return nsys_call_fail_cancelled(call);
    int64_t elapsed = nsys_now_ns() - start;
    if (elapsed >= total) break;
    nsys_call_progress(call, (int)(elapsed * 10 / (total ? total : 1)) * 10, "sleeping"); /* 10% steps */
    struct timespec one_ms = {0, 1000000};
    nanosleep(&one_ms, NULL);
  }
  nsys_call_progress_end(call, "done");
  cJSON *res = cJSON_CreateObject();
  cJSON_AddNumberToObject(res, "sleptMs", (double)ms);
  return res;
}

cJSON *nsys_method_test_echo(nsys_call *call) {
  return call->params ? cJSON_Duplicate(call->params, 1) : cJSON_CreateNull();
}

cJSON *nsys_method_test_no_result(nsys_call *call) { return NULL; }

