/* Typed access to request params. Each getter returns false after recording
 * a -32602 error that names the field (e.g. "params.width: expected an integer
 * >= 1"). Optional getters leave *out untouched when the field is absent. */
#ifndef NSYS_PARAMS_H
#define NSYS_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/call.h"
#include "common/param_specs.gen.h" /* NSYS_P_<METHOD>_<FIELD>: the schemas' integer params */

struct nsys_profile;

bool nsys_param_string(nsys_call *c, const char *field, bool required, const char **out);
bool nsys_param_int64(nsys_call *c, const char *field, bool required, int64_t min, int64_t max,
                      int64_t *out);
bool nsys_param_double(nsys_call *c, const char *field, bool required, double min, double max,
                       double *out);
bool nsys_param_bool(nsys_call *c, const char *field, bool required, bool *out);
/* Any JSON type; returns NULL (no error) when absent and not required. */
bool nsys_param_any(nsys_call *c, const char *field, bool required, const cJSON **out);
/* Array of strings; *out points into params (no copy). */
bool nsys_param_array(nsys_call *c, const char *field, bool required, const cJSON **out);

/* Looks up params.profileId (or `field`) in the registry and returns a
 * retained profile: release it with nsys_profile_release(). Fails with
 * -32602 when missing/ill-typed, -32005 when no such profile is open and
 * -32013 when its file was deleted or replaced since it was opened. */
struct nsys_profile *nsys_param_profile(nsys_call *c, const char *field);

/* nsys_param_profile, then the profile's index (built on first use). On
 * success *pp holds a retained profile the caller releases; on failure
 * returns NULL with the error recorded and nothing to release. */
struct nsys_index;
const struct nsys_index *nsys_param_profile_index(nsys_call *c, const char *field,
                                                  struct nsys_profile **pp);

#endif
