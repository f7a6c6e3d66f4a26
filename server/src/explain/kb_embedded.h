/* The knowledge-base files embedded at build time by embed_kb.py. */
#ifndef NSYS_KB_EMBEDDED_H
#define NSYS_KB_EMBEDDED_H

#include <stddef.h>

typedef struct nsys_kb_file {
  const char *name;
  const unsigned char *data;
  size_t len;
} nsys_kb_file;

extern const nsys_kb_file nsys_kb_embedded_files[];
extern const size_t nsys_kb_embedded_count;

#endif
