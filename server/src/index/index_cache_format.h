/* The on-disk index cache's format, shared by index_cache_save.c and
 * index_cache_load.c: nsys_cache_dir()/index-<key>.bin.
 *
 * Key: file identity (path, dev, ino, size, mtime_ns); the header repeats it
 * with a format version, the struct sizes, the element counts, the payload
 * size and a checksum of the payload. The payload holds the contract arrays
 * AND what nsys__index_derive computes from them (NVTX rows per (thread,
 * depth), the NVTX projection, every track's zoom summary series), so a
 * reopen maps the file, checks it and points the arrays into the mapping: no
 * recomputation, no copy. Display names are the exception: the cache keeps
 * each kernel name's short name and the load makes the display names again
 * (per distinct name, not per op), so that a change of the display rules in
 * common/kname_display.c never leaves stale names in old caches. Anything
 * else computed in index/ that the file stores must bump the version when
 * its computation changes.
 *
 * The check is one pass over the payload (nsys__verify): each 32 KiB chunk
 * is summed into the checksum and, while it is in L1, its index entries are
 * range-checked (op -> track, name -> string, call -> op, ...); a large
 * payload is split in two halves checked by two threads, the two partial
 * checksums concatenated (nsys__sum_concat), so the result is the same.
 * After the pass the small structures (tracks, threads, rows, series block
 * tables) are checked against each other, so a file whose checksum matches
 * but whose content is inconsistent (a crafted file) still cannot make a
 * query read out of bounds. Any mismatch (stale, truncated, corrupt, other
 * version, inconsistent) makes the load return NULL and the caller silently
 * rebuilds. Files are 0600, written to a unique temporary name (in 2 MiB
 * writes, see nsys__writer), then renamed.
 *
 * Payload (every section padded to 8 bytes, in this order; n_series =
 * n_tracks + n_threads + n_depth_rows + n_proj_rows, the series in that order):
 *   string lengths u32[n_strings], string bytes (NUL-terminated), tracks,
 *   ops: start end rowid (i64) name full_name track api op_next (u32) kind (u8),
 *   threads, api: start end correlation rowid (i64) name thread first_op (u32),
 *   nvtx: start end (i64) name domain thread parent (u32) depth (u16),
 *   proj rows, proj start end (i64) nvtx (u32), short name of each kernel
 *   name u32[n_display] (NSYS_STR_NONE: not a kernel name),
 *   thread_depth_first u32[n_threads + 1], depth_row_first u32[n_depth_rows],
 *   depth_row_count u32[n_depth_rows], nvtx_by_depth u32[n_nvtx],
 *   series blk_union i64[n_blocks + n_series], blk_maxend i64[same],
 *   blk_longest u32[n_blocks], sup_longest u32[n_super] (each concatenated
 *   over the series). */
#ifndef NSYS_INDEX_CACHE_FORMAT_H
#define NSYS_INDEX_CACHE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "index/index_internal.h"

#define NSYS__CACHE_MAGIC "NSYSAIX"
/* 3: graph launches (NSYS_OP_GRAPH); 4: four-lane checksum; 5: derived data
 * stored (display names, NVTX rows, series), checked in one fused pass;
 * 6: display names made at load from stored short names; 7: CUDA-backtrace
 * API rows (eventClass 67-69) merged into the calls they repeat */
#define NSYS__CACHE_VERSION 7u

typedef struct {
  char magic[8];
  uint32_t version, header_size;
  uint32_t sizeof_track, sizeof_thread;
  uint64_t dev, ino, size, mtime_ns, path_hash;
  uint64_t payload_size, checksum;
  uint32_t n_strings, n_tracks, n_ops, n_threads, n_api, n_nvtx;
  int64_t span_start, span_end;
  uint64_t string_bytes;
  uint32_t n_proj, n_proj_rows;   /* NVTX projected on GPUs */
  uint32_t n_display, n_depth_rows;
  uint64_t n_blocks, n_super;     /* summed over all series */
  uint32_t sizeof_proj_row, block; /* sizeof(nsys__proj_row), NSYS__BLOCK */
} nsys__cache_header;

/* Checksum over 8-byte words: two running sums (Fletcher-style) in each of
 * four lanes (word i goes to lane i % 4), so the loop runs four independent
 * chains. It runs at memory speed; the reopen reads every byte once. */
typedef struct {
  uint64_t a[4], b[4];
  uint64_t n; /* words summed so far */
} nsys__sum;

void nsys__sum_words(nsys__sum *s, const uint64_t *w, size_t n);
uint64_t nsys__sum_final(const nsys__sum *s);
/* s1 followed by s2 (the words s2 summed come after s1's), as if summed in one pass */
void nsys__sum_concat(nsys__sum *s1, const nsys__sum *s2);

/* The series of an index in payload order: GPU tracks, API threads, NVTX
 * depth rows, projected rows. */
uint32_t nsys__n_series(const nsys_index *ix);
nsys__series *nsys__series_at(const nsys_index *ix, uint32_t i);

#endif
