/* JSON-RPC 2.0 messages: classify a frame body, and build replies.
 *
 * Rules (docs/protocol.md, "Transport and lifecycle"):
 *   - "jsonrpc" must be "2.0";
 *   - an id is a string or an integer (|id| <= 2^53); null, fractional and
 *     other ids are -32600;
 *   - "method" is a string; "params" an object, an array, null or absent
 *     (null counts as absent);
 *   - batches (a JSON array) are not supported: one -32600 reply, id null;
 *   - a body that is not valid UTF-8 is -32700 (with the id when one can still
 *     be read from it, so the client can match the reply).
 * Everything echoed back in an error message is UTF-8 sanitized and clipped. */
#ifndef NSYS_JSONRPC_H
#define NSYS_JSONRPC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "common/errors.h"
#include "rpc/json_int.h" /* nsys_json_i64: the methods build replies with it */
#include "rpc/json_write.h"

typedef enum {
  NSYS_MSG_INVALID,      /* err/err_msg say why; id may be set */
  NSYS_MSG_REQUEST,      /* method + id (+ params) */
  NSYS_MSG_NOTIFICATION, /* method (+ params), no id */
  NSYS_MSG_RESPONSE,     /* id + result or error (the server sends no requests: ignored) */
} nsys_msg_kind;

typedef struct nsys_rpc_msg {
  nsys_msg_kind kind;
  cJSON *root;        /* owned; NULL when the body did not parse */
  const cJSON *id;    /* points into root, or NULL */
  const char *method; /* points into root, or NULL */
  cJSON *params;      /* object or array inside root, or NULL */
  nsys_err err;
  char err_msg[256];
} nsys_rpc_msg;

/* Parses and classifies body[0..n). Always fills *out; free with nsys_rpc_msg_free. */
void nsys_rpc_parse(const char *body, size_t n, nsys_rpc_msg *out);
void nsys_rpc_msg_free(nsys_rpc_msg *m);

/* True for an id this server accepts: a string, or an integral number within 2^53. */
bool nsys_rpc_id_valid(const cJSON *id);

/* A stable lookup key for an id ("s:abc", "n:42"), malloc'd; the whole id,
 * however long, so distinct ids never share a key. */
char *nsys_rpc_id_key(const cJSON *id);

/* A copy of an id (or a workDoneToken) that prints exactly: integers up to
 * 2^53 as all their digits (cJSON alone prints 15). NULL gives null. */
cJSON *nsys_rpc_id_copy(const cJSON *id);

/* {"jsonrpc":"2.0","id":id,"result":result}; consumes result (NULL -> null). */
cJSON *nsys_rpc_result(const cJSON *id, cJSON *result);

/* {"jsonrpc":"2.0","id":id|null,"error":{"code","message","data"?}}.
 * message is sanitized to UTF-8; data (may be NULL) is consumed. */
cJSON *nsys_rpc_error(const cJSON *id, int code, const char *message, cJSON *data);

/* {"jsonrpc":"2.0","method":method,"params":params}; consumes params. */
cJSON *nsys_rpc_notification(const char *method, cJSON *params);

/* A printable, UTF-8-valid copy of s clipped to max bytes (adds "..." when
 * clipped); malloc'd. For echoing client input back in messages. */
char *nsys_rpc_echo(const char *s, size_t max);

/* Serializes msg compactly (nsys_json_write: raw items appended once);
 * malloc'd (caller frees); *len set. */
char *nsys_rpc_print(const cJSON *msg, size_t *len);

/* The whole LSP frame of a message, header and body, with no copy of its
 * large raw texts: pieces in order, written with writev / uv_write, that
 * point into the frame's own text and into the message it keeps. */
typedef struct {
  nsys_json_pieces pieces;
  cJSON *msg;
  size_t len; /* bytes of all pieces */
} nsys_rpc_frame;

/* Frames msg, which the frame now owns. */
nsys_rpc_frame *nsys_rpc_frame_new(cJSON *msg);
/* Piece i (< f->pieces.n): its bytes and *len. */
const char *nsys_rpc_frame_piece(const nsys_rpc_frame *f, size_t i, size_t *len);
void nsys_rpc_frame_free(nsys_rpc_frame *f);

#endif
