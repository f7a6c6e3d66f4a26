/* profile/doctor, runs/list, runs/get, runs/record, runs/note, runs/compare:
 * params to the capture core (capture/) and its structs to JSON. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "capture/run_compare.h"
#include "index/index.h"
#include "methods/capture_json.h"
#include "profile/profile.h"
#include "rpc/call.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"
#include "rpc/method_table.h"
#include "rpc/params.h"
#include "source/source_map.h"

char *nsys_strv_json_text(const nsys_strv *s) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < s->n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(s->v[i]));
  char *t = nsys_json_print(a, false);
  cJSON_Delete(a);
  return t;
}

static cJSON *nsys__str_array(const char *const *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n && v[i]; i++) cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
  return a;
}

cJSON *nsys_doctor_json(const nsys_doc_report *r, const char *profile_id) {
  cJSON *o = cJSON_CreateObject();
  if (profile_id) cJSON_AddStringToObject(o, "profileId", profile_id);
  int worst = -1;
  for (int i = 0; i < r->n; i++)
    if ((int)r->findings[i].severity > worst) worst = (int)r->findings[i].severity;
  cJSON_AddStringToObject(o, "verdict", worst == NSYS_DOC_ERROR     ? "broken"
                                        : worst == NSYS_DOC_WARNING ? "warnings"
                                                                    : "healthy");
  cJSON *fs = cJSON_AddArrayToObject(o, "findings");
  cJSON *flags = cJSON_AddArrayToObject(o, "flags");
  for (int sev = NSYS_DOC_ERROR; sev >= NSYS_DOC_INFO; sev--) {
    for (int i = 0; i < r->n; i++) {
      const nsys_doc_finding *f = &r->findings[i];
      if ((int)f->severity != sev) continue;
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "rule", f->rule);
      cJSON_AddStringToObject(x, "severity", nsys_doc_severity_name(f->severity));
      cJSON_AddStringToObject(x, "title", f->title);
      cJSON_AddStringToObject(x, "evidence", f->evidence);
      cJSON_AddStringToObject(x, "fix", f->fix);
      int nf = 0;
      while (nf < (int)NSYS_ARRAY_LEN(f->flags) && f->flags[nf]) nf++;
      cJSON_AddItemToObject(x, "flags", nsys__str_array(f->flags, nf));
      cJSON_AddItemToArray(fs, x);
      for (int k = 0; k < nf; k++) {
        bool seen = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, flags) seen = seen || strcmp(e->valuestring, f->flags[k]) == 0;
        if (!seen) cJSON_AddItemToArray(flags, cJSON_CreateString(f->flags[k]));
      }
    }
  }
  cJSON *facts = cJSON_AddObjectToObject(o, "facts");
  nsys_json_add_i64(facts, "gpuOps", r->gpu_ops);
  nsys_json_add_i64(facts, "spanNs", r->span_ns);
  nsys_json_add_i64(facts, "gpusListed", r->gpus_listed);
  nsys_json_add_i64(facts, "gpusActive", r->gpus_active);
  nsys_json_add_i64(facts, "nvtxRanges", r->nvtx_ranges);
  cJSON_AddBoolToObject(facts, "ncclKernels", r->nccl_kernels);
  cJSON_AddBoolToObject(facts, "ncclNvtx", r->nccl_nvtx);
  nsys_json_add_i64(facts, "overheadNs", r->overhead_ns);
  nsys_json_add_i64(facts, "overheadRows", r->overhead_rows);
  cJSON_AddBoolToObject(facts, "captureTypesKnown", r->capture_types_known);
  return o;
}

char *nsys_doctor_summary_text(const cJSON *doctor) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddItemToObject(s, "verdict", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doctor, "verdict"), true));
  cJSON *rules = cJSON_AddArrayToObject(s, "rules");
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doctor, "findings"))
      cJSON_AddItemToArray(rules, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(f, "rule"), true));
  char *t = nsys_json_print(s, false);
  cJSON_Delete(s);
  return t;
}

/* profile/doctor {profileId, with?}: `with` names the other open reports of
 * the same job (ranks, nodes), checked together for clock alignment. */
