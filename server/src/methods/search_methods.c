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
#include "index/search_index.h"
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

/* What the matched instances add up to: the hits, the per-name GPU time, the instances. */
typedef struct {
  const nsys_index *ix;
  nsys__hits hs;
  int64_t *full_ns; /* kernels: matched GPU time per demangled name */
  nsys__inst_vec iv;
  bool want_inst;
  int64_t total_count;
  nsys_call *call;
  uint32_t kind;    /* nsys__kind of what nsys__emit_* receive */
  uint32_t polled;  /* instances since the last cancellation check */
} nsys__acc;

static void nsys__take_op(nsys__acc *a, uint32_t i, nsys__kind kind) {
  const nsys_index *ix = a->ix;
  uint32_t sn = ix->ops.name[i], fn = ix->ops.full_name[i];
  nsys__hit *h = nsys__hit_of(&a->hs, kind, sn, fn);
  h->count++;
  h->ns += nsys_op_dur(ix, i);
  if (kind == NSYS__KERNEL) {
    a->full_ns[fn] += nsys_op_dur(ix, i);
    if (a->full_ns[fn] > a->full_ns[h->example] || (a->full_ns[fn] == a->full_ns[h->example] && fn < h->example))
      h->example = fn; /* the group's demangled name with the most GPU time */
  }
  if (a->want_inst) nsys__inst_push(&a->iv, ix->ops.start[i], i, NSYS_INST_OP);
  a->total_count++;
}

static void nsys__take_nvtx(nsys__acc *a, uint32_t i) {
  const nsys_index *ix = a->ix;
  nsys__hit *h = nsys__hit_of(&a->hs, NSYS__NVTX, ix->nvtx.name[i], NSYS_STR_NONE);
  h->count++;
  h->ns += ix->nvtx.end[i] - ix->nvtx.start[i];
  if (a->want_inst) nsys__inst_push(&a->iv, ix->nvtx.start[i], i, NSYS_INST_NVTX);
  a->total_count++;
}

static void nsys__take_api(nsys__acc *a, uint32_t i) {
  const nsys_index *ix = a->ix;
  nsys__hit *h = nsys__hit_of(&a->hs, NSYS__API, ix->api.name[i], NSYS_STR_NONE);
  h->count++;
  h->ns += ix->api.end[i] > ix->api.start[i] ? ix->api.end[i] - ix->api.start[i] : 0;
  if (a->want_inst) nsys__inst_push(&a->iv, ix->api.start[i], i, NSYS_INST_API);
  a->total_count++;
}

/* nsys_sx_window's callback: one matched instance of source a->kind; false once cancelled. */
static bool nsys__emit(void *ctx, uint32_t id) {
  nsys__acc *a = ctx;
  if ((++a->polled & 0xFFFF) == 0 && nsys_call_cancelled(a->call)) return false;
  if (a->kind == NSYS__NVTX) nsys__take_nvtx(a, id);
  else if (a->kind == NSYS__API) nsys__take_api(a, id);
  else nsys__take_op(a, id, (nsys__kind)a->kind);
  return true;
}

/* NSYS_AI_SEARCH_INDEX=0: windowed searches scan every instance as unwindowed ones do
 * (comparisons, benchmarks); the answers are the same byte for byte. */
