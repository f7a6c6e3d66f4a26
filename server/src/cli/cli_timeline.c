/* CLI commands of the timeline module. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_timeline[] = {
    {NULL, NULL, NULL, NULL},
};
