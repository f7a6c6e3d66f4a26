/* Mapping and checking the index cache (format: index_cache_format.h): one
 * fused checksum + range-check pass, then the small structures against each
 * other; any mismatch returns NULL and the caller rebuilds. Test hooks at the
 * end. */
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/util.h"
#include "index/index_cache_format.h"
#include "index/index_internal.h"
#include "index/index_bounds.h"
#include "profile/profile.h"

/* What the fused pass checks in a section's elements. */
typedef enum {
  NSYS__CHK_NONE,
  NSYS__CHK_U32_LT,  /* u32 x < lim */
  NSYS__CHK_I32_REF, /* i32 x in [-1, lim): an index or -1 */
  NSYS__CHK_U16_LE,  /* u16 x <= lim */
  NSYS__CHK_U8_LE,   /* u8 x <= lim */
  /* i64 end times, lim the index of the section of their start times: both
   * kept times, end >= start, durations adding up to at most NSYS_TOTAL_MAX
   * (index_bounds.h) */
  NSYS__CHK_TIME_END,
  /* the same without the total: end times whose durations no bound sums
   * (proj.end: a GPU projection spans its range's kernels, and the ranges of
   * one depth may overlap there), yet every difference of the two must fit */
  NSYS__CHK_TIME_PAIR,
  NSYS__CHK_MAXEND, /* i64: a kept time, or INT64_MIN (none): series.maxend */
  NSYS__CHK_UNION,  /* i64 in [0, 2^62): series.union (a union's length, at most the span) */
  /* links between the elements of one array, so that walking them always
   * ends (element i, a valid build guarantees it): */
  NSYS__CHK_I32_BEFORE, /* -1 or 0 <= x < i: nvtx.parent (the enclosing range sorts first) */
  NSYS__CHK_I32_AFTER,  /* -1 or i < x < lim: op_next (a call's ops are linked upwards) */
} nsys__check;

/* A section of the payload: n elements of `size` bytes at byte offset `off`
 * (8-aligned), each checked with `chk` against `lim`. */
typedef struct {
  uint64_t off, n;
  uint32_t size, lim;
  nsys__check chk;
  const char *name; /* "ops.track": for diagnostics and tests */
} nsys__section;

#define NSYS__MAX_SECTIONS 64

/* Lays the sections out from the header's counts (no data is read). */
typedef struct {
  const unsigned char *base;
  uint64_t off, size;
  nsys__section sec[NSYS__MAX_SECTIONS];
  uint32_t n_sec;
  bool ok;
} nsys__layout;

/* The next section of n elements of `size` bytes (padded to 8 in the file);
 * NULL once anything does not fit (l->ok false). An empty section gives a
 * valid pointer. */
static const void *nsys__take(nsys__layout *l, const char *name, uint64_t n, unsigned size, nsys__check chk,
                              uint32_t lim) {
  if (!l->ok || l->n_sec == NSYS__MAX_SECTIONS || n > (l->size - l->off) / size ||
      (n * size + 7) / 8 * 8 > l->size - l->off) {
    l->ok = false;
    return NULL;
  }
  l->sec[l->n_sec++] = (nsys__section){l->off, n, size, lim, chk, name};
  const void *p = l->base + l->off;
  l->off += (n * size + 7) / 8 * 8;
  return p;
}

#define NSYS__CHUNK 32768 /* bytes summed and checked together (L1-sized) */

/* Elements [0, n) of x checked against lim; true when all pass. Unsigned
 * comparisons as signed ones on values with the top bit flipped, 16 bytes at
 * a time with SSE2 where there is SSE2 (every x86-64), else one by one. */
