/* JSON-RPC handlers for the timeline module: params -> core call -> JSON. */
#include "rpc/method_table.h"

const nsys_method nsys_methods_timeline[] = {
    {NULL, NULL, 0},
};
