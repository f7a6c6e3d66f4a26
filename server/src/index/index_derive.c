/* Everything derived from the contract arrays, computed after a build (and
 * stored in the cache with it: a cache load maps it and only lists the
 * tracks here): display names of kernels, NVTX rows per (thread,
 * depth), NVTX ranges projected on each GPU (nvtx_gpu_proj_trace semantics),
 * a summary series per timeline track, and the track list in display order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kname_display.h"
#include "common/util.h"
#include "index/index_internal.h"
#include "index/nvtx_tree.h"

/* ---- the projection sweep ---------------------------------------------- */

bool nsys_nvtx_sweep(const nsys_index *ix, uint32_t thread, nsys_nvtx_sweep_fn fn, void *ctx) {
  const nsys_host_thread *th = &ix->threads[thread];
  if (!th->nvtx_count || !th->api_count) return true;
  bool go = true;
  uint32_t cap = 64, sp = 0;
  uint32_t *stack = nsys_xmalloc(cap * sizeof(uint32_t));
  uint32_t *enc = nsys_xmalloc(cap * sizeof(uint32_t));
  int64_t *min_end = nsys_xmalloc(cap * sizeof(int64_t)); /* min_end[k]: the earliest end of stack[0..k] */
  uint32_t r = th->nvtx_first, r_end = th->nvtx_first + th->nvtx_count;
  const nsys_nvtx_ranges *v = &ix->nvtx;
  for (uint32_t a = th->api_first; go && a < th->api_first + th->api_count; a++) {
    if (ix->api.first_op[a] < 0) continue;
    int64_t as = ix->api.start[a], ae = ix->api.end[a];
    while (r < r_end && v->start[r] <= as) {
      /* drop ranges that ended before this one starts (they contain nothing later) */
      while (sp && v->end[stack[sp - 1]] < v->start[r]) sp--;
      if (sp == cap) {
        cap *= 2;
        stack = nsys_xrealloc(stack, cap * sizeof(uint32_t));
        enc = nsys_xrealloc(enc, cap * sizeof(uint32_t));
        min_end = nsys_xrealloc(min_end, cap * sizeof(int64_t));
      }
      min_end[sp] = sp && min_end[sp - 1] < v->end[r] ? min_end[sp - 1] : v->end[r];
      stack[sp++] = r++;
    }
    while (sp && v->end[stack[sp - 1]] < as) sp--;
    if (!sp) continue;
    if (min_end[sp - 1] >= ae) { /* every open range contains the call: the stack itself */
      go = fn(ctx, a, stack, sp);
      continue;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < sp; k++) {
      uint32_t q = stack[k];
      if (v->end[q] >= ae) enc[n++] = q;
    }
    if (n) go = fn(ctx, a, enc, n);
  }
  free(stack);
  free(enc);
  free(min_end);
  return go;
}

/* ---- projected rows ------------------------------------------------------ */

typedef struct {
  int32_t device;
  uint16_t depth;
  int64_t start;
  uint32_t nvtx;
  int64_t end;
} nsys__proj_tmp;

/* the order inside one (device, depth) row: start, end, range index */
static inline bool nsys__proj_before(const nsys__proj_tmp *x, const nsys__proj_tmp *y) {
  if (x->start != y->start) return x->start < y->start;
  if (x->end != y->end) return x->end < y->end;
  return x->nvtx < y->nvtx;
}

/* Sorts a[0..n) with a natural merge sort: the entries of one row come as one
 * run per thread, nearly sorted already (ranges at one depth follow each other
 * on the CPU), so this costs a pass or two instead of qsort's n log n
 * comparisons through a function pointer. The key is total (a range appears
 * once per device), so the result is the one any correct sort gives. */
