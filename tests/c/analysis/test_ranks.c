/* Rank-set reduction (analysis/ranks_*.c, collectives_*.c) on hand-made
 * per-rank summaries whose answers are worked out in the comments. */
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks.h"
#include "common/util.h"
#include "../common/nsys_check.h"

typedef struct {
  int64_t start, end, bytes;
  uint64_t comm;
  bool payload;
  int32_t size;
  const char *type;
  int64_t dataload, compute;
} kc;

static nsys_rank_summary mk(const char *path, const char *host, int32_t device, int32_t prank, int64_t utc,
                            const kc *k, uint32_t n) {
  nsys_rank_summary r;
  memset(&r, 0, sizeof r);
  r.path = nsys_xstrdup(path);
  r.host = host ? nsys_xstrdup(host) : NULL;
  r.gpu = nsys_xstrdup("NVIDIA H100 80GB HBM3");
  r.cc_major = 9;
  r.device = device;
  r.payload_rank = prank;
  r.utc_epoch_ns = utc;
  r.n_nccl = n;
  r.n_colls = n;
  r.span_start = 0;
  r.span_end = 10000000;
  r.colls = nsys_xcalloc(n + 1, sizeof *r.colls);
  for (uint32_t i = 0; i < n; i++) {
    nsys_rank_coll *c = &r.colls[i];
    c->start = k[i].start;
    c->end = k[i].end;
    c->bytes = k[i].bytes;
    c->comm = k[i].comm;
    c->comm_payload = k[i].payload;
    c->comm_size = k[i].size;
    c->step = (int32_t)i;
    snprintf(c->type, sizeof c->type, "%s", k[i].type);
    c->window = 1000000;
    c->cause[NSYS_CAUSE_DATALOAD] = k[i].dataload;
    c->cause[NSYS_CAUSE_COMPUTE] = k[i].compute;
  }
  return r;
}

/* 4 ranks with payloads, two hosts. Collective k: every rank starts at
 * 1 ms * (k+1) and ends at 1 ms * (k+1) + 200 us; global rank 3 starts the
 * second one 150 us late (its data loader: dataLoad 600 us vs 0). Node n1's
 * clock reads 50 us late: its ends are 50 us after n0's, so its correction is
 * -50 us. */
static void test_payload_two_nodes(void) {
  const uint64_t comm = 0xabc;
  nsys_rank_summary *v = nsys_xcalloc(4, sizeof *v);
  for (int g = 0; g < 4; g++) {
    int64_t skew = g >= 2 ? 50000 : 0;
    kc k[3];
    for (int i = 0; i < 3; i++) {
      int64_t s = 1000000 * (i + 1) + skew, e = s + 200000;
      k[i] = (kc){s, e, 1 << 20, comm, true, 4, "AllReduce", 0, 100000};
    }
    if (g == 3) {
      k[1].start = 2000000 + 50000 + 150000; /* 150 us after the others (above the 100 us threshold) */
      k[1].dataload = 600000;
    }
    /* files listed out of rank order: the set sorts by the payload's rank */
    char path[32];
    snprintf(path, sizeof path, "/x/f%d.sqlite", 3 - g);
    v[3 - g] = mk(path, g >= 2 ? "n1" : "n0", 0, g, 1000000000000000000LL, k, 3);
  }
  nsys_task t;
  nsys_task_init(&t);
  nsys_rankset s;
  CHECK(nsys_rankset_reduce(&t, v, 4, &s));
  CHECK_EQ(s.n_ranks, 4);
  for (uint32_t r = 0; r < 4; r++) {
    CHECK_EQ(s.ranks[r].global_rank, r);
    CHECK_STR(s.ranks[r].rank_source, "nccl");
  }
  CHECK_EQ(s.n_nodes, 2);
  CHECK_EQ(s.n_colls, 3);
  CHECK_STR(s.matched_by, "payload");
  CHECK_EQ(s.unmatched, 0);
  CHECK_STR(s.clock_method, "session+nccl");
  uint32_t n1 = s.ranks[2].node;
  CHECK_EQ(s.nodes[n1].correction, -50000);
  CHECK_EQ(s.nodes[n1].samples, 3);
  CHECK_EQ(s.ranks[3].offset, -50000);
  CHECK_STR(s.colls[1].comm, "0xabc");
  CHECK_EQ(s.colls[1].seq, 1);
  CHECK_EQ(s.colls[1].last_rank, 3);
  CHECK_EQ(s.colls[1].skew, 150000);
  /* alg bw = 2^20 B / (last end - last start) = 1048576 / (2200000 - 2150000) */
  CHECK_NEAR(s.colls[1].alg_bw, 1048576.0 / 50000, 1e-9);
  CHECK_NEAR(s.colls[1].bus_bw, 1048576.0 / 50000 * 1.5, 1e-9); /* 2(n-1)/n, n = 4 */
  CHECK_EQ(s.n_events, 1);
  CHECK_EQ(s.events[0].rank, 3);
  CHECK_EQ(s.events[0].late, 150000);
  CHECK_STR(nsys_cause_names[s.events[0].cause], "dataLoad");
  CHECK_EQ(s.events[0].peer_median[NSYS_CAUSE_DATALOAD], 0);
  CHECK_EQ(s.straggler, -1); /* one event: not "more than half, two at least"; last in 1 of 3 */
  CHECK_EQ(s.steps, 3);
  /* NCCL summary: one row, 1 MiB in the 1MiB-4MiB bucket; two nodes: link unknown */
  CHECK_EQ(s.n_nccl, 1);
  CHECK_STR(s.nccl[0].bucket, "1MiB-4MiB");
  CHECK_EQ(s.nccl[0].count, 3);
  CHECK_STR(s.link_kind, "unknown");
  nsys_rankset_dispose(&s);
}

