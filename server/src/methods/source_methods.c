/* JSON-RPC handlers for the source module: params -> core call -> JSON. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "rpc/method_table.h"
#include "rpc/params.h"
#include "source/annotate.h"
#include "source/source_map.h"
#include "source/workspace.h"

#define NSYS__MAX_SOURCE_BYTES (16u << 20)

static cJSON *nsys__pos(int line, int ch) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddNumberToObject(p, "line", line);
  cJSON_AddNumberToObject(p, "character", ch);
  return p;
}

static cJSON *nsys__edits_json(const nsys_annotate_result *r) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < r->n_edits; i++) {
    const nsys_text_edit *e = &r->edits[i];
    cJSON *o = cJSON_CreateObject();
    cJSON *range = cJSON_AddObjectToObject(o, "range");
    cJSON_AddItemToObject(range, "start", nsys__pos(e->start_line, e->start_char));
    cJSON_AddItemToObject(range, "end", nsys__pos(e->end_line, e->end_char));
    cJSON_AddStringToObject(o, "newText", e->text);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* Shared by annotate and unannotate: resolves params.file inside
 * params.workspaceRoot and loads the text (params.text overrides the file's
 * content, for unsaved editor buffers). */
typedef struct {
  char *abs, *rel, *root, *text;
  size_t len;
  bool include_text;
} nsys__src;

static void nsys__src_free(nsys__src *s) {
  free(s->abs);
  free(s->rel);
  free(s->root);
  free(s->text);
}

static bool nsys__load_src(nsys_call *call, nsys__src *s) {
  memset(s, 0, sizeof *s);
  const char *file = NULL, *root = NULL, *text = NULL;
  if (!nsys_param_string(call, "file", true, &file) ||
      !nsys_param_string(call, "workspaceRoot", true, &root) ||
      !nsys_param_string(call, "text", false, &text) ||
      !nsys_param_bool(call, "includeText", false, &s->include_text))
    return false;
  if (!*file) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.file: empty path"), false;
  char err[600];
  nsys_err e = nsys_ws_resolve(root, file, &s->abs, &s->rel, &s->root, err, sizeof err);
  if (e != NSYS_OK) return nsys_call_fail(call, e, "%s", err), false;
  if (text) {
    s->len = strlen(text);
    s->text = nsys_xstrdup(text);
  } else {
    s->text = nsys_ws_read_file(s->abs, NSYS__MAX_SOURCE_BYTES, &s->len, err, sizeof err);
    if (!s->text) return nsys_call_fail(call, NSYS_E_IO, "%s", err), false;
  }
  return true;
}

static cJSON *nsys__annot_result(const nsys__src *s, const nsys_annotate_result *r, bool annotate) {
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "edits", nsys__edits_json(r));
  cJSON_AddStringToObject(res, "file", s->rel);
  cJSON *marks = cJSON_AddArrayToObject(res, annotate ? "added" : "removed");
  for (int i = 0; i < r->n_markers; i++) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "line", r->markers[i].line);
    cJSON_AddStringToObject(m, annotate ? "tag" : "text", r->markers[i].tag);
    cJSON_AddItemToArray(marks, m);
  }
  if (annotate) {
    cJSON_AddStringToObject(res, "api", r->api);
    cJSON_AddBoolToObject(res, "importAdded", r->import_added);
    cJSON_AddNumberToObject(res, "renumbered", r->n_renumbered);
    if (r->refused)
      cJSON_AddStringToObject(res, "refused",
                              "the file does not scan as valid Python (or its edits would not "
                              "round-trip), so it was left untouched");
  }
  if (s->include_text) {
    char *t = nsys_xstrndup(r->new_text, r->new_len);
    cJSON_AddStringToObject(res, "text", t);
    free(t);
  }
  return res;
}

cJSON *nsys_method_source_annotate(nsys_call *call) {
  nsys_annotate_opts o = {.scope = NSYS_ANNOT_FILE};
  const cJSON *scope = NULL;
  const char *gran = "function";
  if (!nsys_param_any(call, "scope", false, &scope) ||
      !nsys_param_string(call, "granularity", false, &gran))
    return NULL;
  if (strcmp(gran, "statement") == 0) o.statement = true;
  else if (strcmp(gran, "function") != 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                          "params.granularity: expected \"function\" or \"statement\"");
  if (scope) {
    if (cJSON_IsString(scope) && strcmp(scope->valuestring, "file") == 0) {
      o.scope = NSYS_ANNOT_FILE;
    } else if (cJSON_IsObject(scope)) {
      const cJSON *fn = cJSON_GetObjectItemCaseSensitive(scope, "function");
      const cJSON *sl = cJSON_GetObjectItemCaseSensitive(scope, "startLine");
      const cJSON *el = cJSON_GetObjectItemCaseSensitive(scope, "endLine");
      if (cJSON_IsString(fn) && fn->valuestring[0]) {
        o.scope = NSYS_ANNOT_FUNCTION;
        o.function = fn->valuestring;
      } else if (cJSON_IsNumber(sl) && cJSON_IsNumber(el) && sl->valuedouble >= 0 &&
                 el->valuedouble >= sl->valuedouble && el->valuedouble < 1e9) {
        o.scope = NSYS_ANNOT_LINES;
        o.start_line = (int)sl->valuedouble;
        o.end_line = (int)el->valuedouble;
      } else {
        return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                              "params.scope: expected \"file\", {function: NAME} or "
                              "{startLine, endLine} (0-based, startLine <= endLine)");
      }
    } else {
      return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                            "params.scope: expected \"file\", {function: NAME} or {startLine, endLine}");
    }
  }
  nsys__src s;
  if (!nsys__load_src(call, &s)) {
    nsys__src_free(&s);
    return NULL;
  }
  o.rel_path = s.rel;
  nsys_annotate_result r;
  int rc = nsys_annotate(s.text, s.len, &o, &r);
  cJSON *res = NULL;
  if (rc != 0) nsys_call_fail(call, NSYS_E_NOT_FOUND, "no function named '%s' in %s", o.function, s.rel);
  else res = nsys__annot_result(&s, &r, true);
  nsys_annotate_result_free(&r);
  nsys__src_free(&s);
  return res;
}

cJSON *nsys_method_source_unannotate(nsys_call *call) {
  nsys__src s;
  if (!nsys__load_src(call, &s)) {
    nsys__src_free(&s);
    return NULL;
  }
  nsys_annotate_result r;
  nsys_unannotate(s.text, s.len, &r);
  cJSON *res = nsys__annot_result(&s, &r, false);
  nsys_annotate_result_free(&r);
  nsys__src_free(&s);
  return res;
}

