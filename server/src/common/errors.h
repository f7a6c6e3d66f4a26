/* One table of every error the server can report: JSON-RPC code, CLI exit code
 * and default message. Application errors use -32000..-32099 (see
 * docs/protocol.md "Errors"); keep that table and this one in step. */
#ifndef NSYS_ERRORS_H
#define NSYS_ERRORS_H

/* X(enum name, JSON-RPC code, CLI exit code, default message) */
#define NSYS_ERROR_MAP(X)                                                              \
  X(NSYS_OK,                     0,      0, "ok")                                      \
  X(NSYS_E_PARSE,                -32700, 2, "parse error")                             \
  X(NSYS_E_INVALID_REQUEST,      -32600, 2, "invalid request")                         \
  X(NSYS_E_METHOD_NOT_FOUND,     -32601, 1, "method not found")                        \
  X(NSYS_E_INVALID_PARAMS,       -32602, 1, "invalid params")                          \
  X(NSYS_E_INTERNAL,             -32603, 2, "internal error")                          \
  X(NSYS_E_NOT_INITIALIZED,      -32002, 2, "server not initialized")                  \
  X(NSYS_E_CANCELLED,            -32800, 2, "request cancelled")                       \
  X(NSYS_E_FILE_NOT_FOUND,       -32001, 2, "profile file not found")                  \
  X(NSYS_E_NOT_SQLITE,           -32003, 2, "not a SQLite database")                   \
  X(NSYS_E_NOT_NSYS_EXPORT,      -32004, 2, "not an Nsight Systems export")            \
  X(NSYS_E_PROFILE_NOT_OPEN,     -32005, 2, "profile not open")                        \
  X(NSYS_E_NSYS_UNAVAILABLE,     -32006, 2, "nsys is not installed")                   \
  X(NSYS_E_EXPORT_FAILED,        -32007, 2, "nsys export failed")                      \
  X(NSYS_E_NOT_FOUND,            -32008, 2, "not found")                               \
  X(NSYS_E_DATA_MISSING,         -32009, 2, "the profile lacks the data for this")     \
  X(NSYS_E_UNKNOWN_ANALYSIS,     -32010, 1, "unknown analysis")                        \
  X(NSYS_E_OUTSIDE_WORKSPACE,    -32011, 2, "path outside the workspace root")         \
  X(NSYS_E_IO,                   -32012, 2, "I/O error")                               \
  X(NSYS_E_PROFILE_CHANGED,      -32013, 2, "profile changed on disk")                 \
  X(NSYS_E_LLM_NOT_CONFIGURED,   -32014, 2, "no LLM endpoint configured")              \
  X(NSYS_E_LLM,                  -32015, 2, "LLM request failed")                      \
  X(NSYS_E_CORRUPT,              -32016, 2, "profile database is corrupt")             \
  X(NSYS_E_SHUTTING_DOWN,        -32017, 2, "server is shutting down")

typedef enum {
#define NSYS__ERR_ENUM(name, rpc, exitcode, msg) name,
  NSYS_ERROR_MAP(NSYS__ERR_ENUM)
#undef NSYS__ERR_ENUM
  NSYS__ERR_COUNT
} nsys_err;

int nsys_err_rpc_code(nsys_err e);
int nsys_err_exit_code(nsys_err e);
const char *nsys_err_message(nsys_err e);
const char *nsys_err_name(nsys_err e);

#endif
