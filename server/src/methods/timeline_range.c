/* timeline/range {profileId, start, end, width, tracks?, maxEvents?, format?, fields?,
 *                 maxBytes?, cursor?}
 *   -> {resolution, start, end, tracks, truncated?, next?} ("objects") or, with
 *      format "columns", {resolution, start, end, format, names, tracks, ...}
 *      (one array per field). Tracks that would take the reply past maxBytes
 *      are left for the next page (`next`, passed back as `cursor`).
 * Per track: its events when few start in the window, else buckets on a
 * power-of-two grid, answered from the index's summaries (index_query.h) and
 * written as JSON text: a zoom step over millions of ops stays within a few
 * milliseconds. docs/protocol.md ("timeline/range"), protocol/schemas/timeline.range.*. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "methods/json_text.h"
#include "methods/reply_limit.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/json_write.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

typedef struct {
  const nsys_index *ix;
  const nsys_tl_track *t;
  nsys_strbuf *b;
  nsys_escaped_names *names;
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


static void nsys__emit_event(void *ctx, uint32_t row) {
  nsys__emit *e = ctx;
  int64_t s, en;
  uint32_t name_id;
  nsys_tl_row(e->ix, e->t->kind, row, &s, &en, &name_id);
  int depth = e->t->depth < 0 ? 0 : e->t->depth;
  const char *name = nsys_escaped_name(e->names, name_id);
  size_t name_len = name_id < e->names->tab->count ? e->names->len[name_id] : 2;
  const char *kind = nsys__event_kind(e->ix, e->t, row);
  size_t kind_len = strlen(kind);
  nsys_strbuf *b = e->b;
  nsys_strbuf_reserve(b, 192 + name_len + kind_len);
  char *o = b->data + b->len;
  if (!e->first) *o++ = ',';
  o = NSYS_TEXT_LIT(o, "{\"id\":");
  o = nsys_text_i64(o, nsys__row_id(e->ix, e->t, row));
  o = NSYS_TEXT_LIT(o, ",\"start\":");
  o = nsys_text_i64(o, s);
  o = NSYS_TEXT_LIT(o, ",\"end\":");
  o = nsys_text_i64(o, en);
  o = NSYS_TEXT_LIT(o, ",\"name\":");
  memcpy(o, name, name_len);
  o += name_len;
  o = NSYS_TEXT_LIT(o, ",\"kind\":\"");
  memcpy(o, kind, kind_len);
  o += kind_len;
  o = NSYS_TEXT_LIT(o, "\",\"depth\":");
  o = nsys_text_i64(o, depth);
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
  nsys_tl_bucket_vec vec; /* the track's buckets, filled by nsys_tl_bucket_collect */
  uint32_t *name, *id;    /* per bucket: longest's name (strtab id) and public id */
  size_t cap;             /* of name and id */
} nsys__bucket_batch;

/* The buckets of one track into bb (its previous contents dropped). */
static void nsys__batch_fill(const nsys_index *ix, uint32_t track, int64_t base, int64_t res, uint32_t nb,
                             nsys__bucket_batch *bb) {
  bb->vec.n = 0;
  nsys_tl_buckets(ix, track, base, res, nb, nsys_tl_bucket_collect, &bb->vec);
}

static void nsys__batch_resolve(const nsys_index *ix, const nsys_tl_track *t, nsys__bucket_batch *bb) {
  if (bb->vec.n > bb->cap) {
    bb->cap = bb->vec.cap;
    bb->name = nsys_xrealloc(bb->name, bb->cap * sizeof *bb->name);
    bb->id = nsys_xrealloc(bb->id, bb->cap * sizeof *bb->id);
  }
  const uint32_t *names = t->kind == NSYS_TL_GPU ? ix->ops.name : t->kind == NSYS_TL_API ? ix->api.name : ix->nvtx.name;
  for (size_t i = 0; i < bb->vec.n; i++) {
    uint32_t row = bb->vec.b[i].longest;
    if (row == UINT32_MAX) continue;
    uint32_t id = nsys__row_id(ix, t, row); /* projected rows: their NVTX range */
    bb->id[i] = id;
    bb->name[i] = names[t->kind == NSYS_TL_PROJ ? id : row];
  }
}

