/* Derived structures of the index (placeholder until the summaries land). */
#include <stdlib.h>

#include "common/util.h"
#include "index/index_internal.h"

void nsys__index_derive(nsys_index *ix) {
  if (!ix->priv) ix->priv = nsys_xcalloc(1, sizeof(nsys__index_priv));
}
void nsys__index_free_derived(nsys_index *ix) { (void)ix; }
