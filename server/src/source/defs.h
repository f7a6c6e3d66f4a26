/* The workspace definition index: where kernels, functions, classes and
 * module attributes are defined in a workspace, where kernels are launched,
 * where OpenACC/OpenMP compute constructs are, and which build lines name
 * which sources, found by a bounded walk of the root (skipping .git,
 * node_modules, build*, virtualenvs, caches) and a light textual scan of each
 * file. Cached per root in memory (rebuilt when older than a few seconds).
 * No JSON. */
#ifndef NSYS_DEFS_H
#define NSYS_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"

struct nsys_task;

typedef enum {
  NSYS_DEF_CUDA_GLOBAL = 0, /* __global__ function in .cu/.cuh/.cpp/.h */
  NSYS_DEF_TRITON,          /* @triton.jit def */
  NSYS_DEF_INDUCTOR,        /* torch.compile output: async_compile.triton('NAME', ...) */
  NSYS_DEF_C_FUNC,          /* C/C++ function definition (host code) */
  NSYS_DEF_PY_DEF,          /* Python def */
  NSYS_DEF_PY_CLASS,        /* Python class */
  NSYS_DEF_PY_ATTR,         /* self.NAME = ... (nn.Module attributes) */
  NSYS_DEF_PY_MODULE,       /* self.x = nn.CLASS(...): name is CLASS (e.g. "Linear") */
  NSYS_DEF_NUMBA,           /* @cuda.jit def (Numba) */
  NSYS_DEF_CUPY,            /* CuPy: __global__ in a Python string, or the name of a
                               RawKernel / ElementwiseKernel / ReductionKernel */
  NSYS_DEF_LAUNCH,          /* a launch line: NAME<<<...>>>, cudaLaunchKernel(NAME,
                               NAME[grid](...), cuModuleGetFunction(.., "NAME"),
                               torch.ops.NS.NAME(...); aux = the launch text
                               ("<<<grid, block, ...>>>", "cudaLaunchKernel(...)",
                               "[grid](", "((grid,), ...", "torch.ops.NS.NAME") */
  NSYS_DEF_PRAGMA,          /* OpenACC/OpenMP compute construct (#pragma acc parallel|
                               kernels|serial, omp target; !$acc/!$omp); name = enclosing
                               function (lower case for Fortran), aux = the directive,
                               last_line = the loop right after it (else line) */
  NSYS_DEF__COUNT
} nsys_def_kind;

typedef struct nsys_def {
  uint32_t name;  /* strtab */
  uint32_t file;  /* strtab: path relative to the root */
  int line;       /* 1-based: the line naming it (kernel name, launch, directive) */
  int first_line; /* the definition's span, for hovers: decorators and template */
  int last_line;  /*   lines to the closing brace / end of the body (== line when unknown) */
  uint8_t kind;
  uint32_t aux;   /* strtab: launch text / directive / "" */
} nsys_def;

/* A line of a build file (Makefile, CMakeLists.txt, *.mk, *.cmake, *.sh)
 * that names sources: which executable was built from which files. */
typedef struct nsys_build_line {
  uint32_t file;  /* strtab */
  int line;
  uint32_t text;  /* strtab */
} nsys_build_line;

typedef struct nsys_defs {
  char *root;           /* realpath */
  nsys_strtab strs;
  nsys_def *v; uint32_t n;   /* sorted by (name, kind, file, line) */
  uint32_t n_files;
  nsys_build_line *builds; uint32_t n_builds;
  int64_t built_ns;
  int refs;             /* cache bookkeeping */
} nsys_defs;

const char *nsys_def_kind_name(nsys_def_kind k);

/* Returns the definition index of `root` (a realpath), building it if needed;
 * release with nsys_defs_release(). */
nsys_defs *nsys_defs_get(const char *root, struct nsys_task *task);
void nsys_defs_release(nsys_defs *d);
/* Uncached build, for tests. NULL only when `task` was cancelled (then
 * nsys_task_fail_cancelled() was called). */
nsys_defs *nsys_defs_build(const char *root, struct nsys_task *task);
void nsys_defs_free(nsys_defs *d);

/* Definitions named `name` (exact); returns the first index and sets *count. */
uint32_t nsys_defs_find(const nsys_defs *d, const char *name, uint32_t *count);

/* The bare function name of a (demangled) kernel or symbol name:
 * "void at::native::foo<4, F>(int, F)" -> "foo", "init_array(double*)" ->
 * "init_array", "triton_poi_fused_add_0" -> itself. */
void nsys_symbol_base_name(const char *sym, char *out, size_t cap);

/* The name a kernel is defined under: the base name after removing Numba's
 * "$241" and "[abi:v1,...]" decorations; for Numba names also the module
 * ("cudapy::pkg.mod::axpy$241(...)" -> "pkg.mod") in *module (may be ""). */
void nsys_kernel_def_name(const char *sym, char *out, size_t cap, char *module, size_t mcap);

/* NVHPC compiler-generated kernel names: "main_53_gpu", "main_53_gpu__red",
 * "nvkernel_solve_F1L204_2" -> function and source line. */
bool nsys_nvhpc_kernel(const char *name, char *func, size_t cap, int *line);

/* The function enclosing a lambda in a demangled name (stdpar, Thrust, CUB):
 * "... saxpy(int, float*)::{lambda(int)#1} ..." -> "saxpy". */
bool nsys_lambda_parent(const char *sym, char *out, size_t cap);

/* Triton kernels may carry a specialisation suffix ("add_kernel_0d1d2de"):
 * writes the name without it and returns 1, or returns 0 when there is none. */
int nsys_triton_strip_suffix(const char *name, char *out, size_t cap);

#endif
