/* The analyses' shared cache of an open profile (a per-profile memo): one
 * nsys_acache per profile, built whole (nsys_acache_build) by the first
 * analysis request on it and kept while the profile is open, so that every
 * later analysis, report/generate and the analyses of set methods read the
 * device orders and unions, op classes and API search arrays instead of
 * rebuilding them. Built whole, it is only read afterwards: concurrent
 * requests share it. Concurrent first requests wait for one build (polling
 * their own cancellation every 10 ms); a cancelled build is discarded whole,
 * never kept half-built, and the next request builds it again. Freed with
 * the profile (nsys_profile.memo), before its index. Its costly part (the
 * device orders and unions) is read from the memo file saved beside the
 * index cache when one matches, and saved there after a build
 * (analysis/amemo_file.h).
 * NSYS_AI_ANALYSIS_MEMO=0 turns it off (each run then has a cache of its
 * own, as before: comparisons, benchmarks). Answers are the same byte for
 * byte either way (tests/c/analysis/test_amemo.c). */
#ifndef NSYS_ANALYSIS_AMEMO_H
#define NSYS_ANALYSIS_AMEMO_H

#include <stdbool.h>

#include "analysis/analysis.h"

/* The memo of p for its index ix: *out is the built cache, or NULL when
 * there is none to use (no profile, ix is not p's published index, or
 * turned off). False after nsys_task_fail_cancelled (task cancelled while
 * building or waiting). */
bool nsys_amemo_get(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, nsys_acache **out);

/* The built memo of p for ix, or NULL (none yet, being built, turned off):
 * never builds and never waits. */
nsys_acache *nsys_amemo_peek(struct nsys_profile *p, const nsys_index *ix);

struct nsys_diff_side;
/* profile/diff's side of p (analysis/diff.h: it depends on the profile
 * alone) into *out, a copy the caller frees with nsys_diff_side_free. On a
 * built memo (an analysis or report ran on p) it is built once and kept in
 * the memo (concurrent first requests wait for one build; a cancelled build
 * keeps nothing); otherwise it is built for this request with caches of its
 * own, as a memo built for one diff would cost more than the diff's own
 * passes. False after nsys_task_fail (cancelled). */
bool nsys_amemo_diff_side(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, struct nsys_diff_side *out);

#endif
