/* Compatibility, to be deleted: the analyses' former cJSON interface, for
 * the files that still read results as JSON while their typed rewrites are
 * under way (analysis/diff.c, analysis/openset.c, explain/agent.c). Defined
 * in methods/analysis_compat.c on top of nsys_analysis_exec and the one
 * converter (methods/analysis_json.c); new code uses nsys_analysis_exec. */
#ifndef NSYS_ANALYSIS_COMPAT_H
#define NSYS_ANALYSIS_COMPAT_H

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "rpc/json_int.h"

/* nsys_analysis_exec's result as JSON ({name, params, window, rows, summary}). */
cJSON *nsys_analysis_run(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                         const nsys_aparams *params, nsys_acache *cache);

/* nsys_analysis_exec_all with JSON results. */
typedef struct nsys_arun {
  struct nsys_profile *p;
  const nsys_index *ix;
  const char *name;
  const nsys_aparams *params;
  nsys_acache *cache;
  cJSON *result; /* out */
  nsys_task task; /* out */
} nsys_arun;
bool nsys_analysis_run_all(nsys_task *task, nsys_arun *runs, uint32_t n, const char *title);

/* JSON helpers of the former analyses (null for a non-finite v / a NULL string). */
void nsys_json_num(cJSON *o, const char *k, double v);
void nsys_json_int(cJSON *o, const char *k, int64_t v);
void nsys_json_str(cJSON *o, const char *k, const char *v);

#endif
