/* Table-driven tests of JSON-RPC classification and reply building. */
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/utf8.h"
#include "common/util.h"
#include "rpc/json_write.h"
#include "rpc/jsonrpc.h"

typedef struct {
  const char *body;
  size_t len; /* 0: strlen */
  nsys_msg_kind kind;
  int code;             /* for INVALID */
  const char *id;       /* printed id, or NULL when none */
  const char *method;   /* or NULL */
  const char *word;     /* for INVALID: must appear in the message */
} rpc_case;

static const rpc_case cases[] = {
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a/b\",\"params\":{}}", 0, NSYS_MSG_REQUEST, 0, "1", "a/b", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"a\"}", 0, NSYS_MSG_REQUEST, 0, "\"x\"", "a", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"a\",\"params\":[1]}", 0, NSYS_MSG_REQUEST, 0, "-3", "a", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":null}", 0, NSYS_MSG_REQUEST, 0, "1", "a", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"a\"}", 0, NSYS_MSG_REQUEST, 0, "9007199254740992", "a", NULL},
    {" \r\n{\"method\":\"n\",\"jsonrpc\":\"2.0\"}\n ", 0, NSYS_MSG_NOTIFICATION, 0, NULL, "n", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":null}", 0, NSYS_MSG_RESPONSE, 0, "4", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":1,\"message\":\"m\"}}", 0, NSYS_MSG_RESPONSE, 0, "4", NULL, NULL},
    /* parse errors */
    {"", 0, NSYS_MSG_INVALID, -32700, NULL, NULL, "not valid JSON"},
    {"{", 0, NSYS_MSG_INVALID, -32700, NULL, NULL, "not valid JSON"},
    {"{\"a\":1} x", 0, NSYS_MSG_INVALID, -32700, NULL, NULL, "trailing"},
    {"{\"a\":1}{}", 0, NSYS_MSG_INVALID, -32700, NULL, NULL, "trailing"},
    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xff\"}", 0, NSYS_MSG_INVALID, -32700, "7", NULL, "UTF-8"},
    {"{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32700, NULL, NULL, "UTF-8"},
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\0junk", 42, NSYS_MSG_INVALID, -32700, NULL, NULL, "trailing"},
    /* invalid requests */
    {"[]", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "batch"},
    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "batch"},
    {"42", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "object"},
    {"null", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "object"},
    {"{\"id\":1,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, "1", NULL, "jsonrpc"},
    {"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, "1", NULL, "jsonrpc"},
    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":9007199254740994,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    /* its double is 2^53, but the id is not */
    {"{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"a\"}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "id"},
    {"{\"jsonrpc\":\"2.0\",\"id\":-9007199254740992,\"method\":\"a\"}", 0, NSYS_MSG_REQUEST, 0, "-9007199254740992", "a", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":5}", 0, NSYS_MSG_INVALID, -32600, "2", NULL, "method"},
    {"{\"jsonrpc\":\"2.0\",\"id\":2}", 0, NSYS_MSG_INVALID, -32600, "2", NULL, "method"},
    {"{\"jsonrpc\":\"2.0\",\"result\":1}", 0, NSYS_MSG_INVALID, -32600, NULL, NULL, "method"},
    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\",\"params\":\"s\"}", 0, NSYS_MSG_INVALID, -32600, "3", NULL, "params"},
    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\",\"params\":true}", 0, NSYS_MSG_INVALID, -32600, "3", NULL, "params"},
};

static void test_classify(void) {
  for (size_t i = 0; i < NSYS_ARRAY_LEN(cases); i++) {
    const rpc_case *c = &cases[i];
    size_t len = c->len ? c->len : strlen(c->body);
    nsys_rpc_msg m;
    nsys_rpc_parse(c->body, len, &m);
    CHECK_MSG(m.kind == c->kind, "case %zu (%s): kind %d, want %d (%s)", i, c->body, m.kind,
              c->kind, m.err_msg);
    if (c->kind == NSYS_MSG_INVALID) {
      CHECK_MSG(nsys_err_rpc_code(m.err) == c->code, "case %zu: code %d want %d", i,
                nsys_err_rpc_code(m.err), c->code);
      CHECK_MSG(strstr(m.err_msg, c->word) != NULL, "case %zu: '%s' lacks '%s'", i, m.err_msg,
                c->word);
      CHECK(m.method == NULL && m.params == NULL);
    }
    /* The reply id: exactly what the server would echo. */
    cJSON *reply = nsys_rpc_error(m.id, -1, "x", NULL);
    char *printed = nsys_json_print(cJSON_GetObjectItem(reply, "id"), false);
    CHECK_MSG(strcmp(printed, c->id ? c->id : "null") == 0, "case %zu: id %s want %s", i, printed,
              c->id ? c->id : "null");
    free(printed);
    cJSON_Delete(reply);
    if (c->method) CHECK(m.method && strcmp(m.method, c->method) == 0);
    nsys_rpc_msg_free(&m);
  }
}

