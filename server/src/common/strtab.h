/* Interned string table: each distinct string gets a dense uint32 id. Used by
 * the index for kernel names, NVTX texts and API names. Not thread-safe while
 * being built; read-only (and so shareable) afterwards. */
#ifndef NSYS_STRTAB_H
#define NSYS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#define NSYS_STR_NONE UINT32_MAX

typedef struct nsys_strtab {
  char **strs;     /* id -> NUL-terminated string (owned) */
  uint32_t *lens;  /* id -> byte length */
  uint32_t count;
  uint32_t cap;
  uint32_t *slots; /* open-addressing hash: id+1, 0 = empty */
  uint32_t nslots;
} nsys_strtab;

void nsys_strtab_init(nsys_strtab *t);
void nsys_strtab_free(nsys_strtab *t);
/* Returns the id of s[0..n), adding a copy if new. */
uint32_t nsys_strtab_intern(nsys_strtab *t, const char *s, size_t n);
/* Returns the id or NSYS_STR_NONE when absent. */
uint32_t nsys_strtab_find(const nsys_strtab *t, const char *s, size_t n);
static inline const char *nsys_strtab_get(const nsys_strtab *t, uint32_t id) {
  return id < t->count ? t->strs[id] : "";
}

#endif
