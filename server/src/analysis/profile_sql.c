/* nsys_analysis_prepare: SQL on the profile for the analyses, with a failure
 * recorded on the run's nsys_task.
 *
 * A bridge while profile/ still takes nsys_call: nsys_profile_prepare records
 * its error on a call, so this prepares on a private one and copies the error
 * to the task. Once nsys_profile_prepare takes an nsys_task (branch `task`),
 * the body is `return nsys_profile_prepare(p, task, sql);` and this file
 * leaves the layering allow-list. */
#include "analysis/analyses.h"
#include "profile/profile.h"
#include "rpc/call.h"

sqlite3_stmt *nsys_analysis_prepare(nsys_task *task, struct nsys_profile *p, const char *sql) {
  nsys_call sub;
  nsys_call_init(&sub, "analysis", NULL, NULL);
  sqlite3_stmt *st = nsys_profile_prepare(p, &sub, sql);
  if (!st) nsys_task_fail_from(task, &sub.task);
  nsys_call_dispose(&sub);
  return st;
}

sqlite3_stmt *nsys_actx_prepare(nsys_actx *c, const char *sql) { return nsys_analysis_prepare(c->task, c->p, sql); }
