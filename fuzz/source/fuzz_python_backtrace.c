/* libFuzzer: arbitrary bytes as a Python backtrace payload (binaryData) and
 * as its TEXT form (hex / base64). Asserts: no crash/UB; a decoded payload
 * has exactly the size its frame count says; decoded text is no longer than
 * the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/python_backtrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  static nsys_pybt_frame out[NSYS_PYBT_MAX_FRAMES];
  uint32_t nf = 0;
  if (nsys_pybt_decode(data, size, out, 7, &nf) && (nf == 0 || size != 16 + 24 * (size_t)nf)) abort();
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  uint8_t *bytes = NULL;
  size_t n = 0;
  if (nsys_pybt_text_bytes(text, size, &bytes, &n)) {
    if (n > size) abort();
    if (nsys_pybt_decode(bytes, n, out, NSYS_PYBT_MAX_FRAMES, &nf) && n != 16 + 24 * (size_t)nf) abort();
  } else if (bytes) {
    abort();
  }
  free(bytes);
  free(text);
  return 0;
}
