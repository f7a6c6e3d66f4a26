/* UTF-8 validation and repair. Profiles are untrusted: every string that
 * leaves the server passes through nsys_utf8_sanitize first. */
#ifndef NSYS_UTF8_H
#define NSYS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool nsys_utf8_valid(const char *s, size_t n);

/* Returns a malloc'd, NUL-terminated, valid UTF-8 copy of s[0..n). Invalid
 * bytes are decoded as Latin-1 / Windows-1252 (what Windows exports hold) so
 * "Gr\xfc\xdfe" becomes "Grüße" rather than U+FFFD noise. Embedded NULs
 * become U+FFFD. */
char *nsys_utf8_sanitize(const char *s, size_t n);

#endif
