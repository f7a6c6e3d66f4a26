/* Compact JSON text of a cJSON tree.
 *
 * The same text as cJSON_PrintUnformatted, written without its growing
 * buffer: raw items (the event, bucket and tree texts the methods write
 * themselves, up to hundreds of megabytes) are appended once, and only the
 * subtrees around them are printed by cJSON. nsys_json_write_pieces goes one
 * step further for replies: large raw texts are not copied at all but listed
 * as pieces pointing into the tree, written out with writev / uv_write. */
#ifndef NSYS_RPC_JSON_WRITE_H
#define NSYS_RPC_JSON_WRITE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "common/util.h"

/* Appends s as a JSON string, quoted and escaped as cJSON escapes it
 * (\" \\ \b \f \n \r \t, \u00XX for the other control characters). */
void nsys_json_escape(nsys_strbuf *b, const char *s);

/* Appends item's compact JSON text to b (NULL item: null). */
void nsys_json_write(nsys_strbuf *b, const cJSON *item);

/* A piece of the text: `ext` bytes of a raw item (which the tree owns), or,
 * when ext is NULL, bytes [off, off + len) of the pieces' own text. */
typedef struct {
  const char *ext;
  size_t off, len;
} nsys_json_piece;

typedef struct {
  nsys_strbuf text; /* everything but the raw texts of min_external bytes or more */
  nsys_json_piece *piece;
  size_t n, cap;
  size_t mark; /* start of the piece of text not listed yet */
} nsys_json_pieces;

/* Writes item as pieces: the text (starting at what `out->text` holds
 * already) with raw texts of at least min_external bytes left in place.
 * The pieces stay valid while item lives and out->text is not changed. */
void nsys_json_write_pieces(nsys_json_pieces *out, const cJSON *item, size_t min_external);
void nsys_json_pieces_free(nsys_json_pieces *out);

#endif
