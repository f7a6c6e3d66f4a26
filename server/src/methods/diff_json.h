/* The JSON of profile/diff (protocol/schemas/profile.diff.result.json) from
 * the typed result (analysis/diff.h); the text/Markdown rendering of that
 * JSON (diff_render.c). */
#ifndef NSYS_METHODS_DIFF_JSON_H
#define NSYS_METHODS_DIFF_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/diff.h"
#include "common/util.h"

typedef struct nsys_diff_page {
  uint32_t offset, limit;  /* the deltas listed: [offset, offset + limit) of those of the kinds */
  uint32_t kinds;          /* bit per nsys_diff_kind; 0: all */
  uint32_t iteration_limit; /* per-iteration rows per side */
} nsys_diff_page;

cJSON *nsys_diff_json(const nsys_diff *d, const nsys_diff_page *page);
/* Text or Markdown of a profile/diff result. */
void nsys_diff_render(nsys_strbuf *b, const cJSON *diff, bool md);

#endif
