/* The root-cause report (rules over analysis results -> findings) and the
 * profile diff. Both build JSON; methods/analysis_render.h turns it into
 * text/Markdown. */
#ifndef NSYS_REPORT_H
#define NSYS_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/util.h"
#include "index/index.h"
#include "common/task.h"
#include "analysis/analysis_compat.h" /* diff.c and openset.c read analysis results as JSON */

struct nsys_profile;

/* report/generate result: {file, gpus, window, totals, findings:[...],
 * analyses:{name: result}}. NULL after nsys_call_fail(). */
cJSON *nsys_report_build(nsys_task *task, struct nsys_profile *p, const nsys_index *ix);

/* profile/diff result. */
cJSON *nsys_diff_build(nsys_task *task, struct nsys_profile *a, const nsys_index *ia,
                       struct nsys_profile *b, const nsys_index *ib);

/* profile/openSet core: ps/ixs are the opened per-rank profiles. */
cJSON *nsys_openset_build(nsys_task *task, struct nsys_profile **ps, const nsys_index **ixs, int n);

#endif
