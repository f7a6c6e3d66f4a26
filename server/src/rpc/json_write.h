/* Compact JSON text of a cJSON tree, appended to a string buffer.
 *
 * The same text as cJSON_PrintUnformatted, written without its growing
 * buffer: raw items (the multi-megabyte event, bucket and tree texts the
 * methods write themselves) are appended once, and only the subtrees around
 * them are printed by cJSON. A 5 MB timeline/range reply used to be copied
 * three times (print buffer growth, its length, the frame). */
#ifndef NSYS_RPC_JSON_WRITE_H
#define NSYS_RPC_JSON_WRITE_H

#include <cJSON.h>

#include "common/util.h"

/* Appends item's compact JSON text to b. A key-less item is written as a
 * value; an item with a NULL (invalid) tree part is written as null. */
void nsys_json_write(nsys_strbuf *b, const cJSON *item);

#endif
