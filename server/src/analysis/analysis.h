/* Deterministic analyses over a profile's index (and, for the few tables the
 * index does not carry, read-only SQL on the profile). Each analysis is a
 * registry entry: name, description, typed params with defaults, the record
 * types of its rows and summary (analysis/result_defs.h), and a run function
 * that fills them: a typed result (nsys_aresult) that methods/analysis_json.c
 * writes as {name, params, window:{start,end}, rows:[...], summary:{...}}.
 * Every computation works on plain arrays so it is unit-testable with a
 * hand-built nsys_index (p == NULL: SQL-backed parts report missing data). */
#ifndef NSYS_ANALYSIS_H
#define NSYS_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/intervals.h"
#include "analysis/result.h"
#include "index/index.h"
#include "common/task.h"

struct nsys_profile;

typedef enum { NSYS_AP_INT, NSYS_AP_NUM, NSYS_AP_STR, NSYS_AP_BOOL } nsys_aparam_type;

typedef struct nsys_aparam {
  const char *name;
  nsys_aparam_type type;
  const char *def; /* default as text; NULL = no default (absent, null in `params`) */
  const char *desc;
} nsys_aparam;

struct nsys_analysis;

/* Resolved params of one run, typed, by the registry's param index: the
 * analysis's own params in declaration order, then the common ones (start,
 * end, device). Made from defaults (nsys_aparams_defaults) and set by name
 * (nsys_aparams_set_*); methods/analysis_params.c parses them from JSON. */
#define NSYS_APARAMS_MAX 16
typedef struct nsys_aval {
  bool set;      /* false: null (no value and no default) */
  bool integral; /* NSYS_AP_NUM only: the value was written as an integer (`i` exact) */
  int64_t i;     /* NSYS_AP_INT; NSYS_AP_NUM when integral */
  double num;    /* NSYS_AP_NUM (and INT, as a double) */
  bool b;        /* NSYS_AP_BOOL */
  char *str;     /* NSYS_AP_STR; owned */
} nsys_aval;

typedef struct nsys_aparams {
  const struct nsys_analysis *a;
  uint32_t n;                       /* declared params (own + common) */
  nsys_aval v[NSYS_APARAMS_MAX];
} nsys_aparams;

/* Every declared param at its default. */
void nsys_aparams_defaults(nsys_aparams *ps, const struct nsys_analysis *a);
void nsys_aparams_dispose(nsys_aparams *ps);
void nsys_aparams_copy(nsys_aparams *dst, const nsys_aparams *src);
/* The declaration of param i (0 <= i < ps->n) and the index of `name` (-1: undeclared). */
const nsys_aparam *nsys_aparams_decl(const nsys_aparams *ps, uint32_t i);
int nsys_aparams_index(const nsys_aparams *ps, const char *name);
/* Setters by name; the name must be declared with that type (abort otherwise: a programming error). */
void nsys_aparams_set_null(nsys_aparams *ps, const char *name);
void nsys_aparams_set_int(nsys_aparams *ps, const char *name, int64_t v);
void nsys_aparams_set_num(nsys_aparams *ps, const char *name, double v);
void nsys_aparams_set_num_int(nsys_aparams *ps, const char *name, int64_t v); /* a NUM written as an integer */
void nsys_aparams_set_str(nsys_aparams *ps, const char *name, const char *v);
void nsys_aparams_set_bool(nsys_aparams *ps, const char *name, bool v);
/* The value of a declared param (abort when undeclared). */
const nsys_aval *nsys_aparams_get(const nsys_aparams *ps, const char *name);

/* What the analyses derive from the index alone (never from params or the
 * window), filled lazily on first use. A context owns one (`own`) unless the
 * caller lends it one (nsys_analysis_exec's cache): report/generate and
 * profile/diff lend one per index to all the analyses of the run, so each is
 * built once per run. Not thread-safe: one run (one thread) uses it at a time. */
