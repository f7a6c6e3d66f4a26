/* JSON text of a cJSON tree: the only printer of trees in this program
 * (never cJSON_Print*).
 *
 * The same text as cJSON_PrintUnformatted (cJSON_Print for the pretty
 * form), except numbers: integers are printed exactly (rpc/json_int.h:
 * an item's exact text, an integral double within 2^53 as all its digits).
 * Raw items (the event, bucket and tree texts the methods write themselves,
 * up to hundreds of megabytes) are appended once. nsys_json_write_pieces
 * goes one step further for replies: large raw texts are not copied at all
 * but listed as pieces pointing into the tree, written out with writev /
 * uv_write. */
#ifndef NSYS_RPC_JSON_WRITE_H
#define NSYS_RPC_JSON_WRITE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* Appends s as a JSON string, quoted and escaped as cJSON escapes it
 * (\" \\ \b \f \n \r \t, \u00XX for the other control characters). */
void nsys_json_escape(nsys_strbuf *b, const char *s);

/* Appends item's compact JSON text to b (NULL item: null). */
void nsys_json_write(nsys_strbuf *b, const cJSON *item);

/* item's JSON text, malloc'd: compact, or laid out as cJSON_Print does
 * (tabs, one object member per line) when pretty. */
char *nsys_json_print(const cJSON *item, bool pretty);

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
