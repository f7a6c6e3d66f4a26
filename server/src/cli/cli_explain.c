/* CLI commands of the explain module. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_explain[] = {
    {NULL, NULL, NULL, NULL},
};
