/* The per-profile memo's costly part saved beside the index cache, so that a
 * cached open's first analysis reads it instead of building it: every
 * device's ops in merged start order and its whole-time unions
 * (devunions.h), which cost a heap merge of every device's tracks. The rest
 * of the memo (name and op classes, API search arrays, NVTX jumps) is one
 * sequential pass each and is built as before.
 *
 * File: nsys_cache_dir()/memo-<key>.bin, the key of the index cache (the
 * profile's path and identity: nsys_profile_cache_file), never beside the
 * profile. Header: magic, format version, the index cache's version, the
 * profile identity, the index's counts and span, a hash of the tracks
 * (device, first op, count), a hash of the per-op classes the unions were
 * built from (so a change of the classification rules never reads stale
 * unions), payload size and checksum (index_cache_format.h's four-lane sum).
 * Payload (8-byte aligned sections): a table of devices {device, n_ops,
 * min_start, max_end, interval counts of compute, comm, any, both, kernel},
 * then per device its op order u32[n_ops] and each union's starts, ends and
 * prefix lengths (i64[n], i64[n], i64[n + 1]).
 *
 * A file that does not match (stale, other version, truncated, corrupt, or
 * whose content fails the checks: device list and op counts against the
 * index's tracks, op ids in range, unions sorted, disjoint and their prefix
 * sums consistent) is ignored (and removed) and the memo is built; it is
 * never trusted. Written to a unique temporary name (common/cache_tmp.c),
 * 0600, then renamed: concurrent servers never read a half-written file.
 * NSYS_AI_VERBOSE logs each read, save and ignored file (tests). */
#ifndef NSYS_ANALYSIS_AMEMO_FILE_H
#define NSYS_ANALYSIS_AMEMO_FILE_H

#include <stdbool.h>

#include "analysis/analysis.h"

struct nsys_profile;

/* Reads p's saved memo into k (its device orders and unions, marked whole),
 * k initialised on p's index with its classes filled
 * (nsys_acache_fill_classes). False, k untouched, when there is none to use. */
bool nsys_amemo_file_load(struct nsys_profile *p, nsys_acache *k);

/* Memo files read whole so far in this process (tests). */
uint64_t nsys_amemo_file_reads(void);

/* Saves k (built whole) as p's memo file; failures are logged, not fatal. */
void nsys_amemo_file_save(struct nsys_profile *p, const nsys_acache *k);

#endif
