/* nvtx/tree {profileId, mode?, parent?, start?, end?, device?, thread?, limit?,
 *            cursor?, topKernels?, maxDepth?, maxBytes?, aggregate?}
 *   -> {mode, aggregated, parent, nodes, total, next, truncated, nodeCount, rangeCount?}
 * One level of the tree (the roots, or the children of `parent`), paged by
 * limit/cursor and capped at maxBytes; with maxDepth, each node's subtree down
 * to that depth. The trees are precomputed by index/nvtx_tree.c; this file
 * writes them as JSON text. docs/protocol.md ("nvtx/tree"), protocol/schemas/nvtx.tree.*. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "index/nvtx_tree.h"
#include "methods/json_text.h"
#include "methods/reply_limit.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/json_write.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

#define NSYS__TREE_LIMIT 200 /* nodes per level and reply, by default */

typedef struct {
  const nsys_index *ix;
  const nsys_nvtx_tree *t;
  nsys_escaped_names names, local; /* the index's strings; the tree's op names */
  nsys_strbuf *b;
  uint32_t top;
  int max_depth;                   /* -1: one level, no children arrays */
  size_t max_bytes;
  bool over;                       /* a subtree went past max_bytes */
  uint64_t written;                /* nodes visited (cancellation polls) */
  uint64_t count;                  /* nodes in the reply */
  nsys_kernel_stat *kbuf;
  uint32_t *kids;                  /* scratch for child lists, per depth (grown) */
  nsys_call *call;
  bool cancelled;
} nsys__tree_out;

static const char *nsys__esc(nsys__tree_out *o, const nsys_strtab *tab, uint32_t id, size_t *len) {
  nsys_escaped_names *n = tab == &o->ix->strings ? &o->names : &o->local;
  n->tab = tab;
  const char *s = nsys_escaped_name(n, id);
  *len = nsys_escaped_name_len(n, id);
  return s;
}

static char *nsys__put_i64(char *w, const char *key_lit, size_t key_len, int64_t v) {
  memcpy(w, key_lit, key_len);
  return nsys_text_i64(w + key_len, v);
}
#define NSYS__KEY(w, lit, v) nsys__put_i64((w), (lit), sizeof(lit) - 1, (v))

