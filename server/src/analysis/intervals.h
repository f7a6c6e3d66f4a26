/* Sorted, disjoint interval lists: unions, intersections and window sums.
 * Plain arrays, no JSON; used by every time-based analysis. */
#ifndef NSYS_INTERVALS_H
#define NSYS_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nsys_ivls {
  int64_t *s, *e;   /* starts / ends, sorted, disjoint, s[i] < e[i] */
  int64_t *pre;     /* optional prefix sums of lengths (nsys_ivls_index) */
  uint32_t n, cap;
} nsys_ivls;

void nsys_ivls_init(nsys_ivls *v);
void nsys_ivls_free(nsys_ivls *v);
void nsys_ivls_clear(nsys_ivls *v);
/* Appends [s,e) where s >= the previous start; merges when it touches or
 * overlaps the last interval. Empty intervals are ignored. */
void nsys_ivls_add_sorted(nsys_ivls *v, int64_t s, int64_t e);
int64_t nsys_ivls_total(const nsys_ivls *v);
/* Length of the intersection of two lists. */
int64_t nsys_ivls_intersect_len(const nsys_ivls *a, const nsys_ivls *b);
/* out = a ∩ b (out must not alias a or b). */
void nsys_ivls_intersect(const nsys_ivls *a, const nsys_ivls *b, nsys_ivls *out);
/* out = a ∪ b. */
void nsys_ivls_union(const nsys_ivls *a, const nsys_ivls *b, nsys_ivls *out);
/* Builds prefix sums; then nsys_ivls_len_in() answers in O(log n). */
void nsys_ivls_index(nsys_ivls *v);
/* Covered length inside [a,b). Needs nsys_ivls_index(). */
int64_t nsys_ivls_len_in(const nsys_ivls *v, int64_t a, int64_t b);

#endif
