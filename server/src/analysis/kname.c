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

const nsys_kstats *nsys_kname_whole(const nsys_kname *k, const nsys_index *ix, uint32_t j) {
  pthread_mutex_lock(&nsys__whole_mu);
  if (!k->whole_done[j]) {
    uint32_t lo = k->poff[k->kfirst[j]], hi = k->poff[k->kfirst[j + 1]];
    int64_t *d = nsys_xmalloc(((size_t)(hi - lo) + 1) * sizeof *d);
    for (uint32_t x = lo; x < hi; x++) d[x - lo] = nsys_op_dur(ix, k->op[x]);
    nsys_sort_i64(d, hi - lo);
    nsys_kstats_sorted(d, hi - lo, (int64_t)(k->psum[hi] - k->psum[lo]), &k->whole[j]);
    free(d);
    k->whole_done[j] = 1;
  }
  pthread_mutex_unlock(&nsys__whole_mu);
  return &k->whole[j];
}
