/* The bounds an index keeps (common/util.h: NSYS_TIME_MIN/MAX, NSYS_TOTAL_MAX):
 * every time within the protocol's range (clamped as rows are read), every
 * item ending at or after its start, and the durations of its ops, of its
 * API calls and of its NVTX ranges each adding up to at most NSYS_TOTAL_MAX,
 * so that every difference of times and every sum of durations an analysis
 * forms (a subset of one of these) fits in an int64. Checked on every fresh
 * build (an export past them is refused as corrupt, -32016) and, fused into
 * the checksum pass, on every cache load (a file past them is rebuilt). */
#ifndef NSYS_INDEX_BOUNDS_H
#define NSYS_INDEX_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

/* Totals are bounded in units of 2^20 ns, each duration rounded up: a total
 * of at most NSYS_UNITS_MAX units is at most NSYS_TOTAL_MAX ns (the rounding
 * adds under 1.05 ms an item: 10M ops, 3 hours against 73 years). */
#define NSYS_UNIT_BITS 20
#define NSYS_UNITS_MAX ((uint64_t)NSYS_TOTAL_MAX >> NSYS_UNIT_BITS)
/* The most items nsys_durations_fold takes at once (so *units cannot wrap
 * between the caller's checks against NSYS_UNITS_MAX). */
#define NSYS_FOLD_MAX 4096

/* Items [0, n) (n <= NSYS_FOLD_MAX): false when one is not a pair of kept
 * times with end >= start; else adds their durations (in units, rounded up)
 * to *units. Branch-free: runs at memory speed. */
bool nsys_durations_fold(const int64_t *start, const int64_t *end, size_t n, uint64_t *units);

/* NULL when ix keeps the bounds, else which one it breaks, as a phrase
 * ("GPU op durations add up to more than 2^61 ns (73 years)", ...). */
const char *nsys_index_bounds_broken(const nsys_index *ix);

#endif
