/* JSON-RPC handlers for the timeline module: params -> index query -> JSON.
 *   timeline/tracks  {profileId}                            -> {tracks, start, end}
 *   timeline/range   {profileId, start, end, width, tracks?, maxEvents?, format?}
 *                                                          -> {resolution, start, end, tracks}
 *   nvtx/tree        {profileId, start?, end?, device?, thread?, maxDepth?, aggregate?}
 *   kernel/details   {profileId, kernelId}
 *   search           {profileId, query, kinds?, limit?}
 *   export/perfetto  {profileId, path, start?, end?}
 * Large arrays (events, buckets, tree nodes) are written as JSON text with a
 * string buffer and attached as raw items: a zoom step over millions of ops
 * must stay within a few milliseconds. Documented in docs/protocol.md
 * ("Timeline...") and protocol/schemas/{timeline,nvtx,kernel.details,search,export}.*. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "index/nvtx_tree.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

/* ---- JSON text helpers -------------------------------------------------- */

static void nsys__js_str(nsys_strbuf *b, const char *s) {
  nsys_strbuf_reserve(b, strlen(s) + 2);
  nsys_strbuf_putc(b, '"');
  const char *run = s;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c >= 0x20 && *c != '"' && *c != '\\') continue;
    nsys_strbuf_append(b, run, (size_t)((const char *)c - run));
    switch (*c) {
    case '"': nsys_strbuf_puts(b, "\\\""); break;
    case '\\': nsys_strbuf_puts(b, "\\\\"); break;
    case '\n': nsys_strbuf_puts(b, "\\n"); break;
    case '\t': nsys_strbuf_puts(b, "\\t"); break;
    case '\r': nsys_strbuf_puts(b, "\\r"); break;
    default: nsys_strbuf_printf(b, "\\u%04x", *c); break;
    }
    run = (const char *)c + 1;
  }
  nsys_strbuf_puts(b, run);
  nsys_strbuf_putc(b, '"');
}

/* Escaped names, cached per request by strtab id. */
typedef struct {
  const nsys_strtab *tab;
  char **esc;
  uint32_t *len;
} nsys__names;

static const char *nsys__name(nsys__names *n, uint32_t id) {
  if (id >= n->tab->count) return "\"\"";
  if (!n->esc) {
    n->esc = nsys_xcalloc(n->tab->count, sizeof(char *));
    n->len = nsys_xcalloc(n->tab->count, sizeof(uint32_t));
  }
  if (!n->esc[id]) {
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    nsys__js_str(&b, nsys_strtab_get(n->tab, id));
    n->len[id] = (uint32_t)b.len;
    n->esc[id] = nsys_strbuf_steal(&b);
  }
  return n->esc[id];
}

static void nsys__names_free(nsys__names *n) {
  if (n->esc)
    for (uint32_t i = 0; i < n->tab->count; i++) free(n->esc[i]);
  free(n->esc);
  free(n->len);
}

/* The written JSON text becomes the Raw item's text without a copy (a whole
 * profile's tree is ~150 MB): cJSON's hooks are the default malloc/free (no
 * cJSON_InitHooks anywhere), which is what nsys_strbuf allocates with. */
static cJSON *nsys__raw_take(nsys_strbuf *b) {
  cJSON *r = cJSON_CreateRaw("");
  if (!r) return NULL;
  cJSON_free(r->valuestring);
  r->valuestring = nsys_strbuf_steal(b);
  return r;
}

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

/* ---- timeline/tracks ---------------------------------------------------- */

static const char *const nsys__tl_kind_names[] = {"gpu", "nvtxProjected", "nvtx", "api"};

static void nsys__thread_label(const nsys_index *ix, uint32_t t, char *out, size_t cap) {
  const nsys_host_thread *th = &ix->threads[t];
  const char *name = nsys__s(ix, th->name);
  if (name[0]) snprintf(out, cap, "%s (pid %u, tid %u)", name, th->pid, th->tid);
  else snprintf(out, cap, "pid %u, tid %u", th->pid, th->tid);
}

static cJSON *nsys__track_json(const nsys_index *ix, const nsys_tl_track *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", t->id);
  cJSON_AddStringToObject(o, "kind", nsys__tl_kind_names[t->kind]);
  char name[400], th[300];
  switch (t->kind) {
  case NSYS_TL_GPU: {
    const nsys_gpu_track *g = &ix->tracks[t->ref];
    snprintf(name, sizeof name, "GPU %d · Stream %lld (%s)", t->device, (long long)t->stream,
             nsys_stream_class_name(g->cls));
    cJSON_AddNumberToObject(o, "device", t->device);
    nsys_json_add_i64(o, "stream", t->stream);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddStringToObject(o, "streamClass", nsys_stream_class_name(g->cls));
    nsys_json_add_i64(o, "busyNs", g->busy_ns);
    break;
  }
  case NSYS_TL_PROJ:
    snprintf(name, sizeof name, "GPU %d · NVTX (projected) depth %d", t->device, t->depth);
    cJSON_AddNumberToObject(o, "device", t->device);
    cJSON_AddNumberToObject(o, "depth", t->depth);
    break;
  case NSYS_TL_NVTX:
    nsys__thread_label(ix, t->thread, th, sizeof th);
    snprintf(name, sizeof name, "%s · NVTX depth %d", th, t->depth);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddNumberToObject(o, "tid", t->tid);
    cJSON_AddNumberToObject(o, "depth", t->depth);
    break;
  case NSYS_TL_API:
    nsys__thread_label(ix, t->thread, th, sizeof th);
    snprintf(name, sizeof name, "%s · CUDA API", th);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddNumberToObject(o, "tid", t->tid);
    break;
  }
  cJSON_AddStringToObject(o, "name", name);
  if (t->kind == NSYS_TL_NVTX || t->kind == NSYS_TL_API)
    cJSON_AddStringToObject(o, "threadName", nsys__s(ix, ix->threads[t->thread].name));
  cJSON_AddNumberToObject(o, "count", t->count);
  cJSON_AddNumberToObject(o, "order", t->order);
  return o;
}

static cJSON *nsys__timeline_tracks(nsys_call *call) {
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  cJSON *res = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(res, "tracks");
  for (uint32_t i = 0; i < nsys_tl_track_count(ix); i++)
    cJSON_AddItemToArray(arr, nsys__track_json(ix, nsys_tl_track_at(ix, i)));
  nsys_json_add_i64(res, "start", ix->span_start);
  nsys_json_add_i64(res, "end", ix->span_end);
  nsys_profile_release(p);
  return res;
}

