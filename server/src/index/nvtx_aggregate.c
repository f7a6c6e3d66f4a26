/* The aggregate NVTX tree: one node per distinct name path (siblings with the
 * same (op name, domain) merged recursively, roots across threads too), with
 * the instances' count, durations (total, min, lower median, max) and summed
 * GPU projection; and the PyTorch autograd name parser that gives the op name.
 * See nvtx_tree.h. */
#include <stdlib.h>
#include <string.h>

#include "common/csort.h"
#include "common/task.h"
#include "common/util.h"
#include "index/nvtx_tree_internal.h"

/* ", KEY = " at s[i] for a key PyTorch writes after the op name */
static size_t nsys__autograd_key(const char *s, size_t n, size_t i, const char *key) {
  size_t k = strlen(key);
  if (i + 2 + k + 3 > n || s[i] != ',' || s[i + 1] != ' ' || memcmp(s + i + 2, key, k) != 0 ||
      memcmp(s + i + 2 + k, " = ", 3) != 0)
    return 0;
  return 2 + k + 3;
}

/* The decimal number at s[i..n) (up to a ',' or the end), or -1. */
static int64_t nsys__autograd_number(const char *s, size_t n, size_t i) {
  int64_t v = 0;
  size_t j = i;
  for (; j < n && s[j] >= '0' && s[j] <= '9'; j++) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (s[j] - '0');
  }
  return j > i && (j == n || s[j] == ',') ? v : -1;
}

bool nsys_nvtx_autograd(const char *s, size_t n, size_t *op_len, int64_t *seq, int64_t *op_id) {
  *seq = *op_id = -1;
  size_t op = 0;
  for (size_t i = 1; i < n; i++) {
    if (s[i] != ',') continue;
    size_t k = nsys__autograd_key(s, n, i, "seq");
    if (k) {
      int64_t v = nsys__autograd_number(s, n, i + k);
      if (v < 0) return false;
      if (!op) op = i;
      *seq = v;
      continue;
    }
    k = nsys__autograd_key(s, n, i, "op_id");
    if (k) {
      int64_t v = nsys__autograd_number(s, n, i + k);
      if (v < 0) return false;
      if (!op) op = i;
      *op_id = v;
      continue;
    }
    if (op) break; /* sizes = [...], input_op_ids = [...]: after the numbers */
  }
  if (!op) {
    *seq = *op_id = -1;
    return false;
  }
  *op_len = op;
  return true;
}

/* ---- op names ---------------------------------------------------------------- */

/* Map from an index string id to its op name: a string id of the index, or
 * (local) one of c->names. Open addressing on the id. */
typedef struct {
  uint32_t *from, *to; /* from: id + 1, 0 = empty */
  uint32_t cap, n;
} nsys__idmap;

static uint32_t nsys__idmap_slot(const nsys__idmap *m, uint32_t id) {
  uint32_t h = (id * 2654435761u) & (m->cap - 1);
  while (m->from[h] && m->from[h] != id + 1) h = (h + 1) & (m->cap - 1);
  return h;
}

#define NSYS__LOCAL 0x80000000u

/* The op-name key of index string `name`: the name itself, unless it is an
 * autograd name; then its op name (the index's string when it has one). */
