/* nsys_icontains (analysis/common.c) against its definition, strncasecmp at
 * every position of the haystack (C locale): random strings over an alphabet
 * of case pairs, digits, punctuation and bytes >= 0x80, needles cut from the
 * haystack (with flipped case) or random, empty needles and haystacks,
 * needles longer than the haystack, a match at the very end, NULLs. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/analysis.h"
#include "../common/nsys_check.h"

static bool ref(const char *hay, const char *needle) {
  if (!hay || !needle) return false;
  size_t n = strlen(needle);
  if (!n) return true;
  for (const char *p = hay; *p; p++)
    if (strncasecmp(p, needle, n) == 0) return true;
  return false;
}

static uint64_t rng_state = 0x1234567887654321ULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

int main(void) {
  static const char alpha[] = "aAbBzZ09_[`@{~ \xc3\xa9\x80\xff";
  char hay[64], needle[64];
  int mismatches = 0;
  for (int iter = 0; iter < 200000; iter++) {
    size_t hn = rnd() % 24, nn = rnd() % 6;
    for (size_t i = 0; i < hn; i++) hay[i] = alpha[rnd() % (sizeof alpha - 1)];
    hay[hn] = '\0';
    if (hn && rnd() % 2) { /* a cut of the haystack, case flipped at random */
      size_t at = rnd() % hn, len = 1 + rnd() % (hn - at);
      for (size_t i = 0; i < len; i++) {
        char ch = hay[at + i];
        if (rnd() % 2 && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) ch ^= 0x20;
        needle[i] = ch;
      }
      nn = len;
    } else {
      for (size_t i = 0; i < nn; i++) needle[i] = alpha[rnd() % (sizeof alpha - 1)];
    }
    needle[nn] = '\0';
    if (nsys_icontains(hay, needle) != ref(hay, needle) && mismatches++ < 5)
      CHECK_MSG(false, "hay \"%s\" needle \"%s\": %d, strncasecmp says %d", hay, needle,
                nsys_icontains(hay, needle), ref(hay, needle));
  }
  CHECK_EQ(mismatches, 0);
  CHECK(nsys_icontains("", ""));
  CHECK(!nsys_icontains("", "a"));
  CHECK(nsys_icontains("MmBackward0", "backward"));
  CHECK(nsys_icontains("xxFWD", "fwd"));       /* at the very end */
  CHECK(!nsys_icontains("xxFW", "fwd"));       /* the haystack ends inside the needle */
  CHECK(!nsys_icontains("ab", "abc"));
  CHECK(!nsys_icontains("[", "{"));            /* not letters: no folding */
  CHECK(!nsys_icontains(NULL, "a"));
  CHECK(!nsys_icontains("a", NULL));
  return nsys_check_done("icontains");
}
