/* See klaunch_sweep.h. */
#include "analysis/klaunch_sweep.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/devunions.h"
#include "analysis/window.h"
#include "common/util.h"

static inline int nsys__step(const nsys_index *ix, nsys_lsweep *w, uint32_t op, nsys_lrun out[2]) {
  int32_t a = ix->ops.api[op];
  return nsys_lsweep_step(w, NSYS_KSWEEP_SMALL_NS, NSYS_KSWEEP_MAX_GAP_NS, ix->ops.start[op], ix->ops.end[op], a >= 0,
                          a >= 0 ? ix->api.start[a] : 0, a >= 0 ? ix->api.end[a] : 0, out);
}

/* The heap's code: the stream place of each heap slot's cursor, 4 bits each. */
static uint64_t nsys__heap_code(const nsys_opmerge *m, uint32_t trk0) {
  uint64_t code = 0;
  for (uint32_t i = 0; i < m->hn; i++) code |= (uint64_t)(m->ix->ops.track[m->cur[m->heap[i]]] - trk0) << (4 * i);
  return code;
}

/* Start of the op the heap pops next (INT64_MAX: none). */
static inline int64_t nsys__heap_top(const nsys_opmerge *m) {
  return m->hn ? m->ix->ops.start[m->cur[m->heap[0]]] : INT64_MAX;
}

static bool nsys__build_var(nsys_actx *c, nsys_ksweep_dev *v);

