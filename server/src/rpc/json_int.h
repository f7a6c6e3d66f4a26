/* Exact 64-bit integers in cJSON trees.
 *
 * cJSON numbers are doubles: nanosecond clocks of epoch-based exports
 * (~1.7e18, above 2^53) lose their last digits in one. The invariant, for
 * every tree the server builds, parses, copies or prints:
 *
 *   An integer item is a cJSON number whose valuedouble is the nearest
 *   double (so comparisons and arithmetic on valuedouble keep working), and
 *   which, when |value| > 2^53, also carries its exact decimal text in
 *   valuestring (cJSON_Delete frees and cJSON_Duplicate copies valuestring
 *   whatever the type). A number item without that text is exactly its
 *   valuedouble. (A parsed literal beyond 2^53 that is no int64, such as
 *   1779782331676752435.5, keeps its own text there, so that it is not
 *   taken for the integer its double happens to be.)
 *
 * Writers (rpc/json_write.c: replies, the CLI's --format json, LLM prompts)
 * print that text; readers that need the integer use nsys_json_get_i64 /
 * nsys_json_i64_or, never (int64_t)valuedouble; code that copies a number
 * from one tree into another uses cJSON_Duplicate or these accessors.
 * nsys_json_parse attaches the text to every integer literal of a parsed
 * document, so request params are exact too. Never change an item made here
 * with cJSON_SetNumberValue (the text would go stale): make a new one. */
#ifndef NSYS_RPC_JSON_INT_H
#define NSYS_RPC_JSON_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

/* An integer item (see above); nsys_json_add_i64 adds one to an object. */
cJSON *nsys_json_i64(int64_t v);
void nsys_json_add_i64(cJSON *obj, const char *key, int64_t v);
/* Object members of method results: a number (null when not finite), an
 * exact integer (nsys_json_add_i64), a string (null when v is NULL). */
void nsys_json_num(cJSON *o, const char *k, double v);
void nsys_json_int(cJSON *o, const char *k, int64_t v);
void nsys_json_str(cJSON *o, const char *k, const char *v);

/* What a number is: an int64 (then *out is set), a number with a fraction,
 * an integer beyond int64, or no number at all. */
typedef enum { NSYS_JSON_I64, NSYS_JSON_FRACTION, NSYS_JSON_BEYOND_I64, NSYS_JSON_NOT_NUMBER } nsys_json_num_class;

/* item's class, from its exact text if it has one, else from its double. */
nsys_json_num_class nsys_json_classify(const cJSON *item, int64_t *out);

/* True when item is a number whose value is an integer within int64 (its
 * exact text if it has one, else its double); *out is then that value. */
bool nsys_json_get_i64(const cJSON *item, int64_t *out);
/* The same, with `fallback` for anything else (NULL, a string, 1.5, 1e300). */
int64_t nsys_json_i64_or(const cJSON *item, int64_t fallback);
/* nsys_json_i64_or of obj[key] (case-sensitive). */
int64_t nsys_json_obj_i64(const cJSON *obj, const char *key, int64_t fallback);

/* True when the JSON number literal text[0..n) (as cJSON accepts it:
 * sign, digits, fraction, exponent) denotes an integer within int64, e.g.
 * "-12", "1.0", "17e2", "-0"; *out is then its exact value. */
bool nsys_json_literal_i64(const char *text, size_t n, int64_t *out);
/* The class of such a literal (NSYS_JSON_NOT_NUMBER for anything else). */
nsys_json_num_class nsys_json_literal_class(const char *text, size_t n, int64_t *out);

/* A number item from a decimal text (a CLI option): exact when the text is
 * an integer literal, a double otherwise; NULL when it is not a number. */
cJSON *nsys_json_number_from_text(const char *text);

/* cJSON_ParseWithLengthOpts(text, n, end, 0), then the exact text attached
 * to every integer literal above 2^53, and its own text to any other literal
 * beyond 2^53 (number tokens and number items are matched in document
 * order). NULL on a parse error, *end as cJSON sets it. */
cJSON *nsys_json_parse(const char *text, size_t n, const char **end);

/* Appends a number item's JSON text: its exact text when it has one, an
 * integral double within 2^53 as all its digits, any other double in 15
 * significant digits when they read back as exactly that double, else 17
 * (cJSON accepts 15 within an epsilon, which loses the .5 of
 * 3890570000000599.5); null for NaN and infinities. */
void nsys_json_number_text(nsys_strbuf *b, const cJSON *item);

#endif
