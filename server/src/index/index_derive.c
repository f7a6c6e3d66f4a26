/* Everything derived from the contract arrays, recomputed after a build and
 * after a cache load: display names of kernels, NVTX rows per (thread,
 * depth), NVTX ranges projected on each GPU (nvtx_gpu_proj_trace semantics),
 * a summary series per timeline track, and the track list in display order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kname_display.h"
#include "common/util.h"
#include "index/index_internal.h"

/* ---- the projection sweep ---------------------------------------------- */

void nsys_nvtx_sweep(const nsys_index *ix, uint32_t thread, nsys_nvtx_sweep_fn fn, void *ctx) {
  const nsys_host_thread *th = &ix->threads[thread];
  if (!th->nvtx_count || !th->api_count) return;
  uint32_t cap = 64, sp = 0;
  uint32_t *stack = nsys_xmalloc(cap * sizeof(uint32_t));
  uint32_t *enc = nsys_xmalloc(cap * sizeof(uint32_t));
  uint32_t r = th->nvtx_first, r_end = th->nvtx_first + th->nvtx_count;
  const nsys_nvtx_ranges *v = &ix->nvtx;
  for (uint32_t a = th->api_first; a < th->api_first + th->api_count; a++) {
    if (ix->api.first_op[a] < 0) continue;
    int64_t as = ix->api.start[a], ae = ix->api.end[a];
    while (r < r_end && v->start[r] <= as) {
      /* drop ranges that ended before this one starts (they contain nothing later) */
      while (sp && v->end[stack[sp - 1]] < v->start[r]) sp--;
      if (sp == cap) {
        cap *= 2;
        stack = nsys_xrealloc(stack, cap * sizeof(uint32_t));
        enc = nsys_xrealloc(enc, cap * sizeof(uint32_t));
      }
      stack[sp++] = r++;
    }
    while (sp && v->end[stack[sp - 1]] < as) sp--;
    uint32_t n = 0;
    for (uint32_t k = 0; k < sp; k++) {
      uint32_t q = stack[k];
      if (v->end[q] >= ae) enc[n++] = q;
    }
    if (n) fn(ctx, a, enc, n);
  }
  free(stack);
  free(enc);
}

/* ---- projected rows ------------------------------------------------------ */

typedef struct {
  const nsys_index *ix;
  int32_t device;
  int64_t *ps, *pe; /* per range of the thread (offset nvtx_first) */
  uint32_t base;
  bool any;
} nsys__proj_ctx;

static void nsys__proj_cb(void *c_, uint32_t api, const uint32_t *enc, uint32_t n) {
  nsys__proj_ctx *c = c_;
  const nsys_index *ix = c->ix;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int32_t o = ix->api.first_op[api]; o >= 0; o = ix->op_next[o]) {
    if (ix->tracks[ix->ops.track[o]].device != c->device) continue;
    if (ix->ops.start[o] < lo) lo = ix->ops.start[o];
    if (ix->ops.end[o] > hi) hi = ix->ops.end[o];
  }
  if (lo == INT64_MAX) return;
  c->any = true;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t q = enc[k] - c->base;
    if (lo < c->ps[q]) c->ps[q] = lo;
    if (hi > c->pe[q]) c->pe[q] = hi;
  }
}

typedef struct {
  int32_t device;
  uint16_t depth;
  int64_t start;
  uint32_t nvtx;
  int64_t end;
} nsys__proj_tmp;

static int nsys__cmp_proj(const void *a, const void *b) {
  const nsys__proj_tmp *x = a, *y = b;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->nvtx < y->nvtx ? -1 : x->nvtx > y->nvtx;
}