static bool nsys__check_elems(const unsigned char *x, size_t n, nsys__check chk, uint32_t lim) {
  if (chk == NSYS__CHK_NONE || !n) return true;
  if (chk == NSYS__CHK_MAXEND || chk == NSYS__CHK_UNION) {
    /* unsigned: x - lo > span is "outside [lo, lo + span]" */
    const uint64_t *t = (const uint64_t *)(const void *)x;
    const uint64_t lo = chk == NSYS__CHK_UNION ? 0 : (uint64_t)NSYS_TIME_MIN;
    const uint64_t span = chk == NSYS__CHK_UNION ? ((uint64_t)1 << 62) - 1 : (uint64_t)NSYS_TIME_MAX - lo;
    const uint64_t none = chk == NSYS__CHK_MAXEND ? (uint64_t)INT64_MIN : lo;
    uint64_t out = 0;
    for (size_t i = 0; i < n; i++) out |= (uint64_t)(t[i] - lo > span) & (uint64_t)(t[i] != none);
    return !out;
  }
  /* every check is "v + add > max" in unsigned arithmetic */
  uint32_t add = chk == NSYS__CHK_I32_REF ? 1u : 0u;
  uint32_t max = chk == NSYS__CHK_U32_LT ? lim - 1 : lim; /* U32_LT, lim 0: nothing passes */
  if (chk == NSYS__CHK_U32_LT && lim == 0) return false;
  size_t i = 0;
  uint32_t bad = 0;
  if (chk == NSYS__CHK_U8_LE) {
    if (lim >= UINT8_MAX) return true;
#ifdef __SSE2__
    const __m128i mx = _mm_set1_epi8((char)lim);
    __m128i acc = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
      __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
      acc = _mm_or_si128(acc, _mm_xor_si128(_mm_max_epu8(a, mx), mx)); /* nonzero where a > lim */
    }
    bad |= (uint32_t)(_mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) != 0xFFFF);
#endif
    for (; i < n; i++) bad |= x[i] > lim;
    return !bad;
  }
  if (chk == NSYS__CHK_U16_LE) {
    const uint16_t *v = (const uint16_t *)(const void *)x;
    if (lim >= UINT16_MAX) return true;
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi16((short)0x8000), mx = _mm_set1_epi16((short)(max ^ 0x8000u));
    __m128i acc = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8)
      acc = _mm_or_si128(
          acc, _mm_cmpgt_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(v + i)), flip), mx));
    bad |= (uint32_t)_mm_movemask_epi8(acc);
#endif
    for (; i < n; i++) bad |= v[i] > max;
    return !bad;
  }
  const uint32_t *v = (const uint32_t *)(const void *)x;
#ifdef __SSE2__
  const __m128i flip = _mm_set1_epi32((int)0x80000000u), mx = _mm_set1_epi32((int)(max ^ 0x80000000u));
  const __m128i ad = _mm_set1_epi32((int)add);
  __m128i acc = _mm_setzero_si128();
  for (; i + 8 <= n; i += 8) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(v + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(v + i + 4));
    a = _mm_xor_si128(_mm_add_epi32(a, ad), flip);
    b = _mm_xor_si128(_mm_add_epi32(b, ad), flip);
    acc = _mm_or_si128(acc, _mm_or_si128(_mm_cmpgt_epi32(a, mx), _mm_cmpgt_epi32(b, mx)));
  }
  bad |= (uint32_t)_mm_movemask_epi8(acc);
#endif
  for (; i < n; i++) bad |= (uint32_t)(v[i] + add) > max;
  return !bad;
}

/* The link checks on i32 elements [0, n) that are elements [i0, i0 + n) of
 * their array. Unsigned comparisons as in nsys__check_elems. */
static bool nsys__check_links(const unsigned char *x, size_t n, uint64_t i0, nsys__check chk, uint32_t lim) {
  const uint32_t *v = (const uint32_t *)(const void *)x;
  uint32_t bad = 0;
  size_t k = 0;
  if (i0 + n > UINT32_MAX) return false;
  uint32_t i = (uint32_t)i0;
#ifdef __SSE2__
  const __m128i flip = _mm_set1_epi32((int)0x80000000u), one = _mm_set1_epi32(1), four = _mm_set1_epi32(4);
  const __m128i none = _mm_set1_epi32(-1), limv = _mm_set1_epi32((int)lim);
  __m128i iv = _mm_setr_epi32((int)i, (int)(i + 1), (int)(i + 2), (int)(i + 3)), acc = _mm_setzero_si128();
  for (; k + 4 <= n; k += 4, i += 4) {
    __m128i xv = _mm_loadu_si128((const __m128i *)(const void *)(v + k));
    if (chk == NSYS__CHK_I32_BEFORE) {
      /* bad: x + 1 > i */
      acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_xor_si128(_mm_add_epi32(xv, one), flip), _mm_xor_si128(iv, flip)));
    } else {
      /* ok: x == -1, or x - (i + 1) < lim - (i + 1) */
      __m128i i1 = _mm_add_epi32(iv, one);
      __m128i d = _mm_xor_si128(_mm_sub_epi32(xv, i1), flip), m = _mm_xor_si128(_mm_sub_epi32(limv, i1), flip);
      __m128i ok = _mm_or_si128(_mm_cmpgt_epi32(m, d), _mm_cmpeq_epi32(xv, none));
      acc = _mm_or_si128(acc, _mm_andnot_si128(ok, none));
    }
    iv = _mm_add_epi32(iv, four);
  }
  bad |= (uint32_t)_mm_movemask_epi8(acc);
