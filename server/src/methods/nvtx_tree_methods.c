/* nvtx/tree {profileId, start?, end?, device?, thread?, maxDepth?, aggregate?, topKernels?}
 *   -> {roots, nodeCount, rangeCount, aggregated}
 * The tree is computed by index/nvtx_tree.c; this file writes it as JSON text
 * (a whole 1M-kernel profile's tree is ~140 MB). docs/protocol.md ("nvtx/tree"),
 * protocol/schemas/nvtx.tree.*. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "index/nvtx_tree.h"
#include "methods/json_text.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/json_write.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

typedef struct {
  const nsys_index *ix;
  const nsys_nvtx_tree *t;
  nsys_escaped_names *names;
  nsys_strbuf *b;
  bool aggregate;
  int top;
} nsys__tree_out;

static void nsys__tree_node(nsys__tree_out *o, uint32_t id, bool root) {
  const nsys_nvtx_node *n = &o->t->nodes[id];
  nsys_strbuf *b = o->b;
  nsys_escaped_name(o->names, n->name);
  nsys_escaped_name(o->names, n->domain);
  size_t need = 512 + o->names->len[n->name] + o->names->len[n->domain];
  uint32_t top = n->n_kernels < (uint32_t)o->top ? n->n_kernels : (uint32_t)o->top;
  for (uint32_t k = 0; k < top; k++) {
    nsys_escaped_name(o->names, n->kernels[k].name);
    need += 96 + o->names->len[n->kernels[k].name];
  }
  nsys_strbuf_reserve(b, need);
  char *w = b->data + b->len;
  w = NSYS_TEXT_LIT(w, "{\"name\":");
  memcpy(w, o->names->esc[n->name], o->names->len[n->name]);
  w += o->names->len[n->name];
  w = NSYS_TEXT_LIT(w, ",\"domain\":");
  memcpy(w, o->names->esc[n->domain], o->names->len[n->domain]);
  w += o->names->len[n->domain];
  w = NSYS_TEXT_LIT(w, ",\"start\":");
  w = nsys_text_i64(w, n->start);
  w = NSYS_TEXT_LIT(w, ",\"end\":");
  w = nsys_text_i64(w, n->end);
  if (n->gpu_start != INT64_MAX) {
    w = NSYS_TEXT_LIT(w, ",\"gpuStart\":");
    w = nsys_text_i64(w, n->gpu_start);
    w = NSYS_TEXT_LIT(w, ",\"gpuEnd\":");
    w = nsys_text_i64(w, n->gpu_end);
  } else {
    w = NSYS_TEXT_LIT(w, ",\"gpuStart\":null,\"gpuEnd\":null");
  }
  w = NSYS_TEXT_LIT(w, ",\"opCount\":");
  w = nsys_text_i64(w, (int64_t)n->op_count);
  w = NSYS_TEXT_LIT(w, ",\"kernelNs\":");
  w = nsys_text_i64(w, n->kernel_ns);
  w = NSYS_TEXT_LIT(w, ",\"depth\":");
  w = nsys_text_i64(w, n->depth);
  if (o->aggregate) {
    w = NSYS_TEXT_LIT(w, ",\"instances\":");
    w = nsys_text_i64(w, n->instances);
    w = NSYS_TEXT_LIT(w, ",\"cpuNs\":");
    w = nsys_text_i64(w, n->cpu_ns);
  } else {
    w = NSYS_TEXT_LIT(w, ",\"id\":");
    w = nsys_text_i64(w, n->range);
  }
  if (root) {
    const nsys_host_thread *th = &o->ix->threads[n->thread];
    w = NSYS_TEXT_LIT(w, ",\"pid\":");
    w = nsys_text_i64(w, th->pid);
    w = NSYS_TEXT_LIT(w, ",\"tid\":");
    w = nsys_text_i64(w, th->tid);
  }
  w = NSYS_TEXT_LIT(w, ",\"topKernels\":[");
  for (uint32_t k = 0; k < top; k++) {
    if (k) *w++ = ',';
    w = NSYS_TEXT_LIT(w, "{\"name\":");
    uint32_t nm = n->kernels[k].name;
    memcpy(w, o->names->esc[nm], o->names->len[nm]);
    w += o->names->len[nm];
    w = NSYS_TEXT_LIT(w, ",\"count\":");
    w = nsys_text_i64(w, n->kernels[k].count);
    w = NSYS_TEXT_LIT(w, ",\"ns\":");
    w = nsys_text_i64(w, n->kernels[k].ns);
    *w++ = '}';
  }
  w = NSYS_TEXT_LIT(w, "],\"children\":[");
  *w = '\0';
  b->len = (size_t)(w - b->data);
  for (uint32_t c = 0; c < n->n_children; c++) {
    if (c) nsys_strbuf_putc(b, ',');
    nsys__tree_node(o, n->children[c], false);
  }
  nsys_strbuf_append(b, "]}", 2);
}

/* "pid:tid" or a tid */
static bool nsys__parse_thread(nsys_call *call, nsys_nvtx_tree_opts *o) {
  const cJSON *v = NULL;
  if (!nsys_param_any(call, "thread", false, &v)) return false;
  if (!v) return true;
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 0xFFFFFF &&
      v->valuedouble == (double)(uint32_t)v->valuedouble) {
    o->has_thread = true;
    o->thread_tid = (uint32_t)v->valuedouble;
    return true;
  }
  unsigned pid = 0, tid = 0;
  char extra;
  if (cJSON_IsString(v) && sscanf(v->valuestring, "%u:%u%c", &pid, &tid, &extra) == 2) {
    o->has_thread = o->has_thread_pid = true;
    o->thread_pid = pid;
    o->thread_tid = tid;
    return true;
  }
  nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.thread: expected a tid or \"pid:tid\"");
  return false;
}

