/* profile/diff: params -> nsys_diff_run -> JSON (methods/diff_json.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/diff.h"
#include "methods/diff_json.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

/* Records -32602 with the message; returns false (for `return nsys__bad(...)`). */
static bool nsys__bad(nsys_call *call, const char *what, const char *detail) {
  nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s%s", what, detail);
  return false;
}

/* params.thresholds -> t (false after nsys_call_fail). */
static bool nsys__thresholds(nsys_call *call, nsys_diff_thresholds *t) {
  const cJSON *th = NULL;
  if (!nsys_param_any(call, "thresholds", false, &th)) return false;
  if (!th || cJSON_IsNull(th)) return true;
  if (!cJSON_IsObject(th)) return nsys__bad(call, "thresholds", ": expected an object");
  const cJSON *it;
  char err[256];
  cJSON_ArrayForEach(it, th) {
    if (!strcmp(it->string, "families")) {
      if (!cJSON_IsObject(it))
        return nsys__bad(call, "thresholds.families", ": expected an object");
      const cJSON *f;
      cJSON_ArrayForEach(f, it) {
        char key[300], val[64];
        if (!cJSON_IsNumber(f) || strlen(f->string) > 256)
          return nsys__bad(call, "thresholds.families", ": expected FAMILY: percent");
        snprintf(key, sizeof key, "kernel:%s", f->string);
        snprintf(val, sizeof val, "%.17g", f->valuedouble);
        if (!nsys_diff_threshold_set(t, key, strlen(key), val, strlen(val), err, sizeof err))
          return nsys__bad(call, "thresholds.families: ", err);
      }
      continue;
    }
    if (nsys_diff_comp_find(it->string, strlen(it->string)) < 0 || !cJSON_IsNumber(it))
      return nsys__bad(call, "thresholds",
                       ": expected percentages for step, compute, ncclExposed, idle, copies, launchOverhead or "
                       "families");
    char val[64];
    snprintf(val, sizeof val, "%.17g", it->valuedouble);
    if (!nsys_diff_threshold_set(t, it->string, strlen(it->string), val, strlen(val), err, sizeof err))
      return nsys__bad(call, "thresholds: ", err);
  }
  return true;
}

static bool nsys__page(nsys_call *call, nsys_diff_page *pg) {
  int64_t off = 0, lim = 50, il = 1000;
  const cJSON *kinds = NULL;
  if (!nsys_param_int64(call, NSYS_P_PROFILE_DIFF_OFFSET, &off) ||
      !nsys_param_int64(call, NSYS_P_PROFILE_DIFF_LIMIT, &lim) ||
      !nsys_param_int64(call, NSYS_P_PROFILE_DIFF_ITERATION_LIMIT, &il) ||
      !nsys_param_array(call, "kinds", false, &kinds))
    return false;
  *pg = (nsys_diff_page){(uint32_t)off, (uint32_t)lim, 0, (uint32_t)il};
  const cJSON *k;
  cJSON_ArrayForEach(k, kinds) {
    int i = cJSON_IsString(k) ? nsys_diff_kind_find(k->valuestring) : -1;
    if (i < 0)
      return nsys__bad(call, "kinds", ": expected kernel, family, nvtx, stream, device or launchConfig");
    pg->kinds |= 1u << i;
  }
  return true;
}

cJSON *nsys_method_profile_diff(nsys_call *call) {
  nsys_diff_page page;
  nsys_diff_thresholds th;
  nsys_diff_thresholds_init(&th);
  if (!nsys__page(call, &page) || !nsys__thresholds(call, &th)) {
    nsys_diff_thresholds_free(&th);
    return NULL;
  }
  cJSON *res = NULL;
  nsys_profile *a = nsys_param_profile(call, "base");
  nsys_profile *b = a ? nsys_param_profile(call, "compare") : NULL;
  if (a && b) {
    const nsys_index *ia = nsys_index_get(a, &call->task);
    const nsys_index *ib = ia ? nsys_index_get(b, &call->task) : NULL;
    nsys_diff d;
    if (ia && ib && nsys_diff_run(&d, &call->task, a, ia, b, ib, &th)) res = nsys_diff_json(&d, &page);
    if (ia && ib) nsys_diff_free(&d);
  }
  if (a) nsys_profile_release(a);
  if (b) nsys_profile_release(b);
  nsys_diff_thresholds_free(&th);
  return res;
}
