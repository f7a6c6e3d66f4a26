/* CLI commands of the profile module. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_profile[] = {
    {NULL, NULL, NULL, NULL},
};
