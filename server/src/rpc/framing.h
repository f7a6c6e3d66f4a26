/* LSP base-protocol framing: "Content-Length: N\r\n\r\n" + N bytes of body.
 *
 * The reader is incremental and never trusts the peer: push arbitrary byte
 * chunks with nsys_frame_push(), then call nsys_frame_next() until it returns
 * NSYS_FRAME_NONE. It yields either a complete body or an error, after which
 * it has already recovered:
 *   - a frame claiming more than max_frame bytes is refused without allocating
 *     the claimed size; its body is skipped as it streams in, through a small
 *     scanner that looks for the message's top-level "id" (frame_id_scan.h);
 *     the refusal comes once the scanner settles (the id found, or none to
 *     be found), else once the body is skipped (or cut by a new header),
 *     with the id's text when there was one;
 *   - a garbage header (no Content-Length, a line over 8 KiB, a bad length, a
 *     line without ':') makes the reader scan for the next "Content-Length:";
 *   - a truncated body is detected when a new header ("Content-Length: N"
 *     followed by a raw CR or LF, which valid JSON can never contain) shows up
 *     inside it; the body is cut there and reading resumes at that header.
 * Header names are case-insensitive; Content-Type and unknown headers are
 * ignored; lines may end in CRLF or LF; blank lines between frames are skipped.
 * No JSON and no I/O here. */
#ifndef NSYS_FRAMING_H
#define NSYS_FRAMING_H

#include <stddef.h>

#include "common/errors.h"
#include "rpc/frame_id_scan.h"

#define NSYS_FRAME_DEFAULT_MAX ((size_t)64 << 20) /* 64 MiB */
#define NSYS_FRAME_MAX_LINE 8192                  /* longest header line */
#define NSYS_FRAME_MAX_HEADER 65536               /* longest header block */

typedef enum {
  NSYS_FRAME_NONE,    /* needs more bytes */
  NSYS_FRAME_MESSAGE, /* body/len hold one complete body */
  NSYS_FRAME_ERROR,   /* err/msg describe a refused or malformed frame */
} nsys_frame_kind;

typedef struct nsys_frame_event {
  nsys_frame_kind kind;
  char *body; /* MESSAGE: malloc'd, NUL-terminated, owned by the caller */
  size_t len;
  nsys_err err; /* ERROR: NSYS_E_PARSE (garbage/truncated) or NSYS_E_INVALID_REQUEST (too big) */
  char msg[160];
  /* ERROR for an oversized frame: the JSON text of the request's id when the
   * scanner found one (id_len 0: none; the reply's id is null) */
  char id[NSYS_FRAME_ID_MAX + 1];
  size_t id_len;
} nsys_frame_event;

typedef enum {
  NSYS__FR_HEADER,  /* reading header lines */
  NSYS__FR_BODY,    /* collecting `want` body bytes */
  NSYS__FR_DISCARD, /* skipping `want` bytes of an oversized body */
  NSYS__FR_RESYNC,  /* scanning for "Content-Length:" after garbage */
} nsys__frame_state;

typedef struct nsys_frame_reader {
  size_t max_frame;
  nsys__frame_state state;
  /* unconsumed input: in[pos..len) */
  char *in;
  size_t pos, len, cap;
  /* header being parsed */
  size_t hdr_bytes; /* offset in in[pos..) of the next unparsed header line */
  int have_length;
  size_t length;
  /* body being collected or discarded */
  size_t want;
  char *body;
  size_t body_len, body_cap;
  /* an oversized frame being skipped: its refusal is still to be reported */
  int refusal_pending;
  size_t refused_length;
  nsys_id_scan id_scan;
  /* counters, for logs and tests */
  size_t n_messages, n_errors, n_discarded_bytes;
} nsys_frame_reader;

void nsys_frame_reader_init(nsys_frame_reader *r, size_t max_frame);
void nsys_frame_reader_free(nsys_frame_reader *r);

/* Appends bytes to the reader's input (copied). */
void nsys_frame_push(nsys_frame_reader *r, const char *data, size_t n);

/* Extracts the next event. Call until it returns NSYS_FRAME_NONE. */
nsys_frame_kind nsys_frame_next(nsys_frame_reader *r, nsys_frame_event *ev);

/* True when the reader holds part of a frame (for logging at EOF). */
int nsys_frame_pending(const nsys_frame_reader *r);

#endif
