/* JSON-RPC handlers for the source module: params -> core call -> JSON. */
#include "rpc/method_table.h"

const nsys_method nsys_methods_source[] = {
    {NULL, NULL, 0},
};
