/* OpenACC trace records (nsys --trace=openacc): CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH
 * and _OTHER rows carry the directive's srcFile, lineNo and funcName, the
 * only native file:line an export holds. A kernel launched by the OpenACC
 * runtime is launched by a CUDA API call inside the enqueue-launch record
 * (inside its compute construct) on the same thread: the innermost record
 * around the call is where the kernel came from. No JSON. */
#ifndef NSYS_SOURCE_OPENACC_TRACE_H
#define NSYS_SOURCE_OPENACC_TRACE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"

struct nsys_profile;
struct nsys_index;

typedef struct nsys_acc_site {
  int64_t file;   /* StringIds id of srcFile */
  int64_t func;   /* StringIds id of funcName, -1 when absent */
  int line;       /* lineNo; 0: no record around the call */
  bool launch;    /* from the enqueue-launch table (else a construct of _OTHER) */
} nsys_acc_site;

/* out[a] for every CUDA API call a of ix (calls that launched no kernel are
 * left at line 0). Exports without the tables, or whose tables lack
 * start/end/globalTid/srcFile/lineNo, give nothing. False after failing the
 * task (a cancel, or a read error). O((records + calls) log). */
bool nsys_openacc_sites(sqlite3 *db, const struct nsys_index *ix, nsys_acc_site *out, nsys_task *task);

#endif
