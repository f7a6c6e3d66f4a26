/* nsys Python backtraces (--python-backtrace=cuda): the Python stack at each
 * CUDA API call, as NVTX marks (eventType 34) in the domain named
 * "Python Backtrace" whose extended payload (NVTX_EVENTS.binaryData, 2026
 * exports with --include-blobs) holds the frames:
 *   uint32 a; uint32 b; uint64 nFrames;
 *   nFrames x { uint64 functionNameId; uint64 fileNameId; uint64 lineNumber }
 * innermost frame first, ids into StringIds, little-endian. That layout was
 * verified for --python-sampling payloads (the same injection library) in
 * `-t json` exports; the SQLite column's encoding is not documented, so a
 * BLOB, hex text and base64 text are accepted and anything else is ignored.
 * No JSON. */
#ifndef NSYS_SOURCE_PYTHON_BACKTRACE_H
#define NSYS_SOURCE_PYTHON_BACKTRACE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/task.h"

struct nsys_profile;
struct nsys_index;
struct nsys_defs;

#define NSYS_PYBT_MAX_FRAMES 4096

typedef struct nsys_pybt_frame {
  int64_t func, file; /* StringIds ids */
  int64_t line;
} nsys_pybt_frame;

/* Decodes a payload of n bytes: its frames (at most cap written) and their
 * count. False when the bytes are not that layout (size, frame count). */
bool nsys_pybt_decode(const uint8_t *data, size_t n, nsys_pybt_frame *out, uint32_t cap, uint32_t *nframes);

/* A TEXT column's bytes: hex (optional 0x) or base64. malloc'd in *out (the
 * caller frees), false when the text is neither. */
bool nsys_pybt_text_bytes(const char *text, size_t n, uint8_t **out, size_t *outn);

/* The launching Python frame of a call: the innermost frame in a workspace
 * file (with a workspace), else the innermost outside installed packages
 * and the interpreter (site-packages, dist-packages, lib/pythonX, <frozen>). */
typedef struct nsys_pybt_site {
  int64_t file, func; /* StringIds ids; file 0: none */
  int line;
  uint32_t depth;     /* the frame's index, innermost 0 */
} nsys_pybt_site;

/* out[a] for every CUDA API call a of ix that launched a kernel: the
 * Python backtrace taken at it (a mark of the call's thread inside the call,
 * else the latest after the thread's previous CUDA call and before it).
 * Nothing when the export has no such marks. False after failing the task. */
bool nsys_python_backtraces(sqlite3 *db, struct nsys_profile *p, const struct nsys_index *ix,
                            const struct nsys_defs *defs, const char *root, nsys_pybt_site *out, nsys_task *task);

#endif
