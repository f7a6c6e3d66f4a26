/* search {profileId, query, exact?, kinds?, limit?, start?, end?, instances?, offset?, at?}
 * -> substring, glob or exact-name matches over kernel names (short, demangled and display),
 * NVTX names and, when asked for by kinds, memcpy/memset names and CUDA API names, with
 * per-name counts and total time, and optionally a page of the matching instances in time
 * order (the timeline's next/previous match). docs/protocol.md ("search"), protocol/schemas/search.*. */
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

/* What a search finds: GPU ops by their kind, NVTX ranges, CUDA API calls. */
typedef enum { NSYS__KERNEL, NSYS__NVTX, NSYS__MEMCPY, NSYS__MEMSET, NSYS__API, NSYS__KINDS } nsys__kind;
static const char *const nsys__kind_name[NSYS__KINDS] = {"kernel", "nvtx", "memcpy", "memset", "api"};

typedef struct {
  uint32_t name;   /* kernel short name, NVTX text, copy/set name ("[CUDA memcpy HtoD]"), API name */
  uint32_t count;
  int64_t ns;
  uint32_t example; /* kernels: the demangled name with the most matched GPU time */
  uint8_t kind;     /* nsys__kind */
} nsys__hit;

typedef enum { NSYS__SUBSTRING, NSYS__GLOB, NSYS__EXACT } nsys__mode;

static bool nsys__match(const char *q, nsys__mode mode, const char *s) {
  if (mode == NSYS__EXACT) return strcmp(q, s) == 0;
  if (mode == NSYS__GLOB) return fnmatch(q, s, FNM_CASEFOLD) == 0;
  return strcasestr(s, q) != NULL;
}

/* by total time, then count, then kind and name */
static int nsys__cmp_hit(const void *a, const void *b) {
  const nsys__hit *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
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

/* The op kinds search reports (graph launches are not searched). */
static int nsys__op_kind(uint8_t op_kind) {
  return op_kind == NSYS_OP_KERNEL   ? NSYS__KERNEL
         : op_kind == NSYS_OP_MEMCPY ? NSYS__MEMCPY
         : op_kind == NSYS_OP_MEMSET ? NSYS__MEMSET
                                     : -1;
}

/* {total, offset, names, items}: the instances of ranks [off, off + len) in time order. */
static cJSON *nsys__instances_json(const nsys_index *ix, nsys__inst_vec *iv, size_t off, size_t len) {
  nsys_instance_page(iv->v, iv->n, off, len);
  /* timeline/tracks ids: GPU track index -> its track; a thread's NVTX rows are consecutive by
   * depth; a thread's API row */
  uint32_t nt = nsys_tl_track_count(ix);
  const nsys_tl_track **gpu = nsys_xcalloc(ix->n_tracks + 1, sizeof *gpu);
  const nsys_tl_track **nvtx0 = nsys_xcalloc(ix->n_threads + 1, sizeof *nvtx0);
  const nsys_tl_track **api = nsys_xcalloc(ix->n_threads + 1, sizeof *api);
  for (uint32_t t = 0; t < nt; t++) {
    const nsys_tl_track *tl = nsys_tl_track_at(ix, t);
    if (tl->kind == NSYS_TL_GPU && tl->ref < ix->n_tracks) gpu[tl->ref] = tl;
    else if (tl->kind == NSYS_TL_NVTX && tl->depth == 0 && tl->thread < ix->n_threads) nvtx0[tl->thread] = tl;
    else if (tl->kind == NSYS_TL_API && tl->thread < ix->n_threads) api[tl->thread] = tl;
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
    uint32_t id = in->id, nm;
    int64_t end;
    const char *kind;
    const nsys_tl_track *tl = NULL;
    if (in->kind == NSYS_INST_OP) {
      nm = ix->ops.name[id];
      end = ix->ops.end[id];
      kind = nsys__kind_name[nsys__op_kind(ix->ops.kind[id])];
      tl = gpu[ix->ops.track[id]];
    } else if (in->kind == NSYS_INST_NVTX) {
      nm = ix->nvtx.name[id];
      end = ix->nvtx.end[id];
      kind = "nvtx";
      if (nvtx0[ix->nvtx.thread[id]]) tl = nvtx0[ix->nvtx.thread[id]] + ix->nvtx.depth[id];
    } else {
      nm = ix->api.name[id];
      end = ix->api.end[id];
      kind = "api";
      tl = api[ix->api.thread[id]];
    }
    if (!slot[nm]) {
      cJSON_AddItemToArray(names, cJSON_CreateString(nsys__s(ix, nm)));
      slot[nm] = ++nused;
    }
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "kind", kind);
    nsys_json_add_i64(it, "id", id);
    cJSON_AddStringToObject(it, "track", tl ? tl->id : "");
    nsys_json_add_i64(it, "start", in->start);
    nsys_json_add_i64(it, "end", end);
    nsys_json_add_i64(it, "name", slot[nm] - 1);
    cJSON_AddItemToArray(items, it);
  }
  free(slot);
  free(gpu);
  free(nvtx0);
  free(api);
  return o;
}

