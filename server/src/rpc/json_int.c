/* Exact 64-bit integers in cJSON trees; see json_int.h. */
#include "rpc/json_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSYS__EXACT_DOUBLE 9007199254740992 /* 2^53: every integer up to it is a double */

static bool nsys__needs_text(int64_t v) { return v > NSYS__EXACT_DOUBLE || v < -NSYS__EXACT_DOUBLE; }

/* Gives a number item v's text (replacing any it had). */
static void nsys__set_text(cJSON *item, int64_t v) {
  char digits[24];
  int n = snprintf(digits, sizeof digits, "%" PRId64, v);
  /* cJSON frees valuestring with free() (no cJSON_InitHooks in this program) */
  free(item->valuestring);
  item->valuestring = nsys_xstrndup(digits, (size_t)n);
}

cJSON *nsys_json_i64(int64_t v) {
  cJSON *item = cJSON_CreateNumber((double)v);
  if (!item) abort(); /* out of memory, as nsys_xmalloc */
  if (nsys__needs_text(v)) nsys__set_text(item, v);
  return item;
}

void nsys_json_add_i64(cJSON *obj, const char *key, int64_t v) {
  cJSON_AddItemToObject(obj, key, nsys_json_i64(v));
}

nsys_json_num_class nsys_json_classify(const cJSON *item, int64_t *out) {
  if (!cJSON_IsNumber(item)) return NSYS_JSON_NOT_NUMBER;
  if (item->valuestring) return nsys_json_literal_class(item->valuestring, strlen(item->valuestring), out);
  double d = item->valuedouble;
  if (!isfinite(d)) return NSYS_JSON_NOT_NUMBER;
  if (d != floor(d)) return NSYS_JSON_FRACTION;
  /* [-2^63, 2^63): every such integral double converts without overflow */
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return NSYS_JSON_BEYOND_I64;
  *out = (int64_t)d;
  return NSYS_JSON_I64;
}

bool nsys_json_get_i64(const cJSON *item, int64_t *out) { return nsys_json_classify(item, out) == NSYS_JSON_I64; }

int64_t nsys_json_i64_or(const cJSON *item, int64_t fallback) {
  int64_t v;
  return nsys_json_get_i64(item, &v) ? v : fallback;
}

int64_t nsys_json_obj_i64(const cJSON *obj, const char *key, int64_t fallback) {
  return nsys_json_i64_or(cJSON_GetObjectItemCaseSensitive(obj, key), fallback);
}

static bool nsys__digit(char c) { return c >= '0' && c <= '9'; }

bool nsys_json_literal_i64(const char *text, size_t n, int64_t *out) {
  return nsys_json_literal_class(text, n, out) == NSYS_JSON_I64;
}

nsys_json_num_class nsys_json_literal_class(const char *t, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  size_t int_at = i;
  while (i < n && nsys__digit(t[i])) i++;
  size_t n_int = i - int_at, frac_at = i, n_frac = 0;
  if (i < n && t[i] == '.') {
    frac_at = ++i;
    while (i < n && nsys__digit(t[i])) i++;
    n_frac = i - frac_at;
  }
  if (n_int + n_frac == 0) return NSYS_JSON_NOT_NUMBER;
  int64_t exp = 0;
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) eneg = t[i++] == '-';
    if (i == n || !nsys__digit(t[i])) return NSYS_JSON_NOT_NUMBER;
    for (; i < n && nsys__digit(t[i]); i++)
      if (exp < 1000000) exp = exp * 10 + (t[i] - '0'); /* saturates: beyond any int64 anyway */
    if (eneg) exp = -exp;
  }
  if (i != n) return NSYS_JSON_NOT_NUMBER;
  /* the mantissa's digits, integer part then fraction, as one sequence */
  size_t nd = n_int + n_frac;
#define NSYS__MDIGIT(j) ((j) < n_int ? t[int_at + (j)] : t[frac_at + (j) - n_int])
  size_t first = 0, last = nd; /* first and one past the last non-zero digit */
  while (first < nd && NSYS__MDIGIT(first) == '0') first++;
  if (first == nd) {
    *out = 0; /* 0, -0, 0.000e7 */
    return NSYS_JSON_I64;
  }
  while (NSYS__MDIGIT(last - 1) == '0') last--;
  /* value = digits[first, last) * 10^(exp - n_frac + trailing zeros) */
  int64_t scale = exp - (int64_t)n_frac + (int64_t)(nd - last);
  if (scale < 0) return NSYS_JSON_FRACTION; /* the last non-zero digit is after the point */
  if ((int64_t)(last - first) + scale > 19) return NSYS_JSON_BEYOND_I64;
  uint64_t u = 0;
  for (size_t j = first; j < last; j++) u = u * 10 + (uint64_t)(NSYS__MDIGIT(j) - '0');
