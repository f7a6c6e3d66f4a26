/* Table-driven tests of the LSP framing reader: every case is fed whole,
 * split in two at every byte boundary, and byte by byte; the sequence of
 * events must be the same each time. */
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/util.h"
#include "rpc/framing.h"
#include "rpc/jsonrpc.h"

#define V "Content-Length: 2\r\n\r\n{}" /* a valid frame */

typedef struct {
  const char *name;
  const char *input;
  size_t len; /* 0: strlen(input) */
  size_t max_frame;
  const char *expect; /* events: "M:body" or "E:code", joined by '|' */
} frame_case;

static char big_header[NSYS_FRAME_MAX_LINE + 200];
static char huge_block[NSYS_FRAME_MAX_HEADER + 4000];

static const frame_case cases[] = {
    {"one frame", V, 0, 0, "M:{}"},
    {"two frames in one chunk", V "Content-Length: 3\r\n\r\n[1]", 0, 0, "M:{}|M:[1]"},
    {"lowercase header", "content-length: 2\r\n\r\n{}", 0, 0, "M:{}"},
    {"uppercase header", "CONTENT-LENGTH:2\r\n\r\n{}", 0, 0, "M:{}"},
    {"mixed case, spaces, tab", "Content-length:\t 2 \r\n\r\n{}", 0, 0, "M:{}"},
    {"content-type ignored",
     "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", 0,
     0, "M:{}"},
    {"content-type after length", "Content-Length: 2\r\nContent-Type: x\r\n\r\n{}", 0, 0, "M:{}"},
    {"unknown header ignored", "X-Whatever: 1\r\nContent-Length: 2\r\n\r\n{}", 0, 0, "M:{}"},
    {"LF line endings", "Content-Length: 2\n\n{}", 0, 0, "M:{}"},
    {"blank lines between frames", V "\r\n\r\n\n" V, 0, 0, "M:{}|M:{}"},
    {"same length twice", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 0, 0, "M:{}"},
    {"empty body", "Content-Length: 0\r\n\r\n" V, 0, 0, "M:|M:{}"},
    {"body with CRLF-free binary", "Content-Length: 4\r\n\r\n\x01\xff\x80z", 0, 0, "M:\x01\xff\x80z"},
    {"exactly the maximum", "Content-Length: 8\r\n\r\n12345678" V, 0, 8, "M:12345678|M:{}"},
    {"oversized then valid", "Content-Length: 9\r\n\r\n123456789" V, 0, 8, "E:-32600|M:{}"},
    {"oversized, truncated, then valid", "Content-Length: 1000000\r\n\r\n{\"a\":1" V, 0, 8,
     "E:-32600|M:{}"},
    {"oversized claim, no body yet: refused once its id or its end is seen",
     "Content-Length: 99999999999\r\n\r\n", 0, 1024, ""},
    {"oversized claim, its id arrives", "Content-Length: 99999999999\r\n\r\n{\"id\":7,\"params\":{", 0,
     1024, "E:-32600#7"},
    /* the refusal names the request's id, first or last, whatever comes between */
    {"oversized, id first", "Content-Length: 39\r\n\r\n{\"id\":12,\"method\":\"x\",\"params\":[1,2,3]}" V,
     0, 8, "E:-32600#12|M:{}"},
    {"oversized, id last", "Content-Length: 53\r\n\r\n{\"params\":{\"id\":[\"}\",{\"a\":\"\\\"\"}],\"id\":1},\"id\":\"a\\\"b\"}" V,
     0, 8, "E:-32600#\"a\\\"b\"|M:{}"},
    {"oversized, escaped member name", "Content-Length: 25\r\n\r\n{\"\\u0069d\":-3,\"x\":\"yyyy\"}" V, 0, 8,
     "E:-32600#-3|M:{}"},
    {"oversized, control characters as whitespace (as the parser reads them)",
     "Content-Length: 18\r\n\r\n{\"a\":1,\x17\"id\":\x01 5\x1f}" V, 0, 8, "E:-32600#5|M:{}"},
    {"oversized, id null", "Content-Length: 20\r\n\r\n{\"id\":null,\"a\":\"bb\"}" V, 0, 8, "E:-32600|M:{}"},
    {"oversized, no id", "Content-Length: 20\r\n\r\n{\"ids\":1, \"a\":\"bbb\"}" V, 0, 8, "E:-32600|M:{}"},
    {"oversized, an array", "Content-Length: 20\r\n\r\n[{\"id\":1},{\"id\":22}]" V, 0, 8, "E:-32600|M:{}"},
    {"oversized, not an object: refused at once", "Content-Length: 99999\r\n\r\n xyz", 0, 8, "E:-32600"},
    {"oversized, closed without an id: refused at once", "Content-Length: 99999\r\n\r\n{\"a\":{\"id\":1}}", 0,
     8, "E:-32600"},
    {"oversized, truncated before its id", "Content-Length: 1000\r\n\r\n{\"a\":[1,2,3], \"i" V, 0, 8,
     "E:-32600|M:{}"},
    {"garbage line then valid", "hello world\r\n\r\n" V, 0, 0, "E:-32700|M:{}"},
    {"HTTP request then valid", "GET / HTTP/1.1\r\nHost: x\r\n\r\n" V, 0, 0, "E:-32700|M:{}"},
    {"no content-length", "Content-Type: x\r\n\r\n{}" V, 0, 0, "E:-32700|M:{}"},
    {"non-numeric length", "Content-Length: abc\r\n\r\n{}" V, 0, 0, "E:-32700|M:{}"},
    {"negative length", "Content-Length: -5\r\n\r\n{}" V, 0, 0, "E:-32700|M:{}"},
    {"length with junk", "Content-Length: 2x\r\n\r\n{}" V, 0, 0, "E:-32700|M:{}"},
    {"length overflow", "Content-Length: 99999999999999999999999\r\n\r\n" V, 0, 0, "E:-32700|M:{}"},
    {"conflicting lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" V, 0, 0,
     "E:-32700|M:{}"},
    {"binary junk glued to header", "\x00\xff\xfe junk Content-Length: 2\r\n\r\n{}", 32, 0,
     "E:-32700|M:{}"},
    {"token junk glued to header", "junkContent-Length: 2\r\n\r\n{}", 0, 0, "E:-32700|M:{}"},
    {"empty header name", ": 2\r\n\r\n" V, 0, 0, "E:-32700|M:{}"},
    {"truncated body then valid", "Content-Length: 100\r\n\r\n{\"a\":" V, 0, 0, "E:-32700|M:{}"},
    {"truncated body then LF-only header", "Content-Length: 50\r\n\r\n{\"a\":Content-Length: 2\n\n{}",
     0, 0, "E:-32700|M:{}"},
    {"header text inside a JSON string is not a header",
     "Content-Length: 26\r\n\r\n{\"s\":\"Content-Length: 5 \"}", 0, 0,
     "M:{\"s\":\"Content-Length: 5 \"}"},
    {"only garbage", "\x01\x02\x03 no newline at all", 0, 0, ""},
    {"incomplete header", "Content-Len", 0, 0, ""},
    {"incomplete body", "Content-Length: 10\r\n\r\n12345", 0, 0, ""},
    {"long header line", big_header, 0, 0, "E:-32700|M:{}"},
    {"huge header block", huge_block, 0, 0, "E:-32700|M:{}"},
};