static uint32_t nsys__op_key(nsys__nvtx_core *c, nsys__idmap *m, uint32_t name) {
  if ((m->n + 1) * 2 > m->cap) {
    nsys__idmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1024;
    m->from = nsys_xcalloc(m->cap, sizeof(uint32_t));
    m->to = nsys_xmalloc(m->cap * sizeof(uint32_t));
    for (uint32_t i = 0; i < old.cap; i++) {
      if (!old.from[i]) continue;
      uint32_t h = nsys__idmap_slot(m, old.from[i] - 1);
      m->from[h] = old.from[i];
      m->to[h] = old.to[i];
    }
    free(old.from);
    free(old.to);
  }
  uint32_t h = nsys__idmap_slot(m, name);
  if (m->from[h]) return m->to[h];
  const nsys_strtab *st = &c->ix->strings;
  uint32_t key = name;
  size_t op_len;
  int64_t seq, op_id;
  if (name < st->count && nsys_nvtx_autograd(nsys_strtab_get(st, name), st->lens[name], &op_len, &seq, &op_id)) {
    const char *text = nsys_strtab_get(st, name);
    uint32_t found = nsys_strtab_find(st, text, op_len);
    key = found != UINT32_MAX ? found : (NSYS__LOCAL | nsys_strtab_intern(&c->names, text, op_len));
  }
  m->from[h] = name + 1;
  m->to[h] = key;
  m->n++;
  return key;
}

/* ---- paths ------------------------------------------------------------------- */

typedef struct {
  uint32_t *slot; /* path id + 1, 0 = empty */
  uint32_t cap;
} nsys__pathmap;

static uint64_t nsys__path_hash(uint32_t parent, uint32_t key, uint32_t domain) {
  uint64_t h = ((uint64_t)parent << 32 | key) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)domain * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 29);
}

static void nsys__path_grow(nsys__nvtx_core *c, uint32_t cap) {
  size_t n = cap;
#define NSYS__GROW(a) a = nsys_xrealloc(a, n * sizeof *(a))
  NSYS__GROW(c->p_name); NSYS__GROW(c->p_domain); NSYS__GROW(c->p_depth); NSYS__GROW(c->p_inst);
  NSYS__GROW(c->p_start); NSYS__GROW(c->p_end); NSYS__GROW(c->p_cpu); NSYS__GROW(c->p_min);
  NSYS__GROW(c->p_med); NSYS__GROW(c->p_max); NSYS__GROW(c->p_cnt); NSYS__GROW(c->p_kns);
  NSYS__GROW(c->p_gs); NSYS__GROW(c->p_ge); NSYS__GROW(c->p_local);
#undef NSYS__GROW
}

static int64_t nsys__dur(const nsys_index *ix, uint32_t r) { return ix->nvtx.end[r] - ix->nvtx.start[r]; }

static uint32_t nsys__path_key(const nsys__nvtx_core *c, uint32_t p) {
  return c->p_local[p] ? (NSYS__LOCAL | c->p_name[p]) : c->p_name[p];
}

/* ---- instance statistics ----------------------------------------------------- */

static bool nsys__cancel_cb(void *task) { return nsys_task_cancelled(task); }

#define NSYS__POLL_MASK 0xFFFF

/* Per path: min, lower median and max duration of its instances, and the
 * shortest instance (the lowest id among equals) moved first in its list:
 * linear scans and one selection per path instead of sorting the instances
 * (a path can hold a million), cancellable. */
static bool nsys__instance_stats(nsys__nvtx_core *c, nsys_task *task) {
  const nsys_index *ix = c->ix;
  uint32_t np = c->n_paths, kmax = 0;
  for (uint32_t p = 0; p < np; p++)
    if (c->inst.off[p + 1] - c->inst.off[p] > kmax) kmax = c->inst.off[p + 1] - c->inst.off[p];
  int64_t *d = nsys_xmalloc(((size_t)kmax + 1) * sizeof *d);
  uint64_t work = 0;
  bool ok = true;
  for (uint32_t p = 0; p < np && ok; p++) {
    uint32_t lo = c->inst.off[p], k = c->inst.off[p + 1] - lo, *ids = c->inst.ids + lo;
    uint32_t imin = 0;
    int64_t dmin = nsys__dur(ix, ids[0]), dmax = dmin;
    for (uint32_t i = 0; i < k; i++) {
      int64_t v = nsys__dur(ix, ids[i]);
      d[i] = v;
      if (v < dmin || (v == dmin && ids[i] < ids[imin])) dmin = v, imin = i;
      if (v > dmax) dmax = v;
      if ((++work & NSYS__POLL_MASK) == 0 && nsys_task_cancelled(task)) ok = false;
    }
    uint32_t first = ids[imin];
    ids[imin] = ids[0];
    ids[0] = first;
    c->p_min[p] = dmin;
    c->p_max[p] = dmax;
    if (ok && k > 2) ok = nsys_cselect_i64(d, k, (k - 1) / 2, nsys__cancel_cb, task);
    c->p_med[p] = k > 2 ? d[(k - 1) / 2] : dmin;
  }
  free(d);
  return ok || nsys_task_fail_cancelled(task);
}

