/* The one converter of typed results (analysis/result.h) to JSON: records,
 * tables, analysis results and the report. Integers stay exact
 * (rpc/json_int.h); column order is key order; absent values have no key. */
#ifndef NSYS_METHODS_ANALYSIS_JSON_H
#define NSYS_METHODS_ANALYSIS_JSON_H

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "analysis/report_result.h"

/* A record as an object ({} for the empty record). */
cJSON *nsys_rrec_json(nsys_rec o);
/* A table as an array of objects ([] for NULL). */
cJSON *nsys_rtab_json(const nsys_rtab *t);
/* The resolved params as the result's `params` object (declaration order; null where unset). */
cJSON *nsys_aparams_json(const nsys_aparams *ps);
/* {name, params, window:{start,end}, rows, summary}; a stub: {rows, summary}. */
cJSON *nsys_aresult_json(const nsys_aresult *r);
/* report/generate's result: the report's record, then analyses:{name: result}. */
cJSON *nsys_report_json(const nsys_report *r);

#endif
