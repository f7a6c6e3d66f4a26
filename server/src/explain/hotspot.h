/* The report's "Hotspot" verdict, decided by explain: what the profile's
 * largest kernel's time is (its own work, or unified-memory migration,
 * pageable/synchronous copies, launch overhead, serial execution: the
 * detectors of detect.h), where its family ranks in the whole-profile
 * ranking (context.h), and the recommendation that fits the GPU and the
 * framework (advice.c). No JSON: analysis/report.c reads the struct. */
#ifndef NSYS_EXPLAIN_HOTSPOT_H
#define NSYS_EXPLAIN_HOTSPOT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/task.h"
#include "explain/detect.h"
#include "index/index.h"

struct nsys_profile;

typedef enum {
  NSYS_HOTSPOT_OWN_WORK = 0,     /* the kernel's own computation: optimise the kernel */
  NSYS_HOTSPOT_UNIFIED_MEMORY,   /* page migrations / GPU page faults during it */
  NSYS_HOTSPOT_COPIES,           /* pageable or synchronous copies next to it on its stream */
  NSYS_HOTSPOT_LAUNCH_BOUND,     /* shorter than its launch calls, stream empty */
  NSYS_HOTSPOT_SERIAL            /* one thread in one block */
} nsys_hotspot_cause;

/* "own_work", "unified_memory", "copies", "launch_bound", "serial". */
const char *nsys_hotspot_cause_name(nsys_hotspot_cause c);

typedef struct nsys_explain_hotspot {
  nsys_hotspot_cause cause;
  char cause_text[384];      /* "" for own work; else what its time is, with the evidence */
  char recommendation[768];  /* what to do, in the framework's terms; "" when explain has none */
  char origin[64], category[64]; /* explain's identity of the kernel ("unknown" when not in the KB) */
  char family[128];          /* its ranking label ("cublas gemm", "user kernel um_touch") */
  int rank, of;              /* its family's rank in the whole-profile ranking (0: outside) and the items ranked */
  char first[128];           /* the ranking's first item ("GPU idle", a family, a copy kind) */
  int64_t first_ns;
  double first_pct;          /* of ranked time (GPU operation time plus idle) */
  bool is_first;             /* the kernel is the largest name of the first item */
  nsys_detect detect;        /* the detectors' evidence */
} nsys_explain_hotspot;

/* The verdict on kernel `name` (a short name, e.g. top_kernels' first row).
 * False when the profile has no kernel of that name (out untouched apart
 * from zeroing), or after nsys_task_fail() when cancelled. */
bool nsys_explain_hotspot_of(struct nsys_profile *p, const nsys_index *ix, const char *name, nsys_task *task,
                             nsys_explain_hotspot *out);

#endif