static bool nsys__use_search_index(void) {
  const char *e = getenv("NSYS_AI_SEARCH_INDEX");
  return !(e && strcmp(e, "0") == 0);
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
  nsys__acc acc = {.ix = ix, .want_inst = want_inst > 0, .call = call};
  for (int j = 0; j < NSYS__KINDS; j++)
    if (want[j]) acc.hs.idx[j] = nsys_xcalloc(ns + 1, sizeof(uint32_t));
  acc.full_ns = want[NSYS__KERNEL] ? nsys_xcalloc(ns + 1, sizeof(int64_t)) : NULL;
  /* A window: each matching name's instances from the search index, O(log n + k) (built once per
   * profile and source); no window: every instance is a match candidate, so scan them. */
  bool windowed = (ws != INT64_MIN || we != INT64_MAX) && nsys__use_search_index();
  const nsys_sx *sx[NSYS_SX_SOURCES] = {0};
  if (windowed) {
    bool any_op = want[NSYS__KERNEL] || want[NSYS__MEMCPY] || want[NSYS__MEMSET];
    if (any_op) sx[NSYS_SX_OPS] = nsys_sx_get(&call->task, p, ix, NSYS_SX_OPS);
    if (want[NSYS__NVTX] && !nsys_call_cancelled(call)) sx[NSYS_SX_NVTX] = nsys_sx_get(&call->task, p, ix, NSYS_SX_NVTX);
    if (want[NSYS__API] && !nsys_call_cancelled(call)) sx[NSYS_SX_API] = nsys_sx_get(&call->task, p, ix, NSYS_SX_API);
    windowed = !nsys_call_cancelled(call) && (!any_op || sx[NSYS_SX_OPS]) && (!want[NSYS__NVTX] || sx[NSYS_SX_NVTX]) &&
               (!want[NSYS__API] || sx[NSYS_SX_API]);
  }
  if (nsys_call_cancelled(call)) {
    /* answered below as cancelled */
  } else if (windowed) {
    const nsys_sx *s = sx[NSYS_SX_OPS];
    for (uint32_t g = 0; s && g < s->n_groups && !nsys_call_cancelled(call); g++) {
      const nsys_sx_group *gr = &s->groups[g];
      int kind = nsys__op_kind(gr->op_kind);
      if (kind < 0 || !want[kind]) continue;
      if (kind == NSYS__KERNEL ? !NSYS__M(gr->name) && !NSYS__M(gr->full) && !NSYS__M(nsys_display_name(ix, gr->full))
                               : !NSYS__M(gr->name))
        continue;
      acc.kind = (uint32_t)kind;
      nsys_sx_window(s, g, ws, we, nsys__emit, &acc);
    }
    static const nsys__kind host_kind[2] = {NSYS__NVTX, NSYS__API};
    for (int h = 0; h < 2; h++) {
      s = sx[h == 0 ? NSYS_SX_NVTX : NSYS_SX_API];
      acc.kind = host_kind[h];
      for (uint32_t g = 0; s && g < s->n_groups && !nsys_call_cancelled(call); g++)
        if (NSYS__M(s->groups[g].name)) nsys_sx_window(s, g, ws, we, nsys__emit, &acc);
    }
  } else {
    if (want[NSYS__KERNEL] || want[NSYS__MEMCPY] || want[NSYS__MEMSET]) {
      for (uint32_t i = 0; i < ix->ops.n; i++) {
        if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
        int kind = nsys__op_kind(ix->ops.kind[i]);
        if (kind < 0 || !want[kind] || ix->ops.start[i] >= we || ix->ops.end[i] < ws) continue;
        uint32_t sn = ix->ops.name[i], fn = ix->ops.full_name[i];
        if (kind == NSYS__KERNEL ? !NSYS__M(sn) && !NSYS__M(fn) && !NSYS__M(nsys_display_name(ix, fn)) : !NSYS__M(sn))
          continue;
        nsys__take_op(&acc, i, (nsys__kind)kind);
      }
    }
    if (want[NSYS__NVTX]) {
      for (uint32_t i = 0; i < ix->nvtx.n; i++) {
        if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
        if (ix->nvtx.start[i] >= we || ix->nvtx.end[i] < ws || !NSYS__M(ix->nvtx.name[i])) continue;
        nsys__take_nvtx(&acc, i);
      }
    }
    if (want[NSYS__API]) {
      for (uint32_t i = 0; i < ix->api.n; i++) {
        if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
        if (ix->api.start[i] >= we || ix->api.end[i] < ws || !NSYS__M(ix->api.name[i])) continue;
        nsys__take_api(&acc, i);
      }
    }
  }
#undef NSYS__M
  nsys__hits hs = acc.hs;
  nsys__inst_vec iv = acc.iv;
  int64_t total_count = acc.total_count;
  int64_t *full_ns = acc.full_ns;
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
