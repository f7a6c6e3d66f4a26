/* Exact 64-bit integers in cJSON trees (rpc/json_int.h): literals, parse and
 * print round trips, copies, accessors, and floats that stay floats. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/util.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"

typedef struct {
  const char *text;
  bool integer;
  int64_t value;
} literal_case;

static const literal_case literals[] = {
    {"0", true, 0},
    {"-0", true, 0},
    {"7", true, 7},
    {"-12", true, -12},
    {"9007199254740992", true, 9007199254740992},
    {"9007199254740993", true, 9007199254740993},
    {"-9007199254740993", true, -9007199254740993},
    {"1726751178667767434", true, 1726751178667767434},
    {"9223372036854775807", true, INT64_MAX},
    {"-9223372036854775808", true, INT64_MIN},
    {"00012", true, 12},
    {"1.0", true, 1},
    {"1.", true, 1},
    {"17e2", true, 1700},
    {"17E+2", true, 1700},
    {"1234.5e1", true, 12345},
    {"100e-2", true, 1},
    {"0.000e7", true, 0},
    {"-0.0", true, 0},
    {"1.726751178667767434e18", true, 1726751178667767434},
    {"9.223372036854775807e18", true, INT64_MAX},
    {"0e999999999999999999", true, 0},
    {"9223372036854775808", false, 0},
    {"-9223372036854775809", false, 0},
    {"18446744073709551616", false, 0},
    {"1e19", false, 0},
    {"1e999999999999", false, 0},
    {"1.5", false, 0},
    {"12.340e1", false, 0},
    {"1e-1", false, 0},
    {"5e-999999999999", false, 0},
    {"", false, 0},
    {"-", false, 0},
    {".", false, 0},
    {"1e", false, 0},
    {"1e+", false, 0},
    {"1x", false, 0},
    {"0x10", false, 0},
    {"--1", false, 0},
    {" 1", false, 0},
};

static void test_literals(void) {
  for (size_t i = 0; i < NSYS_ARRAY_LEN(literals); i++) {
    const literal_case *c = &literals[i];
    int64_t v = -42;
    bool ok = nsys_json_literal_i64(c->text, strlen(c->text), &v);
    CHECK_MSG(ok == c->integer, "'%s': integer %d, want %d", c->text, ok, c->integer);
    if (ok && c->integer) CHECK_MSG(v == c->value, "'%s': %lld, want %lld", c->text, (long long)v, (long long)c->value);
  }
  /* only the first n bytes count */
  int64_t v = 0;
  CHECK(nsys_json_literal_i64("123456", 3, &v) && v == 123);
}

static char *print(const cJSON *item) { return nsys_json_print(item, false); }

/* Parsed, printed, duplicated and printed again: the same exact text. */
static void check_round_trip(const char *in, const char *want) {
  const char *end = NULL;
  cJSON *doc = nsys_json_parse(in, strlen(in), &end);
  CHECK_MSG(doc != NULL, "parse %s", in);
  if (!doc) return;
  CHECK(end == in + strlen(in));
  char *s = print(doc);
  CHECK_STR(s, want);
  cJSON *dup = cJSON_Duplicate(doc, true);
  char *s2 = print(dup);
  CHECK_STR(s2, want);
  /* and parsing the printed text gives it back once more */
  cJSON *again = nsys_json_parse(s, strlen(s), NULL);
  char *s3 = print(again);
  CHECK_STR(s3, want);
  free(s);
  free(s2);
  free(s3);
  cJSON_Delete(doc);
  cJSON_Delete(dup);
  cJSON_Delete(again);
}

