/* search {profileId, query, exact?, kinds?, limit?, start?, end?, instances?, offset?, at?}
 * -> substring, glob or exact-name matches over kernel names (short, demangled and display)
 * and NVTX names, with per-name counts and total time, and optionally a page of
 * the matching instances in time order (the timeline's next/previous match).
 * docs/protocol.md ("search"), protocol/schemas/search.*. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "index/instance_page.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

typedef struct {
  uint32_t name;   /* display name (kernel short name or NVTX text) */
  uint32_t count;
  int64_t ns;
  uint32_t example; /* kernels: the demangled name with the most matched GPU time */
  bool is_nvtx;
} nsys__hit;

typedef enum { NSYS__SUBSTRING, NSYS__GLOB, NSYS__EXACT } nsys__mode;

static bool nsys__match(const char *q, nsys__mode mode, const char *s) {
  if (mode == NSYS__EXACT) return strcmp(q, s) == 0;
  if (mode == NSYS__GLOB) return fnmatch(q, s, FNM_CASEFOLD) == 0;
  return strcasestr(s, q) != NULL;
}

static int nsys__cmp_hit(const void *a, const void *b) {
  const nsys__hit *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

typedef struct {
  nsys_instance *v;
  size_t n, cap;
} nsys__inst_vec;

static void nsys__inst_push(nsys__inst_vec *iv, int64_t start, uint32_t id, uint8_t kind) {
  if (iv->n == iv->cap) {
    iv->cap = iv->cap ? iv->cap * 2 : 256;
    iv->v = nsys_xrealloc(iv->v, iv->cap * sizeof *iv->v);
  }
  iv->v[iv->n++] = (nsys_instance){start, id, kind};
}

/* {total, offset, names, items}: the instances of ranks [off, off + len) in time order. */
static cJSON *nsys__instances_json(const nsys_index *ix, nsys__inst_vec *iv, size_t off, size_t len) {
  nsys_instance_page(iv->v, iv->n, off, len);
  /* timeline/tracks ids: GPU track index -> its track; a thread's NVTX rows are consecutive by depth */
  uint32_t nt = nsys_tl_track_count(ix);
  const nsys_tl_track **gpu = nsys_xcalloc(ix->n_tracks + 1, sizeof *gpu);
  const nsys_tl_track **nvtx0 = nsys_xcalloc(ix->n_threads + 1, sizeof *nvtx0);
  for (uint32_t t = 0; t < nt; t++) {
    const nsys_tl_track *tl = nsys_tl_track_at(ix, t);
    if (tl->kind == NSYS_TL_GPU && tl->ref < ix->n_tracks) gpu[tl->ref] = tl;
    else if (tl->kind == NSYS_TL_NVTX && tl->depth == 0 && tl->thread < ix->n_threads) nvtx0[tl->thread] = tl;
  }
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "total", (int64_t)iv->n);
  nsys_json_add_i64(o, "offset", (int64_t)off);
  cJSON *names = cJSON_AddArrayToObject(o, "names");
  cJSON *items = cJSON_AddArrayToObject(o, "items");
  uint32_t *slot = nsys_xcalloc((size_t)ix->strings.count + 1, sizeof *slot); /* name id -> index in names + 1 */
  uint32_t nused = 0;
  for (size_t k = off; k < iv->n && k < off + len; k++) {
    const nsys_instance *in = &iv->v[k];
    bool op = in->kind == NSYS_INST_OP;
    uint32_t nm = op ? ix->ops.name[in->id] : ix->nvtx.name[in->id];
    const nsys_tl_track *tl = NULL;
    if (op) tl = gpu[ix->ops.track[in->id]];
    else if (nvtx0[ix->nvtx.thread[in->id]]) tl = nvtx0[ix->nvtx.thread[in->id]] + ix->nvtx.depth[in->id];
    if (!slot[nm]) {
      cJSON_AddItemToArray(names, cJSON_CreateString(nsys__s(ix, nm)));
      slot[nm] = ++nused;
    }
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "kind", op ? "kernel" : "nvtx");
    nsys_json_add_i64(it, "id", in->id);
    cJSON_AddStringToObject(it, "track", tl ? tl->id : "");
    nsys_json_add_i64(it, "start", in->start);
    nsys_json_add_i64(it, "end", op ? ix->ops.end[in->id] : ix->nvtx.end[in->id]);
    nsys_json_add_i64(it, "name", slot[nm] - 1);
    cJSON_AddItemToArray(items, it);
  }
  free(slot);
  free(gpu);
  free(nvtx0);
  return o;
}