typedef struct nsys_acache {
  const nsys_index *ix;   /* the index it describes */
  uint8_t *name_nccl;     /* per strtab id: 1 when the name is an NCCL kernel */
  uint8_t *name_api;      /* per strtab id: nsys_api_class */
  int64_t **api_pmax;     /* per thread: running max of api end (for overlap search) */
  uint8_t *op_class;      /* per op: 1 compute kernel, 2 NCCL kernel, 3 memcpy/memset */
  int32_t *nvtx_jump;     /* per NVTX range: a jump pointer up its parent chain (common.c) */
  struct nsys_devorder *devorder;   /* per device (sorted): its ops in merged start order (devunions.h) */
  uint32_t n_devorder;
  struct nsys_devunions *devunions; /* per device (sorted): whole-time unions (devunions.h) */
  uint32_t n_devunions;
  bool devunions_whole;             /* false when a cancelled run cut the build short */
  struct nsys_piddev *piddev;       /* sorted distinct (pid, device) of the tracks */
  uint32_t n_piddev;
  /* built on first use by nsys_win_cached (window.h), which a memo shared by
   * concurrent requests allows: *_building while one request builds it */
  void *winidx;                     /* nsys_winidx: the windowed paths' track index (window.h) */
  void *phaser;                     /* nsys_gap_phaser: gpu_idle_gaps' phases (gap_phase.h) */
  void *markers;                    /* nsys_markers: the auto-detected iteration marker's ranges (window.h) */
  void *kname[2];                   /* nsys_kname: kernels by (name, track), short and demangled names (kname.h) */
  void *klaunch;                    /* nsys_klaunch: kernel_launch_overhead's per-name sums (klaunch.h) */
  void *ksweep;                     /* nsys_ksweep: kernel_launch_overhead's per-device sweep (klaunch_sweep.h) */
  void *sgaps;                      /* nsys_sgaps: gpu_idle_gaps' stream gaps of the whole walk (gap_streams.h) */
  bool winidx_building, phaser_building, markers_building, kname_building[2], klaunch_building, ksweep_building;
  bool sgaps_building;
  bool lent;                        /* lent to several runs: worth building whole-device unions */
  bool built;                       /* built whole (nsys_acache_build): only read from then on */
} nsys_acache;

void nsys_acache_init(nsys_acache *k, const nsys_index *ix);
void nsys_acache_dispose(nsys_acache *k);
/* Builds everything a cache holds at once and marks it lent and built, so
 * that runs on several threads then only read it (nsys_analysis_exec_all,
 * analysis/amemo.h). False when the task was cancelled (the cache is then
 * partly built: dispose it). A built cache is returned at once. */
bool nsys_acache_build(nsys_acache *k, nsys_task *task);
/* Fills the per-name and per-op classes (op_class) alone, as the build
 * does first (analysis/amemo_file.c checks a saved memo against them). */
void nsys_acache_fill_classes(nsys_acache *k);

/* Everything an analysis run may touch. */
typedef struct nsys_actx {
  nsys_task *task;        /* cancellation, progress, the first error */
  struct nsys_profile *p; /* NULL in unit tests: SQL-backed parts are skipped */
  const nsys_index *ix;
  nsys_aparams params;    /* resolved: every declared param, defaults applied */
  int64_t t0, t1;         /* the analysis window (clipped to the index span) */
  int32_t device;         /* params.device, -1 = all devices */
  nsys_acache *cache;     /* &own, or the caller's (nsys_analysis_run_cached) */
  nsys_acache own;
  bool stopped;                     /* the request was cancelled (nsys_actx_stop) */
} nsys_actx;

/* Cancellation poll for the analyses' loops: true once the request is
 * cancelled. Reads the request's flag every 2^16 values of i (a loop index),
 * then stays true, so nested loops unwind at once. The run's answer is then
 * discarded for -32800 (nsys_analysis_exec). */
static inline bool nsys_actx_stop(nsys_actx *c, uint64_t i) {
  if (c->stopped) return true;
  if ((i & 0xFFFF) == 0 && nsys_task_cancelled(c->task)) c->stopped = true;
  return c->stopped;
}

/* Fills rows (a table of the analysis's row record type) and summary (a
 * record of its summary type); false after nsys_task_fail. */
typedef bool (*nsys_analysis_fn)(nsys_actx *ctx, nsys_rtab *rows, nsys_rec summary);

typedef struct nsys_analysis {
  const char *name;
  const char *description;
  const nsys_aparam *params; /* terminated by {NULL} */
  nsys_analysis_fn run;
  const nsys_rdef *row, *summary; /* record types of rows and summary */
} nsys_analysis;

/* The registry (terminated by {NULL}) and lookup. */
extern const nsys_analysis nsys_analyses[];
const nsys_analysis *nsys_analysis_find(const char *name);
/* The same, or NULL after -32010 (unknown analysis) on task. */
const nsys_analysis *nsys_analysis_find_or_fail(nsys_task *task, const char *name);
/* The params every analysis accepts after its own (start, end, device). */
extern const nsys_aparam nsys_analysis_common_params[];

