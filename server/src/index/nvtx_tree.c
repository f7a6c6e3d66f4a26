/* nvtx/tree's trees: per-range inclusive GPU projection (one projection sweep
 * per thread), child lists in start order, the levels and top kernels served
 * from them, and the per-index cache of built trees. Name paths (the
 * aggregate tree) are in nvtx_aggregate.c. See nvtx_tree.h. */
#include "index/nvtx_tree.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_internal.h"
#include "index/index_query.h"
#include "index/nvtx_tree_internal.h"
#include "common/task.h"

/* ---- per-range stats ------------------------------------------------------ */

typedef struct {
  const nsys_index *ix;
  int32_t device;
  nsys__nvtx_stats *st;
  nsys_task *task;
  uint32_t calls;       /* callbacks so far: cancellation and progress every 4096 */
  uint64_t api_before;  /* API calls of the threads swept before this one */
  uint64_t api_total;   /* of every thread the filter keeps: the progress's 100% */
  /* consecutive calls inside the same ranges are summed here and added to
   * those ranges once (sums, min and max: the order does not matter) */
  uint32_t *enc, n_enc, cap_enc;
  uint64_t cnt;
  int64_t kns, gs, ge;
} nsys__stats_acc;

#define NSYS__STATS_PCT 60 /* the stats sweep's share of a tree build's progress */

static void nsys__stats_flush(nsys__stats_acc *c) {
  nsys__nvtx_stats *st = c->st;
  if (c->cnt) {
    for (uint32_t k = 0; k < c->n_enc; k++) {
      uint32_t r = c->enc[k];
      st->cnt[r] += c->cnt;
      st->kns[r] += c->kns;
      if (c->gs < st->gs[r]) st->gs[r] = c->gs;
      if (c->ge > st->ge[r]) st->ge[r] = c->ge;
    }
  }
  c->n_enc = 0;
  c->cnt = 0;
  c->kns = 0;
  c->gs = INT64_MAX;
  c->ge = INT64_MIN;
}

static bool nsys__stats_cb(void *c_, uint32_t api, const uint32_t *enc, uint32_t n) {
  nsys__stats_acc *c = c_;
  if ((++c->calls & 0xFFF) == 0) {
    if (nsys_task_cancelled(c->task)) return false;
    uint32_t t = c->ix->api.thread[api];
    uint64_t done = c->api_before + (api - c->ix->threads[t].api_first);
    nsys_task_progress(c->task, (int)(NSYS__STATS_PCT * done / (c->api_total ? c->api_total : 1)),
                       "NVTX ranges' GPU time");
  }
  if (n != c->n_enc || memcmp(enc, c->enc, n * sizeof *enc) != 0) {
    nsys__stats_flush(c);
    if (n > c->cap_enc) {
      c->cap_enc = n * 2;
      c->enc = nsys_xrealloc(c->enc, c->cap_enc * sizeof *c->enc);
    }
    memcpy(c->enc, enc, n * sizeof *enc);
    c->n_enc = n;
  }
  const nsys_index *ix = c->ix;
  for (int32_t op = ix->api.first_op[api]; op >= 0; op = ix->op_next[op]) {
    if (c->device >= 0 && ix->tracks[ix->ops.track[op]].device != c->device) continue;
    int64_t s = ix->ops.start[op], e = ix->ops.end[op];
    c->cnt++;
    if (ix->ops.kind[op] == NSYS_OP_KERNEL) c->kns += e - s;
    if (s < c->gs) c->gs = s;
    if (e > c->ge) c->ge = e;
  }
  return true;
}

bool nsys__nvtx_thread_ok(const nsys_index *ix, const nsys_nvtx_filter *f, uint32_t t) {
  return (!f->has_tid || ix->threads[t].tid == f->tid) && (!f->has_pid || ix->threads[t].pid == f->pid);
}

void nsys__nvtx_stats_free(nsys__nvtx_stats *st) {
  free(st->cnt);
  free(st->kns);
  free(st->gs);
  free(st->ge);
  memset(st, 0, sizeof *st);
}