static void test_round_trips(void) {
  check_round_trip("1726751178667767434", "1726751178667767434");
  check_round_trip("-9223372036854775808", "-9223372036854775808");
  check_round_trip("[9223372036854775807,-9223372036854775807,9007199254740993,-9007199254740993,9007199254740992]",
                   "[9223372036854775807,-9223372036854775807,9007199254740993,-9007199254740993,9007199254740992]");
  check_round_trip("[-0, 0, -1, 1.5, -2.25, 0.1, 1e15, 2.0, 1.726751178667767434e18]",
                   "[0,0,-1,1.5,-2.25,0.1,1000000000000000,2,1726751178667767434]");
  /* beyond 2^53 and no int64: the literal's own text, never the integer
   * its double is; classified as what it writes */
  check_round_trip("[1779782331676752435.5,9223372036854775808,-1e19,1e300]",
                   "[1779782331676752435.5,9223372036854775808,-1e19,1e300]");
  const char *bigs = "[1779782331676752435.5,9223372036854775808,1e300,0.5,1779782331676752435]";
  cJSON *big = nsys_json_parse(bigs, strlen(bigs), NULL);
  const nsys_json_num_class want[] = {NSYS_JSON_FRACTION, NSYS_JSON_BEYOND_I64, NSYS_JSON_BEYOND_I64,
                                      NSYS_JSON_FRACTION, NSYS_JSON_I64};
  int k = 0;
  for (const cJSON *it = big ? big->child : NULL; it; it = it->next, k++) {
    int64_t v = 0;
    CHECK_MSG(nsys_json_classify(it, &v) == want[k], "item %d", k);
    CHECK(nsys_json_get_i64(it, &v) == (want[k] == NSYS_JSON_I64));
  }
  CHECK_EQ(k, 5);
  cJSON_Delete(big);
  /* a double made in process beyond int64 prints as cJSON prints it */
  cJSON *made = cJSON_CreateNumber(9223372036854775808.0);
  char *ms = print(made);
  CHECK_STR(ms, "9.2233720368547758e+18");
  free(ms);
  cJSON_Delete(made);
  /* numbers inside strings, escaped quotes and keys do not shift the match */
  check_round_trip("{\"k\\\"9007199254740995\":\"q\\\\\\\"1 -2\",\"n\":9007199254740995,\"e\":\"\\\\\","
                   "\"m\":[{\"a\":[[-1726751178667767435]]},\"7\",true,null,false,8]}",
                   "{\"k\\\"9007199254740995\":\"q\\\\\\\"1 -2\",\"n\":9007199254740995,\"e\":\"\\\\\","
                   "\"m\":[{\"a\":[[-1726751178667767435]]},\"7\",true,null,false,8]}");
  /* duplicate keys keep their own values */
  check_round_trip("{\"a\":9007199254740993,\"a\":9007199254740995}", "{\"a\":9007199254740993,\"a\":9007199254740995}");
  /* whitespace and a trailing part cJSON leaves to the caller */
  const char *text = " { \"t\" :\n 1726751178667767434 } 99999999999999999";
  const char *end = NULL;
  cJSON *doc = nsys_json_parse(text, strlen(text), &end);
  CHECK(doc && end && *end == ' ');
  CHECK_EQ(nsys_json_obj_i64(doc, "t", 0), 1726751178667767434);
  cJSON_Delete(doc);
  CHECK(nsys_json_parse("{\"a\":1", 6, NULL) == NULL);
}

static void test_accessors(void) {
  const int64_t vals[] = {0, 1, -1, 9007199254740992, 9007199254740993, -9007199254740993,
                          1726751178667767434, INT64_MAX, INT64_MIN, INT64_MIN + 1};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(vals); i++) {
    cJSON *o = cJSON_CreateObject();
    nsys_json_add_i64(o, "v", vals[i]);
    const cJSON *it = cJSON_GetObjectItem(o, "v");
    CHECK(cJSON_IsNumber(it));
    CHECK(it->valuedouble == (double)vals[i]); /* the nearest double, for comparisons */
    int64_t got = 0;
    CHECK(nsys_json_get_i64(it, &got) && got == vals[i]);
    CHECK_EQ(nsys_json_obj_i64(o, "v", 5), vals[i]);
    char want[48];
    snprintf(want, sizeof want, "{\"v\":%lld}", (long long)vals[i]);
    char *s = print(o);
    CHECK_STR(s, want);
    free(s);
    cJSON *dup = cJSON_Duplicate(it, false);
    CHECK_EQ(nsys_json_i64_or(dup, 5), vals[i]);
    cJSON_Delete(dup);
    cJSON_Delete(o);
  }
  /* floats stay floats, and what is not an integer gives the fallback */
  cJSON *f = cJSON_CreateNumber(1.5), *g = cJSON_CreateNumber(2.0), *h = cJSON_CreateNumber(1e300),
        *n = cJSON_CreateNumber(-9223372036854775808.0), *p = cJSON_CreateNumber(9223372036854775808.0),
        *s = cJSON_CreateString("12");
  int64_t v = 0;
  CHECK(!nsys_json_get_i64(f, &v));
  CHECK(nsys_json_get_i64(g, &v) && v == 2);
  CHECK(!nsys_json_get_i64(h, &v));
  CHECK(nsys_json_get_i64(n, &v) && v == INT64_MIN);
  CHECK(!nsys_json_get_i64(p, &v)); /* 2^63 does not fit */
  CHECK(!nsys_json_get_i64(s, &v));
  CHECK(!nsys_json_get_i64(NULL, &v));
  CHECK_EQ(nsys_json_i64_or(f, 7), 7);
  char *t = print(f);
  CHECK_STR(t, "1.5");
  free(t);
  t = print(h);
  CHECK_STR(t, "1e+300");
  free(t);
  cJSON_Delete(f);
  cJSON_Delete(g);
  cJSON_Delete(h);
  cJSON_Delete(n);
  cJSON_Delete(p);
  cJSON_Delete(s);
  /* NaN and infinities print as null, as cJSON prints them */
  cJSON *nan = cJSON_CreateNumber(NAN);
  t = print(nan);
  CHECK_STR(t, "null");
  free(t);
  cJSON_Delete(nan);
}

