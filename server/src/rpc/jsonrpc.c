#include "rpc/jsonrpc.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

#define NSYS__MAX_SAFE_ID 9007199254740992 /* 2^53 */

static void nsys__invalid(nsys_rpc_msg *m, nsys_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void nsys__invalid(nsys_rpc_msg *m, nsys_err err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->err_msg, sizeof m->err_msg, fmt, ap);
  va_end(ap);
  m->kind = NSYS_MSG_INVALID;
  m->err = err;
  m->method = NULL;
  m->params = NULL;
}

bool nsys_rpc_id_valid(const cJSON *id) {
  if (!id) return false;
  if (cJSON_IsString(id)) return id->valuestring != NULL;
  int64_t v; /* exact: 9007199254740993 is not 2^53 */
  return nsys_json_get_i64(id, &v) && v >= -NSYS__MAX_SAFE_ID && v <= NSYS__MAX_SAFE_ID;
}

char *nsys_rpc_id_key(const cJSON *id) {
  if (cJSON_IsString(id) && id->valuestring) return nsys_xasprintf("s:%s", id->valuestring);
  int64_t v;
  if (nsys_json_get_i64(id, &v)) return nsys_xasprintf("n:%lld", (long long)v);
  if (cJSON_IsNumber(id)) return nsys_xstrdup("n:?"); /* 1.5, 1e300: no request has that id */
  return nsys_xstrdup("-");
}

/* Only ids we would accept are echoed back; anything else becomes null. */
static const cJSON *nsys__echo_id(const cJSON *id, bool body_utf8) {
  if (!nsys_rpc_id_valid(id)) return NULL;
  if (cJSON_IsString(id) && !body_utf8 &&
      !nsys_utf8_valid(id->valuestring, strlen(id->valuestring)))
    return NULL;
  return id;
}

void nsys_rpc_parse(const char *body, size_t n, nsys_rpc_msg *out) {
  memset(out, 0, sizeof *out);
  out->kind = NSYS_MSG_INVALID;
  const char *end = NULL;
  cJSON *root = nsys_json_parse(body, n, &end);
  if (!root) {
    size_t at = (end && end >= body && end <= body + n) ? (size_t)(end - body) : 0;
    nsys__invalid(out, NSYS_E_PARSE, "parse error: the body is not valid JSON (near byte %zu of %zu)",
                  at, n);
    return;
  }
  out->root = root;
  size_t rest = end ? (size_t)(end - body) : n;
  while (rest < n && (body[rest] == ' ' || body[rest] == '\t' || body[rest] == '\r' ||
                      body[rest] == '\n' || body[rest] == '\0'))
    rest++;
  if (rest < n) {
    nsys__invalid(out, NSYS_E_PARSE, "parse error: trailing data after the JSON value at byte %zu",
                  rest);
    return;
  }
  bool utf8 = nsys_utf8_valid(body, n);
  if (cJSON_IsArray(root)) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST,
                  "invalid request: batch requests (JSON arrays) are not supported");
    return;
  }
  if (!cJSON_IsObject(root)) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST, "invalid request: a message must be a JSON object");
    return;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  out->id = nsys__echo_id(id, utf8);
  if (!utf8) {
    nsys__invalid(out, NSYS_E_PARSE, "parse error: the body is not valid UTF-8");
    return;
  }
  if (id && !nsys_rpc_id_valid(id)) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST,
                  "invalid request: id must be a string or an integer (|id| <= 2^53)");
    return;
  }
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
  if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST, "invalid request: jsonrpc must be \"2.0\"");
    return;
  }
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
  if (!method) {
    bool has_result = cJSON_GetObjectItemCaseSensitive(root, "result") != NULL;
    bool has_error = cJSON_GetObjectItemCaseSensitive(root, "error") != NULL;
    if ((has_result || has_error) && id) {
      out->kind = NSYS_MSG_RESPONSE;
      return;
    }
    nsys__invalid(out, NSYS_E_INVALID_REQUEST, "invalid request: method is missing");
    return;
  }
  if (!cJSON_IsString(method) || !method->valuestring) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST, "invalid request: method must be a string");
    return;
  }
  cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
  if (params && !cJSON_IsNull(params) && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
    nsys__invalid(out, NSYS_E_INVALID_REQUEST,
                  "invalid request: params must be an object or an array");
    return;
  }
  out->method = method->valuestring;
  out->params = (params && !cJSON_IsNull(params)) ? params : NULL;
  out->kind = id ? NSYS_MSG_REQUEST : NSYS_MSG_NOTIFICATION;
}

void nsys_rpc_msg_free(nsys_rpc_msg *m) {
  if (m->root) cJSON_Delete(m->root);
  memset(m, 0, sizeof *m);
}