/* A typed analysis result: what methods/analysis_json.c writes as
 * {name, params, window:{start,end}, rows, summary}. A stub (a == NULL: the
 * report's stand-in for an analysis whose data is missing) is only
 * {rows: [], summary: {}}. */
typedef struct nsys_aresult {
  const nsys_analysis *a; /* NULL: a stub */
  nsys_aparams params;    /* resolved */
  int64_t t0, t1;         /* the window */
  nsys_rtab *rows;        /* of a->row */
  nsys_rec summary;       /* of a->summary */
} nsys_aresult;

/* An empty stub result, and freeing any result (NULL is fine). */
nsys_aresult *nsys_aresult_stub(void);
void nsys_aresult_free(nsys_aresult *r);

/* Runs `name` on an index with `params` (resolved for that analysis; NULL:
 * the defaults). p may be NULL (unit tests). `cache`: the index caches of
 * the caller (nsys_acache_init'ed on ix, disposed after the last run that
 * uses it), NULL = the profile's memo (analysis/amemo.h), else (no profile,
 * or the memo turned off) a cache of the run's own; answers are the same
 * byte for byte either way. Returns the result, or NULL after nsys_task_fail()
 * (-32800 when cancelled). */
nsys_aresult *nsys_analysis_exec(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, const char *name,
                                 const nsys_aparams *params, nsys_acache *cache);

/* One run of nsys_analysis_exec_all: the inputs, then its result and status. */
typedef struct nsys_aexec {
  struct nsys_profile *p;
  const nsys_index *ix;
  const char *name;
  const nsys_aparams *params; /* NULL: defaults */
  nsys_acache *cache;         /* shared by runs on the same index, or NULL */
  nsys_aresult *result;       /* out: NULL when the run failed (task says why) */
  nsys_task task;             /* out: the run's own status; a child of the caller's task */
} nsys_aexec;

/* Runs every run on up to one thread per CPU (NSYS_AI_ANALYSIS_THREADS caps
 * it), after building each shared cache whole (nsys_acache_build); progress
 * `title` on task. The results are those of running them one after another.
 * False (task failed: cancelled) when a cache build was cut short; otherwise
 * true, with each run's outcome in its result and task. */
bool nsys_analysis_exec_all(nsys_task *task, nsys_aexec *runs, uint32_t n, const char *title);
/* Threads for n independent parts: NSYS_AI_ANALYSIS_THREADS when set (1:
 * one after another on the calling thread), else the online CPUs; never
 * more than n. */
uint32_t nsys_analysis_threads(uint32_t n);
/* fn(arg, i) for every i < n, on nsys_analysis_threads(n) threads, the
 * calling thread included (it alone calls tick(arg, parts done so far) after
 * each of its parts, when tick is not NULL). Returns when all are done. */
void nsys_analysis_parallel(uint32_t n, void (*fn)(void *arg, uint32_t i), void *arg,
                            void (*tick)(void *arg, uint32_t done));

/* --- shared helpers (analysis/common.c) --- */
typedef enum {
  NSYS_API_OTHER = 0,
  NSYS_API_LAUNCH,   /* cudaLaunchKernel*, cuLaunch*, cudaGraphLaunch */
  NSYS_API_SYNC,     /* *Synchronize, cudaStreamWaitEvent */
  NSYS_API_MEMCPY,   /* cudaMemcpy*, cudaMemset*, cuMemcpy*, cuMemset* */
  NSYS_API_MEMCPY_SYNC, /* the blocking flavours: cudaMemcpy, cudaMemset, cudaMemcpy2D, ... */
  NSYS_API_MODULE,   /* module/library loads and JIT linking: cuModuleLoad*, cuLibraryLoad*, cuLink* */
  NSYS_API_ALLOC,    /* device/host allocation: cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemCreate, ... */
  NSYS_API_HOST_REGISTER, /* pinning host memory: cudaHostRegister, cuMemHostRegister (and un-) */
  NSYS_API__COUNT
} nsys_api_class;

bool nsys_name_is_nccl(const char *name);
nsys_api_class nsys_api_classify(const char *name);
bool nsys_actx_is_nccl_op(nsys_actx *c, uint32_t op); /* kernel whose name is NCCL */
nsys_api_class nsys_actx_api_class(nsys_actx *c, uint32_t api);
/* The class of every string id as an API name (nsys_api_class values, one
 * byte each, ix->strings.count of them): nsys_actx_api_class without a call
 * per API call, for loops over all of them. */
