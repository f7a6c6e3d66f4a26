/* Explanation context per open profile (see context.h). */
#include "explain/context.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "explain/csort.h"
#include "explain/kb.h"
#include "explain/kernel_stats.h"
#include "profile/profile.h"

/* Names ranked individually; the rest is folded into "other". */
#define NSYS__TOP_NAMES 256
#define NSYS__CACHE_SLOTS 4
#define NSYS__POLL 65536u

const char *nsys_framework_name(nsys_framework f) {
  static const char *const names[NSYS_FW_COUNT] = {"cuda", "pytorch", "tensorrt", "xla", "tensorflow",
                                                   "nvhpc", "cupy", "numba", "julia", "nccl-tests"};
  return (unsigned)f < NSYS_FW_COUNT ? names[f] : "cuda";
}

void nsys_explain_tc_caps(int cc_major, int cc_minor, nsys_explain_context *cx) {
  int cc = cc_major < 0 ? -1 : cc_major * 10 + cc_minor;
  cx->tc_fp16 = cc >= 70;
  cx->tc_int8 = cc >= 72;
  cx->tc_tf32 = cc >= 80;
  cx->tc_bf16 = cc >= 80;
  cx->tc_fp8 = cc >= 89;
}

void nsys_explain_item_label(const nsys_kb_pattern *pat, const char *short_name, char *out, size_t cap) {
  if (pat) snprintf(out, cap, "%s %s", pat->origin, pat->category);
  else snprintf(out, cap, "user kernel %.100s", short_name ? short_name : "?");
}

int nsys_explain_context_rank(const nsys_explain_context *cx, const char *label) {
  for (int i = 0; i < cx->n_items; i++)
    if (strcmp(cx->items[i].label, label) == 0) return i + 1;
  return 0;
}

/* The framework an origin of the knowledge base belongs to (NSYS_FW_CUDA: none). */
static nsys_framework nsys__fw_of_origin(const char *o) {
  static const struct {
    const char *origin;
    nsys_framework fw;
  } map[] = {{"pytorch", NSYS_FW_PYTORCH},       {"triton", NSYS_FW_PYTORCH},   {"apex", NSYS_FW_PYTORCH},
             {"flash-attention", NSYS_FW_PYTORCH}, {"transformer-engine", NSYS_FW_PYTORCH},
             {"xformers", NSYS_FW_PYTORCH},      {"nvfuser", NSYS_FW_PYTORCH},  {"torchvision", NSYS_FW_PYTORCH},
             {"fbgemm", NSYS_FW_PYTORCH},        {"vllm", NSYS_FW_PYTORCH},     {"megatron", NSYS_FW_PYTORCH},
             {"deepep", NSYS_FW_PYTORCH},        {"tensorrt", NSYS_FW_TENSORRT}, {"tensorrt-llm", NSYS_FW_TENSORRT},
             {"xla", NSYS_FW_XLA},               {"tensorflow", NSYS_FW_TENSORFLOW}, {"nvhpc", NSYS_FW_NVHPC},
             {"cupy", NSYS_FW_CUPY},             {"numba", NSYS_FW_NUMBA},      {"julia", NSYS_FW_JULIA}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(map); i++)
    if (strcmp(o, map[i].origin) == 0) return map[i].fw;
  return NSYS_FW_CUDA;
}

static bool nsys__ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* ---- ranking ------------------------------------------------------------ */

static int nsys__item_cmp(const void *a, const void *b) {
  const nsys_xctx_item *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  return strcmp(x->label, y->label);
}

typedef struct {
  int64_t s, e;
} nsys__iv;

