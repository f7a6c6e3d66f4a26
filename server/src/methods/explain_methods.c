/* JSON-RPC handlers for the explain module: params -> core call -> JSON. */
#include "rpc/method_table.h"

const nsys_method nsys_methods_explain[] = {
    {NULL, NULL, 0},
};
