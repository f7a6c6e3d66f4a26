/* agent/ask's tool loop: the model is given the question, the evidence
 * bundle and the MCP tools (mcp/mcp_tools.h, those flagged for the agent);
 * each turn it either answers or calls tools, which run here, in process,
 * on the asked profile, until it answers or a budget runs out.
 *
 * Dialects: OpenAI-compatible chat completions (`tools`, `tool_calls`,
 * role "tool" messages) and the Anthropic messages API (`tools`,
 * `tool_use` / `tool_result` blocks). A malformed tool call (unknown tool,
 * arguments that are not a JSON object) and a tool's error go back to the
 * model as an error result, so it can correct itself; a reply that is not
 * of the dialect's shape is -32015. Budgets: params maxTurns, maxTokens,
 * maxSeconds of agent/ask. */
#ifndef NSYS_AGENT_LOOP_H
#define NSYS_AGENT_LOOP_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "agent/llm.h"
#include "rpc/call.h"

/* Checks agent/ask's budget params (maxTurns, maxTokens, maxSeconds) in
 * every mode; false after nsys_call_fail() (-32602). */
bool nsys_agent_loop_check(nsys_call *call);

/* Runs the loop for the profile profile_id. On success returns the answer
 * text (malloc'd) and fills llm_out (the agent/ask result's "llm" object) with
 * turns, stopReason, usage and toolCalls; NULL after nsys_call_fail()
 * (-32602 bad budgets, -32015, -32800). */
char *nsys_agent_loop(nsys_call *call, const nsys_llm_config *cfg, const char *profile_id, const char *system,
                      const char *user, cJSON *llm_out);

#endif
