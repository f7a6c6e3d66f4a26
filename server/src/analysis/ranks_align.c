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

/* A collective member's end and node. */
typedef struct {
  uint32_t node;
  int64_t end;
} nsys__node_end;

static int nsys__cmp_node_end(const void *a, const void *b) {
  const nsys__node_end *x = a, *y = b;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

void nsys_rankset_align(nsys_rankset *s) {
  int64_t min_utc = INT64_MAX;
  s->aligned = s->n_sums > 0;
  for (uint32_t i = 0; i < s->n_sums; i++) {
    if (s->sums[i].utc_epoch_ns <= 0) s->aligned = false;
    else if (s->sums[i].utc_epoch_ns < min_utc) min_utc = s->sums[i].utc_epoch_ns;
  }
  s->file_offset = nsys_xcalloc((size_t)s->n_files + 1, sizeof *s->file_offset);
  for (uint32_t f = 0; f < s->n_files; f++) {
    const nsys_rank_summary *sum = &s->sums[s->file_sum[f]];
    s->file_offset[f] = s->aligned ? (sum->utc_clock ? 0 : sum->utc_epoch_ns) - min_utc : 0;
  }
  for (uint32_t r = 0; r < s->n_ranks; r++) s->ranks[r].offset = s->file_offset[s->ranks[r].file];
  s->clock_threshold = NSYS_CLOCK_THRESHOLD_NS;
  s->clock_method = s->aligned ? "session" : "none";
  uint32_t ref = s->n_ranks ? s->ranks[0].node : 0;
  if (s->aligned && s->n_nodes > 1 && s->n_colls) {
    /* one pass over the collectives: each member's end grouped by node (sorted
     * by (node, end)), each node's median end against the reference node's */
    nsys__node_end *m = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *m);
    int64_t **diffs = nsys_xcalloc(s->n_nodes, sizeof *diffs);
    uint32_t *nd_n = nsys_xcalloc(s->n_nodes, sizeof *nd_n);
    int64_t *ends = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *ends);
    for (uint32_t c = 0; c < s->n_colls; c++) {
      uint32_t n = 0;
      for (uint32_t r = 0; r < s->n_ranks; r++)
        if (s->colls[c].member[r] != UINT32_MAX) m[n++] = (nsys__node_end){s->ranks[r].node, nsys_set_coll_end(s, &s->colls[c], r)};
      qsort(m, n, sizeof *m, nsys__cmp_node_end);
      int64_t ref_med = 0;
      bool has_ref = false;
      for (uint32_t i = 0; i < n;) {
        uint32_t j = i, k = 0;
        while (j < n && m[j].node == m[i].node) ends[k++] = m[j++].end;
        int64_t med = nsys_rank_median(ends, k); /* already sorted: the sort is by (node, end) */
        if (m[i].node == ref) {
          ref_med = med;
          has_ref = true;
        }
        m[i].end = med; /* the group's median, kept at its first slot */
        i = j;
      }
      if (!has_ref) continue;
      for (uint32_t i = 0; i < n; i++) {
        if (i && m[i].node == m[i - 1].node) continue;
        uint32_t node = m[i].node;
        if (node == ref) continue;
        if (!diffs[node]) diffs[node] = nsys_xmalloc(((size_t)s->n_colls + 1) * sizeof **diffs);
        diffs[node][nd_n[node]++] = ref_med - m[i].end;
      }
    }
    for (uint32_t nd = 0; nd < s->n_nodes; nd++) {
      nsys_set_node *node = &s->nodes[nd];
      node->samples = nd_n[nd];
      if (!nd_n[nd]) continue;
      node->disagreement = nsys_rank_median(diffs[nd], nd_n[nd]);
      if (node->disagreement > NSYS_CLOCK_THRESHOLD_NS || node->disagreement < -NSYS_CLOCK_THRESHOLD_NS) {
        node->correction = node->disagreement;
        s->clock_method = "session+nccl";
      }
    }
    for (uint32_t nd = 0; nd < s->n_nodes; nd++) free(diffs[nd]);
    free(diffs);
    free(nd_n);
    free(ends);
    free(m);
    for (uint32_t r = 0; r < s->n_ranks; r++) s->ranks[r].offset += s->nodes[s->ranks[r].node].correction;
    for (uint32_t f = 0; f < s->n_files; f++) s->file_offset[f] += s->nodes[s->file_node[f]].correction;
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
