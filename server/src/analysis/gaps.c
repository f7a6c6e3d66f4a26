/* gpu_idle_gaps and sync_cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyses.h"
#include "analysis/gap_phase.h"
#include "analysis/gap_streams.h"
#include "analysis/window.h"
#include "common/util.h"
#include "profile/profile.h"

typedef struct {
  int32_t device;
  int64_t stream; /* -1: device-level gap */
  int64_t start, end;
  int32_t next_op; /* op that ends the gap (-1 for device gaps) */
  size_t seq;      /* position when found: the last sort key (the order is total) */
} nsys__gap;

typedef struct {
  int64_t lo, hi;
  uint8_t cls;
} nsys__piece;

typedef struct {
  int64_t ns[NSYS_API__COUNT]; /* by nsys_api_class: time of the gap in which some
                                  thread was in a call of that class (a union);
                                  both memcpy flavours under NSYS_API_MEMCPY */
  int64_t a, b;
  int32_t top_api;
  int64_t top_ns;
  nsys__piece *pc; /* the calls' parts inside the gap */
  size_t n, cap;
} nsys__cpu;

static void nsys__cpu_cb(nsys_actx *c, uint32_t api, void *ud) {
  nsys__cpu *x = ud;
  int64_t lo = NSYS_MAX(x->a, c->ix->api.start[api]), hi = NSYS_MIN(x->b, c->ix->api.end[api]);
  if (hi <= lo) return;
  if (x->n == x->cap) {
    x->cap = x->cap ? x->cap * 2 : 16;
    x->pc = nsys_xrealloc(x->pc, x->cap * sizeof *x->pc);
  }
  nsys_api_class k = nsys_actx_api_class(c, api);
  x->pc[x->n++] = (nsys__piece){lo, hi, (uint8_t)(k == NSYS_API_MEMCPY_SYNC ? NSYS_API_MEMCPY : k)};
  if (hi - lo > x->top_ns) {
    x->top_ns = hi - lo;
    x->top_api = (int32_t)api;
  }
}

