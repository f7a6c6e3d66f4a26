/* Compatibility, to be deleted: the analyses' former cJSON interface, for
 * the one file that still reads results as JSON (explain/agent.c: agent/ask
 * hands them to the model). Defined
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



#endif
