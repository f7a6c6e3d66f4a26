/* JSON-RPC handlers for the analysis module: params -> core call -> JSON. */
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

static cJSON *nsys__analysis_list(nsys_call *call) {
  (void)call;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "analyses", nsys_analysis_list_json());
  return res;
}

static cJSON *nsys__analysis_run(nsys_call *call) {
  const char *name = NULL;
  const cJSON *params = NULL;
  if (!nsys_param_string(call, "name", true, &name)) return NULL;
  if (!nsys_param_any(call, "params", false, &params)) return NULL;
  if (params && !cJSON_IsObject(params))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.params: expected an object");
  if (!nsys_analysis_find(name))
    return nsys_call_fail(call, NSYS_E_UNKNOWN_ANALYSIS,
                          "params.name: unknown analysis '%s' (see analysis/list)", name);
  nsys_profile *p = nsys_param_profile(call, "profileId");
  if (!p) return NULL;
  cJSON *res = NULL;
  const nsys_index *ix = nsys_index_get(p, call);
  if (ix) res = nsys_analysis_run(call, p, ix, name, params);
  nsys_profile_release(p);
  return res;
}

static cJSON *nsys__report_generate(nsys_call *call) {
  const char *format = "json";
  if (!nsys_param_string(call, "format", false, &format)) return NULL;
  bool md = strcmp(format, "markdown") == 0 || strcmp(format, "md") == 0;
  bool text = strcmp(format, "text") == 0;
  if (!md && !text && strcmp(format, "json") != 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.format: expected json, text or markdown");
  nsys_profile *p = nsys_param_profile(call, "profileId");
  if (!p) return NULL;
  cJSON *res = NULL;
  const nsys_index *ix = nsys_index_get(p, call);
  if (ix) res = nsys_report_build(call, p, ix);
  if (res && (md || text)) nsys_report_attach_rendering(res, md);
  nsys_profile_release(p);
  return res;
}

static cJSON *nsys__profile_diff(nsys_call *call) {
  nsys_profile *a = nsys_param_profile(call, "base");
  if (!a) return NULL;
  nsys_profile *b = nsys_param_profile(call, "compare");
  if (!b) {
    nsys_profile_release(a);
    return NULL;
  }
  cJSON *res = NULL;
  const nsys_index *ia = nsys_index_get(a, call);
  const nsys_index *ib = ia ? nsys_index_get(b, call) : NULL;
  if (ia && ib) res = nsys_diff_build(call, a, ia, b, ib);
  nsys_profile_release(a);
  nsys_profile_release(b);
  return res;
}

const nsys_method nsys_methods_analysis[] = {
    {"analysis/list", nsys__analysis_list, NSYS_METHOD_INLINE},
    {"analysis/run", nsys__analysis_run, 0},
    {"report/generate", nsys__report_generate, 0},
    {"profile/diff", nsys__profile_diff, 0},
    {NULL, NULL, 0},
};