/* The node's fields, up to (not including) "children" and the closing brace. */
static void nsys__node_head(nsys__tree_out *o, const nsys_nvtx_node *n) {
  nsys_strbuf *b = o->b;
  bool agg = nsys_nvtx_tree_aggregated(o->t);
  size_t name_len, dom_len;
  const char *name = nsys__esc(o, n->name_tab, n->name, &name_len);
  const char *dom = nsys__esc(o, &o->ix->strings, n->domain, &dom_len);
  uint32_t top = nsys_nvtx_tree_top_kernels(o->t, n->id, o->top, o->kbuf);
  size_t need = 640 + 2 * name_len + dom_len;
  for (uint32_t k = 0; k < top; k++) {
    size_t l;
    nsys__esc(o, &o->ix->strings, o->kbuf[k].name, &l);
    need += 96 + l;
  }
  nsys_strbuf_reserve(b, need);
  char *w = b->data + b->len;
  w = NSYS__KEY(w, "{\"id\":", n->id);
  w = NSYS_TEXT_LIT(w, ",\"name\":");
  memcpy(w, name, name_len);
  w += name_len;
  w = NSYS_TEXT_LIT(w, ",\"domain\":");
  memcpy(w, dom, dom_len);
  w += dom_len;
  w = NSYS__KEY(w, ",\"depth\":", n->depth);
  w = NSYS__KEY(w, ",\"start\":", n->start);
  w = NSYS__KEY(w, ",\"end\":", n->end);
  if (n->gpu_start != INT64_MAX) {
    w = NSYS__KEY(w, ",\"gpuStart\":", n->gpu_start);
    w = NSYS__KEY(w, ",\"gpuEnd\":", n->gpu_end);
  } else {
    w = NSYS_TEXT_LIT(w, ",\"gpuStart\":null,\"gpuEnd\":null");
  }
  w = NSYS__KEY(w, ",\"opCount\":", (int64_t)n->op_count);
  w = NSYS__KEY(w, ",\"kernelNs\":", n->kernel_ns);
  w = NSYS__KEY(w, ",\"childCount\":", nsys_nvtx_tree_child_count(o->t, n->id));
  if (agg) {
    w = NSYS__KEY(w, ",\"instances\":", n->instances);
    w = NSYS__KEY(w, ",\"cpuNs\":", n->cpu_ns);
    w = NSYS__KEY(w, ",\"minNs\":", n->min_ns);
    w = NSYS__KEY(w, ",\"medianNs\":", n->median_ns);
    w = NSYS__KEY(w, ",\"maxNs\":", n->max_ns);
  } else {
    const nsys_host_thread *th = &o->ix->threads[n->thread];
    w = NSYS__KEY(w, ",\"pid\":", th->pid);
    w = NSYS__KEY(w, ",\"tid\":", th->tid);
    size_t op_len;
    int64_t seq, op_id;
    const char *text = nsys_strtab_get(n->name_tab, n->name);
    if (n->name < n->name_tab->count &&
        nsys_nvtx_autograd(text, n->name_tab->lens[n->name], &op_len, &seq, &op_id)) {
      /* the op name: the escaped name cut before ", seq = " (no escapes
       * after the cut point change its prefix) */
      nsys_strbuf tmp;
      nsys_strbuf_init(&tmp);
      char *cut = nsys_xstrndup(text, op_len);
      nsys_json_escape(&tmp, cut);
      free(cut);
      w = NSYS_TEXT_LIT(w, ",\"op\":");
      memcpy(w, tmp.data, tmp.len);
      w += tmp.len;
      nsys_strbuf_free(&tmp);
      if (seq >= 0) w = NSYS__KEY(w, ",\"seq\":", seq);
      if (op_id >= 0) w = NSYS__KEY(w, ",\"opId\":", op_id);
    }
  }
  w = NSYS_TEXT_LIT(w, ",\"topKernels\":[");
  for (uint32_t k = 0; k < top; k++) {
    if (k) *w++ = ',';
    size_t l;
    const char *kn = nsys__esc(o, &o->ix->strings, o->kbuf[k].name, &l);
    w = NSYS_TEXT_LIT(w, "{\"name\":");
    memcpy(w, kn, l);
    w += l;
    w = NSYS__KEY(w, ",\"count\":", o->kbuf[k].count);
    w = NSYS__KEY(w, ",\"ns\":", o->kbuf[k].ns);
    *w++ = '}';
  }
  *w++ = ']';
  *w = '\0';
  b->len = (size_t)(w - b->data);
}

/* Node `id` and, within maxDepth and the byte budget, its whole subtree.
 * Returns false when the subtree went past the budget (the caller rolls
 * back) or the request was cancelled. */
static bool nsys__node(nsys__tree_out *o, uint32_t id, bool children) {
  if ((++o->written & 1023) == 0 && nsys_call_cancelled(o->call)) {
    o->cancelled = true;
    return false;
  }
  nsys_nvtx_node n;
  nsys_nvtx_tree_node(o->t, id, &n);
  nsys__node_head(o, &n);
  if (children && o->b->len > o->max_bytes) {
    o->over = true;
    return false;
  }
  if (children && o->max_depth >= 0) {
    nsys_strbuf_append(o->b, ",\"children\":[", 13);
    if ((int)n.depth < o->max_depth) {
      uint32_t total = 0;
      nsys_nvtx_tree_level(o->t, id, 0, 0, NULL, &total);
      uint32_t *kids = nsys_xmalloc(((size_t)total + 1) * sizeof(uint32_t));
      uint32_t k = nsys_nvtx_tree_level(o->t, id, 0, total, kids, &total);
      for (uint32_t i = 0; i < k; i++) {
        if (i) nsys_strbuf_putc(o->b, ',');
        if (!nsys__node(o, kids[i], true)) {
          free(kids);
          return false;
        }
      }
      free(kids);
    }
    nsys_strbuf_putc(o->b, ']');
  }
  nsys_strbuf_putc(o->b, '}');
  o->count++;
  return true;
}

