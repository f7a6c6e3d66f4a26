/* The windowed search's per-name instance index: index/search_index.h. */
#include "index/search_index.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cond_wait.h"
#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"

enum { NSYS__BLOCK = 16, NSYS__POLL = 1 << 16 };

/* ---- build ---- */

/* ids[0..n) stably by key (LSD radix on key - min, 16 bits a pass): (key, id) order when ids
 * come in ascending order. False when cancelled. */
static bool nsys__radix_by(nsys_task *task, const int64_t *start, uint32_t *ids, uint32_t n) {
  if (n < 2) return true;
  int64_t lo = start[ids[0]], hi = lo;
  for (uint32_t i = 1; i < n; i++) {
    int64_t s = start[ids[i]];
    if (s < lo) lo = s;
    if (s > hi) hi = s;
  }
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint32_t *tmp = nsys_xmalloc((size_t)n * sizeof *tmp);
  size_t *cnt = nsys_xmalloc(((size_t)1 << 16) * sizeof *cnt);
  bool ok = true;
  for (unsigned shift = 0; ok && shift < 64 && (span >> shift) != 0; shift += 16) {
    memset(cnt, 0, ((size_t)1 << 16) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++) cnt[(((uint64_t)start[ids[i]] - (uint64_t)lo) >> shift) & 0xFFFF]++;
    size_t sum = 0;
    for (size_t d = 0; d < ((size_t)1 << 16); d++) {
      size_t c = cnt[d];
      cnt[d] = sum;
      sum += c;
    }
    for (uint32_t i = 0; i < n; i++) {
      if ((i & (NSYS__POLL - 1)) == 0 && nsys_task_cancelled(task)) {
        ok = false;
        break;
      }
      tmp[cnt[(((uint64_t)start[ids[i]] - (uint64_t)lo) >> shift) & 0xFFFF]++] = ids[i];
    }
    if (ok) memcpy(ids, tmp, (size_t)n * sizeof *ids);
  }
  free(cnt);
  free(tmp);
  return ok;
}

/* group keys -> group ids: open addressing on (op kind, name, full name) */
typedef struct {
  uint32_t *slot; /* group + 1, 0 empty */
  size_t cap;
} nsys__gmap;

static uint64_t nsys__ghash(uint8_t k, uint32_t name, uint32_t full) {
  uint64_t h = ((uint64_t)name << 32 | full) * 0x9E3779B97F4A7C15ull;
  return (h ^ (h >> 29) ^ k) * 0xBF58476D1CE4E5B9ull;
}

static void nsys__sx_free_parts(nsys_sx *s) {
  free(s->perm);
  free(s->perm_end);
  free(s->dur_start);
  free(s->dur_end);
  free(s->groups);
  free(s->tree);
  memset(s, 0, sizeof *s);
}

/* Which ops search reports: kernels, copies, sets and CUDA graph launches. */
static bool nsys__searched_op(uint8_t k) {
  return k == NSYS_OP_KERNEL || k == NSYS_OP_MEMCPY || k == NSYS_OP_MEMSET || k == NSYS_OP_GRAPH;
}

/* The sampled prefix sums of end - start over order[0..n): out[b] covers order[0 .. 16 b). */
static uint64_t *nsys__dur_prefix(const nsys_sx *s, const uint32_t *order) {
  uint32_t nb = s->n / NSYS__BLOCK + 1;
  uint64_t *out = nsys_xmalloc((size_t)nb * sizeof *out), sum = 0;
  for (uint32_t j = 0; j < s->n; j++) {
    if (j % NSYS__BLOCK == 0) out[j / NSYS__BLOCK] = sum;
    sum += (uint64_t)s->end[order[j]] - (uint64_t)s->start[order[j]];
  }
  if (s->n % NSYS__BLOCK == 0) out[s->n / NSYS__BLOCK] = sum;
  return out;
}

/* The group of each id in ids[0..n) (ids in (start, id) order), in order of first appearance;
 * s->groups[].count filled. False when cancelled. */