/* ---- timeline/range ----------------------------------------------------- */

typedef struct {
  const nsys_index *ix;
  const nsys_tl_track *t;
  nsys_strbuf *b;
  nsys__names *names;
  bool first;
} nsys__emit;

static const char *nsys__event_kind(const nsys_index *ix, const nsys_tl_track *t, uint32_t row) {
  switch (t->kind) {
  case NSYS_TL_GPU: return nsys_op_kind_name(ix->ops.kind[row]);
  case NSYS_TL_PROJ: return "nvtxProjected";
  case NSYS_TL_NVTX: return "nvtx";
  case NSYS_TL_API: return "api";
  }
  return "kernel";
}

/* public id of a row: op id, NVTX id (also for projected rows) or API id */
static uint32_t nsys__row_id(const nsys_index *ix, const nsys_tl_track *t, uint32_t row) {
  return t->kind == NSYS_TL_PROJ ? nsys_tl_proj_nvtx(ix, row) : row;
}

/* Decimal writers, printf-free: a zoom answer holds ~300k numbers. Two
 * digits per step from a table; 64-bit values are split by 1e8 once or twice
 * so the digit loops run on 32-bit words (cheaper division by constants), and
 * digits are written in place (no temporary and no variable-length copy). */
static const char nsys__d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                               "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                               "8081828384858687888990919293949596979899";

/* v < 1e8, written as exactly 8 digits */
static inline char *nsys__w_8(char *o, uint32_t v) {
  uint32_t hi = v / 10000, lo = v % 10000;
  memcpy(o, nsys__d2 + 2 * (hi / 100), 2);
  memcpy(o + 2, nsys__d2 + 2 * (hi % 100), 2);
  memcpy(o + 4, nsys__d2 + 2 * (lo / 100), 2);
  memcpy(o + 6, nsys__d2 + 2 * (lo % 100), 2);
  return o + 8;
}

static inline char *nsys__w_u32(char *o, uint32_t v) {
  int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 : v < 1000000 ? 6
        : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
  char *e = o + n;
  while (v >= 100) {
    uint32_t r = v % 100;
    v /= 100;
    e -= 2;
    memcpy(e, nsys__d2 + 2 * r, 2);
  }
  if (v >= 10) memcpy(e - 2, nsys__d2 + 2 * v, 2);
  else e[-1] = (char)('0' + v);
  return o + n;
}

/* Writes v at o; returns the new end. */
static inline char *nsys__w_i64(char *o, int64_t v) {
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  if (v < 0) *o++ = '-';
  if (u <= UINT32_MAX) return nsys__w_u32(o, (uint32_t)u);
  if (u < 10000000000000000ULL) { /* < 1e16: two parts */
    uint64_t hi = u / 100000000;
    o = nsys__w_u32(o, (uint32_t)hi);
    return nsys__w_8(o, (uint32_t)(u - hi * 100000000));
  }
  uint64_t top = u / 10000000000000000ULL, rest = u % 10000000000000000ULL;
  o = nsys__w_u32(o, (uint32_t)top);
  o = nsys__w_8(o, (uint32_t)(rest / 100000000));
  return nsys__w_8(o, (uint32_t)(rest % 100000000));
}

#define NSYS__W(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

static void nsys__emit_event(void *ctx, uint32_t row) {
  nsys__emit *e = ctx;
  int64_t s, en;
  uint32_t name_id;
  nsys_tl_row(e->ix, e->t->kind, row, &s, &en, &name_id);
  int depth = e->t->depth < 0 ? 0 : e->t->depth;
  const char *name = nsys__name(e->names, name_id);
  size_t name_len = name_id < e->names->tab->count ? e->names->len[name_id] : 2;
  const char *kind = nsys__event_kind(e->ix, e->t, row);
  size_t kind_len = strlen(kind);
  nsys_strbuf *b = e->b;
  nsys_strbuf_reserve(b, 192 + name_len + kind_len);
  char *o = b->data + b->len;
  if (!e->first) *o++ = ',';
  o = NSYS__W(o, "{\"id\":");
  o = nsys__w_i64(o, nsys__row_id(e->ix, e->t, row));
  o = NSYS__W(o, ",\"start\":");
  o = nsys__w_i64(o, s);
  o = NSYS__W(o, ",\"end\":");
  o = nsys__w_i64(o, en);
  o = NSYS__W(o, ",\"name\":");
  memcpy(o, name, name_len);
  o += name_len;
  o = NSYS__W(o, ",\"kind\":\"");
  memcpy(o, kind, kind_len);
  o += kind_len;
  o = NSYS__W(o, "\",\"depth\":");
  o = nsys__w_i64(o, depth);
  *o++ = '}';
  *o = '\0';
  b->len = (size_t)(o - b->data);
  e->first = false;
}

/* Buckets of one track are collected first and the longest item's name and
 * public id are then looked up in one tight loop: those rows are scattered
 * over arrays of millions of entries, and loads issued back to back overlap
 * their cache misses, where loads between two buckets' writing did not (the
 * lookups were ~45% of a full-range answer over 10M kernels). */
typedef struct {
  nsys_tl_bucket *v;
  uint32_t *name, *id; /* per bucket: longest's name (strtab id) and public id */
  size_t n, cap;
} nsys__bucket_batch;

static void nsys__batch_add(void *ctx, const nsys_tl_bucket *bk) {
  nsys__bucket_batch *bb = ctx;
  if (bb->n == bb->cap) {
    bb->cap = bb->cap ? bb->cap * 2 : 1024;
    bb->v = nsys_xrealloc(bb->v, bb->cap * sizeof *bb->v);
    bb->name = nsys_xrealloc(bb->name, bb->cap * sizeof *bb->name);
    bb->id = nsys_xrealloc(bb->id, bb->cap * sizeof *bb->id);
  }
  bb->v[bb->n++] = *bk;
}

static void nsys__batch_resolve(const nsys_index *ix, const nsys_tl_track *t, nsys__bucket_batch *bb) {
  const uint32_t *names = t->kind == NSYS_TL_GPU ? ix->ops.name : t->kind == NSYS_TL_API ? ix->api.name : ix->nvtx.name;
  for (size_t i = 0; i < bb->n; i++) {
    uint32_t row = bb->v[i].longest;
    if (row == UINT32_MAX) continue;
    uint32_t id = nsys__row_id(ix, t, row); /* projected rows: their NVTX range */
    bb->id[i] = id;
    bb->name[i] = names[t->kind == NSYS_TL_PROJ ? id : row];
  }
}