/* "pid:tid" or a tid */
static bool nsys__parse_thread(nsys_call *call, nsys_nvtx_filter *f) {
  const cJSON *v = NULL;
  if (!nsys_param_any(call, "thread", false, &v)) return false;
  if (!v) return true;
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 0xFFFFFF &&
      v->valuedouble == (double)(uint32_t)v->valuedouble) {
    f->has_tid = true;
    f->tid = (uint32_t)v->valuedouble;
    return true;
  }
  unsigned pid = 0, tid = 0;
  char extra;
  if (cJSON_IsString(v) && sscanf(v->valuestring, "%u:%u%c", &pid, &tid, &extra) == 2) {
    f->has_tid = f->has_pid = true;
    f->pid = pid;
    f->tid = tid;
    return true;
  }
  nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.thread: expected a tid or \"pid:tid\"");
  return false;
}

/* mode, with the older `aggregate: true` as a synonym of mode "aggregate" */
static bool nsys__parse_mode(nsys_call *call, bool *aggregate) {
  const char *mode = NULL;
  bool agg = false, has_agg = false;
  const cJSON *a = NULL;
  if (!nsys_param_string(call, "mode", false, &mode) || !nsys_param_any(call, "aggregate", false, &a) ||
      (a && !nsys_param_bool(call, "aggregate", false, &agg)))
    return false;
  has_agg = a != NULL;
  if (mode && strcmp(mode, "ranges") != 0 && strcmp(mode, "aggregate") != 0) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.mode: expected \"ranges\" or \"aggregate\"");
    return false;
  }
  bool m = mode && strcmp(mode, "aggregate") == 0;
  if (mode && has_agg && m != agg) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.aggregate: contradicts params.mode");
    return false;
  }
  *aggregate = mode ? m : agg;
  return true;
}