static bool nsys__assign_groups(nsys_task *task, const nsys_index *ix, nsys_sx_source src, nsys_sx *s,
                                const uint32_t *ids, uint32_t n, uint32_t *group_of) {
  const uint32_t *name = src == NSYS_SX_OPS ? ix->ops.name : src == NSYS_SX_NVTX ? ix->nvtx.name : ix->api.name;
  size_t gcap = 64;
  s->groups = nsys_xmalloc(gcap * sizeof *s->groups);
  nsys__gmap gm = {0};
  uint32_t *by_name = NULL; /* NVTX and API: name id -> group + 1 */
  if (src == NSYS_SX_OPS) {
    gm.cap = 1024;
    gm.slot = nsys_xcalloc(gm.cap, sizeof *gm.slot);
  } else {
    by_name = nsys_xcalloc((size_t)ix->strings.count + 1, sizeof *by_name);
  }
  bool ok = true;
  for (uint32_t j = 0; j < n; j++) {
    if ((j & (NSYS__POLL - 1)) == 0 && nsys_task_cancelled(task)) {
      ok = false;
      break;
    }
    uint32_t i = ids[j], nm = name[i], full = NSYS_STR_NONE;
    uint8_t k = 0;
    uint32_t *slot;
    if (src == NSYS_SX_OPS) {
      full = ix->ops.full_name[i];
      k = ix->ops.kind[i];
      size_t h = (size_t)nsys__ghash(k, nm, full) & (gm.cap - 1);
      for (;; h = (h + 1) & (gm.cap - 1)) {
        uint32_t g = gm.slot[h];
        if (!g) break;
        const nsys_sx_group *gr = &s->groups[g - 1];
        if (gr->name == nm && gr->full == full && gr->op_kind == k) break;
      }
      slot = &gm.slot[h];
    } else {
      slot = &by_name[nm];
    }
    if (!*slot) {
      if (s->n_groups == gcap) {
        gcap *= 2;
        s->groups = nsys_xrealloc(s->groups, gcap * sizeof *s->groups);
      }
      s->groups[s->n_groups] = (nsys_sx_group){nm, full, k, 0, 0};
      *slot = ++s->n_groups;
      if (src == NSYS_SX_OPS && (size_t)s->n_groups * 2 > gm.cap) { /* grow and rehash */
        size_t cap = gm.cap * 2;
        uint32_t *ns = nsys_xcalloc(cap, sizeof *ns);
        for (uint32_t g = 0; g < s->n_groups; g++) {
          const nsys_sx_group *gr = &s->groups[g];
          size_t h = (size_t)nsys__ghash(gr->op_kind, gr->name, gr->full) & (cap - 1);
          while (ns[h]) h = (h + 1) & (cap - 1);
          ns[h] = g + 1;
        }
        free(gm.slot);
        gm.slot = ns;
        gm.cap = cap;
      }
    }
    group_of[i] = *slot - 1;
    s->groups[group_of[i]].count++;
  }
  free(gm.slot);
  free(by_name);
  return ok;
}

/* ids[0..n) stably by group into a new array: groups' [first, first + count) ranges. */
static uint32_t *nsys__by_group(const nsys_sx *s, const uint32_t *ids, uint32_t n, const uint32_t *group_of) {
  uint32_t *out = nsys_xmalloc(((size_t)n + 1) * sizeof *out);
  uint32_t *fill = nsys_xcalloc((size_t)s->n_groups + 1, sizeof *fill);
  for (uint32_t j = 0; j < n; j++) {
    uint32_t g = group_of[ids[j]];
    out[s->groups[g].first + fill[g]++] = ids[j];
  }
  free(fill);
  return out;
}

typedef struct {
  int64_t end;
  uint32_t id;
} nsys__by_end;

static int nsys__cmp_end(const void *a, const void *b) {
  const nsys__by_end *x = a, *y = b;
  return x->end < y->end ? -1 : x->end > y->end;
}