static int nsys__cmp_piece(const void *p, const void *q) {
  const nsys__piece *a = p, *b = q;
  if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

/* x->ns[class] = length of the union of that class's pieces: calls of several
 * threads, or nested calls, never count the same instant twice. */
static void nsys__cpu_union(nsys__cpu *x) {
  if (x->n > 1) qsort(x->pc, x->n, sizeof *x->pc, nsys__cmp_piece);
  nsys_ivls u;
  nsys_ivls_init(&u);
  for (size_t i = 0; i < x->n; i++) {
    nsys_ivls_add_sorted(&u, x->pc[i].lo, x->pc[i].hi);
    if (i + 1 == x->n || x->pc[i + 1].cls != x->pc[i].cls) { /* last piece of its class */
      x->ns[x->pc[i].cls] = nsys_ivls_total(&u);
      nsys_ivls_clear(&u);
    }
  }
  nsys_ivls_free(&u);
  free(x->pc);
  x->pc = NULL;
  x->n = x->cap = 0;
}

/* Gap causes: a CUDA API class (memcpy: both flavours) or, last, cpu_stall. */
enum { NSYS__N_CAUSES = 7 };
/* Their names are the columns of nsys_rd_gap_causes, in this order; a gap's
 * CPU time per class is nsys_rd_gap_cpu (the causes but cpu_stall, then
 * otherApi). */

static int64_t nsys__cause_ns(const nsys__cpu *x, int k) {
  switch (k) {
    case 0: return x->ns[NSYS_API_SYNC];
    case 1: return x->ns[NSYS_API_MEMCPY];
    case 2: return x->ns[NSYS_API_LAUNCH];
    case 3: return x->ns[NSYS_API_MODULE];
    case 4: return x->ns[NSYS_API_ALLOC];
    default: return x->ns[NSYS_API_HOST_REGISTER];
  }
}

/* Index of the cause (a column of nsys_rd_gap_causes) of the gap [a, b) on `device`; fills x. */
static int nsys__cause(nsys_actx *c, int32_t device, int64_t a, int64_t b, nsys__cpu *x) {
  memset(x, 0, sizeof *x);
  x->a = a;
  x->b = b;
  x->top_api = -1;
  for (uint32_t t = 0; t < c->ix->n_threads; t++)
    if (nsys_actx_thread_on_device(c, t, device)) nsys_actx_api_overlapping(c, t, a, b, nsys__cpu_cb, x);
  nsys__cpu_union(x);
  /* the dominant CUDA activity must cover a quarter of the gap; otherwise the
   * host thread was busy outside CUDA (Python, data loading, I/O): a CPU stall.
   * Ties go to the earlier cause (column) of nsys_rd_gap_causes. */
  int best = -1;
  int64_t best_ns = 0;
  for (int k = 0; k < NSYS__N_CAUSES - 1; k++) {
    int64_t ns = nsys__cause_ns(x, k);
    if (best < 0 || ns > best_ns) best = k, best_ns = ns;
  }
  if (best_ns * 4 < b - a) return NSYS__N_CAUSES - 1;
  return best;
}

/* The sync API in progress when the gap began (it drained the queue), and the
 * innermost NVTX range the host was in at the gap's midpoint. */
static void nsys__gap_context(nsys_actx *c, int32_t device, int64_t a, int64_t b, const char **sync_api,
                              const char **nvtx) {
  const nsys_index *ix = c->ix;
  *sync_api = NULL;
  *nvtx = NULL;
  uint32_t best_calls = 0;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    if (!nsys_actx_thread_on_device(c, t, device)) continue;
    const nsys_host_thread *th = &ix->threads[t];
    /* last API call starting at or before a */
    uint32_t lo = 0, hi = th->api_count;
    while (lo < hi) {
      uint32_t m = lo + (hi - lo) / 2;
      if (ix->api.start[th->api_first + m] <= a) lo = m + 1;
      else hi = m;
    }
    for (uint32_t k = lo; k > 0 && k + 8 > lo; k--) {
      uint32_t i = th->api_first + k - 1;
      if (ix->api.end[i] > a && nsys_actx_api_class(c, i) == NSYS_API_SYNC) {
        *sync_api = nsys_strtab_get(&ix->strings, ix->api.name[i]);
        break;
      }
    }
    if (th->api_count >= best_calls) {
      int64_t mid = a + (b - a) / 2;
      int32_t r = nsys_actx_innermost_nvtx(c, t, mid, mid);
      if (r >= 0) {
        *nvtx = nsys_strtab_get(&ix->strings, ix->nvtx.name[r]);
        best_calls = th->api_count;
      }
    }
  }
}

static int nsys__cmp_gap(const void *a, const void *b) {
  const nsys__gap *x = a, *y = b;
  int64_t dx = x->end - x->start, dy = y->end - y->start;
  if (dx != dy) return dx > dy ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Moves the first k gaps in nsys__cmp_gap order to v[0..k), sorted:
 * O(n log k) with a heap of the k best so far (its top sorts last), so
 * thousands of stream gaps cost no full sort when only `limit` are shown. */
static void nsys__top_gaps(nsys__gap *v, size_t n, size_t k) {
  if (k >= n || k == 0) {
    if (n > 1) qsort(v, n, sizeof *v, nsys__cmp_gap);
    return;
  }
  nsys__gap *h = nsys_xmalloc(k * sizeof *h);
  size_t hn = 0;
  for (size_t i = 0; i < n; i++) {
    if (hn == k && nsys__cmp_gap(&v[i], &h[0]) >= 0) continue;
    size_t j;
    if (hn < k) { /* sift up */
      j = hn++;
      while (j && nsys__cmp_gap(&h[(j - 1) / 2], &v[i]) < 0) {
        h[j] = h[(j - 1) / 2];
        j = (j - 1) / 2;
      }
      h[j] = v[i];
      continue;
    }
    j = 0; /* replace the top, sift down */
    for (;;) {
      size_t l = 2 * j + 1, r = l + 1, m = l;
      if (l >= hn) break;
      if (r < hn && nsys__cmp_gap(&h[r], &h[l]) > 0) m = r;
      if (nsys__cmp_gap(&h[m], &v[i]) <= 0) break;
      h[j] = h[m];
      j = m;
    }
    h[j] = v[i];
  }
  qsort(h, hn, sizeof *h, nsys__cmp_gap);
  memcpy(v, h, hn * sizeof *h);
  free(h);
}

typedef struct {
  nsys__gap *v;
  size_t n, cap;
} nsys__gapvec;

static void nsys__gap_push(nsys__gapvec *g, nsys__gap x) {
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 64;
    g->v = nsys_xrealloc(g->v, g->cap * sizeof *g->v);
  }
  x.seq = g->n;
  g->v[g->n++] = x;
}

