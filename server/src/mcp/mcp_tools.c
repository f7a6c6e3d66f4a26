/* The MCP tool table (see mcp_tools.h). */
#include "mcp/mcp_tools.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "methods/analysis_params.h"
#include "methods/analysis_render.h"
#include "common/util.h"
#include "mcp/mcp_tools.gen.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"

static pthread_once_t nsys__tools_once = PTHREAD_ONCE_INIT;
static cJSON *nsys__doc;       /* the parsed nsys_mcp_tools_json, analysis tools added */
static nsys_mcp_tool *nsys__tools;
static size_t nsys__n_tools;

static const cJSON *nsys__get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* The input schema of analysis_<name>: the analysis/run tool's, with `name`
 * and `params` replaced by the analysis's own params at the top. */
static cJSON *nsys__analysis_input(const cJSON *run_input, const cJSON *analysis) {
  cJSON *in = cJSON_Duplicate(run_input, true);
  cJSON *props = cJSON_GetObjectItemCaseSensitive(in, "properties");
  cJSON_DeleteItemFromObjectCaseSensitive(props, "name");
  cJSON_DeleteItemFromObjectCaseSensitive(props, "params");
  cJSON *req = cJSON_GetObjectItemCaseSensitive(in, "required");
  for (int i = cJSON_GetArraySize(req) - 1; i >= 0; i--) {
    const cJSON *r = cJSON_GetArrayItem(req, i);
    if (cJSON_IsString(r) && !nsys__get(props, r->valuestring)) cJSON_DeleteItemFromArray(req, i);
  }
  const cJSON *ap;
  cJSON_ArrayForEach(ap, nsys__get(analysis, "params")) {
    const cJSON *name = nsys__get(ap, "name"), *type = nsys__get(ap, "type"), *def = nsys__get(ap, "default");
    const cJSON *desc = nsys__get(ap, "description");
    if (!cJSON_IsString(name) || !cJSON_IsString(type) || nsys__get(props, name->valuestring)) continue;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "type", type->valuestring);
    if (cJSON_IsString(desc)) cJSON_AddStringToObject(s, "description", desc->valuestring);
    if (def && !cJSON_IsNull(def)) cJSON_AddItemToObject(s, "default", cJSON_Duplicate(def, true));
    cJSON_AddItemToObject(props, name->valuestring, s);
  }
  return in;
}

static void nsys__tools_build(void) {
  nsys__doc = cJSON_Parse(nsys_mcp_tools_json);
  if (!nsys__doc) {
    nsys_log("mcp: mcp_tools.gen.h does not parse: regenerate it with protocol/gen.py");
    abort();
  }
  cJSON *list = cJSON_GetObjectItemCaseSensitive(nsys__doc, "tools");
  cJSON *analyses = nsys_analysis_list_json();
  size_t cap = (size_t)cJSON_GetArraySize(list) + (size_t)cJSON_GetArraySize(analyses);
  nsys__tools = nsys_xcalloc(cap ? cap : 1, sizeof *nsys__tools);
  /* analysis tools are made in the list at the place of their template */
  cJSON *out = cJSON_CreateArray();
  cJSON *templates = cJSON_AddArrayToObject(nsys__doc, "templates");
  cJSON *t;
  while ((t = cJSON_DetachItemFromArray(list, 0)) != NULL) {
    cJSON *route = cJSON_DetachItemFromObjectCaseSensitive(t, "_nsys");
    const cJSON *method = nsys__get(route, "method");
    const nsys_method *m = cJSON_IsString(method) ? nsys_method_find(method->valuestring) : NULL;
    if (!m) {
      nsys_log("mcp: mcp_tools.gen.h names a method the table lacks: regenerate it with protocol/gen.py");
      abort();
    }
    nsys_mcp_tool base = {NULL, m, NULL, nsys__get(route, "fixed"), nsys__get(route, "defaults"), NULL,
                          !cJSON_IsFalse(nsys__get(route, "agent"))};
    cJSON_AddItemToObject(t, "_nsys", route); /* kept alive with the tool; left out of tools/list */
    if (!cJSON_IsTrue(nsys__get(route, "perAnalysis"))) {
      base.def = t;
      base.name = nsys__get(t, "name")->valuestring;
      nsys__tools[nsys__n_tools++] = base;
      cJSON_AddItemToArray(out, t);
      continue;
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, analyses) {
      const char *an = nsys__get(a, "name")->valuestring;
      cJSON *d = cJSON_CreateObject();
      char *name = nsys_xasprintf("%s_%s", nsys__get(t, "name")->valuestring, an);
      cJSON_AddStringToObject(d, "name", name);
      free(name);
      char *title = nsys_xasprintf("Analysis %s", an);
      cJSON_AddStringToObject(d, "title", title);
      free(title);
      char *desc = nsys_xasprintf("%s. %s", nsys__get(a, "description")->valuestring,
                                  nsys__get(t, "description")->valuestring);
      cJSON_AddStringToObject(d, "description", desc);
      free(desc);
      cJSON_AddItemToObject(d, "inputSchema", nsys__analysis_input(nsys__get(t, "inputSchema"), a));
      const cJSON *os = nsys__get(t, "outputSchema");
      if (os) cJSON_AddItemToObject(d, "outputSchema", cJSON_Duplicate(os, true));
      cJSON_AddItemToObject(d, "annotations", cJSON_Duplicate(nsys__get(t, "annotations"), true));
      cJSON_AddItemToObject(d, "_nsys", cJSON_CreateString(an)); /* owns the analysis name */
      nsys_mcp_tool at = base;
      at.def = d;
      at.name = nsys__get(d, "name")->valuestring;
      at.analysis = nsys__get(d, "_nsys")->valuestring;
      nsys__tools[nsys__n_tools++] = at;
      cJSON_AddItemToArray(out, d);
    }
    cJSON_AddItemToArray(templates, t); /* kept: its route is the analysis tools' */
  }
  cJSON_Delete(analyses);
  cJSON_ReplaceItemInObjectCaseSensitive(nsys__doc, "tools", out);
}

