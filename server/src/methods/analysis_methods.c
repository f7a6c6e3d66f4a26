/* JSON-RPC handlers for the analysis module: params -> core call -> JSON. */
#include "rpc/method_table.h"

const nsys_method nsys_methods_analysis[] = {
    {NULL, NULL, 0},
};
