/* Lazily computed, cached per-name statistics (see kernel_stats.h). */
#include "explain/kernel_stats.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "analysis/analysis.h"
#include "common/csort.h"
#include "common/util.h"
#include "profile/profile.h"

#define NSYS__CACHE_SLOTS 4
#define NSYS__NVTX_SAMPLES 64

typedef struct {
  bool built;
  uint32_t n_names;
  uint32_t *off;      /* n_names + 1 */
  uint32_t *ops;      /* grouped by name, in op order within a group */
  uint32_t *trk;      /* track of ops[i] (sequential scans, no random access) */
  uint32_t *aux;      /* BY_NAME: full-name id of ops[i] */
  uint32_t *stamp;    /* scratch, per name id: last group that saw it (variants) */
  int64_t *totals;    /* per name id */
  uint8_t *kind;      /* per name id: kind of the group's shortest op (lowest op id on ties) */
  uint32_t *first;    /* per name id: lowest op id of the group */
  uint32_t **by_dur;  /* per name id: the group's ops in (duration, op id) order, once first asked for */
  uint32_t n_groups;
  nsys_kstats **stats; /* per name id, allocated on first use */
} nsys__grouping;

typedef struct {
  const nsys_index *ix;
  bool has_identity;
  dev_t dev;
  ino_t ino;
  int64_t size, mtime;
  uint64_t last_used;
  int64_t sum_all, sum_kind[3];
  nsys__grouping g[2];
} nsys__entry;

static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static nsys__entry *nsys__slots[NSYS__CACHE_SLOTS];
static uint64_t nsys__clock;

static void nsys__grouping_free(nsys__grouping *g) {
  free(g->off);
  free(g->ops);
  free(g->trk);
  free(g->aux);
  free(g->stamp);
  free(g->totals);
  free(g->kind);
  free(g->first);
  if (g->by_dur)
    for (uint32_t i = 0; i < g->n_names; i++) free(g->by_dur[i]);
  free(g->by_dur);
  if (g->stats)
    for (uint32_t i = 0; i < g->n_names; i++) free(g->stats[i]);
  free(g->stats);
  memset(g, 0, sizeof *g);
}

static void nsys__entry_free(nsys__entry *e) {
  if (!e) return;
  nsys__grouping_free(&e->g[0]);
  nsys__grouping_free(&e->g[1]);
  free(e);
}

void nsys_kstats_cache_clear(void) {
  pthread_mutex_lock(&nsys__mu);
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
    nsys__entry_free(nsys__slots[i]);
    nsys__slots[i] = NULL;
  }
  pthread_mutex_unlock(&nsys__mu);
}

static bool nsys__same(const nsys__entry *e, const nsys_profile *p, const nsys_index *ix) {
  if (e->ix != ix) return false;
  if (!p) return !e->has_identity;
  return e->has_identity && e->dev == p->st_dev && e->ino == p->st_ino && e->size == p->st_size &&
         e->mtime == p->st_mtime_ns;
}

/* Caller holds the mutex. */
/* An op's duration, 0 for the rare end < start. */
static int64_t nsys__dur0(const nsys_index *ix, uint32_t i) {
  int64_t d = nsys_op_dur(ix, i);
  return d < 0 ? 0 : d;
}

static nsys__entry *nsys__entry_for(const nsys_profile *p, const nsys_index *ix) {
  nsys__clock++;
  int free_slot = -1, lru = 0;
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
    nsys__entry *e = nsys__slots[i];
    if (!e) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (nsys__same(e, p, ix)) {
      e->last_used = nsys__clock;
      return e;
    }
    if (nsys__slots[lru] && e->last_used < nsys__slots[lru]->last_used) lru = i;
  }
  int slot = free_slot >= 0 ? free_slot : lru;
  nsys__entry_free(nsys__slots[slot]);
  nsys__entry *e = nsys_xcalloc(1, sizeof *e);
  e->ix = ix;
  if (p) {
    e->has_identity = true;
    e->dev = p->st_dev;
    e->ino = p->st_ino;
    e->size = p->st_size;
    e->mtime = p->st_mtime_ns;
  }
  e->last_used = nsys__clock;
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    int64_t d = nsys__dur0(ix, i);
    e->sum_all += d;
    uint8_t k = ix->ops.kind[i];
    if (k < 3) e->sum_kind[k] += d;
  }
  nsys__slots[slot] = e;
  return e;
}

