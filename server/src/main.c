/* nsys-ai: one binary, both the CLI and the JSON-RPC server (`nsys-ai serve`). */
#include "cli/cli.h"

int main(int argc, char **argv) { return nsys_cli_main(argc, argv); }
