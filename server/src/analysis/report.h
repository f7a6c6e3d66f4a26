/* The root-cause report (rules over analysis results -> findings); profile/diff
 * is typed (analysis/diff.h). The report builds JSON; methods/analysis_render.h turns it into
 * text/Markdown. */
#ifndef NSYS_REPORT_H
#define NSYS_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/util.h"
#include "index/index.h"
#include "common/task.h"

struct nsys_profile;

/* report/generate result: {file, gpus, window, totals, findings:[...],
 * analyses:{name: result}}. NULL after nsys_call_fail(). */
cJSON *nsys_report_build(nsys_task *task, struct nsys_profile *p, const nsys_index *ix);

/* profile/openSet core: ps/ixs are the opened per-rank profiles. */
cJSON *nsys_openset_build(nsys_task *task, struct nsys_profile **ps, const nsys_index **ixs, int n);

#endif
