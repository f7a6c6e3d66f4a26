/* Pages of instances in time order: index/instance_page.h. */
#include "index/instance_page.h"

#include <stdlib.h>

_Static_assert(sizeof(nsys_instance) == 16, "an instance is 16 bytes: 160 MB for 10M matches");

int nsys_instance_cmp(const nsys_instance *a, const nsys_instance *b) {
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int nsys__qcmp(const void *a, const void *b) { return nsys_instance_cmp(a, b); }

size_t nsys_instance_rank(const nsys_instance *v, size_t n, int64_t at) {
  size_t r = 0;
  for (size_t i = 0; i < n; i++) r += v[i].start < at;
  return r;
}

static void nsys__swap(nsys_instance *a, nsys_instance *b) {
  nsys_instance t = *a;
  *a = *b;
  *b = t;
}

/* Places in v[k] the element of rank k, the smaller ones before it and the
 * larger ones after it, within v[lo, hi). */
static void nsys__select(nsys_instance *v, size_t lo, size_t hi, size_t k, int budget) {
  while (hi - lo > 16) {
    if (budget-- <= 0) { /* an unlucky or crafted input: sort what is left */
      qsort(v + lo, hi - lo, sizeof *v, nsys__qcmp);
      return;
    }
    size_t mid = lo + (hi - lo) / 2, last = hi - 1;
    /* median of three to v[last] as the pivot */
    if (nsys_instance_cmp(&v[mid], &v[lo]) < 0) nsys__swap(&v[mid], &v[lo]);
    if (nsys_instance_cmp(&v[last], &v[lo]) < 0) nsys__swap(&v[last], &v[lo]);
    if (nsys_instance_cmp(&v[mid], &v[last]) < 0) nsys__swap(&v[mid], &v[last]);
    nsys_instance pivot = v[last];
    size_t store = lo;
    for (size_t i = lo; i < last; i++)
      if (nsys_instance_cmp(&v[i], &pivot) < 0) nsys__swap(&v[i], &v[store++]);
    nsys__swap(&v[store], &v[last]); /* instances are distinct: the pivot's rank is store */
    if (k == store) return;
    if (k < store) hi = store;
    else lo = store + 1;
  }
  qsort(v + lo, hi - lo, sizeof *v, nsys__qcmp);
}

void nsys_instance_page(nsys_instance *v, size_t n, size_t off, size_t len) {
  if (off >= n || len == 0) return;
  if (len > n - off) len = n - off;
  int budget = 2;
  for (size_t m = n; m > 1; m >>= 1) budget += 2;
  if (off > 0) nsys__select(v, 0, n, off, budget); /* ranks < off before v[off] */
  size_t end = off + len;
  if (end < n) nsys__select(v, off, n, end - 1, budget); /* ranks off..end-1 in v[off, end) */
  qsort(v + off, len, sizeof *v, nsys__qcmp);
}