static void run(const frame_case *c, size_t len, size_t split, int bytewise, nsys_strbuf *out) {
  nsys_frame_reader r;
  nsys_frame_reader_init(&r, c->max_frame);
  size_t pos = 0;
  while (pos < len) {
    size_t n = bytewise ? 1 : (pos == 0 && split ? split : len - pos);
    nsys_frame_push(&r, c->input + pos, n);
    pos += n;
    nsys_frame_event ev;
    while (nsys_frame_next(&r, &ev) != NSYS_FRAME_NONE) {
      if (out->len) nsys_strbuf_putc(out, '|');
      if (ev.kind == NSYS_FRAME_MESSAGE) {
        CHECK(ev.body[ev.len] == '\0');
        nsys_strbuf_puts(out, "M:");
        nsys_strbuf_append(out, ev.body, ev.len);
        free(ev.body);
      } else {
        CHECK(ev.msg[0] != '\0');
        nsys_strbuf_printf(out, "E:%d", nsys_err_rpc_code(ev.err));
        if (ev.id_len) {
          CHECK(ev.id[ev.id_len] == '\0' && strlen(ev.id) == ev.id_len);
          nsys_strbuf_printf(out, "#%s", ev.id);
        }
      }
    }
  }
  nsys_frame_reader_free(&r);
}

static void test_cases(void) {
  for (size_t i = 0; i < NSYS_ARRAY_LEN(cases); i++) {
    const frame_case *c = &cases[i];
    size_t len = c->len ? c->len : strlen(c->input);
    for (size_t split = 0; split < len; split++) {
      for (int bytewise = 0; bytewise < 2; bytewise++) {
        if (bytewise && split) continue;
        if (len > 2000 && split && split % 97 && split != len - 1) continue; /* keep it quick */
        nsys_strbuf out;
        nsys_strbuf_init(&out);
        run(c, len, split, bytewise, &out);
        CHECK_MSG(strcmp(out.data ? out.data : "", c->expect) == 0,
                  "case '%s' split %zu%s: got '%s', want '%s'", c->name, split,
                  bytewise ? " bytewise" : "", out.data ? out.data : "", c->expect);
        nsys_strbuf_free(&out);
      }
    }
  }
}