static void nsys__derive_projection(nsys_index *ix, nsys__index_priv *pv) {
  /* devices present */
  int32_t *devs = NULL;
  uint32_t nd = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (!nd || devs[nd - 1] != ix->tracks[t].device) {
      devs = nsys_xrealloc(devs, (nd + 1) * sizeof *devs);
      devs[nd++] = ix->tracks[t].device;
    }
  nsys__proj_tmp *tmp = NULL;
  size_t n_tmp = 0, cap_tmp = 0;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    if (!th->nvtx_count || !th->api_count) continue;
    /* only the GPUs this thread launched work on */
    bool *used = nsys_xcalloc(nd + 1, sizeof(bool));
    int32_t last_dev = INT32_MIN;
    for (uint32_t a = th->api_first; a < th->api_first + th->api_count; a++)
      for (int32_t o = ix->api.first_op[a]; o >= 0; o = ix->op_next[o]) {
        int32_t dv = ix->tracks[ix->ops.track[o]].device;
        if (dv == last_dev) continue;
        last_dev = dv;
        for (uint32_t d = 0; d < nd; d++)
          if (devs[d] == dv) used[d] = true;
      }
    int64_t *ps = nsys_xmalloc(th->nvtx_count * sizeof(int64_t));
    int64_t *pe = nsys_xmalloc(th->nvtx_count * sizeof(int64_t));
    for (uint32_t d = 0; d < nd; d++) {
      if (!used[d]) continue;
      for (uint32_t k = 0; k < th->nvtx_count; k++) {
        ps[k] = INT64_MAX;
        pe[k] = INT64_MIN;
      }
      nsys__proj_ctx c = {ix, devs[d], ps, pe, th->nvtx_first, false};
      nsys_nvtx_sweep(ix, t, nsys__proj_cb, &c);
      if (!c.any) continue;
      for (uint32_t k = 0; k < th->nvtx_count; k++) {
        if (ps[k] == INT64_MAX) continue;
        if (n_tmp == cap_tmp) {
          cap_tmp = cap_tmp ? cap_tmp * 2 : 1024;
          tmp = nsys_xrealloc(tmp, cap_tmp * sizeof *tmp);
        }
        uint32_t q = th->nvtx_first + k;
        tmp[n_tmp++] = (nsys__proj_tmp){devs[d], ix->nvtx.depth[q], ps[k], q, pe[k]};
      }
    }
    free(ps);
    free(pe);
    free(used);
  }
  free(devs);
  if (n_tmp) qsort(tmp, n_tmp, sizeof *tmp, nsys__cmp_proj);
  pv->n_proj = (uint32_t)n_tmp;
  pv->proj_nvtx = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(uint32_t));
  pv->proj_start = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(int64_t));
  pv->proj_end = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(int64_t));
  for (size_t i = 0; i < n_tmp; i++) {
    pv->proj_nvtx[i] = tmp[i].nvtx;
    pv->proj_start[i] = tmp[i].start;
    pv->proj_end[i] = tmp[i].end;
    if (!pv->n_proj_rows || pv->proj_rows[pv->n_proj_rows - 1].device != tmp[i].device ||
        pv->proj_rows[pv->n_proj_rows - 1].depth != tmp[i].depth) {
      pv->proj_rows = nsys_xrealloc(pv->proj_rows, (pv->n_proj_rows + 1) * sizeof *pv->proj_rows);
      nsys__proj_row *row = &pv->proj_rows[pv->n_proj_rows++];
      memset(row, 0, sizeof *row); /* the cache writes it raw: no stale padding bytes */
      row->device = tmp[i].device;
      row->depth = tmp[i].depth;
      row->first = (uint32_t)i;
    }
    pv->proj_rows[pv->n_proj_rows - 1].count++;
  }
  free(tmp);
}

/* ---- display names -------------------------------------------------------- */

/* One simplified name per distinct kernel name (ops.full_name), interned in
 * ix->strings: a cache load finds the strings saved by the build, so ids are
 * the same on every open of a file. */
static void nsys__derive_display_names(nsys_index *ix) {
  uint32_t n = ix->strings.count;
  uint32_t *disp = nsys_xmalloc(((size_t)n + 1) * sizeof *disp);
  for (uint32_t i = 0; i < n; i++) disp[i] = NSYS_STR_NONE;
  uint32_t last = NSYS_STR_NONE;
  char buf[NSYS_KNAME_DISPLAY_MAX + 8];
  for (uint32_t op = 0; op < ix->ops.n; op++) {
    uint32_t k = ix->ops.full_name[op];
    if (k == last || ix->ops.kind[op] != NSYS_OP_KERNEL || k >= n) continue;
    last = k;
    if (disp[k] != NSYS_STR_NONE) continue;
    nsys_kname_display(nsys_strtab_get(&ix->strings, k),
                       nsys_strtab_get(&ix->strings, ix->ops.name[op]), buf, sizeof buf);
    disp[k] = buf[0] ? nsys_strtab_intern(&ix->strings, buf, strlen(buf)) : k;
  }
  for (uint32_t i = 0; i < n; i++)
    if (disp[i] == NSYS_STR_NONE) disp[i] = i;
  free(ix->display);
  ix->display = disp;
  ix->n_display = n;
}

