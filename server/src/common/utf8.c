#include "common/utf8.h"

#include <stdint.h>
#include <string.h>

#include "common/util.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t nsys__utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80) return c == 0 ? 0 : 1;
  size_t len;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
  else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
  else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

bool nsys_utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t k = nsys__utf8_seq(p + i, n - i);
    if (!k) return false;
    i += k;
  }
  return true;
}

/* Windows-1252 code points for 0x80..0x9F; 0 where undefined. */
static const uint16_t nsys__cp1252[32] = {
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0, 0x017D, 0, 0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178};

static void nsys__put_cp(nsys_strbuf *b, uint32_t cp) {
  char tmp[4];
  size_t n;
  if (cp < 0x80) { tmp[0] = (char)cp; n = 1; }
  else if (cp < 0x800) { tmp[0] = (char)(0xC0 | (cp >> 6)); tmp[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
  else { tmp[0] = (char)(0xE0 | (cp >> 12)); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[2] = (char)(0x80 | (cp & 0x3F)); n = 3; }
  nsys_strbuf_append(b, tmp, n);
}

char *nsys_utf8_sanitize(const char *s, size_t n) {
  if (!s) return nsys_xstrdup("");
  if (nsys_utf8_valid(s, n)) return nsys_xstrndup(s, n);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_reserve(&b, n + n / 2);
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t k = nsys__utf8_seq(p + i, n - i);
    if (k) {
      nsys_strbuf_append(&b, (const char *)p + i, k);
      i += k;
      continue;
    }
    unsigned char c = p[i++];
    uint32_t cp;
    if (c == 0) cp = 0xFFFD;
    else if (c >= 0x80 && c <= 0x9F) cp = nsys__cp1252[c - 0x80] ? nsys__cp1252[c - 0x80] : 0xFFFD;
    else cp = c; /* Latin-1 */
    nsys__put_cp(&b, cp);
  }
  return nsys_strbuf_steal(&b);
}