/* Groups the ops by name id: a stable counting sort (two sequential passes
 * over the ops), so each group is in op order; a group is sorted by duration
 * only when its statistics or ops are first asked for (nsys__sort_group):
 * the report and the explain context ask for a few names, never all. The
 * per-name totals, shortest durations and kinds come from the counting pass.
 * O(n + names). False when cancelled (g is then to be freed). */
static bool nsys__build(nsys__grouping *g, const nsys_index *ix, nsys_kstats_key key, bool (*cancelled)(void *),
                        void *cctx) {
  uint32_t n = ix->ops.n, names = ix->strings.count;
  const uint32_t *ids = key == NSYS_KSTATS_BY_FULL_NAME ? ix->ops.full_name : ix->ops.name;
  g->n_names = names;
  g->off = nsys_xcalloc((size_t)names + 1, sizeof *g->off);
  g->stamp = nsys_xcalloc((size_t)names + 1, sizeof *g->stamp);
  g->totals = nsys_xcalloc((size_t)names + 1, sizeof *g->totals);
  int64_t *min_dur = nsys_xmalloc(((size_t)names + 1) * sizeof *min_dur); /* per name: shortest duration */
  g->kind = nsys_xcalloc((size_t)names + 1, sizeof *g->kind);
  g->by_dur = nsys_xcalloc((size_t)names + 1, sizeof *g->by_dur);
  g->first = nsys_xcalloc((size_t)names + 1, sizeof *g->first);
  g->stats = nsys_xcalloc((size_t)names + 1, sizeof *g->stats);
  for (uint32_t k = 0; k <= names; k++) min_dur[k] = INT64_MAX;
  for (uint32_t i = 0; i < n; i++) {
    if ((i & 0xFFFF) == 0 && cancelled && cancelled(cctx)) {
      free(min_dur);
      return false;
    }
    uint32_t name = ids[i] < names ? ids[i] : 0;
    int64_t d = nsys__dur0(ix, i);
    if (g->off[name + 1]++ == 0) g->first[name] = i;
    g->totals[name] += d;
    if (d < min_dur[name]) min_dur[name] = d, g->kind[name] = ix->ops.kind[i]; /* op order: ties keep the first */
  }
  free(min_dur);
  for (uint32_t k = 0; k < names; k++) {
    if (g->off[k + 1]) g->n_groups++;
    g->off[k + 1] += g->off[k];
  }
  uint32_t *at = nsys_xmalloc(((size_t)names + 1) * sizeof *at);
  memcpy(at, g->off, ((size_t)names + 1) * sizeof *at);
  g->ops = nsys_xmalloc((size_t)(n ? n : 1) * sizeof *g->ops);
  g->trk = nsys_xmalloc((size_t)(n ? n : 1) * sizeof *g->trk);
  g->aux = nsys_xmalloc((size_t)(n ? n : 1) * sizeof *g->aux);
  for (uint32_t i = 0; i < n; i++) {
    if ((i & 0xFFFF) == 0 && cancelled && cancelled(cctx)) {
      free(at);
      return false;
    }
    uint32_t pos = at[ids[i] < names ? ids[i] : 0]++;
    g->ops[pos] = i;
    g->trk[pos] = ix->ops.track[i];
    g->aux[pos] = ix->ops.full_name[i];
  }
  free(at);
  g->built = true;
  return true;
}

typedef struct {
  int64_t dur;
  uint32_t at;
} nsys__durpos;

