/* Human renderings (plain text and Markdown) of the JSON results of
 * analysis/run, report/generate and profile/diff: one rendering, of the
 * same JSON the methods answer. Pure string building: the CLI prints it,
 * report/generate returns it as `rendered`. */
#ifndef NSYS_METHODS_ANALYSIS_RENDER_H
#define NSYS_METHODS_ANALYSIS_RENDER_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/util.h"
#include "rpc/json_int.h"

/* Formats a value for a cell: *Ns keys as durations, *Pct as percentages,
 * bytes as KiB/MiB/GiB, arrays/objects compactly. */
void nsys_render_value(nsys_strbuf *b, const char *key, const cJSON *v);
/* A table of the scalar fields of `rows` (array of objects). max_rows 0 = all. */
void nsys_render_table(nsys_strbuf *b, const cJSON *rows, bool md, int max_rows, int max_cell);
/* An analysis result: header with window, rows table, summary. */
void nsys_render_result(nsys_strbuf *b, const cJSON *result, bool md);
/* The report/generate result (report_render.c; profile/diff: methods/diff_json.h). */
void nsys_report_render(nsys_strbuf *b, const cJSON *report, bool md);
/* Adds `rendered` (text or Markdown) and `format` to a report result. */
void nsys_report_attach_rendering(cJSON *report, bool md);

#endif
