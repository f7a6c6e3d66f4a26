/* Rank sets: the per-rank summary (the map step, one file at a time: on the
 * server's threads or on a Dask worker through `nsys-ai rank-summary`) and
 * the set-level reduction (clock alignment, collective matching, stragglers
 * with causes, the NCCL summary). Typed results, no cJSON: methods/set_*.c
 * converts. Definitions: docs/multirank.md. */
#ifndef NSYS_RANKS_H
#define NSYS_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"

struct nsys_profile;
struct nsys_index;

/* What a rank did in the window before a collective (ns), the cause categories. */
enum { NSYS_CAUSE_COMPUTE, NSYS_CAUSE_DATALOAD, NSYS_CAUSE_H2D, NSYS_CAUSE_SYNC, NSYS_CAUSE_LAUNCH_GAP, NSYS_CAUSE__N };
extern const char *const nsys_cause_names[NSYS_CAUSE__N];

/* One NCCL kernel of a rank, in the file's clock. */
typedef struct nsys_rank_coll {
  int64_t start, end;
  int64_t bytes;     /* NCCL payload "Message size [bytes]", -1 without */
  uint64_t comm;     /* payload communicator id, or the NCCL stream's ordinal on the rank */
  bool comm_payload; /* comm comes from a payload */
  int32_t comm_size; /* payload "No. of ranks", -1 without */
  int32_t step;      /* the rank's iteration containing start, -1 */
  char type[24];     /* AllReduce, AllGather, ... (nsys_nccl_parse) */
  int64_t window;    /* from the rank's previous NCCL kernel end (its first GPU op for the first) to start */
  int64_t cause[NSYS_CAUSE__N];
} nsys_rank_coll;

/* One rank: a (file, device) pair; device -1: a file without GPU ops (its
 * clock and host only). */
typedef struct nsys_rank_summary {
  char *path;          /* the file */
  char *host;          /* TARGET_INFO_SYSTEM_ENV Hostname, NULL */
  char *gpu;           /* GPU name, NULL */
  int cc_major;        /* -1 unknown */
  int32_t device;
  uint32_t pid;
  int64_t utc_epoch_ns; /* session start, 0 unknown */
  bool utc_clock;      /* times are already UTC (normalised export) */
  int32_t payload_rank; /* NCCL payload "Rank", -1 */
  int64_t span_start, span_end; /* the rank's GPU ops, file clock (0,0 when none) */
  uint32_t steps;
  uint32_t n_nccl;     /* NCCL kernels */
  nsys_rank_coll *colls; /* by start */
  uint32_t n_colls;
} nsys_rank_summary;

/* Every rank of one file (one per device with GPU ops; one with device -1
 * when it has none), appended to *out
 * (grown; *n and *cap updated). False after nsys_task_fail (cancelled). */
bool nsys_rank_summarize(nsys_task *task, struct nsys_profile *p, const struct nsys_index *ix,
                         nsys_rank_summary **out, uint32_t *n, uint32_t *cap);
void nsys_rank_summary_dispose(nsys_rank_summary *r);

/* --- the reduction --- */

typedef struct nsys_set_node {
  const char *host; /* borrowed from a summary, NULL */
  uint32_t files;
  int64_t correction; /* added to the node's session-aligned times */
  int64_t disagreement;
  uint32_t samples;
} nsys_set_node;

typedef struct nsys_set_rank {
  uint32_t summary;  /* index into the input summaries */
  uint32_t file;     /* index of its file (distinct paths in input order) */
  uint32_t node;
  int32_t global_rank; /* -1 */
  const char *rank_source; /* "nccl", "file", "order" */
  int64_t offset;    /* file clock + offset = set clock (session alignment + node correction) */
  uint32_t collectives;
  uint32_t last_count, late_count;
  int64_t max_late, late_sum;
  int64_t behind_sum; /* sum over its collectives of (its start - the first start) */
  uint32_t cause_count[NSYS_CAUSE__N];
} nsys_set_rank;