/* ---- NVTX rows per (thread, depth) --------------------------------------- */

static void nsys__derive_depth_rows(nsys_index *ix, nsys__index_priv *pv) {
  uint32_t n = ix->nvtx.n;
  pv->nvtx_by_depth = nsys_xmalloc((n ? n : 1) * sizeof(uint32_t));
  pv->thread_depth_first = nsys_xmalloc(((size_t)ix->n_threads + 1) * sizeof(uint32_t));
  uint32_t rows = 0;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    pv->thread_depth_first[t] = rows;
    if (ix->threads[t].nvtx_count) rows += (uint32_t)ix->threads[t].nvtx_max_depth + 1;
  }
  pv->thread_depth_first[ix->n_threads] = rows;
  pv->n_depth_rows = rows;
  pv->depth_row_first = nsys_xcalloc((size_t)rows + 1, sizeof(uint32_t));
  pv->depth_row_count = nsys_xcalloc((size_t)rows + 1, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++)
    pv->depth_row_count[pv->thread_depth_first[ix->nvtx.thread[i]] + ix->nvtx.depth[i]]++;
  uint32_t off = 0;
  for (uint32_t r = 0; r < rows; r++) {
    pv->depth_row_first[r] = off;
    off += pv->depth_row_count[r];
  }
  uint32_t *fill = nsys_xcalloc((size_t)rows + 1, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) { /* ranges are sorted by start per thread: stays sorted */
    uint32_t r = pv->thread_depth_first[ix->nvtx.thread[i]] + ix->nvtx.depth[i];
    pv->nvtx_by_depth[pv->depth_row_first[r] + fill[r]++] = i;
  }
  free(fill);
}

/* ---- track list --------------------------------------------------------- */

static void nsys__add_track(nsys__index_priv *pv, const nsys_tl_track *t) {
  pv->tl = nsys_xrealloc(pv->tl, (pv->n_tl + 1) * sizeof *pv->tl);
  pv->tl[pv->n_tl] = *t;
  pv->tl[pv->n_tl].order = pv->n_tl;
  pv->n_tl++;
}

static void nsys__derive_tracks(nsys_index *ix, nsys__index_priv *pv) {
  /* GPUs: each device's streams, then its projected NVTX rows */
  uint32_t pr = 0;
  for (uint32_t t = 0; t < ix->n_tracks;) {
    int32_t dev = ix->tracks[t].device;
    for (; t < ix->n_tracks && ix->tracks[t].device == dev; t++) {
      const nsys_gpu_track *g = &ix->tracks[t];
      nsys_tl_track tl = {NSYS_TL_GPU, t, dev, g->stream, g->pid, 0, -1, 0, g->count, 0, {0}};
      bool dup = (t > 0 && ix->tracks[t - 1].device == dev && ix->tracks[t - 1].stream == g->stream) ||
                 (t + 1 < ix->n_tracks && ix->tracks[t + 1].device == dev &&
                  ix->tracks[t + 1].stream == g->stream);
      if (dup) snprintf(tl.id, sizeof tl.id, "gpu:%d:%lld:%u", dev, (long long)g->stream, g->pid);
      else snprintf(tl.id, sizeof tl.id, "gpu:%d:%lld", dev, (long long)g->stream);
      nsys__add_track(pv, &tl);
    }
    while (pr < pv->n_proj_rows && pv->proj_rows[pr].device < dev) pr++;
    for (; pr < pv->n_proj_rows && pv->proj_rows[pr].device == dev; pr++) {
      nsys_tl_track tl = {NSYS_TL_PROJ, pr, dev, 0, 0, 0, pv->proj_rows[pr].depth, 0,
                          pv->proj_rows[pr].count, 0, {0}};
      snprintf(tl.id, sizeof tl.id, "proj:%d:%u", dev, (unsigned)pv->proj_rows[pr].depth);
      nsys__add_track(pv, &tl);
    }
  }
  /* threads: NVTX rows by depth, then the CUDA API row */
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    for (uint32_t r = pv->thread_depth_first[t]; r < pv->thread_depth_first[t + 1]; r++) {
      uint32_t depth = r - pv->thread_depth_first[t];
      nsys_tl_track tl = {NSYS_TL_NVTX, r, -1, 0, th->pid, th->tid, (int32_t)depth, t,
                          pv->depth_row_count[r], 0, {0}};
      snprintf(tl.id, sizeof tl.id, "nvtx:%u:%u:%u", th->pid, th->tid, depth);
      nsys__add_track(pv, &tl);
    }
    if (th->api_count) {
      nsys_tl_track tl = {NSYS_TL_API, t, -1, 0, th->pid, th->tid, -1, t, th->api_count, 0, {0}};
      snprintf(tl.id, sizeof tl.id, "api:%u:%u", th->pid, th->tid);
      nsys__add_track(pv, &tl);
    }
  }
}

