/* The analysis tests' common step: a result as compact JSON text. */
#ifndef NSYS_TEST_ARESULT_TEXT_H
#define NSYS_TEST_ARESULT_TEXT_H

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "methods/analysis_json.h"

/* r as compact JSON (the caller frees it; NULL for a NULL r); r is freed. */
static inline char *t_aresult_text(nsys_aresult *r) {
  cJSON *j = r ? nsys_aresult_json(r) : NULL;
  nsys_aresult_free(r);
  char *out = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return out;
}

#endif