static int nsys__cmp_durpos(const void *a, const void *b) {
  const nsys__durpos *x = a, *y = b;
  if (x->dur != y->dur) return x->dur < y->dur ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

static unsigned nsys__bits(uint64_t v) {
  unsigned b = 0;
  while (v) b++, v >>= 1;
  return b;
}

/* pos[0..n): the group's positions (0..n-1) in (duration, position) order.
 * One gather pass reads each op's duration. Keys (duration << bits(n - 1)) |
 * position that fit in 63 bits (durations under ~2^42 ns) are sorted by
 * nsys_sort_i64 (a radix sort of the offsets from the smallest key, only the
 * digits their range needs, every histogram in one read); otherwise a
 * (cancellable) merge sort of (duration, position) pairs. Cancellation is
 * polled before and after the radix sort, which is O(n) and not cut short
 * (~0.1 s for a 10M-op group); false when cancelled. */
static bool nsys__group_order(const nsys__grouping *g, const nsys_index *ix, uint32_t a, uint32_t n, uint32_t *pos,
                              bool (*cancelled)(void *), void *cctx) {
  int64_t *key = nsys_xmalloc((size_t)(n ? n : 1) * sizeof *key);
  uint64_t maxd = 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t d = nsys__dur0(ix, g->ops[a + i]);
    key[i] = d;
    maxd = NSYS_MAX(maxd, (uint64_t)d);
  }
  unsigned pb = n > 1 ? nsys__bits(n - 1) : 0, kb = pb + nsys__bits(maxd);
  bool ok = !(cancelled && cancelled(cctx));
  if (ok && kb > 63) {
    nsys__durpos *v = nsys_xmalloc((size_t)n * sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i] = (nsys__durpos){key[i], i};
    ok = nsys_csort(v, n, sizeof *v, nsys__cmp_durpos, cancelled, cctx);
    for (uint32_t i = 0; ok && i < n; i++) pos[i] = v[i].at;
    free(v);
  } else if (ok) {
    for (uint32_t i = 0; i < n; i++) key[i] = (int64_t)(((uint64_t)key[i] << pb) | i);
    nsys_sort_i64(key, n);
    uint64_t mask = pb ? (~0ULL >> (64 - pb)) : 0;
    for (uint32_t i = 0; i < n; i++) pos[i] = (uint32_t)((uint64_t)key[i] & mask);
    ok = !(cancelled && cancelled(cctx));
  }
  free(key);
  return ok;
}

/* Group id's ops in (duration, op id) order, once, beside the group (which
 * stays in op order: order-free passes and nsys_kstats_ops_by_id read it as
 * is): the group is in op order, so (duration, position) is that order.
 * O(group size). False when cancelled, nothing kept. */
static bool nsys__sort_group(nsys__grouping *g, const nsys_index *ix, uint32_t id, bool (*cancelled)(void *),
                             void *cctx) {
  if (g->by_dur[id]) return true;
  uint32_t a = g->off[id], n = g->off[id + 1] - a;
  uint32_t *pos = nsys_xmalloc((size_t)(n ? n : 1) * sizeof *pos);
  bool ok = nsys__group_order(g, ix, a, n, pos, cancelled, cctx) && !(cancelled && cancelled(cctx));
  if (ok) {
    for (uint32_t i = 0; i < n; i++) pos[i] = g->ops[a + pos[i]];
    g->by_dur[id] = pos;
  } else {
    free(pos);
  }
  return ok;
}

void nsys_kstats_nvtx_path(const nsys_index *ix, uint32_t op, char *out, size_t cap) {
  if (cap == 0) return;
  out[0] = '\0';
  if (op >= ix->ops.n || !ix->ops.api) return;
  int32_t api = ix->ops.api[op];
  if (api < 0 || (uint32_t)api >= ix->api.n) return;
  uint32_t th = ix->api.thread[api];
  if (th >= ix->n_threads) return;
  const nsys_host_thread *t = &ix->threads[th];
  if (t->nvtx_count == 0 || (uint64_t)t->nvtx_first + t->nvtx_count > ix->nvtx.n) return;
  int64_t s = ix->api.start[api], e = ix->api.end[api];
  /* last range of the thread starting at or before the call */
  uint32_t lo = t->nvtx_first, hi = t->nvtx_first + t->nvtx_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->nvtx.start[mid] <= s) lo = mid + 1;
    else hi = mid;
  }
  if (lo == t->nvtx_first) return;
  int32_t r = (int32_t)(lo - 1);
  /* walk up to the innermost range that contains the call */
  for (int guard = 0; r >= 0 && guard < 4096; guard++) {
    if ((uint32_t)r >= ix->nvtx.n) return;
    if (ix->nvtx.start[r] <= s && ix->nvtx.end[r] >= e) break;
    r = ix->nvtx.parent[r];
  }
  if (r < 0) return;
  /* outermost first */
  int32_t chain[64];
  int n = 0;
  for (int32_t q = r; q >= 0 && n < 64 && (uint32_t)q < ix->nvtx.n; q = ix->nvtx.parent[q]) chain[n++] = q;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  for (int k = n - 1; k >= 0; k--) {
    if (k != n - 1) nsys_strbuf_puts(&b, " > ");
    nsys_strbuf_puts(&b, nsys_strtab_get(&ix->strings, ix->nvtx.name[chain[k]]));
  }
  /* keep the innermost end when too long */
  if (b.len + 1 > cap) {
    size_t skip = b.len + 1 - cap + 4;
    while (skip < b.len && ((unsigned char)b.data[skip] & 0xC0) == 0x80) skip++;
    snprintf(out, cap, "\xE2\x80\xA6%s", b.data + (skip < b.len ? skip : b.len));
  } else {
    memcpy(out, b.data ? b.data : "", b.len + 1);
  }
  nsys_strbuf_free(&b);
}

