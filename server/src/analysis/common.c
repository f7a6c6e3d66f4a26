/* Shared helpers of the analyses: name classification, device unions over
 * the index's per-track sorted ops, API-call overlap search, NVTX lookup. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/analysis.h"
#include "analysis/devunions.h"
#include "analysis/window.h"
#include "common/util.h"

static inline unsigned char nsys__fold(unsigned char ch) { return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch + 32) : ch; }

/* strncasecmp at every position in the C locale (ASCII folding), without a
 * call per position: a position is compared only when its first byte
 * matches (names are scanned per NVTX name and per op class). */
bool nsys_icontains(const char *hay, const char *needle) {
  if (!hay || !needle) return false;
  const unsigned char *h = (const unsigned char *)hay, *nd = (const unsigned char *)needle;
  if (!nd[0]) return true;
  unsigned char f = nsys__fold(nd[0]);
  for (; *h; h++) {
    if (nsys__fold(*h) != f) continue;
    size_t i = 1;
    while (nd[i] && h[i] && nsys__fold(h[i]) == nsys__fold(nd[i])) i++;
    if (!nd[i]) return true;
  }
  return false;
}

uint8_t *nsys_nvtx_names_where(const nsys_index *ix, bool (*is_match)(const char *name, const void *ud), const void *ud) {
  uint32_t ns = ix->strings.count;
  uint8_t *match = nsys_xcalloc((size_t)ns + 1, 1);
  for (uint32_t r = 0; r < ix->nvtx.n; r++)
    if (ix->nvtx.name[r] < ns) match[ix->nvtx.name[r]] = 2; /* a candidate, tested below once */
  for (uint32_t k = 0; k < ns; k++)
    if (match[k] == 2) match[k] = is_match(nsys_strtab_get(&ix->strings, k), ud);
  return match;
}

bool nsys_name_is_nccl(const char *name) { return nsys_icontains(name, "nccl"); }

static bool nsys__prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

nsys_api_class nsys_api_classify(const char *name) {
  if (!name) return NSYS_API_OTHER;
  if (nsys__prefix(name, "cudaLaunch") || nsys__prefix(name, "cuLaunch") ||
      nsys__prefix(name, "cudaGraphLaunch") || nsys__prefix(name, "cuGraphLaunch"))
    return NSYS_API_LAUNCH;
  if (strstr(name, "Synchronize") || nsys__prefix(name, "cudaStreamWaitEvent") ||
      nsys__prefix(name, "cuStreamWaitEvent"))
    return NSYS_API_SYNC;
  if (nsys__prefix(name, "cudaMemcpy") || nsys__prefix(name, "cudaMemset") ||
      nsys__prefix(name, "cuMemcpy") || nsys__prefix(name, "cuMemset")) {
    /* Async flavours do not block the host (unless the memory is pageable). */
    if (strstr(name, "Async")) return NSYS_API_MEMCPY;
    return NSYS_API_MEMCPY_SYNC;
  }
  if (nsys__prefix(name, "cuModuleLoad") || nsys__prefix(name, "cuLibraryLoad") ||
      nsys__prefix(name, "cudaLibraryLoad") || nsys__prefix(name, "cuLink"))
    return NSYS_API_MODULE;
  if (nsys__prefix(name, "cudaHostRegister") || nsys__prefix(name, "cudaHostUnregister") ||
      nsys__prefix(name, "cuMemHostRegister") || nsys__prefix(name, "cuMemHostUnregister"))
    return NSYS_API_HOST_REGISTER;
  static const char *const alloc[] = {"cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc", "cuMemFree",
                                      "cuMemHostAlloc", "cuMemCreate", "cuMemRelease", "cuMemMap",
                                      "cuMemUnmap", "cuMemAddressReserve", "cuMemAddressFree"};
  for (size_t i = 0; i < sizeof alloc / sizeof alloc[0]; i++)
    if (nsys__prefix(name, alloc[i])) return NSYS_API_ALLOC;
  return NSYS_API_OTHER;
}

