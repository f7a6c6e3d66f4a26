/* Reply-size cap and continuation tokens; see reply_limit.h. */
#include "methods/reply_limit.h"

#include <string.h>

#include "common/util.h"
#include "rpc/params.h"

bool nsys_reply_max_bytes(nsys_call *call, int64_t *out) {
  *out = NSYS_REPLY_MAX_BYTES;
  return nsys_param_int64(call, "maxBytes", false, 1024, NSYS_REPLY_MAX_BYTES_CEIL, out);
}

static uint32_t nsys__cursor_check(uint64_t key, uint64_t pos) {
  uint64_t v[2] = {key, pos};
  uint64_t h = nsys_fnv1a(v, sizeof v, 0x6e7379732d616921ull);
  return (uint32_t)(h ^ (h >> 32));
}

static const char nsys__hex[] = "0123456789abcdef";

void nsys_cursor_encode(char out[NSYS_CURSOR_LEN + 1], uint64_t key, uint64_t pos) {
  uint32_t check = nsys__cursor_check(key, pos);
  for (int i = 0; i < 16; i++) out[i] = nsys__hex[(pos >> (60 - 4 * i)) & 15];
  for (int i = 0; i < 8; i++) out[16 + i] = nsys__hex[(check >> (28 - 4 * i)) & 15];
  out[NSYS_CURSOR_LEN] = '\0';
}

bool nsys_cursor_decode(const char *tok, uint64_t key, uint64_t *pos) {
  if (!tok || strlen(tok) != NSYS_CURSOR_LEN) return false;
  uint64_t p = 0;
  uint32_t check = 0;
  for (int i = 0; i < NSYS_CURSOR_LEN; i++) {
    const char *d = strchr(nsys__hex, tok[i]);
    if (!d || !*d) return false;
    if (i < 16) p = p << 4 | (uint64_t)(d - nsys__hex);
    else check = check << 4 | (uint32_t)(d - nsys__hex);
  }
  if (check != nsys__cursor_check(key, p)) return false;
  *pos = p;
  return true;
}
