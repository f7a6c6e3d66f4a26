/* The workspace definition index: where kernels, functions, classes and
 * module attributes are defined in a workspace, found by a bounded walk of
 * the root (skipping .git, node_modules, build*, virtualenvs, caches) and a
 * light textual scan of each file. Cached per root in memory (rebuilt when
 * older than a few seconds). No JSON. */
#ifndef NSYS_DEFS_H
#define NSYS_DEFS_H

#include <stdint.h>

#include "common/strtab.h"

typedef enum {
  NSYS_DEF_CUDA_GLOBAL = 0, /* __global__ function in .cu/.cuh/.cpp/.h */
  NSYS_DEF_TRITON,          /* @triton.jit def */
  NSYS_DEF_INDUCTOR,        /* torch.compile output: async_compile.triton('NAME', ...) */
  NSYS_DEF_C_FUNC,          /* C/C++ function definition (host code) */
  NSYS_DEF_PY_DEF,          /* Python def */
  NSYS_DEF_PY_CLASS,        /* Python class */
  NSYS_DEF_PY_ATTR,         /* self.NAME = ... (nn.Module attributes) */
  NSYS_DEF_PY_MODULE,       /* self.x = nn.CLASS(...): name is CLASS (e.g. "Linear") */
  NSYS_DEF__COUNT
} nsys_def_kind;

typedef struct nsys_def {
  uint32_t name;  /* strtab */
  uint32_t file;  /* strtab: path relative to the root */
  int line;       /* 1-based */
  uint8_t kind;
} nsys_def;

typedef struct nsys_defs {
  char *root;           /* realpath */
  nsys_strtab strs;
  nsys_def *v; uint32_t n;   /* sorted by (name, kind, file, line) */
  uint32_t n_files;
  int64_t built_ns;
  int refs;             /* cache bookkeeping */
} nsys_defs;

const char *nsys_def_kind_name(nsys_def_kind k);

/* Returns the definition index of `root` (a realpath), building it if needed;
 * release with nsys_defs_release(). */
nsys_defs *nsys_defs_get(const char *root);
void nsys_defs_release(nsys_defs *d);
/* Uncached build, for tests. */
nsys_defs *nsys_defs_build(const char *root);
void nsys_defs_free(nsys_defs *d);

/* Definitions named `name` (exact); returns the first index and sets *count. */
uint32_t nsys_defs_find(const nsys_defs *d, const char *name, uint32_t *count);

/* The bare function name of a (demangled) kernel or symbol name:
 * "void at::native::foo<4, F>(int, F)" -> "foo", "init_array(double*)" ->
 * "init_array", "triton_poi_fused_add_0" -> itself. */
void nsys_symbol_base_name(const char *sym, char *out, size_t cap);

/* Triton kernels may carry a specialisation suffix ("add_kernel_0d1d2de"):
 * writes the name without it and returns 1, or returns 0 when there is none. */
int nsys_triton_strip_suffix(const char *name, char *out, size_t cap);

#endif
