#include "common/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static uint64_t nsys__hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void nsys_strtab_init(nsys_strtab *t) { memset(t, 0, sizeof *t); }

void nsys_strtab_free(nsys_strtab *t) {
  for (uint32_t i = 0; i < t->count; i++) free(t->strs[i]);
  free(t->strs);
  free(t->lens);
  free(t->slots);
  memset(t, 0, sizeof *t);
}

static uint32_t nsys__probe(const nsys_strtab *t, const char *s, size_t n, uint64_t h) {
  uint32_t mask = t->nslots - 1;
  uint32_t i = (uint32_t)h & mask;
  for (;;) {
    uint32_t v = t->slots[i];
    if (v == 0) return i;
    uint32_t id = v - 1;
    if (t->lens[id] == n && memcmp(t->strs[id], s, n) == 0) return i;
    i = (i + 1) & mask;
  }
}

static void nsys__rehash(nsys_strtab *t, uint32_t nslots) {
  free(t->slots);
  t->slots = nsys_xcalloc(nslots, sizeof(uint32_t));
  t->nslots = nslots;
  for (uint32_t id = 0; id < t->count; id++) {
    uint32_t i = nsys__probe(t, t->strs[id], t->lens[id], nsys__hash(t->strs[id], t->lens[id]));
    t->slots[i] = id + 1;
  }
}

uint32_t nsys_strtab_find(const nsys_strtab *t, const char *s, size_t n) {
  if (!t->nslots) return NSYS_STR_NONE;
  uint32_t i = nsys__probe(t, s, n, nsys__hash(s, n));
  return t->slots[i] ? t->slots[i] - 1 : NSYS_STR_NONE;
}

uint32_t nsys_strtab_intern(nsys_strtab *t, const char *s, size_t n) {
  if ((uint64_t)(t->count + 1) * 2 > t->nslots) nsys__rehash(t, t->nslots ? t->nslots * 2 : 256);
  uint64_t h = nsys__hash(s, n);
  uint32_t i = nsys__probe(t, s, n, h);
  if (t->slots[i]) return t->slots[i] - 1;
  if (t->count == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 256;
    t->strs = nsys_xrealloc(t->strs, t->cap * sizeof(char *));
    t->lens = nsys_xrealloc(t->lens, t->cap * sizeof(uint32_t));
  }
  uint32_t id = t->count++;
  t->strs[id] = nsys_xstrndup(s, n);
  t->lens[id] = (uint32_t)n;
  t->slots[i] = id + 1;
  return id;
}
