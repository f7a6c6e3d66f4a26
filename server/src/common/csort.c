/* Cancellable merge sort and selection (see csort.h). */
#include "common/csort.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define NSYS__BLOCK 4096u
#define NSYS__POLL 65536u

bool nsys_csort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *), bool (*cancelled)(void *),
                void *ctx) {
  if (n < 2) return true;
  char *a = base;
  for (size_t lo = 0; lo < n; lo += NSYS__BLOCK) {
    size_t len = n - lo < NSYS__BLOCK ? n - lo : NSYS__BLOCK;
    qsort(a + lo * size, len, size, cmp);
    if ((lo / NSYS__BLOCK) % (NSYS__POLL / NSYS__BLOCK) == 0 && cancelled && cancelled(ctx)) return false;
  }
  if (n <= NSYS__BLOCK) return true;
  char *tmp = nsys_xmalloc(n * size);
  char *src = a, *dst = tmp;
  size_t moved = 0;
  bool ok = true;
  for (size_t width = NSYS__BLOCK; width < n && ok; width *= 2) {
    for (size_t lo = 0; lo < n && ok; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        /* take from the right only when strictly smaller: stable */
        if (cmp(src + j * size, src + i * size) < 0) memcpy(dst + k++ * size, src + j++ * size, size);
        else memcpy(dst + k++ * size, src + i++ * size, size);
        if (++moved % NSYS__POLL == 0 && cancelled && cancelled(ctx)) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
      if (i < mid) memcpy(dst + k * size, src + i * size, (mid - i) * size), k += mid - i;
      if (j < hi) memcpy(dst + k * size, src + j * size, (hi - j) * size);
    }
    char *t = src;
    src = dst;
    dst = t;
  }
  if (ok && src != a) memcpy(a, src, n * size);
  free(tmp);
  return ok;
}

static int nsys__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

bool nsys_cselect_i64(int64_t *a, size_t n, size_t m, bool (*cancelled)(void *), void *ctx) {
  size_t lo = 0, hi = n, work = 0;
  int budget = 4;
  for (size_t k = n; k > 1; k >>= 1) budget += 2;
  while (hi - lo > 16) {
    if (budget-- == 0) return nsys_csort(a + lo, hi - lo, sizeof *a, nsys__cmp_i64, cancelled, ctx);
    int64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
    int64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < piv, [lt,i) == piv, [gt,hi) > piv */
    while (i < gt) {
      int64_t v = a[i];
      if (v < piv) a[i++] = a[lt], a[lt++] = v;
      else if (v > piv) a[i] = a[--gt], a[gt] = v;
      else i++;
      if (++work % NSYS__POLL == 0 && cancelled && cancelled(ctx)) return false;
    }
    if (m < lt) hi = lt;
    else if (m >= gt) lo = gt;
    else return true;
  }
  for (size_t i = lo + 1; i < hi; i++) { /* insertion sort of the last few */
    int64_t v = a[i];
    size_t j = i;
    for (; j > lo && a[j - 1] > v; j--) a[j] = a[j - 1];
    a[j] = v;
  }
  return true;
}
