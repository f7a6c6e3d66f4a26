/* Human renderings (plain text and Markdown) of analysis results, the report
 * and the diff. Pure string building: the CLI prints, the server returns. */
#ifndef NSYS_RENDER_H
#define NSYS_RENDER_H

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

#endif
