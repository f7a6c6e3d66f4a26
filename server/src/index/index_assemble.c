/* Assembling the index from the raw rows: sorting helpers, the ops grouped
 * by track, the threads, the API calls and NVTX ranges grouped by thread
 * (with NVTX depth/parent), and the API <-> op join on (globalPid,
 * correlationId). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_build_internal.h"
#include "profile/profile.h"

/* ---- sorting helpers ---------------------------------------------------- */

typedef struct {
  const int64_t *start, *end, *rowid;
  const uint8_t *kind;
  bool end_desc;
} nsys__sort_ctx;

static inline int nsys__cmp_rows(const nsys__sort_ctx *c, uint32_t x, uint32_t y) {
  if (c->start[x] != c->start[y]) return c->start[x] < c->start[y] ? -1 : 1;
  if (c->end[x] != c->end[y]) return (c->end[x] < c->end[y]) != c->end_desc ? -1 : 1;
  if (c->kind && c->kind[x] != c->kind[y]) return c->kind[x] < c->kind[y] ? -1 : 1;
  if (c->rowid[x] != c->rowid[y]) return c->rowid[x] < c->rowid[y] ? -1 : 1;
  return 0;
}

static int nsys__cmp_idx(const void *a, const void *b, void *ctx_) {
  return nsys__cmp_rows(ctx_, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Merges a short sorted run into a long one: each short item's place by
 * binary search, the long run copied in blocks between them (a table of a
 * few memcpy rows merged into a stream of kernels costs a memcpy, not a
 * comparison per kernel). `small_first`: the short run came first, so it
 * wins ties, as in the plain merge. Returns the items written. */
static uint32_t nsys__merge_small(const nsys__sort_ctx *c, const uint32_t *big, uint32_t nbig,
                                  const uint32_t *small, uint32_t nsmall, bool small_first,
                                  uint32_t *dst) {
  uint32_t j = 0, out = 0;
  for (uint32_t i = 0; i < nsmall; i++) {
    uint32_t y = small[i];
    /* first k in [j, nbig) where y goes before big[k] */
    uint32_t lo = j, hi = nbig;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      int r = nsys__cmp_rows(c, big[mid], y);
      if (small_first ? r < 0 : r <= 0) lo = mid + 1;
      else hi = mid;
    }
    memcpy(dst + out, big + j, (size_t)(lo - j) * sizeof *dst);
    out += lo - j;
    j = lo;
    dst[out++] = y;
  }
  memcpy(dst + out, big + j, (size_t)(nbig - j) * sizeof *dst);
  return out + (nbig - j);
}

/* Sorts perm[0..n) by the context's key: a natural merge sort, so the usual
 * input (a few sorted runs: one per source table, or rows written per
 * thread buffer) costs one or two linear passes. Many runs fall back to qsort. */
static void nsys__sort_segment(uint32_t *perm, uint32_t n, nsys__sort_ctx *c) {
  uint32_t runs = 1;
  for (uint32_t i = 1; i < n; i++)
    if (nsys__cmp_rows(c, perm[i - 1], perm[i]) > 0) runs++;
  if (runs == 1) return;
  if (runs > 64) {
    qsort_r(perm, n, sizeof *perm, nsys__cmp_idx, c);
    return;
  }
  uint32_t *tmp = nsys__big_alloc((size_t)n * sizeof(uint32_t));
  uint32_t *src = perm, *dst = tmp;
  while (runs > 1) {
    uint32_t i = 0, out = 0;
    runs = 0;
    while (i < n) {
      uint32_t a = i, a_end = i + 1;
      while (a_end < n && nsys__cmp_rows(c, src[a_end - 1], src[a_end]) <= 0) a_end++;
      uint32_t b = a_end, b_end = b < n ? b + 1 : b;
      while (b_end < n && nsys__cmp_rows(c, src[b_end - 1], src[b_end]) <= 0) b_end++;
      uint32_t na = a_end - a, nb = b_end - b;
      if (nb && (uint64_t)nb * 32 < na) {
        out = nsys__merge_small(c, src + a, na, src + b, nb, false, dst + out) + out;
      } else if (nb && (uint64_t)na * 32 < nb) {
        out = nsys__merge_small(c, src + b, nb, src + a, na, true, dst + out) + out;
      } else {
        while (a < a_end && b < b_end) dst[out++] = nsys__cmp_rows(c, src[b], src[a]) < 0 ? src[b++] : src[a++];
        while (a < a_end) dst[out++] = src[a++];
        while (b < b_end) dst[out++] = src[b++];
      }
      i = b_end;
      runs++;
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)n * sizeof(uint32_t));
  free(tmp);
}

/* Counting sort of n items by group[i] in [0, ngroups): perm and per-group
 * first offsets (ngroups + 1 entries). Stable. */
static uint32_t *nsys__group(const uint32_t *group, uint32_t n, uint32_t ngroups, uint32_t **first_out) {
  uint32_t *first = nsys_xcalloc((size_t)ngroups + 1, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) first[group[i] + 1]++;
  for (uint32_t g = 0; g < ngroups; g++) first[g + 1] += first[g];
  uint32_t *pos = nsys_xmalloc(((size_t)ngroups + 1) * sizeof(uint32_t));
  memcpy(pos, first, ((size_t)ngroups + 1) * sizeof(uint32_t));
  uint32_t *perm = nsys__big_alloc((size_t)(n ? n : 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) perm[pos[group[i]]++] = i;
  free(pos);
  *first_out = first;
  return perm;
}

/* ---- assembling the index ---------------------------------------------- */

static int nsys__cmp_track_key(const void *a, const void *b) {
  const nsys__track_key *x = a, *y = b;
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
  if (x->gpid != y->gpid) return x->gpid < y->gpid ? -1 : 1;
  return 0;
}

typedef struct {
  uint32_t pid, tid;
  int64_t gtid;
  uint32_t tmp;
} nsys__thread_key;

static int nsys__cmp_thread_key(const void *a, const void *b) {
  const nsys__thread_key *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->gtid != y->gtid) return x->gtid < y->gtid ? -1 : 1;
  return 0;
}

static bool nsys__name_is_nccl(const char *s) {
  return (s[0] == 'n' || s[0] == 'N') && (s[1] == 'c' || s[1] == 'C') &&
         (s[2] == 'c' || s[2] == 'C') && (s[3] == 'l' || s[3] == 'L');
}

/* dst[i] = src[perm[i]] into `spare` (a buffer of at least n elements); src's
 * buffer becomes the next spare: one new buffer for a chain of gathers of one
 * element size, instead of one per array (fewer page faults). */
#define NSYS__GATHER(dst, src, spare, perm, n)                  \
  do {                                                         \
    for (uint32_t i_ = 0; i_ < (n); i_++) (spare)[i_] = (src)[(perm)[i_]]; \
    void *freed_ = (src);                                      \
    (dst) = (spare);                                           \
    (spare) = freed_;                                          \
  } while (0)

/* Builds tracks and the ops arrays from b->ops (merging the worker's strings). */
void nsys__assemble_ops(nsys__build *b, nsys_index *ix) {
  nsys__raw_ops *r = &b->ops;
  uint32_t n = r->n;
  /* distinct tracks: temporary ids given by the reader (nsys__track_tmp) */
  uint32_t ntk = b->tk.n;
  nsys__track_key *keys = b->tk.keys;
  uint32_t *tgroup = r->tgroup;
  r->tgroup = NULL;
  /* final track order */
  nsys__track_key *sorted = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof *sorted);
  if (ntk) memcpy(sorted, keys, (size_t)ntk * sizeof *sorted);
  qsort(sorted, ntk, sizeof *sorted, nsys__cmp_track_key);
  uint32_t *tmp2final = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof(uint32_t));
  for (uint32_t t = 0; t < ntk; t++) tmp2final[sorted[t].tmp] = t;
  b->track_gpid = nsys_xmalloc((size_t)(ntk ? ntk : 1) * sizeof(int64_t));
  for (uint32_t t = 0; t < ntk; t++) b->track_gpid[t] = sorted[t].gpid;
  for (uint32_t i = 0; i < n; i++) tgroup[i] = tmp2final[tgroup[i]];
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(tgroup, n, ntk, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, r->kind, false};
  ix->n_tracks = ntk;
  ix->tracks = nsys_xcalloc(ntk ? ntk : 1, sizeof *ix->tracks);
  for (uint32_t t = 0; t < ntk; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    nsys_gpu_track *tr = &ix->tracks[t];
    tr->device = sorted[t].device;
    tr->stream = sorted[t].stream;
    tr->pid = nsys_gtid_pid(sorted[t].gpid);
    tr->first = first[t];
    tr->count = first[t + 1] - first[t];
  }
  /* scatter into final order; corr too (for the join). Each gather
   * writes into the buffer the previous one freed (see NSYS__GATHER). */
  nsys_ops *o = &ix->ops;
  o->n = n;
  size_t nn = n ? n : 1;
  int64_t *spare8 = nsys__big_alloc(nn * sizeof(int64_t));
  uint32_t *spare4 = nsys__big_alloc(nn * sizeof(uint32_t));
  NSYS__GATHER(o->start, r->start, spare8, perm, n);
  NSYS__GATHER(o->end, r->end, spare8, perm, n);
  NSYS__GATHER(o->rowid, r->rowid, spare8, perm, n);
  NSYS__GATHER(r->corr, r->corr, spare8, perm, n); /* now in final op order */
  NSYS__GATHER(o->name, r->name, spare4, perm, n); /* worker-local ids: see nsys__remap_op_names */
  NSYS__GATHER(o->full_name, r->full, spare4, perm, n);
  NSYS__GATHER(o->track, tgroup, spare4, perm, n);
  o->api = (int32_t *)spare4; /* tgroup's buffer */
  spare4 = NULL;
  for (uint32_t i = 0; i < n; i++) o->api[i] = -1;
  o->kind = nsys__big_alloc(nn);
  for (uint32_t i = 0; i < n; i++) o->kind[i] = r->kind[perm[i]];
  free(spare8);
  r->start = r->end = r->rowid = NULL; /* their buffers now hold final arrays */
  r->name = r->full = NULL;
  tgroup = NULL;
  free(perm);
  free(first);
  free(tmp2final);
  free(sorted);
  /* per track: busy union and class */
  for (uint32_t t = 0; t < ntk; t++) {
    nsys_gpu_track *tr = &ix->tracks[t];
    int64_t busy = 0, cur_s = 0, cur_e = 0;
    bool open = false;
    uint32_t nccl = 0, other = 0;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
      int64_t s = o->start[i], e = o->end[i];
      if (!open || s > cur_e) {
        if (open) busy += cur_e - cur_s;
        cur_s = s;
        cur_e = e;
        open = true;
      } else if (e > cur_e) {
        cur_e = e;
      }
      if (o->kind[i] == NSYS_OP_KERNEL) {
        if (nsys__name_is_nccl(nsys_strtab_get(&b->op_strings, o->name[i]))) nccl++;
        else other++;
      } else if (o->kind[i] == NSYS_OP_GRAPH) {
        other++; /* a graph launch runs kernels: compute */
      }
    }
    if (open) busy += cur_e - cur_s;
    tr->busy_ns = busy;
    tr->cls = nccl && other ? NSYS_STREAM_MIXED
              : nccl        ? NSYS_STREAM_COMM
              : other       ? NSYS_STREAM_COMPUTE
                            : NSYS_STREAM_COPY;
  }
}

