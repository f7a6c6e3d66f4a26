/* Rank sets: the reduction of per-rank summaries to the set's results. */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"

int64_t nsys_rank_median(int64_t *v, uint32_t n) {
  if (!n) return 0;
  nsys_sort_i64(v, n);
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

bool nsys_rankset_reduce(nsys_task *task, nsys_rank_summary *sums, uint32_t n, nsys_rankset *out) {
  memset(out, 0, sizeof *out);
  out->sums = sums;
  out->n_sums = n;
  out->straggler = -1;
  nsys_rankset_identify(out);
  if (!nsys_rankset_match(task, out)) return false;
  nsys_rankset_align(out);
  nsys_rankset_time(out);
  nsys_rankset_stragglers(out);
  nsys_rankset_nccl(out);
  if (nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task);
  return true;
}

void nsys_rankset_dispose(nsys_rankset *s) {
  for (uint32_t i = 0; i < s->n_sums; i++) nsys_rank_summary_dispose(&s->sums[i]);
  free(s->sums);
  for (uint32_t i = 0; i < s->n_colls; i++) free(s->colls[i].member);
  free(s->colls);
  free(s->files);
  free(s->file_node);
  free(s->file_sum);
  free(s->file_offset);
  free(s->ranks);
  free(s->nodes);
  free((void *)s->types);
  free(s->events);
  free(s->nccl);
  memset(s, 0, sizeof *s);
}
