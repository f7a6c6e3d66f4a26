/* `nsys-ai serve`: JSON-RPC 2.0 over stdin/stdout with LSP framing.
 *
 * One libuv loop owns the transport, the lifecycle and the bookkeeping of
 * in-flight requests. Every method without NSYS_METHOD_INLINE runs on libuv's
 * thread pool with its own nsys_call, so replies may come out of order; the
 * loop thread never touches SQLite. Each request is answered exactly once.
 * See docs/protocol.md, "Transport and lifecycle". */
#ifndef NSYS_SERVER_H
#define NSYS_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "rpc/method_table.h"

typedef enum {
  NSYS_LOG_ERROR = 0,
  NSYS_LOG_WARN = 1,
  NSYS_LOG_INFO = 2,
  NSYS_LOG_DEBUG = 3,
} nsys_log_level;

typedef struct nsys_serve_options {
  size_t max_frame_bytes; /* 0: NSYS_FRAME_DEFAULT_MAX (64 MiB) */
  nsys_log_level log_level;
  bool test_methods; /* register the hidden test/... methods */
} nsys_serve_options;

/* Parses "error|warn|info|debug"; false on anything else. */
bool nsys_log_level_parse(const char *s, nsys_log_level *out);

/* Serves until `exit` or the end of stdin. Returns the process exit code:
 * 0 after shutdown, 1 otherwise (exit or EOF without shutdown), 2 when the
 * transport could not be set up. */
int nsys_serve(const nsys_serve_options *opt);

/* Hidden methods for the protocol tests (rpc/test_methods.c; flagged testOnly
 * in protocol/methods.json), enabled by `serve --test-methods` or
 * NSYS_AI_TEST_METHODS=1; never listed in capabilities:
 *   test/sleep {ms, workDoneToken?}: sleeps, polling the cancel flag every
 *       millisecond and reporting progress; returns {sleptMs}.
 *   test/echo: returns its params (null when absent).
 *   test/noResult: returns no result and records no error, which the server
 *       must turn into -32603 (the exactly-once guard). */

#endif