const uint8_t *nsys_actx_api_classes(nsys_actx *c);
/* Distinct devices present in tracks (sorted); returns count, *out malloc'd. */
uint32_t nsys_actx_devices(nsys_actx *c, int32_t **out);
bool nsys_actx_device_selected(const nsys_actx *c, int32_t device);
/* Ops filter used to build unions: returns true to include op i. */
typedef bool (*nsys_op_pred)(nsys_actx *c, uint32_t op);
bool nsys_pred_kernel(nsys_actx *c, uint32_t op);
bool nsys_pred_kernel_or_graph(nsys_actx *c, uint32_t op); /* kernel or CUDA graph launch */
bool nsys_pred_any(nsys_actx *c, uint32_t op);
bool nsys_pred_compute(nsys_actx *c, uint32_t op); /* kernel, not NCCL, or a CUDA graph launch */
bool nsys_pred_comm(nsys_actx *c, uint32_t op);    /* NCCL kernel */
/* Union of the ops of `device` (all tracks) that satisfy pred, clipped to [a,b). */
void nsys_actx_device_union(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t a, int64_t b,
                            nsys_ivls *out);
/* The same union, read-only: the cache's whole-time union itself when [a,b)
 * holds every op of the device and the cache keeps one for pred (a lent
 * cache: no copy, already indexed for nsys_ivls_len_in), else `scratch`
 * filled as nsys_actx_device_union does (and indexed). Never modify it. */
const nsys_ivls *nsys_actx_device_union_ref(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t a, int64_t b,
                                            nsys_ivls *scratch);
/* Up to 4 unions in one pass (preds[k] -> outs[k]), clipped to [a,b). */
void nsys_actx_device_unions(nsys_actx *c, int32_t device, int64_t a, int64_t b, const nsys_op_pred *preds,
                             nsys_ivls *const *outs, int n);
/* Calls fn for every op of `device` overlapping [a,b), in start order. */
void nsys_actx_device_each(nsys_actx *c, int32_t device, int64_t a, int64_t b,
                           void (*fn)(nsys_actx *c, uint32_t op, void *ud), void *ud);
/* First and last op time of a device (ops satisfying pred); false when none. */
bool nsys_actx_device_span(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t *s,
                           int64_t *e);
/* Calls fn for every API call of `thread` overlapping [a,b) (start < b && end > a). */
void nsys_actx_api_overlapping(nsys_actx *c, uint32_t thread, int64_t a, int64_t b,
                               void (*fn)(nsys_actx *c, uint32_t api, void *ud), void *ud);
/* Does the process of `thread` own a track on `device`? O(log tracks). */
bool nsys_actx_thread_on_device(nsys_actx *c, uint32_t thread, int32_t device);
/* Innermost NVTX range on `thread` containing [s,e], or -1. O(log n), any depth. */
int32_t nsys_actx_innermost_nvtx(nsys_actx *c, uint32_t thread, int64_t s, int64_t e);
/* The first of range r and its ancestors that ends at or after e, or -1. O(log depth). */
int32_t nsys_actx_nvtx_enclosing(nsys_actx *c, int32_t r, int64_t e);
/* Params getters by name on the resolved params (the name must be declared). */
int64_t nsys_actx_int(const nsys_actx *c, const char *name);
double nsys_actx_num(const nsys_actx *c, const char *name);
const char *nsys_actx_str(const nsys_actx *c, const char *name); /* NULL when unset */
bool nsys_actx_bool(const nsys_actx *c, const char *name);
/* Percentiles on a sorted array (nearest-rank on (n-1)*q, linear interpolation). */
double nsys_percentile_sorted(const int64_t *v, uint32_t n, double q);
void nsys_sort_i64(int64_t *v, size_t n);
/* A 64-bit key mixed so that every bit reaches the low ones (MurmurHash3's
 * finaliser, first half): the slot of open-addressing tables of id pairs. */
static inline uint64_t nsys_mix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}
/* Case-insensitive substring test. */
bool nsys_icontains(const char *hay, const char *needle);
/* Per string id (strings.count + 1 entries, caller frees): 1 where the string
 * names an NVTX range and `is_match(name, ud)` holds, else 0. Only NVTX range
 * names are tested (kernel names are most of the text): stages, iteration markers. */
uint8_t *nsys_nvtx_names_where(const nsys_index *ix, bool (*is_match)(const char *name, const void *ud), const void *ud);
/* v rounded to 2 decimals (percentages, rates). */
double nsys_round2(double v);

#endif