static void nsys__fill_name_caches(nsys_acache *k) {
  if (k->name_nccl) return;
  uint32_t n = k->ix->strings.count;
  k->name_nccl = nsys_xcalloc(n + 1, 1);
  k->name_api = nsys_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) {
    const char *s = nsys_strtab_get(&k->ix->strings, i);
    k->name_nccl[i] = nsys_name_is_nccl(s);
    k->name_api[i] = (uint8_t)nsys_api_classify(s);
  }
}

static void nsys__fill_op_class(nsys_acache *k) {
  nsys__fill_name_caches(k);
  const nsys_index *ix = k->ix;
  uint8_t *cls = nsys_xmalloc((size_t)ix->ops.n + 1);
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    uint32_t nm = ix->ops.name[i];
    /* 1 compute kernel, 2 NCCL kernel, 3 copy or set, 4 CUDA graph launch
     * (graph-level tracing: its kernels are not recorded one by one) */
    cls[i] = ix->ops.kind[i] == NSYS_OP_GRAPH    ? 4
             : ix->ops.kind[i] != NSYS_OP_KERNEL ? 3
             : (nm < ix->strings.count && k->name_nccl[nm]) ? 2
                                                             : 1;
  }
  k->op_class = cls;
}

static inline uint8_t nsys__op_class(nsys_actx *c, uint32_t op) {
  if (!c->cache->op_class) nsys__fill_op_class(c->cache);
  return c->cache->op_class[op];
}

bool nsys_actx_is_nccl_op(nsys_actx *c, uint32_t op) { return nsys__op_class(c, op) == 2; }

nsys_api_class nsys_actx_api_class(nsys_actx *c, uint32_t api) {
  nsys__fill_name_caches(c->cache);
  uint32_t nm = c->ix->api.name[api];
  return nm < c->ix->strings.count ? (nsys_api_class)c->cache->name_api[nm] : NSYS_API_OTHER;
}

const uint8_t *nsys_actx_api_classes(nsys_actx *c) {
  nsys__fill_name_caches(c->cache);
  return c->cache->name_api;
}

bool nsys_pred_kernel(nsys_actx *c, uint32_t op) {
  uint8_t k = nsys__op_class(c, op);
  return k == 1 || k == 2;
}
bool nsys_pred_kernel_or_graph(nsys_actx *c, uint32_t op) { return nsys__op_class(c, op) != 3; }
bool nsys_pred_any(nsys_actx *c, uint32_t op) {
  (void)c;
  (void)op;
  return true;
}
bool nsys_pred_compute(nsys_actx *c, uint32_t op) {
  uint8_t k = nsys__op_class(c, op);
  return k == 1 || k == 4;
}
bool nsys_pred_comm(nsys_actx *c, uint32_t op) { return nsys__op_class(c, op) == 2; }

static int nsys__cmp_dev(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

uint32_t nsys_actx_devices(nsys_actx *c, int32_t **out) {
  const nsys_index *ix = c->ix;
  int32_t *d = nsys_xmalloc((ix->n_tracks + 1) * sizeof *d);
  uint32_t n = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (nsys_actx_device_selected(c, ix->tracks[t].device)) d[n++] = ix->tracks[t].device;
  if (n > 1) qsort(d, n, sizeof *d, nsys__cmp_dev);
  uint32_t u = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!u || d[u - 1] != d[i]) d[u++] = d[i];
  *out = d;
  return u;
}

bool nsys_actx_device_selected(const nsys_actx *c, int32_t device) {
  return c->device < 0 || c->device == device;
}

struct nsys_piddev {
  uint32_t pid;
  int32_t device;
};

static int nsys__cmp_piddev(const void *a, const void *b) {
  const struct nsys_piddev *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return x->device < y->device ? -1 : x->device > y->device;
}

