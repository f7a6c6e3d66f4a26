#include "rpc/params.h"

#include <math.h>

#include "index/index.h"
#include "profile/profile.h"
#include "rpc/json_int.h"

static const cJSON *nsys__field(nsys_call *c, const char *field, bool required, bool *ok) {
  *ok = true;
  const cJSON *v = NULL;
  if (c->params && cJSON_IsObject(c->params)) v = cJSON_GetObjectItemCaseSensitive(c->params, field);
  if (!v || cJSON_IsNull(v)) {
    if (required) {
      nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: required field is missing", field);
      *ok = false;
    }
    return NULL;
  }
  return v;
}

bool nsys_param_string(nsys_call *c, const char *field, bool required, const char **out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (!v) return ok;
  if (!cJSON_IsString(v) || !v->valuestring)
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: expected a string", field), false;
  *out = v->valuestring;
  return true;
}

bool nsys_param_int64(nsys_call *c, const char *field, bool required, int64_t min, int64_t max,
                      int64_t *out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (!v) return ok;
  int64_t x = 0; /* exact: the request's own digits (rpc/json_int.h), not the double */
  nsys_json_num_class k = nsys_json_classify(v, &x);
  if (k == NSYS_JSON_FRACTION || k == NSYS_JSON_NOT_NUMBER)
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: expected an integer", field), false;
  if (k == NSYS_JSON_BEYOND_I64 || x < min || x > max)
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: must be between %lld and %lld",
                          field, (long long)min, (long long)max),
           false;
  *out = x;
  return true;
}

bool nsys_param_double(nsys_call *c, const char *field, bool required, double min, double max,
                       double *out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (!v) return ok;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: expected a number", field), false;
  if (v->valuedouble < min || v->valuedouble > max)
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: must be between %g and %g", field,
                          min, max),
           false;
  *out = v->valuedouble;
  return true;
}

bool nsys_param_bool(nsys_call *c, const char *field, bool required, bool *out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (!v) return ok;
  if (!cJSON_IsBool(v))
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: expected true or false", field), false;
  *out = cJSON_IsTrue(v);
  return true;
}

bool nsys_param_any(nsys_call *c, const char *field, bool required, const cJSON **out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (v) *out = v;
  return ok;
}

bool nsys_param_array(nsys_call *c, const char *field, bool required, const cJSON **out) {
  bool ok;
  const cJSON *v = nsys__field(c, field, required, &ok);
  if (!v) return ok;
  if (!cJSON_IsArray(v))
    return nsys_call_fail(c, NSYS_E_INVALID_PARAMS, "params.%s: expected an array", field), false;
  *out = v;
  return true;
}

struct nsys_profile *nsys_param_profile(nsys_call *c, const char *field) {
  const char *id = NULL;
  if (!field) field = "profileId";
  if (!nsys_param_string(c, field, true, &id)) return NULL;
  struct nsys_profile *p = nsys_registry_get(c->profiles, id);
  if (!p) {
    nsys_call_fail(c, NSYS_E_PROFILE_NOT_OPEN, "no open profile with id '%s'", id);
    return NULL;
  }
  /* Every method answers for the file that was opened: if it was deleted or
   * replaced since, say so (-32013) rather than mix old and new data. */
  if (!nsys_profile_check_unchanged(p, &c->task)) {
    nsys_profile_release(p);
    return NULL;
  }
  return p;
}

const struct nsys_index *nsys_param_profile_index(nsys_call *c, const char *field,
                                                  struct nsys_profile **pp) {
  nsys_profile *p = nsys_param_profile(c, field);
  if (!p) return NULL;
  const nsys_index *ix = nsys_index_get(p, &c->task);
  if (!ix) {
    nsys_profile_release(p);
    return NULL;
  }
  *pp = p;
  return ix;
}
