/* nsys_strtab: interning, lookups, growth, binary-safe keys. */
#include <stdio.h>
#include <string.h>

#include "nsys_check.h"
#include "common/strtab.h"
#include "common/util.h"

int main(void) {
  nsys_strtab t;
  nsys_strtab_init(&t);
  CHECK(t.count == 0);
  CHECK(nsys_strtab_find(&t, "a", 1) == NSYS_STR_NONE);
  CHECK_STR(nsys_strtab_get(&t, 0), "");          /* out of range: "" */
  CHECK_STR(nsys_strtab_get(&t, NSYS_STR_NONE), "");
  uint32_t a = nsys_strtab_intern(&t, "alpha", 5);
  uint32_t b = nsys_strtab_intern(&t, "beta", 4);
  CHECK(a == 0 && b == 1);
  CHECK(nsys_strtab_intern(&t, "alpha", 5) == a);
  CHECK(nsys_strtab_intern(&t, "alphabet", 5) == a); /* only n bytes count */
  CHECK(nsys_strtab_find(&t, "beta", 4) == b);
  CHECK(nsys_strtab_find(&t, "bet", 3) == NSYS_STR_NONE);
  uint32_t e = nsys_strtab_intern(&t, "", 0);
  CHECK(e == 2 && nsys_strtab_find(&t, "", 0) == e && t.lens[e] == 0);
  /* embedded NUL keeps keys distinct */
  uint32_t z1 = nsys_strtab_intern(&t, "x\0y", 3);
  uint32_t z2 = nsys_strtab_intern(&t, "x\0z", 3);
  CHECK(z1 != z2 && t.lens[z1] == 3);
  /* growth: 100k distinct strings keep dense ids and stable contents */
  char buf[32];
  uint32_t first = t.count;
  for (int i = 0; i < 100000; i++) {
    int n = snprintf(buf, sizeof buf, "kernel_%d", i);
    uint32_t id = nsys_strtab_intern(&t, buf, (size_t)n);
    if (id != first + (uint32_t)i) CHECK_MSG(0, "id %u for %d", id, i);
  }
  for (int i = 0; i < 100000; i += 997) {
    int n = snprintf(buf, sizeof buf, "kernel_%d", i);
    CHECK(nsys_strtab_find(&t, buf, (size_t)n) == first + (uint32_t)i);
    CHECK_STR(nsys_strtab_get(&t, first + (uint32_t)i), buf);
  }
  CHECK_STR(nsys_strtab_get(&t, a), "alpha");
  CHECK(t.count == first + 100000);
  nsys_strtab_free(&t);
  return nsys_check_done("test_strtab");
}
