/* Rank sets: who is who. Files (distinct paths), nodes (files of one host
 * share a clock; a file without a host name is a node of its own) and the
 * job's rank of every (file, device): NCCL's payload Rank, else the last
 * number of the file name (one rank per file, all distinct), else set order. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
  s->ranks = nsys_xcalloc((size_t)n + 1, sizeof *s->ranks);
  s->nodes = nsys_xcalloc((size_t)n + 1, sizeof *s->nodes);
  s->n_ranks = n;
  uint32_t *node_of_file = nsys_xcalloc((size_t)n + 1, sizeof *node_of_file);
  for (uint32_t i = 0; i < n; i++) {
    const nsys_rank_summary *r = &s->sums[i];
    uint32_t f = 0;
    while (f < s->n_files && strcmp(s->files[f], r->path)) f++;
    if (f == s->n_files) {
      s->files[s->n_files++] = r->path;
      uint32_t nd = 0;
      if (r->host)
        while (nd < s->n_nodes && !(s->nodes[nd].host && !strcmp(s->nodes[nd].host, r->host))) nd++;
      else nd = s->n_nodes;
      if (nd == s->n_nodes) s->nodes[s->n_nodes++].host = r->host;
      s->nodes[nd].files++;
      node_of_file[f] = nd;
    }
    s->ranks[i].summary = i;
    s->ranks[i].file = f;
    s->ranks[i].node = node_of_file[f];
    s->ranks[i].global_rank = -1;
  }
  free(node_of_file);
  /* the job's ranks: payloads, else file names, else order */
  bool by_payload = n > 0, by_file = n > 0 && s->n_files == n;
  for (uint32_t i = 0; i < n; i++) {
    if (s->sums[i].payload_rank < 0) by_payload = false;
    if (by_file && nsys__file_number(s->sums[i].path) < 0) by_file = false;
    for (uint32_t j = 0; j < i && (by_payload || by_file); j++) {
      if (s->sums[i].payload_rank == s->sums[j].payload_rank) by_payload = false;
      if (nsys__file_number(s->sums[i].path) == nsys__file_number(s->sums[j].path)) by_file = false;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    nsys_set_rank *r = &s->ranks[i];
    if (by_payload) {
      r->global_rank = s->sums[i].payload_rank;
      r->rank_source = "nccl";
    } else if (by_file) {
      r->global_rank = (int32_t)nsys__file_number(s->sums[i].path);
      r->rank_source = "file";
    } else {
      r->rank_source = "order";
    }
  }
  if (n > 1) qsort_r(s->ranks, n, sizeof *s->ranks, nsys__cmp_rank, s);
}
