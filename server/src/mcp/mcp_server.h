/* `nsys-ai mcp`: a Model Context Protocol server over stdio.
 *
 * Transport (MCP 2025-06-18, "stdio"): one JSON-RPC 2.0 message per line on
 * stdin and stdout, UTF-8, no embedded newlines; logs go to stderr only.
 * Methods: initialize (protocol versions 2025-06-18, 2025-03-26, 2024-11-05),
 * ping, tools/list, tools/call; notifications: notifications/initialized,
 * notifications/cancelled (the call's cancel flag; a cancelled call gets no
 * reply), and notifications/progress sent for a call whose _meta carries a
 * progressToken. The tools are mcp/mcp_tools.h's, each running its method's
 * handler on libuv's thread pool with its own nsys_call, like `serve`.
 * Tool failures are results with isError (the method's error as text);
 * unknown tools and malformed calls are JSON-RPC errors. */
#ifndef NSYS_MCP_SERVER_H
#define NSYS_MCP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "rpc/server.h" /* nsys_log_level */

typedef struct nsys_mcp_options {
  nsys_log_level log_level;
  size_t max_line_bytes;  /* 0: 64 MiB; a longer line is answered -32700 and skipped */
  const char **profiles;  /* opened before serving (their ids go in `instructions`) */
  int n_profiles;
} nsys_mcp_options;

/* Serves until the end of stdin. Returns the process exit code: 0, or 2 when
 * a --profile could not be opened. */
int nsys_mcp_serve(const nsys_mcp_options *opt);

#endif