bool nsys__nvtx_aggregate_build(nsys__nvtx_core *c, const nsys__nvtx_stats *st, nsys_task *task) {
  const nsys_index *ix = c->ix;
  uint32_t n = ix->nvtx.n;
  uint32_t *path_of = nsys_xmalloc((n ? n : 1) * sizeof(uint32_t));
  nsys__idmap names = {NULL, NULL, 0, 0};
  nsys__pathmap pm = {NULL, 0};
  uint32_t cap = 0;
  pm.cap = 1024;
  pm.slot = nsys_xcalloc(pm.cap, sizeof(uint32_t));
  bool ok = true;
  uint32_t memo_pp = UINT32_MAX - 1, memo_name = 0, memo_dom = 0, memo_p = 0; /* the last path looked up */
  for (uint32_t r = 0; r < n; r++) {
    if ((r & 0xFFFF) == 0) {
      if (nsys_task_cancelled(task)) {
        ok = false;
        break;
      }
      nsys_task_progress(task, 60 + (int)(35 * (uint64_t)r / n), "NVTX name paths");
    }
    if (!c->keep[r]) continue;
    int32_t pa = ix->nvtx.parent[r];
    uint32_t pp = pa >= 0 && (uint32_t)pa < r && c->keep[pa] ? path_of[pa] : UINT32_MAX;
    uint32_t name = ix->nvtx.name[r];
    uint32_t dom = ix->nvtx.domain[r];
    int64_t d = nsys__dur(ix, r);
    uint32_t p = UINT32_MAX;
    if (pp == memo_pp && name == memo_name && dom == memo_dom) {
      p = memo_p; /* the previous range's sibling of the same name: back-to-back steps, ticks, layers */
    } else {
      uint32_t key = nsys__op_key(c, &names, name);
      if ((c->n_paths + 1) * 2 > pm.cap) { /* grow: reinsert every path (parent in inst.ids for now) */
        free(pm.slot);
        pm.cap *= 2;
        pm.slot = nsys_xcalloc(pm.cap, sizeof(uint32_t));
        for (uint32_t q = 0; q < c->n_paths; q++) {
          uint32_t h = (uint32_t)nsys__path_hash(c->inst.ids[q], nsys__path_key(c, q), c->p_domain[q]) & (pm.cap - 1);
          while (pm.slot[h]) h = (h + 1) & (pm.cap - 1);
          pm.slot[h] = q + 1;
        }
      }
      uint32_t h = (uint32_t)nsys__path_hash(pp, key, dom) & (pm.cap - 1);
      for (; pm.slot[h]; h = (h + 1) & (pm.cap - 1)) {
        uint32_t q = pm.slot[h] - 1;
        if (c->inst.ids[q] == pp && nsys__path_key(c, q) == key && c->p_domain[q] == dom) {
          p = q;
          break;
        }
      }
      if (p == UINT32_MAX) {
        p = c->n_paths++;
        if (c->n_paths > cap) {
          cap = cap ? cap * 2 : 256;
          nsys__path_grow(c, cap);
          c->inst.ids = nsys_xrealloc(c->inst.ids, (size_t)cap * sizeof(uint32_t)); /* parent path, for now */
        }
        pm.slot[h] = p + 1;
        c->inst.ids[p] = pp;
        c->p_local[p] = (key & NSYS__LOCAL) != 0;
        c->p_name[p] = key & ~NSYS__LOCAL;
        c->p_domain[p] = dom;
        c->p_depth[p] = pp == UINT32_MAX ? 0 : (uint16_t)(c->p_depth[pp] + (c->p_depth[pp] < UINT16_MAX));
        c->p_inst[p] = 0;
        c->p_start[p] = INT64_MAX;
        c->p_end[p] = INT64_MIN;
        c->p_cpu[p] = 0;
        c->p_cnt[p] = 0;
        c->p_kns[p] = 0;
        c->p_gs[p] = INT64_MAX;
        c->p_ge[p] = INT64_MIN;
      }
      memo_pp = pp, memo_name = name, memo_dom = dom, memo_p = p;
    }
    path_of[r] = p;
    c->p_inst[p]++;
    c->p_cpu[p] += d;
    if (ix->nvtx.start[r] < c->p_start[p]) c->p_start[p] = ix->nvtx.start[r];
    if (ix->nvtx.end[r] > c->p_end[p]) c->p_end[p] = ix->nvtx.end[r];
    c->p_cnt[p] += st->cnt[r];
    c->p_kns[p] += st->kns[r];
    if (st->gs[r] < c->p_gs[p]) c->p_gs[p] = st->gs[r];
    if (st->ge[r] > c->p_ge[p]) c->p_ge[p] = st->ge[r];
  }
  free(pm.slot);
  free(names.from);
  free(names.to);
  if (!ok) {
    free(path_of);
    nsys_task_fail_cancelled(task);
    return false;
  }
  uint32_t np = c->n_paths;
  uint32_t *parent = c->inst.ids; /* parent path per path */
  c->inst.ids = NULL;
  /* children per path and the roots, in path (first appearance) order */
  c->kids.off = nsys_xcalloc((size_t)np + 2, sizeof(uint32_t));
  uint32_t n_roots = 0;
  for (uint32_t p = 0; p < np; p++) {
    if (parent[p] == UINT32_MAX) n_roots++;
    else c->kids.off[parent[p] + 1]++;
  }
  for (uint32_t p = 0; p < np; p++) c->kids.off[p + 1] += c->kids.off[p];
  c->kids.ids = nsys_xmalloc(((size_t)c->kids.off[np] + 1) * sizeof(uint32_t));
  c->roots.off = nsys_xcalloc(2, sizeof(uint32_t));
  c->roots.off[1] = n_roots;
  c->roots.ids = nsys_xmalloc(((size_t)n_roots + 1) * sizeof(uint32_t));
  uint32_t *pos = nsys_xmalloc(((size_t)np + 1) * sizeof(uint32_t));
  memcpy(pos, c->kids.off, ((size_t)np + 1) * sizeof(uint32_t));
  n_roots = 0;
  for (uint32_t p = 0; p < np; p++) {
    if (parent[p] == UINT32_MAX) c->roots.ids[n_roots++] = p;
    else c->kids.ids[pos[parent[p]]++] = p;
  }
  free(parent);
  /* instances per path, by duration: min, lower median, max */
  c->inst.off = nsys_xcalloc((size_t)np + 2, sizeof(uint32_t));
  for (uint32_t r = 0; r < n; r++)
    if (c->keep[r]) c->inst.off[path_of[r] + 1]++;
  for (uint32_t p = 0; p < np; p++) c->inst.off[p + 1] += c->inst.off[p];
  c->inst.ids = nsys_xmalloc(((size_t)c->inst.off[np] + 1) * sizeof(uint32_t));
  memcpy(pos, c->inst.off, ((size_t)np + 1) * sizeof(uint32_t));
  for (uint32_t r = 0; r < n; r++)
    if (c->keep[r]) c->inst.ids[pos[path_of[r]]++] = r;
  free(pos);
  free(path_of);
  return nsys__instance_stats(c, task);
}
