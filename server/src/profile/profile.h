/* A profile: one nsys SQLite export opened strictly read-only, with its
 * schema resolved, its strings decoded to UTF-8 and its info summarised.
 * Architecture invariant: nothing in profile/ includes cJSON or writes to
 * stdout; methods/profile_methods.c turns these structs into JSON.
 *
 * Thread safety: a profile is immutable after nsys_profile_open() returns,
 * except `index`, which is published once with an atomic store. The sqlite3
 * handle is opened SQLITE_OPEN_FULLMUTEX and may be used from any thread. */
#ifndef NSYS_PROFILE_H
#define NSYS_PROFILE_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/errors.h"
#include "common/task.h"

struct nsys_index;
typedef struct nsys_info_job nsys_info_job;
typedef struct nsys_info_acc nsys_info_acc;

/* Schema generation, by which metadata table the export carries. */
typedef enum {
  NSYS_GEN_UNKNOWN = 0,   /* no metadata table at all (e.g. failed capture) */
  NSYS_GEN_PRE2022,       /* TARGET_INFO_CUDA_GPU era, no metadata table */
  NSYS_GEN_EXPORT_META,   /* EXPORT_META_DATA: 2022 .. 2023.2 */
  NSYS_GEN_META_EXPORT,   /* META_DATA_EXPORT: 2023.3 and later */
} nsys_schema_gen;

/* Logical tables; nsys_schema.table[] holds the real (possibly versioned,
 * e.g. "..._V2") name or NULL when absent. */
typedef enum {
  NSYS_TBL_STRING_IDS,
  NSYS_TBL_KERNEL,       /* CUPTI_ACTIVITY_KIND_KERNEL */
  NSYS_TBL_MEMCPY,       /* CUPTI_ACTIVITY_KIND_MEMCPY */
  NSYS_TBL_MEMSET,       /* CUPTI_ACTIVITY_KIND_MEMSET */
  NSYS_TBL_RUNTIME,      /* CUPTI_ACTIVITY_KIND_RUNTIME */
  NSYS_TBL_SYNC,         /* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
  NSYS_TBL_GRAPH_TRACE,  /* CUPTI_ACTIVITY_KIND_GRAPH_TRACE */
  NSYS_TBL_NVTX,         /* NVTX_EVENTS */
  NSYS_TBL_GPU_INFO,     /* TARGET_INFO_GPU, or TARGET_INFO_CUDA_GPU pre-2022 */
  NSYS_TBL_CUDA_DEVICE,  /* TARGET_INFO_CUDA_DEVICE */
  NSYS_TBL_PROCESSES,    /* PROCESSES */
  NSYS_TBL_THREAD_NAMES, /* ThreadNames */
  NSYS_TBL_SESSION_START,/* TARGET_INFO_SESSION_START_TIME */
  NSYS_TBL_CALLCHAINS,   /* CUDA_CALLCHAINS */
  NSYS_TBL_SAMPLING,     /* COMPOSITE_EVENTS (CPU sampling) */
  NSYS_TBL_SAMPLING_CALLCHAINS, /* SAMPLING_CALLCHAINS */
  NSYS_TBL_OSRT,         /* OSRT_API */
  NSYS_TBL_CUDA_GRAPH_EVENTS, /* CUDA_GRAPH_EVENTS / CUDA_GRAPH_NODE_EVENTS */
  NSYS_TBL_META,         /* META_DATA_EXPORT or EXPORT_META_DATA */
  NSYS_TBL_ENUM_NSYS_EVENT_TYPE,
  /* added by the loader (append only; the values above are stable) */
  NSYS_TBL_CUDA_GPU_LEGACY,   /* TARGET_INFO_CUDA_GPU (pre-2022 GPU details) */
  NSYS_TBL_CUDA_GRAPH_NODE_EVENTS, /* CUDA_GRAPH_NODE_EVENTS (2024+) */
  NSYS_TBL_CUDA_EVENT,        /* CUPTI_ACTIVITY_KIND_CUDA_EVENT */
  NSYS_TBL_META_CAPTURE,      /* META_DATA_CAPTURE (2023.4+) */
  NSYS_TBL_ANALYSIS_DETAILS,  /* ANALYSIS_DETAILS (capture duration) */
  NSYS_TBL_CONTEXT_INFO,      /* TARGET_INFO_CUDA_CONTEXT_INFO / TARGET_INFO_CUDA_NULL_STREAM */
  NSYS_TBL_CUDA_STREAM,       /* TARGET_INFO_CUDA_STREAM */
  NSYS_TBL_OSRT_CALLCHAINS,   /* OSRT_CALLCHAINS */
  NSYS_TBL_SCHED,             /* SCHED_EVENTS */
  NSYS_TBL_PROFILER_OVERHEAD, /* PROFILER_OVERHEAD */
  NSYS_TBL_SYSTEM_ENV,        /* TARGET_INFO_SYSTEM_ENV */
  NSYS_TBL_ENUM_LAUNCH_TYPE,  /* ENUM_CUDA_KERNEL_LAUNCH_TYPE (2022: ..._KRENEL_...) */
  NSYS_TBL__COUNT
} nsys_table;