static void test_params_shapes(void) {
  nsys_rpc_msg m;
  const char *b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"k\":2}}";
  nsys_rpc_parse(b, strlen(b), &m);
  CHECK(cJSON_IsObject(m.params));
  nsys_rpc_msg_free(&m);
  b = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}";
  nsys_rpc_parse(b, strlen(b), &m);
  CHECK(m.params == NULL);
  nsys_rpc_msg_free(&m);
}

static void test_builders(void) {
  cJSON *id = cJSON_CreateString("q");
  cJSON *res = cJSON_CreateObject();
  cJSON_AddNumberToObject(res, "n", 1);
  cJSON *msg = nsys_rpc_result(id, res);
  size_t n;
  char *s = nsys_rpc_print(msg, &n);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{\"n\":1}}");
  CHECK(n == strlen(s));
  free(s);
  cJSON_Delete(msg);
  msg = nsys_rpc_result(NULL, NULL);
  s = nsys_rpc_print(msg, &n);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":null}");
  free(s);
  cJSON_Delete(msg);
  /* error with data, message sanitized */
  cJSON *data = cJSON_CreateObject();
  cJSON_AddStringToObject(data, "stderr", "boom");
  msg = nsys_rpc_error(id, -32007, "bad \xff byte", data);
  s = nsys_rpc_print(msg, &n);
  CHECK(nsys_utf8_valid(s, n));
  CHECK(strstr(s, "\"code\":-32007") != NULL);
  CHECK(strstr(s, "\"data\":{\"stderr\":\"boom\"}") != NULL);
  free(s);
  cJSON_Delete(msg);
  cJSON_Delete(id);
  msg = nsys_rpc_notification("$/progress", cJSON_CreateObject());
  s = nsys_rpc_print(msg, &n);
  CHECK_STR(s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{}}");
  free(s);
  cJSON_Delete(msg);
}

/* nsys_json_write writes the same text as cJSON_PrintUnformatted (which
 * prints raw items verbatim too), for trees with and without raw items, and
 * nsys_rpc_frame puts the right header in front of that text. */
static void check_same_as_cjson(const cJSON *item) {
  char *want = cJSON_PrintUnformatted(item);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_puts(&b, "prefix:");
  nsys_json_write(&b, item);
  CHECK(b.len == strlen(b.data));
  CHECK_STR(b.data + 7, want);
  nsys_strbuf_free(&b);
  char head[64];
  int h = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", strlen(want));
  /* a frame, with raw texts of 1+ bytes left in place and with none */
  const size_t min_externals[] = {1, SIZE_MAX};
  for (size_t m = 0; m < 2; m++) {
    size_t min_external = min_externals[m];
    nsys_json_pieces pc = {0};
    nsys_strbuf_init(&pc.text);
    nsys_strbuf_puts(&pc.text, "hdr");
    pc.mark = pc.text.len;
    nsys_json_write_pieces(&pc, item, min_external);
    nsys_strbuf all;
    nsys_strbuf_init(&all);
    for (size_t i = 0; i < pc.n; i++) {
      CHECK(pc.piece[i].len > 0);
      nsys_strbuf_append(&all, pc.piece[i].ext ? pc.piece[i].ext + pc.piece[i].off : pc.text.data + pc.piece[i].off,
                         pc.piece[i].len);
    }
    CHECK_STR(all.data ? all.data : "", want);
    nsys_strbuf_free(&all);
    nsys_json_pieces_free(&pc);
  }
  nsys_rpc_frame *f = nsys_rpc_frame_new(cJSON_Duplicate(item, true));
  nsys_strbuf all;
  nsys_strbuf_init(&all);
  for (size_t i = 0; i < f->pieces.n; i++) {
    size_t n;
    const char *p = nsys_rpc_frame_piece(f, i, &n);
    nsys_strbuf_append(&all, p, n);
  }
  CHECK(f->len == all.len && all.len == (size_t)h + strlen(want));
  CHECK(memcmp(all.data, head, (size_t)h) == 0);
  CHECK(memcmp(all.data + h, want, strlen(want)) == 0);
  nsys_strbuf_free(&all);
  nsys_rpc_frame_free(f);
  cJSON_free(want);
}

/* A reply with a large raw text is sent as pieces that point into it. */
static void test_frame_pieces(void) {
  size_t big = 200 * 1024;
  char *text = nsys_xmalloc(big + 1);
  memset(text, '7', big);
  text[big] = '\0';
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "a", cJSON_CreateRaw(text));
  cJSON_AddItemToObject(res, "b", cJSON_CreateRaw("[1]"));
  cJSON_AddItemToObject(res, "c", cJSON_CreateRaw(text));
  cJSON *id = cJSON_CreateNumber(5);
  cJSON *msg = nsys_rpc_result(id, res);
  char *want = cJSON_PrintUnformatted(msg);
  nsys_rpc_frame *f = nsys_rpc_frame_new(msg);
  CHECK(f->pieces.n == 5); /* header+envelope, a, between, c, the closing braces */
  const cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(msg, "result"), "a");
  size_t n;
  CHECK(nsys_rpc_frame_piece(f, 1, &n) == a->valuestring && n == big);
  nsys_strbuf all;
  nsys_strbuf_init(&all);
  for (size_t i = 0; i < f->pieces.n; i++) {
    const char *p = nsys_rpc_frame_piece(f, i, &n);
    nsys_strbuf_append(&all, p, n);
  }
  const char *body = strstr(all.data, "\r\n\r\n");
  CHECK(body && strcmp(body + 4, want) == 0);
  CHECK(strtoul(all.data + strlen("Content-Length: "), NULL, 10) == strlen(want));
  nsys_strbuf_free(&all);
  nsys_rpc_frame_free(f);
  cJSON_free(want);
  cJSON_Delete(id);
  free(text);
}

