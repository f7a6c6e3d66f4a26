/* The assertions of every C test: each check is counted, a failed one prints
 * "file:line: CHECK failed: <condition>[: <details>]" and the test goes on;
 * main ends with `return nsys_check_done("name");`, which prints the counts
 * and exits 1 when any check failed.
 *
 *   CHECK(cond)             cond is true
 *   CHECK_MSG(cond, ...)    the same, printing a printf-style message on failure
 *   CHECK_STR(got, want)    equal strings (NULL on either side fails)
 *   CHECK_EQ(got, want)     equal integers, compared as int64_t
 *   CHECK_NEAR(got, want, eps)  doubles at most eps apart (NaN fails)
 *
 * Each argument is evaluated once; a message's arguments only on failure. */
#ifndef NSYS_CHECK_H
#define NSYS_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int nsys_check_failures;
static int nsys_check_count;

/* Counts one check named by the string `what`; on failure prints the details. */
#define NSYS__CHECK(ok, what, ...)                                                \
  do {                                                                            \
    nsys_check_count++;                                                           \
    if (!(ok)) {                                                                  \
      nsys_check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, (what));   \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
    }                                                                             \
  } while (0)

#define CHECK(cond)                                                               \
  do {                                                                            \
    nsys_check_count++;                                                           \
    if (!(cond)) {                                                                \
      nsys_check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
    }                                                                             \
  } while (0)

#define CHECK_MSG(cond, ...) NSYS__CHECK((cond), #cond, __VA_ARGS__)

#define CHECK_STR(got, want)                                                      \
  do {                                                                            \
    const char *nsys__got = (got), *nsys__want = (want);                          \
    NSYS__CHECK(nsys__got && nsys__want && strcmp(nsys__got, nsys__want) == 0,   \
                #got " == " #want, "got \"%s\", expected \"%s\"",                 \
                nsys__got ? nsys__got : "(null)",                                 \
                nsys__want ? nsys__want : "(null)");                              \
  } while (0)

#define CHECK_EQ(got, want)                                                       \
  do {                                                                            \
    int64_t nsys__got = (int64_t)(got), nsys__want = (int64_t)(want);             \
    NSYS__CHECK(nsys__got == nsys__want, #got " == " #want,                       \
                "got %" PRId64 ", expected %" PRId64, nsys__got, nsys__want);     \
  } while (0)

#define CHECK_NEAR(got, want, eps)                                                \
  do {                                                                            \
    double nsys__got = (got), nsys__want = (want), nsys__eps = (eps);             \
    NSYS__CHECK(fabs(nsys__got - nsys__want) <= nsys__eps, #got " ~ " #want,      \
                "got %.17g, expected %.17g within %g", nsys__got, nsys__want,     \
                nsys__eps);                                                       \
  } while (0)

static inline int nsys_check_done(const char *name) {
  fprintf(stderr, "%s: %d checks, %d failed\n", name, nsys_check_count, nsys_check_failures);
  return nsys_check_failures ? 1 : 0;
}

#endif
