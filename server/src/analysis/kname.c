/* See kname.h. */
#include "analysis/kname.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/window.h"
#include "common/util.h"

void nsys_kstats_sorted(const int64_t *d, uint32_t cn, int64_t total, nsys_kstats *out) {
  double mean = (double)total / cn, var = 0;
  for (uint32_t j = 0; j < cn; j++) var += ((double)d[j] - mean) * ((double)d[j] - mean);
  out->min = d[0];
  out->max = d[cn - 1];
  out->avg = round(mean);
  out->median = round(nsys_percentile_sorted(d, cn, 0.5));
  out->p95 = round(nsys_percentile_sorted(d, cn, 0.95));
  /* the sample standard deviation (n - 1), as `nsys stats` (cuda_gpu_kern_sum) prints it */
  out->stddev = cn > 1 ? round(sqrt(var / (cn - 1))) : 0;
}

static nsys_kname *nsys__build(const nsys_index *ix, bool demangled) {
  const uint32_t *nm = demangled ? ix->ops.full_name : ix->ops.name;
  uint32_t ns = ix->strings.count;
  nsys_kname *k = nsys_xcalloc(1, sizeof *k);
  uint32_t *cnt = nsys_xcalloc((size_t)ns + 2, sizeof *cnt);
  uint64_t nk = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++)
    if (ix->ops.kind[i] == NSYS_OP_KERNEL) {
      cnt[(nm[i] < ns ? nm[i] : ns) + 1]++;
      nk++;
    }
  /* keys: the names that have kernels, ascending; cnt becomes each name's first position */
  for (uint32_t j = 0; j <= ns; j++)
    if (cnt[j + 1]) k->n_keys++;
  k->key = nsys_xmalloc(((size_t)k->n_keys + 1) * sizeof *k->key);
  uint32_t nkey = 0;
  for (uint32_t j = 0; j <= ns; j++) {
    if (cnt[j + 1]) k->key[nkey++] = j;
    cnt[j + 1] += cnt[j];
  }
  k->op = nsys_xmalloc((nk + 1) * sizeof *k->op);
  for (uint32_t i = 0; i < ix->ops.n; i++) /* stable: each name's kernels in index (track, start) order */
    if (ix->ops.kind[i] == NSYS_OP_KERNEL) k->op[cnt[nm[i] < ns ? nm[i] : ns]++] = i;
  /* pairs: runs of one track within a name's kernels; cnt[j] is now name j's end */
  k->psum = nsys_xmalloc((nk + 1) * sizeof *k->psum);
  k->kfirst = nsys_xmalloc(((size_t)k->n_keys + 1) * sizeof *k->kfirst);
  size_t pcap = (size_t)k->n_keys + 16;
  k->ptrack = nsys_xmalloc(pcap * sizeof *k->ptrack);
  k->poff = nsys_xmalloc((pcap + 1) * sizeof *k->poff);
  uint64_t s = 0, pos = 0;
  for (uint32_t j = 0; j < k->n_keys; j++) {
    k->kfirst[j] = k->n_pairs;
    uint64_t end = cnt[k->key[j]];
    for (; pos < end; pos++) {
      uint32_t i = k->op[pos];
      if (k->n_pairs == k->kfirst[j] || ix->ops.track[i] != k->ptrack[k->n_pairs - 1]) {
        if (k->n_pairs == pcap) {
          pcap *= 2;
          k->ptrack = nsys_xrealloc(k->ptrack, pcap * sizeof *k->ptrack);
          k->poff = nsys_xrealloc(k->poff, (pcap + 1) * sizeof *k->poff);
        }
        k->ptrack[k->n_pairs] = ix->ops.track[i];
        k->poff[k->n_pairs++] = (uint32_t)pos;
      }
      k->psum[pos] = s;
      s += (uint64_t)nsys_op_dur(ix, i);
    }
  }
  k->psum[nk] = s;
  k->kfirst[k->n_keys] = k->n_pairs;
  k->poff[k->n_pairs] = (uint32_t)nk;
  k->whole_done = nsys_xcalloc((size_t)k->n_keys + 1, 1);
  k->whole = nsys_xcalloc((size_t)k->n_keys + 1, sizeof *k->whole);
  k->ranked = nsys_xcalloc((size_t)k->n_keys + 1, 1);
  k->rank = nsys_xmalloc((nk + 1) * sizeof *k->rank); /* written a name at a time (nsys__whole_fill) */
  k->soff = nsys_xmalloc((nk + 1) * sizeof *k->soff);
  free(cnt);
  return k;
}

