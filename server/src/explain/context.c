/* Explanation context per open profile (see context.h). */
#include "explain/context.h"

#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cond_wait.h"
#include "common/util.h"
#include "analysis/amemo.h"
#include "analysis/devunions.h"
#include "analysis/intervals.h"
#include "explain/detect.h"
#include "explain/framework.h"
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

/* ---- ranking ------------------------------------------------------------ */

static int nsys__item_cmp(const void *a, const void *b) {
  const nsys_xctx_item *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  return strcmp(x->label, y->label);
}

static bool nsys__cancel_cb(void *ctx) { return nsys_task_cancelled((nsys_task *)ctx); }

/* Summed idle time between each device's first and last operation, the
 * gaps where no op runs. An op that ends before it starts (rare in exports)
 * covers nothing past its start. Two ways, the same sum:
 *  - from the per-profile memo when an analysis built it (analysis/amemo.h):
 *    a device's idle time is its span, from its first start to the latest
 *    of its ends and starts, less the length of its whole-time union of
 *    every op (devunions.h; empty ops cover nothing in either): O(tracks +
 *    devices), no pass over the ops;
 *  - otherwise the device's ops in start order (a heap merge of its tracks,
 *    each already in start order; O(n log tracks), no copy, no sort). */
static bool nsys__idle_memo(const nsys_index *ix, nsys_acache *k, int64_t *idle, uint32_t *devices) {
  *idle = 0;
  *devices = 0;
  if (!k || !k->built || !k->devunions_whole) return false;
  for (uint32_t d = 0; d < k->n_devunions; d++) {
    const nsys_devunions *du = &k->devunions[d];
    int64_t first = INT64_MAX, last = INT64_MIN; /* earliest start; latest start or end */
    for (uint32_t t = 0; t < ix->n_tracks; t++) {
      const nsys_gpu_track *tr = &ix->tracks[t];
      if (tr->device != du->device || !tr->count) continue;
      /* a track's ops are in start order */
      first = NSYS_MIN(first, ix->ops.start[tr->first]);
      last = NSYS_MAX(last, ix->ops.start[tr->first + tr->count - 1]);
    }
    if (first > last) continue; /* no ops on this device */
    if (du->any.n) last = NSYS_MAX(last, du->any.e[du->any.n - 1]);
    *idle += last - first - (du->any.pre ? du->any.pre[du->any.n] : nsys_ivls_total(&du->any));
    (*devices)++;
  }
  return true;
}

static bool nsys__idle_merge(const nsys_index *ix, nsys_task *task, int64_t *idle, uint32_t *devices) {
  *idle = 0;
  *devices = 0;
  bool *done = nsys_xcalloc(ix->n_tracks ? ix->n_tracks : 1, sizeof *done);
  bool ok = true;
  uint32_t polled = 0;
  for (uint32_t t0 = 0; t0 < ix->n_tracks && ok; t0++) {
    if (done[t0]) continue;
    int32_t dev = ix->tracks[t0].device;
    for (uint32_t t = t0; t < ix->n_tracks; t++)
      if (ix->tracks[t].device == dev) done[t] = true;
    nsys_opmerge m;
    nsys_opmerge_init(&m, ix, dev, INT64_MIN);
    int64_t op = nsys_opmerge_next(&m);
    if (op >= 0) {
      int64_t reach = NSYS_MAX(ix->ops.start[op], ix->ops.end[op]);
      while ((op = nsys_opmerge_next(&m)) >= 0) {
        int64_t s = ix->ops.start[op], e = NSYS_MAX(s, ix->ops.end[op]);
        if (s > reach) *idle += s - reach;
        if (e > reach) reach = e;
        if (++polled % NSYS__POLL == 0 && nsys_task_cancelled(task)) {
          ok = false;
          break;
        }
      }
      if (ok) (*devices)++;
    }
    nsys_opmerge_free(&m);
  }
  free(done);
  return ok;
}