cJSON *nsys_method_profile_doctor(nsys_call *call) {
  const cJSON *with = NULL;
  if (!nsys_param_array(call, "with", false, &with)) return NULL;
  int n = 1 + cJSON_GetArraySize(with);
  if (n > 1024) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.with: at most 1023 reports");
  nsys_profile **ps = nsys_xcalloc((size_t)n, sizeof *ps);
  nsys_doc_report *reps = nsys_xcalloc((size_t)n, sizeof *reps);
  const char **names = nsys_xcalloc((size_t)n, sizeof *names);
  cJSON *res = NULL;
  int done = 0;
  ps[0] = nsys_param_profile(call, "profileId");
  const cJSON *e;
  int i = 1;
  cJSON_ArrayForEach(e, with) {
    if (!ps[0]) break;
    if (!cJSON_IsString(e)) {
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.with: expected profile ids");
      break;
    }
    ps[i] = nsys_registry_get(call->profiles, e->valuestring);
    if (!ps[i]) {
      nsys_call_fail(call, NSYS_E_PROFILE_NOT_OPEN, "no open profile with id '%s'", e->valuestring);
      break;
    }
    i++;
  }
  if (ps[0] && i == n) {
    for (done = 0; done < n; done++) {
      if (!nsys_doctor_run(ps[done], &call->task, &reps[done])) break;
      names[done] = ps[done]->path;
    }
    if (done == n) {
      nsys_doctor_set(reps, names, n);
      res = nsys_doctor_json(&reps[0], ps[0]->id);
    }
  }
  for (int k = 0; k < n; k++) {
    if (k < done) nsys_doctor_free(&reps[k]);
    if (ps[k]) nsys_profile_release(ps[k]);
  }
  free(ps), free(reps), free(names);
  return res;
}

/* ---- runs ---------------------------------------------------------------- */

/* A stored JSON text back as a tree; JSON null when absent or unreadable. */
static cJSON *nsys__stored(const char *text) {
  if (!text) return cJSON_CreateNull();
  cJSON *v = nsys_json_parse(text, strlen(text), NULL);
  return v ? v : cJSON_CreateNull();
}

static void nsys__add_str_or_null(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

cJSON *nsys_run_json(nsys_history *h, const nsys_run *r, nsys_task *t) {
  nsys_run_note *notes = NULL;
  int n_notes = 0;
  if (!nsys_history_notes(h, r->id, &notes, &n_notes, t)) return NULL;
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "id", r->id);
  cJSON_AddStringToObject(o, "name", r->name);
  nsys_json_add_i64(o, "createdNs", r->created_ns);
  cJSON_AddStringToObject(o, "status", r->status);
  cJSON_AddBoolToObject(o, "interrupted", r->interrupted);
  nsys_json_add_i64(o, "pid", r->pid);
  cJSON_AddItemToObject(o, "command", nsys__stored(r->command));
  cJSON_AddItemToObject(o, "nsysFlags", nsys__stored(r->nsys_flags));
  if (r->git_commit) {
    cJSON *g = cJSON_AddObjectToObject(o, "git");
    cJSON_AddStringToObject(g, "commit", r->git_commit);
    if (r->git_dirty < 0) cJSON_AddNullToObject(g, "dirty");
    else cJSON_AddBoolToObject(g, "dirty", r->git_dirty > 0);
  } else {
    cJSON_AddNullToObject(o, "git");
  }
  cJSON_AddItemToObject(o, "env", nsys__stored(r->env));
  nsys__add_str_or_null(o, "gpu", r->gpu);
  nsys__add_str_or_null(o, "report", r->report);
  nsys__add_str_or_null(o, "error", r->error);
  char *before = NULL;
  if (r->before_id > 0) {
    nsys_run b;
    nsys_task sub;
    nsys_task_init_child(&sub, t);
    if (nsys_history_get_id(h, r->before_id, &b, &sub)) {
      before = nsys_xstrdup(b.name);
      nsys_run_free(&b);
    }
  }
  nsys__add_str_or_null(o, "before", before);
  free(before);
  cJSON_AddItemToObject(o, "summary", nsys__stored(r->summary));
  if (r->has_stats) {
    cJSON *s = cJSON_AddObjectToObject(o, "stats");
    cJSON_AddNumberToObject(s, "coverage", r->coverage);
    cJSON_AddNumberToObject(s, "taggedPct", r->tagged_pct);
    nsys_json_add_i64(s, "taggedRanges", r->tagged_ranges);
  } else {
    cJSON_AddNullToObject(o, "stats");
  }
  cJSON *ns = cJSON_AddArrayToObject(o, "notes");
  for (int i = 0; i < n_notes; i++) {
    cJSON *x = cJSON_CreateObject();
    nsys_json_add_i64(x, "id", notes[i].id);
    cJSON_AddStringToObject(x, "kind", notes[i].kind);
    cJSON_AddStringToObject(x, "text", notes[i].text);
    nsys_json_add_i64(x, "createdNs", notes[i].created_ns);
    cJSON_AddItemToArray(ns, x);
  }
  nsys_run_notes_free(notes, n_notes);
  return o;
}