bool nsys_actx_thread_on_device(nsys_actx *c, uint32_t thread, int32_t device) {
  const nsys_index *ix = c->ix;
  nsys_acache *k = c->cache;
  if (!k->piddev) {
    struct nsys_piddev *v = nsys_xmalloc(((size_t)ix->n_tracks + 1) * sizeof *v);
    uint32_t n = 0;
    for (uint32_t t = 0; t < ix->n_tracks; t++) v[n++] = (struct nsys_piddev){ix->tracks[t].pid, ix->tracks[t].device};
    if (n > 1) qsort(v, n, sizeof *v, nsys__cmp_piddev);
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!u || nsys__cmp_piddev(&v[u - 1], &v[i])) v[u++] = v[i];
    k->piddev = v;
    k->n_piddev = u;
  }
  if (thread >= ix->n_threads) return false;
  struct nsys_piddev key = {ix->threads[thread].pid, device};
  return bsearch(&key, k->piddev, k->n_piddev, sizeof key, nsys__cmp_piddev) != NULL;
}

void nsys_actx_device_each(nsys_actx *c, int32_t device, int64_t a, int64_t b,
                           void (*fn)(nsys_actx *c, uint32_t op, void *ud), void *ud) {
  const nsys_index *ix = c->ix;
  nsys_opiter m;
  nsys_opiter_init(&m, c, device, a);
  for (int64_t op; (op = nsys_opiter_next(&m)) >= 0 && !nsys_actx_stop(c, (uint64_t)op);) {
    if (ix->ops.start[op] >= b) break; /* start order: every later op starts at >= b too */
    if (ix->ops.end[op] > a) fn(c, (uint32_t)op, ud);
  }
  nsys_opiter_free(&m);
}

void nsys_actx_device_unions(nsys_actx *c, int32_t device, int64_t a, int64_t b, const nsys_op_pred *preds,
                             nsys_ivls *const *outs, int n) {
  const nsys_index *ix = c->ix;
  for (int k = 0; k < n; k++) nsys_ivls_clear(outs[k]);
  /* a window holding every op: copies of the cached whole-time unions */
  const nsys_devunions *du = nsys_actx_devunions_covering(c, device, a, b);
  const nsys_ivls *from[4] = {NULL};
  for (int k = 0; du && k < n && k < 4; k++)
    if (!(from[k] = nsys_devunions_of(du, preds[k]))) du = NULL;
  if (du && n <= 4) {
    for (int k = 0; k < n; k++)
      for (uint32_t i = 0; i < from[k]->n; i++) nsys_ivls_add_sorted(outs[k], from[k]->s[i], from[k]->e[i]);
    return;
  }
  /* ops of all tracks in start order (clipped starts stay in order), so each
   * union is appended to directly: O(ops · log tracks) */
  nsys_opiter m;
  nsys_opiter_init(&m, c, device, a);
  for (int64_t i; (i = nsys_opiter_next(&m)) >= 0 && !nsys_actx_stop(c, (uint64_t)i);) {
    int64_t s = ix->ops.start[i];
    if (s >= b) break;
    int64_t e = ix->ops.end[i];
    if (e <= a) continue;
    if (s < a) s = a;
    if (e > b) e = b;
    for (int k = 0; k < n; k++)
      if (preds[k](c, (uint32_t)i)) nsys_ivls_add_sorted(outs[k], s, e);
  }
  nsys_opiter_free(&m);
}

void nsys_actx_device_union(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t a, int64_t b,
                            nsys_ivls *out) {
  nsys_ivls *outs[1] = {out};
  nsys_actx_device_unions(c, device, a, b, &pred, outs, 1);
}

const nsys_ivls *nsys_actx_device_union_ref(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t a, int64_t b,
                                            nsys_ivls *scratch) {
  const nsys_devunions *du = nsys_actx_devunions_covering(c, device, a, b);
  const nsys_ivls *whole = du ? nsys_devunions_of(du, pred) : NULL;
  if (whole && (whole->pre || !whole->n)) return whole;
  /* a built cache (the memo, a report's) holds every device's whole-time
   * unions: the window's is theirs clipped (window.h), O(log n + its intervals) */
  if (c->cache->built && c->cache->devunions_whole && nsys_win_fast_enabled() &&
      (whole = nsys_devunions_of(nsys_actx_devunions(c, device), pred))) {
    nsys_ivls_clip(whole, a, b, scratch);
    nsys_ivls_index(scratch);
    return scratch;
  }
  nsys_actx_device_union(c, device, pred, a, b, scratch);
  nsys_ivls_index(scratch);
  return scratch;
}