/* Order matching, one host: rank 0 ran 3 kernels on its first NCCL stream,
 * rank 1 two (a shorter capture): 2 collectives, 1 kernel unmatched. Ranks
 * from file names (rank10, rank2: listed as 2, 10). No clock correction on
 * one node; an H100 on one node is NVLink. */
static void test_order_unequal(void) {
  kc a[3] = {{100, 200, -1, 0, false, -1, "SendRecv", 0, 0},
             {300, 400, -1, 0, false, -1, "SendRecv", 0, 0},
             {500, 600, -1, 0, false, -1, "SendRecv", 0, 0}};
  kc b[2] = {{110, 200, -1, 0, false, -1, "SendRecv", 0, 0}, {290, 400, -1, 0, false, -1, "SendRecv", 0, 0}};
  nsys_rank_summary *v = nsys_xcalloc(2, sizeof *v);
  v[0] = mk("/y/rank10.sqlite", "h", 0, -1, 5, a, 3);
  v[1] = mk("/y/rank2.sqlite", "h", 0, -1, 7, b, 2);
  nsys_task t;
  nsys_task_init(&t);
  nsys_rankset s;
  CHECK(nsys_rankset_reduce(&t, v, 2, &s));
  CHECK_STR(s.ranks[0].rank_source, "file");
  CHECK_EQ(s.ranks[0].global_rank, 2);
  CHECK_EQ(s.ranks[1].global_rank, 10);
  CHECK_STR(s.matched_by, "order");
  CHECK_EQ(s.n_colls, 2);
  CHECK_EQ(s.unmatched, 1);
  CHECK_STR(s.clock_method, "session");
  /* session alignment: set time = utc - min utc; rank2's file started 2 ns later */
  CHECK_EQ(s.ranks[0].offset, 2);
  CHECK_EQ(s.ranks[1].offset, 0);
  CHECK_EQ(s.colls[0].bytes, -1);
  CHECK(s.colls[0].alg_bw < 0);
  CHECK_STR(s.nccl[0].bucket, "unknown");
  CHECK_STR(s.link_kind, "NVLink");
  CHECK_NEAR(s.link_gbps, 450, 0);
  nsys_rankset_dispose(&s);
}

static void test_bus_factors(void) {
  CHECK_NEAR(nsys_bus_factor("AllReduce", 8), 1.75, 1e-12);
  CHECK_NEAR(nsys_bus_factor("AllGather", 8), 0.875, 1e-12);
  CHECK_NEAR(nsys_bus_factor("ReduceScatter", 2), 0.5, 1e-12);
  CHECK_NEAR(nsys_bus_factor("Broadcast", 8), 1, 1e-12);
  CHECK_NEAR(nsys_bus_factor("SendRecv", 2), 1, 1e-12);
}

int main(void) {
  test_payload_two_nodes();
  test_order_unequal();
  test_bus_factors();
  return nsys_check_done("ranks");
}