const nsys_mcp_tool *nsys_mcp_tools(size_t *n) {
  pthread_once(&nsys__tools_once, nsys__tools_build);
  *n = nsys__n_tools;
  return nsys__tools;
}

const nsys_mcp_tool *nsys_mcp_tool_find(const char *name) {
  size_t n;
  const nsys_mcp_tool *t = nsys_mcp_tools(&n);
  for (size_t i = 0; name && i < n; i++)
    if (strcmp(t[i].name, name) == 0) return &t[i];
  return NULL;
}

cJSON *nsys_mcp_tool_params(const nsys_mcp_tool *t, const cJSON *args, char *err, size_t errcap) {
  if (args && !cJSON_IsNull(args) && !cJSON_IsObject(args)) {
    snprintf(err, errcap, "arguments: expected an object");
    return NULL;
  }
  cJSON *p = cJSON_CreateObject();
  cJSON *dst = p;
  const cJSON *it;
  if (t->analysis) { /* analysis/run {profileId, name, params: the other arguments} */
    cJSON_AddStringToObject(p, "name", t->analysis);
    dst = cJSON_AddObjectToObject(p, "params");
  }
  cJSON_ArrayForEach(it, args) {
    if (!it->string || cJSON_GetObjectItemCaseSensitive(t->fixed, it->string)) continue;
    if (strcmp(it->string, "workDoneToken") == 0) continue; /* progress is MCP's progressToken */
    cJSON *target = t->analysis && strcmp(it->string, "profileId") == 0 ? p : dst;
    if (t->analysis && strcmp(it->string, "name") == 0) continue;
    cJSON_AddItemToObject(target, it->string, cJSON_Duplicate(it, true));
  }
  cJSON_ArrayForEach(it, t->defaults)
    if (!cJSON_GetObjectItemCaseSensitive(dst, it->string)) cJSON_AddItemToObject(dst, it->string, cJSON_Duplicate(it, true));
  cJSON_ArrayForEach(it, t->fixed) cJSON_AddItemToObject(p, it->string, cJSON_Duplicate(it, true));
  return p;
}

cJSON *nsys_mcp_tool_run(const nsys_mcp_tool *t, const cJSON *args, nsys_task *task, bool progress,
                         struct nsys_profile_registry *profiles, int *code, char *msg, size_t msgcap) {
  char err[256];
  cJSON *params = nsys_mcp_tool_params(t, args, err, sizeof err);
  if (!params) {
    *code = nsys_err_rpc_code(NSYS_E_INVALID_PARAMS);
    snprintf(msg, msgcap, "%s", err);
    return NULL;
  }
  nsys_call call;
  nsys_call_init(&call, t->method->name, params, profiles);
  nsys_task_init_child(&call.task, task);
  if (progress) {
    call.task.progress_fn = task->progress_fn;
    call.task.progress_ctx = task->progress_ctx;
  }
  cJSON *res = nsys_task_cancelled(&call.task) ? NULL : t->method->fn(&call);
  if (call.task.progress_begun) nsys_call_progress_end(&call, NULL);
  if (!res) {
    if (call.task.err == NSYS_OK)
      nsys_call_fail(&call, nsys_task_cancelled(&call.task) ? NSYS_E_CANCELLED : NSYS_E_INTERNAL,
                     "internal error: %s returned no result", t->method->name);
    *code = nsys_err_rpc_code(call.task.err);
    /* name fields as the tool's arguments: analyses' own params are at their top */
    const char *m = call.task.err_msg, *prefix = t->analysis ? "params.params." : "params.";
    if (strncmp(m, prefix, strlen(prefix)) == 0) snprintf(msg, msgcap, "arguments.%s", m + strlen(prefix));
    else if (strncmp(m, "params.", 7) == 0) snprintf(msg, msgcap, "arguments.%s", m + 7);
    else snprintf(msg, msgcap, "%s", m);
  }
  nsys_call_dispose(&call);
  cJSON_Delete(params);
  return res;
}

char *nsys_mcp_result_text(const nsys_mcp_tool *t, const cJSON *result, size_t max) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  const cJSON *own = nsys__get(result, "rendered");
  if (!cJSON_IsString(own)) own = nsys__get(result, "markdown");
  if (cJSON_IsString(own)) nsys_strbuf_puts(&b, own->valuestring);
  else if (t && t->analysis) nsys_render_result(&b, result, true);
  else nsys_json_write(&b, result);
  if (!b.data) nsys_strbuf_puts(&b, "");
  if (b.len > max) {
    size_t cut = max;
    while (cut > 0 && ((unsigned char)b.data[cut] & 0xC0) == 0x80) cut--; /* whole characters */
    char note[160];
    snprintf(note, sizeof note, "\n[... %zu of %zu bytes shown; the whole result is the structured content]", cut,
             b.len);
    b.len = cut;
    b.data[cut] = '\0';
    nsys_strbuf_puts(&b, note);
  }
  return nsys_strbuf_steal(&b);
}
