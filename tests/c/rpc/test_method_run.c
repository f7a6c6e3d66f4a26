/* nsys_method_run: the one way a handler runs. It binds the call's task to the
 * thread for the run (what SQLite's progress handler reads), ends progress,
 * and turns a result into -32800 when the cancellation stopped one of the
 * handler's statements (its numbers may be cut short); a handler that finished
 * its work after a cancel (profile/open: the profile stays open) keeps it. */
#include <stdlib.h>

#include "../common/nsys_check.h"
#include "common/task.h"
#include "rpc/method_table.h"

static const nsys_task *seen_task;
static int ends;

static void sink(void *ctx, nsys_progress_kind kind, const char *title, const char *message, int percent) {
  (void)ctx, (void)title, (void)message, (void)percent;
  if (kind == NSYS_PROGRESS_END) ends++;
}

static cJSON *answers(nsys_call *call) {
  seen_task = nsys_task_current();
  nsys_task_progress_begin(&call->task, "work");
  return cJSON_CreateObject();
}

/* completes its work although the request was cancelled meanwhile (the cancel
 * arriving from another thread between its last poll and its return) */
static cJSON *cancelled_meanwhile(nsys_call *call) {
  nsys_task_cancel(&call->task);
  return cJSON_CreateObject();
}

/* a statement of it was stopped by the cancel (what the progress handler
 * notes), and it answered anyway without checking */
static cJSON *interrupted_unchecked(nsys_call *call) {
  nsys_task_cancel(&call->task);
  nsys_task_note_interrupt();
  return cJSON_CreateObject();
}

static cJSON *fails(nsys_call *call) { return nsys_call_fail(call, NSYS_E_NOT_FOUND, "no such thing"); }

int main(void) {
  nsys_call call;
  nsys_call_init(&call, "test", NULL, NULL);
  call.task.progress_fn = sink;
  cJSON *r = nsys_method_run(answers, &call);
  CHECK(r != NULL && seen_task == &call.task);
  CHECK(nsys_task_current() == NULL); /* unbound after the run */
  CHECK_EQ(ends, 1);                  /* progress ended for the handler */
  cJSON_Delete(r);
  nsys_call_dispose(&call);

  nsys_call_init(&call, "test", NULL, NULL);
  r = nsys_method_run(cancelled_meanwhile, &call); /* finished: its result stands */
  CHECK(r != NULL && call.task.err == NSYS_OK);
  cJSON_Delete(r);
  nsys_call_dispose(&call);

  nsys_call_init(&call, "test", NULL, NULL);
  CHECK(nsys_method_run(interrupted_unchecked, &call) == NULL);
  CHECK_EQ(call.task.err, NSYS_E_CANCELLED);
  nsys_call_dispose(&call);

  nsys_call_init(&call, "test", NULL, NULL);
  nsys_task_cancel(&call.task); /* cancelled before it started: does not run */
  seen_task = NULL;
  CHECK(nsys_method_run(answers, &call) == NULL && seen_task == NULL);
  CHECK_EQ(call.task.err, NSYS_E_CANCELLED);
  nsys_call_dispose(&call);

  nsys_call_init(&call, "test", NULL, NULL);
  CHECK(nsys_method_run(fails, &call) == NULL);
  CHECK_EQ(call.task.err, NSYS_E_NOT_FOUND); /* the handler's own error stays */
  nsys_call_dispose(&call);

  /* a nested run (openSet opening each file) restores the outer binding */
  nsys_call outer, inner;
  nsys_call_init(&outer, "outer", NULL, NULL);
  nsys_call_init(&inner, "inner", NULL, NULL);
  inner.task.parent = &outer.task;
  const nsys_task *prev = nsys_task_enter(&outer.task);
  r = nsys_method_run(answers, &inner);
  CHECK(r != NULL && seen_task == &inner.task && nsys_task_current() == &outer.task);
  cJSON_Delete(r);
  nsys_task_leave(prev);
  nsys_call_dispose(&inner);
  nsys_call_dispose(&outer);
  return nsys_check_done("method_run");
}
