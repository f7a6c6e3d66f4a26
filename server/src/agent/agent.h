/* agent/ask: picks the analyses relevant to a question (keyword routing),
 * runs them over the index, and answers with the numbers. Without an LLM
 * the answer is a deterministic evidence summary; with one, the LLM writes
 * the answer from the same evidence (kernel names, statistics, knowledge-
 * base facts only) and, calling the MCP tools in a loop (mcp/agent_loop.h)
 * until it answers or a budget runs out; the evidence is appended. */
#ifndef NSYS_AGENT_H
#define NSYS_AGENT_H

#include <cjson/cJSON.h>

#include "agent/llm.h"
#include "index/index.h"
#include "rpc/call.h"

struct nsys_profile;

/* Returns the agent/ask result, or NULL after nsys_call_fail(). cfg is NULL
 * for the evidence-only answer. */
cJSON *nsys_agent_ask(nsys_call *call, struct nsys_profile *p, const nsys_index *ix, const char *question,
                      const nsys_llm_config *cfg);

#endif
