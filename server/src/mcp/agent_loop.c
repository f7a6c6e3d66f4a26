/* agent/ask's tool loop (see agent_loop.h). */
#include "mcp/agent_loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/param_specs.gen.h"
#include "common/util.h"
#include "mcp/mcp_tools.h"
#include "rpc/json_int.h"
#include "rpc/params.h"

#define NSYS__AGENT_TOOL_TEXT 16384 /* bytes of a tool result the model reads */
#define NSYS__AGENT_CALLS_PER_TURN 16
#define NSYS__AGENT_MAX_OUTPUT 4096 /* max_tokens of one model request */

typedef struct {
  nsys_call *call;
  const nsys_llm_config *cfg;
  bool anthropic;
  const char *profile_id;
  cJSON *messages; /* the conversation, in the dialect */
  cJSON *calls;    /* toolCalls of the result */
  int turn;
  int n_calls;
} nsys__agent;

static const cJSON *nsys__g(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* The tools in the dialect's shape. */
static cJSON *nsys__agent_tools(bool anthropic) {
  size_t n;
  const nsys_mcp_tool *t = nsys_mcp_tools(&n);
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) {
    if (!t[i].agent) continue;
    const cJSON *d = t[i].def;
    cJSON *o = cJSON_CreateObject();
    cJSON *f = o;
    if (!anthropic) {
      cJSON_AddStringToObject(o, "type", "function");
      f = cJSON_AddObjectToObject(o, "function");
    }
    cJSON_AddStringToObject(f, "name", t[i].name);
    cJSON_AddStringToObject(f, "description", nsys__g(d, "description")->valuestring);
    cJSON_AddItemToObject(f, anthropic ? "input_schema" : "parameters", cJSON_Duplicate(nsys__g(d, "inputSchema"), true));
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* Runs one call the model asked for and records it; returns the text the
 * model gets back and sets *is_error. NULL when the request was cancelled. */
static char *nsys__agent_run(nsys__agent *a, const char *id, const char *name, const cJSON *args_json,
                             const char *args_text, bool *is_error) {
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddNumberToObject(rec, "turn", a->turn);
  if (id) cJSON_AddStringToObject(rec, "id", id);
  cJSON_AddStringToObject(rec, "tool", name ? name : "");
  if (args_json) cJSON_AddItemToObject(rec, "arguments", cJSON_Duplicate(args_json, true));
  else cJSON_AddStringToObject(rec, "arguments", args_text ? args_text : "");
  cJSON_AddItemToArray(a->calls, rec);
  a->n_calls++;
  const nsys_mcp_tool *t = name ? nsys_mcp_tool_find(name) : NULL;
  int code = 0;
  char msg[600] = "";
  cJSON *res = NULL;
  if (!t || !t->agent) {
    code = nsys_err_rpc_code(NSYS_E_INVALID_PARAMS);
    snprintf(msg, sizeof msg, "unknown tool '%.100s': call one of the tools listed", name ? name : "");
  } else if (!cJSON_IsObject(args_json)) {
    code = nsys_err_rpc_code(NSYS_E_INVALID_PARAMS);
    snprintf(msg, sizeof msg, "the arguments of %s are not a JSON object", name);
  } else {
    cJSON *args = cJSON_Duplicate(args_json, true);
    const cJSON *props = nsys__g(nsys__g(t->def, "inputSchema"), "properties");
    if (nsys__g(props, "profileId") && !nsys__g(args, "profileId"))
      cJSON_AddStringToObject(args, "profileId", a->profile_id);
    res = nsys_mcp_tool_run(t, args, &a->call->task, false, a->call->profiles, &code, msg, sizeof msg);
    cJSON_Delete(args);
    if (!res && nsys_call_cancelled(a->call)) return NULL;
  }
  *is_error = res == NULL;
  cJSON_AddBoolToObject(rec, "isError", *is_error);
  char *text;
  if (res) {
    text = nsys_mcp_result_text(t, res, NSYS__AGENT_TOOL_TEXT);
    cJSON_AddItemToObject(rec, "result", res);
  } else {
    cJSON *e = cJSON_AddObjectToObject(rec, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    text = nsys_xasprintf("error %d: %s", code, msg);
  }
  return text;
}

/* One OpenAI-compatible reply: appends it and the tool results to the
 * conversation. Returns 1 when the model answered (*answer set), 0 when it
 * called tools, -1 on a malformed reply or cancellation (error recorded). */
static int nsys__agent_openai(nsys__agent *a, const cJSON *reply, char **answer) {
  const cJSON *msg = nsys__g(cJSON_GetArrayItem(nsys__g(reply, "choices"), 0), "message");
  if (!cJSON_IsObject(msg)) {
    nsys_call_fail(a->call, NSYS_E_LLM, "the LLM endpoint sent a malformed reply (no choices[0].message)");
    return -1;
  }
  const cJSON *content = nsys__g(msg, "content"), *calls = nsys__g(msg, "tool_calls");
  if (!cJSON_IsArray(calls) || cJSON_GetArraySize(calls) == 0) {
    if (!cJSON_IsString(content) || !content->valuestring[0]) {
      nsys_call_fail(a->call, NSYS_E_LLM, "the LLM endpoint sent a malformed reply (neither text nor tool calls)");
      return -1;
    }
    *answer = nsys_xstrdup(content->valuestring);
    return 1;
  }
  cJSON *am = cJSON_CreateObject(); /* the assistant turn as sent back: ids made where missing */
  cJSON_AddStringToObject(am, "role", "assistant");
  if (cJSON_IsString(content)) cJSON_AddStringToObject(am, "content", content->valuestring);
  else cJSON_AddNullToObject(am, "content");
  cJSON *tc = cJSON_AddArrayToObject(am, "tool_calls");
  cJSON *results = cJSON_CreateArray();
  const cJSON *c;
  int k = 0;
  cJSON_ArrayForEach(c, calls) {
    if (k++ >= NSYS__AGENT_CALLS_PER_TURN) break;
    const cJSON *fn = nsys__g(c, "function"), *id = nsys__g(c, "id");
    const cJSON *name = nsys__g(fn, "name"), *args = nsys__g(fn, "arguments");
    char idbuf[32];
    snprintf(idbuf, sizeof idbuf, "call_%d", a->n_calls + 1);
    const char *cid = cJSON_IsString(id) && id->valuestring[0] ? id->valuestring : idbuf;
    cJSON *parsed = NULL;
    if (cJSON_IsString(args)) parsed = nsys_json_parse(args->valuestring, strlen(args->valuestring), NULL);
    else if (cJSON_IsObject(args)) parsed = cJSON_Duplicate(args, true); /* lenient: an object sent as such */
    bool is_error = false;
    char *text = nsys__agent_run(a, cid, cJSON_IsString(name) ? name->valuestring : NULL, parsed,
                                 cJSON_IsString(args) ? args->valuestring : NULL, &is_error);
    cJSON_Delete(parsed);
    if (!text) {
      cJSON_Delete(am);
      cJSON_Delete(results);
      nsys_call_fail_cancelled(a->call);
      return -1;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", cid);
    cJSON_AddStringToObject(o, "type", "function");
    cJSON *f = cJSON_AddObjectToObject(o, "function");
    cJSON_AddStringToObject(f, "name", cJSON_IsString(name) ? name->valuestring : "");
    cJSON_AddStringToObject(f, "arguments", cJSON_IsString(args) ? args->valuestring : "{}");
    cJSON_AddItemToArray(tc, o);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "role", "tool");
    cJSON_AddStringToObject(r, "tool_call_id", cid);
    cJSON_AddStringToObject(r, "content", text);
    cJSON_AddItemToArray(results, r);
    free(text);
  }
  cJSON_AddItemToArray(a->messages, am);
  cJSON *r;
  while ((r = cJSON_DetachItemFromArray(results, 0)) != NULL) cJSON_AddItemToArray(a->messages, r);
  cJSON_Delete(results);
  return 0;
}

/* The same for an Anthropic messages reply. */
static int nsys__agent_anthropic(nsys__agent *a, const cJSON *reply, char **answer) {
  const cJSON *content = nsys__g(reply, "content");
  if (!cJSON_IsArray(content)) {
    nsys_call_fail(a->call, NSYS_E_LLM, "the LLM endpoint sent a malformed reply (no content array)");
    return -1;
  }
  nsys_strbuf text;
  nsys_strbuf_init(&text);
  int n_use = 0;
  const cJSON *b;
  cJSON_ArrayForEach(b, content) {
    const cJSON *type = nsys__g(b, "type");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "tool_use") == 0) n_use++;
    else if (cJSON_IsString(nsys__g(b, "text"))) nsys_strbuf_puts(&text, nsys__g(b, "text")->valuestring);
  }
  if (n_use == 0) {
    if (!text.len) {
      nsys_strbuf_free(&text);
      nsys_call_fail(a->call, NSYS_E_LLM, "the LLM endpoint sent a malformed reply (neither text nor tool_use)");
      return -1;
    }
    *answer = nsys_strbuf_steal(&text);
    return 1;
  }
  nsys_strbuf_free(&text);
  cJSON *am = cJSON_CreateObject();
  cJSON_AddStringToObject(am, "role", "assistant");
  cJSON *blocks = cJSON_AddArrayToObject(am, "content");
  cJSON *um = cJSON_CreateObject();
  cJSON_AddStringToObject(um, "role", "user");
  cJSON *results = cJSON_AddArrayToObject(um, "content");
  int k = 0;
  cJSON_ArrayForEach(b, content) {
    const cJSON *type = nsys__g(b, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "tool_use") != 0) {
      if (cJSON_IsString(nsys__g(b, "text"))) cJSON_AddItemToArray(blocks, cJSON_Duplicate(b, true));
      continue;
    }
    if (k++ >= NSYS__AGENT_CALLS_PER_TURN) break;
    const cJSON *id = nsys__g(b, "id"), *name = nsys__g(b, "name"), *input = nsys__g(b, "input");
    char idbuf[32];
    snprintf(idbuf, sizeof idbuf, "toolu_%d", a->n_calls + 1);
    const char *cid = cJSON_IsString(id) && id->valuestring[0] ? id->valuestring : idbuf;
    bool is_error = false;
    char *t = nsys__agent_run(a, cid, cJSON_IsString(name) ? name->valuestring : NULL, input, NULL, &is_error);
    if (!t) {
      cJSON_Delete(am);
      cJSON_Delete(um);
      nsys_call_fail_cancelled(a->call);
      return -1;
    }
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "type", "tool_use");
    cJSON_AddStringToObject(u, "id", cid);
    cJSON_AddStringToObject(u, "name", cJSON_IsString(name) ? name->valuestring : "");
    cJSON_AddItemToObject(u, "input", cJSON_IsObject(input) ? cJSON_Duplicate(input, true) : cJSON_CreateObject());
    cJSON_AddItemToArray(blocks, u);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "tool_result");
    cJSON_AddStringToObject(r, "tool_use_id", cid);
    cJSON_AddStringToObject(r, "content", t);
    if (is_error) cJSON_AddTrueToObject(r, "is_error");
    cJSON_AddItemToArray(results, r);
    free(t);
  }
  cJSON_AddItemToArray(a->messages, am);
  cJSON_AddItemToArray(a->messages, um);
  return 0;
}