cJSON *nsys_method_nvtx_tree(nsys_call *call) {
  nsys_nvtx_filter f;
  memset(&f, 0, sizeof f);
  f.device = -1;
  int64_t start = INT64_MIN, end = INT64_MAX, device = -1, max_depth = -1, top = 5, parent = -1;
  int64_t limit = NSYS__TREE_LIMIT, max_bytes = NSYS_REPLY_MAX_BYTES;
  bool aggregate = false;
  const char *cursor = NULL;
  if (!nsys_param_int64(call, NSYS_P_NVTX_TREE_START, &start) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_END, &end) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_DEVICE, &device) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_MAX_DEPTH, &max_depth) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_TOP_KERNELS, &top) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_PARENT, &parent) ||
      !nsys_param_int64(call, NSYS_P_NVTX_TREE_LIMIT, &limit) ||
      !nsys_reply_max_bytes(call, &max_bytes) || !nsys_param_string(call, "cursor", false, &cursor) ||
      !nsys__parse_mode(call, &aggregate) || !nsys__parse_thread(call, &f))
    return NULL;
  if (start != INT64_MIN || end != INT64_MAX) {
    if (end < start) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must not be before params.start");
    f.has_window = true;
    f.start = start;
    f.end = end;
  }
  if (device >= 0) f.device = (int32_t)device;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  nsys_call_progress_begin(call, "nvtx/tree");
  nsys_nvtx_tree *t = nsys_nvtx_tree_get(ix, &f, aggregate, &call->task);
  if (!t) {
    nsys_profile_release(p);
    return NULL;
  }
  cJSON *res = NULL;
  if (parent >= 0 && !nsys_nvtx_tree_has(t, (uint32_t)parent)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.parent: no node %lld in this tree", (long long)parent);
    goto done;
  }
  /* the continuation token names the listing it continues */
  uint64_t key = nsys_fnv1a(&f, sizeof f, 1469598103934665603ull);
  int64_t key_fields[6] = {parent, max_depth, aggregate, top, (int64_t)ix->nvtx.n, ix->span_start};
  key = nsys_fnv1a(key_fields, sizeof key_fields, key);
  uint32_t total = 0, pos = 0;
  uint64_t pos64 = 0;
  nsys_nvtx_tree_level(t, parent, 0, 0, NULL, &total);
  if (cursor && (!nsys_cursor_decode(cursor, key, &pos64) || pos64 >= total)) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.cursor: not a continuation of this request");
    goto done;
  }
  pos = (uint32_t)pos64;
  uint32_t want = total - pos < (uint64_t)limit ? total - pos : (uint32_t)limit;
  uint32_t *ids = nsys_xmalloc(((size_t)want + 1) * sizeof(uint32_t));
  uint32_t k = nsys_nvtx_tree_level(t, parent, pos, want, ids, &total);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys__tree_out o = {.ix = ix, .t = t, .names = {&ix->strings, NULL, NULL}, .b = &b, .top = (uint32_t)top,
                      .max_depth = (int)max_depth, .kbuf = nsys_xmalloc(((size_t)top + 1) * sizeof(nsys_kernel_stat)),
                      .call = call};
  /* the envelope's other fields take well under 512 bytes */
  o.max_bytes = (size_t)max_bytes > 512 ? (size_t)max_bytes - 512 : 0;
  uint32_t done_n = 0;
  bool cut = false;
  nsys_strbuf_putc(&b, '[');
  for (uint32_t i = 0; i < k; i++) {
    size_t mark = b.len;
    uint64_t count = o.count;
    if (i) nsys_strbuf_putc(&b, ',');
    o.over = false;
    if (nsys__node(&o, ids[i], true)) {
      done_n++;
      continue;
    }
    if (o.cancelled) break;
    b.len = mark; /* past the budget: drop this node */
    o.count = count;
    cut = true;
    if (i == 0) { /* always one node: without its subtree (its childCount says what to ask for) */
      nsys__node(&o, ids[i], false);
      done_n++;
    }
    break;
  }
  free(ids);
  free(o.kbuf);
  if (o.local.tab) nsys_escaped_names_free(&o.local);
  nsys_escaped_names_free(&o.names);
  if (o.cancelled) {
    nsys_strbuf_free(&b);
    nsys_call_fail_cancelled(call);
    goto done;
  }
  nsys_strbuf_putc(&b, ']');
  uint32_t next = pos + done_n;
  res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "mode", aggregate ? "aggregate" : "ranges");
  cJSON_AddBoolToObject(res, "aggregated", aggregate);
  cJSON_AddItemToObject(res, "parent", parent >= 0 ? nsys_json_i64(parent) : cJSON_CreateNull());
  cJSON_AddItemToObject(res, "nodes", nsys_json_raw_take(&b));
  cJSON_AddNumberToObject(res, "total", total);
  if (next < total) {
    char tok[NSYS_CURSOR_LEN + 1];
    nsys_cursor_encode(tok, key, next);
    cJSON_AddStringToObject(res, "next", tok);
  } else {
    cJSON_AddNullToObject(res, "next");
  }
  cJSON_AddBoolToObject(res, "truncated", next < total || cut);
  cJSON_AddNumberToObject(res, "nodeCount", (double)o.count);
  if (aggregate) cJSON_AddNumberToObject(res, "rangeCount", nsys_nvtx_tree_range_count(t));
  nsys_strbuf_free(&b);
done:
  nsys_nvtx_tree_release(t);
  nsys_profile_release(p);
  return res;
}
