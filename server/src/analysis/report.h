/* The profile diff and openSet builders (JSON, until their typed rewrites),
 * and the typed report (analysis/report_result.h) for the files that include
 * this header. */
#ifndef NSYS_REPORT_H
#define NSYS_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "analysis/analysis.h"
#include "analysis/report_result.h"
#include "common/util.h"
#include "index/index.h"
#include "common/task.h"
#include "analysis/analysis_compat.h" /* diff.c and openset.c read analysis results as JSON */

struct nsys_profile;

/* profile/diff result. */
cJSON *nsys_diff_build(nsys_task *task, struct nsys_profile *a, const nsys_index *ia,
                       struct nsys_profile *b, const nsys_index *ib);

/* profile/openSet core: ps/ixs are the opened per-rank profiles. */
cJSON *nsys_openset_build(nsys_task *task, struct nsys_profile **ps, const nsys_index **ixs, int n);

#endif
