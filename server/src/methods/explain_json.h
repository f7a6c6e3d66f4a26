/* kernel/explain's result as JSON (protocol/schemas/kernel.explain.result.json):
 * the one converter of explain/'s typed nsys_explain_result, exact int64. */
#ifndef NSYS_METHODS_EXPLAIN_JSON_H
#define NSYS_METHODS_EXPLAIN_JSON_H

#include <cjson/cJSON.h>

#include "explain/explain.h"

cJSON *nsys_explain_result_json(const nsys_explain_result *r);

#endif