static void test_json_write(void) {
  const char *docs[] = {
      "null", "true", "-0.5", "12345678901", "\"a\\\"b\\u0001\\b\\f\\n\\r\\t\\u001f\u00fc\"", "[]", "{}",
      "{\"a\":[1,2,{\"b\":null}],\"c\\n\":\"x\",\"d\":1e300,\"e\":[[],{}]}",
  };
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    cJSON *d = cJSON_Parse(docs[i]);
    CHECK(d != NULL);
    check_same_as_cjson(d);
    /* the same value beside raw items, nested at several depths */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "raw", cJSON_CreateRaw("[1,2,{\"x\":\"y\"}]"));
    cJSON_AddItemToObject(o, "v", d);
    cJSON *arr = cJSON_AddArrayToObject(o, "list");
    cJSON_AddItemToArray(arr, cJSON_CreateString("k\x01\"q"));
    cJSON_AddItemToArray(arr, cJSON_CreateRaw("{\"deep\":true}"));
    cJSON *in = cJSON_CreateObject();
    cJSON_AddItemToObject(in, "key \"quoted\"\t", cJSON_CreateRaw("7"));
    cJSON_AddItemToObject(in, "n", cJSON_CreateNumber(3.25));
    cJSON_AddItemToObject(in, "\b\f\x01\\/\xc3\xbc", cJSON_CreateRaw("[]")); /* keys are escaped by nsys_json_write */
    cJSON_AddItemToArray(arr, in);
    check_same_as_cjson(o);
    check_same_as_cjson(arr);
    cJSON *msg = nsys_rpc_result(NULL, o);
    check_same_as_cjson(msg);
    cJSON_Delete(msg);
  }
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_json_write(&b, NULL);
  CHECK_STR(b.data, "null");
  nsys_strbuf_free(&b);
}

static void test_echo_and_keys(void) {
  char *e = nsys_rpc_echo("abc", 10);
  CHECK_STR(e, "abc");
  free(e);
  e = nsys_rpc_echo("abcdefghijkl", 5);
  CHECK_STR(e, "abcde...");
  free(e);
  e = nsys_rpc_echo("\xc3\xbc\xc3\xbc\xc3\xbc", 3); /* never cut inside a character */
  CHECK_STR(e, "\xc3\xbc...");
  free(e);
  e = nsys_rpc_echo("a\xff", 10);
  CHECK(nsys_utf8_valid(e, strlen(e)));
  free(e);
  cJSON *a = cJSON_CreateNumber(5), *b = cJSON_CreateString("5");
  char *k1 = nsys_rpc_id_key(a), *k2 = nsys_rpc_id_key(b);
  CHECK(strcmp(k1, k2) != 0); /* 5 and "5" are different ids */
  free(k1);
  free(k2);
  cJSON_Delete(a);
  cJSON_Delete(b);
  /* long ids are keyed whole: two that differ only at the end differ */
  char l1[2000], l2[2000];
  memset(l1, 'a', sizeof l1 - 1);
  l1[sizeof l1 - 1] = '\0';
  memcpy(l2, l1, sizeof l1);
  l2[sizeof l2 - 2] = 'b';
  a = cJSON_CreateString(l1);
  b = cJSON_CreateString(l2);
  k1 = nsys_rpc_id_key(a);
  k2 = nsys_rpc_id_key(b);
  CHECK(strcmp(k1, k2) != 0);
  free(k1);
  free(k2);
  cJSON_Delete(a);
  cJSON_Delete(b);
  /* numeric keys are exact; numbers that are no int64 match no request */
  const char *ids = "[9007199254740993,9007199254740992,1e300,1.5,0]";
  cJSON *arr = nsys_json_parse(ids, strlen(ids), NULL);
  const char *want[] = {"n:9007199254740993", "n:9007199254740992", "n:?", "n:?", "n:0"};
  int i = 0;
  for (const cJSON *it = arr ? arr->child : NULL; it; it = it->next, i++) {
    char *k = nsys_rpc_id_key(it);
    CHECK_STR(k, want[i]);
    free(k);
  }
  CHECK_EQ(i, 5);
  cJSON_Delete(arr);
}

int main(void) {
  test_classify();
  test_params_shapes();
  test_builders();
  test_json_write();
  test_frame_pieces();
  test_echo_and_keys();
  return nsys_check_done("test_jsonrpc");
}