static int nsys__cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Percentile q of a group's durations (ops sorted by duration): linear
 * interpolation between the closest ranks, rounded to the ns; the one
 * definition top_kernels also uses (docs/analyses.md, "Percentiles"). */
static int64_t nsys__percentile(const nsys_index *ix, const uint32_t *ops, uint32_t n, double q) {
  double pos = q * (double)(n - 1);
  uint32_t i = (uint32_t)floor(pos);
  if (i + 1 >= n) return nsys_op_dur(ix, ops[n - 1]);
  int64_t a = nsys_op_dur(ix, ops[i]), b = nsys_op_dur(ix, ops[i + 1]);
  return (int64_t)llround((double)a + (pos - (double)i) * (double)(b - a));
}

static void nsys__compute(const nsys__entry *e, nsys__grouping *g, const nsys_index *ix, nsys_kstats_key key,
                          uint32_t id, nsys_kstats *st) {
  memset(st, 0, sizeof *st);
  uint32_t a = g->off[id], b = g->off[id + 1], n = b - a;
  const uint32_t *ops = g->by_dur[id];
  st->count = n;
  st->kind = ix->ops.kind[ops[0]];
  st->min_ns = nsys_op_dur(ix, ops[0]);
  st->max_ns = nsys_op_dur(ix, ops[n - 1]);
  st->median_ns = nsys__percentile(ix, ops, n, 0.50);
  st->p95_ns = nsys__percentile(ix, ops, n, 0.95);
  st->median_op = ops[(n + 1) / 2 - 1]; /* an instance at the median: nearest rank, ceil(0.50 n) */
  st->longest_op = ops[n - 1];
  st->total_ns = g->totals[id];
  st->avg_ns = (double)st->total_ns / n;
  st->pct_gpu_time = e->sum_all > 0 ? 100.0 * (double)st->total_ns / (double)e->sum_all : 0;
  int64_t kind_sum = st->kind < 3 ? e->sum_kind[st->kind] : 0;
  st->pct_kind_time = kind_sum > 0 ? 100.0 * (double)st->total_ns / (double)kind_sum : 0;
  /* rank among the names of the same op kind (kernels among kernels) */
  uint32_t rank = 1, groups = 0;
  for (uint32_t k = 0; k < g->n_names; k++) {
    if (g->off[k + 1] == g->off[k] || g->kind[k] != st->kind) continue;
    groups++;
    if (g->totals[k] > st->total_ns || (g->totals[k] == st->total_ns && k < id)) rank++;
  }
  st->rank = rank;
  st->n_groups = groups;
  /* tracks (the first NSYS_KSTATS_MAX_STREAMS met in duration order) and
   * first op: a sequential pass over the group in op order counts them; only
   * a name on more tracks than are kept walks the duration order to pick
   * which */
  uint8_t *seen = nsys_xcalloc(ix->n_tracks ? ix->n_tracks : 1, 1);
  st->first_op = g->ops[a]; /* the group is in op order */
  const uint32_t *trk = g->trk + a;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t tr = trk[i];
    if (tr < ix->n_tracks && !seen[tr]) {
      seen[tr] = 1;
      if (st->n_tracks < NSYS_KSTATS_MAX_STREAMS) st->tracks[st->n_tracks] = tr;
      st->n_tracks++;
    }
  }
  if (st->n_tracks > NSYS_KSTATS_MAX_STREAMS) {
    memset(seen, 0, ix->n_tracks ? ix->n_tracks : 1);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n && kept < NSYS_KSTATS_MAX_STREAMS; i++) {
      uint32_t tr = ix->ops.track[ops[i]];
      if (tr < ix->n_tracks && !seen[tr]) seen[tr] = 1, st->tracks[kept++] = tr;
    }
  }
  free(seen);
  if (st->n_tracks > 1) {
    uint32_t m = NSYS_MIN(st->n_tracks, (uint32_t)NSYS_KSTATS_MAX_STREAMS);
    qsort(st->tracks, m, sizeof st->tracks[0], nsys__cmp_u32);
  }
  /* demangled variants sharing a short name */
  if (key == NSYS_KSTATS_BY_NAME) {
    const uint32_t *aux = g->aux + a;
    uint32_t mark = id + 1;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t f = aux[i] < g->n_names ? aux[i] : g->n_names;
      if (g->stamp[f] != mark) {
        g->stamp[f] = mark;
        st->n_variants++;
      }
    }
  } else {
    st->n_variants = 1;
  }
  /* NVTX placement of evenly spaced samples (over the duration order) */
  uint32_t samples = NSYS_MIN(n, (uint32_t)NSYS__NVTX_SAMPLES);
  nsys_kstats_nvtx buckets[16];
  int nb = 0;
  char path[512];
  for (uint32_t k = 0; k < samples; k++) {
    uint32_t op = ops[(uint64_t)k * n / samples];
    nsys_kstats_nvtx_path(ix, op, path, sizeof path);
    st->nvtx_sampled++;
    if (!path[0]) continue;
    st->nvtx_attributed++;
    int j = 0;
    while (j < nb && strcmp(buckets[j].path, path) != 0) j++;
    if (j == nb) {
      if (nb == 16) continue;
      snprintf(buckets[nb].path, sizeof buckets[nb].path, "%s", path);
      buckets[nb].count = 0;
      nb++;
    }
    buckets[j].count++;
  }
  /* most frequent first (stable on ties: first seen) */
  for (int i = 1; i < nb; i++) {
    nsys_kstats_nvtx tmp = buckets[i];
    int j = i - 1;
    while (j >= 0 && buckets[j].count < tmp.count) {
      buckets[j + 1] = buckets[j];
      j--;
    }
    buckets[j + 1] = tmp;
  }
  st->n_nvtx = NSYS_MIN(nb, NSYS_KSTATS_MAX_NVTX);
  memcpy(st->nvtx, buckets, (size_t)st->n_nvtx * sizeof buckets[0]);
}