bool nsys_actx_device_span(nsys_actx *c, int32_t device, nsys_op_pred pred, int64_t *s,
                           int64_t *e) {
  bool handled;
  bool fast = nsys_win_device_span(c, device, pred, s, e, &handled);
  if (handled) return fast;
  const nsys_index *ix = c->ix;
  bool any = false;
  int64_t lo = 0, hi = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    if (ix->tracks[t].device != device) continue;
    for (uint32_t i = ix->tracks[t].first; i < ix->tracks[t].first + ix->tracks[t].count && !nsys_actx_stop(c, i);
         i++) {
      if (!pred(c, i)) continue;
      if (ix->ops.end[i] <= c->t0 || ix->ops.start[i] >= c->t1) continue;
      if (!any || ix->ops.start[i] < lo) lo = ix->ops.start[i];
      if (!any || ix->ops.end[i] > hi) hi = ix->ops.end[i];
      any = true;
    }
  }
  if (any) {
    *s = NSYS_MAX(lo, c->t0);
    *e = NSYS_MIN(hi, c->t1);
  }
  return any;
}

/* Running max of the API end times of a thread (built on first use). */
static const int64_t *nsys__api_pmax(nsys_acache *k, uint32_t thread) {
  const nsys_index *ix = k->ix;
  if (!k->api_pmax) k->api_pmax = nsys_xcalloc(ix->n_threads + 1, sizeof *k->api_pmax);
  const nsys_host_thread *th = &ix->threads[thread];
  if (!k->api_pmax[thread] && th->api_count) {
    int64_t *pm = nsys_xmalloc(th->api_count * sizeof *pm);
    int64_t m = INT64_MIN;
    for (uint32_t i = 0; i < th->api_count; i++) {
      int64_t e = ix->api.end[th->api_first + i];
      if (e > m) m = e;
      pm[i] = m;
    }
    k->api_pmax[thread] = pm;
  }
  return k->api_pmax[thread];
}

void nsys_actx_api_overlapping(nsys_actx *c, uint32_t thread, int64_t a, int64_t b,
                               void (*fn)(nsys_actx *c, uint32_t api, void *ud), void *ud) {
  const nsys_index *ix = c->ix;
  if (thread >= ix->n_threads) return;
  nsys_acache *cache = c->cache;
  const nsys_host_thread *th = &ix->threads[thread];
  if (!th->api_count) return;
  const int64_t *pm = nsys__api_pmax(cache, thread);
  uint32_t lo = 0, hi = th->api_count;
  while (lo < hi) { /* first i with pmax > a */
    uint32_t m = lo + (hi - lo) / 2;
    if (pm[m] > a) hi = m;
    else lo = m + 1;
  }
  for (uint32_t i = lo; i < th->api_count; i++) {
    uint32_t k = th->api_first + i;
    if (ix->api.start[k] >= b) break;
    if (ix->api.end[k] > a) fn(c, k, ud);
  }
}

/* Jump pointers over the NVTX parent chains (Myers' skew-binary scheme, one
 * per range): from any range, the first ancestor meeting a condition that
 * holds from some ancestor on is found in O(log depth) steps. Parents come
 * first in the index (parent < r). */
static const int32_t *nsys__nvtx_jump(nsys_acache *k) {
  if (k->nvtx_jump) return k->nvtx_jump;
  const nsys_nvtx_ranges *v = &k->ix->nvtx;
  int32_t *jump = nsys_xmalloc(((size_t)v->n + 1) * sizeof *jump);
  uint32_t *depth = nsys_xmalloc(((size_t)v->n + 1) * sizeof *depth);
  for (uint32_t r = 0; r < v->n; r++) {
    int32_t p = v->parent[r];
    if (p < 0 || (uint32_t)p >= r) { /* a root */
      jump[r] = (int32_t)r;
      depth[r] = 0;
      continue;
    }
    depth[r] = depth[p] + 1;
    int32_t jp = jump[p];
    jump[r] = depth[p] - depth[jp] == depth[jp] - depth[jump[jp]] ? jump[jp] : p;
  }
  free(depth);
  k->nvtx_jump = jump;
  return jump;
}

