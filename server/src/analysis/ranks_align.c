/* Rank sets: one clock. Every file is first placed by its session start
 * (TARGET_INFO_SESSION_START_TIME.utcEpochNs: set time = UTC - the earliest
 * session start). Nodes (hosts) have clocks of their own; NCCL collectives
 * end together on every rank, so the median over shared collectives of
 * (the reference node's median end - this node's median end) measures how
 * far a node's clock is off. A node is corrected by it when it exceeds
 * NSYS_CLOCK_THRESHOLD_NS. The reference node is the node of set rank 0. */
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "common/util.h"

#define NSYS_CLOCK_THRESHOLD_NS 10000

static int64_t nsys__median(int64_t *v, uint32_t n) {
  nsys_sort_i64(v, n);
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

void nsys_rankset_align(nsys_rankset *s) {
  int64_t min_utc = INT64_MAX;
  s->aligned = s->n_sums > 0;
  for (uint32_t i = 0; i < s->n_sums; i++) {
    if (s->sums[i].utc_epoch_ns <= 0) s->aligned = false;
    else if (s->sums[i].utc_epoch_ns < min_utc) min_utc = s->sums[i].utc_epoch_ns;
  }
  for (uint32_t r = 0; r < s->n_ranks; r++) {
    const nsys_rank_summary *sum = &s->sums[s->ranks[r].summary];
    s->ranks[r].offset = s->aligned ? (sum->utc_clock ? 0 : sum->utc_epoch_ns) - min_utc : 0;
  }
  s->clock_threshold = NSYS_CLOCK_THRESHOLD_NS;
  s->clock_method = s->aligned ? "session" : "none";
  uint32_t ref = s->n_ranks ? s->ranks[0].node : 0;
  if (s->aligned && s->n_nodes > 1 && s->n_colls) {
    int64_t *a = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *a);
    int64_t *b = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *b);
    int64_t *diffs = nsys_xmalloc(((size_t)s->n_colls + 1) * sizeof *diffs);
    for (uint32_t nd = 0; nd < s->n_nodes; nd++) {
      if (nd == ref) continue;
      uint32_t nd_n = 0;
      for (uint32_t c = 0; c < s->n_colls; c++) {
        uint32_t na = 0, nb = 0;
        for (uint32_t r = 0; r < s->n_ranks; r++) {
          if (s->colls[c].member[r] == UINT32_MAX) continue;
          uint32_t node = s->ranks[r].node;
          if (node == ref) a[na++] = nsys_set_coll_end(s, &s->colls[c], r);
          else if (node == nd) b[nb++] = nsys_set_coll_end(s, &s->colls[c], r);
        }
        if (na && nb) diffs[nd_n++] = nsys__median(a, na) - nsys__median(b, nb);
      }
      nsys_set_node *node = &s->nodes[nd];
      node->samples = nd_n;
      if (!nd_n) continue;
      node->disagreement = nsys__median(diffs, nd_n);
      if (node->disagreement > NSYS_CLOCK_THRESHOLD_NS || node->disagreement < -NSYS_CLOCK_THRESHOLD_NS) {
        node->correction = node->disagreement;
        s->clock_method = "session+nccl";
      }
    }
    free(a);
    free(b);
    free(diffs);
    for (uint32_t r = 0; r < s->n_ranks; r++) s->ranks[r].offset += s->nodes[s->ranks[r].node].correction;
  }
  s->window_start = INT64_MAX;
  s->window_end = INT64_MIN;
  for (uint32_t r = 0; r < s->n_ranks; r++) {
    const nsys_rank_summary *sum = &s->sums[s->ranks[r].summary];
    if (sum->span_end <= sum->span_start) continue;
    s->window_start = NSYS_MIN(s->window_start, sum->span_start + s->ranks[r].offset);
    s->window_end = NSYS_MAX(s->window_end, sum->span_end + s->ranks[r].offset);
  }
  if (s->window_start > s->window_end) s->window_start = s->window_end = 0;
}