cJSON *nsys_rpc_id_copy(const cJSON *id) {
  if (cJSON_IsNumber(id) && nsys_rpc_id_valid(id)) return nsys_json_i64(nsys_json_i64_or(id, 0));
  return id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull();
}

static cJSON *nsys__envelope(const cJSON *id) {
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
  cJSON_AddItemToObject(msg, "id", nsys_rpc_id_copy(id));
  return msg;
}

cJSON *nsys_rpc_result(const cJSON *id, cJSON *result) {
  cJSON *msg = nsys__envelope(id);
  cJSON_AddItemToObject(msg, "result", result ? result : cJSON_CreateNull());
  return msg;
}

char *nsys_rpc_echo(const char *s, size_t max) {
  if (!s) return nsys_xstrdup("");
  size_t n = strlen(s);
  char *clean = nsys_utf8_sanitize(s, n);
  size_t len = strlen(clean);
  if (len <= max) return clean;
  size_t cut = max;
  while (cut > 0 && ((unsigned char)clean[cut] & 0xC0) == 0x80) cut--; /* char boundary */
  char *out = nsys_xmalloc(cut + 4);
  memcpy(out, clean, cut);
  memcpy(out + cut, "...", 4);
  free(clean);
  return out;
}

cJSON *nsys_rpc_error(const cJSON *id, int code, const char *message, cJSON *data) {
  cJSON *msg = nsys__envelope(id);
  cJSON *err = cJSON_AddObjectToObject(msg, "error");
  cJSON_AddNumberToObject(err, "code", code);
  const char *m = message ? message : "error";
  char *clean = nsys_utf8_sanitize(m, strlen(m));
  cJSON_AddStringToObject(err, "message", clean);
  free(clean);
  if (data) cJSON_AddItemToObject(err, "data", data);
  return msg;
}

cJSON *nsys_rpc_notification(const char *method, cJSON *params) {
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
  cJSON_AddStringToObject(msg, "method", method);
  if (params) cJSON_AddItemToObject(msg, "params", params);
  return msg;
}

char *nsys_rpc_print(const cJSON *msg, size_t *len) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_json_write(&b, msg);
  *len = b.len;
  return nsys_strbuf_steal(&b);
}

/* Room kept in front of the body for "Content-Length: N\r\n\r\n". */
enum { NSYS__FRAME_HEAD = 40, NSYS__FRAME_EXTERNAL = 64 * 1024 };

nsys_rpc_frame *nsys_rpc_frame_new(cJSON *msg) {
  nsys_rpc_frame *f = nsys_xcalloc(1, sizeof *f);
  f->msg = msg;
  nsys_json_pieces *pc = &f->pieces;
  nsys_strbuf_init(&pc->text);
  nsys_strbuf_reserve(&pc->text, NSYS__FRAME_HEAD + 256);
  memset(pc->text.data, ' ', NSYS__FRAME_HEAD);
  pc->text.len = pc->mark = NSYS__FRAME_HEAD;
  nsys_json_write_pieces(pc, msg, NSYS__FRAME_EXTERNAL);
  size_t body = 0;
  for (size_t i = 0; i < pc->n; i++) body += pc->piece[i].len;
  char head[NSYS__FRAME_HEAD];
  int h = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", body);
  size_t at = NSYS__FRAME_HEAD - (size_t)h;
  memcpy(pc->text.data + at, head, (size_t)h);
  if (pc->n && !pc->piece[0].ext && pc->piece[0].off == NSYS__FRAME_HEAD) { /* the header joins the first piece */
    pc->piece[0].off = at;
    pc->piece[0].len += (size_t)h;
  } else { /* a body that starts with a large raw text: the header as a piece of its own */
    pc->piece = nsys_xrealloc(pc->piece, (pc->n + 1) * sizeof *pc->piece);
    memmove(pc->piece + 1, pc->piece, pc->n * sizeof *pc->piece);
    pc->piece[0] = (nsys_json_piece){NULL, at, (size_t)h};
    pc->n++;
    pc->cap = pc->n;
  }
  f->len = body + (size_t)h;
  return f;
}

const char *nsys_rpc_frame_piece(const nsys_rpc_frame *f, size_t i, size_t *len) {
  const nsys_json_piece *p = &f->pieces.piece[i];
  *len = p->len;
  return p->ext ? p->ext + p->off : f->pieces.text.data + p->off;
}

void nsys_rpc_frame_free(nsys_rpc_frame *f) {
  if (!f) return;
  nsys_json_pieces_free(&f->pieces);
  cJSON_Delete(f->msg);
  free(f);
}