static void nsys__batch_free(nsys__bucket_batch *bb) {
  free(bb->v);
  free(bb->name);
  free(bb->id);
}

static void nsys__emit_buckets(nsys__emit *e, const nsys__bucket_batch *bb) {
  nsys_strbuf *b = e->b;
  for (size_t i = 0; i < bb->n; i++) {
    const nsys_tl_bucket *bk = &bb->v[i];
    const char *name = NULL;
    size_t name_len = 0;
    if (bk->longest != UINT32_MAX) {
      uint32_t name_id = bb->name[i];
      name = nsys__name(e->names, name_id);
      name_len = name_id < e->names->tab->count ? e->names->len[name_id] : 2;
    }
    nsys_strbuf_reserve(b, 192 + name_len);
    char *o = b->data + b->len;
    if (i) *o++ = ',';
    o = NSYS__W(o, "{\"start\":");
    o = nsys__w_i64(o, bk->start);
    o = NSYS__W(o, ",\"end\":");
    o = nsys__w_i64(o, bk->end);
    o = NSYS__W(o, ",\"count\":");
    o = nsys__w_i64(o, bk->count);
    o = NSYS__W(o, ",\"busyNs\":");
    o = nsys__w_i64(o, bk->busy_ns);
    if (name) {
      o = NSYS__W(o, ",\"longest\":{\"id\":");
      o = nsys__w_i64(o, bb->id[i]);
      o = NSYS__W(o, ",\"name\":");
      memcpy(o, name, name_len);
      o += name_len;
      o = NSYS__W(o, ",\"dur\":");
      o = nsys__w_i64(o, bk->longest_dur);
      *o++ = '}';
    }
    *o++ = '}';
    *o = '\0';
    b->len = (size_t)(o - b->data);
  }
}

/* ---- timeline/range, format "columns" -----------------------------------
 * One array per field instead of one object per item, and every string once
 * in the response's "names" table: a full-range answer over millions of ops is
 * about a third of the "objects" text, and clients decode it into typed arrays. */

typedef struct {
  nsys__names *esc;      /* escaped text per strtab id */
  uint32_t *slot;        /* strtab id -> index in "names" + 1 (0: not listed yet) */
  const char *kinds[16]; /* event kind strings listed so far, and their indexes */
  uint32_t kind_slot[16];
  uint32_t n_kinds;
  nsys_strbuf list; /* the "names" array's elements */
  uint32_t n;
} nsys__col_names;

static uint32_t nsys__col_name(nsys__col_names *c, uint32_t id) {
  const nsys_strtab *tab = c->esc->tab;
  if (id >= tab->count) id = 0;
  if (!c->slot) c->slot = nsys_xcalloc(tab->count ? tab->count : 1, sizeof(uint32_t));
  if (tab->count && c->slot[id]) return c->slot[id] - 1;
  const char *text = tab->count ? nsys__name(c->esc, id) : "\"\"";
  if (c->n) nsys_strbuf_putc(&c->list, ',');
  nsys_strbuf_puts(&c->list, text);
  if (tab->count) c->slot[id] = c->n + 1;
  return c->n++;
}

static uint32_t nsys__col_kind(nsys__col_names *c, const char *kind) {
  for (uint32_t i = 0; i < c->n_kinds; i++)
    if (c->kinds[i] == kind || strcmp(c->kinds[i], kind) == 0) return c->kind_slot[i];
  if (c->n) nsys_strbuf_putc(&c->list, ',');
  nsys__js_str(&c->list, kind);
  if (c->n_kinds < 16) {
    c->kinds[c->n_kinds] = kind;
    c->kind_slot[c->n_kinds++] = c->n;
  }
  return c->n++;
}

enum { NSYS__COLS = 6 };

typedef struct {
  const nsys_index *ix;
  const nsys_tl_track *t;
  nsys__col_names *names;
  nsys_strbuf col[NSYS__COLS];
  int64_t base, res;
  uint32_t n;
  unsigned ev_mask, bk_mask; /* columns asked for (params.fields), bit k = column k */
  unsigned mask;             /* the current track's: ev_mask or bk_mask */
} nsys__col_emit;

static void nsys__col_put(nsys__col_emit *e, int k, int64_t v) {
  if (!(e->mask & (1u << k))) return;
  nsys_strbuf *b = &e->col[k];
  nsys_strbuf_reserve(b, 24);
  char *o = b->data + b->len;
  if (e->n) *o++ = ',';
  o = nsys__w_i64(o, v);
  *o = '\0';
  b->len = (size_t)(o - b->data);
}

static void nsys__col_event(void *ctx, uint32_t row) {
  nsys__col_emit *e = ctx;
  int64_t s, en;
  uint32_t name_id;
  nsys_tl_row(e->ix, e->t->kind, row, &s, &en, &name_id);
  nsys__col_put(e, 0, nsys__row_id(e->ix, e->t, row));
  nsys__col_put(e, 1, s);
  nsys__col_put(e, 2, en);
  if (e->mask & (1u << 3)) nsys__col_put(e, 3, nsys__col_name(e->names, name_id));
  if (e->mask & (1u << 4)) nsys__col_put(e, 4, nsys__col_kind(e->names, nsys__event_kind(e->ix, e->t, row)));
  nsys__col_put(e, 5, e->t->depth < 0 ? 0 : e->t->depth);
  e->n++;
}

static void nsys__col_buckets(nsys__col_emit *e, const nsys__bucket_batch *bb) {
  for (size_t i = 0; i < bb->n; i++) {
    const nsys_tl_bucket *bk = &bb->v[i];
    int64_t id = -1, name = -1, dur = 0;
    if (bk->longest != UINT32_MAX) { /* id and name are resolved only when asked for */
      if (e->mask & (1u << 3)) id = bb->id[i];
      if (e->mask & (1u << 4)) name = nsys__col_name(e->names, bb->name[i]);
      dur = bk->longest_dur;
    }
    nsys__col_put(e, 0, (bk->start - e->base) / e->res);
    nsys__col_put(e, 1, bk->count);
    nsys__col_put(e, 2, bk->busy_ns);
    nsys__col_put(e, 3, id);
    nsys__col_put(e, 4, name);
    nsys__col_put(e, 5, dur);
    e->n++;
  }
}

