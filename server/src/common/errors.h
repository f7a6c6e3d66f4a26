/* Every error the server can report: JSON-RPC code, CLI exit code and default
 * message. The table is protocol/errors.json (also the clients' codes and
 * docs/protocol.md's table); protocol/gen.py writes it as NSYS_ERROR_MAP. */
#ifndef NSYS_ERRORS_H
#define NSYS_ERRORS_H

#include "common/error_list.gen.h" /* NSYS_ERROR_MAP(X): X(enum name, JSON-RPC code, CLI exit code, default message) */

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
