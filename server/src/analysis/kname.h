/* Kernels grouped by (name, track), for the windowed top_kernels: any
 * window's per-name count and total in O(pairs x log n) instead of a walk
 * over the window's kernels.
 *
 * Per name key (strtab id, or strings.count for "no name"; short names or
 * demangled ones, one index each), its kernels split by track, the tracks in
 * ascending order, each pair's kernels in index order (= start order: a
 * track's ops are sorted by start, window.h) with a prefix sum of their
 * durations over the whole array. The kernels of a name that start in [a, b)
 * on a track are one range of its pair (two binary searches on start), their
 * total a prefix difference (mod 2^64, the same bits as the old sum whenever
 * that did not overflow). Built once per nsys_acache (nsys_win_cached) in
 * O(n): a counting sort by name, stable over the index order. 12 bytes per
 * kernel.
 *
 * A shown name whose window holds all of its kernels answers its duration
 * statistics (min, max, median, p95, stddev) from a whole-name copy computed
 * on first use (its durations sorted once), so a full-range selection sorts
 * nothing. The same sort ranks the name's kernels: each position's rank in
 * its name's ascending durations (ties by position) and the durations in
 * that order (as offsets from the name's minimum), 8 bytes per kernel (80 MB
 * at 10M kernels; a name whose durations span 2^32 ns or more, or whose
 * count and span do not fit one 63-bit sort key, is not ranked). A window
 * holding many of a ranked name's kernels (at least one in 64) marks their
 * ranks in a bitmap (or the ranks of the kernels outside the window, when
 * fewer) and walks it in ascending order: min, max, median, p95 and the
 * stddev (summed in the same ascending order) identical to a sort of the
 * window's durations, in O(N/64 + k) instead of O(k) gather + sort; other
 * windows gather and sort the shown names' durations. */
#ifndef NSYS_ANALYSIS_KNAME_H
#define NSYS_ANALYSIS_KNAME_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/analysis.h"

/* The duration statistics top_kernels prints for one name. */
typedef struct nsys_kstats {
  int64_t min, max;
  double avg, median, p95, stddev; /* rounded as printed */
} nsys_kstats;

/* From cn > 0 durations sorted ascending whose sum is total. */
void nsys_kstats_sorted(const int64_t *d, uint32_t cn, int64_t total, nsys_kstats *out);

typedef struct nsys_kname {
  uint32_t n_keys;   /* name keys that have kernels */
  uint32_t *key;     /* per key: the name id */
  uint32_t *kfirst;  /* per key (n_keys + 1): its first pair */
  uint32_t n_pairs;
  uint32_t *ptrack;  /* per pair: its track */
  uint32_t *poff;    /* per pair (n_pairs + 1): its first position */
  uint32_t *op;      /* per position: the kernel's op index */
  uint64_t *psum;    /* positions + 1: sum of durations before each position */
  /* whole-name statistics, filled on first use under a lock (kname.c) */
  uint8_t *whole_done; /* per key */
  nsys_kstats *whole;  /* per key */
  uint8_t *ranked;     /* per key: rank and soff filled (with whole) */
  uint32_t *rank;      /* per position: its rank within its key's durations ascending (ties by position) */
  uint32_t *soff;      /* per key's first position + rank: that duration - whole.min */
} nsys_kname;

/* The cache's index for short (demangled false) or demangled names, built on
 * first use; NULL when the fast paths are off (NSYS_AI_WINDOW_FAST=0), the
 * index breaks window.h's layout, or the run was cancelled (c->stopped). */
const nsys_kname *nsys_actx_kname(nsys_actx *c, bool demangled);
void nsys_kname_free(nsys_kname *k);

/* Pair p's kernels starting in [a, b): positions [*lo, *hi). */
void nsys_kname_pair_range(const nsys_kname *k, const nsys_index *ix, uint32_t p, int64_t a, int64_t b, uint32_t *lo,
                           uint32_t *hi);

/* Key j's whole-name statistics (its kernels' durations sorted on first use). */
const nsys_kstats *nsys_kname_whole(const nsys_kname *k, const nsys_index *ix, uint32_t j);

/* Key j's duration statistics over the positions [lo[p], hi[p]) of its pairs
 * p (cn of them, cn > 0, durations summing to total), from its ranks when
 * that is cheaper than a sort (above; the ranks built on first use when cn
 * is at least half the name); false (nothing written) otherwise. *bm, *bcap:
 * the caller's scratch bitmap (grown here, freed by the caller). */
bool nsys_kname_window_stats(const nsys_kname *k, const nsys_index *ix, uint32_t j, const uint32_t *lo,
                             const uint32_t *hi, uint32_t cn, int64_t total, uint64_t **bm, size_t *bcap,
                             nsys_kstats *out);

#endif
