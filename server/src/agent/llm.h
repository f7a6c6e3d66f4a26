/* Optional LLM enrichment over libcurl (off by default).
 *
 * Configuration, later sources overriding earlier ones:
 *   1. a config file: $NSYS_AI_CONFIG, else $XDG_CONFIG_HOME/nsys-ai/config.json,
 *      else ~/.config/nsys-ai/config.json, object "llm":
 *      {"provider", "baseUrl", "model", "apiKeyEnv", "timeoutMs", "connectTimeoutMs", "retries"}
 *   2. environment: NSYS_AI_LLM_PROVIDER (openai|anthropic), NSYS_AI_LLM_BASE_URL,
 *      NSYS_AI_LLM_MODEL, NSYS_AI_LLM_API_KEY_ENV (the NAME of the variable that holds
 *      the key; default OPENAI_API_KEY / ANTHROPIC_API_KEY), NSYS_AI_LLM_TIMEOUT_MS
 *      (60000), NSYS_AI_LLM_CONNECT_TIMEOUT_MS (5000), NSYS_AI_LLM_RETRIES (3),
 *      NSYS_AI_LLM_BACKOFF_MS (500);
 *   3. agent/configure (or nsys_llm_configure from initialize options).
 * The LLM is configured when a model and a base URL are known (a provider
 * given explicitly supplies its public base URL). Without that no network
 * call is ever made. The key is read from the environment at request time,
 * sent only in the Authorization / x-api-key header, and never logged,
 * echoed or cached.
 *
 * Requests: OpenAI-compatible POST {baseUrl}/chat/completions, or Anthropic
 * POST {baseUrl}/v1/messages. Connect timeout 5 s, total 60 s; retries with
 * exponential backoff (and Retry-After) on 429, 5xx and refused
 * connections; cancellable through the call's cancel flag. Answers are
 * cached under nsys_cache_dir()/llm/<sha256>.json (0600) keyed by
 * (provider, base URL, model, system prompt, user prompt). */
#ifndef NSYS_LLM_H
#define NSYS_LLM_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "rpc/call.h"

typedef struct nsys_llm_config {
  bool configured;
  char provider[16];   /* "openai" or "anthropic" */
  char base_url[512];
  char model[128];
  char key_env[128];   /* name of the environment variable holding the key */
  long timeout_ms, connect_timeout_ms, backoff_ms;
  int retries;
  char source[32];     /* where the configuration came from: "none", "file", "env", "configure" */
} nsys_llm_config;

/* Current effective configuration (thread-safe copy). */
void nsys_llm_config_get(nsys_llm_config *out);

/* Applies overrides from a JSON object (agent/configure params or the
 * initialize options' "llm" object). Returns false with a message naming
 * the bad field. An empty object or {"enabled": false} turns the LLM off. */
bool nsys_llm_configure(const cJSON *opts, char *err, size_t errcap);

/* Configuration as JSON for replies (never contains the key; says whether
 * the key variable is set). */
cJSON *nsys_llm_config_json(const nsys_llm_config *c);

typedef struct nsys_llm_answer {
  char *text;          /* malloc'd */
  bool cached;
  int attempts;        /* HTTP attempts made (0 when cached) */
} nsys_llm_answer;

/* Sends the prompts and returns true with *ans filled, or false after
 * nsys_call_fail(): -32015 (HTTP error after retries, timeout, malformed
 * reply), -32800 (cancelled). */
bool nsys_llm_complete(nsys_call *call, const nsys_llm_config *cfg, const char *system, const char *user,
                       nsys_llm_answer *ans);

/* One turn of a conversation with tools (agent/ask's loop): POSTs request
 * (an object in the configured provider's dialect; "model" is set here) and
 * returns the parsed reply object in *reply (the caller deletes it), or false
 * after nsys_call_fail(): -32015 (HTTP error after retries, timeout, a reply
 * that is not a JSON object), -32800 (cancelled). Never cached. timeout_ms > 0
 * lowers the configured total timeout of each attempt. */
bool nsys_llm_chat(nsys_call *call, const nsys_llm_config *cfg, cJSON *request, long timeout_ms, cJSON **reply);

/* Adds an "llm" object to a kernel/explain result (and appends the answer
 * to its markdown). The prompt holds only kernel names, statistics and
 * knowledge-base facts from the result. False after nsys_call_fail(). */
bool nsys_llm_enrich_explain(nsys_call *call, const nsys_llm_config *cfg, cJSON *result);

#endif
