/* The analyses' former cJSON interface (analysis/analysis_compat.h), to be
 * deleted with its last caller. */
#include "analysis/analysis_compat.h"

#include <math.h>
#include <stdlib.h>

#include "common/util.h"
#include "methods/analysis_json.h"

cJSON *nsys_analysis_run(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                         const nsys_aparams *params, nsys_acache *cache) {
  nsys_aresult *r = nsys_analysis_exec(task, p, ix, name, params, cache);
  if (!r) return NULL;
  cJSON *j = nsys_aresult_json(r);
  nsys_aresult_free(r);
  return j;
}

bool nsys_analysis_run_all(nsys_task *task, nsys_arun *runs, uint32_t n, const char *title) {
  nsys_aexec *ex = nsys_xcalloc((size_t)n + 1, sizeof *ex);
  for (uint32_t i = 0; i < n; i++)
    ex[i] = (nsys_aexec){.p = runs[i].p, .ix = runs[i].ix, .name = runs[i].name, .params = runs[i].params,
                         .cache = runs[i].cache};
  bool ok = nsys_analysis_exec_all(task, ex, n, title);
  for (uint32_t i = 0; i < n; i++) {
    runs[i].task = ex[i].task;
    runs[i].result = ex[i].result ? nsys_aresult_json(ex[i].result) : NULL;
    nsys_aresult_free(ex[i].result);
  }
  free(ex);
  return ok;
}

void nsys_json_num(cJSON *o, const char *k, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}
void nsys_json_int(cJSON *o, const char *k, int64_t v) { nsys_json_add_i64(o, k, v); }
void nsys_json_str(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}
