/* The packed form of a rank summary's collectives (set/summarize {packed},
 * `nsys-ai rank-summary --packed`, set/reduce reads both forms): instead of
 * one JSON array per column (a few dozen digits per NCCL kernel, nearly all
 * of set/reduce's time at 64 ranks), one base64 string of every column's
 * zigzag LEB128 deltas, the communicators and types as small dictionaries:
 *
 *   {"n": N, "comms": ["p5eed0001", ...], "types": ["AllReduce", ...],
 *    "packed": base64(col_0 ... col_12)}
 *
 * columns in this order, N varints each, every value minus the column's
 * previous value (the first minus 0), as uint64 (wrapping), zigzag-encoded:
 * start, end, bytes, commSize, step, window, compute, dataLoad, h2d, sync,
 * launchGap, comm (index into comms), type (index into types).
 * Definition: docs/multirank.md ("Packed summaries"). */
#ifndef NSYS_SET_PACKED_H
#define NSYS_SET_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "analysis/ranks.h"

/* The packed collectives of a summary, as a new JSON object. */
cJSON *nsys_rank_colls_packed_json(const nsys_rank_coll *c, uint32_t n);

/* Reads a packed collectives object into *out (calloc'd, n + 1 entries) and
 * *n; false with a message in err ("... .packed: ...") on any inconsistency
 * (bad base64, truncated or overlong varints, an index out of its dictionary,
 * values beyond their field's range, bytes left over). */
bool nsys_rank_colls_from_packed(const cJSON *c, nsys_rank_coll **out, uint32_t *n, char *err, size_t errcap);

#endif