static int nsys__iv_cmp(const void *a, const void *b) {
  const nsys__iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

static bool nsys__cancel_cb(void *ctx) { return nsys_task_cancelled((nsys_task *)ctx); }

/* Summed idle time between each device's first and last operation. */
static bool nsys__idle(const nsys_index *ix, nsys_task *task, int64_t *idle, uint32_t *devices) {
  *idle = 0;
  *devices = 0;
  nsys__iv *iv = nsys_xmalloc(sizeof *iv * (ix->ops.n ? ix->ops.n : 1));
  bool *done = nsys_xcalloc(ix->n_tracks ? ix->n_tracks : 1, sizeof *done);
  bool ok = true;
  uint32_t polled = 0;
  for (uint32_t t0 = 0; t0 < ix->n_tracks && ok; t0++) {
    if (done[t0]) continue;
    int32_t dev = ix->tracks[t0].device;
    size_t n = 0;
    for (uint32_t t = t0; t < ix->n_tracks; t++) {
      if (ix->tracks[t].device != dev) continue;
      done[t] = true;
      for (uint32_t k = 0; k < ix->tracks[t].count; k++) {
        uint32_t op = ix->tracks[t].first + k;
        iv[n].s = ix->ops.start[op];
        iv[n].e = ix->ops.end[op];
        n++;
        if (++polled % NSYS__POLL == 0 && nsys_task_cancelled(task)) ok = false;
      }
    }
    if (!ok || n == 0) continue;
    if (!nsys_csort(iv, n, sizeof *iv, nsys__iv_cmp, nsys__cancel_cb, task)) {
      ok = false;
      break;
    }
    int64_t reach = iv[0].e;
    for (size_t i = 1; i < n; i++) {
      if (iv[i].s > reach) *idle += iv[i].s - reach;
      if (iv[i].e > reach) reach = iv[i].e;
    }
    (*devices)++;
  }
  free(iv);
  free(done);
  return ok;
}


static bool nsys__build(const nsys_profile *p, const nsys_index *ix, nsys_task *task, nsys_explain_context *cx) {
  memset(cx, 0, sizeof *cx);
  cx->cc_major = cx->cc_minor = -1;
  /* GPU: the device with the most GPU operation time */
  int32_t busiest = -1;
  int64_t best = -1;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    int64_t sum = ix->tracks[t].busy_ns;
    for (uint32_t u = 0; u < ix->n_tracks; u++)
      if (u != t && ix->tracks[u].device == ix->tracks[t].device) sum += ix->tracks[u].busy_ns;
    if (sum > best) best = sum, busiest = ix->tracks[t].device;
    if (t >= 64) break; /* devices repeat; a few tracks are enough to find the busiest */
  }
  const nsys_gpu_info *g = NULL;
  for (int i = 0; i < p->info.n_gpus; i++)
    if (p->info.gpus[i].id == busiest || (!g && p->info.n_gpus == 1)) g = &p->info.gpus[i];
  if (g) {
    snprintf(cx->gpu_name, sizeof cx->gpu_name, "%s", g->name ? g->name : "");
    cx->cc_major = g->cc_major;
    cx->cc_minor = g->cc_minor;
    cx->sm_count = g->sm_count;
    if (g->bandwidth_bytes_per_sec > 0) cx->mem_bw_gbps = (double)g->bandwidth_bytes_per_sec / 1e9;
    cx->spec = nsys_gpu_spec_match_or_cc(g->name, g->cc_major, g->cc_minor);
    if (cx->spec) {
      if (cx->cc_major < 0) cx->cc_major = cx->spec->cc_major, cx->cc_minor = cx->spec->cc_minor;
      if (cx->sm_count <= 0) cx->sm_count = cx->spec->sm_count;
      if (cx->mem_bw_gbps <= 0) cx->mem_bw_gbps = cx->spec->mem_bw_gbps;
    }
  }
  nsys_explain_tc_caps(cx->cc_major, cx->cc_minor, cx);

  /* ranking over the largest names */
  int64_t all_ns = 0;
  nsys_kstats_totals(p, ix, &all_ns, NULL);
  cx->gpu_op_ns = all_ns;
  uint32_t ids[NSYS__TOP_NAMES];
  uint32_t n_ids = nsys_kstats_top(p, ix, NSYS_KSTATS_BY_NAME, -1, ids, NSYS__TOP_NAMES);
  nsys_xctx_item *items = nsys_xcalloc(n_ids + 2, sizeof *items);
  int n_items = 0;
  int64_t ranked_ns = 0;
  double fw_ns[NSYS_FW_COUNT] = {0};
  const nsys_kb *kb = nsys_kb_get();
  for (uint32_t i = 0; i < n_ids; i++) {
    nsys_kstats st;
    bool cancelled = false;
    if (!nsys_kstats_get(p, ix, NSYS_KSTATS_BY_NAME, ids[i], &st, nsys__cancel_cb, task, &cancelled)) {
      if (cancelled) {
        free(items);
        return nsys_task_fail_cancelled(task);
      }
      continue;
    }
    const char *sn = nsys_strtab_get(&ix->strings, ix->ops.name[st.first_op]);
    const char *fn = nsys_strtab_get(&ix->strings, ix->ops.full_name[st.first_op]);
    nsys_xctx_item it;
    memset(&it, 0, sizeof it);
    if (st.kind == NSYS_OP_KERNEL) {
      const nsys_kb_pattern *pat = nsys_kb_match(kb, sn, fn);
      nsys_explain_item_label(pat, sn, it.label, sizeof it.label);
      it.kind = NSYS_XITEM_KERNELS;
      if (pat) fw_ns[nsys__fw_of_origin(pat->origin)] += (double)st.total_ns;
    } else {
      snprintf(it.label, sizeof it.label, "%s", sn);
      it.kind = st.kind == NSYS_OP_MEMSET ? NSYS_XITEM_MEMSET : NSYS_XITEM_COPY;
      if (strstr(sn, "Unified")) cx->um_ops += st.count;
    }
    it.ns = st.total_ns;
    it.count = st.count;
    it.top_name = ids[i]; /* names come largest first: the first one merged is the item's largest */
    ranked_ns += st.total_ns;
    int j = 0;
    while (j < n_items && strcmp(items[j].label, it.label) != 0) j++;
    if (j == n_items) items[n_items++] = it;
    else items[j].ns += it.ns, items[j].count += it.count;
  }
  if (all_ns > ranked_ns) {
    memset(&items[n_items], 0, sizeof items[n_items]);
    snprintf(items[n_items].label, sizeof items[n_items].label, "other GPU operations");
    items[n_items].top_name = NSYS_STR_NONE;
    items[n_items].ns = all_ns - ranked_ns;
    n_items++;
  }
  uint32_t devices = 0;
  if (!nsys__idle(ix, task, &cx->idle_ns, &devices)) {
    free(items);
    return nsys_task_fail_cancelled(task);
  }
  if (cx->idle_ns > 0) {
    memset(&items[n_items], 0, sizeof items[n_items]);
    snprintf(items[n_items].label, sizeof items[n_items].label, "GPU idle");
    items[n_items].kind = NSYS_XITEM_IDLE;
    items[n_items].top_name = NSYS_STR_NONE;
    items[n_items].ns = cx->idle_ns;
    items[n_items].count = devices;
    n_items++;
  }
  qsort(items, (size_t)n_items, sizeof *items, nsys__item_cmp);
  cx->n_items = NSYS_MIN(n_items, NSYS_XCTX_MAX_ITEMS);
  memcpy(cx->items, items, sizeof *items * (size_t)cx->n_items);
  if (n_items > NSYS_XCTX_MAX_ITEMS) { /* fold the tail into the last item */
    nsys_xctx_item *last = &cx->items[NSYS_XCTX_MAX_ITEMS - 1];
    snprintf(last->label, sizeof last->label, "other GPU operations");
    last->kind = NSYS_XITEM_KERNELS;
    last->top_name = NSYS_STR_NONE;
    for (int i = NSYS_XCTX_MAX_ITEMS; i < n_items; i++) last->ns += items[i].ns, last->count += items[i].count;
  }
  free(items);

  /* framework: process names first (they name the program), then the
   * families that carry the kernel time */
  for (int i = 0; i < p->info.n_processes; i++) {
    const char *n = p->info.processes[i].name;
    if (!n) continue;
    const char *base = strrchr(n, '/');
    base = base ? base + 1 : n;
    nsys_framework f = NSYS_FW_CUDA;
    if (strcmp(base, "julia") == 0 || strncmp(base, "julia-", 6) == 0) f = NSYS_FW_JULIA;
    else if (strstr(base, "trtexec")) f = NSYS_FW_TENSORRT;
    else if (nsys__ends_with(base, "_perf") || nsys__ends_with(base, "_perf_mpi")) f = NSYS_FW_NCCL_TESTS;
    if (f != NSYS_FW_CUDA) {
      cx->framework = f;
      snprintf(cx->framework_evidence, sizeof cx->framework_evidence, "process '%.100s'", base);
      return true;
    }
  }
  double kernel_fw_total = 0, top = 0;
  nsys_framework top_fw = NSYS_FW_CUDA;
  for (int f = 1; f < NSYS_FW_COUNT; f++) {
    kernel_fw_total += fw_ns[f];
    if (fw_ns[f] > top) top = fw_ns[f], top_fw = (nsys_framework)f;
  }
  if (top > 0) {
    cx->framework = top_fw;
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence,
             "%.0f%% of the GPU time of framework-specific kernels is in %s kernels", 100.0 * top / kernel_fw_total,
             nsys_framework_name(top_fw));
  } else {
    cx->framework = NSYS_FW_CUDA;
    snprintf(cx->framework_evidence, sizeof cx->framework_evidence,
             "no process or kernel family of a framework: plain CUDA (or libraries called directly)");
  }
  return true;
}

