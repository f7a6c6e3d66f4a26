/* The analyses' former cJSON interface (analysis/analysis_compat.h), to be
 * deleted with its last caller. */
#include "analysis/analysis_compat.h"

#include "methods/analysis_json.h"

cJSON *nsys_analysis_run(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                         const nsys_aparams *params, nsys_acache *cache) {
  nsys_aresult *r = nsys_analysis_exec(task, p, ix, name, params, cache);
  if (!r) return NULL;
  cJSON *j = nsys_aresult_json(r);
  nsys_aresult_free(r);
  return j;
}
