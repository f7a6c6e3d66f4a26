/* The server's background warm-up (issue 19): after profile/open answers,
 * one low-priority thread builds what area selections and explanations read
 * (analysis/awarm.h: the memo, the window indexes, the names' whole
 * statistics; then the explanation context, explain/context.h, and the five
 * largest names' statistics, explain/kernel_stats.h), so that no interaction pays those builds.
 *   - Starts NSYS_AI_WARM_DELAY_MS (default 250) after the open's reply, so
 *     the first frame's requests go first; runs at nice NSYS_AI_INDEX_SAVE_NICE
 *     (default 10, as the index saver; 0 keeps the process's).
 *   - Waits between two builds while requests run (nsys_warm_requests).
 *   - A request that needs a structure being built waits for that one build
 *     (the memo's slots); one that only reads it when built takes its loop.
 *   - Cancelled when its profile is closed (nsys_warm_prune after each
 *     request) or the server exits (nsys_warm_stop); whatever was finished
 *     stays in the profile's memo, a cut-short build keeps nothing.
 *   - NSYS_AI_WARM=0 turns it off (comparisons, benchmarks).
 * One profile at a time, in open order. The CLI never starts it. */
#ifndef NSYS_RPC_WARM_H
#define NSYS_RPC_WARM_H

#include <stdbool.h>

struct nsys_profile_registry;

/* Queues the warm-up of the open profile `id` (nothing when it is not open
 * or already queued). */
void nsys_warm_start(struct nsys_profile_registry *r, const char *id);
/* Cancels the warm-ups of profiles no longer in r (closed). */
void nsys_warm_prune(struct nsys_profile_registry *r);
/* Cancels every warm-up and joins the thread (server exit). */
void nsys_warm_stop(void);
/* delta requests more (+1: queued) or fewer (-1: answered) on the server's
 * pool: the warm-up waits between two builds while any run, so a request
 * never shares the CPU with it (the report after an open is not slowed). */
void nsys_warm_requests(int delta);
/* True while a warm-up is queued or running (tests, benchmarks). */
bool nsys_warm_pending(void);

#endif
