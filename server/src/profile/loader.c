/* STUB: replaced by the loader implementation. */
#include <stdlib.h>

#include "profile/profile.h"
#include "rpc/call.h"

nsys_profile *nsys_profile_open(const char *path, struct nsys_call *call) {
  (void)path;
  nsys_call_fail(call, NSYS_E_INTERNAL, "loader not implemented yet");
  return NULL;
}
void nsys_profile_retain(nsys_profile *p) { atomic_fetch_add(&p->refcount, 1); }
void nsys_profile_release(nsys_profile *p) {
  if (p && atomic_fetch_sub(&p->refcount, 1) == 1) free(p);
}
const char *nsys_profile_string(const nsys_profile *p, int64_t id) {
  return id >= 0 && id < p->n_strings ? p->strings[id] : NULL;
}