#endif
  for (; k < n; k++, i++) {
    if (chk == NSYS__CHK_I32_BEFORE) bad |= v[k] + 1u > i;
    else bad |= v[k] != UINT32_MAX && (v[k] - (i + 1u)) >= lim - (i + 1u);
  }
  return !bad;
}

/* One verifier's share: payload bytes [lo, hi) (multiples of NSYS__CHUNK, or
 * the end), summed from a fresh state and range-checked chunk by chunk, so
 * the bytes are read from memory once. Chunk edges never split an element
 * (sections are 8-aligned, elements 1, 2, 4 or 8 bytes). */
typedef struct {
  const nsys__layout *l;
  uint64_t lo, hi;
  nsys__sum sum;
  bool ok;
  uint64_t units[NSYS__MAX_SECTIONS]; /* CHK_TIME_END sections: their durations so far (index_bounds.h) */
} nsys__verifier;

static void *nsys__verify_run(void *arg) {
  nsys__verifier *v = arg;
  const nsys__layout *l = v->l;
  memset(&v->sum, 0, sizeof v->sum);
  v->ok = true;
  uint32_t s = 0;
  for (uint64_t off = v->lo; off < v->hi && v->ok; off += NSYS__CHUNK) {
    uint64_t end = NSYS_MIN(off + NSYS__CHUNK, v->hi);
    nsys__sum_words(&v->sum, (const uint64_t *)(const void *)(l->base + off), (end - off) / 8);
    for (; s < l->n_sec; s++) {
      const nsys__section *x = &l->sec[s];
      uint64_t x_end = x->off + x->n * x->size;
      if (x_end <= off && x->off < off) continue; /* wholly before this chunk */
      if (x->off >= end) break;
      uint64_t a = NSYS_MAX(off, x->off), b = NSYS_MIN(end, x_end);
      bool links = x->chk == NSYS__CHK_I32_BEFORE || x->chk == NSYS__CHK_I32_AFTER;
      if (x->chk == NSYS__CHK_TIME_END || x->chk == NSYS__CHK_TIME_PAIR) { /* the start times are read beside */
        uint64_t k = (a - x->off) / 8, n = (b - a) / 8;
        const nsys__section *st = &l->sec[x->lim];
        if (a < b && (!nsys_durations_fold((const int64_t *)(const void *)(l->base + st->off) + k,
                                           (const int64_t *)(const void *)(l->base + a), n, &v->units[s]) ||
                      (x->chk == NSYS__CHK_TIME_END && v->units[s] > NSYS_UNITS_MAX))) {
          v->ok = false;
          break;
        }
      } else if (a < b && !(links ? nsys__check_links(l->base + a, (b - a) / x->size, (a - x->off) / x->size, x->chk, x->lim)
                           : nsys__check_elems(l->base + a, (b - a) / x->size, x->chk, x->lim))) {
        v->ok = false;
        break;
      }
      if (x_end > end) break; /* continues in the next chunk */
    }
  }
  return NULL;
}

/* s1 followed by s2, when s1 covers a multiple of four words (s2's word 0 is
 * in lane 0): per lane, a adds up and b gains s1's a once per s2 word. */

/* Checksum and range checks of the whole payload; two threads for a large
 * one (each half summed from a fresh state, then concatenated). The pass is
 * memory-bound (the checksum runs at ~57 GB/s on data in L1, the payload
 * comes at ~20 GB/s), so a second core helps on an idle machine; on a busy
 * one, waiting for the second thread to be scheduled costs more than it
 * saves on a 100 MB payload (1M ops: 14 vs 19.5 ms median at load 5), so
 * only payloads from 256 MB (about 2.5M ops) are split. */