static bool nsys__idle(const nsys_profile *p, const nsys_index *ix, nsys_task *task, int64_t *idle,
                       uint32_t *devices) {
  /* the memo is only read (built whole before it is published) */
  if (nsys__idle_memo(ix, nsys_amemo_peek((nsys_profile *)p, ix), idle, devices)) return true;
  return nsys__idle_merge(ix, task, idle, devices);
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
    nsys_kstats_brief st;
    bool cancelled = false;
    if (!nsys_kstats_brief_get(p, ix, NSYS_KSTATS_BY_NAME, ids[i], &st, nsys__cancel_cb, task, &cancelled)) {
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
      if (pat) fw_ns[nsys_framework_of_origin(pat->origin)] += (double)st.total_ns;
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
  if (!nsys__idle(p, ix, task, &cx->idle_ns, &devices)) {
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

  if (!nsys_framework_decide(p, ix, fw_ns, task, cx)) return false;
  /* what the detectors read from the tables, once per open */
  cx->detect_data = nsys_detect_data_load(p, task);
  return cx->detect_data != NULL;
}

/* ---- cache -------------------------------------------------------------- */

typedef struct {
  const nsys_index *ix;
  dev_t dev;
  ino_t ino;
  int64_t size, mtime;
  uint64_t last_used;
  int refs;     /* requests reading cx now (nsys_explain_context_get .. _release) */
  bool evicted; /* out of the cache while read: freed by the last release */
  nsys_explain_context cx;
} nsys__slot;

static void nsys__slot_free(nsys__slot *s) {
  if (s) nsys_detect_data_free(s->cx.detect_data);
  free(s);
}

static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static nsys__slot *nsys__slots[NSYS__CACHE_SLOTS];
static uint64_t nsys__clock;

/* The indexes whose context a caller is building (outside the lock), so
 * that concurrent callers (a request and the server's warm-up) wait for
 * that one build, noticing their own cancellation, instead of building it
 * again or holding the lock while it is built. */
static const nsys_index *nsys__building[NSYS__CACHE_SLOTS * 4];
static pthread_cond_t nsys__cv = PTHREAD_COND_INITIALIZER;

static int nsys__building_at(const nsys_index *ix) {
  for (int i = 0; i < (int)NSYS_ARRAY_LEN(nsys__building); i++)
    if (nsys__building[i] == ix) return i;
  return -1;
}

static int nsys__free_slot(void) {
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++)
    if (!nsys__slots[i]) return i;
  return -1;
}

/* may_evict false (the warm-up): a context is built and kept only into a
 * free slot, never in place of another profile's, which a request on
 * another thread may be reading. */
static const nsys_explain_context *nsys__context_get(const nsys_profile *p, const nsys_index *ix, nsys_task *task,
                                                     bool may_evict, bool take_ref) {
  pthread_mutex_lock(&nsys__mu);
  nsys__clock++;
  for (;;) {
    for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
      nsys__slot *s = nsys__slots[i];
      if (s && s->ix == ix && s->dev == p->st_dev && s->ino == p->st_ino && s->size == p->st_size &&
          s->mtime == p->st_mtime_ns) {
        s->last_used = nsys__clock;
        s->refs += take_ref;
        pthread_mutex_unlock(&nsys__mu);
        return &s->cx;
      }
    }
    if (nsys__building_at(ix) < 0) break;
    if (!may_evict) { /* another caller builds it: nothing to warm */
      pthread_mutex_unlock(&nsys__mu);
      return NULL;
    }
    if (!nsys_task_wait_turn(task, &nsys__cv, &nsys__mu, 10)) { /* another caller builds it */
      pthread_mutex_unlock(&nsys__mu);
      nsys_task_fail_cancelled(task);
      return NULL;
    }
  }
  if (!may_evict && nsys__free_slot() < 0) {
    pthread_mutex_unlock(&nsys__mu);
    return NULL;
  }
  int mine = nsys__building_at(NULL); /* a free mark; none left: build without one */
  if (mine >= 0) nsys__building[mine] = ix;
  pthread_mutex_unlock(&nsys__mu);
  nsys__slot *s = nsys_xcalloc(1, sizeof *s);
  bool ok = nsys__build(p, ix, task, &s->cx);
  pthread_mutex_lock(&nsys__mu);
  if (mine >= 0) nsys__building[mine] = NULL;
  pthread_cond_broadcast(&nsys__cv);
  if (!ok) {
    nsys_detect_data_free(s->cx.detect_data);
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
  int slot = nsys__free_slot(), lru = 0;
  if (slot < 0 && !may_evict) { /* filled meanwhile by requests: theirs stay */
    nsys__slot_free(s);
    pthread_mutex_unlock(&nsys__mu);
    return NULL;
  }
  for (int i = 1; i < NSYS__CACHE_SLOTS && slot < 0; i++)
    if (nsys__slots[i]->last_used < nsys__slots[lru]->last_used) lru = i;
  if (slot < 0) slot = lru;
  if (nsys__slots[slot] && nsys__slots[slot]->refs > 0) nsys__slots[slot]->evicted = true; /* a request reads it */
  else nsys__slot_free(nsys__slots[slot]);
  s->refs = take_ref;
  nsys__slots[slot] = s;
  pthread_mutex_unlock(&nsys__mu);
  return &s->cx;
}

const nsys_explain_context *nsys_explain_context_get(const nsys_profile *p, const nsys_index *ix, nsys_task *task) {
  return nsys__context_get(p, ix, task, true, true);
}

void nsys_explain_context_release(const nsys_explain_context *cx) {
  if (!cx) return;
  nsys__slot *s = (nsys__slot *)((char *)(uintptr_t)cx - offsetof(nsys__slot, cx));
  pthread_mutex_lock(&nsys__mu);
  bool gone = --s->refs == 0 && s->evicted;
  pthread_mutex_unlock(&nsys__mu);
  if (gone) nsys__slot_free(s);
}

const nsys_explain_context *nsys_explain_context_warm(const nsys_profile *p, const nsys_index *ix, nsys_task *task) {
  return nsys__context_get(p, ix, task, false, true);
}

void nsys_explain_context_clear(void) {
  pthread_mutex_lock(&nsys__mu);
  for (int i = 0; i < NSYS__CACHE_SLOTS; i++) {
    nsys__slot_free(nsys__slots[i]);
    nsys__slots[i] = NULL;
  }
  pthread_mutex_unlock(&nsys__mu);
}