bool nsys__nvtx_stats_build(const nsys_index *ix, const nsys_nvtx_filter *f, nsys__nvtx_stats *st,
                            nsys_task *task) {
  size_t nn = ix->nvtx.n ? ix->nvtx.n : 1;
  st->cnt = nsys_xcalloc(nn, sizeof *st->cnt);
  st->kns = nsys_xcalloc(nn, sizeof *st->kns);
  st->gs = nsys_xmalloc(nn * sizeof *st->gs);
  st->ge = nsys_xmalloc(nn * sizeof *st->ge);
  for (uint32_t i = 0; i < ix->nvtx.n; i++) {
    st->gs[i] = INT64_MAX;
    st->ge[i] = INT64_MIN;
  }
  nsys__stats_acc acc = {.ix = ix, .device = f->device, .st = st, .task = task, .gs = INT64_MAX, .ge = INT64_MIN};
  for (uint32_t t = 0; t < ix->n_threads; t++)
    if (nsys__nvtx_thread_ok(ix, f, t)) acc.api_total += ix->threads[t].api_count;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    if (!nsys__nvtx_thread_ok(ix, f, t)) continue;
    if (nsys_task_cancelled(task) || !nsys_nvtx_sweep(ix, t, nsys__stats_cb, &acc)) {
      free(acc.enc);
      nsys__nvtx_stats_free(st);
      nsys_task_fail_cancelled(task);
      return false;
    }
    nsys__stats_flush(&acc);
    acc.api_before += ix->threads[t].api_count;
  }
  free(acc.enc);
  nsys_task_progress(task, NSYS__STATS_PCT, "NVTX ranges' GPU time");
  return true;
}

static bool nsys__in_window(const nsys_index *ix, const nsys_nvtx_filter *f, uint32_t r) {
  return !f->has_window || (ix->nvtx.start[r] <= f->end && ix->nvtx.end[r] >= f->start);
}

uint32_t nsys__nvtx_keep(const nsys_index *ix, const nsys_nvtx_filter *f, const nsys__nvtx_stats *st,
                         bool *keep) {
  bool *thread_ok = nsys_xcalloc(ix->n_threads + 1, sizeof(bool));
  for (uint32_t t = 0; t < ix->n_threads; t++) thread_ok[t] = nsys__nvtx_thread_ok(ix, f, t);
  uint32_t kept = 0;
  for (uint32_t r = 0; r < ix->nvtx.n; r++) {
    keep[r] = thread_ok[ix->nvtx.thread[r]] && nsys__in_window(ix, f, r) && (f->device < 0 || st->cnt[r] > 0);
    kept += keep[r];
  }
  free(thread_ok);
  return kept;
}

void nsys__csr_free(nsys__csr *c) {
  free(c->off);
  free(c->ids);
  c->off = c->ids = NULL;
}

/* ---- cores ------------------------------------------------------------------ */

static void nsys__core_free(nsys__nvtx_core *c) {
  if (!c) return;
  nsys__nvtx_stats_free(&c->st);
  free(c->keep);
  nsys__csr_free(&c->kids);
  nsys__csr_free(&c->roots);
  free(c->p_name); free(c->p_domain); free(c->p_depth); free(c->p_inst);
  free(c->p_start); free(c->p_end); free(c->p_cpu); free(c->p_min); free(c->p_med); free(c->p_max);
  free(c->p_cnt); free(c->p_kns); free(c->p_gs); free(c->p_ge); free(c->p_local);
  nsys__csr_free(&c->inst);
  nsys_strtab_free(&c->names);
  free(c);
}

static void nsys__core_unref(nsys__nvtx_core *c) {
  if (c && atomic_fetch_sub(&c->refs, 1) == 1) nsys__core_free(c);
}

/* A range whose parent is not kept is a root (the filters keep every
 * enclosing range of a kept one, so that only happens at depth 0). */
static bool nsys__is_root(const nsys__nvtx_core *c, uint32_t r) {
  int32_t pa = c->ix->nvtx.parent[r];
  return pa < 0 || (uint32_t)pa >= c->ix->nvtx.n || !c->keep[pa];
}

/* The ranges core: stats for the device filter over every thread, children
 * per range and roots per thread, in id (= start) order. */