typedef struct nsys_schema {
  nsys_schema_gen gen;
  char *table[NSYS_TBL__COUNT];   /* real table name or NULL */
  char **all_tables;              /* every table in sqlite_master, sorted */
  int n_all_tables;
  /* Column names of each resolved logical table (PRAGMA table_info, read
   * once at open): cols[t][0..n_cols[t]). */
  char **cols[NSYS_TBL__COUNT];
  int n_cols[NSYS_TBL__COUNT];
} nsys_schema;

typedef struct nsys_gpu_info {
  int64_t id;
  char *name;
  int sm_count;                   /* 0 when unknown */
  int64_t memory_bytes;           /* 0 when unknown */
  int64_t bandwidth_bytes_per_sec;
  int64_t clock_hz;
  int cc_major, cc_minor;         /* -1 when unknown */
} nsys_gpu_info;

typedef struct nsys_thread_info {
  uint32_t tid;
  char *name; /* may be NULL */
} nsys_thread_info;

typedef struct nsys_process_info {
  uint32_t pid;
  char *name; /* may be NULL */
  nsys_thread_info *threads;
  int n_threads;
} nsys_process_info;

typedef struct nsys_device_info {
  int64_t id;
  int64_t *streams;
  int n_streams;
} nsys_device_info;

/* Row count of one table read for the info (activity tables). */
typedef struct nsys_table_count {
  char *name;            /* real table name */
  int64_t rows;
} nsys_table_count;

typedef struct nsys_info {
  char *nsys_version;    /* NULL when unknown */
  char *schema_version;  /* NULL when unknown */
  int64_t span_start, span_end; /* over all activity tables present; 0,0 when empty */
  int64_t utc_epoch_ns;  /* session start; 0 when unknown */
  int64_t n_kernels, n_memcpy, n_memset, n_runtime, n_nvtx, n_syncs;
  nsys_gpu_info *gpus; int n_gpus;
  nsys_device_info *devices; int n_devices;
  nsys_process_info *processes; int n_processes;
  bool f_kernels, f_memcpy, f_memset, f_nvtx, f_nccl, f_cuda_graphs, f_cuda_callchains,
      f_cpu_sampling, f_osrt;
  /* added by the loader */
  bool has_span;         /* false when no activity table has a row (span is 0,0) */
  bool has_utc_epoch;    /* false when TARGET_INFO_SESSION_START_TIME is absent/empty */
  int64_t duration_ns;   /* ANALYSIS_DETAILS.duration; -1 when unknown */
  int64_t n_osrt, n_cpu_samples, n_graph_launches, n_cuda_events;
  nsys_table_count *tables; int n_tables; /* activity tables read, with row counts */
} nsys_info;

typedef struct nsys_profile {
  char id[16];              /* "p1", "p2", ... assigned by the registry */
  char *path;               /* as given (absolute when possible) */
  char *sqlite_path;        /* the SQLite file actually read (differs for .nsys-rep) */
  sqlite3 *db;              /* read-only, FULLMUTEX */
  /* file identity at open, for cache keys and change detection */
  dev_t st_dev;
  ino_t st_ino;
  int64_t st_size;
  int64_t st_mtime_ns;
  nsys_schema schema;
  /* StringIds, decoded to valid UTF-8: strings[id] for 0 <= id < n_strings
   * (NULL for ids absent from the table). Ids may be sparse (a cut export can
   * hold 126 strings with ids up to 3.4M): ids >= n_strings or < 0 live in the
   * sorted sparse_ids/sparse_strings arrays. Always look up with
   * nsys_profile_string(), which covers both. */
  char **strings;
  int64_t n_strings;
  int64_t *sparse_ids;
  char **sparse_strings;
  int64_t n_sparse;
  nsys_info info;
  nsys_info_job *info_job;  /* summary still computing (open_begin .. open_finish) */
  /* the summary's GPU-table and runtime parts, for the index build's readers to gather
   * (nsys_profile_open_begin_indexed .. open_finish); NULL otherwise */
  nsys_info_acc *info_acc;
  _Atomic(struct nsys_index *) index; /* NULL until built; owned */
  /* What a later layer derives from `index` alone and keeps while the
   * profile is open (analysis/amemo.h: the analyses' shared cache); owned
   * by that layer (its own lock), freed with memo_free before the index. */
  void *memo;
  void (*memo_free)(void *memo);
  /* search's per-name instance index (index/search_index.h), the same way: owned by that layer,
   * freed with search_memo_free before the index. */
  void *search_memo;
  void (*search_memo_free)(void *memo);
  atomic_int refcount;
} nsys_profile;

