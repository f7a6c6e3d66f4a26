/* set/summarize and set/reduce: the two halves of profile/openSet apart, for
 * sets larger than one machine. A Dask worker runs `nsys-ai rank-summary
 * FILE` (set/summarize in process) on each file; the client sends every
 * summary to set/reduce, which answers as profile/openSet does (without the
 * per-rank analysis tables) and keeps the set for the set methods; a set
 * too large for one request goes in pieces (set_partial.h). */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "methods/set_open.h"
#include "methods/set_partial.h"
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

/* set/reduce {summaries, partial?, partialId?}: with partialId, the summaries
 * continue that partial (received before them); with partial: true they are
 * kept (answer {partialId, ranks}) rather than reduced: a set too large for one
 * request's frame is sent in pieces, and reduced by the last. */
cJSON *nsys_method_set_reduce(nsys_call *call) {
  const cJSON *arr = NULL;
  const char *partial_id = NULL;
  bool keep = false;
  if (!nsys_param_array(call, "summaries", true, &arr) || !nsys_param_bool(call, "partial", false, &keep) ||
      !nsys_param_string(call, "partialId", false, &partial_id))
    return NULL;
  nsys_set_partial *p = NULL;
  if (partial_id && !(p = nsys_set_partial_take(partial_id)))
    return nsys_call_fail(call, NSYS_E_NOT_FOUND,
                          "params.partialId: no partial reduce %s (unknown, already reduced, closed, or in use by "
                          "another request)", partial_id);
  if (!p) p = nsys_xcalloc(1, sizeof *p);
  uint32_t before = p->n;
  char err[256];
  if (!nsys_rank_summaries_from_json(arr, &p->sums, &p->n, &p->cap, err, sizeof err)) {
    for (uint32_t k = before; k < p->n; k++) nsys_rank_summary_dispose(&p->sums[k]);
    p->n = before; /* the partial is as it was: the request can be sent again */
    if (p->id[0]) nsys_set_partial_keep(p);
    else nsys_set_partial_free(p);
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.summaries%s", err);
  }
  if (keep) {
    nsys_set_partial_keep(p);
    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "partialId", p->id);
    cJSON_AddNumberToObject(res, "ranks", p->n);
    return res;
  }
  nsys_rank_summary *v = p->sums;
  uint32_t n = p->n;
  p->sums = NULL;
  p->n = 0;
  nsys_set_partial_free(p);
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
