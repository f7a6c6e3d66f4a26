/* The set methods (set/collectives, set/stragglers, set/nccl, set/close): the results of a rank set opened by profile/openSet. */
#include "rpc/call.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

static cJSON *nsys__unknown_set(nsys_call *call) {
  const char *id = NULL;
  if (!nsys_param_string(call, "setId", true, &id)) return NULL;
  return nsys_call_fail(call, NSYS_E_NOT_FOUND, "params.setId: no open set %s", id);
}

cJSON *nsys_method_set_collectives(nsys_call *call) { return nsys__unknown_set(call); }
cJSON *nsys_method_set_stragglers(nsys_call *call) { return nsys__unknown_set(call); }
cJSON *nsys_method_set_nccl(nsys_call *call) { return nsys__unknown_set(call); }
cJSON *nsys_method_set_close(nsys_call *call) { return nsys__unknown_set(call); }
