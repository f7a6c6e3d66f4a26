/* The one method table, generated from protocol/methods.json
 * (rpc/method_list.gen.h). The server and the CLI both dispatch through
 * nsys_method_find(); the lifecycle methods, handled by rpc/server.c itself,
 * are named by nsys_lifecycle_find(). */
#ifndef NSYS_METHOD_TABLE_H
#define NSYS_METHOD_TABLE_H

#include "rpc/call.h"
#include "rpc/method_list.gen.h"

typedef cJSON *(*nsys_method_fn)(nsys_call *call);

enum { /* the flags of protocol/methods.json that the C side reads */
  NSYS_METHOD_INLINE = 1 << 0,      /* cheap and never touches SQLite: run on the loop thread */
  NSYS_METHOD_PROGRESS = 1 << 1,    /* reports $/progress given a workDoneToken */
  NSYS_METHOD_CANCELLABLE = 1 << 2, /* polls its cancel flag while it runs */
  NSYS_METHOD_TEST_ONLY = 1 << 3,   /* hidden test/... method (rpc/test_methods.c) */
};

typedef struct nsys_method {
  const char *name;
  nsys_method_fn fn;
  unsigned flags;
} nsys_method;

/* Every handler, declared once (each module file defines its own). */
#define NSYS__METHOD_DECLARE(name, handler, flags) cJSON *handler(nsys_call *call);
NSYS_METHOD_LIST(NSYS__METHOD_DECLARE)
#undef NSYS__METHOD_DECLARE

/* Runs fn for call on the calling thread, the one way every caller (server,
 * CLI, a method calling another) runs a handler: call->task is bound to the
 * thread meanwhile (nsys_task_enter: a cancelled request's SQL statements stop,
 * profile/loader.c) and its progress is ended. When the cancellation stopped
 * one of its statements, it answers -32800 whatever fn returned: a handler
 * that does not check every step's result may hold numbers cut short, and
 * partial numbers are never an answer. A handler that finished its work (a
 * profile it opened stays open) keeps its result. */
cJSON *nsys_method_run(nsys_method_fn fn, nsys_call *call);

/* The method called name, or NULL; test-only methods only when with_test. */
const nsys_method *nsys_method_lookup(const char *name, bool with_test);
/* The same without test-only methods (the CLI, in-process callers). */
const nsys_method *nsys_method_find(const char *name);
/* Calls fn(name, ctx) for every method but the test-only ones, in table order
 * (capabilities.methods). */
void nsys_method_each(void (*fn)(const char *name, void *ctx), void *ctx);

typedef enum {
  NSYS_LIFE_NONE = 0, /* not a lifecycle method */
#define NSYS__LIFE_ENUM(id, name) NSYS_LIFE_##id,
  NSYS_LIFECYCLE_LIST(NSYS__LIFE_ENUM)
#undef NSYS__LIFE_ENUM
} nsys_lifecycle;

/* Which lifecycle method name is (initialize, shutdown, exit, ...). */
nsys_lifecycle nsys_lifecycle_find(const char *name);

#endif