void nsys__index_derive(nsys_index *ix) {
  if (!ix->priv) ix->priv = nsys_xcalloc(1, sizeof(nsys__index_priv));
  nsys__index_priv *pv = nsys__priv(ix);
  int64_t td = nsys_now_ns();
  nsys__derive_display_names(ix);
  int64_t t0 = nsys_now_ns();
  nsys__derive_depth_rows(ix, pv);
  if (!pv->proj_cached) nsys__derive_projection(ix, pv); /* else mapped from the cache */
  int64_t t1 = nsys_now_ns();
  pv->gpu_series = nsys_xcalloc(ix->n_tracks + 1, sizeof(nsys__series));
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    nsys__series_init(&pv->gpu_series[t], ix->ops.start, ix->ops.end, NULL, ix->tracks[t].first,
                      ix->tracks[t].count);
  pv->api_series = nsys_xcalloc(ix->n_threads + 1, sizeof(nsys__series));
  for (uint32_t t = 0; t < ix->n_threads; t++)
    nsys__series_init(&pv->api_series[t], ix->api.start, ix->api.end, NULL,
                      ix->threads[t].api_first, ix->threads[t].api_count);
  pv->nvtx_series = nsys_xcalloc(pv->n_depth_rows + 1, sizeof(nsys__series));
  for (uint32_t r = 0; r < pv->n_depth_rows; r++)
    nsys__series_init(&pv->nvtx_series[r], ix->nvtx.start, ix->nvtx.end,
                      pv->nvtx_by_depth + pv->depth_row_first[r], 0, pv->depth_row_count[r]);
  pv->proj_series = nsys_xcalloc(pv->n_proj_rows + 1, sizeof(nsys__series));
  for (uint32_t r = 0; r < pv->n_proj_rows; r++)
    nsys__series_init(&pv->proj_series[r], pv->proj_start, pv->proj_end, NULL,
                      pv->proj_rows[r].first, pv->proj_rows[r].count);
  nsys__derive_tracks(ix, pv);
  if (!getenv("NSYS_AI_NO_COARSE")) nsys__coarse_init(ix);
  if (getenv("NSYS_AI_INDEX_TIMING"))
    nsys_log("index derive: display names %.1f ms, projection %.1f ms, summaries %.1f ms",
             (double)(t0 - td) / 1e6, (double)(t1 - t0) / 1e6, (double)(nsys_now_ns() - t1) / 1e6);
}

void nsys__index_free_derived(nsys_index *ix) {
  free(ix->display);
  ix->display = NULL;
  ix->n_display = 0;
  nsys__index_priv *pv = nsys__priv(ix);
  if (!pv) return;
  nsys__coarse_free(ix);
  for (uint32_t t = 0; pv->gpu_series && t < ix->n_tracks; t++) nsys__series_free(&pv->gpu_series[t]);
  for (uint32_t t = 0; pv->api_series && t < ix->n_threads; t++) nsys__series_free(&pv->api_series[t]);
  for (uint32_t r = 0; pv->nvtx_series && r < pv->n_depth_rows; r++)
    nsys__series_free(&pv->nvtx_series[r]);
  for (uint32_t r = 0; pv->proj_series && r < pv->n_proj_rows; r++)
    nsys__series_free(&pv->proj_series[r]);
  free(pv->gpu_series);
  free(pv->api_series);
  free(pv->nvtx_series);
  free(pv->proj_series);
  free(pv->nvtx_by_depth);
  free(pv->thread_depth_first);
  free(pv->depth_row_first);
  free(pv->depth_row_count);
  if (!pv->proj_cached) {
    free(pv->proj_nvtx);
    free(pv->proj_start);
    free(pv->proj_end);
  }
  free(pv->proj_rows);
  free(pv->tl);
}