static bool nsys__build_dev(nsys_actx *c, nsys_ksweep_dev *v) {
  const nsys_index *ix = c->ix;
  uint32_t cap = 1024, ntrk = 0;
  v->trk0 = UINT32_MAX;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (ix->tracks[t].device == v->device) {
      if (v->trk0 == UINT32_MAX) v->trk0 = t;
      ntrk++;
    }
  bool codes = ntrk <= NSYS_KSWEEP_HEAP_TRACKS; /* heap codes recorded while walking (nsys_opmerge's own walk) */
  v->k = nsys_xmalloc(cap * sizeof *v->k);
  uint32_t hcap = 64;
  if (codes) {
    v->hcode = nsys_xmalloc(hcap * sizeof *v->hcode);
    v->hn = nsys_xmalloc(hcap);
  }
  /* the same sequence either way (devunions.h); the heap's own walk when its codes are wanted */
  nsys_opiter it;
  nsys_opmerge m;
  if (codes) nsys_opmerge_init(&m, ix, v->device, INT64_MIN);
  else nsys_opiter_init(&it, c, v->device, INT64_MIN);
  bool pending = false; /* a whole block's last kernel whose group of starts is not done */
  int64_t pend = 0;
  for (;;) {
    if (pending && nsys__heap_top(&m) > pend) { /* every op starting at or before pend taken */
      uint32_t b = v->n / NSYS_KSWEEP_BLOCK - 1;
      v->hcode[b] = nsys__heap_code(&m, v->trk0);
      v->hn[b] = (uint8_t)m.hn;
      pending = false;
    }
    int64_t op = codes ? nsys_opmerge_next(&m) : nsys_opiter_next(&it);
    if (op < 0) break;
    if (nsys_actx_stop(c, (uint64_t)op)) break;
    if (ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    if (v->n == cap) v->k = nsys_xrealloc(v->k, (cap *= 2) * sizeof *v->k);
    if (pending) { /* a kernel of the same start after the block's end: no code there */
      v->hn[v->n / NSYS_KSWEEP_BLOCK - 1] = NSYS_KSWEEP_NO_HEAP;
      pending = false;
    }
    v->k[v->n++] = (uint32_t)op;
    if (codes && v->n % NSYS_KSWEEP_BLOCK == 0) {
      if (v->n / NSYS_KSWEEP_BLOCK > hcap) {
        hcap *= 2;
        v->hcode = nsys_xrealloc(v->hcode, hcap * sizeof *v->hcode);
        v->hn = nsys_xrealloc(v->hn, hcap);
      }
      v->hn[v->n / NSYS_KSWEEP_BLOCK - 1] = NSYS_KSWEEP_NO_HEAP;
      pending = true;
      pend = ix->ops.start[op];
    }
  }
  if (codes) nsys_opmerge_free(&m);
  else nsys_opiter_free(&it);
  if (c->stopped) return false;
  v->op_min = INT64_MAX;
  for (uint32_t t = 0; t < ix->n_tracks; t++) /* a track's first op starts first */
    if (ix->tracks[t].device == v->device && ix->tracks[t].count && ix->ops.start[ix->tracks[t].first] < v->op_min)
      v->op_min = ix->ops.start[ix->tracks[t].first];
  v->k_min = v->n ? ix->ops.start[v->k[0]] : INT64_MAX;
  for (uint32_t j = 0; j < v->n; j++)
    if (ix->ops.end[v->k[j]] < ix->ops.start[v->k[j]]) v->k_min = INT64_MIN; /* no prefix windows (below) */
  /* exact unless a group of kernels of several streams starting together
   * could answer differently in another order: all small or all not, and
   * either none launched by an API call or the GPU busy past their start
   * (none of them can add exposed time) */
  v->exact = true;
  int64_t busy = INT64_MIN;
  for (uint32_t j = 0; j < v->n && v->exact;) {
    uint32_t g = j + 1, op = v->k[j];
    int64_t s = ix->ops.start[op];
    bool tracks = false, small = ix->ops.end[op] - s < NSYS_KSWEEP_SMALL_NS, same = true, api = ix->ops.api[op] >= 0;
    for (; g < v->n && ix->ops.start[v->k[g]] == s; g++) {
      uint32_t o = v->k[g];
      tracks |= ix->ops.track[o] != ix->ops.track[op];
      same &= (ix->ops.end[o] - s < NSYS_KSWEEP_SMALL_NS) == small;
      api |= ix->ops.api[o] >= 0;
    }
    if (tracks && !(same && (!api || (j && busy >= s)))) v->exact = false;
    for (; j < g; j++) {
      if (ix->ops.end[v->k[j]] < ix->ops.start[v->k[j]]) v->exact = false;
      if (ix->ops.end[v->k[j]] > busy) busy = ix->ops.end[v->k[j]];
    }
  }
  v->heap = !v->exact && codes && v->k_min != INT64_MIN; /* a kernel ending before it starts: the old loop */
  if (!v->heap) {
    free(v->hcode);
    free(v->hn);
    v->hcode = NULL;
    v->hn = NULL;
  }
  v->blk = nsys_xmalloc(((size_t)v->n / NSYS_KSWEEP_BLOCK + 1) * sizeof *v->blk);
  uint32_t scap = 0;
  nsys_lsweep w = {0};
  nsys_lrun out[2];
  for (uint32_t j = 0; j < v->n; j++) {
    int nc = nsys__step(ix, &w, v->k[j], out);
    for (int x = 0; x < nc; x++) {
      if (out[x].n < NSYS_KSWEEP_MIN_RUN) continue;
      if (v->n_storm == scap) v->storm = nsys_xrealloc(v->storm, (scap = scap ? 2 * scap : 64) * sizeof *v->storm);
      v->storm[v->n_storm++] = (nsys_kstorm){j, out[x]};
    }
    if (j % NSYS_KSWEEP_BLOCK == NSYS_KSWEEP_BLOCK - 1) v->blk[j / NSYS_KSWEEP_BLOCK] = w;
  }
  return !v->heap || nsys__build_var(c, v);
}

static void nsys__storm_add(nsys_kstorm **st, uint32_t *n, uint32_t *cap, uint32_t at, const nsys_lrun *run) {
  if (*n == *cap) *st = nsys_xrealloc(*st, (*cap = *cap ? 2 * *cap : 64) * sizeof **st);
  (*st)[(*n)++] = (nsys_kstorm){at, *run};
}

/* The second sweep of a heap device (klaunch_sweep.h): the same walk, its
 * heap's two children swapped at each recorded block end where its
 * arrangement is the first sweep's. */
static bool nsys__build_var(nsys_actx *c, nsys_ksweep_dev *v) {
  const nsys_index *ix = c->ix;
  uint32_t nb = v->n / NSYS_KSWEEP_BLOCK, pos = 0, scap = 0;
  v->vblk = nsys_xmalloc(((size_t)nb + 1) * sizeof *v->vblk);
  v->vcode = nsys_xmalloc(((size_t)nb + 1) * sizeof *v->vcode);
  v->vhn = nsys_xmalloc((size_t)nb + 1);
  v->vflip = nsys_xcalloc((size_t)nb + 1, 1);
  nsys_opmerge m;
  nsys_opmerge_init(&m, ix, v->device, INT64_MIN);
  nsys_lsweep w = {0};
  nsys_lrun out[2];
  bool pending = false;
  int64_t pend = 0;
  for (;;) {
    if (pending && nsys__heap_top(&m) > pend) {
      uint32_t bl = pos / NSYS_KSWEEP_BLOCK - 1;
      if (v->hn[bl] != NSYS_KSWEEP_NO_HEAP && m.hn == 3 && v->hn[bl] == 3 &&
          nsys__heap_code(&m, v->trk0) == v->hcode[bl]) { /* back in the first sweep's arrangement: swap */
        uint32_t t = m.heap[1];
        m.heap[1] = m.heap[2];
        m.heap[2] = t;
        v->vflip[bl] = 1;
      }
      v->vcode[bl] = nsys__heap_code(&m, v->trk0);
      v->vhn[bl] = (uint8_t)m.hn;
      pending = false;
    }
    int64_t op = nsys_opmerge_next(&m);
    if (op < 0 || nsys_actx_stop(c, (uint64_t)op)) break;
    if (ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    if (pending) {
      v->vhn[pos / NSYS_KSWEEP_BLOCK - 1] = NSYS_KSWEEP_NO_HEAP;
      pending = false;
    }
    int nc = nsys__step(ix, &w, (uint32_t)op, out);
    for (int x = 0; x < nc; x++)
      if (out[x].n >= NSYS_KSWEEP_MIN_RUN) nsys__storm_add(&v->vstorm, &v->n_vstorm, &scap, pos, &out[x]);
    if (++pos % NSYS_KSWEEP_BLOCK == 0) {
      v->vblk[pos / NSYS_KSWEEP_BLOCK - 1] = w;
      v->vhn[pos / NSYS_KSWEEP_BLOCK - 1] = NSYS_KSWEEP_NO_HEAP;
      pending = true;
      pend = ix->ops.start[op];
    }
  }
  nsys_opmerge_free(&m);
  return !c->stopped;
}

static void *nsys__build(nsys_actx *c) {
  int32_t *devs;
  nsys_ksweep *k = nsys_xcalloc(1, sizeof *k);
  k->n_dev = nsys_track_devices(c->ix, &devs);
  k->dev = nsys_xcalloc((size_t)k->n_dev + 1, sizeof *k->dev);
  for (uint32_t d = 0; d < k->n_dev; d++) k->dev[d].device = devs[d];
  free(devs);
  for (uint32_t d = 0; d < k->n_dev; d++)
    if (!nsys__build_dev(c, &k->dev[d])) {
      nsys_ksweep_free(k);
      return NULL;
    }
  return k;
}

const nsys_ksweep *nsys_actx_ksweep(nsys_actx *c) {
  if (!nsys_actx_winidx(c)) return NULL;
  nsys_acache *k = c->cache;
  return nsys_win_cached(c, &k->ksweep, &k->ksweep_building, nsys__build);
}

void nsys_ksweep_free(nsys_ksweep *k) {
  if (!k) return;
  for (uint32_t d = 0; d < k->n_dev; d++) {
    free(k->dev[d].k);
    free(k->dev[d].blk);
    free(k->dev[d].storm);
    free(k->dev[d].hcode);
    free(k->dev[d].hn);
    free(k->dev[d].vblk);
    free(k->dev[d].vcode);
    free(k->dev[d].vhn);
    free(k->dev[d].vflip);
    free(k->dev[d].vstorm);
  }
  free(k->dev);
  free(k);
}

const nsys_ksweep_dev *nsys_ksweep_find(const nsys_ksweep *k, int32_t device) {
  for (uint32_t d = 0; d < k->n_dev; d++)
    if (k->dev[d].device == device) return &k->dev[d];
  return NULL;
}

/* First position of v's kernels whose start is >= a (strict false) or > a (strict true). */
static uint32_t nsys__lower(const nsys_index *ix, const nsys_ksweep_dev *v, int64_t a, bool strict) {
  uint32_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    int64_t s = ix->ops.start[v->k[m]];
    if (s < a || (strict && s == a)) lo = m + 1;
    else hi = m;
  }
  return lo;
}

bool nsys_ksweep_prefix(const nsys_ksweep_dev *v, int64_t a) { return a < v->k_min && a <= v->op_min; }

bool nsys_ksweep_usable(const nsys_ksweep_dev *v, int64_t a) { return v->exact || v->heap || nsys_ksweep_prefix(v, a); }

static bool nsys__same(const nsys_lsweep *x, const nsys_lsweep *y) {
  return x->have_busy == y->have_busy && x->busy_end == y->busy_end && x->run_n == y->run_n &&
         (!x->run_n || (x->run_s == y->run_s && x->run_e == y->run_e));
}

/* m: device v's heap when every op starting at or before s is taken, arranged by code (hn places). */
static void nsys__heap_at(nsys_opmerge *m, const nsys_index *ix, const nsys_ksweep_dev *v, int64_t s, uint64_t code,
                          uint32_t hn) {
  m->ix = ix;
  m->cur = nsys_xmalloc(((size_t)hn + 1) * sizeof *m->cur);
  m->end = nsys_xmalloc(((size_t)hn + 1) * sizeof *m->end);
  m->heap = nsys_xmalloc(((size_t)hn + 1) * sizeof *m->heap);
  m->hn = hn;
  for (uint32_t i = 0; i < hn; i++) {
    const nsys_gpu_track *tr = &ix->tracks[v->trk0 + ((code >> (4 * i)) & 15)];
    uint32_t lo = tr->first, hi = tr->first + tr->count;
    while (lo < hi) { /* its first op starting after s (one exists: it is in the heap) */
      uint32_t mid = lo + (hi - lo) / 2;
      if (ix->ops.start[mid] <= s) lo = mid + 1;
      else hi = mid;
    }
    m->cur[i] = lo;
    m->end[i] = tr->first + tr->count;
    m->heap[i] = i;
  }
}

/* One step of a window walk from a: the merge's next op. -1: the walk ends
 * (no op left, stopped, or one starting at or after b); 0: an op it skips
 * (ended by a, or not a kernel); 1: a kernel stepped, its closed runs
 * emitted and *start set to its start. */
static int nsys__walk_take(nsys_actx *c, nsys_opmerge *m, int64_t a, int64_t b, nsys_lsweep *w,
                           void (*emit)(void *ud, const nsys_lrun *run), void *ud, int64_t *start) {
  const nsys_index *ix = c->ix;
  int64_t op = nsys_opmerge_next(m);
  if (op < 0 || nsys_actx_stop(c, (uint64_t)op) || ix->ops.start[op] >= b) return -1;
  if (ix->ops.end[op] <= a || ix->ops.kind[op] != NSYS_OP_KERNEL) return 0;
  nsys_lrun out[2];
  int nc = nsys__step(ix, w, (uint32_t)op, out);
  for (int x = 0; x < nc; x++) emit(ud, &out[x]);
  *start = ix->ops.start[op];
  return 1;
}

/* nsys_ksweep_run for a heap device (not a prefix window): the walk from a,
 * jumping along the first or the second recorded sweep wherever its state
 * and heap arrangement equal that record's at a block end (the second no
 * further than its next swap), then walking on from the heap rebuilt there. */
static void nsys__run_heap(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, uint32_t pz, uint32_t pb,
                           nsys_lsweep *w, void (*emit)(void *ud, const nsys_lrun *run), void *ud) {
  const nsys_index *ix = c->ix;
  nsys_opmerge m;
  nsys_opmerge_init(&m, ix, v->device, a);
  bool past = false, checked = false; /* past: a kernel starting after a taken */
  uint32_t pos = pz; /* past: the positions every op starting at or before last covers */
  int64_t last = 0;
  for (;;) {
    if (past && !checked && nsys__heap_top(&m) > last) {
      checked = true;
      uint32_t j = pos - 1, bl = j / NSYS_KSWEEP_BLOCK;
      int r = -1;
      if (j % NSYS_KSWEEP_BLOCK == NSYS_KSWEEP_BLOCK - 1) {
        uint64_t code = nsys__heap_code(&m, v->trk0);
        if (v->hn[bl] == m.hn && v->hcode[bl] == code && nsys__same(w, &v->blk[bl])) r = 0;
        else if (v->vhn[bl] == m.hn && v->vcode[bl] == code && nsys__same(w, &v->vblk[bl])) r = 1;
      }
      uint32_t tb = UINT32_MAX; /* the block to jump to: the last whose end is before pb, no group straddles it */
      for (uint32_t jb = pb / NSYS_KSWEEP_BLOCK; r >= 0 && jb && jb * NSYS_KSWEEP_BLOCK - 1 > j; jb--) {
        uint32_t jj = jb * NSYS_KSWEEP_BLOCK - 1;
        if ((jj + 1 < v->n && ix->ops.start[v->k[jj + 1]] == ix->ops.start[v->k[jj]]) ||
            v->hn[jb - 1] == NSYS_KSWEEP_NO_HEAP || (r == 1 && v->vhn[jb - 1] == NSYS_KSWEEP_NO_HEAP))
          continue;
        tb = jb - 1;
        break;
      }
      if (r == 1) /* the second sweep is this walk's only up to its next swap */
        for (uint32_t x = bl + 1; tb != UINT32_MAX && x < tb; x++)
          if (v->vflip[x]) tb = x;
      if (tb != UINT32_MAX) {
        uint32_t jj = tb * NSYS_KSWEEP_BLOCK + NSYS_KSWEEP_BLOCK - 1;
        const nsys_lsweep *from = r ? &v->vblk[bl] : &v->blk[bl], *to = r ? &v->vblk[tb] : &v->blk[tb];
        const nsys_kstorm *st = r ? v->vstorm : v->storm;
        uint32_t ns = r ? v->n_vstorm : v->n_storm, s0 = 0, s1 = ns; /* the storms closed at steps (j, jj] */
        while (s0 < s1) {
          uint32_t mid = s0 + (s1 - s0) / 2;
          if (st[mid].at <= j) s0 = mid + 1;
          else s1 = mid;
        }
        for (; s0 < ns && st[s0].at <= jj; s0++) emit(ud, &st[s0].run);
        uint64_t exposed = w->exposed + (to->exposed - from->exposed);
        *w = *to;
        w->exposed = exposed;
        /* the walk's arrangement there: the record's (the first sweep's where the second was swapped) */
        bool first = !r || v->vflip[tb];
        last = ix->ops.start[v->k[jj]];
        nsys_opmerge_free(&m);
        nsys__heap_at(&m, ix, v, last, first ? v->hcode[tb] : v->vcode[tb], first ? v->hn[tb] : v->vhn[tb]);
        pos = jj + 1;
        checked = false;
        continue;
      }
    }
    int took = nsys__walk_take(c, &m, a, b, w, emit, ud, &last);
    if (took < 0) break;
    if (took == 0) continue;
    checked = false;
    if (last > a) {
      pos++;
      past = true;
    }
  }
  nsys_opmerge_free(&m);
}

void nsys_ksweep_run(nsys_actx *c, const nsys_ksweep_dev *v, int64_t a, int64_t b, nsys_lsweep *w,
                     void (*emit)(void *ud, const nsys_lrun *run), void *ud) {
  const nsys_index *ix = c->ix;
  memset(w, 0, sizeof *w);
  nsys_lrun out[2];
  uint32_t pz = nsys__lower(ix, v, a, true), pb = nsys__lower(ix, v, b, false);
  if (nsys_ksweep_prefix(v, a)) { /* the walk is the recorded one: its first pb kernels */
    uint32_t jb = pb / NSYS_KSWEEP_BLOCK, x = 0;
    if (jb) {
      for (uint32_t s0 = 0; s0 < v->n_storm && v->storm[s0].at < jb * NSYS_KSWEEP_BLOCK; s0++) emit(ud, &v->storm[s0].run);
      *w = v->blk[jb - 1];
      x = jb * NSYS_KSWEEP_BLOCK;
    }
    for (; x < pb && !nsys_actx_stop(c, x); x++) {
      int nc = nsys__step(ix, w, v->k[x], out);
      for (int y = 0; y < nc; y++) emit(ud, &out[y]);
    }
    return;
  }
  if (v->heap) {
    nsys__run_heap(c, v, a, b, pz, pb, w, emit, ud);
    return;
  }
  /* the loop's own walk (the heap from a, ties in its order) until, every
   * op starting at or before the last kernel's start taken, the state equals
   * the whole sweep's at a block's end with every later kernel in the window
   * (checked only once the walk is past a, at no binary search)
   * (and, for an inexact device, the heap is arranged as the whole walk's was there) */
  nsys_opmerge m;
  nsys_opmerge_init(&m, ix, v->device, a);
  bool checked = false, synced = false;
  uint32_t after = 0; /* kernels taken that start after a (no kernel ends before it starts here: exact or heap) */
  int64_t last = 0;
  uint32_t j = 0; /* synced: the last position the state covers */
  for (;;) {
    if (after && !checked && nsys__heap_top(&m) > last) {
      checked = true;
      j = pz + after - 1; /* the kernels starting at or before last: those before pz, and each taken after a */
      uint32_t bl = j / NSYS_KSWEEP_BLOCK;
      if (j % NSYS_KSWEEP_BLOCK == NSYS_KSWEEP_BLOCK - 1 && nsys__same(w, &v->blk[bl]) &&
          (v->exact || (v->hn[bl] == m.hn && v->hcode[bl] == nsys__heap_code(&m, v->trk0)))) {
        synced = true;
        break;
      }
    }
    int took = nsys__walk_take(c, &m, a, b, w, emit, ud, &last);
    if (took < 0) break;
    if (took == 0) continue;
    checked = false;
    if (last > a) after++;
  }
  nsys_opmerge_free(&m);
  if (!synced) return;
  /* the same steps from here on as the whole sweep's: jump to the last block
   * end before pb that no group of kernels starting together straddles */
  const nsys_lsweep *at = &v->blk[j / NSYS_KSWEEP_BLOCK];
  for (uint32_t jb = pb / NSYS_KSWEEP_BLOCK; jb && jb * NSYS_KSWEEP_BLOCK - 1 > j; jb--) {
    uint32_t jj = jb * NSYS_KSWEEP_BLOCK - 1;
    if (jj + 1 < v->n && ix->ops.start[v->k[jj + 1]] == ix->ops.start[v->k[jj]]) continue;
    const nsys_lsweep *to = &v->blk[jb - 1];
    uint32_t s0 = 0, s1 = v->n_storm; /* the storms closed at steps (j, jj] */
    while (s0 < s1) {
      uint32_t mid = s0 + (s1 - s0) / 2;
      if (v->storm[mid].at <= j) s0 = mid + 1;
      else s1 = mid;
    }
    for (; s0 < v->n_storm && v->storm[s0].at <= jj; s0++) emit(ud, &v->storm[s0].run);
    uint64_t exposed = w->exposed + (to->exposed - at->exposed);
    *w = *to;
    w->exposed = exposed;
    j = jj;
    break;
  }
  for (uint32_t x = j + 1; x < pb && !nsys_actx_stop(c, x); x++) { /* ties here cannot change the answer (exact) */
    int nc = nsys__step(ix, w, v->k[x], out);
    for (int y = 0; y < nc; y++) emit(ud, &out[y]);
  }
}
