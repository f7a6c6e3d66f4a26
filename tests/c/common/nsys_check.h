/* Minimal assertions for the table-driven C tests: each failed CHECK prints
 * file:line and the condition, and the test exits 1 at the end. */
#ifndef NSYS_CHECK_H
#define NSYS_CHECK_H

#include <stdio.h>
#include <string.h>

static int nsys_check_failures;
static int nsys_check_count;

#define CHECK(cond)                                                               \
  do {                                                                            \
    nsys_check_count++;                                                           \
    if (!(cond)) {                                                                \
      nsys_check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
    }                                                                             \
  } while (0)

#define CHECK_MSG(cond, ...)                                                      \
  do {                                                                            \
    nsys_check_count++;                                                           \
    if (!(cond)) {                                                                \
      nsys_check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
    }                                                                             \
  } while (0)

#define CHECK_STR(a, b) CHECK_MSG(strcmp((a), (b)) == 0, "'%s' != '%s'", (a), (b))

static inline int nsys_check_done(const char *name) {
  fprintf(stderr, "%s: %d checks, %d failed\n", name, nsys_check_count, nsys_check_failures);
  return nsys_check_failures ? 1 : 0;
}

#endif
