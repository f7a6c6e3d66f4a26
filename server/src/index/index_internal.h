/* Internal interface between the index module's files (build, cache, mipmap,
 * queries). Not for other modules: they use index.h and index_query.h. */
#ifndef NSYS_INDEX_INTERNAL_H
#define NSYS_INDEX_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "index/index_query.h"

struct nsys_profile;

/* ---- reading the profile (index_source.c) ------------------------------ */

/* Logical source tables the index reads. */
typedef enum {
  NSYS__SRC_KERNEL,
  NSYS__SRC_MEMCPY,
  NSYS__SRC_MEMSET,
  NSYS__SRC_GRAPH,
  NSYS__SRC_RUNTIME,
  NSYS__SRC_NVTX,
  NSYS__SRC_THREAD_NAMES,
  NSYS__SRC_STRING_IDS,
  NSYS__SRC__COUNT
} nsys__src_table;

/* A private read-only connection plus resolved table names and a
 * StringIds-id -> strtab-id map. One per reader thread. */
typedef struct nsys__src {
  struct nsys_profile *p;
  sqlite3 *db;
  char table[NSYS__SRC__COUNT][160]; /* quoted SQL identifier, "" when absent */
} nsys__src;

bool nsys__src_open(nsys__src *s, struct nsys_profile *p, nsys_task *task);
void nsys__src_close(nsys__src *s);
bool nsys__src_has(const nsys__src *s, nsys__src_table t);
bool nsys__src_has_column(const nsys__src *s, nsys__src_table t, const char *col);
/* max(rowid) of a table (a cheap upper bound of its row count), 0 when absent. */
int64_t nsys__src_max_rowid(const nsys__src *s, nsys__src_table t);

/* Decoded StringIds value (UTF-8) or NULL. Uses the loader's strings, or a
 * private copy loaded by nsys__strings_fallback_load when the loader left
 * them empty. */
typedef struct nsys__strings {
  struct nsys_profile *p;
  char **fb;          /* fallback: id -> string for 0 <= id < n_fb */
  int64_t n_fb;
  bool use_fb;
} nsys__strings;

void nsys__strings_init(nsys__strings *st, struct nsys_profile *p, nsys__src *src);
void nsys__strings_free(nsys__strings *st);
const char *nsys__strings_get(const nsys__strings *st, int64_t id);

/* StringIds id -> strtab id, interned lazily (one array lookup per row). */
typedef struct nsys__sidmap {
  uint32_t *map;      /* sid -> strtab id + 1, 0 = not yet */
  int64_t cap;
  /* ids outside [0, 1<<26): small open-addressing fallback */
  int64_t *hkeys;
  uint32_t *hvals;
  uint32_t hcap, hcount;
} nsys__sidmap;

typedef enum { NSYS__NAME_PLAIN, NSYS__NAME_STRIP_VERSION } nsys__name_mode;

void nsys__sidmap_free(nsys__sidmap *m);
uint32_t nsys__sidmap_get(nsys__sidmap *m, const nsys__strings *st, nsys_strtab *tab, int64_t sid,
                          nsys__name_mode mode);
/* The same, with the common case (an id already mapped) inline: the per-row path. */
static inline uint32_t nsys__sidmap_lookup(nsys__sidmap *m, const nsys__strings *st, nsys_strtab *tab,
                                           int64_t sid, nsys__name_mode mode) {
  if (sid >= 0 && sid < m->cap && m->map[sid]) return m->map[sid] - 1;
  return nsys__sidmap_get(m, st, tab, sid, mode);
}

/* ---- summaries for zoom queries (index_mipmap.c) ------------------------ */

/* A series: intervals sorted by start, reached through idx[] (or contiguous
 * from `first` when idx == NULL). Blocks of NSYS__BLOCK items carry the union
 * prefix and max-end prefix before the block, and the longest item. */
#define NSYS__BLOCK 16

typedef struct nsys__series {
  const int64_t *start, *end; /* arrays of the underlying table */
  const uint32_t *idx;        /* item i -> table row; NULL: row = first + i */
  uint32_t first, n;
  uint32_t n_blocks;
  int64_t *blk_union;         /* union length of items [0, b*BLOCK) */
  int64_t *blk_maxend;        /* max end of items [0, b*BLOCK), INT64_MIN at 0 */
  uint32_t *blk_longest;      /* item index of the longest item in block b */
  uint32_t n_super;           /* blocks of NSYS__BLOCK blocks */
  uint32_t *sup_longest;      /* item index of the longest item in super block */
} nsys__series;

/* ---- private part of the index ----------------------------------------- */

typedef struct nsys__proj_row {  /* projected NVTX row on one GPU at one depth */
  int32_t device;
  uint16_t depth;
  uint32_t first, count;        /* into priv->proj_* */
} nsys__proj_row;