/* The hits so far: one per (kind, name), with per-kind name id -> hit + 1 maps. */
typedef struct {
  nsys__hit *v;
  uint32_t n, cap;
  uint32_t *idx[NSYS__KINDS]; /* NULL for the kinds not searched */
} nsys__hits;

static nsys__hit *nsys__hit_of(nsys__hits *h, nsys__kind kind, uint32_t name, uint32_t example) {
  uint32_t *idx = h->idx[kind];
  if (!idx[name]) {
    if (h->n == h->cap) {
      h->cap = h->cap ? h->cap * 2 : 64;
      h->v = nsys_xrealloc(h->v, h->cap * sizeof *h->v);
    }
    h->v[h->n] = (nsys__hit){name, 0, 0, example, (uint8_t)kind};
    idx[name] = ++h->n;
  }
  return &h->v[idx[name] - 1];
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
  bool want[NSYS__KINDS] = {!kinds, !kinds, false, false, false}; /* default: kernels and NVTX */
  if (kinds) {
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, kinds) {
      int found = -1;
      for (int j = 0; j < NSYS__KINDS && cJSON_IsString(it); j++)
        if (strcmp(it->valuestring, nsys__kind_name[j]) == 0) found = j;
      if (found < 0)
        return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                              "params.kinds[%d]: expected \"kernel\", \"nvtx\", \"memcpy\", \"memset\" or \"api\"", k);
      want[found] = true;
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
  nsys__hits hs = {0};
  for (int j = 0; j < NSYS__KINDS; j++)
    if (want[j]) hs.idx[j] = nsys_xcalloc(ns + 1, sizeof(uint32_t));
  int64_t total_count = 0;
  int64_t *full_ns = want[NSYS__KERNEL] ? nsys_xcalloc(ns + 1, sizeof(int64_t)) : NULL; /* matched GPU time per name */
  nsys__inst_vec iv = {0};
  if (want[NSYS__KERNEL] || want[NSYS__MEMCPY] || want[NSYS__MEMSET]) {
    for (uint32_t i = 0; i < ix->ops.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
      int kind = nsys__op_kind(ix->ops.kind[i]);
      if (kind < 0 || !want[kind] || ix->ops.start[i] >= we || ix->ops.end[i] < ws) continue;
      uint32_t sn = ix->ops.name[i], fn = ix->ops.full_name[i];
      if (kind == NSYS__KERNEL ? !NSYS__M(sn) && !NSYS__M(fn) && !NSYS__M(nsys_display_name(ix, fn)) : !NSYS__M(sn))
        continue;
      nsys__hit *h = nsys__hit_of(&hs, (nsys__kind)kind, sn, fn);
      h->count++;
      h->ns += nsys_op_dur(ix, i);
      if (kind == NSYS__KERNEL) {
        full_ns[fn] += nsys_op_dur(ix, i);
        if (full_ns[fn] > full_ns[h->example] || (full_ns[fn] == full_ns[h->example] && fn < h->example))
          h->example = fn; /* the group's demangled name with the most GPU time */
      }
      if (want_inst) nsys__inst_push(&iv, ix->ops.start[i], i, NSYS_INST_OP);
      total_count++;
    }
  }
  if (want[NSYS__NVTX]) {
    for (uint32_t i = 0; i < ix->nvtx.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
      uint32_t nm = ix->nvtx.name[i];
      if (ix->nvtx.start[i] >= we || ix->nvtx.end[i] < ws || !NSYS__M(nm)) continue;
      nsys__hit *h = nsys__hit_of(&hs, NSYS__NVTX, nm, NSYS_STR_NONE);
      h->count++;
      h->ns += ix->nvtx.end[i] - ix->nvtx.start[i];
      if (want_inst) nsys__inst_push(&iv, ix->nvtx.start[i], i, NSYS_INST_NVTX);
      total_count++;
    }
  }
  if (want[NSYS__API]) {
    for (uint32_t i = 0; i < ix->api.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
      uint32_t nm = ix->api.name[i];
      if (ix->api.start[i] >= we || ix->api.end[i] < ws || !NSYS__M(nm)) continue;
      nsys__hit *h = nsys__hit_of(&hs, NSYS__API, nm, NSYS_STR_NONE);
      h->count++;
      h->ns += ix->api.end[i] > ix->api.start[i] ? ix->api.end[i] - ix->api.start[i] : 0;
      if (want_inst) nsys__inst_push(&iv, ix->api.start[i], i, NSYS_INST_API);
      total_count++;
    }
  }
#undef NSYS__M
  nsys__hit *hits = hs.v;
  uint32_t nh = hs.n;
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
    cJSON_AddStringToObject(o, "kind", nsys__kind_name[hits[k].kind]);
    cJSON_AddStringToObject(o, "name", nsys__s(ix, hits[k].name));
    if (hits[k].kind == NSYS__KERNEL) {
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
  for (int j = 0; j < NSYS__KINDS; j++) free(hs.idx[j]);
  free(m);
  free(full_ns);
  nsys_profile_release(p);
  return res;
}