static void nsys__proj_sort_row(nsys__proj_tmp *a, uint32_t n, nsys__proj_tmp *tmp) {
  if (n < 2) return;
  bool sorted = true;
  for (uint32_t i = 1; i < n && sorted; i++) sorted = !nsys__proj_before(&a[i], &a[i - 1]);
  if (sorted) return;
  nsys__proj_tmp *src = a, *dst = tmp;
  for (;;) {
    uint32_t i = 0, out = 0, runs = 0;
    while (i < n) {
      uint32_t x = i, x_end = i + 1;
      while (x_end < n && !nsys__proj_before(&src[x_end], &src[x_end - 1])) x_end++;
      uint32_t y = x_end, y_end = y < n ? y + 1 : y;
      while (y_end < n && !nsys__proj_before(&src[y_end], &src[y_end - 1])) y_end++;
      while (x < x_end && y < y_end)
        dst[out++] = nsys__proj_before(&src[y], &src[x]) ? src[y++] : src[x++];
      while (x < x_end) dst[out++] = src[x++];
      while (y < y_end) dst[out++] = src[y++];
      i = y_end;
      runs++;
    }
    nsys__proj_tmp *t = src;
    src = dst;
    dst = t;
    if (runs == 1) break;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* The projection sweep of one thread for all its GPUs at once (slots u <
 * nu, local[] maps a device index to its slot): the sweep of
 * nsys_nvtx_sweep with the callback inlined, each enclosing range taking the
 * span of the call's ops on each GPU. ps/pe: nu rows of the thread's ranges.
 *
 * With one GPU and properly nested ranges on the stack (ends non-increasing
 * from the bottom, counted by `crossed`), the ranges enclosing a call are a
 * prefix of the stack: its span is kept pending on the prefix's top level and
 * passed down when that level is popped, instead of being written to every
 * enclosing range. Min and max do not depend on the order, so the result is
 * the direct one. */
typedef struct {
  uint32_t *stack; int64_t *stack_end, *pend_lo, *pend_hi; uint32_t cap;
  int64_t *lo, *hi; uint32_t nlo; /* per slot */
} nsys__proj_acc;

static void nsys__proj_grow(nsys__proj_acc *acc) {
  acc->cap = acc->cap ? acc->cap * 2 : 64;
  acc->stack = nsys_xrealloc(acc->stack, acc->cap * sizeof *acc->stack);
  acc->stack_end = nsys_xrealloc(acc->stack_end, acc->cap * sizeof *acc->stack_end);
  acc->pend_lo = nsys_xrealloc(acc->pend_lo, acc->cap * sizeof *acc->pend_lo);
  acc->pend_hi = nsys_xrealloc(acc->pend_hi, acc->cap * sizeof *acc->pend_hi);
}

static void nsys__proj_sweep(const nsys_index *ix, uint32_t t, const uint32_t *track_dev,
                             const uint32_t *local, uint32_t nu, int64_t *ps, int64_t *pe,
                             nsys__proj_acc *acc) {
  const nsys_host_thread *th = &ix->threads[t];
  const nsys_nvtx_ranges *v = &ix->nvtx;
  if (!acc->cap) nsys__proj_grow(acc);
  if (acc->nlo < nu) {
    acc->nlo = nu;
    acc->lo = nsys_xrealloc(acc->lo, nu * sizeof *acc->lo);
    acc->hi = nsys_xrealloc(acc->hi, nu * sizeof *acc->hi);
  }
  uint32_t *stack = acc->stack, sp = 0, crossed = 0;
  int64_t *stack_end = acc->stack_end, *pend_lo = acc->pend_lo, *pend_hi = acc->pend_hi;
  int64_t *lo = acc->lo, *hi = acc->hi;
  uint32_t base = th->nvtx_first, r = th->nvtx_first, r_end = th->nvtx_first + th->nvtx_count;
  size_t row = th->nvtx_count;
  /* pops the top level: its pending span goes to its range and the level below */
#define NSYS__POP()                                                           \
  do {                                                                        \
    sp--;                                                                     \
    if (pend_lo[sp] != INT64_MAX) {                                           \
      uint32_t q_ = stack[sp] - base;                                         \
      if (pend_lo[sp] < ps[q_]) ps[q_] = pend_lo[sp];                         \
      if (pend_hi[sp] > pe[q_]) pe[q_] = pend_hi[sp];                         \
      if (sp) {                                                               \
        if (pend_lo[sp] < pend_lo[sp - 1]) pend_lo[sp - 1] = pend_lo[sp];     \
        if (pend_hi[sp] > pend_hi[sp - 1]) pend_hi[sp - 1] = pend_hi[sp];     \
      }                                                                       \
    }                                                                         \
    if (sp && stack_end[sp] > stack_end[sp - 1]) crossed--;                   \
  } while (0)
  for (uint32_t a = th->api_first; a < th->api_first + th->api_count; a++) {
    int32_t o = ix->api.first_op[a];
    if (o < 0) continue;
    int64_t as = ix->api.start[a], ae = ix->api.end[a];
    while (r < r_end && v->start[r] <= as) {
      /* drop ranges that ended before this one starts (they contain nothing later) */
      while (sp && stack_end[sp - 1] < v->start[r]) NSYS__POP();
      if (sp == acc->cap) {
        nsys__proj_grow(acc);
        stack = acc->stack;
        stack_end = acc->stack_end;
        pend_lo = acc->pend_lo;
        pend_hi = acc->pend_hi;
      }
      stack_end[sp] = v->end[r];
      pend_lo[sp] = INT64_MAX;
      pend_hi[sp] = INT64_MIN;
      if (sp && stack_end[sp] > stack_end[sp - 1]) crossed++;
      stack[sp++] = r++;
    }
    while (sp && stack_end[sp - 1] < as) NSYS__POP();
    if (!sp) continue;
    /* the call's ops: one GPU (the usual case) or several */
    uint32_t u0 = local[track_dev[ix->ops.track[o]]];
    int64_t l0 = ix->ops.start[o], h0 = ix->ops.end[o];
    bool multi = false;
    for (int32_t x = ix->op_next[o]; x >= 0; x = ix->op_next[x]) {
      if (local[track_dev[ix->ops.track[x]]] != u0) {
        multi = true;
        break;
      }
      if (ix->ops.start[x] < l0) l0 = ix->ops.start[x];
      if (ix->ops.end[x] > h0) h0 = ix->ops.end[x];
    }
    if (!multi && nu == 1 && !crossed) {
      uint32_t m = sp;
      while (m && stack_end[m - 1] < ae) m--;
      if (m) {
        if (l0 < pend_lo[m - 1]) pend_lo[m - 1] = l0;
        if (h0 > pend_hi[m - 1]) pend_hi[m - 1] = h0;
      }
      continue;
    }
    if (!multi) {
      int64_t *ps0 = ps + u0 * row - base, *pe0 = pe + u0 * row - base;
      for (uint32_t k = 0; k < sp; k++) {
        if (stack_end[k] < ae) continue;
        uint32_t q = stack[k];
        if (l0 < ps0[q]) ps0[q] = l0;
        if (h0 > pe0[q]) pe0[q] = h0;
      }
      continue;
    }
    for (uint32_t u = 0; u < nu; u++) {
      lo[u] = INT64_MAX;
      hi[u] = INT64_MIN;
    }
    for (int32_t x = o; x >= 0; x = ix->op_next[x]) {
      uint32_t u = local[track_dev[ix->ops.track[x]]];
      if (ix->ops.start[x] < lo[u]) lo[u] = ix->ops.start[x];
      if (ix->ops.end[x] > hi[u]) hi[u] = ix->ops.end[x];
    }
    for (uint32_t k = 0; k < sp; k++) {
      if (stack_end[k] < ae) continue;
      uint32_t q = stack[k] - base;
      for (uint32_t u = 0; u < nu; u++) {
        if (lo[u] == INT64_MAX) continue;
        size_t c = u * row + q;
        if (lo[u] < ps[c]) ps[c] = lo[u];
        if (hi[u] > pe[c]) pe[c] = hi[u];
      }
    }
  }
  while (sp) NSYS__POP();
#undef NSYS__POP
}

/* The projection is shared by the two derive threads: each takes the next
 * host thread (an atomic counter) and sweeps it into its own list; the lists
 * are then concatenated, grouped and sorted by a total key, so which thread
 * swept what does not change the result. */
typedef struct {
  const nsys_index *ix;
  int32_t *devs;        /* devices present, ascending */
  uint32_t nd, maxd;    /* maxd: deepest NVTX depth */
  uint32_t *track_dev;  /* track -> index in devs (tracks are sorted by device) */
  atomic_uint next;     /* next host thread to sweep */
} nsys__proj_pool;

typedef struct {
  nsys__proj_tmp *tmp;
  size_t n, cap;
} nsys__proj_out;

static void nsys__proj_pool_init(nsys__proj_pool *pool, const nsys_index *ix) {
  memset(pool, 0, sizeof *pool);
  pool->ix = ix;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (!pool->nd || pool->devs[pool->nd - 1] != ix->tracks[t].device) {
      pool->devs = nsys_xrealloc(pool->devs, (pool->nd + 1) * sizeof *pool->devs);
      pool->devs[pool->nd++] = ix->tracks[t].device;
    }
  pool->track_dev = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *pool->track_dev);
  for (uint32_t t = 0, d = 0; t < ix->n_tracks; t++) {
    while (pool->devs[d] != ix->tracks[t].device) d++;
    pool->track_dev[t] = d;
  }
  for (uint32_t t = 0; t < ix->n_threads; t++)
    if (ix->threads[t].nvtx_count && ix->threads[t].nvtx_max_depth > pool->maxd)
      pool->maxd = ix->threads[t].nvtx_max_depth;
  atomic_init(&pool->next, 0);
}

/* Sweeps host threads taken from the pool until none is left. */
static void nsys__proj_work(nsys__proj_pool *pool, nsys__proj_out *out) {
  const nsys_index *ix = pool->ix;
  uint32_t nd = pool->nd;
  const uint32_t *track_dev = pool->track_dev;
  uint32_t *local = nsys_xmalloc(((size_t)nd + 1) * sizeof *local); /* device -> slot, UINT32_MAX */
  uint32_t *used = nsys_xmalloc(((size_t)nd + 1) * sizeof *used);   /* slot -> device */
  nsys__proj_acc acc = {0};
  for (;;) {
    uint32_t t = atomic_fetch_add(&pool->next, 1);
    if (t >= ix->n_threads) break;
    const nsys_host_thread *th = &ix->threads[t];
    if (!th->nvtx_count || !th->api_count) continue;
    /* only the GPUs this thread launched work on, each a slot of ps/pe */
    for (uint32_t d = 0; d < nd; d++) local[d] = UINT32_MAX;
    uint32_t nu = 0;
    for (uint32_t a = th->api_first; a < th->api_first + th->api_count; a++)
      for (int32_t o = ix->api.first_op[a]; o >= 0; o = ix->op_next[o]) {
        uint32_t d = track_dev[ix->ops.track[o]];
        if (local[d] == UINT32_MAX) local[d] = UINT32_MAX - 1;
      }
    for (uint32_t d = 0; d < nd; d++)
      if (local[d] != UINT32_MAX) {
        local[d] = nu;
        used[nu++] = d;
      }
    if (!nu) continue;
    size_t cells = (size_t)nu * th->nvtx_count;
    int64_t *ps = nsys_xmalloc(cells * sizeof(int64_t));
    int64_t *pe = nsys_xmalloc(cells * sizeof(int64_t));
    for (size_t k = 0; k < cells; k++) {
      ps[k] = INT64_MAX;
      pe[k] = INT64_MIN;
    }
    nsys__proj_sweep(ix, t, track_dev, local, nu, ps, pe, &acc);
    if (out->n + cells > out->cap) {
      out->cap = NSYS_MAX(out->cap * 2, out->n + cells);
      out->tmp = nsys_xrealloc(out->tmp, out->cap * sizeof *out->tmp);
    }
    for (uint32_t u = 0; u < nu; u++)
      for (uint32_t k = 0; k < th->nvtx_count; k++) {
        size_t c = (size_t)u * th->nvtx_count + k;
        if (ps[c] == INT64_MAX) continue;
        uint32_t q = th->nvtx_first + k;
        out->tmp[out->n++] = (nsys__proj_tmp){(int32_t)used[u], ix->nvtx.depth[q], ps[c], q, pe[c]};
      }
    free(ps);
    free(pe);
  }
  free(acc.stack);
  free(acc.stack_end);
  free(acc.pend_lo);
  free(acc.pend_hi);
  free(acc.lo);
  free(acc.hi);
  free(local);
  free(used);
}

/* Groups both threads' lists by (device, depth) with a counting sort, sorts
 * each row by (start, end, range) and fills the projection arrays. */
static void nsys__proj_finish(nsys__proj_pool *pool, nsys__proj_out *outs, uint32_t n_outs,
                              nsys__index_priv *pv) {
  uint32_t maxd = pool->maxd;
  size_t n_tmp = 0;
  for (uint32_t k = 0; k < n_outs; k++) n_tmp += outs[k].n;
  size_t nrows = (size_t)pool->nd * (maxd + 1);
  uint32_t *row_first = nsys_xcalloc(nrows + 1, sizeof(uint32_t));
  for (uint32_t k = 0; k < n_outs; k++)
    for (size_t i = 0; i < outs[k].n; i++)
      row_first[(size_t)outs[k].tmp[i].device * (maxd + 1) + outs[k].tmp[i].depth + 1]++;
  for (size_t r = 0; r < nrows; r++) row_first[r + 1] += row_first[r];
  uint32_t *fill = nsys_xmalloc((nrows + 1) * sizeof(uint32_t));
  memcpy(fill, row_first, (nrows + 1) * sizeof(uint32_t));
  nsys__proj_tmp *grouped = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof *grouped);
  for (uint32_t k = 0; k < n_outs; k++) {
    for (size_t i = 0; i < outs[k].n; i++) {
      const nsys__proj_tmp *x = &outs[k].tmp[i];
      grouped[fill[(size_t)x->device * (maxd + 1) + x->depth]++] = *x;
    }
    free(outs[k].tmp);
    outs[k].tmp = NULL;
  }
  free(fill);
  nsys__proj_tmp *scratch = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof *scratch);
  uint32_t n_rows = 0;
  for (size_t r = 0; r < nrows; r++) {
    uint32_t cnt = row_first[r + 1] - row_first[r];
    if (!cnt) continue;
    n_rows++;
    nsys__proj_sort_row(grouped + row_first[r], cnt, scratch);
  }
  free(scratch);
  pv->n_proj = (uint32_t)n_tmp;
  pv->proj_nvtx = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(uint32_t));
  pv->proj_start = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(int64_t));
  pv->proj_end = nsys_xmalloc((n_tmp ? n_tmp : 1) * sizeof(int64_t));
  /* calloc: the cache writes the rows raw, so no stale padding bytes */
  pv->proj_rows = n_rows ? nsys_xcalloc(n_rows, sizeof *pv->proj_rows) : NULL;
  pv->n_proj_rows = 0;
  for (size_t r = 0; r < nrows; r++) {
    uint32_t lo = row_first[r], hi = row_first[r + 1];
    if (lo == hi) continue;
    nsys__proj_row *row = &pv->proj_rows[pv->n_proj_rows++];
    row->device = pool->devs[r / (maxd + 1)];
    row->depth = (uint16_t)(r % (maxd + 1));
    row->first = lo;
    row->count = hi - lo;
    for (uint32_t i = lo; i < hi; i++) {
      pv->proj_nvtx[i] = grouped[i].nvtx;
      pv->proj_start[i] = grouped[i].start;
      pv->proj_end[i] = grouped[i].end;
    }
  }
  free(grouped);
  free(row_first);
  free(pool->devs);
  free(pool->track_dev);
}

