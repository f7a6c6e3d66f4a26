/* Detectors around a kernel's instances (see detect.h). */
#include "explain/detect.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/csort.h"
#include "profile/profile.h"

#define NSYS__POLL 65536u

enum { NSYS__COPY_PAGEABLE = 1, NSYS__COPY_HOST = 2 /* HtoD or DtoH */ };

typedef struct {
  int64_t s, e;
  int64_t w; /* weight: bytes, fault count */
} nsys__iv;

typedef struct {
  int64_t key; /* pid (CPU faults) or device (GPU faults) */
  int64_t s, e, n;
} nsys__ev;

#define NSYS__MEMO 256

typedef struct {
  bool used;
  uint32_t name;
  int32_t device;
  nsys_detect det;
} nsys__memo;

struct nsys_detect_data {
  /* results per (name, device), so a repeated hover costs no pass */
  pthread_mutex_t mu;
  nsys__memo memo[NSYS__MEMO];
  /* memcpy rows in rowid order */
  size_t n_copy;
  int64_t *copy_rowid, *copy_bytes;
  uint8_t *copy_flags;
  /* GPU page-fault events by (device, start); CPU page faults by (pid, start) */
  bool fault_tables;
  size_t n_gf, n_cf;
  nsys__ev *gf, *cf;
};

static bool nsys__cancel_cb(void *ctx) { return nsys_task_cancelled((nsys_task *)ctx); }

static int nsys__ev_cmp(const void *a, const void *b) {
  const nsys__ev *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->s < y->s ? -1 : x->s > y->s;
}

static int nsys__iv_cmp(const void *a, const void *b) {
  const nsys__iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

void nsys_detect_data_free(struct nsys_detect_data *d) {
  if (!d) return;
  pthread_mutex_destroy(&d->mu);
  free(d->copy_rowid);
  free(d->copy_bytes);
  free(d->copy_flags);
  free(d->gf);
  free(d->cf);
  free(d);
}

/* Rows of `sql` (on a table that may be absent) into events; false only when
 * cancelled. Absent tables and columns leave *n at 0. */
static bool nsys__load_events(const nsys_profile *p, nsys_task *task, const char *sql, nsys__ev **out, size_t *n) {
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return true; /* no such table or column in this schema */
  }
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) cap = cap ? cap * 2 : 256, *out = nsys_xrealloc(*out, cap * sizeof **out);
    nsys__ev *e = &(*out)[(*n)++];
    e->key = sqlite3_column_int64(st, 0);
    e->s = sqlite3_column_int64(st, 1);
    e->e = sqlite3_column_int64(st, 2);
    e->n = sqlite3_column_type(st, 3) == SQLITE_NULL ? 1 : sqlite3_column_int64(st, 3);
    if (e->e < e->s) e->e = e->s;
    if (e->n < 0) e->n = 0;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE && nsys_task_cancelled(task)) return nsys_task_fail_cancelled(task);
  return true;
}

