/* profile/openSet's files: opened through profile/open on worker threads
 * within a memory budget, each summarised (analysis/ranks.h) while its index
 * is in memory, and the sets it keeps for the set methods. */
#ifndef NSYS_SET_OPEN_H
#define NSYS_SET_OPEN_H

#include <cjson/cJSON.h>

#include "analysis/ranks.h"
#include "rpc/call.h"

/* One file of a set. */
typedef struct nsys_set_file {
  const char *path;   /* the request's */
  char profile_id[16]; /* "" when closed after its summary */
  bool cached;        /* its index came from the cache */
  int64_t est_bytes;  /* estimated index memory */
  cJSON *tables;      /* per-rank overlap, nccl_breakdown, iterations results: {"overlap":..,"nccl":..,"iterations":..} */
} nsys_set_file;

/* A set kept for the set methods. */
typedef struct nsys_set {
  char id[16];
  nsys_rankset rs;
  nsys_set_file *files; /* paths owned (copies) */
  uint32_t n_files;
  uint32_t threads;
  int64_t budget_mb, est_mb;
  bool kept_open;
} nsys_set;

struct nsys_profile;
/* Opens path through profile/open, summarises its ranks into *v (malloc'd,
 * *n of them) and, when `tables`, takes its per-rank tables into f->tables;
 * closes it after unless `keep` or it is one of `before` (open before).
 * False after nsys_task_fail on task. */
bool nsys_set_open_one(nsys_call *call, const char *path, bool keep, bool tables, struct nsys_profile *const *before,
                       int n_before, nsys_task *task, nsys_set_file *f, nsys_rank_summary **v, uint32_t *n);

/* Frees a set that is not in the registry. */
void nsys_set_free(nsys_set *s);

/* The set registry (thread-safe). get retains; put releases. */
nsys_set *nsys_set_registry_add(nsys_set *s); /* assigns the id; takes s */
nsys_set *nsys_set_get(const char *id);
void nsys_set_put(nsys_set *s);
bool nsys_set_remove(const char *id);

/* JSON of a set's openSet result, its collectives page, stragglers, NCCL summary. */
cJSON *nsys_set_json_open(const nsys_set *s);
/* Per-rank summaries to JSON (rank-summary, Dask) and back (NULL after a
 * message in *err: the field at fault). */
cJSON *nsys_rank_summaries_json(const nsys_rank_summary *v, uint32_t n, bool packed);
bool nsys_rank_summaries_from_json(const cJSON *arr, nsys_rank_summary **out, uint32_t *n, uint32_t *cap,
                                   char *err, size_t errcap);

#endif