/* params.workspaceRoot's history; create: writers make it when absent. */
static nsys_history *nsys__history_param(nsys_call *call, bool create) {
  const char *root = NULL;
  if (!nsys_param_string(call, "workspaceRoot", true, &root)) return NULL;
  if (!*root) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.workspaceRoot: must not be empty"), NULL;
  return nsys_history_open(root, create, &call->task);
}

cJSON *nsys_method_runs_list(nsys_call *call) {
  int64_t limit = 0;
  if (!nsys_param_int64(call, NSYS_P_RUNS_LIST_LIMIT, &limit)) return NULL;
  nsys_history *h = nsys__history_param(call, false);
  if (!h && call->task.err == NSYS_E_NOT_FOUND) { /* no history yet: no runs */
    const char *root = NULL;
    nsys_param_string(call, "workspaceRoot", true, &root);
    char *real = realpath(root, NULL);
    nsys_task_forgive(&call->task, NSYS_E_NOT_FOUND);
    cJSON *res = cJSON_CreateObject();
    char *path = nsys_xasprintf("%s/.nsys-ai/runs.db", real);
    cJSON_AddStringToObject(res, "historyPath", path);
    cJSON_AddArrayToObject(res, "runs");
    free(path);
    free(real);
    return res;
  }
  if (!h) return NULL;
  nsys_run *runs = NULL;
  int n = 0;
  cJSON *res = NULL;
  if (nsys_history_list(h, limit, &runs, &n, &call->task)) {
    res = cJSON_CreateObject();
    char *path = nsys_xasprintf("%s/runs.db", nsys_history_dir(h));
    cJSON_AddStringToObject(res, "historyPath", path);
    free(path);
    cJSON *arr = cJSON_AddArrayToObject(res, "runs");
    for (int i = 0; i < n && res; i++) {
      cJSON *o = nsys_run_json(h, &runs[i], &call->task);
      if (!o) {
        cJSON_Delete(res);
        res = NULL;
      } else {
        cJSON_AddItemToArray(arr, o);
      }
    }
    nsys_runs_free(runs, n);
  }
  nsys_history_close(h);
  return res;
}

/* params.run resolved in h. */
static bool nsys__run_param(nsys_call *call, nsys_history *h, const char *field, bool required, const char *dflt,
                            nsys_run *out) {
  const char *ref = NULL;
  if (!nsys_param_string(call, field, required, &ref)) return false;
  if (!ref) ref = dflt;
  if (!*ref) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s: must not be empty", field), false;
  return nsys_history_get(h, ref, out, &call->task);
}

