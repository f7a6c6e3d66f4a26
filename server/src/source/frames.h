/* A frame of the launching call's backtrace, resolved against the
 * workspace: a native frame (CUDA_CALLCHAINS: a function symbol and its
 * module, no line) or a Python frame (nsys Python backtraces: file and line).
 * A frame whose function holds a static launch line of the kernel (or that
 * sits on one) is confirmed by it: both say the same call. No JSON, no
 * profile access. */
#ifndef NSYS_SOURCE_FRAMES_H
#define NSYS_SOURCE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/defs.h"

typedef struct nsys_frame_site {
  uint32_t file;        /* defs strtab, 0 when the frame names no workspace file */
  int line;             /* the launch line when confirmed by exactly one, else the frame's line */
  int launch;           /* > 0: the kernel's launch line that confirms the frame */
  int func_line;        /* native frames: the line of the frame's function */
  float confidence;
  char evidence[400];   /* what resolved it, appended to the caller's "backtrace of ..." */
} nsys_frame_site;

/* Native frame: function `func` (bare name) of `module` (the binary's path,
 * may be NULL) launched kernel `kbase` (bare name). Only C/C++/CUDA/Fortran
 * functions are candidates, never a Python def of the same name. Returns
 * false when the workspace has no such function. */
bool nsys_native_frame_site(const nsys_defs *d, const char *func, const char *module, const char *kbase,
                            nsys_frame_site *out);

/* Python frame `file`:`line` (relative to the workspace root) launched
 * kernel `kbase`. Returns false when `file` is not a workspace file. */
bool nsys_python_frame_site(const nsys_defs *d, const char *file, int line, const char *kbase,
                            nsys_frame_site *out);

#endif