static void *nsys__build_short(nsys_actx *c) { return nsys__build(c->ix, false); }
static void *nsys__build_demangled(nsys_actx *c) { return nsys__build(c->ix, true); }

const nsys_kname *nsys_actx_kname(nsys_actx *c, bool demangled) {
  if (!nsys_actx_winidx(c)) return NULL; /* off, or not the layout pairs rely on (start order per track) */
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->kname[demangled], &k->kname_building[demangled],
                         demangled ? nsys__build_demangled : nsys__build_short);
}

void nsys_kname_free(nsys_kname *k) {
  if (!k) return;
  free(k->key);
  free(k->kfirst);
  free(k->ptrack);
  free(k->poff);
  free(k->op);
  free(k->psum);
  free(k->whole_done);
  free(k->whole);
  free(k->ranked);
  free(k->rank);
  free(k->soff);
  free(k);
}

/* First position of [lo, hi) whose kernel starts at or after a. */
static uint32_t nsys__lower(const nsys_kname *k, const nsys_index *ix, uint32_t lo, uint32_t hi, int64_t a) {
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (ix->ops.start[k->op[m]] < a) lo = m + 1;
    else hi = m;
  }
  return lo;
}

void nsys_kname_pair_range(const nsys_kname *k, const nsys_index *ix, uint32_t p, int64_t a, int64_t b, uint32_t *lo,
                           uint32_t *hi) {
  *lo = nsys__lower(k, ix, k->poff[p], k->poff[p + 1], a);
  *hi = b <= a ? *lo : nsys__lower(k, ix, *lo, k->poff[p + 1], b);
}

/* The kname is shared by concurrent requests: its whole-name statistics are
 * filled under this lock (a name's once). */
static pthread_mutex_t nsys__whole_mu = PTHREAD_MUTEX_INITIALIZER;

/* Key j's whole statistics, and its ranks when they fit (kname.h): one sort
 * of 63-bit keys (duration - min) << ibits | local position, which orders
 * by duration, ties by position. Under nsys__whole_mu. */
