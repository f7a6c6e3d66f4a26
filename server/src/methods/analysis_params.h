/* The analyses' params in JSON (methods/analysis_params.c). */
#ifndef NSYS_METHODS_ANALYSIS_PARAMS_H
#define NSYS_METHODS_ANALYSIS_PARAMS_H

#include <cjson/cJSON.h>

#include "analysis/analysis.h"

/* analysis/list payload: [{name, description, params:[{name,type,default,description}]}] */
cJSON *nsys_analysis_list_json(void);

/* Parses `given` (object or NULL; numbers as JSON numbers or strings, as
 * CLI --param k=v gives them) into *out, defaults applied. False after
 * nsys_task_fail (-32602 naming the field; *out then holds nothing). */
bool nsys_analysis_params_from_json(nsys_task *task, const nsys_analysis *a, const cJSON *given,
                                    nsys_aparams *out);

/* nsys_analysis_exec with params parsed from JSON, its result as JSON. */
cJSON *nsys_analysis_run_json(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                              const cJSON *params, nsys_acache *cache);

#endif