static cJSON *nsys__wrap_run(nsys_call *call, nsys_history *h, const nsys_run *r) {
  cJSON *o = nsys_run_json(h, r, &call->task);
  if (!o) return NULL;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "run", o);
  return res;
}

cJSON *nsys_method_runs_get(nsys_call *call) {
  nsys_history *h = nsys__history_param(call, false);
  if (!h) return NULL;
  nsys_run r;
  cJSON *res = NULL;
  if (nsys__run_param(call, h, "run", true, NULL, &r)) {
    res = nsys__wrap_run(call, h, &r);
    nsys_run_free(&r);
  }
  nsys_history_close(h);
  return res;
}

static bool nsys__strv_param(nsys_call *call, const char *field, nsys_strv *out) {
  const cJSON *a = NULL;
  if (!nsys_param_array(call, field, false, &a)) return false;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    if (!cJSON_IsString(e)) {
      nsys_strv_free(out);
      return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.%s: expected an array of strings", field), false;
    }
    nsys_strv_push(out, e->valuestring);
  }
  return a != NULL;
}

static bool nsys__name_ok(const char *s) {
  if (!s) return true;
  size_t n = strlen(s);
  if (n < 1 || n > 64 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) return false;
  if (strncmp(s, "latest", 6) == 0) return false;
  for (size_t i = 1; i < n; i++) {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return false;
  }
  return true;
}

cJSON *nsys_method_runs_record(nsys_call *call) {
  const char *report = NULL, *name = NULL, *note = NULL, *root = NULL;
  nsys_strv cmd = {0}, flags = {0};
  if (!nsys_param_string(call, "report", true, &report) || !nsys_param_string(call, "name", false, &name) ||
      !nsys_param_string(call, "note", false, &note) || !nsys_param_string(call, "workspaceRoot", true, &root))
    return NULL;
  if (!nsys__name_ok(name))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                          "params.name: a letter, then letters, digits, '.', '_' or '-' (at most 64; not latest...)");
  bool has_cmd = nsys__strv_param(call, "command", &cmd);
  if (nsys_task_failed(&call->task)) return NULL;
  bool has_flags = nsys__strv_param(call, "nsysFlags", &flags);
  if (nsys_task_failed(&call->task)) {
    nsys_strv_free(&cmd);
    return NULL;
  }
  char *abs = report[0] == '/' ? realpath(report, NULL) : NULL;
  if (report[0] != '/') {
    char *joined = nsys_xasprintf("%s/%s", root, report);
    abs = realpath(joined, NULL);
    free(joined);
  }
  nsys_history *h = NULL;
  cJSON *res = NULL;
  if (!abs) {
    nsys_call_fail(call, NSYS_E_FILE_NOT_FOUND, "report %s not found", report);
    goto done;
  }
  h = nsys__history_param(call, true);
  if (!h) goto done;
  nsys_run spec = {0}, before = {0}, got = {0};
  const char *before_ref = NULL;
  if (!nsys_param_string(call, "before", false, &before_ref)) goto done;
  if (before_ref && !nsys_history_get(h, before_ref, &before, &call->task)) goto done;
  spec.name = (char *)name;
  spec.status = "recorded";
  spec.report = abs;
  spec.command = has_cmd ? nsys_strv_json_text(&cmd) : NULL;
  spec.nsys_flags = has_flags ? nsys_strv_json_text(&flags) : NULL;
  nsys_capture_git(root, &spec.git_commit, &spec.git_dirty);
  nsys_strv env = {0};
  nsys_capture_env(&env);
  spec.env = nsys_strv_json_text(&env);
  nsys_strv_free(&env);
  spec.before_id = before.id;
  bool ok = nsys_history_add_with_note(h, &spec, "hypothesis", note, &got, &call->task);
  free(spec.command), free(spec.nsys_flags), free(spec.git_commit), free(spec.env);
  nsys_run_free(&before);
  if (ok) res = nsys__wrap_run(call, h, &got);
  nsys_run_free(&got);
done:
  nsys_history_close(h);
  free(abs);
  nsys_strv_free(&cmd);
  nsys_strv_free(&flags);
  return res;
}