static bool nsys__verify(const nsys__layout *l, uint64_t checksum, bool *range_ok) {
  uint64_t half = l->size / 2 / NSYS__CHUNK * NSYS__CHUNK;
  nsys__verifier a = {l, 0, l->size, {{0}, {0}, 0}, true, {0}}, b = {l, l->size, l->size, {{0}, {0}, 0}, true, {0}};
  pthread_t th;
  bool threaded = false;
  /* NSYS_AI_CACHE_SPLIT_ANY (tests): split any payload of two chunks or more */
  uint64_t min_half = getenv("NSYS_AI_CACHE_SPLIT_ANY") ? NSYS__CHUNK : (uint64_t)128 << 20;
  if (half >= min_half && !getenv("NSYS_AI_DERIVE_SERIAL")) {
    a.hi = b.lo = half;
    threaded = pthread_create(&th, NULL, nsys__verify_run, &b) == 0;
    if (!threaded) a.hi = b.lo = l->size;
  }
  nsys__verify_run(&a);
  if (threaded) pthread_join(th, NULL);
  else nsys__verify_run(&b); /* empty */
  nsys__sum_concat(&a.sum, &b.sum);
  *range_ok = a.ok && b.ok;
  for (uint32_t s = 0; s < l->n_sec; s++) /* each half's total is bounded: the sum cannot wrap */
    if (l->sec[s].chk == NSYS__CHK_TIME_END && a.units[s] + b.units[s] > NSYS_UNITS_MAX) *range_ok = false;
  return nsys__sum_final(&a.sum) == checksum;
}

void nsys__cache_unmap(void *base, size_t size) {
  if (base) munmap(base, size);
}

/* The checks after the pass: the small structures against each other. */
static bool nsys__structure_ok(const nsys_index *ix, const nsys__cache_header *h) {
  const nsys__index_priv *pv = nsys__priv(ix);
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if ((uint64_t)ix->tracks[t].first + ix->tracks[t].count > h->n_ops) return false;
  uint32_t rows = 0;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    if ((uint64_t)th->api_first + th->api_count > h->n_api ||
        (uint64_t)th->nvtx_first + th->nvtx_count > h->n_nvtx || pv->thread_depth_first[t] != rows)
      return false;
    if (th->nvtx_count) {
      rows += (uint32_t)th->nvtx_max_depth + 1;
      if (rows > h->n_depth_rows) return false;
    }
  }
  if (pv->thread_depth_first[ix->n_threads] != rows || rows != h->n_depth_rows) return false;
  uint64_t covered = 0;
  for (uint32_t r = 0; r < h->n_depth_rows; r++) {
    if (pv->depth_row_first[r] != covered) return false;
    covered += pv->depth_row_count[r];
  }
  if (covered != h->n_nvtx) return false;
  covered = 0;
  for (uint32_t q = 0; q < h->n_proj_rows; q++) {
    if (pv->proj_rows[q].first != covered) return false;
    covered += pv->proj_rows[q].count;
  }
  return covered == h->n_proj;
}

/* Points every series into the mapping (u, m, l, g: the four concatenated
 * tables) and checks that the block tables fit the series and that every
 * "longest item" is an item of its block or super block. */