/* s->perm_end from s->perm: each group's slice by end (ties in any order: only which instances
 * end before a time matters). A group's start order is nearly its end order (ops overlap a
 * few at a time): an insertion sort, given up for a sort of (end, id) pairs (fewer than 2^16)
 * or a radix sort once it has moved 8 entries per instance. False when cancelled. */
static bool nsys__end_order(nsys_task *task, nsys_sx *s) {
  s->perm_end = nsys_xmalloc(((size_t)s->n + 1) * sizeof *s->perm_end);
  memcpy(s->perm_end, s->perm, (size_t)s->n * sizeof *s->perm);
  const int64_t *end = s->end;
  for (uint32_t g = 0; g < s->n_groups; g++) {
    uint32_t *v = s->perm_end + s->groups[g].first, c = s->groups[g].count, j = 1;
    uint64_t budget = (uint64_t)c * 8 + 64;
    for (; j < c && budget > 0; j++) {
      uint32_t k = j, x = v[j];
      int64_t e = end[x];
      for (; k > 0 && budget > 0 && end[v[k - 1]] > e; k--, budget--) v[k] = v[k - 1];
      v[k] = x;
      if (budget == 0) break; /* v[0..j] may be unsorted now: sort all of it */
    }
    if (j >= c) {
      /* sorted */
    } else if (c < (1u << 16)) {
      nsys__by_end *pairs = nsys_xmalloc((size_t)c * sizeof *pairs);
      for (uint32_t k = 0; k < c; k++) pairs[k] = (nsys__by_end){end[v[k]], v[k]};
      qsort(pairs, c, sizeof *pairs, nsys__cmp_end);
      for (uint32_t k = 0; k < c; k++) v[k] = pairs[k].id;
      free(pairs);
    } else if (!nsys__radix_by(task, end, v, c)) {
      return false;
    }
    if ((g & 255) == 0 && nsys_task_cancelled(task)) return false;
  }
  return true;
}

/* False when cancelled, or (with *usable false) when an instance ends before it starts. */
static bool nsys__sx_build(nsys_task *task, const nsys_index *ix, nsys_sx_source src, nsys_sx *s, bool *usable) {
  memset(s, 0, sizeof *s);
  *usable = true;
  uint32_t total;
  if (src == NSYS_SX_OPS) total = ix->ops.n, s->start = ix->ops.start, s->end = ix->ops.end;
  else if (src == NSYS_SX_NVTX) total = ix->nvtx.n, s->start = ix->nvtx.start, s->end = ix->nvtx.end;
  else total = ix->api.n, s->start = ix->api.start, s->end = ix->api.end;
  uint32_t *ids = nsys_xmalloc(((size_t)total + 1) * sizeof *ids);
  uint32_t n = 0;
  for (uint32_t i = 0; i < total; i++) {
    if (src == NSYS_SX_OPS && !nsys__searched_op(ix->ops.kind[i])) continue;
    if (s->end[i] < s->start[i]) *usable = false; /* the counts below assume end >= start */
    ids[n++] = i;
  }
  uint32_t *group_of = *usable ? nsys_xmalloc(((size_t)total + 1) * sizeof *group_of) : NULL;
  bool ok = *usable && nsys__radix_by(task, s->start, ids, n) && nsys__assign_groups(task, ix, src, s, ids, n, group_of);
  if (ok) { /* a counting sort by group, stable: (group, start, id); then each group by end */
    uint32_t sum = 0;
    for (uint32_t g = 0; g < s->n_groups; g++) {
      s->groups[g].first = sum;
      sum += s->groups[g].count;
    }
    s->n = n;
    s->perm = nsys__by_group(s, ids, n, group_of);
    ok = nsys__end_order(task, s);
  }
  if (ok) {
    s->dur_start = nsys__dur_prefix(s, s->perm);
    s->dur_end = nsys__dur_prefix(s, s->perm_end);
    uint32_t nb = (n + NSYS__BLOCK - 1) / NSYS__BLOCK;
    s->leaves = 1;
    while (s->leaves < nb) s->leaves *= 2;
    s->tree = nsys_xmalloc((size_t)2 * s->leaves * sizeof *s->tree);
    for (uint32_t b = 0; b < s->leaves; b++) {
      int64_t m = INT64_MIN;
      for (uint32_t j = b * NSYS__BLOCK; b < nb && j < n && j < (b + 1) * NSYS__BLOCK; j++)
        if (s->end[s->perm[j]] > m) m = s->end[s->perm[j]];
      s->tree[s->leaves + b] = m;
    }
    for (uint32_t v = s->leaves - 1; v >= 1; v--)
      s->tree[v] = s->tree[2 * v] > s->tree[2 * v + 1] ? s->tree[2 * v] : s->tree[2 * v + 1];
    s->tree[0] = INT64_MIN;
    s->bytes = 2 * ((size_t)n + 1) * sizeof *s->perm + (size_t)s->n_groups * sizeof *s->groups +
               2 * ((size_t)n / NSYS__BLOCK + 1) * sizeof *s->dur_start + (size_t)2 * s->leaves * sizeof *s->tree;
  }
  free(group_of);
  free(ids);
  if (!ok) nsys__sx_free_parts(s);
  return ok;
}