/* Opens `path` (SQLite export, or .nsys-rep converted via `nsys export` into
 * the cache dir). Never modifies the file. On failure returns NULL after
 * nsys_task_fail() with a specific application error. Does not build the index. */
nsys_profile *nsys_profile_open(const char *path, nsys_task *task);
/* nsys_profile_open() in two halves, so that the summary (`info`, a scan of
 * every activity table when it is not cached) is computed on a worker thread
 * while the caller builds the index. begin: like nsys_profile_open(), but
 * p->info_job may be non-NULL: p->info is then not ready, and p must not be
 * published (registry) or its info read before nsys_profile_open_finish()
 * returned true. finish: waits for the summary; false after nsys_task_fail()
 * (the caller releases p). Releasing p without finish is allowed (the worker
 * is joined and its result dropped); the task given to begin must outlive
 * that. NSYS_AI_INFO_SYNC=1 computes the summary inside begin. */
nsys_profile *nsys_profile_open_begin(const char *path, nsys_task *task);
/* begin for a caller that builds the index before finish: the summary's
 * worker leaves out the kernel, memcpy and memset tables, which the index
 * build's GPU reader summarises as it reads them (p->info_acc); finish scans
 * them itself when the index came from its cache or its build stopped. */
nsys_profile *nsys_profile_open_begin_indexed(const char *path, nsys_task *task);
bool nsys_profile_open_finish(nsys_profile *p, nsys_task *task);
void nsys_profile_retain(nsys_profile *p);
void nsys_profile_release(nsys_profile *p); /* frees at zero, index included */

/* The summary's GPU-table part read by another scan of those tables (the
 * index build's GPU reader, on its own thread, between open_begin_indexed
 * and open_finish): cols gives the NSYS_INFO_GPU_NCOLS SQL expressions to
 * append to its SELECT of table t; begin (before the first table: drops rows
 * of an earlier try), table (before each of kernels, memcpy, memset; false
 * for another table), row (those values of each row), complete (after the
 * last table, read to its end). */
#define NSYS_INFO_GPU_NCOLS 7
void nsys_info_gpu_cols(const nsys_profile *p, nsys_table t, char *buf, size_t cap);
void nsys_info_gpu_acc_begin(nsys_info_acc *a);
bool nsys_info_gpu_acc_table(nsys_info_acc *a, nsys_table t);
void nsys_info_gpu_acc_row(nsys_info_acc *a, sqlite3_value **v);
void nsys_info_gpu_acc_complete(nsys_info_acc *a);
/* A part of the current table's rows read by another thread (the index
 * build's range readers, index_read_ranges.c): part_new (after table),
 * part_row on that thread, part_merge (frees the part; a NULL: drops it; the parts' figures
 * are counts, min, max, flags and a set: any merge order gives the same). */
typedef struct nsys_info_gpu_part nsys_info_gpu_part;
nsys_info_gpu_part *nsys_info_gpu_part_new(const nsys_info_acc *a);
void nsys_info_gpu_part_row(nsys_info_gpu_part *pt, sqlite3_value **v);
void nsys_info_gpu_part_merge(nsys_info_acc *a, nsys_info_gpu_part *pt);
/* The same for the runtime table's count and span (the index build's host
 * reader, another thread than the GPU reader): cols false when the summary
 * counts that table in SQL (no start column: do not gather); begin, row
 * (the 2 values of cols), complete (read to its end). */
bool nsys_info_rt_cols(const nsys_profile *p, char *buf, size_t cap);
void nsys_info_rt_begin(nsys_info_acc *a);
void nsys_info_rt_row(nsys_info_acc *a, sqlite3_value **v);
void nsys_info_rt_complete(nsys_info_acc *a);
/* And the NVTX table's, by the same host reader reading every row of it:
 * gathered false when the summary counts it in SQL (no start or end column);
 * row takes (start, end). */
bool nsys_info_nvtx_gathered(const nsys_profile *p);
void nsys_info_nvtx_begin(nsys_info_acc *a);
void nsys_info_nvtx_row(nsys_info_acc *a, sqlite3_value **v);
void nsys_info_nvtx_complete(nsys_info_acc *a);

/* Decoded string for a StringIds id, or NULL when the id is unknown. */
const char *nsys_profile_string(const nsys_profile *p, int64_t id);

/* True when `table` exists and has column `col` (case-sensitive). */
bool nsys_schema_has_column(const nsys_profile *p, nsys_table table, const char *col);