static nsys__nvtx_core *nsys__ranges_build(const nsys_index *ix, int32_t device, nsys_task *task) {
  nsys__nvtx_core *c = nsys_xcalloc(1, sizeof *c);
  c->ix = ix;
  c->f.device = device;
  nsys_strtab_init(&c->names);
  nsys_nvtx_filter all = {.device = device};
  if (!nsys__nvtx_stats_build(ix, &all, &c->st, task)) {
    nsys__core_free(c);
    return NULL;
  }
  uint32_t n = ix->nvtx.n;
  c->keep = nsys_xmalloc((n ? n : 1) * sizeof(bool));
  c->n_ranges = nsys__nvtx_keep(ix, &all, &c->st, c->keep);
  c->kids.off = nsys_xcalloc((size_t)n + 2, sizeof(uint32_t));
  c->roots.off = nsys_xcalloc((size_t)ix->n_threads + 2, sizeof(uint32_t));
  for (uint32_t r = 0; r < n; r++) {
    if (!c->keep[r]) continue;
    if (nsys__is_root(c, r)) c->roots.off[ix->nvtx.thread[r] + 1]++;
    else c->kids.off[ix->nvtx.parent[r] + 1]++;
  }
  for (uint32_t r = 0; r < n; r++) c->kids.off[r + 1] += c->kids.off[r];
  for (uint32_t t = 0; t < ix->n_threads; t++) c->roots.off[t + 1] += c->roots.off[t];
  c->kids.ids = nsys_xmalloc(((size_t)c->kids.off[n] + 1) * sizeof(uint32_t));
  c->roots.ids = nsys_xmalloc(((size_t)c->roots.off[ix->n_threads] + 1) * sizeof(uint32_t));
  uint32_t *kpos = nsys_xmalloc(((size_t)n + 1) * sizeof(uint32_t));
  uint32_t *rpos = nsys_xmalloc(((size_t)ix->n_threads + 1) * sizeof(uint32_t));
  memcpy(kpos, c->kids.off, ((size_t)n + 1) * sizeof(uint32_t));
  memcpy(rpos, c->roots.off, ((size_t)ix->n_threads + 1) * sizeof(uint32_t));
  for (uint32_t r = 0; r < n; r++) {
    if (!c->keep[r]) continue;
    if (nsys__is_root(c, r)) c->roots.ids[rpos[ix->nvtx.thread[r]]++] = r;
    else c->kids.ids[kpos[ix->nvtx.parent[r]]++] = r;
  }
  free(kpos);
  free(rpos);
  return c;
}

static nsys__nvtx_core *nsys__aggregate_core_build(const nsys_index *ix, const nsys_nvtx_filter *f,
                                                   nsys_task *task) {
  nsys__nvtx_core *c = nsys_xcalloc(1, sizeof *c);
  c->ix = ix;
  c->f = *f;
  c->aggregate = true;
  nsys_strtab_init(&c->names);
  nsys__nvtx_stats st;
  if (!nsys__nvtx_stats_build(ix, f, &st, task)) {
    nsys__core_free(c);
    return NULL;
  }
  c->keep = nsys_xmalloc((ix->nvtx.n ? ix->nvtx.n : 1) * sizeof(bool));
  c->n_ranges = nsys__nvtx_keep(ix, f, &st, c->keep);
  bool ok = nsys__nvtx_aggregate_build(c, &st, task);
  nsys__nvtx_stats_free(&st);
  free(c->keep);
  c->keep = NULL;
  if (!ok) {
    nsys__core_free(c);
    return NULL;
  }
  return c;
}

/* ---- the cache ---------------------------------------------------------------- */

#define NSYS__NVTX_SLOTS 6

typedef struct nsys__nvtx_cache {
  nsys__nvtx_core *slot[NSYS__NVTX_SLOTS];
  uint64_t clock;
} nsys__nvtx_cache;

static pthread_mutex_t nsys__nvtx_mu = PTHREAD_MUTEX_INITIALIZER;

static bool nsys__same_key(const nsys__nvtx_core *c, const nsys_nvtx_filter *f, bool aggregate) {
  if (c->aggregate != aggregate || c->f.device != f->device) return false;
  if (!aggregate) return true;
  const nsys_nvtx_filter *g = &c->f;
  return g->has_tid == f->has_tid && (!f->has_tid || g->tid == f->tid) && g->has_pid == f->has_pid &&
         (!f->has_pid || g->pid == f->pid) && g->has_window == f->has_window &&
         (!f->has_window || (g->start == f->start && g->end == f->end));
}