/* The profile's grouping by `key`, built if needed, with nsys__mu held, and in *has_name whether
 * name_id has ops in it; NULL (the mutex not held) for an empty index or a name beyond its strings,
 * and when the build was cancelled (*was_cancelled set, nothing kept). */
static nsys__grouping *nsys__grouping_locked(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key,
                                             uint32_t name_id, bool (*cancelled)(void *), void *cancel_ctx,
                                             bool *was_cancelled, nsys__entry **entry, bool *has_name) {
  if (was_cancelled) *was_cancelled = false;
  if (!ix || ix->ops.n == 0 || name_id >= ix->strings.count) return NULL;
  pthread_mutex_lock(&nsys__mu);
  nsys__entry *e = nsys__entry_for(p, ix);
  nsys__grouping *g = &e->g[key == NSYS_KSTATS_BY_FULL_NAME ? 1 : 0];
  if (!g->built && !nsys__build(g, ix, key, cancelled, cancel_ctx)) {
    nsys__grouping_free(g);
    pthread_mutex_unlock(&nsys__mu);
    if (was_cancelled) *was_cancelled = true;
    return NULL;
  }
  *entry = e;
  *has_name = name_id < g->n_names && g->off[name_id + 1] > g->off[name_id];
  return g;
}

bool nsys_kstats_get(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                     nsys_kstats *out, bool (*cancelled)(void *), void *cancel_ctx, bool *was_cancelled) {
  nsys__entry *e;
  bool ok;
  nsys__grouping *g = nsys__grouping_locked(p, ix, key, name_id, cancelled, cancel_ctx, was_cancelled, &e, &ok);
  if (!g) return false;
  if (ok && !g->stats[name_id] && !nsys__sort_group(g, ix, name_id, cancelled, cancel_ctx)) {
    pthread_mutex_unlock(&nsys__mu);
    if (was_cancelled) *was_cancelled = true;
    return false;
  }
  if (ok) {
    if (!g->stats[name_id]) {
      g->stats[name_id] = nsys_xmalloc(sizeof(nsys_kstats));
      nsys__compute(e, g, ix, key, name_id, g->stats[name_id]);
    }
    *out = *g->stats[name_id];
  }
  pthread_mutex_unlock(&nsys__mu);
  return ok;
}

