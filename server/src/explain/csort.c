/* Cancellable merge sort (see csort.h). */
#include "explain/csort.h"

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
