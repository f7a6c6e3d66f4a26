/* kernel/explain: identity (knowledge base + name analysis), launch
 * configuration and theoretical occupancy, evidence from the profile
 * (cached per-name statistics), suggestions and hover-ready markdown.
 * Builds the result as cJSON (explain/ is a result-builder module). */
#ifndef NSYS_EXPLAIN_H
#define NSYS_EXPLAIN_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "index/index.h"
#include "rpc/call.h"

struct nsys_profile;

typedef struct nsys_explain_req {
  struct nsys_profile *p;  /* NULL: explain a name from the knowledge base only */
  const nsys_index *ix;    /* the profile's index (NULL when p is NULL) */
  const char *name;        /* shortName or demangledName; NULL when kernel_id >= 0 */
  int64_t kernel_id;       /* op id in the index, or -1 */
} nsys_explain_req;

/* The kernel/explain result (see protocol/schemas/kernel.explain.result.json),
 * or NULL after nsys_call_fail(): -32008 for an unknown kernelId, -32800
 * when cancelled. A name absent from the profile still gets the knowledge
 * base's explanation, with "inProfile": false and "stats": null. */
cJSON *nsys_explain_kernel(nsys_call *call, const nsys_explain_req *req);

/* Guesses a category from a name for kernels the KB does not know
 * ("gemm", "reduction", "copy", ...); "unknown" when nothing fits. */
const char *nsys_explain_guess_category(const char *name);

#endif