/* ---- query ---- */

typedef struct {
  const nsys_sx *s;
  uint32_t a, b; /* perm range */
  int64_t ws;
  bool (*emit)(void *ctx, uint32_t id);
  void *ctx;
} nsys__walk;

/* Tree node v covers blocks [bl, br). */
static bool nsys__report(const nsys__walk *w, uint32_t v, uint32_t bl, uint32_t br) {
  if ((uint64_t)br * NSYS__BLOCK <= w->a || (uint64_t)bl * NSYS__BLOCK >= w->b || w->s->tree[v] < w->ws) return true;
  if (br - bl == 1) {
    uint32_t lo = bl * NSYS__BLOCK > w->a ? bl * NSYS__BLOCK : w->a;
    uint32_t hi = (uint64_t)br * NSYS__BLOCK < w->b ? br * NSYS__BLOCK : w->b;
    for (uint32_t j = lo; j < hi; j++) {
      uint32_t id = w->s->perm[j];
      if (w->s->end[id] >= w->ws && !w->emit(w->ctx, id)) return false;
    }
    return true;
  }
  uint32_t mid = bl + (br - bl) / 2;
  return nsys__report(w, 2 * v, bl, mid) && nsys__report(w, 2 * v + 1, mid, br);
}

bool nsys_sx_ending_from(const nsys_sx *s, uint32_t g, uint32_t before, int64_t ws,
                         bool (*emit)(void *ctx, uint32_t id), void *ctx) {
  if (before == 0) return true;
  const nsys_sx_group *gr = &s->groups[g];
  nsys__walk w = {s, gr->first, gr->first + before, ws, emit, ctx};
  return nsys__report(&w, 1, 0, s->leaves);
}

