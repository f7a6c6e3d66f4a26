/* Where a kernel's code is: every candidate definition in the workspace, with
 * the evidence for and against each, ranked by what the profile itself says
 * (the process's executable and the build lines that make it, the launch
 * configuration and stream use against each candidate's <<<...>>>, the
 * Numba module, the file of the native frame that launched it, the sibling
 * kernels of the same process). Families: CUDA __global__, Triton, Inductor,
 * Numba, CuPy, NVHPC OpenACC/OpenMP names (function + line), stdpar/Thrust
 * lambdas (the enclosing function). Also the static launch lines of a
 * kernel. No JSON, no profile access: the caller gathers the facts. */
#ifndef NSYS_SOURCE_CANDIDATES_H
#define NSYS_SOURCE_CANDIDATES_H

#include <stdbool.h>
#include <stdint.h>

#include "source/defs.h"

#define NSYS_CAND_MAX 16

typedef struct nsys_src_cand {
  uint32_t file;       /* defs strtab */
  int line, first_line, last_line;
  uint8_t kind;        /* nsys_def_kind of the definition */
  float confidence;
  int score;           /* evidence for (higher is better) */
  bool contradicted;   /* the profile rules it out */
  char evidence[480];
} nsys_src_cand;

typedef struct nsys_kernel_facts {
  const char *name;            /* demangled kernel name */
  const char *exe;             /* the process's name (path or basename), or NULL */
  const char *exe_alt;         /* its main thread's name, or NULL: a process that a shell
                                  exec'd keeps the shell's name in PROCESSES, its main
                                  thread is named after the program */
  uint32_t n_streams;          /* distinct streams the kernel ran on in this process */
  const int32_t (*configs)[6]; /* distinct (gridX, gridY, gridZ, blockX, blockY, blockZ) */
  uint32_t n_configs;          /* 0: unknown */
  const char *callchain_file;  /* workspace file of the frame that launched it (native backtrace,
                                  Python backtrace), or NULL */
  int callchain_launch;        /* > 0: that frame is at, or its function holds, this launch line
                                  of the kernel in callchain_file (the backtrace confirms it) */
  /* the build lines (indices into defs->builds) naming the executable, from
   * nsys_exe_build_lines(); NULL: every build line is checked */
  const uint32_t *exe_builds;
  uint32_t n_exe_builds;
  /* other kernels of the same process with a candidate in `file` (NULL: unknown) */
  uint32_t (*siblings)(void *ctx, uint32_t file);
  void *siblings_ctx;
} nsys_kernel_facts;

/* How well an executable's name (a path or basename: a process, a
 * callchain frame's module) names the source `file`: 3 the same stem
 * ("add_gpu_4" / "dir/add_gpu_4.cu"), 2 the file's stem is one of its
 * '_'/'-'/'.'-separated words ("vecadd_ex1" / "ex1.cu"), 0 neither. */
int nsys_exe_names_file(const char *exe, const char *file);

/* The build lines naming `exe` (its basename, as a word): a malloc'd array
 * of indices into d->builds (NULL when none); *n receives the count. */
uint32_t *nsys_exe_build_lines(const nsys_defs *d, const char *exe, uint32_t *n);

/* Candidate definitions of a kernel, best first (at most NSYS_CAND_MAX).
 * Returns how many; 0 when the workspace has none. `family` (may be NULL)
 * receives a short word naming how the name was read ("name", "nvhpc",
 * "lambda", "numba"). */
uint32_t nsys_kernel_candidates(const nsys_defs *d, const nsys_kernel_facts *f, nsys_src_cand *out,
                                const char **family);

/* Whether the profile rules out the kernel's launch line(s) at file:line
 * (a path relative to the root): their literal configuration or stream use
 * does not match; *why says how. */
bool nsys_launch_refuted(const nsys_defs *d, const nsys_kernel_facts *f, const char *file, int line, char *why,
                         size_t cap);

/* Launch lines of the kernel whose chosen definition is `def` (a candidate
 * from nsys_kernel_candidates): launches in the definition's file, else in
 * files the executable's build lines name, else (the definition being the
 * only candidate) anywhere. Launches whose literal configuration or stream
 * use the profile contradicts are left out. Returns how many (<= cap). */
uint32_t nsys_kernel_launches(const nsys_defs *d, const nsys_kernel_facts *f, const nsys_src_cand *def,
                              uint32_t n_cands, nsys_src_cand *out, uint32_t cap);

#endif
