/* set/summarize and set/reduce: the two halves of profile/openSet apart, for
 * sets larger than one machine. A Dask worker runs `nsys-ai rank-summary
 * FILE` (set/summarize in process) on each file; the client sends every
 * summary to set/reduce, which answers as profile/openSet does (without the
 * per-rank analysis tables) and keeps the set for the set methods. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "methods/set_open.h"
#include "profile/profile.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

cJSON *nsys_method_set_summarize(nsys_call *call) {
  const char *path = NULL;
  bool packed = false;
  if (!nsys_param_string(call, "path", true, &path) || !nsys_param_bool(call, "packed", false, &packed)) return NULL;
  int n_before = 0;
  nsys_profile **before = nsys_registry_list(call->profiles, &n_before);
  nsys_set_file f = {0};
  nsys_rank_summary *v = NULL;
  uint32_t n = 0;
  bool ok = nsys_set_open_one(call, path, false, false, before, n_before, &call->task, &f, &v, &n);
  for (int k = 0; k < n_before; k++) nsys_profile_release(before[k]);
  free(before);
  if (!ok) return NULL;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "summaries", nsys_rank_summaries_json(v, n, packed));
  cJSON_AddBoolToObject(res, "cached", f.cached);
  for (uint32_t k = 0; k < n; k++) nsys_rank_summary_dispose(&v[k]);
  free(v);
  return res;
}

cJSON *nsys_method_set_reduce(nsys_call *call) {
  const cJSON *arr = NULL;
  if (!nsys_param_array(call, "summaries", true, &arr)) return NULL;
  nsys_rank_summary *v = NULL;
  uint32_t n = 0, cap = 0;
  char err[256];
  if (!nsys_rank_summaries_from_json(arr, &v, &n, &cap, err, sizeof err)) {
    for (uint32_t k = 0; k < n; k++) nsys_rank_summary_dispose(&v[k]);
    free(v);
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.summaries%s", err);
  }
  nsys_set *s = nsys_xcalloc(1, sizeof *s);
  if (!nsys_rankset_reduce(&call->task, v, n, &s->rs)) {
    nsys_set_free(s);
    return NULL;
  }
  s->n_files = s->rs.n_files;
  s->files = nsys_xcalloc((size_t)s->n_files + 1, sizeof *s->files);
  for (uint32_t f = 0; f < s->n_files; f++) s->files[f].path = nsys_xstrdup(s->rs.files[f]);
  s->kept_open = false;
  nsys_set *kept = nsys_set_registry_add(s);
  cJSON *res = nsys_set_json_open(kept);
  nsys_set_put(kept);
  return res;
}