struct nsys_detect_data *nsys_detect_data_load(const nsys_profile *p, nsys_task *task) {
  struct nsys_detect_data *d = nsys_xcalloc(1, sizeof *d);
  pthread_mutex_init(&d->mu, NULL);
  char tbl[512];
  if (nsys_profile_table_sql(p, NSYS_TBL_MEMCPY, tbl, sizeof tbl) && nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "bytes")) {
    bool kinds = nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "srcKind") &&
                 nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "dstKind") &&
                 nsys_schema_has_column(p, NSYS_TBL_MEMCPY, "copyKind");
    char *sql = nsys_xasprintf("SELECT rowid, bytes, %s, %s, %s FROM %s", kinds ? "copyKind" : "-1",
                               kinds ? "srcKind" : "-1", kinds ? "dstKind" : "-1", tbl);
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = SQLITE_DONE;
    if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) == SQLITE_OK) {
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (d->n_copy == cap) {
          cap = cap ? cap * 2 : 256;
          d->copy_rowid = nsys_xrealloc(d->copy_rowid, cap * sizeof *d->copy_rowid);
          d->copy_bytes = nsys_xrealloc(d->copy_bytes, cap * sizeof *d->copy_bytes);
          d->copy_flags = nsys_xrealloc(d->copy_flags, cap * sizeof *d->copy_flags);
        }
        size_t i = d->n_copy++;
        d->copy_rowid[i] = sqlite3_column_int64(st, 0);
        int64_t bytes = sqlite3_column_int64(st, 1);
        d->copy_bytes[i] = bytes > 0 ? bytes : 0;
        int ck = sqlite3_column_int(st, 2), sk = sqlite3_column_int(st, 3), dk = sqlite3_column_int(st, 4);
        /* ENUM_CUDA_MEMCPY_OPER 1 HtoD, 2 DtoH; ENUM_CUDA_MEM_KIND 0 pageable */
        uint8_t f = 0;
        if (ck == 1 || ck == 2) f |= NSYS__COPY_HOST;
        if ((ck == 1 && sk == 0) || (ck == 2 && dk == 0)) f |= NSYS__COPY_PAGEABLE;
        d->copy_flags[i] = f;
      }
    }
    sqlite3_finalize(st);
    free(sql);
    if (rc != SQLITE_DONE && rc != SQLITE_OK && nsys_task_cancelled(task)) {
      nsys_detect_data_free(d);
      nsys_task_fail_cancelled(task);
      return NULL;
    }
    /* a full scan of a rowid table comes in rowid order; make sure */
    for (size_t i = 1; i < d->n_copy; i++)
      if (d->copy_rowid[i] <= d->copy_rowid[i - 1]) {
        d->n_copy = 0; /* never seen; bytes then stay unknown rather than wrong */
        break;
      }
  }
  /* the unified-memory page-fault tables (--cuda-um-cpu-page-faults / --cuda-um-gpu-page-faults) */
  if (!nsys__load_events(p, task,
                         "SELECT deviceId, start, end, numberOfPageFaults FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS",
                         &d->gf, &d->n_gf) ||
      !nsys__load_events(p, task, "SELECT globalPid, start, start, 1 FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS", &d->cf,
                         &d->n_cf)) {
    nsys_detect_data_free(d);
    return NULL;
  }
  sqlite3_stmt *st = NULL;
  d->fault_tables = sqlite3_prepare_v2(p->db, "SELECT 1 FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS LIMIT 0", -1, &st, NULL) ==
                    SQLITE_OK;
  sqlite3_finalize(st);
  for (size_t i = 0; i < d->n_cf; i++) d->cf[i].key = nsys_gtid_pid(d->cf[i].key);
  if (!nsys_csort(d->gf, d->n_gf, sizeof *d->gf, nsys__ev_cmp, nsys__cancel_cb, task) ||
      !nsys_csort(d->cf, d->n_cf, sizeof *d->cf, nsys__ev_cmp, nsys__cancel_cb, task)) {
    nsys_detect_data_free(d);
    nsys_task_fail_cancelled(task);
    return NULL;
  }
  return d;
}

/* Index of the copy with this rowid, or -1. */
static ssize_t nsys__copy_find(const struct nsys_detect_data *d, int64_t rowid) {
  if (!d) return -1;
  size_t lo = 0, hi = d->n_copy;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->copy_rowid[mid] < rowid) lo = mid + 1;
    else hi = mid;
  }
  return lo < d->n_copy && d->copy_rowid[lo] == rowid ? (ssize_t)lo : -1;
}

/* A blocking copy call: cudaMemcpy, cudaMemcpy2D/3D/ToArray..., cuMemcpyHtoD/DtoH...; not ...Async. */
static bool nsys__sync_copy_api(const char *name) {
  if (strncmp(name, "cudaMemcpy", 10) != 0 && strncmp(name, "cuMemcpy", 8) != 0) return false;
  return strstr(name, "Async") == NULL && strstr(name, "Peer") == NULL;
}

static bool nsys__is_launch_api(const char *name) {
  return strstr(name, "LaunchKernel") != NULL || strstr(name, "LaunchCooperativeKernel") != NULL;
}

/* Latest end among b[0..i] in reach[i]; whether a overlaps one of b (sorted by start). */
static bool nsys__hits(int64_t s, int64_t e, const nsys__iv *b, const int64_t *reach, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b[mid].s < e) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && reach[lo - 1] > s;
}

