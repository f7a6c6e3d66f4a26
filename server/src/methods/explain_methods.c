/* JSON-RPC handlers for the explain module: params -> core call -> JSON.
 *   kernel/explain {profileId?, name | kernelId, llm?}
 *   agent/ask      {profileId, question, llm?}
 * Documented in docs/protocol.md ("Kernel explanations and the assistant"). */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "explain/explain.h"
#include "agent/llm.h"
#include "methods/explain_json.h"
#include "profile/profile.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

cJSON *nsys_method_kernel_explain(nsys_call *call) {
  const char *name = NULL;
  int64_t kernel_id = -1;
  bool llm = false;
  const cJSON *pid = NULL;
  if (!nsys_param_string(call, "name", false, &name)) return NULL;
  if (!nsys_param_int64(call, NSYS_P_KERNEL_EXPLAIN_KERNEL_ID, &kernel_id)) return NULL;
  if (!nsys_param_bool(call, "llm", false, &llm)) return NULL;
  if (!nsys_param_any(call, "profileId", false, &pid)) return NULL;
  if (!name && kernel_id < 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params: give either name or kernelId");
  if (name && kernel_id >= 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params: give name or kernelId, not both");
  if (name && (!*name || strlen(name) > 65536))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.name: expected a non-empty kernel name");
  if (kernel_id >= 0 && !pid)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.profileId: required with kernelId");
  /* Check the LLM configuration before any work: -32014 is immediate. */
  nsys_llm_config cfg;
  if (llm) {
    nsys_llm_config_get(&cfg);
    if (!cfg.configured)
      return nsys_call_fail(call, NSYS_E_LLM_NOT_CONFIGURED,
                            "llm: no LLM endpoint is configured (set NSYS_AI_LLM_BASE_URL and NSYS_AI_LLM_MODEL; see docs/protocol.md)");
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = NULL;
  if (pid) {
    p = nsys_param_profile(call, "profileId");
    if (!p) return NULL;
    /* the first request on a profile groups every op by name and derives the
     * profile's context: report it, and let it be cancelled */
    nsys_call_progress_begin(call, "Explaining kernel");
    ix = nsys_index_get(p, &call->task);
    if (!ix) {
      nsys_profile_release(p);
      return NULL;
    }
  }
  nsys_explain_req req = {p, ix, name, kernel_id};
  nsys_explain_result r;
  cJSON *res = nsys_explain_kernel(&call->task, &req, &r) ? nsys_explain_result_json(&r) : NULL;
  nsys_explain_result_free(&r);
  if (res && llm) {
    if (!nsys_llm_enrich_explain(call, &cfg, res)) {
      cJSON_Delete(res);
      res = NULL;
    }
  }
  if (p) nsys_profile_release(p);
  return res;
}

cJSON *nsys_method_agent_ask(nsys_call *call) {
  const char *question = NULL;
  bool llm_param = false, llm_given = false;
  if (!nsys_param_string(call, "question", true, &question)) return NULL;
  if (!*question || strlen(question) > 8192)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.question: expected 1..8192 characters");
  const cJSON *lv = NULL;
  if (!nsys_param_any(call, "llm", false, &lv)) return NULL;
  if (lv) {
    if (!nsys_param_bool(call, "llm", false, &llm_param)) return NULL;
    llm_given = true;
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  nsys_llm_config cfg;
  nsys_llm_config_get(&cfg);
  /* default: use the LLM when one is configured; llm:true without one is an error */
  bool use_llm = llm_given ? llm_param : cfg.configured;
  if (use_llm && !cfg.configured) {
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_LLM_NOT_CONFIGURED,
                          "llm: no LLM endpoint is configured (set NSYS_AI_LLM_BASE_URL and NSYS_AI_LLM_MODEL)");
  }
  cJSON *res = nsys_agent_ask(call, p, ix, question, use_llm ? &cfg : NULL);
  nsys_profile_release(p);
  return res;
}

/* agent/configure {provider?, baseUrl?, model?, apiKeyEnv?, timeoutMs?, connectTimeoutMs?,
 * retries?, backoffMs?, enabled?} -> the effective LLM configuration (no key). */
cJSON *nsys_method_agent_configure(nsys_call *call) {
  if (call->params && !cJSON_IsObject(call->params))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params: expected an object");
  static const char *const known[] = {"provider", "baseUrl", "model", "apiKeyEnv", "timeoutMs",
                                      "connectTimeoutMs", "retries", "backoffMs", "enabled"};
  const cJSON *it;
  cJSON_ArrayForEach(it, call->params) {
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= strcmp(it->string, known[i]) == 0;
    if (!ok) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s: unknown setting", it->string);
  }
  if (call->params && cJSON_GetArraySize(call->params) > 0) {
    char err[256];
    if (!nsys_llm_configure(call->params, err, sizeof err))
      return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s", strncmp(err, "llm.", 4) == 0 ? err + 4 : err);
  }
  nsys_llm_config cfg;
  nsys_llm_config_get(&cfg);
  return nsys_llm_config_json(&cfg);
}

