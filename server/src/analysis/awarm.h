/* What an area selection (the four windowed analyses) reads, built ahead of
 * the first selection: the profile's memo (amemo.h), then on it the window
 * index, the (name, track) index of short names (kname.h), the launch sums
 * (klaunch.h), the launch sweeps (klaunch_sweep.h), gpu_idle_gaps' phaser and
 * stream gaps (gap_streams.h), the iteration markers (window.h), then every name's whole duration
 * statistics (nsys_kname_whole, the largest names first). Each is built through the memo's own
 * one-build slot (nsys_win_cached): a request that needs one while it is
 * built here waits for it, one that only reads it when built (nsys_win_peek)
 * takes its loop meanwhile; nothing is built twice and a cancelled build
 * keeps nothing. The replies are those of a cold memo byte for byte: every
 * structure depends on the index alone. The server runs it on a background
 * thread after profile/open (rpc/warm.h). */
#ifndef NSYS_ANALYSIS_AWARM_H
#define NSYS_ANALYSIS_AWARM_H

#include <stdbool.h>

#include "analysis/analysis.h"

struct nsys_profile;

/* False when task was cancelled (what was finished is kept) or there is no
 * memo to fill (turned off, or ix is not p's published index). pause (may
 * be NULL) is called between two builds, holding none: the server's waits
 * there while requests run. */
bool nsys_awarm_area(nsys_task *task, struct nsys_profile *p, const nsys_index *ix, void (*pause)(void *ctx),
                     void *ctx);

#endif
