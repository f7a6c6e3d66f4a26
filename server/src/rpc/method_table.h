/* The one method table. Each module declares its methods in an array
 * (methods/<module>_methods.c) and method_table.c joins them. The server and
 * the CLI both dispatch through nsys_method_find(). */
#ifndef NSYS_METHOD_TABLE_H
#define NSYS_METHOD_TABLE_H

#include "rpc/call.h"

typedef cJSON *(*nsys_method_fn)(nsys_call *call);

enum {
  NSYS_METHOD_INLINE = 1 << 0, /* cheap and never touches SQLite: run on the loop thread */
};

typedef struct nsys_method {
  const char *name;
  nsys_method_fn fn;
  unsigned flags;
} nsys_method;

/* Per-module tables, each ending with {NULL, NULL, 0}. */
extern const nsys_method nsys_methods_profile[];
extern const nsys_method nsys_methods_timeline[];
extern const nsys_method nsys_methods_analysis[];
extern const nsys_method nsys_methods_explain[];
extern const nsys_method nsys_methods_source[];

const nsys_method *nsys_method_find(const char *name);
/* Calls fn(name, ctx) for every registered method, in table order. */
void nsys_method_each(void (*fn)(const char *name, void *ctx), void *ctx);

#endif
