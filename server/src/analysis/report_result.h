/* The root-cause report, typed: rules over typed analysis results ->
 * findings (analysis/report.c); methods/analysis_json.c writes it as JSON. */
#ifndef NSYS_ANALYSIS_REPORT_RESULT_H
#define NSYS_ANALYSIS_REPORT_RESULT_H

#include "analysis/analysis.h"
#include "common/task.h"
#include "index/index.h"

struct nsys_profile;

/* report/generate's result, typed: the report's record (nsys_rd_report:
 * file, gpus, window, totals, counts, findings) and the analyses it ran, in
 * order; methods/analysis_json.c writes it as {..., analyses:{name: result}}. */
enum { NSYS_REPORT_ANALYSES = 9 };
typedef struct nsys_report {
  nsys_rec rec;
  const char *names[NSYS_REPORT_ANALYSES];
  nsys_aresult *results[NSYS_REPORT_ANALYSES]; /* a stub where the analysis's data is missing */
} nsys_report;

/* NULL after nsys_task_fail(). */
nsys_report *nsys_report_build(nsys_task *task, struct nsys_profile *p, const nsys_index *ix);
void nsys_report_free(nsys_report *r);

#endif
