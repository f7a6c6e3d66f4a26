/* Kernel <-> source mapping over the index. Strategies, each with a
 * confidence and evidence:
 *   trace      the file:line the profile recorded for the launching call:
 *              the OpenACC record (srcFile, lineNo) around it (0.95), else
 *              the innermost workspace frame of its nsys Python backtrace
 *              (0.95 on a launch line of the kernel, else 0.9)
 *   tag        innermost NVTX range whose text starts with "PATH:LINE" around
 *              the launching API call (0.95)
 *   callchain  CUDA_CALLCHAINS backtrace of the launch: first user frame,
 *              matched to a function definition in the workspace (0.6); a
 *              launch line of the kernel in its body that the profile's
 *              launch configuration allows confirms it (that line, 0.9)
 *   module     PyTorch module-path range "(a.b.layer)" -> `self.layer = ...`
 *              in the workspace (0.4 / candidates)
 *   definition every candidate definition of the kernel (source/candidates.h:
 *              CUDA, Triton, Inductor, Numba, CuPy, NVHPC, stdpar lambdas),
 *              ranked by the profile's own facts (0.9 when the only one)
 *   launch     the static launch lines of the chosen definition
 *              (NAME<<<...>>>, cudaLaunchKernel, NAME[grid](...), ...)
 * trace, tag, callchain and module are launch sites (at most one per kernel,
 * in that order of precedence); a definition is where the kernel's code lives. Native
 * callchain frames map only to native (C/C++/CUDA/Fortran) functions.
 * No JSON: the handlers are methods/source_map_methods.c. */
#ifndef NSYS_SOURCE_MAP_H
#define NSYS_SOURCE_MAP_H

#include <stdint.h>

#include "common/strtab.h"
#include "common/task.h"

struct nsys_profile;
struct nsys_index;
struct nsys_defs;

typedef enum {
  NSYS_SRC_TAG = 0, NSYS_SRC_CALLCHAIN, NSYS_SRC_MODULE, NSYS_SRC_DEFINITION, NSYS_SRC_LAUNCH,
  NSYS_SRC_TRACE,
  NSYS_SRC__COUNT
} nsys_src_strategy;

const char *nsys_src_strategy_name(nsys_src_strategy s);

typedef struct nsys_src_site {
  uint32_t file;      /* map strtab ("" when the site has no workspace file) */
  int line;           /* 1-based, 0 when unknown */
  int first_line, last_line; /* the span a hover answers on (definitions: the whole body) */
  uint8_t strategy;
  float confidence;
  uint32_t evidence;  /* map strtab */
  uint32_t label;     /* map strtab: tag text / symbol / definition kind */
  int launch;         /* callchain sites: the kernel's launch line that confirms the frame, 0 none */
  int frame_line;     /* callchain sites: the line of the frame's function */
  uint32_t n_ranges;  /* tag sites: NVTX ranges carrying this tag */
  int64_t range_ns;   /* tag sites: their total CPU duration */
} nsys_src_site;

typedef struct nsys_src_row { /* aggregate of one kernel name at one site */
  uint32_t site;
  uint32_t kname;     /* index strtab id of the kernel's short name */
  uint32_t count;
  int64_t total_ns;
  uint32_t first_op;
  uint32_t candidates; /* definition rows: how many candidate definitions the kernel has */
} nsys_src_row;

typedef struct nsys_src_line {
  uint32_t file;
  int line;
  int first_line, last_line; /* union of its sites' spans */
  uint32_t first, count; /* rows[first .. first+count) */
  int64_t total_ns;
  uint32_t kernels;
} nsys_src_line;

typedef struct nsys_src_group { /* the kernels of one name in one process */
  uint32_t fn, pid;   /* index strtab id of the demangled name; process */
  uint32_t first, count; /* their candidate definitions, then launch lines: group_sites[first ..) */
} nsys_src_group;

typedef struct nsys_src_map {
  char *root;                      /* realpath or "" */
  char key[96];                    /* profile identity */
  nsys_strtab strs;
  nsys_src_site *sites; uint32_t n_sites;
  int32_t *op_launch;              /* per op: launch site or -1 */
  int32_t *op_def;                 /* per op: definition site or -1 */
  nsys_src_row *rows; uint32_t n_rows;   /* sorted by (file, line, total desc) */
  nsys_src_line *lines; uint32_t n_lines; /* sorted by (file id, line) */
  nsys_src_group *groups; uint32_t n_groups; /* sorted by (fn, pid) */
  int32_t *group_sites;
  int64_t gpu_ns;                  /* total kernel time */
  uint32_t n_kernels;
  int64_t strategy_ns[NSYS_SRC__COUNT];  /* kernel time with an attribution of each kind */
  int callchain_offset;            /* 0 or 1: CUDA_CALLCHAINS.id = callchainId + offset; -1 none */
  int refs;
} nsys_src_map;

/* Builds the map (uncached). defs may be NULL (no workspace), p NULL (no
 * profile reads: no callchains, processes or launch configurations). NULL
 * after nsys_task_fail() (cancel / corrupt); task may be NULL. Reports
 * progress (0-100) on task. */
nsys_src_map *nsys_src_map_build(struct nsys_profile *p, const struct nsys_index *ix,
                                 struct nsys_defs *defs, nsys_task *task);
void nsys_src_map_free(nsys_src_map *m);

/* The group of GPU op `op` (a kernel), or NULL when it has none. */
const nsys_src_group *nsys_src_map_group(const nsys_src_map *m, const struct nsys_index *ix, uint32_t op);

/* Rows at file:line (file relative to the root, or absolute under it): the
 * entry of that line, else the nearest entry whose span holds the line (a
 * kernel's template line, signature continuation or body); NULL if none. */
const nsys_src_line *nsys_src_map_at(const nsys_src_map *m, const char *file, int line);

/* A share of GPU time as the source views write it: percent truncated to 0.01
 * (pctGpu in source/map, hover, refine coverage); 0 when whole is not positive. */
double nsys_src_pct(int64_t part, int64_t whole);

#endif
