#include "analysis/intervals.h"

#include <stdlib.h>

#include "common/util.h"

void nsys_ivls_init(nsys_ivls *v) {
  v->s = v->e = v->pre = NULL;
  v->n = v->cap = 0;
}

void nsys_ivls_free(nsys_ivls *v) {
  free(v->s);
  free(v->e);
  free(v->pre);
  nsys_ivls_init(v);
}

void nsys_ivls_clear(nsys_ivls *v) {
  v->n = 0;
  free(v->pre);
  v->pre = NULL;
}

void nsys_ivls_add_sorted(nsys_ivls *v, int64_t s, int64_t e) {
  if (e <= s) return;
  if (v->n && s <= v->e[v->n - 1]) {
    if (e > v->e[v->n - 1]) v->e[v->n - 1] = e;
    return;
  }
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 64;
    v->s = nsys_xrealloc(v->s, v->cap * sizeof *v->s);
    v->e = nsys_xrealloc(v->e, v->cap * sizeof *v->e);
  }
  v->s[v->n] = s;
  v->e[v->n] = e;
  v->n++;
}

int64_t nsys_ivls_total(const nsys_ivls *v) {
  int64_t t = 0;
  for (uint32_t i = 0; i < v->n; i++) t += v->e[i] - v->s[i];
  return t;
}

int64_t nsys_ivls_intersect_len(const nsys_ivls *a, const nsys_ivls *b) {
  uint32_t i = 0, j = 0;
  int64_t t = 0;
  while (i < a->n && j < b->n) {
    int64_t s = NSYS_MAX(a->s[i], b->s[j]), e = NSYS_MIN(a->e[i], b->e[j]);
    if (e > s) t += e - s;
    if (a->e[i] < b->e[j]) i++;
    else j++;
  }
  return t;
}

void nsys_ivls_intersect(const nsys_ivls *a, const nsys_ivls *b, nsys_ivls *out) {
  nsys_ivls_clear(out);
  uint32_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    int64_t s = NSYS_MAX(a->s[i], b->s[j]), e = NSYS_MIN(a->e[i], b->e[j]);
    if (e > s) nsys_ivls_add_sorted(out, s, e);
    if (a->e[i] < b->e[j]) i++;
    else j++;
  }
}

void nsys_ivls_union(const nsys_ivls *a, const nsys_ivls *b, nsys_ivls *out) {
  nsys_ivls_clear(out);
  uint32_t i = 0, j = 0;
  while (i < a->n || j < b->n) {
    if (j >= b->n || (i < a->n && a->s[i] <= b->s[j])) {
      nsys_ivls_add_sorted(out, a->s[i], a->e[i]);
      i++;
    } else {
      nsys_ivls_add_sorted(out, b->s[j], b->e[j]);
      j++;
    }
  }
}

void nsys_ivls_index(nsys_ivls *v) {
  free(v->pre);
  v->pre = nsys_xmalloc(((size_t)v->n + 1) * sizeof *v->pre);
  v->pre[0] = 0;
  for (uint32_t i = 0; i < v->n; i++) v->pre[i + 1] = v->pre[i] + (v->e[i] - v->s[i]);
}

/* Covered length in (-inf, t). */
static int64_t nsys__len_before(const nsys_ivls *v, int64_t t) {
  /* first interval with s >= t */
  uint32_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (v->s[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return 0;
  int64_t len = v->pre[lo - 1];
  int64_t e = NSYS_MIN(v->e[lo - 1], t);
  return len + (e - v->s[lo - 1]);
}

int64_t nsys_ivls_len_in(const nsys_ivls *v, int64_t a, int64_t b) {
  if (b <= a || !v->n) return 0;
  return nsys__len_before(v, b) - nsys__len_before(v, a);
}