/* The cached core for the key, with a reference taken, or NULL. Under the mutex. */
static nsys__nvtx_core *nsys__cache_find(nsys__nvtx_cache *cache, const nsys_nvtx_filter *f, bool aggregate) {
  if (!cache) return NULL;
  for (int i = 0; i < NSYS__NVTX_SLOTS; i++) {
    nsys__nvtx_core *c = cache->slot[i];
    if (c && nsys__same_key(c, f, aggregate)) {
      atomic_fetch_add(&c->refs, 1);
      c->last_used = ++cache->clock;
      return c;
    }
  }
  return NULL;
}

nsys_nvtx_tree *nsys_nvtx_tree_get(const nsys_index *ix, const nsys_nvtx_filter *f, bool aggregate,
                                   nsys_task *task) {
  nsys__index_priv *pv = nsys__priv(ix);
  pthread_mutex_lock(&nsys__nvtx_mu);
  nsys__nvtx_core *c = nsys__cache_find(pv->nvtx_trees, f, aggregate);
  pthread_mutex_unlock(&nsys__nvtx_mu);
  if (!c) {
    /* built outside the lock: other profiles' and other keys' requests go on */
    nsys__nvtx_core *made = aggregate ? nsys__aggregate_core_build(ix, f, task)
                                      : nsys__ranges_build(ix, f->device, task);
    if (!made) return NULL;
    atomic_store(&made->refs, 1);
    pthread_mutex_lock(&nsys__nvtx_mu);
    if (!pv->nvtx_trees) pv->nvtx_trees = nsys_xcalloc(1, sizeof(nsys__nvtx_cache));
    nsys__nvtx_cache *cache = pv->nvtx_trees;
    c = nsys__cache_find(cache, f, aggregate); /* built meanwhile by another request */
    if (c) {
      nsys__core_unref(made);
    } else {
      c = made;
      int victim = 0; /* an empty slot, else the least recently used */
      for (int i = 0; i < NSYS__NVTX_SLOTS; i++) {
        if (!cache->slot[i]) {
          victim = i;
          break;
        }
        if (cache->slot[i]->last_used < cache->slot[victim]->last_used) victim = i;
      }
      nsys__core_unref(cache->slot[victim]); /* in-flight users keep theirs alive */
      atomic_fetch_add(&c->refs, 1);        /* the cache's reference */
      c->last_used = ++cache->clock;
      cache->slot[victim] = c;
    }
    pthread_mutex_unlock(&nsys__nvtx_mu);
  }
  nsys_nvtx_tree *t = nsys_xmalloc(sizeof *t);
  t->c = c;
  t->f = *f;
  return t;
}

void nsys_nvtx_tree_release(nsys_nvtx_tree *t) {
  if (!t) return;
  nsys__core_unref(t->c);
  free(t);
}

void nsys__nvtx_trees_free(nsys_index *ix) {
  nsys__index_priv *pv = nsys__priv(ix);
  if (!pv || !pv->nvtx_trees) return;
  nsys__nvtx_cache *cache = pv->nvtx_trees;
  for (int i = 0; i < NSYS__NVTX_SLOTS; i++) nsys__core_unref(cache->slot[i]);
  free(cache);
  pv->nvtx_trees = NULL;
}

/* ---- levels ------------------------------------------------------------------------ */

/* First position in ids[lo, hi) whose range ends at or after ws. */
static uint32_t nsys__first_ending(const nsys_index *ix, const uint32_t *ids, uint32_t lo, uint32_t hi, int64_t ws) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->nvtx.end[ids[mid]] < ws) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* First position in ids[lo, hi) whose range starts after we. */
static uint32_t nsys__first_after(const nsys_index *ix, const uint32_t *ids, uint32_t lo, uint32_t hi, int64_t we) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->nvtx.start[ids[mid]] <= we) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Siblings ids[*lo, *hi) narrowed to those overlapping the window. */
static void nsys__trim(const nsys_nvtx_tree *t, const uint32_t *ids, uint32_t *lo, uint32_t *hi) {
  if (!t->f.has_window || t->c->aggregate) return;
  uint32_t l = nsys__first_ending(t->c->ix, ids, *lo, *hi, t->f.start);
  uint32_t h = nsys__first_after(t->c->ix, ids, l, *hi, t->f.end);
  *lo = l;
  *hi = h;
}