static const char *const nsys__event_cols[NSYS__COLS] = {"id", "start", "end", "name", "kind", "depth"};
static const char *const nsys__bucket_cols[NSYS__COLS] = {"index",       "count",       "busyNs",
                                                          "longestId",   "longestName", "longestDur"};

/* Writes `"events":{...}` or `"buckets":{...}` for one track into b. */
static void nsys__col_track(nsys_strbuf *b, nsys__col_emit *e, bool events) {
  const char *const *keys = events ? nsys__event_cols : nsys__bucket_cols;
  nsys_strbuf_puts(b, events ? ",\"events\":{" : ",\"buckets\":{");
  bool first = true;
  for (int k = 0; k < NSYS__COLS; k++) {
    if (!(e->mask & (1u << k))) continue;
    nsys_strbuf_printf(b, "%s\"%s\":[", first ? "" : ",", keys[k]);
    first = false;
    nsys_strbuf_append(b, e->col[k].data ? e->col[k].data : "", e->col[k].len);
    nsys_strbuf_putc(b, ']');
    e->col[k].len = 0;
  }
  nsys_strbuf_putc(b, '}');
  e->n = 0;
}

/* params.fields -> the event and bucket column masks (absent: all columns). */
static bool nsys__parse_fields(nsys_call *call, const cJSON *fields, bool columns, unsigned *ev, unsigned *bk) {
  *ev = *bk = (1u << NSYS__COLS) - 1;
  if (!fields) return true;
  if (!columns) {
    nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.fields: only with format \"columns\"");
    return false;
  }
  *ev = *bk = 0;
  int i = 0;
  const cJSON *f;
  cJSON_ArrayForEach(f, fields) {
    bool known = false;
    for (int k = 0; cJSON_IsString(f) && k < NSYS__COLS; k++) {
      if (strcmp(f->valuestring, nsys__event_cols[k]) == 0) *ev |= 1u << k, known = true;
      if (strcmp(f->valuestring, nsys__bucket_cols[k]) == 0) *bk |= 1u << k, known = true;
    }
    if (!known) {
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                     "params.fields[%d]: expected a column name (events: id, start, end, name, kind, depth; "
                     "buckets: index, count, busyNs, longestId, longestName, longestDur)", i);
      return false;
    }
    i++;
  }
  return true;
}

static int64_t nsys__floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static cJSON *nsys__timeline_range(nsys_call *call) {
  int64_t start = 0, end = 0, width = 0, max_events = -1;
  const cJSON *tracks = NULL, *fields = NULL;
  if (!nsys_param_int64(call, "start", true, INT64_MIN / 4, INT64_MAX / 4, &start) ||
      !nsys_param_int64(call, "end", true, INT64_MIN / 4, INT64_MAX / 4, &end) ||
      !nsys_param_int64(call, "width", true, 1, 100000, &width) ||
      !nsys_param_int64(call, "maxEvents", false, 0, 1000000, &max_events) ||
      !nsys_param_array(call, "tracks", false, &tracks) || !nsys_param_array(call, "fields", false, &fields))
    return NULL;
  const char *format = "objects";
  if (!nsys_param_string(call, "format", false, &format)) return NULL;
  bool columns = strcmp(format, "columns") == 0;
  if (!columns && strcmp(format, "objects") != 0)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.format: expected \"objects\" or \"columns\"");
  unsigned ev_mask, bk_mask;
  if (!nsys__parse_fields(call, fields, columns, &ev_mask, &bk_mask)) return NULL;
  if (end <= start)
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must be greater than params.start");
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  /* resolution: ns per pixel rounded up to a power of two; grid aligned to it */
  int64_t span = end - start;
  int64_t per_px = (span + width - 1) / width;
  int64_t res = 1;
  while (res < per_px) res <<= 1;
  int64_t base = nsys__floor_div(start, res) * res;
  int64_t gend = nsys__floor_div(end + res - 1, res) * res;
  uint32_t nb = (uint32_t)((gend - base) / res);
  if (max_events < 0) max_events = width / 4 > 64 ? width / 4 : 64; /* 0: always buckets */
  /* which tracks */
  uint32_t n_all = nsys_tl_track_count(ix);
  uint32_t *sel = nsys_xmalloc((n_all + 1) * sizeof(uint32_t));
  uint32_t n_sel = 0;
  if (tracks) {
    int k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, tracks) {
      if (!cJSON_IsString(it)) {
        free(sel);
        nsys_profile_release(p);
        return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.tracks[%d]: expected a track id string", k);
      }
      int64_t t = nsys_tl_track_find(ix, it->valuestring);
      if (t < 0) {
        free(sel);
        nsys_profile_release(p);
        return nsys_call_fail(call, NSYS_E_NOT_FOUND, "params.tracks[%d]: no track '%s' (see timeline/tracks)",
                              k, it->valuestring);
      }
      if (n_sel < n_all) sel[n_sel++] = (uint32_t)t;
      k++;
    }
  } else {
    for (uint32_t i = 0; i < n_all; i++) sel[n_sel++] = i;
  }
  nsys__names names = {&ix->strings, NULL, NULL};
  nsys__col_names cnames = {.esc = &names};
  nsys__col_emit ce = {.ix = ix, .names = &cnames, .base = base, .res = res, .ev_mask = ev_mask, .bk_mask = bk_mask};
  nsys_strbuf_init(&cnames.list);
  for (int k = 0; k < NSYS__COLS; k++) nsys_strbuf_init(&ce.col[k]);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_reserve(&b, (size_t)n_sel * NSYS_MIN((size_t)nb, (size_t)4096) * (columns ? 24 : 48) + 4096);
  nsys_strbuf_putc(&b, '[');
  nsys__bucket_batch batch = {0};
  bool cancelled = false;
  for (uint32_t k = 0; k < n_sel && !cancelled; k++) {
    if (nsys_call_cancelled(call)) {
      cancelled = true;
      break;
    }
    const nsys_tl_track *t = nsys_tl_track_at(ix, sel[k]);
    nsys_strbuf_printf(&b, "%s{\"id\":", k ? "," : "");
    nsys__js_str(&b, t->id);
    uint32_t n = nsys_tl_count(ix, sel[k], base, gend);
    bool events = max_events > 0 && n <= (uint64_t)max_events;
    if (columns) {
      ce.t = t;
      ce.mask = events ? ev_mask : bk_mask;
      if (events) {
        nsys_tl_events(ix, sel[k], start, end, nsys__col_event, &ce);
      } else {
        batch.n = 0;
        nsys_tl_buckets(ix, sel[k], base, res, nb, nsys__batch_add, &batch);
        if (bk_mask & (3u << 3)) nsys__batch_resolve(ix, t, &batch); /* longestId, longestName */
        nsys__col_buckets(&ce, &batch);
      }
      nsys__col_track(&b, &ce, events);
      nsys_strbuf_putc(&b, '}');
      continue;
    }
    nsys__emit e = {ix, t, &b, &names, true};
    if (events) {
      nsys_strbuf_puts(&b, ",\"events\":[");
      nsys_tl_events(ix, sel[k], start, end, nsys__emit_event, &e);
    } else {
      nsys_strbuf_puts(&b, ",\"buckets\":[");
      batch.n = 0;
      nsys_tl_buckets(ix, sel[k], base, res, nb, nsys__batch_add, &batch);
      nsys__batch_resolve(ix, t, &batch);
      nsys__emit_buckets(&e, &batch);
    }
    nsys_strbuf_puts(&b, "]}");
  }
  nsys_strbuf_putc(&b, ']');
  cJSON *out = NULL;
  if (!cancelled) {
    out = cJSON_CreateObject();
    nsys_json_add_i64(out, "resolution", res);
    nsys_json_add_i64(out, "start", base);
    nsys_json_add_i64(out, "end", gend);
    if (columns) {
      cJSON_AddStringToObject(out, "format", "columns");
      nsys_strbuf names_text;
      nsys_strbuf_init(&names_text);
      nsys_strbuf_reserve(&names_text, cnames.list.len + 2);
      nsys_strbuf_putc(&names_text, '[');
      nsys_strbuf_append(&names_text, cnames.list.data ? cnames.list.data : "", cnames.list.len);
      nsys_strbuf_putc(&names_text, ']');
      cJSON_AddItemToObject(out, "names", nsys__raw_take(&names_text));
      nsys_strbuf_free(&names_text);
    }
    cJSON_AddItemToObject(out, "tracks", nsys__raw_take(&b));
  }
  nsys_strbuf_free(&b);
  nsys__batch_free(&batch);
  for (int k = 0; k < NSYS__COLS; k++) nsys_strbuf_free(&ce.col[k]);
  nsys_strbuf_free(&cnames.list);
  free(cnames.slot);
  nsys__names_free(&names);
  free(sel);
  nsys_profile_release(p);
  return cancelled ? nsys_call_fail_cancelled(call) : out;
}