/* Worker-local string ids of op names -> ix->strings. */
void nsys__remap_op_names(nsys__build *b, nsys_index *ix) {
  uint32_t *remap = nsys_xmalloc(((size_t)b->op_strings.count + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < b->op_strings.count; i++)
    remap[i] = nsys_strtab_intern(&ix->strings, b->op_strings.strs[i], b->op_strings.lens[i]);
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    ix->ops.name[i] = remap[ix->ops.name[i]];
    ix->ops.full_name[i] = remap[ix->ops.full_name[i]];
  }
  free(remap);
}

/* Threads: sorted by (pid, tid); names from ThreadNames (highest priority). */
uint32_t *nsys__assemble_threads(nsys__build *b, nsys_index *ix, nsys__src *src,
                                 nsys__sidmap *sm) {
  uint32_t nt = b->n_tmp;
  nsys__thread_key *k = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof *k);
  for (uint32_t i = 0; i < nt; i++)
    k[i] = (nsys__thread_key){nsys_gtid_pid(b->tmp_gtid[i]), nsys_gtid_tid(b->tmp_gtid[i]),
                              b->tmp_gtid[i], i};
  qsort(k, nt, sizeof *k, nsys__cmp_thread_key);
  uint32_t *tmp2final = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof(uint32_t));
  ix->n_threads = nt;
  ix->threads = nsys_xcalloc(nt ? nt : 1, sizeof *ix->threads);
  uint32_t empty = nsys_strtab_intern(&ix->strings, "", 0);
  int64_t *prio = nsys_xmalloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
  for (uint32_t t = 0; t < nt; t++) {
    tmp2final[k[t].tmp] = t;
    ix->threads[t].pid = k[t].pid;
    ix->threads[t].tid = k[t].tid;
    ix->threads[t].name = empty;
    prio[t] = INT64_MIN;
  }
  if (nsys__src_has(src, NSYS__SRC_THREAD_NAMES) && nt) {
    char sql[1024];
    bool has_prio = nsys__src_has_column(src, NSYS__SRC_THREAD_NAMES, "priority");
    snprintf(sql, sizeof sql, "SELECT globalTid, nameId, %s FROM %s", has_prio ? "priority" : "0",
             src->table[NSYS__SRC_THREAD_NAMES]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(src->db, sql, -1, &st, NULL) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t g = sqlite3_column_int64(st, 0);
        nsys__thread_key key = {nsys_gtid_pid(g), nsys_gtid_tid(g), g, 0};
        nsys__thread_key *hit = bsearch(&key, k, nt, sizeof *k, nsys__cmp_thread_key);
        if (!hit) continue;
        uint32_t t = (uint32_t)(hit - k);
        int64_t pr = sqlite3_column_int64(st, 2);
        if (pr < prio[t]) continue;
        prio[t] = pr;
        ix->threads[t].name = nsys__sidmap_get(sm, &b->strings, &ix->strings,
                                               sqlite3_column_int64(st, 1), NSYS__NAME_PLAIN);
      }
    }
    sqlite3_finalize(st);
  }
  free(prio);
  free(k);
  return tmp2final;
}