/* A refused frame must not make the reader allocate what it claims. */
static void test_oversized_is_not_buffered(void) {
  nsys_frame_reader r;
  nsys_frame_reader_init(&r, 1024);
  const char *h = "Content-Length: 1073741824\r\n\r\n{\"params\":{\"s\":\"";
  nsys_frame_push(&r, h, strlen(h));
  nsys_frame_event ev;
  CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_NONE);
  char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  for (int i = 0; i < 64; i++) { /* 4 MiB of the claimed 1 GiB */
    nsys_frame_push(&r, chunk, sizeof chunk);
    CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_NONE);
  }
  CHECK(r.body == NULL && r.body_cap == 0);
  CHECK(r.cap <= 2 * sizeof chunk);
  /* the id after 4 MiB of another member: the refusal names it */
  const char *tail = "\"}, \"id\": 9007199254740991, \"method\": \"m\"";
  nsys_frame_push(&r, tail, strlen(tail));
  CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_ERROR);
  CHECK(ev.err == NSYS_E_INVALID_REQUEST);
  CHECK(strstr(ev.msg, "1073741824") != NULL);
  CHECK(strcmp(ev.id, "9007199254740991") == 0);
  CHECK(r.n_discarded_bytes == strlen(h) - 30 + 64 * sizeof chunk + strlen(tail));
  nsys_frame_push(&r, chunk, sizeof chunk); /* the rest is still skipped, and not refused again */
  CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_NONE);
  nsys_frame_reader_free(&r);
}

/* A body that arrives in pieces grows in steps, not by the claimed size. */
static void test_body_grows_incrementally(void) {
  nsys_frame_reader r;
  nsys_frame_reader_init(&r, 0);
  const char *h = "Content-Length: 50000000\r\n\r\n";
  nsys_frame_push(&r, h, strlen(h));
  nsys_frame_push(&r, "[1", 2);
  nsys_frame_event ev;
  CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_NONE);
  CHECK(r.body_cap <= 65536 + 1);
  nsys_frame_reader_free(&r);
}

/* The server's frames (nsys_rpc_frame: header and text as pieces, large raw
 * texts in place) read back by the reader, pushed piece by piece. */
static void test_writer_roundtrip(void) {
  const char *docs[] = {"{}", "[]", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xc3\xbc\"}"};
  size_t big = 300 * 1024;
  char *text = malloc(big + 1);
  memset(text, '1', big);
  text[big] = '\0';
  nsys_frame_reader r;
  nsys_frame_reader_init(&r, 0);
  for (size_t i = 0; i <= NSYS_ARRAY_LEN(docs); i++) {
    cJSON *msg = i < NSYS_ARRAY_LEN(docs) ? cJSON_Parse(docs[i]) : cJSON_CreateObject();
    if (i == NSYS_ARRAY_LEN(docs)) cJSON_AddItemToObject(msg, "big", cJSON_CreateRaw(text));
    char *want = cJSON_PrintUnformatted(msg);
    nsys_rpc_frame *f = nsys_rpc_frame_new(msg);
    size_t n;
    CHECK(strncmp(nsys_rpc_frame_piece(f, 0, &n), "Content-Length: ", 16) == 0);
    if (i == NSYS_ARRAY_LEN(docs)) CHECK(f->pieces.n == 3);
    for (size_t k = 0; k < f->pieces.n; k++) {
      const char *p = nsys_rpc_frame_piece(f, k, &n);
      nsys_frame_push(&r, p, n);
    }
    nsys_rpc_frame_free(f);
    nsys_frame_event ev;
    CHECK(nsys_frame_next(&r, &ev) == NSYS_FRAME_MESSAGE);
    CHECK(ev.len == strlen(want) && memcmp(ev.body, want, ev.len) == 0);
    free(ev.body);
    free(want);
  }
  free(text);
  CHECK(r.n_messages == 4 && r.n_errors == 0);
  nsys_frame_reader_free(&r);
}

int main(void) {
  /* "X-Long: aaaa...\r\n" longer than a header line may be, then a valid frame */
  size_t n = 0;
  n += (size_t)sprintf(big_header, "X-Long: ");
  memset(big_header + n, 'a', NSYS_FRAME_MAX_LINE + 50);
  n += NSYS_FRAME_MAX_LINE + 50;
  strcpy(big_header + n, "\r\n\r\n" V);
  /* many short header lines adding up to more than NSYS_FRAME_MAX_HEADER */
  n = 0;
  while (n < NSYS_FRAME_MAX_HEADER + 100) n += (size_t)sprintf(huge_block + n, "X-A: 1\r\n");
  strcpy(huge_block + n, "\r\n" V);
  test_cases();
  test_oversized_is_not_buffered();
  test_body_grows_incrementally();
  test_writer_roundtrip();
  return nsys_check_done("test_framing");
}
