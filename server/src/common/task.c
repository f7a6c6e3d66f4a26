#include "common/task.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void nsys_task_init(nsys_task *t) { nsys_task_init_child(t, NULL); }

void nsys_task_init_child(nsys_task *t, const nsys_task *parent) {
  memset(t, 0, sizeof *t);
  atomic_init(&t->cancelled, 0);
  t->parent = parent;
  t->last_percent = -1;
  t->err = NSYS_OK;
}

void nsys_task_cancel(nsys_task *t) {
  if (t) atomic_store_explicit(&t->cancelled, 1, memory_order_relaxed);
}

bool nsys_task_cancelled(const nsys_task *t) {
  for (; t; t = t->parent)
    if (atomic_load_explicit(&t->cancelled, memory_order_relaxed) != 0) return true;
  return false;
}

__attribute__((format(printf, 3, 0)))
static bool nsys__task_failv(nsys_task *t, nsys_err err, const char *fmt, va_list ap) {
  if (!t || t->err != NSYS_OK) return false; /* keep the first (most specific) error */
  t->err = err == NSYS_OK ? NSYS_E_INTERNAL : err;
  if (fmt)
    vsnprintf(t->err_msg, sizeof t->err_msg, fmt, ap);
  else
    snprintf(t->err_msg, sizeof t->err_msg, "%s", nsys_err_message(t->err));
  return false;
}

bool nsys_task_fail(nsys_task *t, nsys_err err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nsys__task_failv(t, err, fmt, ap);
  va_end(ap);
  return false;
}

bool nsys_task_fail_cancelled(nsys_task *t) { return nsys_task_fail(t, NSYS_E_CANCELLED, "request cancelled"); }

bool nsys_task_fail_from(nsys_task *t, const nsys_task *from) {
  if (!from || from->err == NSYS_OK) return nsys_task_fail(t, NSYS_E_INTERNAL, NULL);
  return nsys_task_fail(t, from->err, "%s", from->err_msg);
}

bool nsys_task_forgive(nsys_task *t, nsys_err err) {
  if (!t || t->err == NSYS_OK || t->err == NSYS_E_CANCELLED) return false;
  if (err != NSYS_OK && t->err != err) return false;
  t->err = NSYS_OK;
  t->err_msg[0] = '\0';
  return true;
}

void nsys_task_progress_begin(nsys_task *t, const char *title) {
  if (!t || !t->progress_fn || t->progress_begun) return;
  t->progress_begun = true;
  t->last_percent = 0;
  t->progress_fn(t->progress_ctx, NSYS_PROGRESS_BEGIN, title, NULL, 0);
}

void nsys_task_progress(nsys_task *t, int percent, const char *message) {
  if (!t || !t->progress_fn || !t->progress_begun) return;
  if (percent < 0) percent = 0;
  if (percent > 100) percent = 100;
  if (percent == t->last_percent) return;
  t->last_percent = percent;
  t->progress_fn(t->progress_ctx, NSYS_PROGRESS_REPORT, NULL, message, percent);
}

void nsys_task_progress_end(nsys_task *t, const char *message) {
  if (!t || !t->progress_fn || !t->progress_begun) return;
  t->progress_begun = false;
  t->progress_fn(t->progress_ctx, NSYS_PROGRESS_END, NULL, message, 100);
}

static _Thread_local const nsys_task *nsys__current;

const nsys_task *nsys_task_enter(const nsys_task *t) {
  const nsys_task *prev = nsys__current;
  nsys__current = t;
  return prev;
}

void nsys_task_leave(const nsys_task *prev) { nsys__current = prev; }

const nsys_task *nsys_task_current(void) { return nsys__current; }

static _Thread_local unsigned long nsys__interrupts;

void nsys_task_note_interrupt(void) { nsys__interrupts++; }

unsigned long nsys_task_interrupts(void) { return nsys__interrupts; }
