#include "rpc/method_table.h"

#include <string.h>

static const nsys_method *const nsys__tables[] = {
    nsys_methods_profile, nsys_methods_timeline, nsys_methods_analysis,
    nsys_methods_explain, nsys_methods_source,
};

const nsys_method *nsys_method_find(const char *name) {
  if (!name) return NULL;
  for (size_t t = 0; t < sizeof nsys__tables / sizeof nsys__tables[0]; t++)
    for (const nsys_method *m = nsys__tables[t]; m->name; m++)
      if (strcmp(m->name, name) == 0) return m;
  return NULL;
}

void nsys_method_each(void (*fn)(const char *name, void *ctx), void *ctx) {
  for (size_t t = 0; t < sizeof nsys__tables / sizeof nsys__tables[0]; t++)
    for (const nsys_method *m = nsys__tables[t]; m->name; m++) fn(m->name, ctx);
}
