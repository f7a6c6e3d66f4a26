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

/* ids[0..n) stably by start (LSD radix on start - min, 16 bits a pass): (start, id) order when
 * ids come in ascending order. False when cancelled. */
static bool nsys__radix_by_start(nsys_task *task, const int64_t *start, uint32_t *ids, uint32_t n) {
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
  free(s->groups);
  free(s->tree);
  memset(s, 0, sizeof *s);
}

/* Which ops search reports: kernels, copies and sets (not graph launches). */
static bool nsys__searched_op(uint8_t k) { return k == NSYS_OP_KERNEL || k == NSYS_OP_MEMCPY || k == NSYS_OP_MEMSET; }

static bool nsys__sx_build(nsys_task *task, const nsys_index *ix, nsys_sx_source src, nsys_sx *s) {
  memset(s, 0, sizeof *s);
  uint32_t total;
  const uint32_t *name;
  if (src == NSYS_SX_OPS) total = ix->ops.n, s->start = ix->ops.start, s->end = ix->ops.end, name = ix->ops.name;
  else if (src == NSYS_SX_NVTX) total = ix->nvtx.n, s->start = ix->nvtx.start, s->end = ix->nvtx.end, name = ix->nvtx.name;
  else total = ix->api.n, s->start = ix->api.start, s->end = ix->api.end, name = ix->api.name;
  uint32_t *ids = nsys_xmalloc(((size_t)total + 1) * sizeof *ids);
  uint32_t n = 0;
  for (uint32_t i = 0; i < total; i++)
    if (src != NSYS_SX_OPS || nsys__searched_op(ix->ops.kind[i])) ids[n++] = i;
  if (!nsys__radix_by_start(task, s->start, ids, n)) {
    free(ids);
    return false;
  }
  /* group of each instance, in (start, id) order of first appearance */
  uint32_t *gid = nsys_xmalloc(((size_t)n + 1) * sizeof *gid);
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
      gid[j] = s->n_groups - 1;
    } else {
      gid[j] = *slot - 1;
    }
    s->groups[gid[j]].count++;
  }
  free(gm.slot);
  free(by_name);
  if (ok) { /* counting sort by group, stable: (group, start, id) */
    uint32_t sum = 0;
    for (uint32_t g = 0; g < s->n_groups; g++) {
      s->groups[g].first = sum;
      sum += s->groups[g].count;
    }
    s->perm = nsys_xmalloc(((size_t)n + 1) * sizeof *s->perm);
    uint32_t *fill = nsys_xcalloc((size_t)s->n_groups + 1, sizeof *fill);
    for (uint32_t j = 0; j < n; j++) s->perm[s->groups[gid[j]].first + fill[gid[j]]++] = ids[j];
    free(fill);
    s->n = n;
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
    s->bytes = ((size_t)n + 1) * sizeof *s->perm + (size_t)s->n_groups * sizeof *s->groups +
               (size_t)2 * s->leaves * sizeof *s->tree;
  }
  free(gid);
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

bool nsys_sx_window(const nsys_sx *s, uint32_t g, int64_t ws, int64_t we, bool (*emit)(void *ctx, uint32_t id),
                    void *ctx) {
  const nsys_sx_group *gr = &s->groups[g];
  uint32_t lo = 0, hi = gr->count; /* the first with start >= we */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->start[s->perm[gr->first + mid]] < we) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return true;
  nsys__walk w = {s, gr->first, gr->first + lo, ws, emit, ctx};
  return nsys__report(&w, 1, 0, s->leaves);
}

/* ---- the per-profile memo ---- */

typedef struct {
  nsys_sx src[NSYS_SX_SOURCES];
  uint8_t state[NSYS_SX_SOURCES]; /* 0 none, 1 being built, 2 built */
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
  if (m->state[src] == 2) {
    pthread_mutex_unlock(&nsys__mu);
    return &m->src[src];
  }
  m->state[src] = 1;
  pthread_mutex_unlock(&nsys__mu);
  nsys_sx built;
  bool ok = nsys__sx_build(task, ix, src, &built);
  pthread_mutex_lock(&nsys__mu);
  if (ok) m->src[src] = built;
  m->state[src] = ok ? 2 : 0; /* cut short: nothing half-built is kept, the next request builds */
  pthread_cond_broadcast(&nsys__cv);
  pthread_mutex_unlock(&nsys__mu);
  if (!ok) {
    nsys_task_fail_cancelled(task);
    return NULL;
  }
  return &m->src[src];
}
