/* JSON text writing shared by the methods that answer with large arrays
 * (timeline/range, nvtx/tree, export/perfetto): escaped names cached per
 * request, printf-free decimal writers, and handing a written text to cJSON
 * as a raw item without a copy. */
#ifndef NSYS_METHODS_JSON_TEXT_H
#define NSYS_METHODS_JSON_TEXT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

#include "common/strtab.h"
#include "common/util.h"

/* Escaped (quoted) names by strtab id, computed on first use and kept for
 * the request. */
typedef struct {
  const nsys_strtab *tab;
  char **esc;
  uint32_t *len;
} nsys_escaped_names;

/* The quoted, escaped text of name `id` ("\"\"" for an id out of range); its
 * length is n->len[id] afterwards (2 out of range: nsys_escaped_name_len). */
const char *nsys_escaped_name(nsys_escaped_names *n, uint32_t id);
static inline size_t nsys_escaped_name_len(const nsys_escaped_names *n, uint32_t id) {
  return id < n->tab->count ? n->len[id] : 2;
}
void nsys_escaped_names_free(nsys_escaped_names *n);

/* The text written to b (b is reset) as a raw cJSON item, without a copy. */
cJSON *nsys_json_raw_take(nsys_strbuf *b);

/* Decimal writers, printf-free: a zoom answer holds ~300k numbers. Two
 * digits per step from a table; 64-bit values are split by 1e8 once or twice
 * so the digit loops run on 32-bit words (cheaper division by constants), and
 * digits are written in place (no temporary and no variable-length copy). */
extern const char nsys_digit_pairs[201]; /* "00" "01" ... "99" */

/* v < 1e8, written as exactly 8 digits */
static inline char *nsys_text_8digits(char *o, uint32_t v) {
  uint32_t hi = v / 10000, lo = v % 10000;
  memcpy(o, nsys_digit_pairs + 2 * (hi / 100), 2);
  memcpy(o + 2, nsys_digit_pairs + 2 * (hi % 100), 2);
  memcpy(o + 4, nsys_digit_pairs + 2 * (lo / 100), 2);
  memcpy(o + 6, nsys_digit_pairs + 2 * (lo % 100), 2);
  return o + 8;
}

static inline char *nsys_text_u32(char *o, uint32_t v) {
  int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 : v < 1000000 ? 6
        : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
  char *e = o + n;
  while (v >= 100) {
    uint32_t r = v % 100;
    v /= 100;
    e -= 2;
    memcpy(e, nsys_digit_pairs + 2 * r, 2);
  }
  if (v >= 10) memcpy(e - 2, nsys_digit_pairs + 2 * v, 2);
  else e[-1] = (char)('0' + v);
  return o + n;
}

/* Writes v at o; returns the new end. */
static inline char *nsys_text_i64(char *o, int64_t v) {
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  if (v < 0) *o++ = '-';
  if (u <= UINT32_MAX) return nsys_text_u32(o, (uint32_t)u);
  if (u < 10000000000000000ULL) { /* < 1e16: two parts */
    uint64_t hi = u / 100000000;
    o = nsys_text_u32(o, (uint32_t)hi);
    return nsys_text_8digits(o, (uint32_t)(u - hi * 100000000));
  }
  uint64_t top = u / 10000000000000000ULL, rest = u % 10000000000000000ULL;
  o = nsys_text_u32(o, (uint32_t)top);
  o = nsys_text_8digits(o, (uint32_t)(rest / 100000000));
  return nsys_text_8digits(o, (uint32_t)(rest % 100000000));
}

/* Copies a string literal to o; evaluates to the new end. */
#define NSYS_TEXT_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

#endif
