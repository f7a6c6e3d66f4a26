/* The reply-size rule for analysis/run and report/generate (analysis_reply.c). */
#ifndef NSYS_METHODS_ANALYSIS_REPLY_H
#define NSYS_METHODS_ANALYSIS_REPLY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"

/* Keeps the page of res.rows that starts at `cursor` (NULL: the first row)
 * and fits, with the rest of res, in max_bytes (a page holds at least one
 * row, so it passes max_bytes when the summary or that row alone does); when rows are left after it,
 * adds `truncated: true` and `next` (a token of `key`, which names the
 * listing). A reply that fits is left as it is. False after -32602 for a
 * cursor that does not continue this listing. */
bool nsys_analysis_page_rows(nsys_task *task, cJSON *res, int64_t max_bytes, const char *cursor,
                             uint64_t key);

/* Cuts rows from the ends of report.analyses.*.rows (largest arrays first,
 * each cut analysis marked `truncated: true`, and the report too) until the
 * report fits in max_bytes; findings, totals and summaries stay whole. */
void nsys_report_fit(cJSON *report, int64_t max_bytes);

#endif
