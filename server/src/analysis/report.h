/* The root-cause report, typed (analysis/report_result.h: findings with
 * their evidence as records; methods/analysis_json.c converts it, and
 * methods/analysis_render.h renders that JSON as text/Markdown). */
#ifndef NSYS_REPORT_H
#define NSYS_REPORT_H

#include <stdbool.h>

#include "analysis/analysis.h"
#include "analysis/report_result.h"
#include "common/util.h"
#include "index/index.h"
#include "common/task.h"

struct nsys_profile;

#endif
