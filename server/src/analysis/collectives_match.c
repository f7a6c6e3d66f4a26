/* Rank sets: collectives matched across ranks. A rank's NCCL kernel belongs
 * to a communicator (NCCL's payload id, else the k-th NCCL stream of the
 * rank) and has a sequence number in it (its order there); kernels with the
 * same (communicator, sequence) on every rank of the communicator are one
 * collective. O(n log n) in the set's NCCL kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks.h"
#include "common/util.h"

#define NSYS__STREAM_KEY (1ULL << 63)

typedef struct {
  uint64_t comm;
  uint32_t seq, rank, coll;
} nsys__tuple;

static int nsys__cmp_tuple(const void *a, const void *b) {
  const nsys__tuple *x = a, *y = b;
  if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

static uint64_t nsys__key(const nsys_rank_coll *k) { return k->comm_payload ? k->comm : (k->comm | NSYS__STREAM_KEY); }

const nsys_rank_coll *nsys_set_coll_member(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r) {
  return c->member[r] == UINT32_MAX ? NULL : &s->sums[s->ranks[r].summary].colls[c->member[r]];
}
int64_t nsys_set_coll_start(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r) {
  return nsys_set_coll_member(s, c, r)->start + s->ranks[r].offset;
}
int64_t nsys_set_coll_end(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r) {
  return nsys_set_coll_member(s, c, r)->end + s->ranks[r].offset;
}

bool nsys_rankset_match(nsys_task *task, nsys_rankset *s) {
  size_t total = 0;
  for (uint32_t r = 0; r < s->n_ranks; r++) total += s->sums[s->ranks[r].summary].n_colls;
  nsys__tuple *t = nsys_xmalloc((total + 1) * sizeof *t);
  size_t m = 0;
  for (uint32_t r = 0; r < s->n_ranks; r++) {
    const nsys_rank_summary *sum = &s->sums[s->ranks[r].summary];
    size_t first = m;
    for (uint32_t i = 0; i < sum->n_colls; i++) t[m++] = (nsys__tuple){nsys__key(&sum->colls[i]), i, r, i};
    /* sequence within the communicator: the kernels are in start order, so
     * sort this rank's by (comm, index) and number them */
    qsort(t + first, m - first, sizeof *t, nsys__cmp_tuple);
    for (size_t i = first; i < m; i++) t[i].seq = (i > first && t[i - 1].comm == t[i].comm) ? t[i - 1].seq + 1 : 0;
  }
  if (nsys_task_cancelled(task)) {
    free(t);
    return nsys_task_fail_cancelled(task);
  }
  qsort(t, m, sizeof *t, nsys__cmp_tuple);
  /* ranks per communicator (those having any kernel in it) */
  uint32_t cap = 0, ntypes_cap = 0;
  bool any_payload = false;
  for (size_t i = 0; i < m;) {
    size_t j = i;
    uint32_t comm_ranks = 0;
    /* distinct ranks of the communicator: over its seq 0.. groups, the max group size */
    while (j < m && t[j].comm == t[i].comm) j++;
    {
      /* count distinct ranks in [i, j) */
      uint8_t *seen = nsys_xcalloc(s->n_ranks + 1, 1);
      for (size_t q = i; q < j; q++)
        if (!seen[t[q].rank]) {
          seen[t[q].rank] = 1;
          comm_ranks++;
        }
      free(seen);
    }
    bool used = false;
    for (size_t g = i; g < j;) {
      size_t h = g;
      while (h < j && t[h].seq == t[g].seq) h++;
      const nsys_rank_coll *k0 = &s->sums[s->ranks[t[g].rank].summary].colls[t[g].coll];
      uint32_t want = comm_ranks;
      if (k0->comm_payload && k0->comm_size > 0) want = (uint32_t)k0->comm_size;
      if (h - g == want && want >= 2) {
        if (s->n_colls == cap) s->colls = nsys_xrealloc(s->colls, (cap = cap ? cap * 2 : 256) * sizeof *s->colls);
        nsys_set_coll *c = &s->colls[s->n_colls++];
        memset(c, 0, sizeof *c);
        if (k0->comm_payload) snprintf(c->comm, sizeof c->comm, "0x%llx", (unsigned long long)k0->comm);
        else snprintf(c->comm, sizeof c->comm, "stream%llu", (unsigned long long)k0->comm);
        c->seq = t[g].seq;
        c->type = k0->type;
        c->bytes = k0->bytes;
        c->ranks = (uint32_t)(h - g);
        c->member = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *c->member);
        for (uint32_t r = 0; r < s->n_ranks; r++) c->member[r] = UINT32_MAX;
        for (size_t q = g; q < h; q++) c->member[t[q].rank] = t[q].coll;
        c->step = s->sums[s->ranks[t[g].rank].summary].colls[t[g].coll].step;
        used = true;
        any_payload |= k0->comm_payload;
        uint32_t ty = 0;
        while (ty < s->n_types && strcmp(s->types[ty], c->type)) ty++;
        if (ty == s->n_types) {
          if (s->n_types == ntypes_cap) s->types = nsys_xrealloc(s->types, (ntypes_cap = ntypes_cap ? ntypes_cap * 2 : 8) * sizeof *s->types);
          s->types[s->n_types++] = c->type;
        }
      } else {
        s->unmatched += (uint32_t)(h - g);
      }
      g = h;
    }
    s->communicators += used;
    i = j;
    if (nsys_task_cancelled(task)) break;
  }
  free(t);
  if (nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task);
  s->matched_by = !s->n_colls ? "none" : any_payload ? "payload" : "order";
  for (uint32_t r = 0; r < s->n_ranks; r++) s->ranks[r].collectives = 0;
  for (uint32_t c = 0; c < s->n_colls; c++)
    for (uint32_t r = 0; r < s->n_ranks; r++) s->ranks[r].collectives += s->colls[c].member[r] != UINT32_MAX;
  return true;
}

static int nsys__cmp_coll(const void *a, const void *b) {
  const nsys_set_coll *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  int k = strcmp(x->comm, y->comm);
  if (k) return k;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

double nsys_bus_factor(const char *type, uint32_t n) {
  if (n < 1) return 1;
  if (!strcmp(type, "AllReduce")) return 2.0 * (n - 1) / n;
  if (!strcmp(type, "AllGather") || !strcmp(type, "ReduceScatter") || !strcmp(type, "AllToAll"))
    return (double)(n - 1) / n;
  return 1; /* Broadcast, Reduce, SendRecv, Send, Recv, Other */
}

void nsys_rankset_time(nsys_rankset *s) {
  for (uint32_t i = 0; i < s->n_colls; i++) {
    nsys_set_coll *c = &s->colls[i];
    int64_t first = INT64_MAX, last = INT64_MIN, end = INT64_MIN;
    for (uint32_t r = 0; r < s->n_ranks; r++) {
      if (c->member[r] == UINT32_MAX) continue;
      int64_t st = nsys_set_coll_start(s, c, r), en = nsys_set_coll_end(s, c, r);
      if (st < first) first = st;
      if (st > last) {
        last = st;
        c->last_rank = r;
      }
      if (en > end) end = en;
    }
    c->start = first;
    c->end = end;
    c->skew = last - first;
    int64_t busy = end - last > 0 ? end - last : 1;
    c->alg_bw = c->bytes >= 0 ? (double)c->bytes / (double)busy : -1;
    c->bus_bw = c->bytes >= 0 ? c->alg_bw * nsys_bus_factor(c->type, c->ranks) : -1;
  }
  if (s->n_colls > 1) qsort(s->colls, s->n_colls, sizeof *s->colls, nsys__cmp_coll);
}
