/* Finds a JSON-RPC message's top-level "id" member in a body that streams by
 * and is not kept: the framing reader feeds it the bytes of a frame it refuses
 * as too large, so that the refusal can carry the request's id.
 *
 * A byte-at-a-time scanner in constant memory: it follows strings (escapes
 * included) and nesting, reads member names at depth 1, and captures the raw
 * text of the first member named "id" (also when the name is written with
 * escapes) when its value is a string or a number no longer than
 * NSYS_FRAME_ID_MAX bytes. It stops at the first of: that id found, the
 * top-level object closed, or anything that is not a JSON object's prefix as
 * far as it follows (the body is then not a request it can answer by id).
 * It validates only what it needs: nsys_id_scan_parse reads the captured text
 * as the reply's id (exact integers; NULL when it is not a valid JSON-RPC id
 * or not valid UTF-8). The scan allocates nothing. */
#ifndef NSYS_FRAME_ID_SCAN_H
#define NSYS_FRAME_ID_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#define NSYS_FRAME_ID_MAX 256 /* longest id token kept (its JSON text) */
#define NSYS__ID_KEY_MAX 16   /* longest member name compared with "id" ("\u0069\u0064" is 12) */

typedef enum {
  NSYS_ID_SCANNING, /* needs more bytes */
  NSYS_ID_FOUND,    /* id[0..id_len) is the id's JSON text */
  NSYS_ID_NONE,     /* no usable id: none, not a string or number, too long, or not an object */
} nsys_id_scan_result;

typedef struct nsys_id_scan {
  nsys_id_scan_result result;
  int state;          /* internal */
  size_t depth;       /* open containers */
  bool in_string, escape;
  bool capture_key, key_overflow, value_is_id;
  char key[NSYS__ID_KEY_MAX];
  size_t key_len;
  char id[NSYS_FRAME_ID_MAX + 1]; /* NUL-terminated when FOUND */
  size_t id_len;
} nsys_id_scan;

void nsys_id_scan_init(nsys_id_scan *s);
/* Feeds bytes; returns the result so far (FOUND and NONE are final: later bytes are ignored). */
nsys_id_scan_result nsys_id_scan_feed(nsys_id_scan *s, const char *p, size_t n);
/* The body ended: a number id running to the very end is complete (a bare
 * body cannot end inside an object, so this only settles SCANNING to NONE). */
nsys_id_scan_result nsys_id_scan_end(nsys_id_scan *s);

/* The captured id (text[0..n)) as the reply's id: a new cJSON, or NULL when it
 * is not exactly one string (valid UTF-8) or one safe integer. */
struct cJSON *nsys_id_scan_parse(const char *text, size_t n);

#endif