cJSON *nsys_method_runs_note(nsys_call *call) {
  const char *text = NULL, *kind = "note";
  if (!nsys_param_string(call, "text", true, &text) || !nsys_param_string(call, "kind", false, &kind)) return NULL;
  if (!*text) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.text: must not be empty");
  if (strcmp(kind, "note") && strcmp(kind, "hypothesis") && strcmp(kind, "decision"))
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.kind: note, hypothesis or decision");
  nsys_history *h = nsys__history_param(call, false);
  if (!h) return NULL;
  nsys_run r;
  cJSON *res = NULL;
  if (nsys__run_param(call, h, "run", true, NULL, &r)) {
    nsys_run_note n;
    if (nsys_history_add_note(h, r.id, kind, text, &n, &call->task)) {
      res = cJSON_CreateObject();
      cJSON_AddStringToObject(res, "run", r.name);
      cJSON *x = cJSON_AddObjectToObject(res, "note");
      nsys_json_add_i64(x, "id", n.id);
      cJSON_AddStringToObject(x, "kind", n.kind);
      cJSON_AddStringToObject(x, "text", n.text);
      nsys_json_add_i64(x, "createdNs", n.created_ns);
      nsys_run_note_free(&n);
    }
    nsys_run_free(&r);
  }
  nsys_history_close(h);
  return res;
}

/* ---- runs/compare --------------------------------------------------------- */

/* The tag statistics of a run's report (and the stored statistics updated). */
static bool nsys__run_stats(nsys_call *call, nsys_history *h, const nsys_run *r, nsys_rc_stats *out) {
  if (!r->report) return nsys_call_fail(call, NSYS_E_DATA_MISSING, "run %s has no report", r->name), false;
  nsys_profile *p = nsys_profile_open(r->report, &call->task);
  if (!p) return false;
  const nsys_index *ix = nsys_index_get(p, &call->task);
  nsys_src_map *m = ix ? nsys_src_map_build(p, ix, NULL, &call->task) : NULL;
  if (m) {
    nsys_rc_stats_of(m, out);
    nsys_src_map_free(m);
  }
  nsys_profile_release(p);
  if (!m) return false;
  return nsys_history_set_stats(h, r->id, out->coverage, out->tagged_pct, out->tagged_ranges, &call->task);
}

static cJSON *nsys__side_json(const nsys_run *r, const nsys_rc_stats *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", r->name);
  cJSON_AddNumberToObject(o, "coverage", s->coverage);
  cJSON_AddNumberToObject(o, "taggedPct", s->tagged_pct);
  nsys_json_add_i64(o, "taggedRanges", s->tagged_ranges);
  nsys_json_add_i64(o, "tags", s->n_tags);
  nsys_json_add_i64(o, "split", s->split);
  nsys_json_add_i64(o, "kernels", (int64_t)s->kernels);
  cJSON_AddBoolToObject(o, "converged", nsys_rc_converged(s));
  return o;
}

static cJSON *nsys__tag_json(const nsys_rc_tag *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "tag", t->tag);
  cJSON_AddStringToObject(o, "file", t->file);
  nsys_json_add_i64(o, "line", t->line);
  nsys_json_add_i64(o, "ranges", t->ranges);
  nsys_json_add_i64(o, "distinctKernels", t->distinct);
  nsys_json_add_i64(o, "kernels", (int64_t)t->kernels);
  nsys_json_add_i64(o, "totalNs", t->ns);
  return o;
}

static int nsys__innermost_cmp(const void *a, const void *b) {
  const nsys_rc_tag *x = *(const nsys_rc_tag *const *)a, *y = *(const nsys_rc_tag *const *)b;
  if (x->distinct != y->distinct) return x->distinct < y->distinct ? 1 : -1;
  if (x->ns != y->ns) return x->ns < y->ns ? 1 : -1;
  return strcmp(x->tag, y->tag);
}

