/* The one reply-size rule of the protocol (docs/protocol.md, "Reply size"):
 * a method whose reply can grow with the profile answers at most
 * NSYS_REPLY_MAX_BYTES of JSON unless the caller raises `maxBytes`, and says
 * what it left out (`truncated`, and `next` where the reply pages). Pages
 * continue with opaque tokens: `cursor` = a previous reply's `next`. */
#ifndef NSYS_METHODS_REPLY_LIMIT_H
#define NSYS_METHODS_REPLY_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/call.h"

#define NSYS_REPLY_MAX_BYTES 2097152 /* 2 MiB */
#define NSYS_REPLY_MAX_BYTES_CEIL ((int64_t)1 << 40)

/* params.maxBytes (default NSYS_REPLY_MAX_BYTES, at least 1024). False after
 * a -32602 error. */
bool nsys_reply_max_bytes(nsys_call *call, int64_t *out);

/* Continuation tokens: NSYS_CURSOR_LEN hex digits holding a position and a
 * check of (key, position), where key hashes everything that defines the
 * listing (method params, profile). A token decodes only with the key it was
 * made with, so a token from another request, a changed param or a typo is
 * rejected (the caller answers -32602). */
#define NSYS_CURSOR_LEN 24
void nsys_cursor_encode(char out[NSYS_CURSOR_LEN + 1], uint64_t key, uint64_t pos);
bool nsys_cursor_decode(const char *tok, uint64_t key, uint64_t *pos);

#endif
