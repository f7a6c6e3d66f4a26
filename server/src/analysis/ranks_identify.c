/* Rank sets: who is who. Files (distinct paths), nodes (files of one host
 * share a clock; a file without a host name is a node of its own) and the
 * job's rank of every (file, device): NCCL's payload Rank, else the last
 * number of the file name (one rank per file, all distinct), else set order.
 * A file without GPU ops comes as one summary with device -1: a file of the
 * set (its clock counts), no rank. O(n log n). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "common/util.h"

/* The last run of digits in the file's base name, or -1. */
static int64_t nsys__file_number(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int64_t v = -1;
  for (const char *q = base; *q; q++) {
    if (!isdigit((unsigned char)*q)) continue;
    int64_t x = 0;
    while (isdigit((unsigned char)*q) && x < INT32_MAX / 10) x = x * 10 + (*q++ - '0');
    v = x;
    if (!*q) break;
  }
  return v;
}

static int nsys__cmp_rank(const void *a, const void *b, void *ctx) {
  const nsys_rankset *set = ctx;
  const nsys_set_rank *x = a, *y = b;
  if (x->global_rank != y->global_rank) return x->global_rank < y->global_rank ? -1 : 1;
  if (x->file != y->file) return x->file < y->file ? -1 : 1;
  int32_t dx = set->sums[x->summary].device, dy = set->sums[y->summary].device;
  return (dx > dy) - (dx < dy);
}

void nsys_rankset_identify(nsys_rankset *s) {
  uint32_t n = s->n_sums;
  s->files = nsys_xcalloc((size_t)n + 1, sizeof *s->files);
  s->file_node = nsys_xcalloc((size_t)n + 1, sizeof *s->file_node);
  s->file_sum = nsys_xcalloc((size_t)n + 1, sizeof *s->file_sum);
  s->ranks = nsys_xcalloc((size_t)n + 1, sizeof *s->ranks);
  s->nodes = nsys_xcalloc((size_t)n + 1, sizeof *s->nodes);
  for (uint32_t i = 0; i < n; i++) {
    const nsys_rank_summary *r = &s->sums[i];
    uint32_t f = s->n_files;
    /* a file's summaries are adjacent (one file's ranks, in file order) */
    if (f && !strcmp(s->files[f - 1], r->path)) f--;
    if (f == s->n_files) {
      s->files[s->n_files] = r->path;
      s->file_sum[s->n_files++] = i;
      uint32_t nd = 0;
      if (r->host)
        while (nd < s->n_nodes && !(s->nodes[nd].host && !strcmp(s->nodes[nd].host, r->host))) nd++;
      else nd = s->n_nodes;
      if (nd == s->n_nodes) s->nodes[s->n_nodes++].host = r->host;
      s->nodes[nd].files++;
      s->file_node[f] = nd;
    }
    if (r->device < 0) continue; /* a file without GPU ops: a file of the set, no rank */
    nsys_set_rank *k = &s->ranks[s->n_ranks++];
    k->summary = i;
    k->file = f;
    k->node = s->file_node[f];
    k->global_rank = -1;
  }
  /* the job's ranks: payloads, else file names, else order */
  uint32_t nr = s->n_ranks;
  int64_t *num = nsys_xmalloc(((size_t)nr + 1) * sizeof *num);
  int64_t *pay = nsys_xmalloc(((size_t)nr + 1) * sizeof *pay);
  bool by_payload = nr > 0, by_file = nr > 0;
  for (uint32_t i = 0; i < nr; i++) {
    num[i] = nsys__file_number(s->sums[s->ranks[i].summary].path);
    pay[i] = s->sums[s->ranks[i].summary].payload_rank;
    if (pay[i] < 0) by_payload = false;
    if (num[i] < 0) by_file = false;
  }
  /* distinct: sorted copies, neighbours compared */
  if (by_payload || by_file) {
    int64_t *v = nsys_xmalloc(((size_t)nr + 1) * sizeof *v);
    memcpy(v, pay, nr * sizeof *v);
    nsys_sort_i64(v, nr);
    for (uint32_t i = 1; i < nr; i++) by_payload &= v[i] != v[i - 1];
    memcpy(v, num, nr * sizeof *v);
    nsys_sort_i64(v, nr);
    for (uint32_t i = 1; i < nr; i++) by_file &= v[i] != v[i - 1];
    free(v);
  }
  for (uint32_t i = 0; i < nr; i++) {
    nsys_set_rank *r = &s->ranks[i];
    if (by_payload) {
      r->global_rank = (int32_t)pay[i];
      r->rank_source = "nccl";
    } else if (by_file) {
      r->global_rank = (int32_t)num[i];
      r->rank_source = "file";
    } else {
      r->rank_source = "order";
    }
  }
  free(num);
  free(pay);
  if (nr > 1) qsort_r(s->ranks, nr, sizeof *s->ranks, nsys__cmp_rank, s);
}