typedef struct nsys__index_priv {
  /* where the arrays live: one malloc'd or mmap'd block (cache), or NULL
   * when each array was malloc'd separately */
  void *map_base;
  size_t map_size;
  /* per thread and depth: NVTX ranges at that depth sorted by start */
  uint32_t *nvtx_by_depth;       /* n = nvtx.n */
  uint32_t *thread_depth_first;  /* per thread: index into depth_rows */
  uint32_t n_depth_rows;
  uint32_t *depth_row_first;     /* per depth row: offset into nvtx_by_depth */
  uint32_t *depth_row_count;
  /* projected NVTX on GPUs */
  uint32_t n_proj;               /* entries */
  uint32_t *proj_nvtx;           /* range index */
  int64_t *proj_start, *proj_end;
  nsys__proj_row *proj_rows; uint32_t n_proj_rows; /* sorted by (device, depth) */
  bool proj_cached;              /* proj_nvtx/start/end point into the mapped cache */
  /* series for every row kind (built after load) */
  nsys__series *gpu_series;      /* per gpu track */
  nsys__series *api_series;      /* per thread */
  nsys__series *nvtx_series;     /* per depth row */
  nsys__series *proj_series;     /* per projected row */
  nsys_tl_track *tl; uint32_t n_tl; /* timeline tracks in display order */
  /* coarse zoom levels, built on first use: per (track, log2 resolution) the
   * whole track's non-empty buckets (index_coarse.c) */
  pthread_mutex_t coarse_mu;
  struct nsys__coarse *_Atomic *coarse; /* n_tl * 64 slots */
  atomic_llong coarse_buckets;           /* cached buckets, capped */
  /* nvtx/tree's precomputed trees, built on first use (nvtx_tree.c) */
  struct nsys__nvtx_cache *nvtx_trees;
  uint64_t cache_key;            /* identity hash, for diagnostics */
  bool from_cache;
  /* loaded from the cache with everything derived (display names, NVTX rows,
   * projection rows, every series): those arrays point into the mapping and
   * are never freed; nsys__index_derive then only lists the tracks */
  bool derived_cached;
} nsys__index_priv;

static inline nsys__index_priv *nsys__priv(const nsys_index *ix) {
  return (nsys__index_priv *)ix->priv;
}

/* index_build.c */
nsys_index *nsys__index_build_fresh(struct nsys_profile *p, nsys_task *task);
/* index_derive.c: computes everything derived from the contract arrays
 * (per-depth rows, projection, series). Used after a build and a cache load. */
void nsys__index_derive(nsys_index *ix);
/* The GPU track series alone (ix->priv allocated): the build's GPU reader
 * makes them as soon as the ops are in place; derive skips them then. */
void nsys__derive_gpu_series(nsys_index *ix);
void nsys__index_free_derived(nsys_index *ix);
/* Display names (index_derive.c): the short name of each kernel name k < n
 * (malloc'd, NSYS_STR_NONE where k names no kernel), and ix->display made
 * from such a table (a build and a cache load both use it). */
uint32_t *nsys__display_short_names(const nsys_index *ix, uint32_t n);
void nsys__display_names_from(nsys_index *ix, const uint32_t *short_of, uint32_t n);

/* index_mipmap.c (callback types in index_query.h) */
void nsys__series_init(nsys__series *s, const int64_t *start, const int64_t *end,
                       const uint32_t *idx, uint32_t first, uint32_t n);
void nsys__series_free(nsys__series *s);
uint32_t nsys__series_lower(const nsys__series *s, int64_t t);
uint32_t nsys__series_count(const nsys__series *s, int64_t qs, int64_t qe);
uint32_t nsys__series_buckets(const nsys__series *s, int64_t base, int64_t res, uint32_t nb,
                              nsys_tl_bucket_fn fn, void *ctx);
uint32_t nsys__series_events(const nsys__series *s, int64_t qs, int64_t qe, nsys_tl_event_fn fn,
                             void *ctx);

/* index_coarse.c */
void nsys__coarse_init(nsys_index *ix);
void nsys__coarse_free(nsys_index *ix);
/* Answers from a coarse level when res qualifies; false: compute directly. */
bool nsys__coarse_buckets(const nsys_index *ix, uint32_t track, const nsys__series *s, int64_t base,
                          int64_t res, uint32_t nb, nsys_tl_bucket_fn fn, void *ctx, uint32_t *emitted);

/* index_cache_load.c / index_cache_save.c (format: index_cache_format.h):
 * the load returns NULL when there is no valid cache entry. */
nsys_index *nsys__cache_load(struct nsys_profile *p);
void nsys__cache_save(const nsys_index *ix, struct nsys_profile *p);
void nsys__cache_unmap(void *base, size_t size);
/* Tests only: the k-th payload section of the cache file at `path` (its
 * name, e.g. "ops.track", file offset and size in bytes; NULL past the last
 * or when the file's header is not a valid current one), and rewriting the
 * file's checksum after a test damaged the content on purpose, so that the
 * structural checks have to catch it. */
const char *nsys__cache_section(const char *path, uint32_t k, uint64_t *off, uint64_t *bytes);
bool nsys__cache_reseal(const char *path);

#endif