void nsys__assemble_api(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final) {
  nsys__raw_api *r = &b->api;
  uint32_t n = r->n;
  for (uint32_t i = 0; i < n; i++) r->thread[i] = tmp2final[r->thread[i]];
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(r->thread, n, ix->n_threads, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, NULL, false};
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    ix->threads[t].api_first = first[t];
    ix->threads[t].api_count = first[t + 1] - first[t];
  }
  nsys_api_calls *a = &ix->api;
  size_t nn = n ? n : 1;
  a->n = n;
  int64_t *spare8 = nsys__big_alloc(nn * sizeof(int64_t));
  uint32_t *spare4 = nsys__big_alloc(nn * sizeof(uint32_t));
  NSYS__GATHER(a->start, r->start, spare8, perm, n);
  NSYS__GATHER(a->end, r->end, spare8, perm, n);
  NSYS__GATHER(a->correlation, r->corr, spare8, perm, n);
  NSYS__GATHER(a->rowid, r->rowid, spare8, perm, n);
  NSYS__GATHER(a->name, r->name, spare4, perm, n);
  NSYS__GATHER(a->thread, r->thread, spare4, perm, n);
  a->first_op = (int32_t *)spare4; /* the raw thread buffer */
  for (uint32_t i = 0; i < n; i++) a->first_op[i] = -1;
  free(spare8);
  r->start = r->end = r->corr = r->rowid = NULL; /* their buffers now hold final arrays */
  r->name = r->thread = NULL;
  free(perm);
  free(first);
}