static void nsys__whole_fill(const nsys_kname *k, const nsys_index *ix, uint32_t j) {
  uint32_t lo = k->poff[k->kfirst[j]], hi = k->poff[k->kfirst[j + 1]], n = hi - lo;
  int64_t *d = nsys_xmalloc(((size_t)n + 1) * sizeof *d);
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  for (uint32_t x = lo; x < hi; x++) {
    int64_t v = d[x - lo] = nsys_op_dur(ix, k->op[x]);
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  uint64_t range = (uint64_t)mx - (uint64_t)mn;
  unsigned rbits = range ? 64u - (unsigned)__builtin_clzll(range) : 0;
  unsigned ibits = n > 1 ? 64u - (unsigned)__builtin_clzll((uint64_t)n - 1) : 0;
  if (rbits <= 32 && rbits + ibits <= 63) {
    for (uint32_t i = 0; i < n; i++) d[i] = (int64_t)((((uint64_t)d[i] - (uint64_t)mn) << ibits) | i);
    nsys_sort_i64(d, n);
    uint64_t mask = ((uint64_t)1 << ibits) - 1;
    for (uint32_t r = 0; r < n; r++) {
      uint64_t key = (uint64_t)d[r];
      k->rank[lo + (uint32_t)(key & mask)] = r;
      k->soff[lo + r] = (uint32_t)(key >> ibits);
      d[r] = (int64_t)((uint64_t)mn + (key >> ibits));
    }
    k->ranked[j] = 1;
  } else {
    nsys_sort_i64(d, n);
  }
  nsys_kstats_sorted(d, n, (int64_t)(k->psum[hi] - k->psum[lo]), &k->whole[j]);
  free(d);
  k->whole_done[j] = 1;
}

const nsys_kstats *nsys_kname_whole(const nsys_kname *k, const nsys_index *ix, uint32_t j) {
  pthread_mutex_lock(&nsys__whole_mu);
  if (!k->whole_done[j]) nsys__whole_fill(k, ix, j);
  pthread_mutex_unlock(&nsys__whole_mu);
  return &k->whole[j];
}

/* nsys_percentile_sorted's value from the sorted values at its index i, i + 1 and n - 1. */
static double nsys__pct(uint32_t n, double q, int64_t vi, int64_t vi1, int64_t vlast) {
  double pos = q * (double)(n - 1);
  uint32_t i = (uint32_t)floor(pos);
  if (i + 1 >= n) return (double)vlast;
  double f = pos - i;
  return (double)vi + f * (double)(vi1 - vi);
}

static inline void nsys__mark(uint64_t *bm, const uint32_t *rank, uint32_t from, uint32_t to) {
  for (uint32_t x = from; x < to; x++) bm[rank[x] >> 6] |= (uint64_t)1 << (rank[x] & 63);
}

bool nsys_kname_window_stats(const nsys_kname *k, const nsys_index *ix, uint32_t j, const uint32_t *lo,
                             const uint32_t *hi, uint32_t cn, int64_t total, uint64_t **bm, size_t *bcap,
                             nsys_kstats *out) {
  uint32_t p0 = k->kfirst[j], p1 = k->kfirst[j + 1], base = k->poff[p0], n = k->poff[p1] - base;
  if ((uint64_t)cn * 64 < n) return false; /* a sort of cn values costs less than n / 64 words */
  pthread_mutex_lock(&nsys__whole_mu);
  if (!k->whole_done[j] && (uint64_t)cn * 2 >= n) nsys__whole_fill(k, ix, j); /* at most twice the sort */
  bool ok = k->whole_done[j] && k->ranked[j];
  int64_t mn = k->whole[j].min;
  pthread_mutex_unlock(&nsys__whole_mu);
  if (!ok) return false;
  size_t words = (size_t)n / 64 + 1;
  if (words > *bcap) {
    free(*bm);
    *bm = nsys_xmalloc(words * sizeof **bm);
    *bcap = words;
  }
  uint64_t *b = *bm;
  memset(b, 0, words * sizeof *b);
  /* mark the window's kernels, or the others when fewer (then walk the zeros) */
  bool outside = (uint64_t)cn * 2 > n;
  for (uint32_t p = p0; p < p1; p++) {
    if (!outside) nsys__mark(b, k->rank, lo[p], hi[p]);
    else if (hi[p] <= lo[p]) nsys__mark(b, k->rank, k->poff[p], k->poff[p + 1]);
    else {
      nsys__mark(b, k->rank, k->poff[p], lo[p]);
      nsys__mark(b, k->rank, hi[p], k->poff[p + 1]);
    }
  }
  /* the window's durations ascending, as nsys_kstats_sorted reads its array */
  double mean = (double)total / cn, var = 0;
  uint32_t i50 = (uint32_t)floor(0.5 * (double)(cn - 1)), i95 = (uint32_t)floor(0.95 * (double)(cn - 1)), c = 0;
  int64_t v50 = 0, v50n = 0, v95 = 0, v95n = 0, vmin = 0, v = 0;
  const uint32_t *so = k->soff + base;
  for (size_t w = 0; w < words; w++) {
    uint64_t bits = outside ? ~b[w] : b[w];
    if (w == words - 1) bits &= ((uint64_t)1 << (n & 63)) - 1; /* the ranks past n */
    while (bits) {
      unsigned t = (unsigned)__builtin_ctzll(bits);
      bits &= bits - 1;
      v = (int64_t)((uint64_t)mn + so[w * 64 + t]);
      var += ((double)v - mean) * ((double)v - mean);
      if (!c) vmin = v;
      if (c == i50) v50 = v;
      if (c == i50 + 1) v50n = v;
      if (c == i95) v95 = v;
      if (c == i95 + 1) v95n = v;
      c++;
    }
  }
  out->min = vmin;
  out->max = v;
  out->avg = round(mean);
  out->median = round(nsys__pct(cn, 0.5, v50, v50n, v));
  out->p95 = round(nsys__pct(cn, 0.95, v95, v95n, v));
  out->stddev = cn > 1 ? round(sqrt(var / (cn - 1))) : 0;
  return true;
}
