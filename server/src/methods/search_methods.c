/* search {profileId, query, exact?, kinds?, limit?, start?, end?, instances?, offset?, at?}
 * -> substring, glob or exact-name matches over kernel names (short, demangled and display),
 * NVTX names, CUDA graph launches ("[CUDA graph 4]", as the timeline names them) and, when
 * asked for by kinds, memcpy/memset names and CUDA API names, with
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
#include "index/search_page.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

/* What a search finds: GPU ops by their kind, NVTX ranges, CUDA API calls. */
typedef enum { NSYS__KERNEL, NSYS__NVTX, NSYS__MEMCPY, NSYS__MEMSET, NSYS__API, NSYS__GRAPH, NSYS__KINDS } nsys__kind;
static const char *const nsys__kind_name[NSYS__KINDS] = {"kernel", "nvtx", "memcpy", "memset", "api", "graph"};

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

/* The op kinds search reports. */
static int nsys__op_kind(uint8_t op_kind) {
  return op_kind == NSYS_OP_KERNEL   ? NSYS__KERNEL
         : op_kind == NSYS_OP_MEMCPY ? NSYS__MEMCPY
         : op_kind == NSYS_OP_MEMSET ? NSYS__MEMSET
         : op_kind == NSYS_OP_GRAPH  ? NSYS__GRAPH
                                     : -1;
}

/* Whether any GPU op kind is searched (the ops' source is read). */
static bool nsys__want_ops(const bool *want) {
  return want[NSYS__KERNEL] || want[NSYS__MEMCPY] || want[NSYS__MEMSET] || want[NSYS__GRAPH];
}

/* {total, offset, names, items}: the page (the instances of ranks [off, off + n) in time order). */
static cJSON *nsys__instances_json(const nsys_index *ix, const nsys_instance *page, size_t n, size_t total, size_t off) {
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
  nsys_json_add_i64(o, "total", (int64_t)total);
  nsys_json_add_i64(o, "offset", (int64_t)off);
  cJSON *names = cJSON_AddArrayToObject(o, "names");
  cJSON *items = cJSON_AddArrayToObject(o, "items");
  uint32_t *slot = nsys_xcalloc((size_t)ix->strings.count + 1, sizeof *slot); /* name id -> index in names + 1 */
  uint32_t nused = 0;
  for (size_t k = 0; k < n; k++) {
    const nsys_instance *in = &page[k];
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

/* Which names match the query, each string id tested once (0 unknown, 1 match, 2 no match). */
typedef struct {
  const nsys_index *ix;
  const char *q;
  nsys__mode mode;
  uint8_t *seen;
} nsys__matcher;

static bool nsys__name_matches(nsys__matcher *mt, uint32_t id) {
  if (!mt->seen[id]) mt->seen[id] = nsys__match(mt->q, mt->mode, nsys__s(mt->ix, id)) ? 1 : 2;
  return mt->seen[id] == 1;
}

/* A GPU op of search kind `kind` with short name sn and demangled name fn: kernels match on
 * the short, the demangled or the display name, copies and sets on their name. */
static bool nsys__op_matches(nsys__matcher *mt, int kind, uint32_t sn, uint32_t fn) {
  if (kind != NSYS__KERNEL) return nsys__name_matches(mt, sn);
  return nsys__name_matches(mt, sn) || nsys__name_matches(mt, fn) ||
         nsys__name_matches(mt, nsys_display_name(mt->ix, fn));
}

/* What the matches add up to: the hits, the per-name GPU time, the match count, and (the scan)
 * every matched instance or (the index) the matching groups' runs, paged without visiting them. */
typedef struct {
  const nsys_index *ix;
  nsys__hits hs;
  int64_t *full_ns; /* kernels: matched GPU time per demangled name */
  bool want_inst;
  int64_t total_count;
  nsys__inst_vec iv;
  nsys_sx_run *runs;
  size_t n_runs, runs_cap;
} nsys__acc;

/* ---- the scan: every instance ---- */

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

static void nsys__scan(nsys_call *call, nsys__acc *acc, nsys__matcher *mt, const bool *want, int64_t ws, int64_t we) {
  const nsys_index *ix = acc->ix;
  if (nsys__want_ops(want)) {
    for (uint32_t i = 0; i < ix->ops.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) return;
      int kind = nsys__op_kind(ix->ops.kind[i]);
      if (kind < 0 || !want[kind] || ix->ops.start[i] >= we || ix->ops.end[i] < ws) continue;
      if (nsys__op_matches(mt, kind, ix->ops.name[i], ix->ops.full_name[i])) nsys__take_op(acc, i, (nsys__kind)kind);
    }
  }
  if (want[NSYS__NVTX]) {
    for (uint32_t i = 0; i < ix->nvtx.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) return;
      if (ix->nvtx.start[i] >= we || ix->nvtx.end[i] < ws || !nsys__name_matches(mt, ix->nvtx.name[i])) continue;
      nsys__take_nvtx(acc, i);
    }
  }
  if (want[NSYS__API]) {
    for (uint32_t i = 0; i < ix->api.n; i++) {
      if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) return;
      if (ix->api.start[i] >= we || ix->api.end[i] < ws || !nsys__name_matches(mt, ix->api.name[i])) continue;
      nsys__take_api(acc, i);
    }
  }
}

