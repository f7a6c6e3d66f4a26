/* CLI commands of the analysis module. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_analysis[] = {
    {NULL, NULL, NULL, NULL},
};