/* Prepares `sql` on p->db; on error records NSYS_E_CORRUPT (or INTERNAL) on
 * task and returns NULL. */
sqlite3_stmt *nsys_profile_prepare(nsys_profile *p, nsys_task *task, const char *sql);

/* Records the error for a failed sqlite3_step()/prepare result `rc` on call:
 * corruption, short reads and NOTADB become NSYS_E_CORRUPT (-32016), the rest
 * NSYS_E_INTERNAL. `what` says what was being read. Returns false. */
bool nsys_profile_sql_fail(nsys_profile *p, nsys_task *task, int rc, const char *what);

/* Re-stats the file: returns true when it is still the file that was opened;
 * otherwise records NSYS_E_PROFILE_CHANGED (-32013, deleted or replaced) on
 * task and returns false. */
bool nsys_profile_check_unchanged(const nsys_profile *p, nsys_task *task);

/* The real name of logical table t quoted as an SQL identifier ("..."),
 * written into out; returns false (out = "") when the table is absent. */
bool nsys_profile_table_sql(const nsys_profile *p, nsys_table t, char *out, size_t cap);

/* Opens another connection to the profile's SQLite file with the same
 * read-only guarantee as p->db (URI mode=ro&immutable=1: no write, no lock,
 * no -journal/-wal/-shm beside the file), e.g. a private NOMUTEX handle for a
 * worker thread. flags: extra SQLITE_OPEN_* (e.g. SQLITE_OPEN_NOMUTEX).
 * Returns NULL after nsys_task_fail(NSYS_E_IO) on failure. Close with
 * sqlite3_close(). Use this, never sqlite3_open_v2(path, ...), on profiles.
 * Like p->db, its statements stop (SQLITE_INTERRUPT) when the task bound to
 * the stepping thread (nsys_task_enter) is cancelled. */
sqlite3 *nsys_profile_open_db(const nsys_profile *p, int flags, nsys_task *task);

/* Exact row counts of whole tables (real names): counts[i] for tables[i], -1
 * for a table that cannot be counted (unreadable, or a name with a double
 * quote). Tables the summary counted at open are answered from it; the rest
 * run COUNT(*) on a private connection that a cancellation of task interrupts
 * (profile/row_count.c). False after nsys_task_fail (cancelled, or no
 * connection). */
bool nsys_profile_count_rows(nsys_profile *p, nsys_task *task, const char *const *tables, int n,
                             int64_t *counts);

/* Schema generation as a stable string: "META_DATA_EXPORT",
 * "EXPORT_META_DATA", "pre-2022" or "unknown". */
const char *nsys_schema_gen_name(nsys_schema_gen g);

/* Derived ids (see schema reference §1.3). */
static inline uint32_t nsys_gtid_tid(int64_t g) { return (uint32_t)((uint64_t)g & 0xFFFFFF); }
static inline uint32_t nsys_gtid_pid(int64_t g) { return (uint32_t)(((uint64_t)g >> 24) & 0xFFFFFF); }
static inline int64_t nsys_gtid_gpid(int64_t g) { return (int64_t)((uint64_t)g & 0xFFFFFFFFFF000000ULL); }

/* $NSYS_AI_NSYS, else the first executable `nsys` on PATH; NULL when there
 * is none. Caller frees. */
char *nsys_find_nsys(void);

/* The registry of open profiles, shared by all requests (mutex inside). */
typedef struct nsys_profile_registry nsys_profile_registry;

nsys_profile_registry *nsys_registry_new(void);
void nsys_registry_free(nsys_profile_registry *r); /* releases every profile */
/* Adds an opened profile and assigns its id. Takes over the caller's reference
 * and returns a new retained reference for the caller. If a profile of the
 * same file identity is already open, `p` is released and the existing one is
 * returned (retained). */
nsys_profile *nsys_registry_add(nsys_profile_registry *r, nsys_profile *p);
/* Retained profile by id, or NULL. */
nsys_profile *nsys_registry_get(nsys_profile_registry *r, const char *id);
/* Removes id; returns false when not open. */
bool nsys_registry_remove(nsys_profile_registry *r, const char *id);
/* Retained snapshot of all open profiles; free the array with free() after
 * releasing each. */
nsys_profile **nsys_registry_list(nsys_profile_registry *r, int *n);

/* The cache file for this profile's derived data: nsys_cache_dir()/PREFIX-HASH.bin,
 * HASH over the path and the file identity (device, inode, size, mtime), so a
 * changed file gets a new name. *path_hash is the hash of the path alone (cache
 * headers repeat it). NULL when there is no cache directory. Caller frees. */
char *nsys_profile_cache_file(const nsys_profile *p, const char *prefix, uint64_t *path_hash);

#endif