/* ---- cache -------------------------------------------------------------- */

typedef struct {
  const nsys_index *ix;
  dev_t dev;
  ino_t ino;
  int64_t size, mtime;
  uint64_t last_used;
  nsys_explain_context cx;
} nsys__slot;

static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static nsys__slot *nsys__slots[NSYS__CACHE_SLOTS];
static uint64_t nsys__clock;

const nsys_explain_context *nsys_explain_context_get(const nsys_profile *p, const nsys_index *ix, nsys_task *task) {
  pthread_mutex_lock(&nsys__mu);
  nsys__clock++;
  int lru = 0, free_slot = -1;
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
    nsys__slot *s = nsys__slots[i];
    if (!s) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (s->ix == ix && s->dev == p->st_dev && s->ino == p->st_ino && s->size == p->st_size &&
        s->mtime == p->st_mtime_ns) {
      s->last_used = nsys__clock;
      pthread_mutex_unlock(&nsys__mu);
      return &s->cx;
    }
    if (nsys__slots[lru] && s->last_used < nsys__slots[lru]->last_used) lru = i;
  }
  nsys__slot *s = nsys_xcalloc(1, sizeof *s);
  if (!nsys__build(p, ix, task, &s->cx)) {
    free(s);
    pthread_mutex_unlock(&nsys__mu);
    return NULL;
  }
  s->ix = ix;
  s->dev = p->st_dev;
  s->ino = p->st_ino;
  s->size = p->st_size;
  s->mtime = p->st_mtime_ns;
  s->last_used = nsys__clock;
  int slot = free_slot >= 0 ? free_slot : lru;
  free(nsys__slots[slot]); /* a context is only read under the index's lifetime */
  nsys__slots[slot] = s;
  pthread_mutex_unlock(&nsys__mu);
  return &s->cx;
}

