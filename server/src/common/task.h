/* nsys_task: what long work in the core needs from whoever asked for it, and
 * nothing else — a cancel flag, a progress sink and one status (error code and
 * message). No JSON and no request object: the core (profile/, index/,
 * analysis/, explain/, source/) takes an nsys_task *; the server's request
 * (rpc/call.h, nsys_call) and the CLI each embed one and pass &call->task.
 *
 * One error convention: a function that fails records why with
 * nsys_task_fail() (the first error is kept: it is the most specific) and
 * returns false or NULL. A caller that tolerates a failure it expects says so
 * with nsys_task_forgive(), which refuses to forget a cancellation.
 *
 * Thread use: the cancel flag may be set from any thread; everything else is
 * used by the one thread running the work. A task may have a parent: when the
 * parent is cancelled the child reads as cancelled too (a private sub-task's
 * errors and progress stay its own). */
#ifndef NSYS_TASK_H
#define NSYS_TASK_H

#include <stdatomic.h>
#include <stdbool.h>

#include "common/errors.h"

typedef enum { NSYS_PROGRESS_BEGIN, NSYS_PROGRESS_REPORT, NSYS_PROGRESS_END } nsys_progress_kind;

/* Progress sink. percent in [0,100]; title only with BEGIN. */
typedef void (*nsys_progress_fn)(void *ctx, nsys_progress_kind kind, const char *title,
                                 const char *message, int percent);

typedef struct nsys_task {
  atomic_int cancelled;
  const struct nsys_task *parent; /* optional: its cancellation cancels this task */
  nsys_progress_fn progress_fn;   /* NULL: progress goes nowhere */
  void *progress_ctx;             /* owned by whoever set progress_fn */
  bool progress_begun;
  int last_percent;
  nsys_err err; /* NSYS_OK until nsys_task_fail */
  char err_msg[512];
} nsys_task;

void nsys_task_init(nsys_task *t);
/* A task whose cancellation follows `parent` (may be NULL); no progress sink. */
void nsys_task_init_child(nsys_task *t, const nsys_task *parent);

void nsys_task_cancel(nsys_task *t); /* any thread */
bool nsys_task_cancelled(const nsys_task *t); /* NULL: never */

/* Records the first error; returns false so callers can `return nsys_task_fail(...)`.
 * err NSYS_OK is recorded as NSYS_E_INTERNAL; fmt NULL uses the code's message. */
bool nsys_task_fail(nsys_task *t, nsys_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool nsys_task_fail_cancelled(nsys_task *t);
/* Copies another task's error (a sub-task's) into t, keeping t's first error. */
bool nsys_task_fail_from(nsys_task *t, const nsys_task *from);
static inline bool nsys_task_failed(const nsys_task *t) { return t && t->err != 0; }
/* Forgets a recorded error the caller tolerates, if it is `err` (NSYS_OK: any
 * error but a cancellation). Returns true when it forgot one. A cancellation is
 * never forgotten: the request must still answer -32800. */
bool nsys_task_forgive(nsys_task *t, nsys_err err);

/* Progress: begin once, then reports (only whole-percent changes pass), then
 * end. All are no-ops without a sink; safe with t == NULL. */
void nsys_task_progress_begin(nsys_task *t, const char *title);
void nsys_task_progress(nsys_task *t, int percent, const char *message);
void nsys_task_progress_end(nsys_task *t, const char *message);

/* The task the calling thread works for. Whoever runs a task on a thread
 * (the server's worker, the CLI, a core worker thread with a child task)
 * binds it for the run: prev = nsys_task_enter(t); ...; nsys_task_leave(prev).
 * Bindings nest. Read by code that cannot be handed a task: SQLite's progress
 * handler on every profile connection (profile/loader.c) interrupts a
 * statement whose thread's task is cancelled. NULL when none is bound. */
const nsys_task *nsys_task_enter(const nsys_task *t);
void nsys_task_leave(const nsys_task *prev);
const nsys_task *nsys_task_current(void);
/* Statements this thread's cancellation stopped (counted by the progress
 * handler, monotonic): code that reads SQL but may not check every step's
 * result could then hold numbers cut short. nsys_method_run compares the
 * count before and after a handler. */
void nsys_task_note_interrupt(void);
unsigned long nsys_task_interrupts(void);

#endif