/* API <-> op join on (globalPid, correlationId), in two halves: the lookup
 * table from the API calls alone (built by the host reader while the GPU
 * reader may still run), then one probe per op. The table's type,
 * nsys__join_table: index_build_internal.h. */

#define NSYS__JH(g, c) \
  ((uint32_t)((((uint64_t)(c) * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(g) >> 24) * 0xC2B2AE3D27D4EB4FULL) >> 29))

void nsys__join_prepare(const nsys_index *ix, const int64_t *thread_gpid, nsys__join_table *jt) {
  const nsys_api_calls *a = &ix->api;
  memset(jt, 0, sizeof *jt);
  if (!a->n) return;
  {
    uint32_t pn[NSYS__JOIN_MAXP];
    uint32_t np = 0;
    bool ok = true;
    uint32_t last_t = UINT32_MAX, last_p = 0;
    for (uint32_t i = 0; i < a->n && ok; i++) {
      if (a->correlation[i] == 0) continue;
      if (a->thread[i] != last_t) {
        int64_t g = thread_gpid[a->thread[i]];
        uint32_t k = 0;
        while (k < np && jt->pg[k] != g) k++;
        if (k == np) {
          if (np == NSYS__JOIN_MAXP) {
            ok = false;
            break;
          }
          jt->pg[np] = g;
          jt->plo[np] = INT64_MAX;
          jt->phi[np] = INT64_MIN;
          pn[np++] = 0;
        }
        last_t = a->thread[i];
        last_p = k;
      }
      int64_t cv = a->correlation[i];
      if (cv < jt->plo[last_p]) jt->plo[last_p] = cv;
      if (cv > jt->phi[last_p]) jt->phi[last_p] = cv;
      pn[last_p]++;
    }
    size_t total = 0;
    for (uint32_t k = 0; k < np && ok; k++) {
      if (jt->plo[k] < 0 || jt->phi[k] - jt->plo[k] >= (int64_t)pn[k] * 4 + 4096) ok = false;
      else total += (size_t)(jt->phi[k] - jt->plo[k] + 1);
    }
    if (!np) return; /* no correlation ids: nothing joins */
    if (ok) {
      jt->np = np;
      jt->direct = nsys__big_alloc(total * sizeof(int32_t));
      memset(jt->direct, 0xFF, total * sizeof(int32_t));
      size_t acc_off = 0;
      for (uint32_t k = 0; k < np; k++) {
        jt->off[k] = acc_off;
        acc_off += (size_t)(jt->phi[k] - jt->plo[k] + 1);
      }
      last_t = UINT32_MAX;
      for (uint32_t i = 0; i < a->n; i++) {
        if (a->correlation[i] == 0) continue;
        if (a->thread[i] != last_t) {
          int64_t g = thread_gpid[a->thread[i]];
          last_p = 0;
          while (jt->pg[last_p] != g) last_p++;
          last_t = a->thread[i];
        }
        int32_t *slot = &jt->direct[jt->off[last_p] + (size_t)(a->correlation[i] - jt->plo[last_p])];
        if (*slot < 0) *slot = (int32_t)i; /* an id repeated within a process: the first call wins */
      }
      return;
    }
  }
  uint64_t cap = 1024;
  while (cap < (uint64_t)a->n * 2) cap *= 2;
  jt->mask = (uint32_t)(cap - 1);
  jt->slot = nsys_xcalloc(cap, sizeof(uint32_t));
  for (uint32_t i = 0; i < a->n; i++) {
    if (a->correlation[i] == 0) continue;
    int64_t g = thread_gpid[a->thread[i]];
    uint32_t j = NSYS__JH(g, a->correlation[i]) & jt->mask;
    while (jt->slot[j]) j = (j + 1) & jt->mask;
    jt->slot[j] = i + 1; /* probing finds the first call of a repeated id first */
  }
}