void nsys_explain_context_clear(void) {
  pthread_mutex_lock(&nsys__mu);
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
    free(nsys__slots[i]);
    nsys__slots[i] = NULL;
  }
  pthread_mutex_unlock(&nsys__mu);
}

/* ---- unified memory around a kernel -------------------------------------- */

/* Whether a overlaps any of the n intervals b (sorted by start; reach[i] the
 * latest end among b[0..i]). */
static bool nsys__overlaps_set(nsys__iv a, const nsys__iv *b, const int64_t *reach, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b[mid].s < a.e) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && reach[lo - 1] > a.s;
}

bool nsys_explain_um_overlap(const nsys_profile *p, const nsys_index *ix, uint32_t name_id, int32_t device,
                             nsys_task *task, int64_t *um_ns, uint32_t *um_count, uint32_t *kernels_hit) {
  (void)p;
  *um_ns = 0;
  *um_count = 0;
  *kernels_hit = 0;
  /* the device's unified-memory migrations, sorted by start */
  nsys__iv *um = NULL;
  size_t n_um = 0, cap = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    if (ix->tracks[t].device != device) continue;
    for (uint32_t k = 0; k < ix->tracks[t].count; k++) {
      uint32_t op = ix->tracks[t].first + k;
      if (ix->ops.kind[op] != NSYS_OP_MEMCPY) continue;
      if (!strstr(nsys_strtab_get(&ix->strings, ix->ops.name[op]), "Unified")) continue;
      if (n_um == cap) cap = cap ? cap * 2 : 64, um = nsys_xrealloc(um, cap * sizeof *um);
      um[n_um].s = ix->ops.start[op];
      um[n_um].e = ix->ops.end[op];
      n_um++;
    }
  }
  if (n_um == 0) return true;
  /* the kernel's instances on that device */
  nsys__iv *kv = NULL;
  size_t n_k = 0, kcap = 0;
  for (uint32_t op = 0; op < ix->ops.n; op++) {
    if (ix->ops.name[op] != name_id || ix->tracks[ix->ops.track[op]].device != device) continue;
    if (n_k == kcap) kcap = kcap ? kcap * 2 : 64, kv = nsys_xrealloc(kv, kcap * sizeof *kv);
    kv[n_k].s = ix->ops.start[op];
    kv[n_k].e = ix->ops.end[op];
    n_k++;
  }
  /* a interval overlaps some interval of the sorted set b iff the latest end
   * among b's intervals starting before a ends is after a starts: two binary
   * searches per interval, O((k + m) log(k + m)) */
  if (!nsys_csort(um, n_um, sizeof *um, nsys__iv_cmp, nsys__cancel_cb, task) ||
      !nsys_csort(kv, n_k, sizeof *kv, nsys__iv_cmp, nsys__cancel_cb, task)) {
    free(kv);
    free(um);
    return nsys_task_fail_cancelled(task);
  }
  int64_t *um_reach = nsys_xmalloc(n_um * sizeof *um_reach);
  for (size_t i = 0; i < n_um; i++) um_reach[i] = i && um_reach[i - 1] > um[i].e ? um_reach[i - 1] : um[i].e;
  int64_t *k_reach = nsys_xmalloc((n_k ? n_k : 1) * sizeof *k_reach);
  for (size_t i = 0; i < n_k; i++) k_reach[i] = i && k_reach[i - 1] > kv[i].e ? k_reach[i - 1] : kv[i].e;
  for (size_t i = 0; i < n_k; i++)
    if (nsys__overlaps_set(kv[i], um, um_reach, n_um)) (*kernels_hit)++;
  for (size_t i = 0; i < n_um; i++)
    if (nsys__overlaps_set(um[i], kv, k_reach, n_k)) {
      (*um_count)++;
      *um_ns += um[i].e - um[i].s;
    }
  free(k_reach);
  free(um_reach);
  free(kv);
  free(um);
  return true;
}