cJSON *nsys_method_runs_compare(nsys_call *call) {
  nsys_history *h = nsys__history_param(call, false);
  if (!h) return NULL;
  nsys_run rb = {0}, ra = {0};
  nsys_rc_stats sb = {0}, sa = {0};
  cJSON *res = NULL;
  /* before: as asked, else the run `after` was profiled as the after of (profile --before), else the
   * newest run with a report recorded before it */
  const char *before_ref = NULL;
  bool ok = nsys_param_string(call, "before", false, &before_ref) &&
            nsys__run_param(call, h, "after", false, "latest", &ra);
  if (ok && before_ref) ok = nsys__run_param(call, h, "before", false, NULL, &rb);
  else if (ok && ra.before_id > 0) ok = nsys_history_get_id(h, ra.before_id, &rb, &call->task);
  else if (ok) ok = nsys_history_previous(h, &ra, &rb, &call->task);
  ok = ok && nsys__run_stats(call, h, &rb, &sb) && nsys__run_stats(call, h, &ra, &sa);
  nsys_run *all = NULL;
  int n_all = 0;
  if (ok) ok = nsys_history_list(h, 0, &all, &n_all, &call->task);
  if (ok) {
    res = cJSON_CreateObject();
    cJSON_AddItemToObject(res, "before", nsys__side_json(&rb, &sb));
    cJSON_AddItemToObject(res, "after", nsys__side_json(&ra, &sa));
    uint32_t *add = NULL, *rem = NULL, n_add = 0, n_rem = 0;
    nsys_rc_diff(&sb, &sa, &add, &n_add, &rem, &n_rem);
    cJSON *x = cJSON_AddArrayToObject(res, "rangesAdded");
    for (uint32_t i = 0; i < n_add; i++) cJSON_AddItemToArray(x, nsys__tag_json(&sa.tags[add[i]]));
    x = cJSON_AddArrayToObject(res, "rangesRemoved");
    for (uint32_t i = 0; i < n_rem; i++) cJSON_AddItemToArray(x, nsys__tag_json(&sb.tags[rem[i]]));
    /* tags added since before that launched no kernel: to take out again (judged
     * only when the after run traced kernels) */
    x = cJSON_AddArrayToObject(res, "idle");
    for (uint32_t i = 0; sa.kernels && i < n_add; i++)
      if (!sa.tags[add[i]].distinct) cJSON_AddItemToArray(x, nsys__tag_json(&sa.tags[add[i]]));
    free(add), free(rem);
    const nsys_rc_tag **inner = nsys_xmalloc((size_t)(sa.n_tags + 1) * sizeof *inner);
    uint32_t ni = 0;
    for (uint32_t i = 0; i < sa.n_tags; i++)
      if (sa.tags[i].distinct) inner[ni++] = &sa.tags[i];
    qsort(inner, ni, sizeof *inner, nsys__innermost_cmp);
    x = cJSON_AddArrayToObject(res, "innermost");
    for (uint32_t i = 0; i < ni; i++) cJSON_AddItemToArray(x, nsys__tag_json(inner[i]));
    free(inner);
    cJSON_AddBoolToObject(res, "converged", nsys_rc_converged(&sa));
    x = cJSON_AddArrayToObject(res, "history");
    for (int i = n_all - 1; i >= 0; i--) { /* oldest first */
      if (!all[i].has_stats) continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "run", all[i].name);
      nsys_json_add_i64(o, "createdNs", all[i].created_ns);
      cJSON_AddNumberToObject(o, "coverage", all[i].coverage);
      cJSON_AddNumberToObject(o, "taggedPct", all[i].tagged_pct);
      nsys_json_add_i64(o, "taggedRanges", all[i].tagged_ranges);
      cJSON_AddItemToArray(x, o);
    }
  }
  nsys_runs_free(all, n_all);
  nsys_rc_stats_free(&sb), nsys_rc_stats_free(&sa);
  nsys_run_free(&rb), nsys_run_free(&ra);
  nsys_history_close(h);
  return res;
}
