/* JSON-RPC handlers for the analysis module: params -> core call -> JSON. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report.h"
#include "methods/analysis_json.h"
#include "methods/analysis_params.h"
#include "methods/analysis_render.h"
#include "methods/analysis_reply.h"
#include "methods/reply_limit.h"
#include "rpc/json_write.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

cJSON *nsys_method_analysis_list(nsys_call *call) {
  (void)call;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "analyses", nsys_analysis_list_json());
  return res;
}

cJSON *nsys_method_analysis_run(nsys_call *call) {
  const char *name = NULL, *cursor = NULL;
  const cJSON *params = NULL;
  int64_t max_bytes;
  if (!nsys_param_string(call, "name", true, &name)) return NULL;
  if (!nsys_param_any(call, "params", false, &params)) return NULL;
  if (!nsys_reply_max_bytes(call, &max_bytes) || !nsys_param_string(call, "cursor", false, &cursor)) return NULL;
  if (params && !cJSON_IsObject(params))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.params: expected an object");
  if (!nsys_analysis_find(name))
    return nsys_call_fail(call, NSYS_E_UNKNOWN_ANALYSIS,
                          "params.name: unknown analysis '%s' (see analysis/list)", name);
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  cJSON *res = nsys_analysis_run_json(&call->task, p, ix, name, params, NULL);
  nsys_profile_release(p);
  if (!res) return NULL;
  /* a page token names the listing: profile, analysis and its resolved params */
  char *ptxt = nsys_json_print(cJSON_GetObjectItemCaseSensitive(res, "params"), false);
  const char *pid = NULL;
  nsys_param_string(call, "profileId", true, &pid);
  uint64_t key = nsys_fnv1a(name, strlen(name), 1469598103934665603ull);
  key = nsys_fnv1a(ptxt, strlen(ptxt), key);
  key = nsys_fnv1a(pid, strlen(pid), key);
  free(ptxt);
  if (!nsys_analysis_page_rows(&call->task, res, max_bytes, cursor, key)) {
    cJSON_Delete(res);
    return NULL;
  }
  return res;
}

cJSON *nsys_method_report_generate(nsys_call *call) {
  const char *format = "json";
  int64_t max_bytes;
  if (!nsys_param_string(call, "format", false, &format) || !nsys_reply_max_bytes(call, &max_bytes)) return NULL;
  bool md = strcmp(format, "markdown") == 0 || strcmp(format, "md") == 0;
  bool text = strcmp(format, "text") == 0;
  if (!md && !text && strcmp(format, "json") != 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.format: expected json, text or markdown");
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  nsys_report *rep = nsys_report_build(&call->task, p, ix);
  cJSON *res = rep ? nsys_report_json(rep) : NULL;
  nsys_report_free(rep);
  if (res && (md || text)) nsys_report_attach_rendering(res, md);
  if (res) nsys_report_fit(res, max_bytes);
  nsys_profile_release(p);
  return res;
}