static void test_from_text(void) {
  cJSON *a = nsys_json_number_from_text("1726751178667767434");
  CHECK_EQ(nsys_json_i64_or(a, 0), 1726751178667767434);
  cJSON *b = nsys_json_number_from_text("-2.5");
  CHECK(b && b->valuedouble == -2.5 && !b->valuestring);
  CHECK(nsys_json_number_from_text("abc") == NULL);
  CHECK(nsys_json_number_from_text("") == NULL);
  CHECK(nsys_json_number_from_text("1x") == NULL);
  CHECK(nsys_json_number_from_text("inf") == NULL);
  CHECK(nsys_json_number_from_text(NULL) == NULL);
  cJSON_Delete(a);
  cJSON_Delete(b);
}

/* The pretty form is cJSON_Print's layout, with exact integers. */
static void test_pretty(void) {
  const char *doc = "{\"a\":[1,{\"b\":{}},[]],\"c\":{\"d\":\"x\",\"e\":[{\"f\":null}]},\"g\":-0.5}";
  cJSON *d = cJSON_Parse(doc);
  char *want = cJSON_Print(d), *got = nsys_json_print(d, true);
  CHECK_STR(got, want);
  free(want);
  free(got);
  cJSON_Delete(d);
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "start", 1726751178667767434);
  cJSON_AddItemToObject(o, "raw", cJSON_CreateRaw("[1,2]"));
  got = nsys_json_print(o, true);
  CHECK_STR(got, "{\n\t\"start\":\t1726751178667767434,\n\t\"raw\":\t[1,2]\n}");
  free(got);
  cJSON_Delete(o);
}

/* Doubles print as the shortest of 15 or 17 digits that reads back as exactly
 * that double (cJSON accepts 15 within an epsilon: 3890570000000599.5 became
 * 3890570000000600; found by fuzz/rpc/fuzz_json_int.c). */
static void test_double_text(void) {
  const double v[] = {3890570000000599.5, 0.1, -0.5, 1e300, 123.456, 4503599627370497.5, 2.5e-300};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    cJSON *n = cJSON_CreateNumber(v[i]);
    char *t = nsys_json_print(n, false);
    CHECK(strtod(t, NULL) == v[i]);
    free(t);
    cJSON_Delete(n);
  }
  cJSON *n = cJSON_CreateNumber(3890570000000599.5);
  char *t = nsys_json_print(n, false);
  CHECK_STR(t, "3890570000000599.5");
  free(t);
  cJSON_Delete(n);
  n = cJSON_CreateNumber(0.1);
  t = nsys_json_print(n, false);
  CHECK_STR(t, "0.1");
  free(t);
  cJSON_Delete(n);
}

int main(void) {
  test_literals();
  test_double_text();
  test_round_trips();
  test_accessors();
  test_from_text();
  test_pretty();
  return nsys_check_done("test_json_int");
}