/* ---- queries ------------------------------------------------------------ */

uint32_t nsys_tl_track_count(const nsys_index *ix) { return ix->priv ? nsys__priv(ix)->n_tl : 0; }

const nsys_tl_track *nsys_tl_track_at(const nsys_index *ix, uint32_t i) {
  return &nsys__priv(ix)->tl[i];
}

int64_t nsys_tl_track_find(const nsys_index *ix, const char *id) {
  const nsys__index_priv *pv = nsys__priv(ix);
  for (uint32_t i = 0; pv && i < pv->n_tl; i++)
    if (strcmp(pv->tl[i].id, id) == 0) return i;
  return -1;
}

static const nsys__series *nsys__track_series(const nsys_index *ix, uint32_t track) {
  const nsys__index_priv *pv = nsys__priv(ix);
  const nsys_tl_track *t = &pv->tl[track];
  switch (t->kind) {
  case NSYS_TL_GPU: return &pv->gpu_series[t->ref];
  case NSYS_TL_PROJ: return &pv->proj_series[t->ref];
  case NSYS_TL_NVTX: return &pv->nvtx_series[t->ref];
  case NSYS_TL_API: return &pv->api_series[t->ref];
  }
  return NULL;
}

uint32_t nsys_tl_count(const nsys_index *ix, uint32_t track, int64_t qs, int64_t qe) {
  return nsys__series_count(nsys__track_series(ix, track), qs, qe);
}

uint32_t nsys_tl_events(const nsys_index *ix, uint32_t track, int64_t qs, int64_t qe,
                        nsys_tl_event_fn fn, void *ctx) {
  return nsys__series_events(nsys__track_series(ix, track), qs, qe, fn, ctx);
}

uint32_t nsys_tl_buckets(const nsys_index *ix, uint32_t track, int64_t base, int64_t res,
                         uint32_t nb, nsys_tl_bucket_fn fn, void *ctx) {
  const nsys__series *s = nsys__track_series(ix, track);
  uint32_t emitted = 0;
  if (nsys__coarse_buckets(ix, track, s, base, res, nb, fn, ctx, &emitted)) return emitted;
  return nsys__series_buckets(s, base, res, nb, fn, ctx);
}

void nsys_tl_row(const nsys_index *ix, nsys_tl_kind kind, uint32_t row, int64_t *start,
                 int64_t *end, uint32_t *name) {
  switch (kind) {
  case NSYS_TL_GPU:
    *start = ix->ops.start[row];
    *end = ix->ops.end[row];
    *name = ix->ops.name[row];
    return;
  case NSYS_TL_PROJ: { /* row = projection entry */
    const nsys__index_priv *pv = nsys__priv(ix);
    *start = pv->proj_start[row];
    *end = pv->proj_end[row];
    *name = ix->nvtx.name[pv->proj_nvtx[row]];
    return;
  }
  case NSYS_TL_NVTX:
    *start = ix->nvtx.start[row];
    *end = ix->nvtx.end[row];
    *name = ix->nvtx.name[row];
    return;
  case NSYS_TL_API:
    *start = ix->api.start[row];
    *end = ix->api.end[row];
    *name = ix->api.name[row];
    return;
  }
}

uint32_t nsys_tl_proj_nvtx(const nsys_index *ix, uint32_t proj_row) {
  return nsys__priv(ix)->proj_nvtx[proj_row];
}

const char *nsys_op_kind_name(uint8_t kind) {
  return kind == NSYS_OP_MEMCPY ? "memcpy" : kind == NSYS_OP_MEMSET ? "memset"
         : kind == NSYS_OP_GRAPH  ? "graph"
                                  : "kernel";
}

const char *nsys_stream_class_name(uint8_t cls) {
  static const char *const names[] = {"compute", "communication", "copy", "mixed"};
  return cls < 4 ? names[cls] : "compute";
}