static bool nsys__series_map(nsys_index *ix, const nsys__cache_header *h, const int64_t *u,
                             const int64_t *m, const uint32_t *l, const uint32_t *g) {
  nsys__index_priv *pv = nsys__priv(ix);
  pv->gpu_series = nsys_xcalloc((size_t)ix->n_tracks + 1, sizeof(nsys__series));
  pv->api_series = nsys_xcalloc((size_t)ix->n_threads + 1, sizeof(nsys__series));
  pv->nvtx_series = nsys_xcalloc((size_t)pv->n_depth_rows + 1, sizeof(nsys__series));
  pv->proj_series = nsys_xcalloc((size_t)pv->n_proj_rows + 1, sizeof(nsys__series));
  uint32_t ns = nsys__n_series(ix);
  uint64_t bu = 0, bl = 0, bs = 0; /* cursors into u/m, l, g */
  for (uint32_t i = 0; i < ns; i++) {
    nsys__series *s = nsys__series_at(ix, i);
    if (i < ix->n_tracks) {
      s->start = ix->ops.start;
      s->end = ix->ops.end;
      s->first = ix->tracks[i].first;
      s->n = ix->tracks[i].count;
    } else if (i < ix->n_tracks + ix->n_threads) {
      const nsys_host_thread *th = &ix->threads[i - ix->n_tracks];
      s->start = ix->api.start;
      s->end = ix->api.end;
      s->first = th->api_first;
      s->n = th->api_count;
    } else if (i < ix->n_tracks + ix->n_threads + pv->n_depth_rows) {
      uint32_t r = i - ix->n_tracks - ix->n_threads;
      s->start = ix->nvtx.start;
      s->end = ix->nvtx.end;
      s->idx = pv->nvtx_by_depth + pv->depth_row_first[r];
      s->n = pv->depth_row_count[r];
    } else {
      const nsys__proj_row *pr = &pv->proj_rows[i - ix->n_tracks - ix->n_threads - pv->n_depth_rows];
      s->start = pv->proj_start;
      s->end = pv->proj_end;
      s->first = pr->first;
      s->n = pr->count;
    }
    s->n_blocks = (s->n + NSYS__BLOCK - 1) / NSYS__BLOCK;
    s->n_super = (s->n_blocks + NSYS__BLOCK - 1) / NSYS__BLOCK;
    if (bl + s->n_blocks > h->n_blocks || bs + s->n_super > h->n_super) return false;
    s->blk_union = (int64_t *)(uintptr_t)(u + bu);
    s->blk_maxend = (int64_t *)(uintptr_t)(m + bu);
    s->blk_longest = (uint32_t *)(uintptr_t)(l + bl);
    s->sup_longest = (uint32_t *)(uintptr_t)(g + bs);
    bu += s->n_blocks + 1;
    bl += s->n_blocks;
    bs += s->n_super;
    for (uint32_t b = 0; b < s->n_blocks; b++)
      if (s->blk_longest[b] / NSYS__BLOCK != b || s->blk_longest[b] >= s->n) return false;
    for (uint32_t q = 0; q < s->n_super; q++)
      if (s->sup_longest[q] / (NSYS__BLOCK * NSYS__BLOCK) != q || s->sup_longest[q] >= s->n) return false;
  }
  return bl == h->n_blocks && bs == h->n_super;
}

/* Sections outside the index structs (read once at load). */
typedef struct {
  const uint32_t *lens;
  const char *blob;
  const nsys_gpu_track *tracks;
  const nsys_host_thread *threads;
  const int64_t *u, *m;      /* series blk_union, blk_maxend */
  const uint32_t *l, *g;     /* series blk_longest, sup_longest */
  const uint32_t *short_of;  /* per kernel name, its short name (display names) */
} nsys__raw;

/* The payload's sections, in file order, from the header's counts: points
 * ix's arrays (and raw's) at them. Reads only the (small) threads section,
 * for the deepest NVTX level. r->ok false when the sizes do not add up. */