bool nsys_nvtx_tree_has(const nsys_nvtx_tree *t, uint32_t id) {
  const nsys__nvtx_core *c = t->c;
  if (c->aggregate) return id < c->n_paths;
  const nsys_index *ix = c->ix;
  return id < ix->nvtx.n && c->keep[id] && nsys__nvtx_thread_ok(ix, &t->f, ix->nvtx.thread[id]) &&
         nsys__in_window(ix, &t->f, id);
}

uint32_t nsys_nvtx_tree_level(const nsys_nvtx_tree *t, int64_t parent, uint32_t pos, uint32_t limit,
                              uint32_t *out, uint32_t *total) {
  const nsys__nvtx_core *c = t->c;
  uint32_t n_out = 0, seen = 0;
  if (parent >= 0 || c->aggregate) {
    const nsys__csr *l = parent >= 0 ? &c->kids : &c->roots;
    uint32_t at = parent >= 0 ? (uint32_t)parent : 0;
    uint32_t lo = l->off[at], hi = l->off[at + 1];
    nsys__trim(t, l->ids, &lo, &hi);
    seen = hi - lo;
    for (uint64_t i = (uint64_t)lo + pos; i < hi && n_out < limit; i++) out[n_out++] = l->ids[i];
  } else {
    for (uint32_t th = 0; th < c->ix->n_threads; th++) {
      if (!nsys__nvtx_thread_ok(c->ix, &t->f, th)) continue;
      uint32_t lo = c->roots.off[th], hi = c->roots.off[th + 1];
      nsys__trim(t, c->roots.ids, &lo, &hi);
      /* positions [seen, seen + hi - lo) of the level */
      for (uint64_t i = lo + (pos > seen ? pos - seen : 0); i < hi && n_out < limit; i++) out[n_out++] = c->roots.ids[i];
      seen += hi - lo;
    }
  }
  *total = seen;
  return n_out;
}

uint32_t nsys_nvtx_tree_child_count(const nsys_nvtx_tree *t, uint32_t id) {
  uint32_t lo = t->c->kids.off[id], hi = t->c->kids.off[id + 1];
  nsys__trim(t, t->c->kids.ids, &lo, &hi);
  return hi - lo;
}

uint32_t nsys_nvtx_tree_range_count(const nsys_nvtx_tree *t) { return t->c->n_ranges; }
bool nsys_nvtx_tree_aggregated(const nsys_nvtx_tree *t) { return t->c->aggregate; }

void nsys_nvtx_tree_node(const nsys_nvtx_tree *t, uint32_t id, nsys_nvtx_node *o) {
  const nsys__nvtx_core *c = t->c;
  const nsys_index *ix = c->ix;
  memset(o, 0, sizeof *o);
  o->id = id;
  if (!c->aggregate) {
    o->name_tab = &ix->strings;
    o->name = ix->nvtx.name[id];
    o->domain = ix->nvtx.domain[id];
    o->depth = ix->nvtx.depth[id];
    o->thread = ix->nvtx.thread[id];
    o->start = ix->nvtx.start[id];
    o->end = ix->nvtx.end[id];
    o->gpu_start = c->st.gs[id];
    o->gpu_end = c->st.ge[id];
    o->op_count = c->st.cnt[id];
    o->kernel_ns = c->st.kns[id];
    o->instances = 1;
    o->cpu_ns = o->min_ns = o->median_ns = o->max_ns = o->end - o->start;
    return;
  }
  o->name_tab = c->p_local[id] ? &c->names : &ix->strings;
  o->name = c->p_name[id];
  o->domain = c->p_domain[id];
  o->depth = c->p_depth[id];
  o->thread = ix->nvtx.thread[c->inst.ids[c->inst.off[id]]];
  o->start = c->p_start[id];
  o->end = c->p_end[id];
  o->gpu_start = c->p_gs[id];
  o->gpu_end = c->p_ge[id];
  o->op_count = c->p_cnt[id];
  o->kernel_ns = c->p_kns[id];
  o->instances = c->p_inst[id];
  o->cpu_ns = c->p_cpu[id];
  o->min_ns = c->p_min[id];
  o->median_ns = c->p_med[id];
  o->max_ns = c->p_max[id];
}

/* ---- top kernels ------------------------------------------------------------------- */