bool nsys_an_gpu_idle_gaps(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  int64_t min_gap = nsys_actx_int(c, "minGapNs");
  int64_t limit = nsys_actx_int(c, "limit");
  int64_t kwait = nsys_actx_int(c, "kernelWaitNs");
  const char *scope = nsys_actx_str(c, "scope");
  bool want_dev = !scope || strcmp(scope, "stream") != 0;
  bool want_stream = !scope || strcmp(scope, "device") != 0;
  if (scope && strcmp(scope, "both") && strcmp(scope, "device") && strcmp(scope, "stream")) {
    nsys_task_fail(c->task, NSYS_E_INVALID_PARAMS, "params.params.scope: expected both, device or stream");
    return false;
  }
  nsys_gap_phaser own_ph;
  const nsys_gap_phaser *ph = nsys_gap_phaser_get(c, &own_ph);
  if (!ph) {
    nsys_gap_phaser_dispose(&own_ph);
    return true; /* cancelled: the run answers -32800 */
  }
  const nsys_winidx *wx = nsys_actx_winidx(c);
  /* the whole walk's stream gaps (gap_streams.h): a large window builds them,
   * a smaller one reads them when built; the kept gaps cover minGapNs from
   * the default up, the split's sums the default kernelWaitNs */
  const nsys_sgaps *sg = wx && min_gap >= NSYS_SGAPS_MIN_NS && kwait == NSYS_SGAPS_KWAIT_NS &&
                                 (nsys_win_large(c) || nsys_win_peek(&c->cache->sgaps))
                             ? nsys_actx_sgaps(c)
                             : NULL;
  if (c->stopped) {
    nsys_gap_phaser_dispose(&own_ph);
    return true;
  }
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  nsys__gapvec gaps = {0};
  nsys_rtab *per_dev = nsys_rset_arr(summary, GS_DEVICES);
  nsys_ivls u;
  nsys_ivls_init(&u);
  int64_t all_idle = 0, all_host = 0, all_kern = 0, all_other = 0;
  for (uint32_t d = 0; d < nd; d++) {
    int32_t dev = devs[d];
    size_t first_gap = gaps.n;
    const nsys_ivls *up = nsys_actx_device_union_ref(c, dev, nsys_pred_any, c->t0, c->t1, &u);
    int64_t idle_any = 0, idle_thr = 0;
    uint32_t n_thr = 0, buckets[3] = {0};
    for (uint32_t i = 1; i < up->n; i++) {
      int64_t gs = up->e[i - 1], ge = up->s[i];
      idle_any += ge - gs;
      if (ge - gs >= min_gap) {
        idle_thr += ge - gs;
        n_thr++;
        int64_t ms = (ge - gs) / 1000000;
        buckets[ms < 5 ? 0 : ms < 50 ? 1 : 2]++;
        if (want_dev) nsys__gap_push(&gaps, (nsys__gap){dev, -1, gs, ge, -1, 0});
      }
    }
    size_t dev_end = gaps.n;
    /* per-stream gaps + HTA split over all stream gaps */
    int64_t host = 0, kern = 0, other = 0;
    for (uint32_t t = 0; t < ix->n_tracks; t++) {
      const nsys_gpu_track *tr = &ix->tracks[t];
      /* copy and communication streams are idle by design between their
       * bursts: stream gaps and the HTA split cover compute/mixed streams */
      if (tr->device != dev || tr->cls == NSYS_STREAM_COPY || tr->cls == NSYS_STREAM_COMM) continue;
      if (sg && sg->t[t].ok) {
        const nsys_sgaps_track *gt = &sg->t[t];
        uint32_t lo, hi;
        int64_t split[3];
        nsys_sgaps_window(sg, wx, ix, t, c->t0, c->t1, &lo, &hi, split);
        host += split[0];
        kern += split[1];
        other += split[2];
        for (uint32_t k = lo; k < hi && want_stream && !nsys_actx_stop(c, k); k++) {
          int64_t s = ix->ops.start[gt->op[k]];
          if (s - gt->start[k] >= min_gap && !(want_dev && gt->dup[k]))
            nsys__gap_push(&gaps, (nsys__gap){dev, tr->stream, gt->start[k], s, (int32_t)gt->op[k], 0});
        }
        continue;
      }
      bool have = false;
      int64_t prev_end = 0;
      /* every op before the first still running at t0 is skipped below */
      uint32_t from = wx ? nsys_win_track_first_live(wx, ix, t, c->t0) : tr->first;
      for (uint32_t i = from; i < tr->first + tr->count && !nsys_actx_stop(c, i); i++) {
        if (ix->ops.end[i] <= c->t0) continue;
        if (ix->ops.start[i] >= c->t1) break;
        int64_t s = ix->ops.start[i];
        if (have && s > prev_end) {
          int64_t gap = s - prev_end;
          int split = nsys_gap_split(ix, i, prev_end, gap, kwait);
          *(split == 0 ? &host : split == 1 ? &kern : &other) += gap;
          if (want_stream && gap >= min_gap) {
            /* a stream gap identical to a device gap adds nothing (binary search
             * over this device's gaps, pushed in start order) */
            size_t lo = first_gap, hi = dev_end;
            while (lo < hi) {
              size_t m = lo + (hi - lo) / 2;
              if (gaps.v[m].start < prev_end) lo = m + 1;
              else hi = m;
            }
            bool dup = lo < dev_end && gaps.v[lo].start == prev_end && gaps.v[lo].end == s;
            if (!dup) nsys__gap_push(&gaps, (nsys__gap){dev, tr->stream, prev_end, s, (int32_t)i, 0});
          }
        }
        if (!have || ix->ops.end[i] > prev_end) prev_end = ix->ops.end[i];
        have = true;
      }
    }
    int64_t span = up->n ? up->e[up->n - 1] - up->s[0] : 0;
    nsys_rec o = nsys_rtab_add(per_dev);
    nsys_rset_i64(o, GD_DEVICE, dev);
    nsys_rset_i64(o, GD_START, up->n ? up->s[0] : c->t0);
    nsys_rset_i64(o, GD_END, up->n ? up->e[up->n - 1] : c->t0);
    nsys_rset_i64(o, GD_BUSY_NS, nsys_ivls_total(up));
    nsys_rset_i64(o, GD_IDLE_NS, idle_any);
    nsys_rset_f64(o, GD_IDLE_PCT, span ? nsys_round2(100.0 * (double)idle_any / (double)span) : 0);
    nsys_rset_i64(o, GD_GAP_COUNT, n_thr);
    nsys_rset_i64(o, GD_GAP_IDLE_NS, idle_thr);
    nsys_rec bk = nsys_rset_obj(o, GD_BUCKETS);
    nsys_rset_i64(bk, GB_LT5MS, buckets[0]);
    nsys_rset_i64(bk, GB_5TO50MS, buckets[1]);
    nsys_rset_i64(bk, GB_GE50MS, buckets[2]);
    /* causes of the device-level gaps above the threshold */
    int64_t cause_ns[NSYS__N_CAUSES] = {0}, phase_ns[NSYS_GAP__PHASES] = {0}, phase_n[NSYS_GAP__PHASES] = {0};
    for (size_t gi = first_gap; gi < gaps.n; gi++) {
      if (gaps.v[gi].stream != -1) continue;
      nsys__cpu x;
      int64_t len = gaps.v[gi].end - gaps.v[gi].start;
      cause_ns[nsys__cause(c, dev, gaps.v[gi].start, gaps.v[gi].end, &x)] += len;
      nsys_gap_phase phase = nsys_gap_phase_of(ph, dev, gaps.v[gi].start, gaps.v[gi].end, NULL);
      phase_ns[phase] += len;
      phase_n[phase]++;
    }
    nsys_rec cs = nsys_rset_obj(o, GD_CAUSE_NS);
    for (int k = 0; k < NSYS__N_CAUSES; k++) nsys_rset_i64(cs, nsys_rcol_i64(&nsys_rd_gap_causes, k), cause_ns[k]);
    nsys_rec ps = nsys_rset_obj(o, GD_PHASE_NS), pn = nsys_rset_obj(o, GD_PHASE_GAPS);
    for (int k = 0; k < NSYS_GAP__PHASES; k++) {
      nsys_rset_i64(ps, nsys_rcol_i64(&nsys_rd_gap_phases, k), phase_ns[k]);
      nsys_rset_i64(pn, nsys_rcol_i64(&nsys_rd_gap_phases, k), phase_n[k]);
    }
    nsys_rec hta = nsys_rset_obj(o, GD_SPLIT);
    nsys_rset_i64(hta, GSPL_HOST_WAIT_NS, host);
    nsys_rset_i64(hta, GSPL_KERNEL_WAIT_NS, kern);
    nsys_rset_i64(hta, GSPL_OTHER_NS, other);
    all_idle += idle_any;
    all_host += host;
    all_kern += kern;
    all_other += other;
  }
  nsys_ivls_free(&u);
  size_t shown = (limit > 0 && (size_t)limit < gaps.n) ? (size_t)limit : gaps.n;
  nsys__top_gaps(gaps.v, gaps.n, shown);
  for (size_t i = 0; i < shown; i++) {
    nsys__gap *g = &gaps.v[i];
    nsys__cpu x;
    int cause = nsys__cause(c, g->device, g->start, g->end, &x);
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_i64(o, GAP_DEVICE, g->device);
    if (g->stream < 0) nsys_rset_null(o, GAP_STREAM);
    else nsys_rset_i64(o, GAP_STREAM, g->stream);
    nsys_rset_i64(o, GAP_START, g->start);
    nsys_rset_i64(o, GAP_END, g->end);
    nsys_rset_i64(o, GAP_DURATION_NS, g->end - g->start);
    nsys_rset_str(o, GAP_CAUSE, nsys_rd_gap_causes.cols[cause].key);
    nsys_rec cpu = nsys_rset_obj(o, GAP_CPU_NS);
    for (int k = 0; k < NSYS__N_CAUSES - 1; k++) nsys_rset_i64(cpu, nsys_rcol_i64(&nsys_rd_gap_cpu, k), nsys__cause_ns(&x, k));
    nsys_rset_i64(cpu, GCPU_OTHER_API, x.ns[NSYS_API_OTHER]);
    nsys_rset_str(o, GAP_TOP_API, x.top_api >= 0 ? nsys_strtab_get(&ix->strings, ix->api.name[x.top_api]) : NULL);
    const char *after_sync, *nvtx;
    nsys__gap_context(c, g->device, g->start, g->end, &after_sync, &nvtx);
    nsys_rset_str(o, GAP_AFTER_SYNC, after_sync);
    nsys_rset_str(o, GAP_CPU_NVTX, nvtx);
    nsys_gap_phase_info pi;
    nsys_gap_phase_of(ph, g->device, g->start, g->end, &pi);
    nsys_rset_str(o, GAP_PHASE, nsys_gap_phase_name(pi.phase));
    if (pi.phase == NSYS_GAP_PROCESS_SWITCH || pi.phase == NSYS_GAP_FIRST_LAUNCH) nsys_rset_i64(o, GAP_PHASE_PID, pi.pid);
    if (pi.phase == NSYS_GAP_FIRST_LAUNCH) nsys_rset_str(o, GAP_FIRST_LAUNCH, nsys_strtab_get(&ix->strings, pi.kernel));
    if (pi.phase == NSYS_GAP_STARTUP) nsys_rset_i64(o, GAP_FIRST_ITERATION, pi.first_iteration);
    if (g->next_op >= 0) {
      static const char *const kinds[] = {"host_wait", "kernel_wait", "other"};
      nsys_rset_str(o, GAP_STREAM_SPLIT, kinds[nsys_gap_split(ix, (uint32_t)g->next_op, g->start, g->end - g->start, kwait)]);
      nsys_rset_str(o, GAP_NEXT_OP, nsys_strtab_get(&ix->strings, ix->ops.name[g->next_op]));
    }
  }
  nsys_rset_i64(summary, GS_GAP_COUNT, (int64_t)gaps.n);
  nsys_rset_i64(summary, GS_MIN_GAP_NS, min_gap);
  nsys_rset_i64(summary, GS_DEVICE_IDLE_NS, all_idle);
  nsys_rec hta = nsys_rset_obj(summary, GS_SPLIT);
  nsys_rset_i64(hta, GSPL_HOST_WAIT_NS, all_host);
  nsys_rset_i64(hta, GSPL_KERNEL_WAIT_NS, all_kern);
  nsys_rset_i64(hta, GSPL_OTHER_NS, all_other);
  free(gaps.v);
  free(devs);
  nsys_gap_phaser_dispose(&own_ph);
  return true;
}