/* ---- the index: each matching group's count and time in the window, O(log n) ---- */

/* Group g of s (search kind `kind`), whose `count` instances in [ws, we) take `ns`. */
static uint32_t nsys__take_group(nsys__acc *a, const nsys_sx *s, uint32_t g, nsys__kind kind, uint8_t inst_kind,
                                 int64_t ws, int64_t we, uint32_t count, int64_t ns) {
  const nsys_sx_group *gr = &s->groups[g];
  nsys__hit *h = nsys__hit_of(&a->hs, kind, gr->name, gr->full);
  h->count += count;
  h->ns += ns;
  a->total_count += count;
  if (a->want_inst) {
    if (a->n_runs == a->runs_cap) {
      a->runs_cap = a->runs_cap ? a->runs_cap * 2 : 64;
      a->runs = nsys_xrealloc(a->runs, a->runs_cap * sizeof *a->runs);
    }
    a->runs[a->n_runs++] = nsys_sx_run_of(s, g, inst_kind, ws, we, count);
  }
  return (uint32_t)(h - a->hs.v);
}

static void nsys__indexed(nsys_call *call, nsys__acc *acc, nsys__matcher *mt, const bool *want,
                          const nsys_sx *const *sx, int64_t ws, int64_t we) {
  const nsys_sx *s = sx[NSYS_SX_OPS];
  uint32_t *kernel_hit = NULL, n_kernel = 0; /* matched kernel groups: (hit, demangled name) pairs */
  if (s) kernel_hit = nsys_xmalloc(((size_t)s->n_groups + 1) * 2 * sizeof *kernel_hit);
  for (uint32_t g = 0; s && g < s->n_groups && !nsys_call_cancelled(call); g++) {
    const nsys_sx_group *gr = &s->groups[g];
    int kind = nsys__op_kind(gr->op_kind);
    if (kind < 0 || !want[kind] || !nsys__op_matches(mt, kind, gr->name, gr->full)) continue;
    uint32_t count;
    int64_t ns;
    nsys_sx_overlapping(s, g, ws, we, &count, &ns);
    if (!count) continue;
    uint32_t h = nsys__take_group(acc, s, g, (nsys__kind)kind, NSYS_INST_OP, ws, we, count, ns);
    if (kind == NSYS__KERNEL) {
      acc->full_ns[gr->full] += ns;
      kernel_hit[2 * n_kernel] = h;
      kernel_hit[2 * n_kernel++ + 1] = gr->full;
    }
  }
  /* a kernel hit's example: its demangled name with the most matched GPU time, the smaller
   * string id on ties (what the scan's running maximum ends with) */
  for (uint32_t k = 0; k < n_kernel; k++) {
    nsys__hit *h = &acc->hs.v[kernel_hit[2 * k]];
    uint32_t fn = kernel_hit[2 * k + 1];
    if (acc->full_ns[fn] > acc->full_ns[h->example] || (acc->full_ns[fn] == acc->full_ns[h->example] && fn < h->example))
      h->example = fn;
  }
  free(kernel_hit);
  static const nsys__kind host_kind[2] = {NSYS__NVTX, NSYS__API};
  static const uint8_t host_inst[2] = {NSYS_INST_NVTX, NSYS_INST_API};
  for (int k = 0; k < 2; k++) {
    s = sx[k == 0 ? NSYS_SX_NVTX : NSYS_SX_API];
    for (uint32_t g = 0; s && g < s->n_groups && !nsys_call_cancelled(call); g++) {
      if (!nsys__name_matches(mt, s->groups[g].name)) continue;
      uint32_t count;
      int64_t ns;
      nsys_sx_overlapping(s, g, ws, we, &count, &ns);
      if (count) nsys__take_group(acc, s, g, host_kind[k], host_inst[k], ws, we, count, ns);
    }
  }
}

