/* STUB: replaced by the index implementation. */
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/call.h"

nsys_index *nsys_index_build(struct nsys_profile *p, struct nsys_call *call) {
  (void)p;
  nsys_call_fail(call, NSYS_E_INTERNAL, "index not implemented yet");
  return NULL;
}
void nsys_index_free(nsys_index *ix) { (void)ix; }
const nsys_index *nsys_index_get(struct nsys_profile *p, struct nsys_call *call) {
  return nsys_index_build(p, call);
}