/* ---------------------------------------------------------------- sync_cost */

typedef struct {
  uint32_t name;
  uint32_t count;
  uint32_t traced; /* calls whose process owns a traced device */
  int64_t total, max, idle;
} nsys__sgroup;

static int nsys__cmp_i64pair(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Length of the union of n [start, end) pairs, given as nr runs (run r
 * starts at pair run[r]; run[nr] == n), each in start order (a thread's
 * calls): each run's union, then the unions merged pairwise, O(n log nr).
 * A run out of order (never in a valid index) falls back to sorting them
 * all in place. */
static int64_t nsys__pairs_union(int64_t *iv, size_t n, const size_t *run, size_t nr) {
  bool sorted = true;
  for (size_t r = 0; r < nr && sorted; r++)
    for (size_t i = run[r] + 1; i < run[r + 1] && sorted; i++) sorted = iv[2 * i - 2] <= iv[2 * i];
  if (!sorted) {
    nsys_ivls u;
    nsys_ivls_init(&u);
    if (n > 1) qsort(iv, n, 2 * sizeof *iv, nsys__cmp_i64pair);
    for (size_t i = 0; i < n; i++) nsys_ivls_add_sorted(&u, iv[2 * i], iv[2 * i + 1]);
    int64_t len = nsys_ivls_total(&u);
    nsys_ivls_free(&u);
    return len;
  }
  nsys_ivls *u = nsys_xcalloc(nr + 1, sizeof *u);
  for (size_t r = 0; r < nr; r++)
    for (size_t i = run[r]; i < run[r + 1]; i++) nsys_ivls_add_sorted(&u[r], iv[2 * i], iv[2 * i + 1]);
  for (size_t step = 1; step < nr; step *= 2)
    for (size_t r = 0; r + step < nr; r += 2 * step) {
      nsys_ivls m;
      nsys_ivls_init(&m);
      nsys_ivls_union(&u[r], &u[r + step], &m);
      nsys_ivls_free(&u[r]);
      nsys_ivls_free(&u[r + step]);
      u[r] = m;
    }
  int64_t len = nr ? nsys_ivls_total(&u[0]) : 0;
  if (nr) nsys_ivls_free(&u[0]);
  free(u);
  return len;
}

static int nsys__cmp_sgroup(const void *a, const void *b) {
  const nsys__sgroup *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* syncType groups of the synchronization table summed in C, in the order of
 * SQL's GROUP BY syncType (NULL first, then by value): no sorter over the
 * table's rows. Only integer (or NULL) types 0..NSYS__SYNC_FAST-1 and
 * integer (or NULL) durations ("end"-start, as SUM sees them); anything else
 * (and a sum that would overflow, which SQL's SUM reports as an error) says
 * false, and the caller asks SQL. */
enum { NSYS__SYNC_FAST = 64 };
typedef struct {
  int64_t count[NSYS__SYNC_FAST + 1], total[NSYS__SYNC_FAST + 1]; /* [0]: NULL type, [1 + t]: type t */
} nsys__sync_sums;

static bool nsys__sync_sum_rows(sqlite3_stmt *st, nsys__sync_sums *g) {
  memset(g, 0, sizeof *g);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    sqlite3_value *vt = sqlite3_column_value(st, 0), *vd = sqlite3_column_value(st, 1); /* (the value_* calls take no lock) */
    int tt = sqlite3_value_type(vt), td = sqlite3_value_type(vd);
    if ((tt != SQLITE_INTEGER && tt != SQLITE_NULL) || (td != SQLITE_INTEGER && td != SQLITE_NULL)) return false;
    int64_t t = sqlite3_value_int64(vt);
    if (tt == SQLITE_INTEGER && (t < 0 || t >= NSYS__SYNC_FAST)) return false;
    size_t k = tt == SQLITE_NULL ? 0 : (size_t)t + 1;
    g->count[k]++;
    if (td == SQLITE_NULL) continue; /* SUM skips a NULL duration */
    if (__builtin_add_overflow(g->total[k], sqlite3_value_int64(vd), &g->total[k])) return false;
  }
  return rc == SQLITE_DONE;
}

static const char *nsys__sync_label(int64_t t) {
  static const char *const types[] = {"unknown", "event_sync", "stream_wait_event", "stream_sync", "context_sync"};
  return t >= 0 && t < 5 ? types[t] : "unknown";
}

static void nsys__sync_event(nsys_rtab *arr, int64_t t, int64_t count, int64_t total) {
  nsys_rec o = nsys_rtab_add(arr);
  nsys_rset_i64(o, SE_SYNC_TYPE, t);
  nsys_rset_str(o, SE_LABEL, nsys__sync_label(t));
  nsys_rset_i64(o, SE_COUNT, count);
  nsys_rset_i64(o, SE_TOTAL_NS, total);
}

static sqlite3_stmt *nsys__sync_prepare(nsys_actx *c, const char *cols, const char *tail) {
  char *sql = nsys_xasprintf("SELECT %s FROM %s WHERE start >= ?1 AND start < ?2 %s%s", cols,
                             c->p->schema.table[NSYS_TBL_SYNC], c->device >= 0 ? "AND deviceId = ?3 " : "", tail);
  sqlite3_stmt *st = nsys_actx_prepare(c, sql);
  free(sql);
  if (!st) return NULL;
  sqlite3_bind_int64(st, 1, c->t0);
  sqlite3_bind_int64(st, 2, c->t1);
  if (c->device >= 0) sqlite3_bind_int64(st, 3, c->device);
  return st;
}

static void nsys__sync_table(nsys_actx *c, nsys_rec summary) {
  struct nsys_profile *p = c->p;
  if (!p || !p->schema.table[NSYS_TBL_SYNC]) {
    nsys_rset_null(summary, SYS_EVENTS);
    return;
  }
  sqlite3_stmt *st = nsys__sync_prepare(c, "syncType, \"end\"-start", "");
  if (!st) {
    nsys_task_forgive(c->task, NSYS_OK); /* tolerate: the table shape differs */
    nsys_rset_null(summary, SYS_EVENTS);
    return;
  }
  nsys__sync_sums *g = nsys_xmalloc(sizeof *g);
  bool fast = nsys__sync_sum_rows(st, g);
  sqlite3_finalize(st);
  nsys_rtab *arr = nsys_rset_arr(summary, SYS_EVENTS);
  if (fast) {
    for (size_t k = 0; k <= NSYS__SYNC_FAST; k++)
      if (g->count[k]) nsys__sync_event(arr, k ? (int64_t)k - 1 : 0, g->count[k], g->total[k]);
    free(g);
    return;
  }
  free(g);
  /* types or times the fast path does not take, or a cancelled step: SQL groups them */
  st = nsys__sync_prepare(c, "syncType, COUNT(*), SUM(\"end\"-start)", "GROUP BY syncType ORDER BY syncType");
  if (!st) {
    nsys_task_forgive(c->task, NSYS_OK);
    nsys_rset_null(summary, SYS_EVENTS);
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW)
    nsys__sync_event(arr, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
  sqlite3_finalize(st);
}

bool nsys_an_sync_cost(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  nsys_ivls *scratch = nsys_xcalloc(nd + 1, sizeof *scratch);
  const nsys_ivls **busy = nsys_xcalloc(nd + 1, sizeof *busy);
  for (uint32_t d = 0; d < nd; d++) {
    nsys_ivls_init(&scratch[d]);
    busy[d] = nsys_actx_device_union_ref(c, devs[d], nsys_pred_any, INT64_MIN, INT64_MAX, &scratch[d]);
  }
  uint32_t ns = ix->strings.count;
  nsys__sgroup *g = nsys_xcalloc((size_t)ns + 1, sizeof *g);
  const uint8_t *name_api = nsys_actx_api_classes(c);
  int64_t total = 0, idle_total = 0;
  uint64_t calls = 0, traced = 0;
  int64_t *iv = NULL; /* the calls clipped to the window, for the wall-time share */
  size_t niv = 0, civ = 0;
  size_t *run = nsys_xmalloc(((size_t)ix->n_threads + 2) * sizeof *run), nrun = 0; /* where each thread's calls begin */
  uint32_t *mine = nsys_xmalloc(((size_t)nd + 1) * sizeof *mine); /* devices of the thread's process */
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    uint32_t nm_dev = 0;
    for (uint32_t d = 0; d < nd; d++)
      if (nsys_actx_thread_on_device(c, t, devs[d])) mine[nm_dev++] = d;
    if (!nm_dev && c->device >= 0) continue;
    if (!nrun || run[nrun - 1] < niv) run[nrun++] = niv;
    for (uint32_t k = th->api_first; k < th->api_first + th->api_count && !nsys_actx_stop(c, k); k++) {
      if (ix->api.start[k] < c->t0 || ix->api.start[k] >= c->t1) continue;
      uint32_t an = ix->api.name[k];
      nsys_api_class cls = an < ns ? (nsys_api_class)name_api[an] : NSYS_API_OTHER; /* = nsys_actx_api_class */
      if (cls != NSYS_API_SYNC && cls != NSYS_API_MEMCPY_SYNC) continue;
      int64_t a = ix->api.start[k], b = ix->api.end[k], dur = b - a;
      int64_t idle = 0;
      for (uint32_t j = 0; j < nm_dev; j++) idle += dur - nsys_ivls_len_in(busy[mine[j]], a, b);
      bool dev = nm_dev > 0;
      uint32_t nm = ix->api.name[k] < ns ? ix->api.name[k] : ns;
      g[nm].name = nm;
      g[nm].count++;
      g[nm].traced += dev;
      traced += dev;
      if (niv == civ) {
        civ = civ ? civ * 2 : 256;
        iv = nsys_xrealloc(iv, civ * 2 * sizeof *iv);
      }
      iv[2 * niv] = a;
      iv[2 * niv + 1] = NSYS_MIN(b, c->t1);
      niv++;
      g[nm].total += dur;
      g[nm].idle += idle;
      if (dur > g[nm].max) g[nm].max = dur;
      total += dur;
      idle_total += idle;
      calls++;
    }
  }
  uint32_t ng = 0;
  for (uint32_t k = 0; k <= ns; k++)
    if (g[k].count) g[ng++] = g[k];
  if (ng > 1) qsort(g, ng, sizeof *g, nsys__cmp_sgroup);
  for (uint32_t r = 0; r < ng; r++) {
    nsys_rec o = nsys_rtab_add(rows);
    const char *nm = g[r].name < ns ? nsys_strtab_get(&ix->strings, g[r].name) : "";
    nsys_rset_str(o, SY_API, nm);
    nsys_rset_str(o, SY_KIND, nsys_api_classify(nm) == NSYS_API_SYNC ? "sync" : "blocking_memcpy");
    nsys_rset_i64(o, SY_COUNT, g[r].count);
    nsys_rset_i64(o, SY_TOTAL_NS, g[r].total);
    nsys_rset_f64(o, SY_AVG_NS, round((double)g[r].total / g[r].count));
    nsys_rset_i64(o, SY_MAX_NS, g[r].max);
    /* null: no call of this name ran in a process with a traced GPU */
    if (g[r].traced) nsys_rset_i64(o, SY_GPU_IDLE_NS, g[r].idle);
    else nsys_rset_null(o, SY_GPU_IDLE_NS);
  }
  int64_t win = c->t1 - c->t0;
  nsys_rset_i64(summary, SYS_CALLS, (int64_t)calls);
  nsys_rset_i64(summary, SYS_TOTAL_NS, total);
  /* wall time: some thread was in such a call (a union, so <= 100%) */
  if (nrun && run[nrun - 1] == niv) nrun--; /* the last thread added none */
  run[nrun] = niv;
  int64_t wall = nsys__pairs_union(iv, niv, run, nrun);
  nsys_rset_i64(summary, SYS_WALL_NS, wall);
  nsys_rset_f64(summary, SYS_PCT_OF_WINDOW, win > 0 ? nsys_round2(100.0 * (double)wall / (double)win) : 0);
  if (traced) nsys_rset_i64(summary, SYS_GPU_IDLE_NS, idle_total);
  else nsys_rset_null(summary, SYS_GPU_IDLE_NS);
  free(iv);
  free(run);
  nsys__sync_table(c, summary);
  for (uint32_t d = 0; d < nd; d++) nsys_ivls_free(&scratch[d]);
  free(scratch);
  free(busy);
  free(mine);
  free(g);
  free(devs);
  return true;
}
