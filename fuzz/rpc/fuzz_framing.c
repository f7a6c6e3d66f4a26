/* libFuzzer target: arbitrary bytes through the LSP framing reader (fed in
 * chunks whose sizes come from the input itself) and every body through the
 * JSON-RPC classifier and the reply builders, as the server does; and every
 * body through the oversized-frame id scanner (frame_id_scan.h), in the same
 * chunks, against the parser: on a valid JSON object they find the same id. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "rpc/frame_id_scan.h"
#include "rpc/framing.h"
#include "rpc/jsonrpc.h"

/* The scanner fed body[0..len) in pieces of `chunk` bytes; its id parsed (NULL: none). */
static cJSON *nsys__scan_id(const char *body, size_t len, size_t chunk) {
  nsys_id_scan sc;
  nsys_id_scan_init(&sc);
  for (size_t pos = 0; pos < len; pos += chunk) {
    size_t n = len - pos < chunk ? len - pos : chunk;
    nsys_id_scan_feed(&sc, body + pos, n);
  }
  if (nsys_id_scan_end(&sc) != NSYS_ID_FOUND) return NULL;
  if (sc.id_len == 0 || sc.id_len > NSYS_FRAME_ID_MAX || sc.id[sc.id_len] != '\0') abort();
  return nsys_id_scan_parse(sc.id, sc.id_len);
}

static void nsys__check_scanner(const char *body, size_t len, size_t chunk, const nsys_rpc_msg *m) {
  cJSON *scanned = nsys__scan_id(body, len, chunk);
  if (scanned) { /* what the server would echo: valid UTF-8 */
    size_t n;
    char *out = nsys_rpc_print(scanned, &n);
    if (!nsys_utf8_valid(out, n)) abort();
    free(out);
  }
  /* a valid object: the scanner's id is the parser's first "id" member, when usable */
  bool valid = m->root && cJSON_IsObject(m->root) && nsys_utf8_valid(body, len) && !memchr(body, '\0', len);
  if (valid) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->root, "id");
    bool usable = nsys_rpc_id_valid(id);
    if (scanned && !(usable && cJSON_Compare(id, scanned, 1))) abort();
    /* missed only when its text could exceed the capture: a string written with escapes
     * or longer than that, a number in a body longer than that ("1.000...") */
    bool could_overflow = cJSON_IsString(id) ? memchr(body, '\\', len) || strlen(id->valuestring) + 2 > NSYS_FRAME_ID_MAX
                                             : len > NSYS_FRAME_ID_MAX;
    if (!scanned && usable && !could_overflow) abort();
  }
  cJSON_Delete(scanned);
}

static void nsys__check_body(const char *body, size_t len, size_t chunk) {
  nsys_rpc_msg m;
  nsys_rpc_parse(body, len, &m);
  nsys__check_scanner(body, len, chunk, &m);
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
        nsys__check_body(ev.body, ev.len, chunk);
        free(ev.body);
      } else if (ev.err != NSYS_E_PARSE && ev.err != NSYS_E_INVALID_REQUEST) {
        abort();
      } else if (ev.id_len) { /* an oversized frame's id: only for a refusal, NUL-terminated */
        if (ev.err != NSYS_E_INVALID_REQUEST || ev.id[ev.id_len] != '\0') abort();
        cJSON_Delete(nsys_id_scan_parse(ev.id, ev.id_len));
      }
    }
  }
  if (r.len - r.pos > size + 1) abort(); /* never holds more than it was given */
  nsys_frame_reader_free(&r);
  /* The whole input as one body, too. */
  nsys__check_body((const char *)data, size, chunk);
  return 0;
}