typedef struct nsys_set_coll {
  char comm[24];     /* "0x5eed0000" or "stream0" */
  uint32_t seq;
  const char *type;  /* borrowed */
  int64_t bytes;     /* -1 */
  uint32_t ranks;
  int64_t start, end; /* set clock: first start, last end */
  int32_t step;
  uint32_t last_rank;
  int64_t skew;
  uint32_t *member;  /* per set rank: index into its summary's colls, UINT32_MAX when absent */
  double alg_bw, bus_bw;  /* GB/s; < 0 unknown */
} nsys_set_coll;

typedef struct nsys_set_event {
  uint32_t coll, rank;
  int32_t step;
  int64_t late;
  int cause;
  int32_t carried_from; /* the collective whose event's cause this one carries, -1 */
  const nsys_rank_coll *rc; /* the rank's breakdown (borrowed) */
  int64_t peer_median[NSYS_CAUSE__N + 1]; /* causes, then window */
} nsys_set_event;

typedef struct nsys_set_nccl_row {
  const char *type;
  char bucket[48];
  int64_t min_bytes, max_bytes; /* -1 unknown */
  uint32_t count;
  int64_t total_ns;
  double bus_bw, max_bus_bw, pct_of_link; /* < 0 unknown */
} nsys_set_nccl_row;

typedef struct nsys_rankset {
  nsys_rank_summary *sums; uint32_t n_sums; /* owned */
  char **files; uint32_t n_files;           /* distinct paths, input order (borrowed from sums) */
  uint32_t *file_node, *file_sum;           /* per file: its node, its first summary */
  int64_t *file_offset;                     /* per file: file clock + offset = set clock */
  nsys_set_rank *ranks; uint32_t n_ranks;   /* set order: by global rank, file, device */
  nsys_set_node *nodes; uint32_t n_nodes;
  const char *clock_method;  /* "session", "session+nccl", "none" */
  int64_t clock_threshold;
  bool aligned;              /* every file has a session start */
  int64_t window_start, window_end;
  nsys_set_coll *colls; uint32_t n_colls;   /* by start */
  const char *matched_by;    /* "payload", "order", "none" */
  uint32_t unmatched, communicators;
  const char **types; uint32_t n_types;
  uint32_t steps;
  int64_t late_threshold;
  int32_t straggler;         /* -1 */
  nsys_set_event *events; uint32_t n_events; /* by collective */
  const char *link_kind; double link_gbps; char link_source[96];
  nsys_set_nccl_row *nccl; uint32_t n_nccl;
} nsys_rankset;

/* Reduces summaries (taken over: freed with the set) to a set. False after
 * nsys_task_fail (cancelled). */
bool nsys_rankset_reduce(nsys_task *task, nsys_rank_summary *sums, uint32_t n, nsys_rankset *out);
void nsys_rankset_dispose(nsys_rankset *s);

/* Internal steps of the reduction (ranks_*.c, collectives_*.c). */
void nsys_rankset_identify(nsys_rankset *s);
bool nsys_rankset_match(nsys_task *task, nsys_rankset *s);
void nsys_rankset_align(nsys_rankset *s);
void nsys_rankset_time(nsys_rankset *s);
void nsys_rankset_stragglers(nsys_rankset *s);
void nsys_rankset_nccl(nsys_rankset *s);
/* A member's start and end on the set clock (r a set rank in the collective). */
int64_t nsys_set_coll_start(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r);
int64_t nsys_set_coll_end(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r);
const nsys_rank_coll *nsys_set_coll_member(const nsys_rankset *s, const nsys_set_coll *c, uint32_t r);
/* The median of v[0..n) (sorts v; the lower middle's mean with the upper, rounded down; 0 when n = 0). */
int64_t nsys_rank_median(int64_t *v, uint32_t n);
/* NCCL's bus-bandwidth factor for a collective type over n ranks. */
double nsys_bus_factor(const char *type, uint32_t n);

#endif
