/* kernel/explain: identity (knowledge base + name analysis), launch
 * configuration and theoretical occupancy, evidence from the profile
 * (cached per-name statistics, the detectors of detect.h), suggestions and
 * hover-ready markdown. The result is a C struct; methods/explain_json.c
 * turns it into the protocol's JSON (protocol/schemas/kernel.explain.result.json).
 * No JSON here. */
#ifndef NSYS_EXPLAIN_H
#define NSYS_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"
#include "explain/context.h"
#include "explain/detect.h"
#include "explain/kb.h"
#include "explain/kernel_name.h"
#include "explain/kernel_stats.h"
#include "explain/occupancy.h"
#include "index/index.h"

struct nsys_profile;

typedef struct nsys_explain_req {
  struct nsys_profile *p;  /* NULL: explain a name from the knowledge base only */
  const nsys_index *ix;    /* the profile's index (NULL when p is NULL) */
  const char *name;        /* shortName or demangledName; NULL when kernel_id >= 0 */
  int64_t kernel_id;       /* op id in the index, or -1 */
} nsys_explain_req;

/* A growable list of owned strings. */
typedef struct nsys_explain_texts {
  char **v;
  int n, cap;
} nsys_explain_texts;

/* The GPU an op ran on (cc_major -1, sm_count 0 when unknown). */
typedef struct nsys_explain_gpu {
  char name[128];             /* "" when unknown */
  const nsys_gpu_spec *spec;  /* NULL when unknown */
  int cc_major, cc_minor, sm_count;
} nsys_explain_gpu;

typedef struct nsys_explain_stream {
  int32_t device;
  int64_t stream;
} nsys_explain_stream;

/* Where the kernel's family ranks in the whole-profile ranking (context.h). */
typedef struct nsys_explain_priority {
  char item[128];        /* the kernel's ranking label */
  int rank;              /* 1-based; 0 when outside the ranking */
  int64_t item_ns;       /* that item's time (when rank > 0) */
  int of;                /* items in the ranking */
  char first_item[128];
  int64_t first_ns;
  double first_pct;      /* of ranked time */
  int64_t ranked_ns;     /* GPU operation time plus idle time */
  bool is_first;         /* the largest name of the first item */
} nsys_explain_priority;

typedef struct nsys_explain_result {
  char *name, *demangled_name;   /* owned */
  char display_name[NSYS_KNAME_DISPLAY_MAX + 8];
  int64_t kernel_id;             /* as asked, -1 when asked by name */
  bool in_profile;
  const char *origin, *category; /* static or the KB's */
  const nsys_kb_pattern *pattern;/* NULL: not in the knowledge base */
  const char *description;
  nsys_kname_info info;          /* precision, tensor cores, tile, NCCL fields */
  const char *bound, *typical_bound;
  nsys_explain_texts reasons;    /* why that bound */
  /* launch configuration and occupancy of the representative instance */
  bool have_launch;
  int64_t launch_op;
  nsys_launch launch;
  bool have_occ;
  nsys_occupancy occ;
  nsys_explain_gpu gpu;
  /* statistics of the name (or of the instance's demangled name) */
  bool have_stats;
  nsys_kstats stats;
  int n_streams;                 /* min(stats.n_tracks, NSYS_KSTATS_MAX_STREAMS) */
  nsys_explain_stream streams[NSYS_KSTATS_MAX_STREAMS];
  bool have_nvtx_path;           /* a representative instance exists */
  char nvtx_path[512];
  bool have_priority;
  nsys_explain_priority priority;
  nsys_explain_texts suggestions;
  int n_evidence_suggestions;    /* suggestions[0 ..) drawn from the profile's evidence, before the priority statement */
  int first_kb_suggestion;       /* index of the first knowledge-base suggestion, -1 when none applies */
  nsys_explain_texts withheld, withheld_reasons; /* KB suggestions whose preconditions fail, and why */
  bool have_context;
  nsys_explain_context context;  /* a copy of the profile's context (its pointers are left NULL) */
  bool have_detect;              /* a kernel in a profile: the detectors ran */
  nsys_detect detect;            /* their evidence around its instances (detect.h) */
  bool fires_copies, fires_unified_memory, fires_launch_bound; /* which detectors explain its time */
  char *markdown;                /* owned */
} nsys_explain_result;

/* Explains a kernel (or a copy or a memset name) into *out (free it with
 * nsys_explain_result_free, also after a failure). False after
 * nsys_task_fail(): -32008 for an unknown kernelId, -32800 when cancelled.
 * A name absent from the profile still gets the knowledge base's
 * explanation, with in_profile false and no stats. */
bool nsys_explain_kernel(nsys_task *task, const nsys_explain_req *req, nsys_explain_result *out);
void nsys_explain_result_free(nsys_explain_result *r);

/* The server's warm-up (rpc/warm.c): runs the detectors of kernel/explain
 * ahead for short names `names` (largest first) on each device they ran on,
 * and keeps them in cx's memo (as a click would), at most max_pairs (name,
 * device) pairs; pause(pause_ctx) (may be NULL) before each. O(k) per name
 * to find its devices plus the detectors' O(k log k) per pair. False when
 * the task was cancelled. */
bool nsys_explain_warm_detectors(const struct nsys_profile *p, const nsys_index *ix, const nsys_explain_context *cx,
                                 const uint32_t *names, uint32_t n_names, uint32_t max_pairs, nsys_task *task,
                                 void (*pause)(void *), void *pause_ctx);

/* Guesses a category from a name for kernels the KB does not know
 * ("gemm", "reduction", "copy", ...); "unknown" when nothing fits. */
const char *nsys_explain_guess_category(const char *name);

#endif