cJSON *nsys_method_search(nsys_call *call) {
  const char *q = NULL;
  const cJSON *kinds = NULL;
  int64_t limit = 50, want_inst = 0, offset = 0, at = 0, ws = INT64_MIN, we = INT64_MAX;
  bool exact = false;
  if (!nsys_param_string(call, "query", true, &q) || !nsys_param_array(call, "kinds", false, &kinds) ||
      !nsys_param_bool(call, "exact", false, &exact) ||
      !nsys_param_int64(call, NSYS_P_SEARCH_LIMIT, &limit) ||
      !nsys_param_int64(call, NSYS_P_SEARCH_INSTANCES, &want_inst) ||
      !nsys_param_int64(call, NSYS_P_SEARCH_OFFSET, &offset) || !nsys_param_int64(call, NSYS_P_SEARCH_AT, &at) ||
      !nsys_param_int64(call, NSYS_P_SEARCH_START, &ws) || !nsys_param_int64(call, NSYS_P_SEARCH_END, &we))
    return NULL;
  bool has_at = cJSON_GetObjectItemCaseSensitive(call->params, "at") != NULL;
  if (!q[0]) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.query: must not be empty");
  if (we <= ws) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must be greater than params.start");
  bool want_k = !kinds, want_n = !kinds;
  if (kinds) {
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, kinds) {
      if (cJSON_IsString(it) && strcmp(it->valuestring, "kernel") == 0) want_k = true;
      else if (cJSON_IsString(it) && strcmp(it->valuestring, "nvtx") == 0) want_n = true;
      else return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.kinds[%d]: expected \"kernel\" or \"nvtx\"", k);
      k++;
    }
  }
  /* exact: the whole name, case-sensitive (a row of top_kernels or nvtx/tree names its kernels or ranges) */
  nsys__mode mode = exact ? NSYS__EXACT : strpbrk(q, "*?[") ? NSYS__GLOB : NSYS__SUBSTRING;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  nsys_call_progress_begin(call, "search");
  uint32_t ns = ix->strings.count;
  /* per string id: 0 unknown, 1 match, 2 no match */
  uint8_t *m = nsys_xcalloc(ns + 1, 1);