/* ---- display names -------------------------------------------------------- */

/* The short name that goes with each kernel name k < n (ops.full_name): the
 * ops.name of the first kernel op named k, NSYS_STR_NONE when no kernel is. */
uint32_t *nsys__display_short_names(const nsys_index *ix, uint32_t n) {
  uint32_t *short_of = nsys_xmalloc(((size_t)n + 1) * sizeof *short_of);
  for (uint32_t i = 0; i < n; i++) short_of[i] = NSYS_STR_NONE;
  uint32_t last = NSYS_STR_NONE;
  for (uint32_t op = 0; op < ix->ops.n; op++) {
    uint32_t k = ix->ops.full_name[op];
    if (k == last || ix->ops.kind[op] != NSYS_OP_KERNEL || k >= n) continue;
    last = k;
    if (short_of[k] == NSYS_STR_NONE) short_of[k] = ix->ops.name[op];
  }
  return short_of;
}

/* One simplified name per distinct kernel name, from its short name,
 * interned in ix->strings. A cache load runs this too (on the short names
 * the cache stores): the names follow the current rules of
 * common/kname_display.c, and the strings saved by the build make the ids
 * the same on every open of a file. */
void nsys__display_names_from(nsys_index *ix, const uint32_t *short_of, uint32_t n) {
  uint32_t *disp = nsys_xmalloc(((size_t)n + 1) * sizeof *disp);
  char buf[NSYS_KNAME_DISPLAY_MAX + 8];
  for (uint32_t k = 0; k < n; k++) {
    disp[k] = k;
    if (short_of[k] == NSYS_STR_NONE) continue;
    nsys_kname_display(nsys_strtab_get(&ix->strings, k), nsys_strtab_get(&ix->strings, short_of[k]), buf,
                       sizeof buf);
    if (buf[0]) disp[k] = nsys_strtab_intern(&ix->strings, buf, strlen(buf));
  }
  free(ix->display);
  ix->display = disp;
  ix->n_display = n;
}