/* NSYS_AI_SEARCH_INDEX=0: searches scan every instance, windowed or not (comparisons,
 * benchmarks); the answers are the same byte for byte. */
static bool nsys__use_search_index(void) {
  const char *e = getenv("NSYS_AI_SEARCH_INDEX");
  return !(e && strcmp(e, "0") == 0);
}

/* The sources' indexes search needs (want), into sx: built if needed for a windowed search;
 * only if already built for an unwindowed one (a scan costs less than a build: bench/README.md).
 * False when one is missing (then scan) or the call was cancelled. */
static bool nsys__indexes(nsys_call *call, nsys_profile *p, const nsys_index *ix, const bool *want, bool windowed,
                          const nsys_sx **sx) {
  if (!nsys__use_search_index()) return false;
  bool need[NSYS_SX_SOURCES] = {nsys__want_ops(want), want[NSYS__NVTX], want[NSYS__API]};
  for (int src = 0; src < NSYS_SX_SOURCES; src++) {
    if (!need[src]) continue;
    sx[src] = windowed ? nsys_sx_get(&call->task, p, ix, (nsys_sx_source)src) : nsys_sx_peek(p, ix, (nsys_sx_source)src);
    if (!sx[src] || nsys_call_cancelled(call)) return false;
  }
  return true;
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
  bool want[NSYS__KINDS] = {!kinds, !kinds, false, false, false, !kinds}; /* default: kernels, NVTX, graphs */
  if (kinds) {
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, kinds) {
      int found = -1;
      for (int j = 0; j < NSYS__KINDS && cJSON_IsString(it); j++)
        if (strcmp(it->valuestring, nsys__kind_name[j]) == 0) found = j;
      if (found < 0)
        return nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                              "params.kinds[%d]: expected \"kernel\", \"nvtx\", \"graph\", \"memcpy\", \"memset\" or \"api\"", k);
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
  nsys__matcher mt = {ix, q, mode, nsys_xcalloc(ns + 1, 1)};
  nsys__acc acc = {.ix = ix, .want_inst = want_inst > 0};
  for (int j = 0; j < NSYS__KINDS; j++)
    if (want[j]) acc.hs.idx[j] = nsys_xcalloc(ns + 1, sizeof(uint32_t));
  acc.full_ns = want[NSYS__KERNEL] ? nsys_xcalloc(ns + 1, sizeof(int64_t)) : NULL;
  /* From the search index (each matching name O(log n), the page without visiting the matches)
   * when it is there: built by the first windowed search (what the timelines ask on every view
   * change); else a scan of every instance. */
  const nsys_sx *sx[NSYS_SX_SOURCES] = {0};
  bool indexed = nsys__indexes(call, p, ix, want, ws != INT64_MIN || we != INT64_MAX, sx);
  if (nsys_call_cancelled(call)) {
    /* answered below as cancelled */
  } else if (indexed) {
    nsys__indexed(call, &acc, &mt, want, sx, ws, we);
  } else {
    nsys__scan(call, &acc, &mt, want, ws, we);
  }
  nsys_sx_page_out page = {0};
  if (want_inst && !nsys_call_cancelled(call)) {
    if (indexed) {
      nsys_sx_page(&call->task, acc.runs, acc.n_runs, ws, has_at, at, (size_t)offset, (size_t)want_inst, &page);
    } else {
      page.offset = has_at ? nsys_instance_rank(acc.iv.v, acc.iv.n, at) : (size_t)offset;
      nsys_instance_page(acc.iv.v, acc.iv.n, page.offset, (size_t)want_inst);
      page.n = page.offset < acc.iv.n ? acc.iv.n - page.offset : 0;
      if (page.n > (size_t)want_inst) page.n = (size_t)want_inst;
    }
  }
  nsys__hit *hits = acc.hs.v;
  uint32_t nh = acc.hs.n;
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
  cJSON_AddNumberToObject(res, "matches", (double)acc.total_count);
  cJSON_AddBoolToObject(res, "truncated", nh > (uint64_t)limit);
  if (want_inst) {
    const nsys_instance *items = indexed ? page.items : page.n ? acc.iv.v + page.offset : NULL;
    cJSON_AddItemToObject(res, "instances",
                          nsys__instances_json(ix, items, page.n, (size_t)acc.total_count, page.offset));
  }
done:
  if (indexed) free(page.items);
  free(acc.iv.v);
  free(acc.runs);
  free(hits);
  for (int j = 0; j < NSYS__KINDS; j++) free(acc.hs.idx[j]);
  free(mt.seen);
  free(acc.full_ns);
  nsys_profile_release(p);
  return res;
}
