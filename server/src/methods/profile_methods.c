/* JSON-RPC handlers for the profile module: params -> core call -> JSON. */
#include "rpc/method_table.h"

const nsys_method nsys_methods_profile[] = {
    {NULL, NULL, 0},
};
