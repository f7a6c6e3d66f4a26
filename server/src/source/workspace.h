/* Workspace paths: every file the source module reads must resolve (after
 * symlinks, via realpath) inside the workspace root. No JSON here. */
#ifndef NSYS_WORKSPACE_H
#define NSYS_WORKSPACE_H

#include <stddef.h>

#include "common/errors.h"

/* Resolves `file` (absolute, or relative to `root`) inside `root`. On success
 * returns NSYS_OK and sets *abs_out (realpath of the file), *rel_out (path
 * relative to the root's realpath, '/'-separated) and *root_out (realpath of
 * the root); the caller frees all three. Errors: NSYS_E_OUTSIDE_WORKSPACE,
 * NSYS_E_IO (missing / not a regular file / unreadable root), with a message
 * in err. */
nsys_err nsys_ws_resolve(const char *root, const char *file, char **abs_out, char **rel_out,
                         char **root_out, char *err, size_t errcap);

/* `path` as written, made relative to `root` when it is absolute under it
 * ("./x" -> "x"); a pointer into path. */
const char *nsys_ws_relative(const char *root, const char *path);

/* Reads a whole regular file (at most max_bytes). Returns NULL with errno-based
 * message in err on failure. */
char *nsys_ws_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errcap);

/* Writes `data` to `path` atomically (temporary file + rename), keeping the
 * file's mode. Returns 0 or -1 with a message in err. */
int nsys_ws_write_file(const char *path, const char *data, size_t len, char *err, size_t errcap);

#endif
