/* Per-name statistics and op lists (kernel_stats.c) against brute force on
 * adversarial random indexes: durations with many ties, zero and negative
 * (end < start) ones, durations past 2^42 ns (the pair sort instead of the
 * radix keys), names on more tracks than the statistics keep (which ones are
 * kept depends on the duration order), demangled variants, and every order
 * of asking (op lists before or after the statistics). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/strtab.h"
#include "explain/kernel_stats.h"
#include "index/index.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

#define NAMES 5

static uint32_t name_ids[NAMES], full_ids[NAMES][3];

static nsys_index *build(uint32_t n, uint32_t n_tracks, int shape) {
  nsys_index *ix = calloc(1, sizeof *ix);
  nsys_strtab_init(&ix->strings);
  char buf[32];
  for (int k = 0; k < NAMES; k++) {
    int len = snprintf(buf, sizeof buf, "kern_%d", k);
    name_ids[k] = nsys_strtab_intern(&ix->strings, buf, (size_t)len);
    for (int v = 0; v < 3; v++) {
      len = snprintf(buf, sizeof buf, "void kern_%d<%d>()", k, v);
      full_ids[k][v] = nsys_strtab_intern(&ix->strings, buf, (size_t)len);
    }
  }
  ix->ops.n = n;
  ix->ops.start = calloc(n, sizeof(int64_t));
  ix->ops.end = calloc(n, sizeof(int64_t));
  ix->ops.name = calloc(n, sizeof(uint32_t));
  ix->ops.full_name = calloc(n, sizeof(uint32_t));
  ix->ops.track = calloc(n, sizeof(uint32_t));
  ix->ops.api = calloc(n, sizeof(int32_t));
  ix->ops.rowid = calloc(n, sizeof(int64_t));
  ix->ops.kind = calloc(n, 1);
  ix->n_tracks = n_tracks;
  ix->tracks = calloc(n_tracks, sizeof *ix->tracks);
  uint32_t per = n / n_tracks;
  for (uint32_t t = 0; t < n_tracks; t++) {
    uint32_t first = t * per, count = t + 1 == n_tracks ? n - first : per;
    ix->tracks[t] = (nsys_gpu_track){(int32_t)(t % 2), (int64_t)t + 7, 1, first, count, NSYS_STREAM_COMPUTE, 0};
    for (uint32_t i = first; i < first + count; i++) ix->ops.track[i] = t;
  }
  for (uint32_t i = 0; i < n; i++) {
    int k = (int)(next() % NAMES);
    int64_t d;
    switch (shape) {
    case 0: d = (int64_t)(next() % 4); break;                                                   /* ties */
    case 1: d = (int64_t)(next() % 3000) - 5; break;                                            /* some < 0 */
    case 2: d = next() % 5 == 0 ? ((int64_t)1 << 50) + (int64_t)(next() % 3) : (int64_t)(next() % 9); break;
    default: d = (int64_t)(next() % ((uint64_t)1 << 36)); break;
    }
    ix->ops.start[i] = 1000 * (int64_t)i;
    ix->ops.end[i] = ix->ops.start[i] + d;
    ix->ops.name[i] = name_ids[k];
    ix->ops.full_name[i] = full_ids[k][next() % (k == 0 ? 1 : 3)];
    ix->ops.api[i] = -1;
    ix->ops.kind[i] = next() % 7 == 0 ? NSYS_OP_MEMCPY : NSYS_OP_KERNEL;
  }
  ix->span_start = 0;
  ix->span_end = 1000 * (int64_t)n;
  return ix;
}

static void release(nsys_index *ix) {
  free(ix->ops.start), free(ix->ops.end), free(ix->ops.name), free(ix->ops.full_name), free(ix->ops.track);
  free(ix->ops.api), free(ix->ops.rowid), free(ix->ops.kind), free(ix->tracks);
  nsys_strtab_free(&ix->strings);
  free(ix);
}