/* ---- nvtx/tree ---------------------------------------------------------- */

typedef struct {
  const nsys_index *ix;
  const nsys_nvtx_tree *t;
  nsys__names *names;
  nsys_strbuf *b;
  bool aggregate;
  int top;
} nsys__tree_out;

static void nsys__tree_node(nsys__tree_out *o, uint32_t id, bool root) {
  const nsys_nvtx_node *n = &o->t->nodes[id];
  nsys_strbuf *b = o->b;
  nsys__name(o->names, n->name);
  nsys__name(o->names, n->domain);
  size_t need = 512 + o->names->len[n->name] + o->names->len[n->domain];
  uint32_t top = n->n_kernels < (uint32_t)o->top ? n->n_kernels : (uint32_t)o->top;
  for (uint32_t k = 0; k < top; k++) {
    nsys__name(o->names, n->kernels[k].name);
    need += 96 + o->names->len[n->kernels[k].name];
  }
  nsys_strbuf_reserve(b, need);
  char *w = b->data + b->len;
  w = NSYS__W(w, "{\"name\":");
  memcpy(w, o->names->esc[n->name], o->names->len[n->name]);
  w += o->names->len[n->name];
  w = NSYS__W(w, ",\"domain\":");
  memcpy(w, o->names->esc[n->domain], o->names->len[n->domain]);
  w += o->names->len[n->domain];
  w = NSYS__W(w, ",\"start\":");
  w = nsys__w_i64(w, n->start);
  w = NSYS__W(w, ",\"end\":");
  w = nsys__w_i64(w, n->end);
  if (n->gpu_start != INT64_MAX) {
    w = NSYS__W(w, ",\"gpuStart\":");
    w = nsys__w_i64(w, n->gpu_start);
    w = NSYS__W(w, ",\"gpuEnd\":");
    w = nsys__w_i64(w, n->gpu_end);
  } else {
    w = NSYS__W(w, ",\"gpuStart\":null,\"gpuEnd\":null");
  }
  w = NSYS__W(w, ",\"opCount\":");
  w = nsys__w_i64(w, (int64_t)n->op_count);
  w = NSYS__W(w, ",\"kernelNs\":");
  w = nsys__w_i64(w, n->kernel_ns);
  w = NSYS__W(w, ",\"depth\":");
  w = nsys__w_i64(w, n->depth);
  if (o->aggregate) {
    w = NSYS__W(w, ",\"instances\":");
    w = nsys__w_i64(w, n->instances);
    w = NSYS__W(w, ",\"cpuNs\":");
    w = nsys__w_i64(w, n->cpu_ns);
  } else {
    w = NSYS__W(w, ",\"id\":");
    w = nsys__w_i64(w, n->range);
  }
  if (root) {
    const nsys_host_thread *th = &o->ix->threads[n->thread];
    w = NSYS__W(w, ",\"pid\":");
    w = nsys__w_i64(w, th->pid);
    w = NSYS__W(w, ",\"tid\":");
    w = nsys__w_i64(w, th->tid);
  }
  w = NSYS__W(w, ",\"topKernels\":[");
  for (uint32_t k = 0; k < top; k++) {
    if (k) *w++ = ',';
    w = NSYS__W(w, "{\"name\":");
    uint32_t nm = n->kernels[k].name;
    memcpy(w, o->names->esc[nm], o->names->len[nm]);
    w += o->names->len[nm];
    w = NSYS__W(w, ",\"count\":");
    w = nsys__w_i64(w, n->kernels[k].count);
    w = NSYS__W(w, ",\"ns\":");
    w = nsys__w_i64(w, n->kernels[k].ns);
    *w++ = '}';
  }
  w = NSYS__W(w, "],\"children\":[");
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

static cJSON *nsys__nvtx_tree(nsys_call *call) {
  nsys_nvtx_tree_opts o;
  memset(&o, 0, sizeof o);
  o.max_depth = -1;
  int64_t start = INT64_MIN, end = INT64_MAX, device = -1, max_depth = -1, top = 5;
  bool aggregate = false;
  if (!nsys_param_int64(call, "start", false, INT64_MIN / 4, INT64_MAX / 4, &start) ||
      !nsys_param_int64(call, "end", false, INT64_MIN / 4, INT64_MAX / 4, &end) ||
      !nsys_param_int64(call, "device", false, 0, INT32_MAX, &device) ||
      !nsys_param_int64(call, "maxDepth", false, 0, 65535, &max_depth) ||
      !nsys_param_int64(call, "topKernels", false, 0, 1000, &top) ||
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
  nsys_nvtx_tree *t = nsys_nvtx_tree_build(ix, &o, call);
  if (!t) {
    nsys_profile_release(p);
    return NULL;
  }
  nsys__names names = {&ix->strings, NULL, NULL};
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
  cJSON_AddItemToObject(res, "roots", nsys__raw_take(&b));
  cJSON_AddNumberToObject(res, "nodeCount", t->n_nodes);
  cJSON_AddNumberToObject(res, "rangeCount", t->n_ranges_considered);
  cJSON_AddBoolToObject(res, "aggregated", aggregate);
  nsys_strbuf_free(&b);
  nsys__names_free(&names);
  nsys_nvtx_tree_free(t);
  nsys_profile_release(p);
  return res;
}

/* ---- kernel/details ----------------------------------------------------- */

static const char *const nsys__op_tables[] = {"kernel", "memcpy", "memset", "graph"};

static bool nsys__is_string_column(const char *table_kind, const char *col) {
  (void)table_kind;
  return strcmp(col, "demangledName") == 0 || strcmp(col, "shortName") == 0 ||
         strcmp(col, "mangledName") == 0;
}

static cJSON *nsys__source_row(nsys_profile *p, uint8_t kind, int64_t rowid) {
  if (kind > NSYS_OP_GRAPH) return NULL;
  nsys_table t = kind == NSYS_OP_MEMCPY   ? NSYS_TBL_MEMCPY
                 : kind == NSYS_OP_MEMSET ? NSYS_TBL_MEMSET
                 : kind == NSYS_OP_GRAPH  ? NSYS_TBL_GRAPH_TRACE
                                          : NSYS_TBL_KERNEL;
  const char *real = p->schema.table[t];
  static const char *const fallback[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"};
  if (!real && p->schema.n_all_tables == 0) real = fallback[kind];
  if (!real) return NULL;
  char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" WHERE rowid = %lld", real, (long long)rowid);
  sqlite3_stmt *st = NULL;
  cJSON *cols = NULL;
  if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    cols = cJSON_CreateObject();
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
      const char *name = sqlite3_column_name(st, i);
      switch (sqlite3_column_type(st, i)) {
      case SQLITE_INTEGER: {
        int64_t v = sqlite3_column_int64(st, i);
        const char *s = nsys__is_string_column(nsys__op_tables[kind], name) ? nsys_profile_string(p, v) : NULL;
        if (s) cJSON_AddStringToObject(cols, name, s);
        else nsys_json_add_i64(cols, name, v);
        break;
      }
      case SQLITE_FLOAT: cJSON_AddNumberToObject(cols, name, sqlite3_column_double(st, i)); break;
      case SQLITE_TEXT: {
        char *clean = nsys_utf8_sanitize((const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
        cJSON_AddStringToObject(cols, name, clean);
        free(clean);
        break;
      }
      case SQLITE_NULL: cJSON_AddNullToObject(cols, name); break;
      default: cJSON_AddNullToObject(cols, name); break;
      }
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return cols;
}

static cJSON *nsys__kernel_details(nsys_call *call) {
  int64_t id = -1;
  if (!nsys_param_int64(call, "kernelId", true, 0, UINT32_MAX, &id)) return NULL;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  if ((uint64_t)id >= ix->ops.n) {
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_NOT_FOUND, "params.kernelId: no GPU operation %lld (the profile has %u)",
                          (long long)id, ix->ops.n);
  }
  uint32_t i = (uint32_t)id;
  const nsys_gpu_track *tr = &ix->tracks[ix->ops.track[i]];
  cJSON *res = cJSON_CreateObject();
  cJSON_AddNumberToObject(res, "id", i);
  cJSON_AddStringToObject(res, "kind", nsys_op_kind_name(ix->ops.kind[i]));
  cJSON_AddStringToObject(res, "name", nsys__s(ix, ix->ops.name[i]));
  cJSON_AddStringToObject(res, "demangledName", nsys__s(ix, ix->ops.full_name[i]));
  cJSON_AddStringToObject(res, "displayName", nsys__s(ix, nsys_op_display_name(ix, i)));
  nsys_json_add_i64(res, "start", ix->ops.start[i]);
  nsys_json_add_i64(res, "end", ix->ops.end[i]);
  nsys_json_add_i64(res, "durNs", nsys_op_dur(ix, i));
  cJSON_AddNumberToObject(res, "device", tr->device);
  nsys_json_add_i64(res, "stream", tr->stream);
  cJSON_AddNumberToObject(res, "pid", tr->pid);
  uint32_t tl_index = 0;
  for (uint32_t k = 0; k < nsys_tl_track_count(ix); k++) {
    const nsys_tl_track *t = nsys_tl_track_at(ix, k);
    if (t->kind == NSYS_TL_GPU && t->ref == ix->ops.track[i]) {
      tl_index = k;
      cJSON_AddStringToObject(res, "track", t->id);
      break;
    }
  }
  (void)tl_index;
  cJSON_AddStringToObject(res, "streamClass", nsys_stream_class_name(tr->cls));
  nsys_json_add_i64(res, "rowid", ix->ops.rowid[i]);
  cJSON *cols = nsys__source_row(p, ix->ops.kind[i], ix->ops.rowid[i]);
  cJSON_AddItemToObject(res, "columns", cols ? cols : cJSON_CreateObject());
  int32_t a = ix->ops.api[i];
  if (a >= 0) {
    const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
    cJSON *api = cJSON_AddObjectToObject(res, "api");
    cJSON_AddNumberToObject(api, "id", a);
    cJSON_AddStringToObject(api, "name", nsys__s(ix, ix->api.name[a]));
    cJSON_AddNumberToObject(api, "pid", th->pid);
    cJSON_AddNumberToObject(api, "tid", th->tid);
    cJSON_AddStringToObject(api, "threadName", nsys__s(ix, th->name));
    nsys_json_add_i64(api, "start", ix->api.start[a]);
    nsys_json_add_i64(api, "end", ix->api.end[a]);
    nsys_json_add_i64(api, "correlationId", ix->api.correlation[a]);
    nsys_json_add_i64(api, "queueDelayNs", ix->ops.start[i] - ix->api.end[a]);
    cJSON *path = cJSON_AddArrayToObject(res, "nvtxPath");
    int32_t r = nsys_nvtx_innermost(ix, (uint32_t)a);
    /* outermost first */
    int32_t chain[256];
    int n = 0;
    for (; r >= 0 && n < 256; r = ix->nvtx.parent[r]) chain[n++] = r;
    for (int k = n; k-- > 0;) {
      cJSON *nd = cJSON_CreateObject();
      cJSON_AddNumberToObject(nd, "id", chain[k]);
      cJSON_AddStringToObject(nd, "name", nsys__s(ix, ix->nvtx.name[chain[k]]));
      cJSON_AddStringToObject(nd, "domain", nsys__s(ix, ix->nvtx.domain[chain[k]]));
      nsys_json_add_i64(nd, "start", ix->nvtx.start[chain[k]]);
      nsys_json_add_i64(nd, "end", ix->nvtx.end[chain[k]]);
      cJSON_AddItemToArray(path, nd);
    }
  } else {
    cJSON_AddNullToObject(res, "api");
    cJSON_AddArrayToObject(res, "nvtxPath");
  }
  nsys_profile_release(p);
  return res;
}

/* ---- search ------------------------------------------------------------- */

typedef struct {
  uint32_t name;   /* display name (kernel short name or NVTX text) */
  uint32_t count;
  int64_t ns;
  uint32_t example; /* kernels: the demangled name with the most matched GPU time */
  bool is_nvtx;
} nsys__hit;

static bool nsys__match(const char *q, bool glob, const char *s) {
  if (glob) return fnmatch(q, s, FNM_CASEFOLD) == 0;
  return strcasestr(s, q) != NULL;
}

static int nsys__cmp_hit(const void *a, const void *b) {
  const nsys__hit *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

static cJSON *nsys__search(nsys_call *call) {
  const char *q = NULL;
  const cJSON *kinds = NULL;
  int64_t limit = 50;
  if (!nsys_param_string(call, "query", true, &q) || !nsys_param_array(call, "kinds", false, &kinds) ||
      !nsys_param_int64(call, "limit", false, 1, 100000, &limit))
    return NULL;
  if (!q[0]) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.query: must not be empty");
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
  bool glob = strpbrk(q, "*?[") != NULL;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  uint32_t ns = ix->strings.count;
  /* per string id: 0 unknown, 1 match, 2 no match */
  uint8_t *m = nsys_xcalloc(ns + 1, 1);
#define NSYS__M(id) (m[id] ? m[id] == 1 : (m[id] = nsys__match(q, glob, nsys__s(ix, id)) ? 1 : 2) == 1)
  uint32_t *kidx = nsys_xmalloc((ns + 1) * sizeof(uint32_t)); /* name id -> hit + 1 */
  uint32_t *nidx = nsys_xmalloc((ns + 1) * sizeof(uint32_t));
  memset(kidx, 0, (ns + 1) * sizeof(uint32_t));
  memset(nidx, 0, (ns + 1) * sizeof(uint32_t));
  nsys__hit *hits = NULL;
  uint32_t nh = 0, caph = 0;
  int64_t total_count = 0;
  int64_t *full_ns = want_k ? nsys_xcalloc(ns + 1, sizeof(int64_t)) : NULL; /* matched GPU time per name */
  if (want_k) {
    for (uint32_t i = 0; i < ix->ops.n; i++) {
      if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
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
      total_count++;
    }
  }
  if (want_n) {
    for (uint32_t i = 0; i < ix->nvtx.n; i++) {
      uint32_t nm = ix->nvtx.name[i];
      if (!NSYS__M(nm)) continue;
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
      total_count++;
    }
  }
#undef NSYS__M
  if (nh) qsort(hits, nh, sizeof *hits, nsys__cmp_hit);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "query", q);
  cJSON_AddStringToObject(res, "mode", glob ? "glob" : "substring");
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
  free(hits);
  free(kidx);
  free(nidx);
  free(m);
  free(full_ns);
  nsys_profile_release(p);
  return res;
}

/* ---- export/perfetto ---------------------------------------------------- */

#define NSYS__GPU_PID_BASE 1000000000

typedef struct {
  FILE *f;
  bool first;
  int64_t origin;
  nsys__names *names;
  uint64_t events, slices_gpu, slices_nvtx, slices_api, flows;
} nsys__pf;

static void nsys__pf_sep(nsys__pf *w) {
  if (!w->first) fputs(",\n", w->f);
  w->first = false;
  w->events++;
}

static void nsys__pf_ts(nsys__pf *w, const char *key, int64_t ns) {
  int64_t rel = ns - w->origin;
  fprintf(w->f, "\"%s\":%lld.%03lld", key, (long long)(rel / 1000), (long long)(rel % 1000 < 0 ? -(rel % 1000) : rel % 1000));
}

static void nsys__pf_meta(nsys__pf *w, const char *what, long long pid, long long tid, const char *name) {
  nsys__pf_sep(w);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys__js_str(&b, name);
  fprintf(w->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":%s}}", what, pid, tid, b.data);
  nsys_strbuf_free(&b);
}

static cJSON *nsys__export_perfetto(nsys_call *call) {
  const char *path = NULL;
  int64_t start = INT64_MIN, end = INT64_MAX;
  if (!nsys_param_string(call, "path", true, &path) ||
      !nsys_param_int64(call, "start", false, INT64_MIN / 4, INT64_MAX / 4, &start) ||
      !nsys_param_int64(call, "end", false, INT64_MIN / 4, INT64_MAX / 4, &end))
    return NULL;
  if (!path[0]) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.path: must not be empty");
  if (end < start) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must not be before params.start");
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  char *tmp = nsys_xasprintf("%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_IO, "params.path: cannot write %s", path);
  }
  nsys__names names = {&ix->strings, NULL, NULL};
  nsys__pf w = {f, true, ix->span_start, &names, 0, 0, 0, 0, 0};
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
  /* processes and threads */
  int32_t last_dev = INT32_MIN;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *g = &ix->tracks[t];
    long long gp = NSYS__GPU_PID_BASE + g->device;
    char name[128];
    if (g->device != last_dev) {
      snprintf(name, sizeof name, "GPU %d", g->device);
      nsys__pf_meta(&w, "process_name", gp, 0, name);
      last_dev = g->device;
    }
    snprintf(name, sizeof name, "Stream %lld (%s, pid %u)", (long long)g->stream, nsys_stream_class_name(g->cls), g->pid);
    nsys__pf_meta(&w, "thread_name", gp, g->stream, name);
  }
  uint32_t last_pid = UINT32_MAX;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    char name[300];
    if (th->pid != last_pid) {
      snprintf(name, sizeof name, "Process %u", th->pid);
      nsys__pf_meta(&w, "process_name", th->pid, 0, name);
      last_pid = th->pid;
    }
    const char *tn = nsys__s(ix, th->name);
    snprintf(name, sizeof name, "%s%s%u", tn, tn[0] ? " " : "tid ", th->tid);
    nsys__pf_meta(&w, "thread_name", th->pid, th->tid, name);
  }
  /* GPU ops, with flow ends */
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    if (ix->ops.start[i] > end || ix->ops.end[i] < start) continue;
    if ((i & 0xFFFF) == 0 && nsys_call_cancelled(call)) break;
    const nsys_gpu_track *g = &ix->tracks[ix->ops.track[i]];
    nsys__pf_sep(&w);
    /* slice name: the display name; the names CUPTI recorded go in args */
    uint32_t disp = nsys_op_display_name(ix, i);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":%s,\"pid\":%d,\"tid\":%lld,", nsys_op_kind_name(ix->ops.kind[i]),
            nsys__name(&names, disp), NSYS__GPU_PID_BASE + g->device, (long long)g->stream);
    nsys__pf_ts(&w, "ts", ix->ops.start[i]);
    fputc(',', f);
    int64_t d = nsys_op_dur(ix, i);
    fprintf(f, "\"dur\":%lld.%03lld,\"args\":{\"kernelId\":%u", (long long)(d / 1000), (long long)(d % 1000), i);
    if (ix->ops.kind[i] == NSYS_OP_KERNEL) {
      fprintf(f, ",\"shortName\":%s", nsys__name(&names, ix->ops.name[i]));
      fprintf(f, ",\"demangledName\":%s", nsys__name(&names, ix->ops.full_name[i]));
    }
    fputs("}}", f);
    w.slices_gpu++;
    int32_t a = ix->ops.api[i];
    if (a >= 0 && ix->api.start[a] <= end && ix->api.end[a] >= start) {
      nsys__pf_sep(&w);
      fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%u,\"pid\":%d,\"tid\":%lld,", i,
              NSYS__GPU_PID_BASE + g->device, (long long)g->stream);
      nsys__pf_ts(&w, "ts", ix->ops.start[i]);
      fputc('}', f);
      const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
      nsys__pf_sep(&w);
      fprintf(f, "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%u,\"pid\":%u,\"tid\":%u,", i, th->pid, th->tid);
      nsys__pf_ts(&w, "ts", ix->api.start[a]);
      fputc('}', f);
      w.flows++;
    }
  }
  /* host: NVTX ranges and CUDA API calls */
  for (uint32_t i = 0; i < ix->nvtx.n; i++) {
    if (ix->nvtx.start[i] > end || ix->nvtx.end[i] < start) continue;
    const nsys_host_thread *th = &ix->threads[ix->nvtx.thread[i]];
    nsys__pf_sep(&w);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":%s,\"pid\":%u,\"tid\":%u,", nsys__name(&names, ix->nvtx.name[i]),
            th->pid, th->tid);
    nsys__pf_ts(&w, "ts", ix->nvtx.start[i]);
    int64_t d = ix->nvtx.end[i] - ix->nvtx.start[i];
    fprintf(f, ",\"dur\":%lld.%03lld,\"args\":{\"nvtxId\":%u,\"domain\":%s}}", (long long)(d / 1000), (long long)(d % 1000),
            i, nsys__name(&names, ix->nvtx.domain[i]));
    w.slices_nvtx++;
  }
  for (uint32_t i = 0; i < ix->api.n; i++) {
    if (ix->api.start[i] > end || ix->api.end[i] < start) continue;
    const nsys_host_thread *th = &ix->threads[ix->api.thread[i]];
    nsys__pf_sep(&w);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_api\",\"name\":%s,\"pid\":%u,\"tid\":%u,", nsys__name(&names, ix->api.name[i]),
            th->pid, th->tid);
    nsys__pf_ts(&w, "ts", ix->api.start[i]);
    int64_t d = ix->api.end[i] - ix->api.start[i];
    fprintf(f, ",\"dur\":%lld.%03lld,\"args\":{\"apiId\":%u}}", (long long)(d / 1000), (long long)(d % 1000), i);
    w.slices_api++;
  }
  fputs("\n]}\n", f);
  nsys__names_free(&names);
  bool ok = !ferror(f);
  long size = ftell(f);
  ok = fclose(f) == 0 && ok;
  if (nsys_call_cancelled(call)) {
    remove(tmp);
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail_cancelled(call);
  }
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_IO, "params.path: cannot write %s", path);
  }
  free(tmp);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "path", path);
  cJSON_AddNumberToObject(res, "bytes", (double)size);
  cJSON_AddNumberToObject(res, "events", (double)w.events);
  cJSON *sl = cJSON_AddObjectToObject(res, "slices");
  cJSON_AddNumberToObject(sl, "gpu", (double)w.slices_gpu);
  cJSON_AddNumberToObject(sl, "nvtx", (double)w.slices_nvtx);
  cJSON_AddNumberToObject(sl, "api", (double)w.slices_api);
  cJSON_AddNumberToObject(res, "flows", (double)w.flows);
  nsys_profile_release(p);
  return res;
}

const nsys_method nsys_methods_timeline[] = {
    {"timeline/tracks", nsys__timeline_tracks, 0},
    {"timeline/range", nsys__timeline_range, 0},
    {"nvtx/tree", nsys__nvtx_tree, 0},
    {"kernel/details", nsys__kernel_details, 0},
    {"search", nsys__search, 0},
    {"export/perfetto", nsys__export_perfetto, 0},
    {NULL, NULL, 0},
};