static void nsys__derive_display_names(nsys_index *ix) {
  uint32_t n = ix->strings.count;
  uint32_t *short_of = nsys__display_short_names(ix, n);
  nsys__display_names_from(ix, short_of, n);
  free(short_of);
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

void nsys__derive_gpu_series(nsys_index *ix) {
  nsys__index_priv *pv = nsys__priv(ix);
  pv->gpu_series = nsys_xcalloc(ix->n_tracks + 1, sizeof(nsys__series));
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    nsys__series_init(&pv->gpu_series[t], ix->ops.start, ix->ops.end, NULL, ix->tracks[t].first,
                      ix->tracks[t].count);
}

static void nsys__derive_api_series(nsys_index *ix, nsys__index_priv *pv) {
  pv->api_series = nsys_xcalloc(ix->n_threads + 1, sizeof(nsys__series));
  for (uint32_t t = 0; t < ix->n_threads; t++)
    nsys__series_init(&pv->api_series[t], ix->api.start, ix->api.end, NULL,
                      ix->threads[t].api_first, ix->threads[t].api_count);
}

static void nsys__derive_proj_series(nsys__index_priv *pv) {
  pv->proj_series = nsys_xcalloc(pv->n_proj_rows + 1, sizeof(nsys__series));
  for (uint32_t r = 0; r < pv->n_proj_rows; r++)
    nsys__series_init(&pv->proj_series[r], pv->proj_start, pv->proj_end, NULL,
                      pv->proj_rows[r].first, pv->proj_rows[r].count);
}

/* The second thread's share of the derivation: display names (the only part
 * that touches ix->strings and ix->display), the GPU series unless the build
 * made them already, the API series when `api` is set, then its share of the
 * projection when `pool` is set. It writes nothing the calling thread reads
 * or writes before the join, so the result does not depend on the timing. */
typedef struct {
  nsys_index *ix;
  bool gpu, api;
  nsys__proj_pool *pool;
  nsys__proj_out out;
  atomic_int proj_claim; /* cached projection: its series go to the first thread done */
  int64_t names_ns, ns;
} nsys__derive_side;

static void *nsys__derive_side_run(void *arg) {
  nsys__derive_side *d = arg;
  int64_t t0 = nsys_now_ns();
  nsys__derive_display_names(d->ix);
  d->names_ns = nsys_now_ns() - t0;
  if (d->gpu) nsys__derive_gpu_series(d->ix);
  if (d->api) nsys__derive_api_series(d->ix, nsys__priv(d->ix));
  if (d->pool) nsys__proj_work(d->pool, &d->out);
  else if (atomic_exchange(&d->proj_claim, 1) == 0) nsys__derive_proj_series(nsys__priv(d->ix));
  d->ns = nsys_now_ns() - t0;
  return NULL;
}

void nsys__index_derive(nsys_index *ix) {
  if (!ix->priv) ix->priv = nsys_xcalloc(1, sizeof(nsys__index_priv));
  nsys__index_priv *pv = nsys__priv(ix);
  int64_t t0 = nsys_now_ns();
  if (pv->derived_cached) {
    /* the cache holds everything derived: only the track list remains */
    nsys__derive_tracks(ix, pv);
    if (!getenv("NSYS_AI_NO_COARSE")) nsys__coarse_init(ix);
    if (getenv("NSYS_AI_INDEX_TIMING"))
      nsys_log("index derive: from the cache: tracks %.2f ms", (double)(nsys_now_ns() - t0) / 1e6);
    return;
  }
  /* Two threads. A fresh build: this one makes the NVTX rows and series,
   * the other the display names and API series (and the GPU series unless the
   * build made them), then both sweep the projection. A cache load (the
   * projection is mapped): the API series stay here, and the thread done
   * first makes the projection's series (which one is faster depends on the
   * profile's shape and the machine's load; the series are the same). */
  bool fresh_proj = !pv->proj_cached;
  nsys__proj_pool pool;
  if (fresh_proj) nsys__proj_pool_init(&pool, ix);
  nsys__derive_side side = {ix, pv->gpu_series == NULL, fresh_proj, fresh_proj ? &pool : NULL,
                            {NULL, 0, 0}, 0, 0, 0};
  atomic_init(&side.proj_claim, 0);
  pthread_t th;
  bool threaded = !getenv("NSYS_AI_DERIVE_SERIAL") &&
                  pthread_create(&th, NULL, nsys__derive_side_run, &side) == 0;
  if (!threaded) nsys__derive_side_run(&side);
  nsys__derive_depth_rows(ix, pv);
  if (!side.api) nsys__derive_api_series(ix, pv);
  pv->nvtx_series = nsys_xcalloc(pv->n_depth_rows + 1, sizeof(nsys__series));
  for (uint32_t r = 0; r < pv->n_depth_rows; r++)
    nsys__series_init(&pv->nvtx_series[r], ix->nvtx.start, ix->nvtx.end,
                      pv->nvtx_by_depth + pv->depth_row_first[r], 0, pv->depth_row_count[r]);
  int64_t t1 = nsys_now_ns();
  nsys__proj_out mine = {NULL, 0, 0};
  if (fresh_proj) nsys__proj_work(&pool, &mine);
  else if (atomic_exchange(&side.proj_claim, 1) == 0) nsys__derive_proj_series(pv);
  int64_t t2 = nsys_now_ns();
  if (threaded) pthread_join(th, NULL);
  int64_t t3 = nsys_now_ns();
  if (fresh_proj) {
    nsys__proj_out outs[2] = {mine, side.out};
    nsys__proj_finish(&pool, outs, 2, pv);
    nsys__derive_proj_series(pv);
  }
  nsys__derive_tracks(ix, pv);
  if (!getenv("NSYS_AI_NO_COARSE")) nsys__coarse_init(ix);
  if (getenv("NSYS_AI_INDEX_TIMING"))
    nsys_log("index derive: this thread: NVTX rows + series %.1f ms, projection sweep or series %.1f ms; other "
             "thread: display names %.1f ms, total %.1f ms; waited %.1f ms; projection rows, "
             "series, tracks %.1f ms",
             (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)side.names_ns / 1e6,
             (double)side.ns / 1e6, (double)(t3 - t2) / 1e6, (double)(nsys_now_ns() - t3) / 1e6);
}

void nsys__index_free_derived(nsys_index *ix) {
  nsys__index_priv *pv = nsys__priv(ix);
  free(ix->display); /* made at every open, also from the cache */
  ix->display = NULL;
  ix->n_display = 0;
  if (!pv) return;
  nsys__coarse_free(ix);
  nsys__nvtx_trees_free(ix);
  if (pv->derived_cached) {
    /* the arrays live in the mapped cache file: only the structs are ours */
    free(pv->gpu_series);
    free(pv->api_series);
    free(pv->nvtx_series);
    free(pv->proj_series);
    free(pv->tl);
    return;
  }
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