static int64_t nsys__usage(const cJSON *usage, const char *k) {
  const cJSON *v = nsys__g(usage, k);
  return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e15 ? (int64_t)v->valuedouble : 0;
}

static bool nsys__budgets(nsys_call *call, int64_t *max_turns, int64_t *max_tokens, int64_t *max_seconds) {
  *max_turns = 8, *max_tokens = 200000, *max_seconds = 300;
  return nsys_param_int64(call, NSYS_P_AGENT_ASK_MAX_TURNS, max_turns) &&
         nsys_param_int64(call, NSYS_P_AGENT_ASK_MAX_TOKENS, max_tokens) &&
         nsys_param_int64(call, NSYS_P_AGENT_ASK_MAX_SECONDS, max_seconds);
}

bool nsys_agent_loop_check(nsys_call *call) {
  int64_t a, b, c;
  return nsys__budgets(call, &a, &b, &c);
}

char *nsys_agent_loop(nsys_call *call, const nsys_llm_config *cfg, const char *profile_id, const char *system,
                      const char *user, cJSON *llm_out) {
  int64_t max_turns, max_tokens, max_seconds;
  if (!nsys__budgets(call, &max_turns, &max_tokens, &max_seconds)) return NULL;
  nsys__agent a = {call, cfg, strcmp(cfg->provider, "anthropic") == 0, profile_id, cJSON_CreateArray(),
                   cJSON_CreateArray(), 0, 0};
  char *sys = nsys_xasprintf("%s\n\nYou can call tools on the profile (profileId \"%s\"; it is filled in when you "
                             "leave it out). Call them when the evidence does not answer the question; cite only "
                             "numbers from the evidence or from tool results.",
                             system, profile_id);
  if (!a.anthropic) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "system");
    cJSON_AddStringToObject(m, "content", sys);
    cJSON_AddItemToArray(a.messages, m);
  }
  cJSON *um = cJSON_CreateObject();
  cJSON_AddStringToObject(um, "role", "user");
  cJSON_AddStringToObject(um, "content", user);
  cJSON_AddItemToArray(a.messages, um);
  cJSON *tools = nsys__agent_tools(a.anthropic);
  int64_t t0 = nsys_now_ns(), deadline = t0 + max_seconds * 1000000000;
  int64_t in_tok = 0, out_tok = 0;
  const char *stop = NULL;
  char *answer = NULL;
  bool failed = false;
  while (!stop && !failed) {
    if (a.turn >= max_turns) {
      stop = "maxTurns";
      break;
    }
    int64_t left_ms = (deadline - nsys_now_ns()) / 1000000;
    if (left_ms <= 0) {
      stop = "timeout";
      break;
    }
    if (in_tok + out_tok >= max_tokens) {
      stop = "maxTokens";
      break;
    }
    a.turn++;
    char note[64];
    snprintf(note, sizeof note, "turn %d: asking the model", a.turn);
    nsys_call_progress(call, 70 + (int)(25 * (a.turn - 1) / max_turns), note);
    cJSON *req = cJSON_CreateObject();
    int64_t room = max_tokens - in_tok - out_tok;
    cJSON_AddNumberToObject(req, "max_tokens", (double)(room < NSYS__AGENT_MAX_OUTPUT ? room : NSYS__AGENT_MAX_OUTPUT));
    if (a.anthropic) cJSON_AddStringToObject(req, "system", sys);
    else cJSON_AddNumberToObject(req, "temperature", 0.2);
    cJSON_AddItemReferenceToObject(req, "messages", a.messages);
    cJSON_AddItemReferenceToObject(req, "tools", tools);
    cJSON *reply = NULL;
    bool ok = nsys_llm_chat(call, cfg, req, left_ms, &reply);
    cJSON_Delete(req); /* the references only */
    if (!ok) {
      /* an endpoint cut short by the seconds budget is the budget's end, not an error */
      if (call->task.err == NSYS_E_LLM && nsys_now_ns() >= deadline && nsys_task_forgive(&call->task, NSYS_E_LLM))
        stop = "timeout";
      else failed = true;
      break;
    }
    const cJSON *usage = nsys__g(reply, "usage");
    in_tok += nsys__usage(usage, a.anthropic ? "input_tokens" : "prompt_tokens");
    out_tok += nsys__usage(usage, a.anthropic ? "output_tokens" : "completion_tokens");
    int r = a.anthropic ? nsys__agent_anthropic(&a, reply, &answer) : nsys__agent_openai(&a, reply, &answer);
    cJSON_Delete(reply);
    if (r < 0) failed = true;
    else if (r > 0) stop = "answer";
  }
  cJSON_Delete(tools);
  cJSON_Delete(a.messages);
  free(sys);
  if (failed) {
    cJSON_Delete(a.calls);
    return NULL;
  }
  if (!answer)
    answer = nsys_xasprintf("The model did not answer within its budget (%s after %d turn%s); the tool calls it made "
                            "and the evidence below are what it had.",
                            strcmp(stop, "maxTurns") == 0 ? "maxTurns" : strcmp(stop, "maxTokens") == 0 ? "maxTokens" : "maxSeconds",
                            a.turn, a.turn == 1 ? "" : "s");
  cJSON_AddNumberToObject(llm_out, "turns", a.turn);
  cJSON_AddStringToObject(llm_out, "stopReason", stop);
  cJSON *u = cJSON_AddObjectToObject(llm_out, "usage");
  nsys_json_add_i64(u, "inputTokens", in_tok);
  nsys_json_add_i64(u, "outputTokens", out_tok);
  cJSON_AddItemToObject(llm_out, "toolCalls", a.calls);
  return answer;
}