typedef struct {
  nsys_kernel_stat *v; /* open addressing on name; count == 0: empty */
  uint32_t cap, n;
} nsys__kmap;

static uint32_t nsys__kmap_slot(const nsys__kmap *m, uint32_t name) {
  uint32_t h = (name * 2654435761u) & (m->cap - 1);
  while (m->v[h].count && m->v[h].name != name) h = (h + 1) & (m->cap - 1);
  return h;
}

static void nsys__kmap_add(nsys__kmap *m, uint32_t name, int64_t ns) {
  if ((m->n + 1) * 2 > m->cap) { /* grow: rehash every entry as it is */
    nsys__kmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->v = nsys_xcalloc(m->cap, sizeof *m->v);
    for (uint32_t i = 0; i < old.cap; i++)
      if (old.v[i].count) m->v[nsys__kmap_slot(m, old.v[i].name)] = old.v[i];
    free(old.v);
  }
  uint32_t h = nsys__kmap_slot(m, name);
  if (!m->v[h].count) {
    m->v[h].name = name;
    m->n++;
  }
  m->v[h].count++;
  m->v[h].ns += ns;
}

/* Kernels of the API calls on range r's thread that r contains. */
static void nsys__range_kernels(const nsys_index *ix, int32_t device, uint32_t r, nsys__kmap *m) {
  const nsys_host_thread *th = &ix->threads[ix->nvtx.thread[r]];
  int64_t rs = ix->nvtx.start[r], re = ix->nvtx.end[r];
  uint32_t lo = th->api_first, hi = th->api_first + th->api_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->api.start[mid] < rs) lo = mid + 1;
    else hi = mid;
  }
  for (uint32_t a = lo; a < th->api_first + th->api_count && ix->api.start[a] <= re; a++) {
    if (ix->api.end[a] > re) continue;
    for (int32_t op = ix->api.first_op[a]; op >= 0; op = ix->op_next[op]) {
      if (ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
      if (device >= 0 && ix->tracks[ix->ops.track[op]].device != device) continue;
      nsys__kmap_add(m, ix->ops.name[op], nsys_op_dur(ix, (uint32_t)op));
    }
  }
}

static int nsys__cmp_stat_ns(const void *a, const void *b) {
  const nsys_kernel_stat *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

uint32_t nsys_nvtx_tree_top_kernels(const nsys_nvtx_tree *t, uint32_t id, uint32_t k, nsys_kernel_stat *out) {
  if (!k) return 0;
  const nsys__nvtx_core *c = t->c;
  nsys__kmap m = {NULL, 0, 0};
  if (!c->aggregate) {
    nsys__range_kernels(c->ix, c->f.device, id, &m);
  } else {
    for (uint32_t i = c->inst.off[id]; i < c->inst.off[id + 1]; i++)
      nsys__range_kernels(c->ix, c->f.device, c->inst.ids[i], &m);
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < m.cap; i++)
    if (m.v[i].count) m.v[n++] = m.v[i];
  if (n) qsort(m.v, n, sizeof *m.v, nsys__cmp_stat_ns);
  if (n > k) n = k;
  if (n) memcpy(out, m.v, n * sizeof *out);
  free(m.v);
  return n;
}

/* ---- innermost range of an API call ------------------------------------------------------ */

int32_t nsys_nvtx_innermost(const nsys_index *ix, uint32_t api) {
  const nsys_host_thread *th = &ix->threads[ix->api.thread[api]];
  if (!th->nvtx_count) return -1;
  int64_t as = ix->api.start[api], ae = ix->api.end[api];
  /* last range of the thread with start <= as */
  uint32_t lo = th->nvtx_first, hi = th->nvtx_first + th->nvtx_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->nvtx.start[mid] <= as) lo = mid + 1;
    else hi = mid;
  }
  if (lo == th->nvtx_first) return -1;
  /* ranges containing the call form a chain; the innermost starts last. Walk
   * the parent chain of each candidate, newest first. */
  for (uint32_t c = lo; c-- > th->nvtx_first && lo - c <= 64;) {
    for (int32_t r = (int32_t)c; r >= 0; r = ix->nvtx.parent[r])
      if (ix->nvtx.start[r] <= as && ix->nvtx.end[r] >= ae) return r;
  }
  return -1;
}
