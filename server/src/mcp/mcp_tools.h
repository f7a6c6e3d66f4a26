/* The tools of `nsys-ai mcp` and of agent/ask's tool loop: each runs one
 * method of the method table (rpc/method_table.h) with params made from the
 * tool's arguments.
 *
 * The list comes from protocol/mcp_tools.json through protocol/gen.py
 * (mcp_tools.gen.h: names, descriptions, input and output schemas made from
 * the method schemas), plus one tool per analysis of the registry
 * (analysis_<name>, its params flattened into the arguments and typed as
 * analysis/list types them). Built once, immutable after: thread-safe. */
#ifndef NSYS_MCP_TOOLS_H
#define NSYS_MCP_TOOLS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "rpc/call.h"
#include "rpc/method_table.h"

typedef struct nsys_mcp_tool {
  const char *name;
  const nsys_method *method;
  const cJSON *def;      /* the tools/list entry: name, title?, description, inputSchema, outputSchema?, annotations */
  const cJSON *fixed;    /* params every call gets (object) */
  const cJSON *defaults; /* params a call gets unless its arguments give them (object) */
  const char *analysis;  /* analysis_<name> tools: the analysis; else NULL */
  bool agent;            /* offered to agent/ask's loop */
} nsys_mcp_tool;

/* Every tool, in list order; *n set. */
const nsys_mcp_tool *nsys_mcp_tools(size_t *n);
/* The tool called name, or NULL. */
const nsys_mcp_tool *nsys_mcp_tool_find(const char *name);

/* The method params of a call of t with arguments args (an object or NULL):
 * a new object, or NULL with a message in err when args is not an object. */
cJSON *nsys_mcp_tool_params(const nsys_mcp_tool *t, const cJSON *args, char *err, size_t errcap);

/* Runs t with args (the method's handler, on this thread) on a call that
 * shares task's cancel flag, and its progress sink when progress is true.
 * Returns the method's result,
 * or NULL with *code / msg (the method's JSON-RPC error code and message)
 * set; a cancelled task gives NULL with NSYS_E_CANCELLED's code. */
cJSON *nsys_mcp_tool_run(const nsys_mcp_tool *t, const cJSON *args, nsys_task *task, bool progress,
                         struct nsys_profile_registry *profiles, int *code, char *msg, size_t msgcap);

/* A short text rendering of a tool's result for a reader (MCP's text
 * content, the agent's tool messages): the result's own rendering when it has
 * one (report and explain: Markdown; analyses: their table), else its compact
 * JSON (exact integers), clipped to max bytes with a note saying so.
 * malloc'd. */
char *nsys_mcp_result_text(const nsys_mcp_tool *t, const cJSON *result, size_t max);

#endif