static int64_t *nsys__reach(const nsys__iv *v, size_t n) {
  int64_t *r = nsys_xmalloc((n ? n : 1) * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = i && r[i - 1] > v[i].e ? r[i - 1] : v[i].e;
  return r;
}

/* Over the events `ev` (sorted by start) and the instances `kv` (sorted by
 * start): events overlapping an instance (count, summed weight and
 * duration) and instances overlapped by an event. O((k + m) log(k + m)). */
static void nsys__overlap(const nsys__iv *ev, size_t n_ev, const nsys__iv *kv, const int64_t *k_reach, size_t n_k,
                          uint32_t *events, int64_t *weight, int64_t *ns, uint32_t *instances) {
  int64_t *ev_reach = nsys__reach(ev, n_ev);
  for (size_t i = 0; i < n_k; i++)
    if (nsys__hits(kv[i].s, kv[i].e, ev, ev_reach, n_ev)) (*instances)++;
  for (size_t i = 0; i < n_ev; i++)
    if (nsys__hits(ev[i].s, ev[i].e, kv, k_reach, n_k)) {
      (*events)++;
      *weight += ev[i].w;
      *ns += ev[i].e - ev[i].s;
    }
  free(ev_reach);
}

/* Number of CPU faults of pid in [s, e). */
static int64_t nsys__cpu_faults(const struct nsys_detect_data *d, uint32_t pid, int64_t s, int64_t e) {
  if (!d || e <= s) return 0;
  nsys__ev lo_key = {pid, s, 0, 0}, hi_key = {pid, e, 0, 0};
  size_t lo = 0, hi = d->n_cf;
  while (lo < hi) { /* first >= (pid, s) */
    size_t mid = lo + (hi - lo) / 2;
    if (nsys__ev_cmp(&d->cf[mid], &lo_key) < 0) lo = mid + 1;
    else hi = mid;
  }
  size_t a = lo;
  hi = d->n_cf;
  while (lo < hi) { /* first >= (pid, e) */
    size_t mid = lo + (hi - lo) / 2;
    if (nsys__ev_cmp(&d->cf[mid], &hi_key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return (int64_t)(lo - a);
}

/* Whether op is a host<->device copy that is pageable or synchronous; its
 * flags when it is. */
static bool nsys__bad_copy(const nsys_index *ix, const struct nsys_detect_data *d, uint32_t op, bool *pageable,
                           bool *sync) {
  if (ix->ops.kind[op] != NSYS_OP_MEMCPY) return false;
  ssize_t ci = nsys__copy_find(d, ix->ops.rowid[op]);
  uint8_t flags = ci >= 0 ? d->copy_flags[ci] : 0;
  int32_t api = ix->ops.api[op];
  *sync = api >= 0 && nsys__sync_copy_api(nsys_strtab_get(&ix->strings, ix->api.name[api]));
  *pageable = (flags & NSYS__COPY_PAGEABLE) != 0;
  const char *name = nsys_strtab_get(&ix->strings, ix->ops.name[op]);
  bool host = ci >= 0 ? (flags & NSYS__COPY_HOST) != 0 : (strstr(name, "HtoD") || strstr(name, "DtoH"));
  return host && (*sync || *pageable);
}

static int nsys__u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

bool nsys_detect_kernel(const nsys_index *ix, const struct nsys_detect_data *d, const uint32_t *ops, uint32_t n_ops,
                        int32_t device, bool scan_unified, nsys_task *task, nsys_detect *out) {
  memset(out, 0, sizeof *out);
  out->fault_tables = d && d->fault_tables;
  nsys__iv *kv = nsys_xmalloc((size_t)(n_ops ? n_ops : 1) * sizeof *kv);
  uint32_t *nb = nsys_xmalloc((size_t)(2 * n_ops + 1) * sizeof *nb); /* neighbouring bad copies */
  size_t n_k = 0, n_nb = 0;
  uint32_t last_name = NSYS_STR_NONE;
  bool last_graph = false, last_launch = false;
  for (uint32_t i = 0; i < n_ops; i++) {
    uint32_t op = ops[i];
    if ((i + 1) % NSYS__POLL == 0 && nsys_task_cancelled(task)) {
      free(kv);
      free(nb);
      return nsys_task_fail_cancelled(task);
    }
    const nsys_gpu_track *tr = &ix->tracks[ix->ops.track[op]];
    if (tr->device != device || ix->ops.kind[op] != NSYS_OP_KERNEL) continue;
    uint32_t k = op - tr->first; /* its position on its track */
    out->instances++;
    kv[n_k++] = (nsys__iv){ix->ops.start[op], ix->ops.end[op], 0};
    /* copies just before and after it on its stream */
    bool hit = false, pageable, sync;
    if (k > 0 && nsys__bad_copy(ix, d, op - 1, &pageable, &sync)) nb[n_nb++] = op - 1, hit = true;
    if (k + 1 < tr->count && nsys__bad_copy(ix, d, op + 1, &pageable, &sync)) nb[n_nb++] = op + 1, hit = true;
    out->copy_instances += hit;
    /* CPU faults of its process around it on its stream */
    int64_t before = k > 0 ? ix->ops.end[op - 1] : ix->ops.start[op];
    int64_t after = k + 1 < tr->count ? ix->ops.start[op + 1] : ix->ops.end[op];
    out->cpu_faults += nsys__cpu_faults(d, tr->pid, before, ix->ops.start[op]) +
                       nsys__cpu_faults(d, tr->pid, ix->ops.end[op], after);
    /* its launch */
    int32_t api = ix->ops.api[op];
    if (api < 0) continue;
    uint32_t an = ix->api.name[api];
    if (an != last_name) { /* instances share a few launch names: classify each once in a row */
      const char *name = nsys_strtab_get(&ix->strings, an);
      last_name = an;
      last_graph = strstr(name, "Graph") != NULL;
      last_launch = nsys__is_launch_api(name);
    }
    if (last_graph) {
      out->graph_launched++;
      continue;
    }
    if (!last_launch) continue;
    int64_t api_ns = ix->api.end[api] - ix->api.start[api];
    int64_t k_ns = ix->ops.end[op] - ix->ops.start[op];
    out->launched++;
    out->launch_api_ns += api_ns;
    out->launched_kernel_ns += k_ns;
    out->shorter_than_launch += k_ns < api_ns;
    out->starved += k == 0 || ix->ops.end[op - 1] <= ix->api.start[api];
  }
  /* each neighbouring copy once (one between two instances is met twice) */
  qsort(nb, n_nb, sizeof *nb, nsys__u32_cmp);
  for (size_t i = 0; i < n_nb; i++) {
    if (i > 0 && nb[i] == nb[i - 1]) continue;
    bool pageable, sync;
    nsys__bad_copy(ix, d, nb[i], &pageable, &sync);
    ssize_t ci = nsys__copy_find(d, ix->ops.rowid[nb[i]]);
    out->copies++;
    out->pageable_copies += pageable;
    out->sync_copies += sync;
    out->copy_bytes += ci >= 0 ? d->copy_bytes[ci] : 0;
    out->copy_ns += ix->ops.end[nb[i]] - ix->ops.start[nb[i]];
  }
  free(nb);
  /* the device's unified-memory migrations (only when the profile has some: a pass over the device's ops) */
  nsys__iv *um = NULL;
  size_t n_um = 0, ucap = 0;
  uint32_t polled = 0;
  for (uint32_t t = 0; scan_unified && t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    if (tr->device != device) continue;
    for (uint32_t k = 0; k < tr->count; k++) {
      uint32_t op = tr->first + k;
      if (++polled % NSYS__POLL == 0 && nsys_task_cancelled(task)) {
        free(kv);
        free(um);
        return nsys_task_fail_cancelled(task);
      }
      if (ix->ops.kind[op] != NSYS_OP_MEMCPY || !strstr(nsys_strtab_get(&ix->strings, ix->ops.name[op]), "Unified"))
        continue;
      if (n_um == ucap) ucap = ucap ? ucap * 2 : 64, um = nsys_xrealloc(um, ucap * sizeof *um);
      ssize_t ci = nsys__copy_find(d, ix->ops.rowid[op]);
      um[n_um++] = (nsys__iv){ix->ops.start[op], ix->ops.end[op], ci >= 0 ? d->copy_bytes[ci] : 0};
    }
  }
  /* the device's GPU page-fault events: a contiguous run of the (device, start) order */
  size_t a = 0;
  while (d && a < d->n_gf && d->gf[a].key < device) a++;
  size_t b = a;
  while (d && b < d->n_gf && d->gf[b].key == device) b++;
  /* instances in start order only when there are migrations or faults to
   * overlap them with (none: every overlap count is 0 without a sort) */
  bool ok = n_um == 0 && b == a ? !nsys_task_cancelled(task)
                                : nsys_csort(kv, n_k, sizeof *kv, nsys__iv_cmp, nsys__cancel_cb, task) &&
                                      nsys_csort(um, n_um, sizeof *um, nsys__iv_cmp, nsys__cancel_cb, task);
  if (ok && n_k > 0 && (n_um > 0 || b > a)) {
    int64_t *k_reach = nsys__reach(kv, n_k);
    nsys__overlap(um, n_um, kv, k_reach, n_k, &out->um_migrations, &out->um_bytes, &out->um_ns, &out->um_instances);
    if (b > a) {
      nsys__iv *gv = nsys_xmalloc((b - a) * sizeof *gv);
      for (size_t i = a; i < b; i++) gv[i - a] = (nsys__iv){d->gf[i].s, d->gf[i].e, d->gf[i].n};
      nsys__overlap(gv, b - a, kv, k_reach, n_k, &out->gpu_fault_events, &out->gpu_faults, &out->gpu_fault_ns,
                    &out->gpu_fault_instances);
      free(gv);
    }
    free(k_reach);
  }
  free(kv);
  free(um);
  return ok ? true : nsys_task_fail_cancelled(task);
}

static nsys__memo *nsys__memo_slot(struct nsys_detect_data *d, uint32_t name_id, int32_t device) {
  uint64_t h = ((uint64_t)name_id * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)(uint32_t)device * 0xC2B2AE3D27D4EB4FULL);
  return &d->memo[(h >> 32) % NSYS__MEMO];
}

bool nsys_detect_recall(struct nsys_detect_data *d, uint32_t name_id, int32_t device, nsys_detect *out) {
  if (!d) return false;
  pthread_mutex_lock(&d->mu);
  nsys__memo *m = nsys__memo_slot(d, name_id, device);
  bool hit = m->used && m->name == name_id && m->device == device;
  if (hit) *out = m->det;
  pthread_mutex_unlock(&d->mu);
  return hit;
}

void nsys_detect_remember(struct nsys_detect_data *d, uint32_t name_id, int32_t device, const nsys_detect *det) {
  if (!d) return;
  pthread_mutex_lock(&d->mu);
  nsys__memo *m = nsys__memo_slot(d, name_id, device);
  *m = (nsys__memo){true, name_id, device, *det};
  pthread_mutex_unlock(&d->mu);
}

bool nsys_detect_copies_matter(const nsys_detect *d) {
  /* at least a tenth of its instances sit next to such a copy */
  return d->copies > 0 && (uint64_t)d->copy_instances * 10 >= d->instances;
}

bool nsys_detect_um_matters(const nsys_detect *d, uint32_t launches, int64_t total_ns) {
  /* migrations or GPU page faults during at least half of its launches, or
   * adding up to a tenth of its time */
  if (launches == 0) launches = 1;
  bool um = d->um_migrations > 0 && ((uint64_t)d->um_instances * 2 >= launches || d->um_ns * 10 >= total_ns);
  bool gf = d->gpu_fault_events > 0 &&
            ((uint64_t)d->gpu_fault_instances * 2 >= launches || d->gpu_fault_ns * 10 >= total_ns);
  return um || gf;
}

bool nsys_detect_launch_bound(const nsys_detect *d) {
  /* enough launches to judge; most ran shorter than their launch call and
   * found the stream empty */
  return d->launched >= 20 && (uint64_t)d->shorter_than_launch * 2 >= d->launched &&
         (uint64_t)d->starved * 2 >= d->launched;
}
