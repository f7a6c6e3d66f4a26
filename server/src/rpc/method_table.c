#include "rpc/method_table.h"

#include <string.h>

static const nsys_method nsys__methods[] = {
#define NSYS__METHOD_ENTRY(name, handler, flags) {name, handler, flags},
    NSYS_METHOD_LIST(NSYS__METHOD_ENTRY)
#undef NSYS__METHOD_ENTRY
};

static const char *const nsys__lifecycle[] = {
    NULL,
#define NSYS__LIFE_NAME(id, name) name,
    NSYS_LIFECYCLE_LIST(NSYS__LIFE_NAME)
#undef NSYS__LIFE_NAME
};

#define NSYS__COUNT(a) (sizeof(a) / sizeof((a)[0]))

const nsys_method *nsys_method_lookup(const char *name, bool with_test) {
  if (!name) return NULL;
  for (size_t i = 0; i < NSYS__COUNT(nsys__methods); i++) {
    const nsys_method *m = &nsys__methods[i];
    if ((with_test || !(m->flags & NSYS_METHOD_TEST_ONLY)) && strcmp(m->name, name) == 0) return m;
  }
  return NULL;
}

const nsys_method *nsys_method_find(const char *name) { return nsys_method_lookup(name, false); }

void nsys_method_each(void (*fn)(const char *name, void *ctx), void *ctx) {
  for (size_t i = 0; i < NSYS__COUNT(nsys__methods); i++)
    if (!(nsys__methods[i].flags & NSYS_METHOD_TEST_ONLY)) fn(nsys__methods[i].name, ctx);
}

nsys_lifecycle nsys_lifecycle_find(const char *name) {
  if (!name) return NSYS_LIFE_NONE;
  for (size_t i = 1; i < NSYS__COUNT(nsys__lifecycle); i++)
    if (strcmp(nsys__lifecycle[i], name) == 0) return (nsys_lifecycle)i;
  return NSYS_LIFE_NONE;
}

cJSON *nsys_method_run(nsys_method_fn fn, nsys_call *call) {
  if (nsys_call_cancelled(call)) return nsys_call_fail_cancelled(call);
  const nsys_task *prev = nsys_task_enter(&call->task);
  unsigned long interrupts = nsys_task_interrupts();
  cJSON *result = fn(call);
  nsys_task_leave(prev);
  if (call->task.progress_begun) nsys_task_progress_end(&call->task, NULL);
  if (result && nsys_task_interrupts() != interrupts) {
    cJSON_Delete(result);
    return nsys_call_fail_cancelled(call);
  }
  return result;
}
