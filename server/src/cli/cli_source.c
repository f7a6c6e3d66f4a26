/* CLI commands of the source module. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_source[] = {
    {NULL, NULL, NULL, NULL},
};