void nsys__join_finish(nsys__build *b, nsys_index *ix, const int64_t *thread_gpid,
                              nsys__join_table *jt) {
  nsys_api_calls *a = &ix->api;
  nsys_ops *o = &ix->ops;
  uint32_t n_ops = o->n;
  ix->op_next = nsys__big_alloc((size_t)(n_ops ? n_ops : 1) * sizeof(int32_t));
  for (uint32_t i = 0; i < n_ops; i++) ix->op_next[i] = -1;
  const int64_t *corr = b->ops.corr, *tg = b->track_gpid;
  if (jt->direct) {
    int64_t last_g = INT64_MIN;
    int32_t kp = -1;
    for (uint32_t i = 0; i < n_ops; i++) {
      int64_t cv = corr[i];
      if (cv == 0) continue;
      int64_t g = tg[o->track[i]];
      if (g != last_g) {
        last_g = g;
        kp = -1;
        for (uint32_t k = 0; k < jt->np; k++)
          if (jt->pg[k] == last_g) kp = (int32_t)k;
      }
      if (kp < 0 || cv < jt->plo[kp] || cv > jt->phi[kp]) continue;
      o->api[i] = jt->direct[jt->off[kp] + (size_t)(cv - jt->plo[kp])];
    }
  } else if (jt->slot) {
    for (uint32_t i = 0; i < n_ops; i++) {
      if (corr[i] == 0) continue;
      int64_t g = tg[o->track[i]];
      uint32_t j = NSYS__JH(g, corr[i]) & jt->mask;
      uint32_t v;
      while ((v = jt->slot[j]) != 0) {
        uint32_t ai = v - 1;
        if (a->correlation[ai] == corr[i] && thread_gpid[a->thread[ai]] == g) {
          o->api[i] = (int32_t)ai;
          break;
        }
        j = (j + 1) & jt->mask;
      }
    }
  }
  free(jt->direct);
  free(jt->slot);
  jt->direct = NULL;
  jt->slot = NULL;
  for (uint32_t i = n_ops; i-- > 0;) {
    int32_t ai = o->api[i];
    if (ai < 0) continue;
    ix->op_next[i] = a->first_op[ai];
    a->first_op[ai] = (int32_t)i;
  }
}
#undef NSYS__JH

