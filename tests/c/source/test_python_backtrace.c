/* The Python backtrace payload decoder: the layout (16-byte header, 24-byte
 * frames), its size checks, and the TEXT encodings (hex, base64) a
 * binaryData column may use; anything else is refused. */
#include <stdlib.h>
#include <string.h>

#include "source/python_backtrace.h"
#include "../common/nsys_check.h"

static void nsys__put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static size_t nsys__payload(uint8_t *buf, uint64_t nframes, uint64_t (*f)[3]) {
  memset(buf, 0, 16);
  buf[0] = 1;
  buf[4] = 1;
  nsys__put64(buf + 8, nframes);
  for (uint64_t k = 0; k < nframes; k++)
    for (int j = 0; j < 3; j++) nsys__put64(buf + 16 + 24 * k + 8 * j, f[k][j]);
  return 16 + 24 * nframes;
}

int main(void) {
  uint8_t buf[256];
  uint64_t fr[3][3] = {{931, 839, 7}, {12, 13, 21}, {40, 41, 30}};
  size_t n = nsys__payload(buf, 3, fr);
  nsys_pybt_frame out[4];
  uint32_t nf = 0;
  CHECK_MSG(nsys_pybt_decode(buf, n, out, 4, &nf) && nf == 3 && out[0].func == 931 && out[0].file == 839 &&
                out[0].line == 7 && out[2].line == 30,
            "three frames, innermost first");
  CHECK_MSG(nsys_pybt_decode(buf, n, out, 1, &nf) && nf == 3 && out[0].line == 7, "capped output");
  CHECK_MSG(!nsys_pybt_decode(buf, n - 1, out, 4, &nf) && nf == 0, "truncated");
  CHECK_MSG(!nsys_pybt_decode(buf, 15, out, 4, &nf), "short header");
  CHECK_MSG(!nsys_pybt_decode(NULL, 0, out, 4, &nf), "empty");
  uint8_t big[64];
  memcpy(big, buf, 64);
  nsys__put64(big + 8, (uint64_t)1 << 60); /* a frame count whose size overflows */
  CHECK_MSG(!nsys_pybt_decode(big, 64, out, 4, &nf), "huge frame count");
  nsys__put64(big + 8, 0);
  CHECK_MSG(!nsys_pybt_decode(big, 16, out, 4, &nf), "no frames");
  uint64_t neg[1][3] = {{1, 2, UINT64_MAX}};
  n = nsys__payload(big, 1, neg);
  CHECK_MSG(!nsys_pybt_decode(big, n, out, 4, &nf), "negative line");
  /* text encodings */
  n = nsys__payload(buf, 1, fr);
  char hex[2 * 40 + 3] = "0x";
  for (size_t i = 0; i < n; i++) {
    static const char d[] = "0123456789abcdef";
    hex[2 + 2 * i] = d[buf[i] >> 4];
    hex[3 + 2 * i] = d[buf[i] & 15];
  }
  hex[2 + 2 * n] = '\0';
  uint8_t *bytes = NULL;
  size_t bn = 0;
  CHECK_MSG(nsys_pybt_text_bytes(hex, strlen(hex), &bytes, &bn) && bn == n && memcmp(bytes, buf, n) == 0, "hex");
  free(bytes);
  CHECK_MSG(!nsys_pybt_text_bytes(hex + 2, strlen(hex) - 3, &bytes, &bn) && bytes == NULL, "odd hex");
  CHECK_MSG(nsys_pybt_text_bytes("AQAAAA==", 8, &bytes, &bn) && bn == 4 && bytes[0] == 1 && bytes[3] == 0,
            "base64 with padding");
  free(bytes);
  CHECK_MSG(nsys_pybt_text_bytes("AQAB", 4, &bytes, &bn) && bn == 3 && bytes[2] == 1, "base64");
  free(bytes);
  CHECK_MSG(!nsys_pybt_text_bytes("not base64!", 11, &bytes, &bn) && bytes == NULL, "neither");
  CHECK_MSG(!nsys_pybt_text_bytes("A*==", 4, &bytes, &bn) && bytes == NULL, "bad base64 char");
  CHECK_MSG(!nsys_pybt_text_bytes("", 0, &bytes, &bn), "empty text");
  CHECK_MSG(!nsys_pybt_text_bytes("====", 4, &bytes, &bn) && bytes == NULL, "all padding");
  return nsys_check_done("python_backtrace");
}
