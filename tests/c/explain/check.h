/* Minimal table-driven test helpers for the explain C tests. */
#ifndef NSYS_TEST_CHECK_H
#define NSYS_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int nsys_test_failures = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
      nsys_test_failures++;                                                           \
    }                                                                                 \
  } while (0)

#define CHECK_STR(a, b)                                                               \
  do {                                                                                \
    const char *a_ = (a), *b_ = (b);                                                  \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                          \
      fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__,     \
              b_ ? b_ : "(null)", a_ ? a_ : "(null)");                                \
      nsys_test_failures++;                                                           \
    }                                                                                 \
  } while (0)

#define CHECK_NEAR(a, b, eps)                                                         \
  do {                                                                                \
    double a_ = (a), b_ = (b);                                                        \
    if (fabs(a_ - b_) > (eps)) {                                                      \
      fprintf(stderr, "%s:%d: expected %g, got %g\n", __FILE__, __LINE__, b_, a_);    \
      nsys_test_failures++;                                                           \
    }                                                                                 \
  } while (0)

#endif
