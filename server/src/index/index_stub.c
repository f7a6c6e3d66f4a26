/* STUB: replaced by the index implementation. Returns an empty index. */
#include <stdlib.h>

#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/call.h"

nsys_index *nsys_index_build(struct nsys_profile *p, struct nsys_call *call) {
  (void)p;
  (void)call;
  nsys_index *ix = nsys_xcalloc(1, sizeof *ix);
  nsys_strtab_init(&ix->strings);
  return ix;
}
void nsys_index_free(nsys_index *ix) {
  if (!ix) return;
  nsys_strtab_free(&ix->strings);
  free(ix);
}
const nsys_index *nsys_index_get(struct nsys_profile *p, struct nsys_call *call) {
  nsys_index *ix = atomic_load(&p->index);
  if (ix) return ix;
  ix = nsys_index_build(p, call);
  if (!ix) return NULL;
  nsys_index *expected = NULL;
  if (!atomic_compare_exchange_strong(&p->index, &expected, ix)) {
    nsys_index_free(ix);
    return expected;
  }
  return ix;
}