int32_t nsys_actx_nvtx_enclosing(nsys_actx *c, int32_t r, int64_t e) {
  const int32_t *jump = nsys__nvtx_jump(c->cache);
  const int64_t *end = c->ix->nvtx.end;
  const int32_t *parent = c->ix->nvtx.parent;
  /* ends never decrease up a chain (a parent encloses its child): every
   * range from r up to a jump target that ends before e ends before e too */
  while (r >= 0 && end[r] < e) {
    int32_t j = jump[r];
    r = j != r && end[j] < e ? parent[j] : parent[r];
  }
  return r;
}

int32_t nsys_actx_innermost_nvtx(nsys_actx *c, uint32_t thread, int64_t s, int64_t e) {
  const nsys_index *ix = c->ix;
  if (thread >= ix->n_threads) return -1;
  const nsys_host_thread *th = &ix->threads[thread];
  uint32_t lo = 0, hi = th->nvtx_count;
  while (lo < hi) { /* first range starting after s */
    uint32_t m = lo + (hi - lo) / 2;
    if (ix->nvtx.start[th->nvtx_first + m] <= s) lo = m + 1;
    else hi = m;
  }
  if (lo == 0) return -1;
  /* the ranges up the chain of the last one starting at or before s all
   * start at or before s: the innermost holding [s,e] is the first ending at
   * or after e */
  return nsys_actx_nvtx_enclosing(c, (int32_t)(th->nvtx_first + lo - 1), e);
}

int64_t nsys_actx_int(const nsys_actx *c, const char *name) {
  const nsys_aval *v = nsys_aparams_get(&c->params, name);
  return v->set ? v->i : 0;
}
double nsys_actx_num(const nsys_actx *c, const char *name) {
  const nsys_aval *v = nsys_aparams_get(&c->params, name);
  return v->set ? v->num : 0.0;
}
const char *nsys_actx_str(const nsys_actx *c, const char *name) {
  const nsys_aval *v = nsys_aparams_get(&c->params, name);
  return v->set ? v->str : NULL;
}
bool nsys_actx_bool(const nsys_actx *c, const char *name) {
  const nsys_aval *v = nsys_aparams_get(&c->params, name);
  return v->set && v->b;
}

double nsys_percentile_sorted(const int64_t *v, uint32_t n, double q) {
  if (!n) return 0;
  double pos = q * (double)(n - 1);
  uint32_t i = (uint32_t)floor(pos);
  if (i + 1 >= n) return (double)v[n - 1];
  double f = pos - i;
  return (double)v[i] + f * (double)(v[i + 1] - v[i]);
}

double nsys_round2(double v) { return round(v * 100.0) / 100.0; }

void nsys_acache_fill_classes(nsys_acache *k) {
  if (!k->op_class) nsys__fill_op_class(k);
}

bool nsys_acache_build(nsys_acache *k, nsys_task *task) {
  if (k->built) return true;
  nsys_actx c;
  memset(&c, 0, sizeof c);
  c.task = task;
  c.ix = k->ix;
  c.cache = k;
  c.device = -1;
  k->lent = true;
  /* cancellation is polled between the passes (and inside the unions): the
   * unions may come from the memo file (amemo_file.c), leaving only these */
  if (!k->op_class) nsys__fill_op_class(k);
  if (nsys_task_cancelled(task)) return false;
  nsys_actx_thread_on_device(&c, 0, 0); /* the (pid, device) table */
  for (uint32_t t = 0; t < k->ix->n_threads; t++) {
    if (nsys_task_cancelled(task)) return false;
    nsys__api_pmax(k, t);
  }
  if (!k->api_pmax) k->api_pmax = nsys_xcalloc(1, sizeof *k->api_pmax);
  if (nsys_task_cancelled(task)) return false;
  nsys__nvtx_jump(k);
  if (nsys_task_cancelled(task)) return false;
  nsys_actx_devunions(&c, 0); /* every device's unions, recording each device's op order */
  k->built = !c.stopped && !nsys_task_cancelled(task);
  return k->built;
}