void nsys__assemble_nvtx(nsys__build *b, nsys_index *ix, const uint32_t *tmp2final) {
  nsys__raw_nvtx *r = &b->nvtx;
  uint32_t n = r->n;
  for (uint32_t i = 0; i < n; i++) r->thread[i] = tmp2final[r->thread[i]];
  uint32_t empty = nsys_strtab_intern(&ix->strings, "", 0);
  uint32_t *first = NULL;
  uint32_t *perm = nsys__group(r->thread, n, ix->n_threads, &first);
  nsys__sort_ctx ctx = {r->start, r->end, r->rowid, NULL, true}; /* start asc, end desc */
  nsys_nvtx_ranges *v = &ix->nvtx;
  size_t nn = n ? n : 1;
  v->n = n;
  v->start = nsys__big_alloc(nn * sizeof(int64_t));
  v->end = nsys__big_alloc(nn * sizeof(int64_t));
  v->name = nsys__big_alloc(nn * sizeof(uint32_t));
  v->domain = nsys__big_alloc(nn * sizeof(uint32_t));
  v->thread = nsys__big_alloc(nn * sizeof(uint32_t));
  v->depth = nsys__big_alloc(nn * sizeof(uint16_t));
  v->parent = nsys__big_alloc(nn * sizeof(int32_t));
  uint32_t *stack = nsys__big_alloc(nn * sizeof(uint32_t));
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    nsys__sort_segment(perm + first[t], first[t + 1] - first[t], &ctx);
    ix->threads[t].nvtx_first = first[t];
    ix->threads[t].nvtx_count = first[t + 1] - first[t];
    uint32_t sp = 0;
    uint16_t maxd = 0;
    for (uint32_t i = first[t]; i < first[t + 1]; i++) {
      uint32_t s = perm[i];
      v->start[i] = r->start[s];
      v->end[i] = r->end[s];
      v->name[i] = r->name[s];
      v->domain[i] = r->dom[s] == UINT32_MAX || b->dom_name[r->dom[s]] == NSYS_STR_NONE
                         ? empty : b->dom_name[r->dom[s]];
      v->thread[i] = t;
      /* pop ranges that ended before this one starts */
      while (sp && v->end[stack[sp - 1]] < v->start[i]) sp--;
      /* nearest enclosing range (start/end ranges may cross) */
      int32_t parent = -1;
      for (uint32_t k = sp; k-- > 0;) {
        if (v->end[stack[k]] >= v->end[i]) {
          parent = (int32_t)stack[k];
          break;
        }
      }
      v->parent[i] = parent;
      uint32_t d = parent < 0 ? 0 : (uint32_t)v->depth[parent] + 1;
      v->depth[i] = (uint16_t)(d > UINT16_MAX ? UINT16_MAX : d);
      if (v->depth[i] > maxd) maxd = v->depth[i];
      stack[sp++] = i;
    }
    ix->threads[t].nvtx_max_depth = maxd;
  }
  free(stack);
  free(perm);
  free(first);
}
