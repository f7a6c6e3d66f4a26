/* libFuzzer target: arbitrary bytes through the LSP framing reader (fed in
 * chunks whose sizes come from the input itself) and every body through the
 * JSON-RPC classifier and the reply builders, as the server does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "rpc/framing.h"
#include "rpc/jsonrpc.h"

static void nsys__check_body(const char *body, size_t len) {
  nsys_rpc_msg m;
  nsys_rpc_parse(body, len, &m);
  cJSON *reply = m.kind == NSYS_MSG_INVALID
                     ? nsys_rpc_error(m.id, nsys_err_rpc_code(m.err), m.err_msg, NULL)
                     : nsys_rpc_result(m.id, m.params ? cJSON_Duplicate(m.params, 1) : NULL);
  size_t n;
  char *out = nsys_rpc_print(reply, &n);
  /* What the server writes is always valid UTF-8 when the request was. */
  if (m.kind == NSYS_MSG_INVALID && !nsys_utf8_valid(out, n)) abort();
  if (m.method) {
    char *e = nsys_rpc_echo(m.method, 100);
    if (!nsys_utf8_valid(e, strlen(e))) abort();
    free(e);
  }
  free(out);
  cJSON_Delete(reply);
  nsys_rpc_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  /* first byte: chunk size; second: small max frame (0 = default) */
  size_t chunk = (size_t)data[0] + 1;
  size_t max_frame = data[1] < 128 ? (size_t)data[1] * 16 : 0;
  data += 2;
  size -= 2;
  nsys_frame_reader r;
  nsys_frame_reader_init(&r, max_frame);
  size_t pos = 0;
  while (pos < size) {
    size_t n = size - pos < chunk ? size - pos : chunk;
    nsys_frame_push(&r, (const char *)data + pos, n);
    pos += n;
    nsys_frame_event ev;
    while (nsys_frame_next(&r, &ev) != NSYS_FRAME_NONE) {
      if (ev.kind == NSYS_FRAME_MESSAGE) {
        if (ev.body[ev.len] != '\0') abort();
        nsys__check_body(ev.body, ev.len);
        free(ev.body);
      } else if (ev.err != NSYS_E_PARSE && ev.err != NSYS_E_INVALID_REQUEST) {
        abort();
      }
    }
  }
  if (r.len - r.pos > size + 1) abort(); /* never holds more than it was given */
  nsys_frame_reader_free(&r);
  /* The whole input as one body, too. */
  nsys__check_body((const char *)data, size);
  return 0;
}