static void nsys__lay_out(nsys__layout *r, const nsys__cache_header *h, nsys_index *ix, nsys__raw *raw) {
  nsys__index_priv *pv = nsys__priv(ix);
  const uint32_t ns = h->n_strings, no = h->n_ops, na = h->n_api, nv = h->n_nvtx, nt = h->n_threads;
#define NSYS__TAKE(name, dst, n, size, chk, lim) \
  (dst) = (void *)(uintptr_t)nsys__take(r, (name), (n), (size), (chk), (lim))
  NSYS__TAKE("strings.lens", raw->lens, ns, 4, NSYS__CHK_NONE, 0);
  NSYS__TAKE("strings.bytes", raw->blob, h->string_bytes, 1, NSYS__CHK_NONE, 0);
  NSYS__TAKE("tracks", raw->tracks, h->n_tracks, sizeof(nsys_gpu_track), NSYS__CHK_NONE, 0);
  uint32_t ops_start = r->n_sec;
  NSYS__TAKE("ops.start", ix->ops.start, no, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("ops.end", ix->ops.end, no, 8, NSYS__CHK_TIME_END, ops_start);
  NSYS__TAKE("ops.rowid", ix->ops.rowid, no, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("ops.name", ix->ops.name, no, 4, NSYS__CHK_U32_LT, ns);
  NSYS__TAKE("ops.full_name", ix->ops.full_name, no, 4, NSYS__CHK_U32_LT, ns);
  NSYS__TAKE("ops.track", ix->ops.track, no, 4, NSYS__CHK_U32_LT, h->n_tracks);
  NSYS__TAKE("ops.api", ix->ops.api, no, 4, NSYS__CHK_I32_REF, na);
  NSYS__TAKE("op_next", ix->op_next, no, 4, NSYS__CHK_I32_AFTER, no);
  NSYS__TAKE("ops.kind", ix->ops.kind, no, 1, NSYS__CHK_U8_LE, NSYS_OP_GRAPH);
  NSYS__TAKE("threads", raw->threads, nt, sizeof(nsys_host_thread), NSYS__CHK_NONE, 0);
  uint32_t max_depth = 0; /* the deepest NVTX row any thread declares */
  for (uint32_t t = 0; r->ok && t < nt; t++)
    if (raw->threads[t].nvtx_max_depth > max_depth) max_depth = raw->threads[t].nvtx_max_depth;
  uint32_t api_start = r->n_sec;
  NSYS__TAKE("api.start", ix->api.start, na, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("api.end", ix->api.end, na, 8, NSYS__CHK_TIME_END, api_start);
  NSYS__TAKE("api.correlation", ix->api.correlation, na, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("api.rowid", ix->api.rowid, na, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("api.name", ix->api.name, na, 4, NSYS__CHK_U32_LT, ns);
  NSYS__TAKE("api.thread", ix->api.thread, na, 4, NSYS__CHK_U32_LT, nt);
  NSYS__TAKE("api.first_op", ix->api.first_op, na, 4, NSYS__CHK_I32_REF, no);
  uint32_t nvtx_start = r->n_sec;
  NSYS__TAKE("nvtx.start", ix->nvtx.start, nv, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("nvtx.end", ix->nvtx.end, nv, 8, NSYS__CHK_TIME_END, nvtx_start);
  NSYS__TAKE("nvtx.name", ix->nvtx.name, nv, 4, NSYS__CHK_U32_LT, ns);
  NSYS__TAKE("nvtx.domain", ix->nvtx.domain, nv, 4, NSYS__CHK_U32_LT, ns);
  NSYS__TAKE("nvtx.thread", ix->nvtx.thread, nv, 4, NSYS__CHK_U32_LT, nt);
  NSYS__TAKE("nvtx.parent", ix->nvtx.parent, nv, 4, NSYS__CHK_I32_BEFORE, nv);
  NSYS__TAKE("nvtx.depth", ix->nvtx.depth, nv, 2, NSYS__CHK_U16_LE, max_depth);
  NSYS__TAKE("proj.rows", pv->proj_rows, h->n_proj_rows, sizeof(nsys__proj_row), NSYS__CHK_NONE, 0);
  uint32_t proj_start = r->n_sec;
  NSYS__TAKE("proj.start", pv->proj_start, h->n_proj, 8, NSYS__CHK_NONE, 0);
  NSYS__TAKE("proj.end", pv->proj_end, h->n_proj, 8, NSYS__CHK_TIME_PAIR, proj_start);
  NSYS__TAKE("proj.nvtx", pv->proj_nvtx, h->n_proj, 4, NSYS__CHK_U32_LT, nv);
  NSYS__TAKE("display.short", raw->short_of, h->n_display, 4, NSYS__CHK_I32_REF, ns); /* < ns or NONE */
  NSYS__TAKE("nvtx_rows.thread_first", pv->thread_depth_first, (uint64_t)nt + 1, 4, NSYS__CHK_NONE, 0);
  NSYS__TAKE("nvtx_rows.first", pv->depth_row_first, h->n_depth_rows, 4, NSYS__CHK_NONE, 0);
  NSYS__TAKE("nvtx_rows.count", pv->depth_row_count, h->n_depth_rows, 4, NSYS__CHK_NONE, 0);
  NSYS__TAKE("nvtx_rows.ranges", pv->nvtx_by_depth, nv, 4, NSYS__CHK_U32_LT, nv);
  uint64_t n_series = (uint64_t)h->n_tracks + nt + h->n_depth_rows + h->n_proj_rows;
  NSYS__TAKE("series.union", raw->u, h->n_blocks + n_series, 8, NSYS__CHK_UNION, 0);
  NSYS__TAKE("series.maxend", raw->m, h->n_blocks + n_series, 8, NSYS__CHK_MAXEND, 0);
  NSYS__TAKE("series.longest", raw->l, h->n_blocks, 4, NSYS__CHK_NONE, 0);
  NSYS__TAKE("series.super_longest", raw->g, h->n_super, 4, NSYS__CHK_NONE, 0);
#undef NSYS__TAKE
  if (r->off != r->size) r->ok = false;
}

/* The header's own consistency (not the identity of the profile). */
static bool nsys__header_ok(const nsys__cache_header *h, uint64_t file_size) {
  return memcmp(h->magic, NSYS__CACHE_MAGIC, 8) == 0 && h->version == NSYS__CACHE_VERSION &&
         h->header_size == sizeof *h && h->sizeof_track == sizeof(nsys_gpu_track) &&
         h->sizeof_thread == sizeof(nsys_host_thread) && h->sizeof_proj_row == sizeof(nsys__proj_row) &&
         h->block == NSYS__BLOCK && h->payload_size % 8 == 0 && file_size == sizeof *h + h->payload_size &&
         h->n_display <= h->n_strings && h->n_threads < UINT32_MAX && h->n_blocks < UINT32_MAX &&
         h->n_super < UINT32_MAX;
}

static void nsys__layout_init(nsys__layout *l, const void *file, const nsys__cache_header *h) {
  l->base = (const unsigned char *)file + sizeof *h;
  l->off = 0;
  l->size = h->payload_size;
  l->n_sec = 0;
  l->ok = true;
}

nsys_index *nsys__cache_load(nsys_profile *p) {
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "index", &path_hash);
  if (!path) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    free(path);
    return NULL;
  }
  struct stat st;
  nsys__cache_header h;
  bool ok = fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof h &&
            pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && nsys__header_ok(&h, (uint64_t)st.st_size) &&
            h.dev == (uint64_t)p->st_dev && h.ino == (uint64_t)p->st_ino &&
            h.size == (uint64_t)p->st_size && h.mtime_ns == (uint64_t)p->st_mtime_ns &&
            h.path_hash == path_hash;
  if (!ok) {
    close(fd);
    free(path);
    return NULL;
  }
  /* No MAP_POPULATE: the checking pass touches every page in order anyway
   * (with the file in 2 MiB folios, one fault maps 2 MiB). */
  size_t map_size = (size_t)st.st_size;
  void *map = mmap(NULL, map_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    free(path);
    return NULL;
  }
#ifdef MADV_HUGEPAGE
  /* pages read back from disk come in 2 MiB folios too (when THP allows) */
  if (map_size >= (2u << 20)) madvise(map, map_size, MADV_HUGEPAGE);
#endif
  nsys_index *ix = nsys_xcalloc(1, sizeof *ix);
  nsys__index_priv *pv = nsys_xcalloc(1, sizeof *pv);
  ix->priv = pv;
  pv->map_base = map;
  pv->map_size = map_size;
  pv->from_cache = true;
  pv->derived_cached = true;
  pv->proj_cached = true;
  nsys_strtab_init(&ix->strings);
  nsys__layout *lay = nsys_xmalloc(sizeof *lay);
  nsys__layout_init(lay, map, &h);
  nsys__raw raw;
  memset(&raw, 0, sizeof raw);
  nsys__lay_out(lay, &h, ix, &raw);
  bool range_ok = false;
  int64_t t0 = nsys_now_ns();
  bool sum_ok = lay->ok && nsys__verify(lay, h.checksum, &range_ok);
  int64_t t1 = nsys_now_ns();
  free(lay);
  if (!sum_ok) {
    /* the sizes do not add up, or the bytes are not those written */
    nsys_log("index cache: %s is corrupt; rebuilding", path);
    nsys_index_free(ix);
    unlink(path);
    free(path);
    return NULL;
  }
  /* the string table: lengths and NUL terminators must agree with the blob */
  const uint32_t ns = h.n_strings, nt = h.n_threads;
  bool sane = range_ok;
  uint64_t off = 0;
  for (uint32_t i = 0; i < ns && sane; i++) {
    if (raw.lens[i] >= h.string_bytes - off || raw.blob[off + raw.lens[i]] != '\0' ||
        nsys_strtab_intern(&ix->strings, raw.blob + off, raw.lens[i]) != i)
      sane = false;
    off += (uint64_t)raw.lens[i] + 1;
  }
  sane = sane && off == h.string_bytes;
  ix->n_tracks = h.n_tracks;
  ix->tracks = nsys_xmalloc(((size_t)h.n_tracks + 1) * sizeof(nsys_gpu_track));
  memcpy(ix->tracks, raw.tracks, (size_t)h.n_tracks * sizeof(nsys_gpu_track));
  ix->n_threads = nt;
  ix->threads = nsys_xmalloc(((size_t)nt + 1) * sizeof(nsys_host_thread));
  memcpy(ix->threads, raw.threads, (size_t)nt * sizeof(nsys_host_thread));
  ix->ops.n = h.n_ops;
  ix->api.n = h.n_api;
  ix->nvtx.n = h.n_nvtx;
  ix->span_start = h.span_start;
  ix->span_end = h.span_end;
  pv->n_proj = h.n_proj;
  pv->n_proj_rows = h.n_proj_rows;
  pv->n_depth_rows = h.n_depth_rows;
  sane = sane && nsys__structure_ok(ix, &h) && nsys__series_map(ix, &h, raw.u, raw.m, raw.l, raw.g);
  /* display names are made again (a few hundred names, not per op), so that
   * they follow the current rules of common/kname_display.c */
  if (sane) nsys__display_names_from(ix, raw.short_of, h.n_display);
  if (getenv("NSYS_AI_INDEX_TIMING"))
    nsys_log("index cache: checked %.1f MB in %.2f ms; strings, structure, display names %.2f ms",
             (double)h.payload_size / 1e6, (double)(t1 - t0) / 1e6, (double)(nsys_now_ns() - t1) / 1e6);
  if (!sane) {
    nsys_log("index cache: %s is inconsistent; rebuilding", path);
    nsys_index_free(ix);
    free(path);
    return NULL;
  }
  free(path);
  return ix;
}

/* ---- test hooks ------------------------------------------------------------ */

static unsigned char *nsys__read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  size_t n = 0, cap = 0, k;
  do {
    if (n == cap) buf = nsys_xrealloc(buf, cap = cap ? cap * 2 : 1 << 16);
    k = fread(buf + n, 1, cap - n, f);
    n += k;
  } while (k > 0);
  fclose(f);
  *size = n;
  return buf;
}

const char *nsys__cache_section(const char *path, uint32_t k, uint64_t *off, uint64_t *bytes) {
  size_t size = 0;
  unsigned char *file = nsys__read_all(path, &size);
  const char *name = NULL;
  nsys__cache_header h;
  if (file && size >= sizeof h) {
    memcpy(&h, file, sizeof h);
    if (nsys__header_ok(&h, size)) {
      nsys_index ix;
      nsys__index_priv pv;
      memset(&ix, 0, sizeof ix);
      memset(&pv, 0, sizeof pv);
      ix.priv = &pv;
      nsys__raw raw;
      nsys__layout *lay = nsys_xmalloc(sizeof *lay);
      nsys__layout_init(lay, file, &h);
      nsys__lay_out(lay, &h, &ix, &raw);
      if (lay->ok && k < lay->n_sec) {
        name = lay->sec[k].name;
        *off = sizeof h + lay->sec[k].off;
        *bytes = lay->sec[k].n * lay->sec[k].size;
      }
      free(lay);
    }
  }
  free(file);
  return name;
}

bool nsys__cache_reseal(const char *path) {
  size_t size = 0;
  unsigned char *file = nsys__read_all(path, &size);
  nsys__cache_header h;
  bool ok = file && size >= sizeof h && (size - sizeof h) % 8 == 0;
  if (ok) {
    memcpy(&h, file, sizeof h);
    nsys__sum sum;
    memset(&sum, 0, sizeof sum);
    nsys__sum_words(&sum, (const uint64_t *)(const void *)(file + sizeof h), (size - sizeof h) / 8);
    h.checksum = nsys__sum_final(&sum);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ok = fd >= 0 && pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    if (fd >= 0) close(fd);
  }
  free(file);
  return ok;
}
