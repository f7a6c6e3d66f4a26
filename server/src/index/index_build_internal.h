/* Private interface between the files of the cold index build:
 * index_build.c (shared state, orchestration), index_read_gpu.c (the GPU
 * ops reader thread), index_read_host.c (CUDA API calls, NVTX ranges) and
 * index_assemble.c (sorting, assembling the index, the API <-> op join).
 * Nothing outside those files includes it. */
#ifndef NSYS_INDEX_BUILD_INTERNAL_H
#define NSYS_INDEX_BUILD_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/task.h"
#include "index/index_internal.h"

/* ---- raw rows in source order ------------------------------------------ */

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid, *corr;
  uint32_t *tgroup;        /* temporary track id (see nsys__track_tmp) */
  uint32_t *name, *full;
  uint8_t *kind;
} nsys__raw_ops;

/* a GPU track: (deviceId, streamId, globalPid) */
typedef struct {
  int32_t device;
  int64_t stream;
  int64_t gpid;
  uint32_t tmp;
} nsys__track_key;

/* (device, stream, gpid) -> id, ids in order of first appearance */
typedef struct {
  nsys__track_key *keys; uint32_t n, cap;
  uint32_t *hv; uint32_t hcap; /* open addressing: id + 1 */
  uint32_t last;               /* last id returned, UINT32_MAX at first */
} nsys__track_map;

#define NSYS__TRACK_MAP_INIT {.last = UINT32_MAX}
uint32_t nsys__track_map_id(nsys__track_map *m, int32_t device, int64_t stream, int64_t gpid);
void nsys__track_map_free(nsys__track_map *m);

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid, *corr;
  uint32_t *thread, *name; /* thread: temporary thread id */
} nsys__raw_api;

typedef struct {
  uint32_t n, cap;
  int64_t *start, *end, *rowid;
  uint32_t *thread, *name, *dom; /* dom: index into domain keys */
} nsys__raw_nvtx;

#define NSYS__GROW(arr, cap) (arr) = nsys_xrealloc((arr), (size_t)(cap) * sizeof *(arr))

/* Large arrays: 2 MiB aligned, marked for transparent huge pages (see
 * index_build.c). Plain malloc'd memory: free() releases it. */
void *nsys__big_alloc(size_t bytes);
void nsys__raw_ops_reserve(nsys__raw_ops *r, uint32_t want);
void nsys__raw_api_reserve(nsys__raw_api *r, uint32_t want);
void nsys__raw_nvtx_reserve(nsys__raw_nvtx *r, uint32_t want);

/* ---- shared build state ------------------------------------------------- */

typedef struct {
  struct nsys_profile *p;
  nsys_task *task;
  nsys_index *ix;            /* the worker fills tracks and ops, the caller the rest */
  nsys__strings strings;
  atomic_llong rows_done;
  int64_t rows_total;
  atomic_int stop;           /* set on cancel or error */
  /* GPU reader (worker thread) */
  nsys__raw_ops ops;
  nsys_strtab op_strings;    /* worker-local, merged afterwards */
  nsys_task op_task;          /* its errors (child of task: cancelled with it) */
  atomic_int op_done;
  /* The host reader's connection, handed to the GPU reader to close once that
   * one is done (closing unmaps the file: milliseconds that then overlap the
   * host's join and derivation); NSYS__HANDOFF_NONE: nothing to close. */
  pthread_mutex_t handoff_mu;
  pthread_cond_t handoff_cv;
  sqlite3 *host_db;
  /* GPU tracks seen by the reader: (device, stream, gpid) -> temporary id */
  nsys__track_map tk;
  int64_t *track_gpid;       /* per final track: its globalPid (for the join) */
  int64_t worker_cpu_ns;     /* the GPU reader thread's CPU time (timing log) */
  int64_t worker_read_cpu_ns; /* of which reading the tables */
  int64_t worker_read_wall_ns; /* the GPU reader's wall time reading the tables */
  int64_t ranges_cpu_ns;     /* the kernel range readers' threads' CPU (index_read_ranges.c) */
  int n_readers;             /* kernel table readers (1: the GPU reader alone) */
  int64_t ops_max_end;       /* max end of the ops, INT64_MIN when none */
  /* host reader (calling thread) */
  nsys__raw_api api;
  nsys__raw_nvtx nvtx;
  nsys_task host_task;        /* its errors (child of task) */
  /* temporary threads: globalTid per temp id */
  int64_t *tmp_gtid; uint32_t n_tmp, cap_tmp;
  int64_t *th_keys; uint32_t *th_vals; uint32_t th_cap; /* gtid -> tmp id + 1 */
  /* NVTX domains: (gpid, domainId) keys and their names */
  int64_t *dom_gpid; int64_t *dom_id; uint32_t *dom_name; uint32_t n_dom, cap_dom;
} nsys__build;

