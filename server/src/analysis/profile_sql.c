/* nsys_analysis_prepare: SQL on the profile for the analyses, its failure
 * recorded on the run's nsys_task (a statement of a cancelled task stops
 * mid-way: profile/loader.c's progress handler). */
#include "analysis/analyses.h"
#include "profile/profile.h"

sqlite3_stmt *nsys_analysis_prepare(nsys_task *task, struct nsys_profile *p, const char *sql) {
  return nsys_profile_prepare(p, task, sql);
}

sqlite3_stmt *nsys_actx_prepare(nsys_actx *c, const char *sql) { return nsys_analysis_prepare(c->task, c->p, sql); }
