/* CLI commands of the server: `nsys-ai serve`. */
#include "cli/cli.h"

const nsys_cli_command nsys_cli_server[] = {
    {NULL, NULL, NULL, NULL},
};