bool nsys_kstats_brief_get(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                           nsys_kstats_brief *out, bool (*cancelled)(void *), void *cancel_ctx, bool *was_cancelled) {
  nsys__entry *e;
  bool ok;
  nsys__grouping *g = nsys__grouping_locked(p, ix, key, name_id, cancelled, cancel_ctx, was_cancelled, &e, &ok);
  if (!g) return false;
  if (ok)
    *out = (nsys_kstats_brief){.count = g->off[name_id + 1] - g->off[name_id],
                               .total_ns = g->totals[name_id],
                               .kind = g->kind[name_id],
                               .first_op = g->first[name_id]};
  pthread_mutex_unlock(&nsys__mu);
  return ok;
}

/* A copy of group name_id's op ids, in duration order (the order made if
 * needed) or in op order (the group as kept). */
static uint32_t *nsys__ops_copy(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                                uint32_t *n, bool by_duration) {
  *n = 0;
  if (!ix || ix->ops.n == 0 || name_id >= ix->strings.count) return NULL;
  int k = key == NSYS_KSTATS_BY_FULL_NAME ? 1 : 0;
  pthread_mutex_lock(&nsys__mu);
  nsys__entry *e = nsys__entry_for(p, ix);
  nsys__grouping *g = &e->g[k];
  uint32_t *out = NULL;
  if ((g->built || nsys__build(g, ix, key, NULL, NULL)) && name_id < g->n_names) {
    if (by_duration) nsys__sort_group(g, ix, name_id, NULL, NULL); /* not cancellable: always made */
    *n = g->off[name_id + 1] - g->off[name_id];
    out = nsys_xmalloc((size_t)(*n ? *n : 1) * sizeof *out);
    memcpy(out, by_duration ? g->by_dur[name_id] : g->ops + g->off[name_id], (size_t)*n * sizeof *out);
  }
  pthread_mutex_unlock(&nsys__mu);
  return out;
}

uint32_t *nsys_kstats_ops(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                          uint32_t *n) {
  return nsys__ops_copy(p, ix, key, name_id, n, true);
}

uint32_t *nsys_kstats_ops_by_id(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, uint32_t name_id,
                                uint32_t *n) {
  return nsys__ops_copy(p, ix, key, name_id, n, false);
}

void nsys_kstats_totals(const nsys_profile *p, const nsys_index *ix, int64_t *all_ns, int64_t *kernel_ns) {
  pthread_mutex_lock(&nsys__mu);
  nsys__entry *e = nsys__entry_for(p, ix);
  if (all_ns) *all_ns = e->sum_all;
  if (kernel_ns) *kernel_ns = e->sum_kind[NSYS_OP_KERNEL];
  pthread_mutex_unlock(&nsys__mu);
}

uint32_t nsys_kstats_top(const nsys_profile *p, const nsys_index *ix, nsys_kstats_key key, int kind, uint32_t *ids,
                         uint32_t max) {
  if (!ix || ix->ops.n == 0 || max == 0) return 0;
  int k = key == NSYS_KSTATS_BY_FULL_NAME ? 1 : 0;
  pthread_mutex_lock(&nsys__mu);
  nsys__entry *e = nsys__entry_for(p, ix);
  nsys__grouping *g = &e->g[k];
  if (!g->built && !nsys__build(g, ix, key, NULL, NULL)) {
    pthread_mutex_unlock(&nsys__mu);
    return 0;
  }
  uint32_t n = 0;
  for (uint32_t id = 0; id < g->n_names; id++) {
    if (g->off[id + 1] == g->off[id]) continue;
    if (kind >= 0 && g->kind[id] != kind) continue;
    int64_t t = g->totals[id];
    /* insertion into the descending top list */
    if (n == max && g->totals[ids[n - 1]] >= t) continue;
    uint32_t pos = n < max ? n++ : max - 1;
    while (pos > 0 && g->totals[ids[pos - 1]] < t) {
      ids[pos] = ids[pos - 1];
      pos--;
    }
    ids[pos] = id;
  }
  pthread_mutex_unlock(&nsys__mu);
  return n;
}
