#include "common/errors.h"

static const struct {
  const char *name;
  int rpc;
  int exitcode;
  const char *msg;
} nsys__errors[] = {
#define NSYS__ERR_ROW(name, rpc, exitcode, msg) {#name, rpc, exitcode, msg},
    NSYS_ERROR_MAP(NSYS__ERR_ROW)
#undef NSYS__ERR_ROW
};

static int nsys__valid(nsys_err e) { return (int)e >= 0 && e < NSYS__ERR_COUNT; }

int nsys_err_rpc_code(nsys_err e) { return nsys__valid(e) ? nsys__errors[e].rpc : -32603; }
int nsys_err_exit_code(nsys_err e) { return nsys__valid(e) ? nsys__errors[e].exitcode : 2; }
const char *nsys_err_message(nsys_err e) { return nsys__valid(e) ? nsys__errors[e].msg : "internal error"; }
const char *nsys_err_name(nsys_err e) { return nsys__valid(e) ? nsys__errors[e].name : "NSYS_E_INTERNAL"; }