#define NSYS__TICK 4096
/* the host reader hands this to the GPU reader when it has no connection to close */
#define NSYS__HANDOFF_NONE ((sqlite3 *)&nsys__handoff_none)
extern const char nsys__handoff_none;

int64_t nsys__thread_cpu_ns(void);
bool nsys__tick_slow(nsys__build *b, uint32_t *since);

/* per row: a counter; every NSYS__TICK rows, progress and the cancel check */
static inline bool nsys__tick(nsys__build *b, uint32_t *since) {
  return ++*since < NSYS__TICK || nsys__tick_slow(b, since);
}

void nsys__report(nsys__build *b, int lo, int hi, const char *msg);
int nsys__read_rows(sqlite3 *db, const char *fn, const char *sql,
                    void (*step)(sqlite3_context *, int, sqlite3_value **), void *ctx);

/* ---- GPU ops reader (index_read_gpu.c) ---------------------------------- */

/* the worker thread: reads, groups and sorts the ops into b->ix */
void *nsys__gpu_reader(void *arg);

/* ---- the kernel table in rowid ranges (index_read_ranges.c) ------------ */

struct nsys_info_acc; /* the summary's accumulator (profile/profile.h) */

/* How many readers read table t (1: the GPU reader alone) and, when more,
 * the K-1 rowids where ranges 1..K-1 begin. K = min(4, cores - 1) for a
 * table of more than 200k rowids, NSYS_AI_INDEX_READERS=K overrides. */
enum { NSYS__RANGES_MAX = 16 };
int nsys__ranges_plan(const nsys__src *src, nsys__src_table t, int64_t *bound);
/* Starts the readers of ranges 1..k-1 (their SELECT: `list` of the GPU
 * reader's kernel arguments FROM tbl; acc: the summary, info_arg where its
 * columns are in list). The caller reads range 0, rowid < bound[0], itself. */
typedef struct nsys__range nsys__range;
nsys__range *nsys__ranges_start(nsys__build *b, int k, const int64_t *bound, const char *list,
                                const char *tbl, struct nsys_info_acc *acc, const uint8_t *info_arg);
/* Joins them and appends their rows to b->ops in rowid order, interning as
 * the single reader does (sm: the GPU reader's sid map); merges their parts
 * of the summary into acc. first_ok: range 0 was read to its end. Frees rg.
 * False on error or stop (b->op_task says which). */
bool nsys__ranges_finish(nsys__build *b, nsys__range *rg, int k, bool first_ok, nsys__sidmap *sm,
                         struct nsys_info_acc *acc);

/* ---- host reader (index_read_host.c) ------------------------------------ */

bool nsys__read_runtime(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm);
bool nsys__read_nvtx(nsys__build *b, nsys__src *src, nsys_strtab *tab, nsys__sidmap *sm);

/* ---- a reader's SELECT arguments (index_source.c) ---------------------- */

/* The argument list of a row function: the reader's own expressions, then
 * the summary's columns (profile/info) that are not among them, so a column
 * both need is decoded once per row. */
enum { NSYS__ARGS_MAX = 32 };
typedef struct {
  int n;
  char expr[NSYS__ARGS_MAX][64];
} nsys__args;

void nsys__args_add(nsys__args *a, const char *expr);
/* cols: n comma-separated SQL expressions; arg[k]: the argument that gives
 * the k-th (an equal expression, `"end"` = `end`, else one appended) */
void nsys__args_map(nsys__args *a, const char *cols, uint8_t *arg, int n);
char *nsys__args_join(const nsys__args *a); /* "e1, e2, ..." (free it) */

/* ---- assembling the index (index_assemble.c) ---------------------------- */

/* API <-> op join on (globalPid, correlationId), in two halves: the lookup
 * table from the API calls alone (built by the host reader while the GPU
 * reader may still run), then one probe per op. */
enum { NSYS__JOIN_MAXP = 256 };

typedef struct {
  /* direct: per process, correlation ids are a dense counter (the usual
   * case): a corr -> call table per process, read in nearly sequential order */
  int32_t *direct;
  uint32_t np;
  int64_t pg[NSYS__JOIN_MAXP], plo[NSYS__JOIN_MAXP], phi[NSYS__JOIN_MAXP];
  size_t off[NSYS__JOIN_MAXP];
  /* else: open addressing on (gpid, corr), value = call index + 1 */
  uint32_t *slot;
  uint32_t mask;
} nsys__join_table;

void nsys__assemble_ops(nsys__build *b, nsys_index *ix);
void nsys__remap_op_names(nsys__build *b, nsys_index *ix);
uint32_t *nsys__assemble_threads(nsys__build *b, nsys_index *ix, nsys__src *src, nsys__sidmap *sm);
void nsys__assemble_api(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final);
void nsys__assemble_nvtx(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final);
void nsys__join_prepare(const nsys_index *ix, const int64_t *thread_gpid, nsys__join_table *jt);
void nsys__join_finish(nsys__build *b, nsys_index *ix, const int64_t *thread_gpid,
                       nsys__join_table *jt);

#endif
