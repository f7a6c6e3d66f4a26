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
 *   nsys_check_skip(...)    a part of the test cannot run (e.g. the real
 *                           profiles are absent): prints "SKIP <why>", and the
 *                           test exits 77 (meson's SKIP) unless a check failed
 *
 * Each argument is evaluated once; a message's arguments only on failure. */
#ifndef NSYS_CHECK_H
#define NSYS_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int nsys_check_failures;
static int nsys_check_count;
static int nsys_check_skips;

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

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline void nsys_check_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("SKIP ", stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  nsys_check_skips++;
}

/* 1 when a check failed, else 77 (meson: SKIP) when a part was skipped, else 0. */
static inline int nsys_check_done(const char *name) {
  fprintf(stderr, "%s: %d checks, %d failed, %d parts skipped\n", name, nsys_check_count,
          nsys_check_failures, nsys_check_skips);
  return nsys_check_failures ? 1 : nsys_check_skips ? 77 : 0;
}

#endif