static const nsys_index *cmp_ix;
static int64_t dur0(uint32_t op) {
  int64_t d = cmp_ix->ops.end[op] - cmp_ix->ops.start[op];
  return d < 0 ? 0 : d;
}
static int by_dur_id(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int64_t dx = dur0(x), dy = dur0(y);
  if (dx != dy) return dx < dy ? -1 : 1;
  return x < y ? -1 : x > y;
}
static int by_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void check_name(const nsys_index *ix, nsys_kstats_key key, uint32_t id, int order) {
  /* brute force: the name's ops in op order, then by (duration, op id) */
  const uint32_t *col = key == NSYS_KSTATS_BY_FULL_NAME ? ix->ops.full_name : ix->ops.name;
  uint32_t *want = malloc((ix->ops.n + 1) * sizeof *want), m = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++)
    if (col[i] == id) want[m++] = i;
  uint32_t n_id = 0, *by_id = NULL, n_dur = 0, *by_dur = NULL;
  nsys_kstats st;
  bool got = false;
  if (order == 0) by_id = nsys_kstats_ops_by_id(NULL, ix, key, id, &n_id); /* before the group is sorted */
  got = nsys_kstats_get(NULL, ix, key, id, &st, NULL, NULL, NULL);
  if (order != 0) by_id = nsys_kstats_ops_by_id(NULL, ix, key, id, &n_id); /* after */
  by_dur = nsys_kstats_ops(NULL, ix, key, id, &n_dur);
  CHECK_EQ(got, m > 0);
  CHECK_EQ(n_id, m);
  CHECK_EQ(n_dur, m);
  for (uint32_t i = 0; by_id && i < m && i < n_id; i++) CHECK_EQ(by_id[i], want[i]);
  cmp_ix = ix;
  qsort(want, m, sizeof *want, by_dur_id);
  for (uint32_t i = 0; by_dur && i < m && i < n_dur; i++) CHECK_EQ(by_dur[i], want[i]);
  if (got && m > 0) {
    CHECK_EQ(st.count, m);
    CHECK_EQ(st.longest_op, want[m - 1]);
    CHECK_EQ(st.median_op, want[(m + 1) / 2 - 1]);
    CHECK_EQ(st.min_ns, ix->ops.end[want[0]] - ix->ops.start[want[0]]);
    CHECK_EQ(st.kind, ix->ops.kind[want[0]]);
    uint32_t first = want[0];
    for (uint32_t i = 0; i < m; i++) first = want[i] < first ? want[i] : first;
    CHECK_EQ(st.first_op, first);
    /* tracks: how many, and the first NSYS_KSTATS_MAX_STREAMS met in duration order, ascending */
    uint8_t seen[64] = {0};
    uint32_t kept[NSYS_KSTATS_MAX_STREAMS], n_kept = 0, n_tr = 0;
    for (uint32_t i = 0; i < m; i++) {
      uint32_t t = ix->ops.track[want[i]];
      if (seen[t]) continue;
      seen[t] = 1;
      if (n_kept < NSYS_KSTATS_MAX_STREAMS) kept[n_kept++] = t;
      n_tr++;
    }
    qsort(kept, n_kept, sizeof *kept, by_u32);
    CHECK_EQ(st.n_tracks, n_tr);
    for (uint32_t i = 0; i < n_kept; i++) CHECK_EQ(st.tracks[i], kept[i]);
    /* variants: distinct full names */
    uint32_t variants = 0;
    if (key == NSYS_KSTATS_BY_NAME) {
      uint32_t seen_f[NAMES * 3 + 8] = {0};
      for (uint32_t i = 0; i < m; i++)
        for (uint32_t v = 0; v < NAMES * 3 + 8; v++) {
          if (seen_f[v] == ix->ops.full_name[want[i]] + 1) break;
          if (!seen_f[v]) {
            seen_f[v] = ix->ops.full_name[want[i]] + 1;
            variants++;
            break;
          }
        }
    } else {
      variants = 1;
    }
    CHECK_EQ(st.n_variants, variants);
  }
  free(want);
  free(by_id);
  free(by_dur);
}

int main(void) {
  static const uint32_t sizes[] = {1, 7, 300, 5000};
  static const uint32_t tracks[] = {1, 3, 20, 40};
  for (int shape = 0; shape < 4; shape++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (size_t t = 0; t < sizeof tracks / sizeof *tracks; t++) {
        if (tracks[t] > sizes[s]) continue;
        for (int order = 0; order < 2; order++) {
          nsys_kstats_cache_clear();
          nsys_index *ix = build(sizes[s], tracks[t], shape);
          for (int k = 0; k < NAMES; k++) {
            check_name(ix, NSYS_KSTATS_BY_NAME, name_ids[k], order);
            for (int v = 0; v < 3; v++) check_name(ix, NSYS_KSTATS_BY_FULL_NAME, full_ids[k][v], order);
          }
          nsys_kstats_cache_clear();
          release(ix);
        }
      }
  return nsys_check_done("explain_kstats_brute");
}
