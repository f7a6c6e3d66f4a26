/* common/task.c: the core's cancel flag, progress sink and one error convention. */
#include <pthread.h>
#include <string.h>

#include "common/task.h"
#include "nsys_check.h"

static int begun, reports, ended, last_pct;

static void sink(void *ctx, nsys_progress_kind kind, const char *title, const char *message, int percent) {
  (void)message;
  CHECK(ctx == &begun);
  if (kind == NSYS_PROGRESS_BEGIN) {
    begun++;
    CHECK(title && !strcmp(title, "work"));
  } else if (kind == NSYS_PROGRESS_REPORT) {
    reports++;
    CHECK(percent > last_pct && percent <= 100);
    last_pct = percent;
  } else {
    ended++;
  }
}

static void test_first_error_kept(void) {
  nsys_task t;
  nsys_task_init(&t);
  CHECK(!nsys_task_failed(&t));
  CHECK(!nsys_task_fail(&t, NSYS_E_DATA_MISSING, "no %s table", "SYNC"));
  CHECK(!nsys_task_fail(&t, NSYS_E_INTERNAL, "later"));
  CHECK_EQ(t.err, NSYS_E_DATA_MISSING);
  CHECK(!strcmp(t.err_msg, "no SYNC table"));
  nsys_task_fail(NULL, NSYS_E_INTERNAL, "ignored"); /* no crash */
  nsys_task u;
  nsys_task_init(&u);
  nsys_task_fail(&u, NSYS_OK, NULL); /* OK is not an error: recorded as internal */
  CHECK_EQ(u.err, NSYS_E_INTERNAL);
  CHECK(u.err_msg[0] != '\0');
}

static void test_forgive(void) {
  nsys_task t;
  nsys_task_init(&t);
  CHECK(!nsys_task_forgive(&t, NSYS_OK)); /* nothing to forgive */
  nsys_task_fail(&t, NSYS_E_DATA_MISSING, "missing");
  CHECK(!nsys_task_forgive(&t, NSYS_E_INVALID_PARAMS)); /* another error: kept */
  CHECK_EQ(t.err, NSYS_E_DATA_MISSING);
  CHECK(nsys_task_forgive(&t, NSYS_E_DATA_MISSING));
  CHECK_EQ(t.err, NSYS_OK);
  CHECK(t.err_msg[0] == '\0');
  nsys_task_fail_cancelled(&t);
  CHECK(!nsys_task_forgive(&t, NSYS_OK)); /* a cancellation is never forgotten */
  CHECK_EQ(t.err, NSYS_E_CANCELLED);
}

static void test_parent_cancel(void) {
  nsys_task parent, child, grandchild;
  nsys_task_init(&parent);
  nsys_task_init_child(&child, &parent);
  nsys_task_init_child(&grandchild, &child);
  CHECK(!nsys_task_cancelled(&grandchild));
  CHECK(!nsys_task_cancelled(NULL));
  nsys_task_cancel(&parent);
  CHECK(nsys_task_cancelled(&child) && nsys_task_cancelled(&grandchild));
  nsys_task other;
  nsys_task_init_child(&other, &child);
  nsys_task_cancel(&other); /* a child's cancellation does not reach its parent */
  nsys_task lone;
  nsys_task_init(&lone);
  nsys_task_init_child(&child, &lone);
  nsys_task_cancel(&child);
  CHECK(!nsys_task_cancelled(&lone));
}

static void test_fail_from(void) {
  nsys_task sub, t;
  nsys_task_init(&sub);
  nsys_task_init(&t);
  nsys_task_fail(&sub, NSYS_E_CORRUPT, "page 7");
  nsys_task_fail_from(&t, &sub);
  CHECK_EQ(t.err, NSYS_E_CORRUPT);
  CHECK(!strcmp(t.err_msg, "page 7"));
  nsys_task ok, t2;
  nsys_task_init(&ok);
  nsys_task_init(&t2);
  nsys_task_fail_from(&t2, &ok); /* a sub-task that failed without saying why */
  CHECK_EQ(t2.err, NSYS_E_INTERNAL);
}

static void test_progress(void) {
  nsys_task t;
  nsys_task_init(&t);
  nsys_task_progress(&t, 10, NULL); /* no sink: nothing happens */
  t.progress_fn = sink;
  t.progress_ctx = &begun;
  nsys_task_progress(&t, 10, NULL); /* before begin: dropped */
  CHECK_EQ(reports, 0);
  nsys_task_progress_begin(&t, "work");
  nsys_task_progress_begin(&t, "again"); /* once */
  for (int i = 0; i <= 1000; i++) nsys_task_progress(&t, i / 10, NULL);
  nsys_task_progress(&t, 250, NULL); /* clamped to 100, already sent */
  nsys_task_progress_end(&t, NULL);
  nsys_task_progress_end(&t, NULL);
  CHECK_EQ(begun, 1);
  CHECK_EQ(reports, 100); /* whole-percent changes only: 1..100 */
  CHECK_EQ(ended, 1);
  nsys_task_progress_begin(NULL, "x");
}

/* The thread's bound task: nested bindings restore the outer one; another
 * thread sees its own (none). */
static void *current_elsewhere(void *arg) {
  *(const nsys_task **)arg = nsys_task_current();
  return NULL;
}

static void test_thread_binding(void) {
  nsys_task a, b;
  nsys_task_init(&a);
  nsys_task_init(&b);
  CHECK(nsys_task_current() == NULL);
  const nsys_task *p0 = nsys_task_enter(&a);
  CHECK(p0 == NULL && nsys_task_current() == &a);
  const nsys_task *p1 = nsys_task_enter(&b);
  CHECK(p1 == &a && nsys_task_current() == &b);
  const nsys_task *seen = &a;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, current_elsewhere, &seen) == 0);
  pthread_join(th, NULL);
  CHECK(seen == NULL);
  nsys_task_leave(p1);
  CHECK(nsys_task_current() == &a);
  nsys_task_leave(p0);
  CHECK(nsys_task_current() == NULL);
}

int main(void) {
  test_thread_binding();
  test_first_error_kept();
  test_forgive();
  test_parent_cancel();
  test_fail_from();
  test_progress();
  return nsys_check_done("task");
}
