/* SHA-256 (FIPS 180-4), for content-addressed cache keys. */
#ifndef NSYS_SHA256_H
#define NSYS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct nsys_sha256 {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t fill;
} nsys_sha256;

void nsys_sha256_init(nsys_sha256 *s);
void nsys_sha256_update(nsys_sha256 *s, const void *data, size_t n);
void nsys_sha256_final(nsys_sha256 *s, uint8_t out[32]);
/* Lower-case hex digest of data (65 bytes with the NUL). */
void nsys_sha256_hex(const void *data, size_t n, char out[65]);

#endif
