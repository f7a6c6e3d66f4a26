/* nsys_utf8_valid / nsys_utf8_sanitize: table-driven. */
#include <stdlib.h>
#include <string.h>

#include "nsys_check.h"
#include "common/utf8.h"
#include "common/util.h"

typedef struct {
  const char *name;
  const char *in;
  size_t len; /* 0: strlen */
  int valid;
  const char *out; /* sanitized */
} utf8_case;

static const utf8_case cases[] = {
    {"empty", "", 0, 1, ""},
    {"ascii", "kernel<128>", 0, 1, "kernel<128>"},
    {"2-byte", "Gr\xc3\xbc\xc3\x9f" "e", 0, 1, "Gr\xc3\xbc\xc3\x9f" "e"},
    {"3-byte", "\xe2\x82\xac", 0, 1, "\xe2\x82\xac"},
    {"4-byte", "\xf0\x9f\x98\x80", 0, 1, "\xf0\x9f\x98\x80"},
    {"max code point", "\xf4\x8f\xbf\xbf", 0, 1, "\xf4\x8f\xbf\xbf"},
    {"latin-1 bytes", "Gr\xfc\xdf" "e", 0, 0, "Gr\xc3\xbc\xc3\x9f" "e"},
    {"cp1252 euro and quotes", "\x80 \x93q\x94", 0, 0, "\xe2\x82\xac \xe2\x80\x9cq\xe2\x80\x9d"},
    {"cp1252 undefined 0x81", "a\x81" "b", 0, 0, "a\xef\xbf\xbd" "b"},
    {"overlong slash C0 AF", "\xc0\xaf", 0, 0, "\xc3\x80\xc2\xaf"},
    {"overlong E0 80 AF", "\xe0\x80\xaf", 0, 0, "\xc3\xa0\xe2\x82\xac\xc2\xaf"},
    {"overlong 4-byte", "\xf0\x80\x80\xaf", 0, 0, "\xc3\xb0\xe2\x82\xac\xe2\x82\xac\xc2\xaf"},
    {"surrogate D800", "\xed\xa0\x80", 0, 0, "\xc3\xad\xc2\xa0\xe2\x82\xac"},
    {"surrogate DFFF", "\xed\xbf\xbf", 0, 0, "\xc3\xad\xc2\xbf\xc2\xbf"},
    {"above U+10FFFF", "\xf4\x90\x80\x80", 0, 0, "\xc3\xb4\xef\xbf\xbd\xe2\x82\xac\xe2\x82\xac"},
    {"F5..FF lead", "\xf8", 0, 0, "\xc3\xb8"},
    {"truncated 3-byte at end", "ab\xe2\x82", 0, 0, "ab\xc3\xa2\xe2\x80\x9a"},
    {"lone continuation", "\xbf", 0, 0, "\xc2\xbf"},
    {"embedded NUL", "a\0b", 3, 0, "a\xef\xbf\xbd" "b"},
    {"valid then invalid", "\xc3\xbc\xff", 0, 0, "\xc3\xbc\xc3\xbf"},
};

int main(void) {
  for (size_t i = 0; i < NSYS_ARRAY_LEN(cases); i++) {
    const utf8_case *c = &cases[i];
    size_t len = c->len ? c->len : strlen(c->in);
    CHECK_MSG(nsys_utf8_valid(c->in, len) == (c->valid != 0), "case '%s': valid", c->name);
    char *s = nsys_utf8_sanitize(c->in, len);
    CHECK_MSG(strcmp(s, c->out) == 0, "case '%s': sanitized wrongly", c->name);
    CHECK_MSG(nsys_utf8_valid(s, strlen(s)), "case '%s': output not UTF-8", c->name);
    free(s);
  }
  /* Every single byte and every byte pair sanitizes to valid UTF-8. */
  for (int a = 0; a < 256; a++) {
    for (int b = 0; b < 256; b++) {
      char in[2] = {(char)a, (char)b};
      char *s = nsys_utf8_sanitize(in, 2);
      if (!nsys_utf8_valid(s, strlen(s))) CHECK_MSG(0, "bytes %02x %02x", a, b);
      free(s);
    }
  }
  char *s = nsys_utf8_sanitize(NULL, 0);
  CHECK_STR(s, "");
  free(s);
  return nsys_check_done("test_utf8");
}
