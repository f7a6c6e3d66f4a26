/* Queries over a built index: the timeline's track list, zoom buckets and
 * events, and the NVTX projection sweep. No cJSON here (methods/ converts).
 * Other modules may use these too. */
#ifndef NSYS_INDEX_QUERY_H
#define NSYS_INDEX_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "index/index.h"

typedef enum {
  NSYS_TL_GPU = 0,  /* GPU ops of one stream: rows are op ids */
  NSYS_TL_PROJ = 1, /* NVTX ranges projected on one GPU at one depth: rows are projection entries */
  NSYS_TL_NVTX = 2, /* NVTX ranges of one thread at one depth: rows are NVTX ids */
  NSYS_TL_API = 3,  /* CUDA API calls of one thread: rows are API ids */
} nsys_tl_kind;

typedef struct nsys_tl_track {
  nsys_tl_kind kind;
  uint32_t ref;      /* gpu track index / projected row / NVTX depth row / thread index */
  int32_t device;    /* GPU and PROJ */
  int64_t stream;    /* GPU */
  uint32_t pid, tid; /* GPU (pid only), NVTX, API */
  int32_t depth;     /* PROJ and NVTX; -1 otherwise */
  uint32_t thread;   /* NVTX and API: index into ix->threads */
  uint32_t count;    /* items on the track */
  uint32_t order;    /* display order (0 first) */
  char id[64];       /* "gpu:D:S", "proj:D:depth", "nvtx:PID:TID:depth", "api:PID:TID" */
} nsys_tl_track;

/* One bucket of a zoom query. `count` items start in [start, end); busy_ns is
 * the time in [start, end) covered by any item of the track (including items
 * that started earlier), so busy_ns <= end - start. */
typedef struct nsys_tl_bucket {
  int64_t start, end;
  uint32_t count;
  int64_t busy_ns;
  uint32_t longest;     /* row (op/NVTX/API id) of the longest item; UINT32_MAX when count == 0 */
  int64_t longest_dur;
} nsys_tl_bucket;

typedef void (*nsys_tl_bucket_fn)(void *ctx, const nsys_tl_bucket *b);
typedef void (*nsys_tl_event_fn)(void *ctx, uint32_t row);

uint32_t nsys_tl_track_count(const nsys_index *ix);
const nsys_tl_track *nsys_tl_track_at(const nsys_index *ix, uint32_t i);
/* Index of the track with this id, or -1. */
int64_t nsys_tl_track_find(const nsys_index *ix, const char *id);

/* Items whose start lies in [qs, qe). */
uint32_t nsys_tl_count(const nsys_index *ix, uint32_t track, int64_t qs, int64_t qe);
/* Items overlapping the window: start < qe and end >= qs. Returns how many. */
uint32_t nsys_tl_events(const nsys_index *ix, uint32_t track, int64_t qs, int64_t qe,
                        nsys_tl_event_fn fn, void *ctx);
/* Buckets [base + k*res, base + (k+1)*res) for k in [0, nb): calls fn for each
 * bucket that has items starting in it or busy time (others are empty). */
uint32_t nsys_tl_buckets(const nsys_index *ix, uint32_t track, int64_t base, int64_t res,
                         uint32_t nb, nsys_tl_bucket_fn fn, void *ctx);

/* A growable array of buckets, and the nsys_tl_bucket_fn that appends to one
 * (ctx = the nsys_tl_bucket_vec; free b when done). */
typedef struct {
  nsys_tl_bucket *b;
  uint32_t n, cap;
} nsys_tl_bucket_vec;
void nsys_tl_bucket_collect(void *ctx, const nsys_tl_bucket *bk);

/* Row accessors for a track kind. Rows of PROJ tracks are projection
 * entries: nsys_tl_proj_nvtx() gives the NVTX range of one. */
uint32_t nsys_tl_proj_nvtx(const nsys_index *ix, uint32_t proj_row);
void nsys_tl_row(const nsys_index *ix, nsys_tl_kind kind, uint32_t row, int64_t *start,
                 int64_t *end, uint32_t *name);

/* The projection sweep (nvtx_gpu_proj_trace semantics): for every CUDA API
 * call of `thread` that launched GPU ops, calls fn with the NVTX ranges of
 * the same thread that contain the call ([range.start, range.end] contains
 * [call.start, call.end]), outermost first; enc[n-1] is the innermost.
 * fn returns false to stop the sweep (a cancelled request); the sweep then
 * returns false. */
typedef bool (*nsys_nvtx_sweep_fn)(void *ctx, uint32_t api, const uint32_t *enc, uint32_t n);
bool nsys_nvtx_sweep(const nsys_index *ix, uint32_t thread, nsys_nvtx_sweep_fn fn, void *ctx);

/* Op kind as a string: "kernel", "memcpy", "memset". */
const char *nsys_op_kind_name(uint8_t kind);
const char *nsys_stream_class_name(uint8_t cls);

#endif