#undef NSYS__MDIGIT
  for (int64_t k = 0; k < scale; k++) {
    if (u > UINT64_MAX / 10) return NSYS_JSON_BEYOND_I64;
    u *= 10;
  }
  if (neg ? u > (uint64_t)1 << 63 : u > (uint64_t)INT64_MAX) return NSYS_JSON_BEYOND_I64;
  *out = neg ? (int64_t)((uint64_t)0 - u) : (int64_t)u;
  return NSYS_JSON_I64;
}

cJSON *nsys_json_number_from_text(const char *text) {
  if (!text) return NULL;
  size_t n = strlen(text);
  int64_t v;
  if (nsys_json_literal_i64(text, n, &v)) return nsys_json_i64(v);
  char *end = NULL;
  double d = strtod(text, &end);
  if (!n || end != text + n || !isfinite(d)) return NULL;
  return cJSON_CreateNumber(d);
}

/* ---- parsing ------------------------------------------------------------ */

/* The number tokens of a document that cJSON parsed, in order: outside
 * strings, a token starts at '-' or a digit and runs over the characters
 * cJSON's number parser takes (digits, sign, '.', 'e', 'E'). */
typedef struct {
  const char *p, *end;
} nsys__tokens;

static bool nsys__next_number(nsys__tokens *s, const char **tok, size_t *len) {
  while (s->p < s->end) {
    char c = *s->p;
    if (c == '"') {
      for (s->p++; s->p < s->end && *s->p != '"'; s->p++)
        if (*s->p == '\\') s->p++;
      s->p++;
    } else if (c == '-' || nsys__digit(c)) {
      const char *a = s->p;
      while (s->p < s->end && (nsys__digit(*s->p) || *s->p == '-' || *s->p == '+' || *s->p == '.' ||
                               *s->p == 'e' || *s->p == 'E'))
        s->p++;
      *tok = a;
      *len = (size_t)(s->p - a);
      return true;
    } else {
      s->p++;
    }
  }
  return false;
}

/* Items in document order (siblings, depth first); nesting is bounded by
 * cJSON's CJSON_NESTING_LIMIT. Returns false when the tokens ran out. */
static bool nsys__attach(cJSON *item, nsys__tokens *s) {
  for (; item; item = item->next) {
    if (cJSON_IsNumber(item)) {
      const char *tok;
      size_t len;
      int64_t v;
      if (!nsys__next_number(s, &tok, &len)) return false;
      /* the double cJSON made stays: it is the nearest one */
      if (nsys_json_literal_i64(tok, len, &v)) {
        if (nsys__needs_text(v)) nsys__set_text(item, v);
      } else if (fabs(item->valuedouble) > (double)NSYS__EXACT_DOUBLE && isfinite(item->valuedouble)) {
        free(item->valuestring); /* 1779782331676752435.5: not the integer its double is */
        item->valuestring = nsys_xstrndup(tok, len);
      }
    } else if ((cJSON_IsArray(item) || cJSON_IsObject(item)) && !nsys__attach(item->child, s)) {
      return false;
    }
  }
  return true;
}

cJSON *nsys_json_parse(const char *text, size_t n, const char **end) {
  const char *stop = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, n, &stop, 0);
  if (end) *end = stop;
  if (!root) return NULL;
  nsys__tokens s = {text, stop && stop >= text && stop <= text + n ? stop : text + n};
  nsys__attach(root, &s);
  return root;
}

/* ---- printing ----------------------------------------------------------- */

void nsys_json_number_text(nsys_strbuf *b, const cJSON *item) {
  if (item->valuestring) {
    nsys_strbuf_puts(b, item->valuestring);
    return;
  }
  double d = item->valuedouble;
  char buf[32];
  if (!isfinite(d)) {
    nsys_strbuf_puts(b, "null");
  } else if (d == floor(d) && fabs(d) <= (double)NSYS__EXACT_DOUBLE) {
    snprintf(buf, sizeof buf, "%" PRId64, (int64_t)d);
    nsys_strbuf_puts(b, buf);
  } else {
    /* 15 digits when they give the double back exactly, else 17. (cJSON accepts
     * 15 digits within an epsilon, which turns 3890570000000599.5 into
     * 3890570000000600: found by fuzz_json_int.) */
    snprintf(buf, sizeof buf, "%1.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, sizeof buf, "%1.17g", d);
    nsys_strbuf_puts(b, buf);
  }
}

void nsys_json_num(cJSON *o, const char *k, double v) {
  if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

void nsys_json_int(cJSON *o, const char *k, int64_t v) { nsys_json_add_i64(o, k, v); }

void nsys_json_str(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}
