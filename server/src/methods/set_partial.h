/* set/reduce in pieces: the summaries a client sends over several requests,
 * each under the frame limit, kept by the server until the request that
 * reduces them (docs/multirank.md "Reduce in pieces"). A partial is taken out
 * of the registry by the request that uses it and put back after, so two
 * requests never share one. Thread-safe. */
#ifndef NSYS_SET_PARTIAL_H
#define NSYS_SET_PARTIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/ranks.h"

typedef struct nsys_set_partial {
  char id[16];
  nsys_rank_summary *sums; /* in the order received */
  uint32_t n, cap;
} nsys_set_partial;

/* Takes the partial `id` out of the registry (NULL: unknown, reduced, closed,
 * or in use by another request). */
nsys_set_partial *nsys_set_partial_take(const char *id);
/* Puts p (back) in the registry, assigning its id ("p<N>") when it has none. */
void nsys_set_partial_keep(nsys_set_partial *p);
/* Drops the partial `id`; false when there is none (set/close). */
bool nsys_set_partial_drop(const char *id);
/* Frees a partial that is not in the registry (its summaries too). */
void nsys_set_partial_free(nsys_set_partial *p);

#endif