/* How many of v[0..n) have key[v[j]] < t (v sorted by key). */
static uint32_t nsys__count_below(const int64_t *key, const uint32_t *v, uint32_t n, int64_t t) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (key[v[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

uint32_t nsys_sx_starting_before(const nsys_sx *s, uint32_t g, int64_t t) {
  return nsys__count_below(s->start, s->perm + s->groups[g].first, s->groups[g].count, t);
}

/* How many of group g's instances end before t. */
static uint32_t nsys__ending_before(const nsys_sx *s, uint32_t g, int64_t t) {
  return nsys__count_below(s->end, s->perm_end + s->groups[g].first, s->groups[g].count, t);
}

/* The sum of end - start over order[0 .. pos) (mod 2^64), from the sample at or before pos. */
static uint64_t nsys__dur_upto(const nsys_sx *s, const uint32_t *order, const uint64_t *prefix, uint32_t pos) {
  uint64_t sum = prefix[pos / NSYS__BLOCK];
  for (uint32_t j = pos - pos % NSYS__BLOCK; j < pos; j++) sum += (uint64_t)s->end[order[j]] - (uint64_t)s->start[order[j]];
  return sum;
}

void nsys_sx_overlapping(const nsys_sx *s, uint32_t g, int64_t ws, int64_t we, uint32_t *count, int64_t *ns) {
  /* every instance ends at or after its start and ws < we: those ending before ws all start
   * before we, so the overlapping ones are those starting before we less those ending before ws */
  const nsys_sx_group *gr = &s->groups[g];
  uint32_t started = nsys_sx_starting_before(s, g, we), ended = nsys__ending_before(s, g, ws);
  uint64_t in = nsys__dur_upto(s, s->perm, s->dur_start, gr->first + started) -
                nsys__dur_upto(s, s->perm, s->dur_start, gr->first);
  uint64_t out = nsys__dur_upto(s, s->perm_end, s->dur_end, gr->first + ended) -
                 nsys__dur_upto(s, s->perm_end, s->dur_end, gr->first);
  *count = started - ended;
  *ns = (int64_t)(in - out);
}

/* ---- the per-profile memo ---- */

typedef struct {
  nsys_sx src[NSYS_SX_SOURCES];
  uint8_t state[NSYS_SX_SOURCES]; /* 0 none, 1 being built, 2 built, 3 unusable (an end before its start) */
  const nsys_index *ix;
} nsys__sx_memo;

/* One lock for every profile's search memo: held to look up, claim and publish, never while
 * building. */
static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nsys__cv = PTHREAD_COND_INITIALIZER;

static void nsys__sx_memo_free(void *v) {
  nsys__sx_memo *m = v;
  if (!m) return;
  for (int k = 0; k < NSYS_SX_SOURCES; k++) nsys__sx_free_parts(&m->src[k]);
  free(m);
}

const nsys_sx *nsys_sx_get(nsys_task *task, nsys_profile *p, const nsys_index *ix, nsys_sx_source src) {
  if (!p || !ix || atomic_load(&p->index) != ix) return NULL;
  pthread_mutex_lock(&nsys__mu);
  nsys__sx_memo *m = p->search_memo;
  if (!m) {
    m = nsys_xcalloc(1, sizeof *m);
    m->ix = ix;
    p->search_memo = m;
    p->search_memo_free = nsys__sx_memo_free;
  }
  while (m->state[src] == 1) /* another request builds it: wait, polling our cancellation */
    if (!nsys_task_wait_turn(task, &nsys__cv, &nsys__mu, 10)) {
      pthread_mutex_unlock(&nsys__mu);
      nsys_task_fail_cancelled(task);
      return NULL;
    }
  if (m->state[src] >= 2) {
    pthread_mutex_unlock(&nsys__mu);
    return m->state[src] == 2 ? &m->src[src] : NULL;
  }
  m->state[src] = 1;
  pthread_mutex_unlock(&nsys__mu);
  nsys_sx built;
  bool usable;
  bool ok = nsys__sx_build(task, ix, src, &built, &usable);
  pthread_mutex_lock(&nsys__mu);
  if (ok) m->src[src] = built;
  m->state[src] = ok ? 2 : usable ? 0 : 3; /* cut short: nothing half-built is kept, the next request builds */
  pthread_cond_broadcast(&nsys__cv);
  pthread_mutex_unlock(&nsys__mu);
  if (!ok && usable) nsys_task_fail_cancelled(task);
  return ok ? &m->src[src] : NULL;
}

const nsys_sx *nsys_sx_peek(nsys_profile *p, const nsys_index *ix, nsys_sx_source src) {
  if (!p || !ix || atomic_load(&p->index) != ix) return NULL;
  pthread_mutex_lock(&nsys__mu);
  const nsys__sx_memo *m = p->search_memo;
  const nsys_sx *s = m && m->state[src] == 2 ? &m->src[src] : NULL;
  pthread_mutex_unlock(&nsys__mu);
  return s;
}