static void nsys__batch_free(nsys__bucket_batch *bb) {
  free(bb->vec.b);
  free(bb->name);
  free(bb->id);
}

static void nsys__emit_buckets(nsys__emit *e, const nsys__bucket_batch *bb) {
  nsys_strbuf *b = e->b;
  for (size_t i = 0; i < bb->vec.n; i++) {
    const nsys_tl_bucket *bk = &bb->vec.b[i];
    const char *name = NULL;
    size_t name_len = 0;
    if (bk->longest != UINT32_MAX) {
      uint32_t name_id = bb->name[i];
      name = nsys_escaped_name(e->names, name_id);
      name_len = name_id < e->names->tab->count ? e->names->len[name_id] : 2;
    }
    nsys_strbuf_reserve(b, 192 + name_len);
    char *o = b->data + b->len;
    if (i) *o++ = ',';
    o = NSYS_TEXT_LIT(o, "{\"start\":");
    o = nsys_text_i64(o, bk->start);
    o = NSYS_TEXT_LIT(o, ",\"end\":");
    o = nsys_text_i64(o, bk->end);
    o = NSYS_TEXT_LIT(o, ",\"count\":");
    o = nsys_text_i64(o, bk->count);
    o = NSYS_TEXT_LIT(o, ",\"busyNs\":");
    o = nsys_text_i64(o, bk->busy_ns);
    if (name) {
      o = NSYS_TEXT_LIT(o, ",\"longest\":{\"id\":");
      o = nsys_text_i64(o, bb->id[i]);
      o = NSYS_TEXT_LIT(o, ",\"name\":");
      memcpy(o, name, name_len);
      o += name_len;
      o = NSYS_TEXT_LIT(o, ",\"dur\":");
      o = nsys_text_i64(o, bk->longest_dur);
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
  nsys_escaped_names *esc;      /* escaped text per strtab id */
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
  const char *text = tab->count ? nsys_escaped_name(c->esc, id) : "\"\"";
  if (c->n) nsys_strbuf_putc(&c->list, ',');
  nsys_strbuf_puts(&c->list, text);
  if (tab->count) c->slot[id] = c->n + 1;
  return c->n++;
}

/* Forgets the names listed after the first n (list length len, n_kinds kinds). */
static void nsys__col_names_rollback(nsys__col_names *c, uint32_t n, size_t len, uint32_t n_kinds) {
  if (c->n == n) return;
  for (uint32_t i = 0; c->slot && i < c->esc->tab->count; i++)
    if (c->slot[i] > n) c->slot[i] = 0;
  c->n = n;
  c->list.len = len;
  if (c->list.data) c->list.data[len] = '\0';
  c->n_kinds = n_kinds;
}

static uint32_t nsys__col_kind(nsys__col_names *c, const char *kind) {
  for (uint32_t i = 0; i < c->n_kinds; i++)
    if (c->kinds[i] == kind || strcmp(c->kinds[i], kind) == 0) return c->kind_slot[i];
  if (c->n) nsys_strbuf_putc(&c->list, ',');
  nsys_json_escape(&c->list, kind);
  if (c->n_kinds < 16) {
    c->kinds[c->n_kinds] = kind;
    c->kind_slot[c->n_kinds++] = c->n;
  }
  return c->n++;
}

/* Event columns 0-5; bucket columns 0-5 and the compact encodings 6-7 (only when asked). */
enum { NSYS__COLS = 8, NSYS__EVENT_COLS = 6, NSYS__BUCKET_DEFAULT_COLS = 6 };

typedef struct {
  const nsys_index *ix;
  const nsys_tl_track *t;
  nsys__col_names *names;
  nsys_strbuf col[NSYS__COLS];
  int64_t base, res;
  uint32_t n;
  unsigned ev_mask, bk_mask; /* columns asked for (params.fields), bit k = column k */
  unsigned mask;             /* the current track's: ev_mask or bk_mask */
  int64_t prev_index;        /* the previous bucket's index in this track (indexStep) */
} nsys__col_emit;

static void nsys__col_put(nsys__col_emit *e, int k, int64_t v) {
  if (!(e->mask & (1u << k))) return;
  nsys_strbuf *b = &e->col[k];
  nsys_strbuf_reserve(b, 24);
  char *o = b->data + b->len;
  if (e->n) *o++ = ',';
  o = nsys_text_i64(o, v);
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
  for (size_t i = 0; i < bb->vec.n; i++) {
    const nsys_tl_bucket *bk = &bb->vec.b[i];
    int64_t id = -1, name = -1, dur = 0;
    if (bk->longest != UINT32_MAX) { /* id and name are resolved only when asked for */
      if (e->mask & (1u << 3)) id = bb->id[i];
      if (e->mask & (1u << 4)) name = nsys__col_name(e->names, bb->name[i]);
      dur = bk->longest_dur;
    }
    int64_t index = (bk->start - e->base) / e->res;
    nsys__col_put(e, 0, index);
    nsys__col_put(e, 1, bk->count);
    nsys__col_put(e, 2, bk->busy_ns);
    nsys__col_put(e, 3, id);
    nsys__col_put(e, 4, name);
    nsys__col_put(e, 5, dur);
    /* compact encodings: the step from the previous bucket's index (from 0 for the first),
     * and the busy share in whole percent, rounded up so that any busy time shows */
    nsys__col_put(e, 6, index - (i ? e->prev_index : 0));
    e->prev_index = index;
    if (e->mask & (1u << 7)) {
      int64_t pct = bk->busy_ns <= 0 ? 0 : bk->busy_ns >= e->res ? 100
                  : e->res <= INT64_MAX / 100 ? (bk->busy_ns * 100 + e->res - 1) / e->res
                  : (int64_t)ceil((double)bk->busy_ns * 100.0 / (double)e->res);
      nsys__col_put(e, 7, pct);
    }
    e->n++;
  }
}

static const char *const nsys__event_cols[NSYS__EVENT_COLS] = {"id", "start", "end", "name", "kind", "depth"};
static const char *const nsys__bucket_cols[NSYS__COLS] = {"index",     "count",      "busyNs",    "longestId",
                                                          "longestName", "longestDur", "indexStep", "busyPct"};

/* Writes `"events":{...}` or `"buckets":{...}` for one track into b. */
static void nsys__col_track(nsys_strbuf *b, nsys__col_emit *e, bool events) {
  const char *const *keys = events ? nsys__event_cols : nsys__bucket_cols;
  nsys_strbuf_puts(b, events ? ",\"events\":{" : ",\"buckets\":{");
  bool first = true;
  for (int k = 0; k < (events ? NSYS__EVENT_COLS : NSYS__COLS); k++) {
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

/* params.fields -> the event and bucket column masks (absent: every column but the
 * compact bucket encodings). */
static bool nsys__parse_fields(nsys_call *call, const cJSON *fields, bool columns, unsigned *ev, unsigned *bk) {
  *ev = (1u << NSYS__EVENT_COLS) - 1;
  *bk = (1u << NSYS__BUCKET_DEFAULT_COLS) - 1;
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
      if (k < NSYS__EVENT_COLS && strcmp(f->valuestring, nsys__event_cols[k]) == 0) *ev |= 1u << k, known = true;
      if (strcmp(f->valuestring, nsys__bucket_cols[k]) == 0) *bk |= 1u << k, known = true;
    }
    if (!known) {
      nsys_call_fail(call, NSYS_E_INVALID_PARAMS,
                     "params.fields[%d]: expected a column name (events: id, start, end, name, kind, depth; "
                     "buckets: index, count, busyNs, longestId, longestName, longestDur, indexStep, busyPct)", i);
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

cJSON *nsys_method_timeline_range(nsys_call *call) {
  int64_t start = 0, end = 0, width = 0, max_events = -1, max_bytes = NSYS_REPLY_MAX_BYTES;
  const cJSON *tracks = NULL, *fields = NULL;
  const char *cursor = NULL;
  if (!nsys_reply_max_bytes(call, &max_bytes) || !nsys_param_string(call, "cursor", false, &cursor) ||
      !nsys_param_int64(call, NSYS_P_TIMELINE_RANGE_START, &start) ||
      !nsys_param_int64(call, NSYS_P_TIMELINE_RANGE_END, &end) ||
      !nsys_param_int64(call, NSYS_P_TIMELINE_RANGE_WIDTH, &width) ||
      !nsys_param_int64(call, NSYS_P_TIMELINE_RANGE_MAX_EVENTS, &max_events) ||
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
  /* a page of tracks: the continuation token names the request it continues */
  int64_t key_fields[8] = {start, end, width, max_events, columns, (int64_t)ev_mask << 16 | bk_mask,
                           (int64_t)ix->ops.n, ix->span_start};
  uint64_t key = nsys_fnv1a(key_fields, sizeof key_fields, nsys_fnv1a(sel, n_sel * sizeof *sel, 1469598103934665603ull));
  uint64_t first = 0;
  if (cursor && (!nsys_cursor_decode(cursor, key, &first) || first >= n_sel)) {
    free(sel);
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.cursor: not a continuation of this request");
  }
  size_t budget = (size_t)max_bytes > 512 ? (size_t)max_bytes - 512 : 0; /* the envelope takes less */
  uint32_t next = n_sel;
  nsys_escaped_names names = {&ix->strings, NULL, NULL};
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
  size_t mark_b = b.len, mark_list = 0;
  uint32_t mark_n = 0, mark_kinds = 0;
  for (uint32_t k = (uint32_t)first; k < n_sel && !cancelled; k++) {
    if (nsys_call_cancelled(call)) {
      cancelled = true;
      break;
    }
    /* past the budget: the previous track (unless it is the page's first:
     * a page always holds one) and the rest go to the next page */
    if (k > first && b.len + cnames.list.len > budget) {
      next = k;
      if (k - 1 > first) {
        nsys__col_names_rollback(&cnames, mark_n, mark_list, mark_kinds);
        b.len = mark_b;
        next = k - 1;
      }
      break;
    }
    mark_b = b.len;
    mark_n = cnames.n;
    mark_list = cnames.list.len;
    mark_kinds = cnames.n_kinds;
    const nsys_tl_track *t = nsys_tl_track_at(ix, sel[k]);
    nsys_strbuf_printf(&b, "%s{\"id\":", k > first ? "," : "");
    nsys_json_escape(&b, t->id);
    uint32_t n = nsys_tl_count(ix, sel[k], base, gend);
    bool events = max_events > 0 && n <= (uint64_t)max_events;
    if (columns) {
      ce.t = t;
      ce.mask = events ? ev_mask : bk_mask;
      if (events) {
        nsys_tl_events(ix, sel[k], start, end, nsys__col_event, &ce);
      } else {
        nsys__batch_fill(ix, sel[k], base, res, nb, &batch);
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
      nsys__batch_fill(ix, sel[k], base, res, nb, &batch);
      nsys__batch_resolve(ix, t, &batch);
      nsys__emit_buckets(&e, &batch);
    }
    nsys_strbuf_puts(&b, "]}");
  }
  if (!cancelled && next == n_sel && n_sel > first + 1 && b.len + cnames.list.len > budget) {
    nsys__col_names_rollback(&cnames, mark_n, mark_list, mark_kinds);
    b.len = mark_b;
    next = n_sel - 1;
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
      cJSON_AddItemToObject(out, "names", nsys_json_raw_take(&names_text));
      nsys_strbuf_free(&names_text);
    }
    cJSON_AddItemToObject(out, "tracks", nsys_json_raw_take(&b));
    if (next < n_sel) {
      char tok[NSYS_CURSOR_LEN + 1];
      nsys_cursor_encode(tok, key, next);
      cJSON_AddTrueToObject(out, "truncated");
      cJSON_AddStringToObject(out, "next", tok);
    }
  }
  nsys_strbuf_free(&b);
  nsys__batch_free(&batch);
  for (int k = 0; k < NSYS__COLS; k++) nsys_strbuf_free(&ce.col[k]);
  nsys_strbuf_free(&cnames.list);
  free(cnames.slot);
  nsys_escaped_names_free(&names);
  free(sel);
  nsys_profile_release(p);
  return cancelled ? nsys_call_fail_cancelled(call) : out;
}
