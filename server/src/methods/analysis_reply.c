/* The reply-size rule (reply_limit.h) for analysis/run and report/generate:
 * an analysis's rows are paged (`cursor`/`next`), a report's embedded
 * analyses lose rows from their ends, so that the reply stays within
 * maxBytes; everything else (summaries, findings, totals) is always whole. */
#include "methods/analysis_reply.h"

#include <string.h>

#include "methods/reply_limit.h"
#include "rpc/json_write.h"

/* Bytes of item's JSON text as replies print it. */
static size_t nsys__json_len(const cJSON *item) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_json_write(&b, item);
  size_t n = b.len;
  nsys_strbuf_free(&b);
  return n;
}

/* Deletes the items of array a from index k on: O(items). */
static void nsys__cut(cJSON *a, int k) {
  cJSON *it = a ? a->child : NULL;
  for (int i = 0; it && i < k; i++) it = it->next;
  while (it) {
    cJSON *nx = it->next;
    cJSON_Delete(cJSON_DetachItemViaPointer(a, it));
    it = nx;
  }
}

/* Room for `,"truncated":true,"next":"<token>"` */
#define NSYS__TAIL_BYTES 64

bool nsys_analysis_page_rows(nsys_task *task, cJSON *res, int64_t max_bytes, const char *cursor,
                             uint64_t key) {
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(res, "rows");
  int n = cJSON_GetArraySize(rows);
  uint64_t pos = 0;
  if (cursor && (!nsys_cursor_decode(cursor, key, &pos) || pos == 0 || pos >= (uint64_t)n))
    return nsys_task_fail(task, NSYS_E_INVALID_PARAMS, "params.cursor: not a continuation of this request");
  size_t total = nsys__json_len(res);
  if (!cursor && total <= (size_t)max_bytes) return true;
  size_t base = total - nsys__json_len(rows) + 2, used = base + NSYS__TAIL_BYTES;
  for (uint64_t i = 0; i < pos; i++) cJSON_Delete(cJSON_DetachItemFromArray(rows, 0));
  int kept = 0;
  for (cJSON *r = rows->child; r; r = r->next, kept++) {
    size_t len = nsys__json_len(r) + (kept > 0);
    if (used + len > (size_t)max_bytes && kept > 0) break; /* a page holds at least one row */
    used += len;
  }
  int left = n - (int)pos - kept;
  nsys__cut(rows, kept);
  if (left > 0) {
    char tok[NSYS_CURSOR_LEN + 1];
    nsys_cursor_encode(tok, key, pos + (uint64_t)kept);
    cJSON_AddTrueToObject(res, "truncated");
    cJSON_AddStringToObject(res, "next", tok);
  }
  return true;
}

void nsys_report_fit(cJSON *report, int64_t max_bytes) {
  size_t total = nsys__json_len(report);
  if (total <= (size_t)max_bytes) return;
  cJSON *analyses = cJSON_GetObjectItemCaseSensitive(report, "analyses");
  /* rows from the ends of the largest row arrays first, until it fits */
  while (total + NSYS__TAIL_BYTES > (size_t)max_bytes) {
    cJSON *big = NULL, *a;
    size_t big_len = 0;
    cJSON_ArrayForEach(a, analyses) {
      cJSON *rows = cJSON_GetObjectItemCaseSensitive(a, "rows");
      if (!cJSON_GetArraySize(rows)) continue;
      size_t len = nsys__json_len(rows);
      if (len > big_len) {
        big_len = len;
        big = a;
      }
    }
    if (!big) break; /* nothing left to cut: findings and summaries stay whole */
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(big, "rows");
    /* cut the second half of the largest array (O(log) rounds per array) */
    nsys__cut(rows, cJSON_GetArraySize(rows) / 2);
    if (!cJSON_GetObjectItemCaseSensitive(big, "truncated")) cJSON_AddTrueToObject(big, "truncated");
    total = nsys__json_len(report);
  }
  cJSON_AddTrueToObject(report, "truncated");
}
