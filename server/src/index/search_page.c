/* A page of search's instances from the per-name instance index: index/search_page.h. */
#include "index/search_page.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

nsys_sx_run nsys_sx_run_of(const nsys_sx *s, uint32_t g, uint8_t kind, int64_t ws, int64_t we, uint32_t count) {
  nsys_sx_run r = {s, g, kind, 0, nsys_sx_starting_before(s, g, ws), nsys_sx_starting_before(s, g, we)};
  r.spanning = count - (r.hi - r.lo); /* the overlapping ones less those starting in [ws, we) */
  return r;
}

/* The instance at position pos of r's group (start order). */
static nsys_instance nsys__inst(const nsys_sx_run *r, uint32_t pos) {
  uint32_t id = nsys_sx_at(r->s, r->g, pos);
  return (nsys_instance){r->s->start[id], id, r->kind};
}

/* The first position in [lo, hi) of r's group whose instance is not before key (hi if none). */
static uint32_t nsys__first_not_before(const nsys_sx_run *r, uint32_t lo, uint32_t hi, const nsys_instance *key) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    nsys_instance x = nsys__inst(r, mid);
    if (nsys_instance_cmp(&x, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ---- the spanning instances (start < ws <= end): the max-end tree ---- */

typedef struct {
  nsys_task *task;
  const nsys_sx_run *run;
  nsys_instance *v; /* NULL: count only */
  size_t n, cap;
  size_t left; /* how many more this run may give */
  uint32_t polled;
  bool cancelled;
} nsys__spanning;

static bool nsys__take_spanning(void *ctx, uint32_t id) {
  nsys__spanning *c = ctx;
  if ((++c->polled & 0xFFF) == 0 && nsys_task_cancelled(c->task)) {
    c->cancelled = true;
    return false;
  }
  if (c->v) {
    if (c->n == c->cap) {
      c->cap *= 2;
      c->v = nsys_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n] = (nsys_instance){c->run->s->start[id], id, c->run->kind};
  }
  c->n++;
  return --c->left > 0;
}

/* How many of the runs' spanning instances start before at (at < ws). False when cancelled. */
static bool nsys__spanning_before(nsys_task *task, const nsys_sx_run *runs, size_t n_runs, int64_t ws, int64_t at,
                                  size_t *rank) {
  nsys__spanning c = {.task = task};
  for (size_t k = 0; k < n_runs && !c.cancelled; k++) {
    if (!runs[k].spanning) continue;
    c.run = &runs[k];
    c.left = SIZE_MAX;
    nsys_sx_ending_from(runs[k].s, runs[k].g, nsys_sx_starting_before(runs[k].s, runs[k].g, at), ws,
                        nsys__take_spanning, &c);
  }
  *rank = c.n;
  return !c.cancelled;
}

/* The spanning instances of ranks [off, min(total, off + len)) into page (appended, in order).
 * Each run gives at most its first off + len: those hold every rank below off + len. */
static bool nsys__spanning_page(nsys_task *task, const nsys_sx_run *runs, size_t n_runs, int64_t ws, size_t off,
                                size_t len, nsys_sx_page_out *page) {
  size_t need = off + len;
  nsys__spanning c = {.task = task, .cap = 64};
  c.v = nsys_xmalloc(c.cap * sizeof *c.v);
  for (size_t k = 0; k < n_runs && !c.cancelled; k++) {
    if (!runs[k].spanning) continue;
    c.run = &runs[k];
    c.left = runs[k].spanning < need ? runs[k].spanning : need;
    nsys_sx_ending_from(runs[k].s, runs[k].g, runs[k].lo, ws, nsys__take_spanning, &c);
  }
  if (!c.cancelled && off < c.n) {
    nsys_instance_page(c.v, c.n, off, len);
    size_t take = (c.n < need ? c.n : need) - off;
    memcpy(page->items + page->n, c.v + off, take * sizeof *c.v);
    page->n += take;
  }
  free(c.v);
  return !c.cancelled;
}

/* ---- those starting in [ws, we): ranges of the start orders ---- */

/* A bisection's state: per run, where the key of rank r lies (cur: this probe's count). */
typedef struct {
  const nsys_sx_run *runs;
  size_t n_runs;
  uint32_t *lo, *hi, *cur;
  size_t r;
} nsys__select;

/* Whether fewer than or exactly r of the runs' instances come before key; narrows the bounds. */
static bool nsys__probe(nsys__select *b, const nsys_instance *key) {
  size_t below = 0;
  for (size_t k = 0; k < b->n_runs; k++) {
    b->cur[k] = nsys__first_not_before(&b->runs[k], b->lo[k], b->hi[k], key);
    below += b->cur[k] - b->runs[k].lo;
  }
  bool low = below <= b->r;
  memcpy(low ? b->lo : b->hi, b->cur, b->n_runs * sizeof *b->cur);
  return low;
}

static uint64_t nsys__biased(int64_t t) { return (uint64_t)t ^ ((uint64_t)1 << 63); }
static int64_t nsys__unbiased(uint64_t u) { return (int64_t)(u ^ ((uint64_t)1 << 63)); }

/* pos[k]: where run k's instances of rank >= r (among all the runs' [lo, hi)) begin; r is
 * below their total. The greatest key with at most r instances before it is the instance of
 * rank r: bisect its start, then its kind, then its id. False when cancelled. */
static bool nsys__select_rank(nsys_task *task, const nsys_sx_run *runs, size_t n_runs, size_t r, uint32_t *pos) {
  nsys__select b = {.runs = runs, .n_runs = n_runs, .lo = nsys_xmalloc((n_runs + 1) * sizeof(uint32_t)),
                    .hi = nsys_xmalloc((n_runs + 1) * sizeof(uint32_t)), .cur = pos, .r = r};
  int64_t tmin = INT64_MAX, tmax = INT64_MIN;
  for (size_t k = 0; k < n_runs; k++) {
    b.lo[k] = runs[k].lo;
    b.hi[k] = runs[k].hi;
    if (runs[k].hi > runs[k].lo) {
      int64_t first = nsys__inst(&runs[k], runs[k].lo).start, last = nsys__inst(&runs[k], runs[k].hi - 1).start;
      if (first < tmin) tmin = first;
      if (last > tmax) tmax = last;
    }
  }
  /* no instance comes before (tmin, 0, 0); all come before (tmax + 1, 0, 0) (tmax < we) */
  uint64_t low = nsys__biased(tmin), high = nsys__biased(tmax) + 1;
  bool ok = true;
  while (ok && high - low > 1) {
    uint64_t mid = low + (high - low) / 2;
    if (nsys__probe(&b, &(nsys_instance){nsys__unbiased(mid), 0, 0})) low = mid;
    else high = mid;
    ok = !nsys_task_cancelled(task);
  }
  int64_t t = nsys__unbiased(low);
  uint8_t kind = 0;
  while (ok && kind < NSYS_INST_API && nsys__probe(&b, &(nsys_instance){t, 0, (uint8_t)(kind + 1)})) kind++;
  uint64_t id_low = 0, id_high = (uint64_t)UINT32_MAX + 1;
  while (ok && id_high - id_low > 1) {
    uint64_t mid = id_low + (id_high - id_low) / 2;
    if (nsys__probe(&b, &(nsys_instance){t, (uint32_t)mid, kind})) id_low = mid;
    else id_high = mid;
    ok = !nsys_task_cancelled(task);
  }
  if (ok) memcpy(pos, b.lo, n_runs * sizeof *pos); /* the bounds at the key of rank r */
  free(b.lo);
  free(b.hi);
  return ok;
}

/* Restores the min-heap (by head) of heap[0..n) below v. */
static void nsys__sift_down(size_t *heap, size_t n, const nsys_instance *head, size_t v) {
  for (size_t c; (c = 2 * v + 1) < n; v = c) {
    if (c + 1 < n && nsys_instance_cmp(&head[heap[c + 1]], &head[heap[c]]) < 0) c++;
    if (nsys_instance_cmp(&head[heap[c]], &head[heap[v]]) >= 0) break;
    size_t t = heap[c];
    heap[c] = heap[v];
    heap[v] = t;
  }
}

/* The k-way merge: len instances from pos[k] in each run, appended to page. */
static void nsys__merge(const nsys_sx_run *runs, size_t n_runs, uint32_t *pos, size_t len, nsys_sx_page_out *page) {
  size_t *heap = nsys_xmalloc((n_runs + 1) * sizeof *heap), nh = 0;
  nsys_instance *head = nsys_xmalloc((n_runs + 1) * sizeof *head); /* by run: its next instance */
  for (size_t k = 0; k < n_runs; k++)
    if (pos[k] < runs[k].hi) {
      heap[nh++] = k;
      head[k] = nsys__inst(&runs[k], pos[k]);
    }
  for (size_t v = nh / 2; v-- > 0;) nsys__sift_down(heap, nh, head, v);
  while (len-- > 0 && nh > 0) {
    size_t k = heap[0];
    page->items[page->n++] = head[k];
    if (++pos[k] < runs[k].hi) head[k] = nsys__inst(&runs[k], pos[k]);
    else heap[0] = heap[--nh];
    nsys__sift_down(heap, nh, head, 0);
  }
  free(head);
  free(heap);
}

bool nsys_sx_page(nsys_task *task, const nsys_sx_run *runs, size_t n_runs, int64_t ws, bool has_at, int64_t at,
                  size_t offset, size_t len, nsys_sx_page_out *out) {
  memset(out, 0, sizeof *out);
  size_t spanning = 0, starting = 0;
  for (size_t k = 0; k < n_runs; k++) spanning += runs[k].spanning, starting += runs[k].hi - runs[k].lo;
  uint32_t *pos = nsys_xmalloc((n_runs + 1) * sizeof *pos);
  bool at_positions = has_at && at >= ws; /* the page's start in each run is where at falls */
  size_t off = offset;
  if (at_positions) {
    off = spanning;
    for (size_t k = 0; k < n_runs; k++) {
      uint32_t p = nsys_sx_starting_before(runs[k].s, runs[k].g, at);
      pos[k] = p < runs[k].lo ? runs[k].lo : p > runs[k].hi ? runs[k].hi : p;
      off += pos[k] - runs[k].lo;
    }
  } else if (has_at && !nsys__spanning_before(task, runs, n_runs, ws, at, &off)) {
    free(pos);
    return false;
  }
  out->offset = off;
  if (len > 0 && off < spanning + starting) {
    size_t room = len < spanning + starting - off ? len : spanning + starting - off;
    out->items = nsys_xmalloc(room * sizeof *out->items);
    bool ok = off >= spanning || nsys__spanning_page(task, runs, n_runs, ws, off, room, out);
    size_t r = off > spanning ? off - spanning : 0; /* the rank among those starting in [ws, we) */
    if (ok && out->n < room) {
      if (r == 0 && !at_positions)
        for (size_t k = 0; k < n_runs; k++) pos[k] = runs[k].lo;
      else if (!at_positions)
        ok = nsys__select_rank(task, runs, n_runs, r, pos);
      if (ok) nsys__merge(runs, n_runs, pos, room - out->n, out);
    }
    if (!ok) {
      free(out->items);
      memset(out, 0, sizeof *out);
      free(pos);
      return false;
    }
  }
  free(pos);
  return true;
}