cJSON *nsys_method_nvtx_tree(nsys_call *call) {
  nsys_nvtx_tree_opts o;
  memset(&o, 0, sizeof o);
  o.max_depth = -1;
  int64_t start = INT64_MIN, end = INT64_MAX, device = -1, max_depth = -1, top = 5;
  bool aggregate = false;
  if (!nsys_param_int64(call, NSYS_P_NVTX_TREE_START, &start) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_END, &end) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_DEVICE, &device) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_MAX_DEPTH, &max_depth) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_TOP_KERNELS, &top) ||
      !nsys_param_bool(call, "aggregate", false, &aggregate) || !nsys__parse_thread(call, &o))
    return NULL;
  if (start != INT64_MIN || end != INT64_MAX) {
    if (end < start) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must not be before params.start");
    o.has_window = true;
    o.start = start;
    o.end = end;
  }
  if (device >= 0) {
    o.has_device = true;
    o.device = (int32_t)device;
  }
  o.max_depth = (int)max_depth;
  o.aggregate = aggregate;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  nsys_call_progress_begin(call, "nvtx/tree");
  nsys_nvtx_tree *t = nsys_nvtx_tree_build(ix, &o, call);
  if (!t) {
    nsys_profile_release(p);
    return NULL;
  }
  nsys_escaped_names names = {&ix->strings, NULL, NULL};
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys__tree_out out = {ix, t, &names, &b, aggregate, (int)top};
  nsys_strbuf_reserve(&b, (size_t)t->n_nodes * (200 + 90 * (size_t)(top < 5 ? top : 5)) + 64);
  nsys_strbuf_putc(&b, '[');
  for (uint32_t r = 0; r < t->n_roots; r++) {
    if (r) nsys_strbuf_putc(&b, ',');
    nsys__tree_node(&out, t->roots[r], true);
  }
  nsys_strbuf_putc(&b, ']');
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "roots", nsys_json_raw_take(&b));
  cJSON_AddNumberToObject(res, "nodeCount", t->n_nodes);
  cJSON_AddNumberToObject(res, "rangeCount", t->n_ranges_considered);
  cJSON_AddBoolToObject(res, "aggregated", aggregate);
  nsys_strbuf_free(&b);
  nsys_escaped_names_free(&names);
  nsys_nvtx_tree_free(t);
  nsys_profile_release(p);
  return res;
}