#define NSYS__M(id) (m[id] ? m[id] == 1 : (m[id] = nsys__match(q, mode, nsys__s(ix, id)) ? 1 : 2) == 1)
  uint32_t *kidx = nsys_xmalloc((ns + 1) * sizeof(uint32_t)); /* name id -> hit + 1 */
  uint32_t *nidx = nsys_xmalloc((ns + 1) * sizeof(uint32_t));
  memset(kidx, 0, (ns + 1) * sizeof(uint32_t));
  memset(nidx, 0, (ns + 1) * sizeof(uint32_t));
  nsys__hit *hits = NULL;
  uint32_t nh = 0, caph = 0;
  int64_t total_count = 0;
  int64_t *full_ns = want_k ? nsys_xcalloc(ns + 1, sizeof(int64_t)) : NULL; /* matched GPU time per name */
  nsys__inst_vec iv = {0};
  if (want_k) {
    for (uint32_t i = 0; i < ix->ops.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
      if (ix->ops.kind[i] != NSYS_OP_KERNEL || ix->ops.start[i] >= we || ix->ops.end[i] < ws) continue;
      uint32_t sn = ix->ops.name[i], fn = ix->ops.full_name[i];
      if (!NSYS__M(sn) && !NSYS__M(fn) && !NSYS__M(nsys_display_name(ix, fn))) continue;
      if (!kidx[sn]) {
        if (nh == caph) {
          caph = caph ? caph * 2 : 64;
          hits = nsys_xrealloc(hits, caph * sizeof *hits);
        }
        hits[nh] = (nsys__hit){sn, 0, 0, fn, false};
        kidx[sn] = ++nh;
      }
      nsys__hit *h = &hits[kidx[sn] - 1];
      h->count++;
      h->ns += nsys_op_dur(ix, i);
      full_ns[fn] += nsys_op_dur(ix, i);
      if (full_ns[fn] > full_ns[h->example] || (full_ns[fn] == full_ns[h->example] && fn < h->example))
        h->example = fn; /* the group's demangled name with the most GPU time */
      if (want_inst) nsys__inst_push(&iv, ix->ops.start[i], i, NSYS_INST_OP);
      total_count++;
    }
  }
  if (want_n) {
    for (uint32_t i = 0; i < ix->nvtx.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
      uint32_t nm = ix->nvtx.name[i];
      if (ix->nvtx.start[i] >= we || ix->nvtx.end[i] < ws || !NSYS__M(nm)) continue;
      if (!nidx[nm]) {
        if (nh == caph) {
          caph = caph ? caph * 2 : 64;
          hits = nsys_xrealloc(hits, caph * sizeof *hits);
        }
        hits[nh] = (nsys__hit){nm, 0, 0, NSYS_STR_NONE, true};
        nidx[nm] = ++nh;
      }
      nsys__hit *h = &hits[nidx[nm] - 1];
      h->count++;
      h->ns += ix->nvtx.end[i] - ix->nvtx.start[i];
      if (want_inst) nsys__inst_push(&iv, ix->nvtx.start[i], i, NSYS_INST_NVTX);
      total_count++;
    }
  }
#undef NSYS__M
  cJSON *res = NULL;
  if (nsys_call_cancelled(call)) { /* cut short: not an answer */
    nsys_call_fail_cancelled(call);
    goto done;
  }
  if (nh) qsort(hits, nh, sizeof *hits, nsys__cmp_hit);
  res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "query", q);
  cJSON_AddStringToObject(res, "mode", mode == NSYS__EXACT ? "exact" : mode == NSYS__GLOB ? "glob" : "substring");
  cJSON *arr = cJSON_AddArrayToObject(res, "results");
  for (uint32_t k = 0; k < nh && k < (uint64_t)limit; k++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", hits[k].is_nvtx ? "nvtx" : "kernel");
    cJSON_AddStringToObject(o, "name", nsys__s(ix, hits[k].name));
    if (!hits[k].is_nvtx) {
      cJSON_AddStringToObject(o, "demangledName", nsys__s(ix, hits[k].example));
      cJSON_AddStringToObject(o, "displayName", nsys__s(ix, nsys_display_name(ix, hits[k].example)));
    }
    cJSON_AddNumberToObject(o, "count", hits[k].count);
    nsys_json_add_i64(o, "totalNs", hits[k].ns);
    cJSON_AddItemToArray(arr, o);
  }
  cJSON_AddNumberToObject(res, "distinct", nh);
  cJSON_AddNumberToObject(res, "matches", (double)total_count);
  cJSON_AddBoolToObject(res, "truncated", nh > (uint64_t)limit);
  if (want_inst) {
    size_t off = has_at ? nsys_instance_rank(iv.v, iv.n, at) : (size_t)offset;
    cJSON_AddItemToObject(res, "instances", nsys__instances_json(ix, &iv, off, (size_t)want_inst));
  }
done:
  free(iv.v);
  free(hits);
  free(kidx);
  free(nidx);
  free(m);
  free(full_ns);
  nsys_profile_release(p);
  return res;
}
