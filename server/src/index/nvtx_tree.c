/* nvtx/tree computation: one projection sweep per thread, inclusive counts on
 * every enclosing range, kernel stats attributed to the innermost range and
 * merged up the tree, then optional aggregation of equal paths. */
#include "index/nvtx_tree.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index_query.h"
#include "rpc/call.h"

typedef struct {
  uint32_t range, name;
  int64_t dur;
} nsys__kt; /* kernel time attributed to its innermost range */

typedef struct {
  const nsys_index *ix;
  const nsys_nvtx_tree_opts *o;
  uint64_t *cnt;
  int64_t *kns, *gs, *ge;
  nsys__kt *kt;
  size_t n_kt, cap_kt;
} nsys__tree_acc;

static void nsys__tree_cb(void *c_, uint32_t api, const uint32_t *enc, uint32_t n) {
  nsys__tree_acc *c = c_;
  const nsys_index *ix = c->ix;
  for (int32_t op = ix->api.first_op[api]; op >= 0; op = ix->op_next[op]) {
    if (c->o->has_device && ix->tracks[ix->ops.track[op]].device != c->o->device) continue;
    int64_t s = ix->ops.start[op], e = ix->ops.end[op];
    bool kernel = ix->ops.kind[op] == NSYS_OP_KERNEL;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t r = enc[k];
      c->cnt[r]++;
      if (s < c->gs[r]) c->gs[r] = s;
      if (e > c->ge[r]) c->ge[r] = e;
      if (kernel) c->kns[r] += e - s;
    }
    if (kernel) {
      if (c->n_kt == c->cap_kt) {
        c->cap_kt = c->cap_kt ? c->cap_kt * 2 : 1024;
        c->kt = nsys_xrealloc(c->kt, c->cap_kt * sizeof *c->kt);
      }
      c->kt[c->n_kt++] = (nsys__kt){enc[n - 1], ix->ops.name[op], e - s};
    }
  }
}

static int nsys__cmp_kt(const void *a, const void *b) {
  const nsys__kt *x = a, *y = b;
  if (x->range != y->range) return x->range < y->range ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* kernel stat lists sorted by name id */
typedef struct {
  nsys_kernel_stat *v;
  uint32_t n;
} nsys__klist;

static nsys__klist nsys__kmerge(nsys__klist a, nsys__klist b) {
  if (!b.n) return a;
  if (!a.n) {
    nsys__klist c = {nsys_xmalloc(b.n * sizeof *b.v), b.n};
    memcpy(c.v, b.v, b.n * sizeof *b.v);
    free(a.v);
    return c;
  }
  nsys__klist c = {nsys_xmalloc(((size_t)a.n + b.n) * sizeof *a.v), 0};
  uint32_t i = 0, j = 0;
  while (i < a.n || j < b.n) {
    if (j >= b.n || (i < a.n && a.v[i].name < b.v[j].name)) c.v[c.n++] = a.v[i++];
    else if (i >= a.n || b.v[j].name < a.v[i].name) c.v[c.n++] = b.v[j++];
    else {
      nsys_kernel_stat s = a.v[i++];
      s.count += b.v[j].count;
      s.ns += b.v[j++].ns;
      c.v[c.n++] = s;
    }
  }
  free(a.v);
  return c;
}

static int nsys__cmp_stat_ns(const void *a, const void *b) {
  const nsys_kernel_stat *x = a, *y = b;
  if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

static int nsys__cmp_stat_name(const void *a, const void *b) {
  const nsys_kernel_stat *x = a, *y = b;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* qsort for the many tiny lists (one per range / node): an insertion sort
 * below 16 elements skips qsort's per-call setup. Stable, like glibc's merge
 * sort, and the comparators here are total orders or feed sums, so the
 * result is the same. */
static void nsys__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (n > 16) {
    qsort(base, n, size, cmp);
    return;
  }
  unsigned char *a = base, tmp[64];
  if (size > sizeof tmp) {
    qsort(base, n, size, cmp);
    return;
  }
  for (size_t i = 1; i < n; i++) {
    size_t j = i;
    if (cmp(a + (j - 1) * size, a + j * size) <= 0) continue;
    memcpy(tmp, a + i * size, size);
    while (j > 0 && cmp(a + (j - 1) * size, tmp) > 0) {
      memcpy(a + j * size, a + (j - 1) * size, size);
      j--;
    }
    memcpy(a + j * size, tmp, size);
  }
}

/* ---- aggregation -------------------------------------------------------- */

typedef struct {
  nsys_nvtx_node *nodes;
  uint32_t n, cap;
  const nsys_nvtx_node *src;
} nsys__agg;

static uint32_t nsys__agg_new(nsys__agg *a) {
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 256;
    a->nodes = nsys_xrealloc(a->nodes, a->cap * sizeof *a->nodes);
  }
  memset(&a->nodes[a->n], 0, sizeof a->nodes[a->n]);
  return a->n++;
}

/* Merges the source nodes `members` (siblings) by (name, domain); returns the
 * new node indices in *out (first-appearance order). */
static uint32_t nsys__agg_level(nsys__agg *a, const uint32_t *members, uint32_t n, uint32_t **out) {
  uint32_t *groups = nsys_xmalloc((n ? n : 1) * sizeof(uint32_t));
  uint32_t *group_of = nsys_xmalloc((n ? n : 1) * sizeof(uint32_t));
  uint32_t ng = 0;
  for (uint32_t i = 0; i < n; i++) {
    const nsys_nvtx_node *s = &a->src[members[i]];
    uint32_t g = 0;
    for (; g < ng; g++) {
      const nsys_nvtx_node *f = &a->src[members[groups[g]]];
      if (f->name == s->name && f->domain == s->domain) break;
    }
    if (g == ng) groups[ng++] = i;
    group_of[i] = g;
  }
  uint32_t *res = nsys_xmalloc((ng ? ng : 1) * sizeof(uint32_t));
  for (uint32_t g = 0; g < ng; g++) {
    uint32_t id = nsys__agg_new(a);
    nsys_nvtx_node acc;
    memset(&acc, 0, sizeof acc);
    acc.gpu_start = INT64_MAX;
    acc.gpu_end = INT64_MIN;
    acc.start = INT64_MAX;
    acc.end = INT64_MIN;
    nsys__klist kl = {NULL, 0};
    uint32_t n_child = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (group_of[i] != g) continue;
      const nsys_nvtx_node *s = &a->src[members[i]];
      if (!acc.instances) {
        acc.range = s->range;
        acc.name = s->name;
        acc.domain = s->domain;
        acc.thread = s->thread;
        acc.depth = s->depth;
      }
      acc.instances += s->instances;
      acc.cpu_ns += s->cpu_ns;
      if (s->start < acc.start) acc.start = s->start;
      if (s->end > acc.end) acc.end = s->end;
      if (s->gpu_start < acc.gpu_start) acc.gpu_start = s->gpu_start;
      if (s->gpu_end > acc.gpu_end) acc.gpu_end = s->gpu_end;
      acc.op_count += s->op_count;
      acc.kernel_ns += s->kernel_ns;
      nsys_kernel_stat *sorted = nsys_xmalloc((s->n_kernels + 1) * sizeof *sorted);
      if (s->n_kernels) {
        memcpy(sorted, s->kernels, s->n_kernels * sizeof *sorted);
        nsys__sort(sorted, s->n_kernels, sizeof *sorted, nsys__cmp_stat_name);
      }
      kl = nsys__kmerge(kl, (nsys__klist){sorted, s->n_kernels});
      free(sorted);
      n_child += s->n_children;
    }
    uint32_t *child_members = nsys_xmalloc((n_child ? n_child : 1) * sizeof(uint32_t));
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (group_of[i] != g) continue;
      const nsys_nvtx_node *s = &a->src[members[i]];
      memcpy(child_members + k, s->children, s->n_children * sizeof(uint32_t));
      k += s->n_children;
    }
    if (kl.n) nsys__sort(kl.v, kl.n, sizeof *kl.v, nsys__cmp_stat_ns);
    acc.kernels = kl.v;
    acc.n_kernels = kl.n;
    uint32_t *kids = NULL;
    acc.n_children = nsys__agg_level(a, child_members, n_child, &kids);
    acc.children = kids;
    free(child_members);
    a->nodes[id] = acc;
    res[g] = id;
  }
  free(groups);
  free(group_of);
  *out = res;
  return ng;
}

/* ---- build -------------------------------------------------------------- */

void nsys_nvtx_tree_free(nsys_nvtx_tree *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->n_nodes; i++) {
    free(t->nodes[i].kernels);
    free(t->nodes[i].children);
  }
  free(t->nodes);
  free(t->roots);
  free(t);
}

nsys_nvtx_tree *nsys_nvtx_tree_build(const nsys_index *ix, const nsys_nvtx_tree_opts *o,
                                     nsys_call *call) {
  uint32_t n = ix->nvtx.n;
  size_t nn = n ? n : 1;
  nsys__tree_acc acc = {ix, o, nsys_xcalloc(nn, sizeof(uint64_t)), nsys_xcalloc(nn, sizeof(int64_t)),
                        nsys_xmalloc(nn * sizeof(int64_t)), nsys_xmalloc(nn * sizeof(int64_t)),
                        NULL, 0, 0};
  for (uint32_t i = 0; i < n; i++) {
    acc.gs[i] = INT64_MAX;
    acc.ge[i] = INT64_MIN;
  }
  bool *thread_ok = nsys_xcalloc(ix->n_threads + 1, sizeof(bool));
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    thread_ok[t] = (!o->has_thread || ix->threads[t].tid == o->thread_tid) &&
                   (!o->has_thread_pid || ix->threads[t].pid == o->thread_pid);
    if (!thread_ok[t]) continue;
    if (nsys_call_cancelled(call)) {
      free(acc.cnt); free(acc.kns); free(acc.gs); free(acc.ge); free(acc.kt); free(thread_ok);
      nsys_call_fail_cancelled(call);
      return NULL;
    }
    nsys_nvtx_sweep(ix, t, nsys__tree_cb, &acc);
  }
  /* group by range (counting sort), then by name inside each range */
  {
    uint32_t *cnt_r = nsys_xcalloc(nn + 1, sizeof(uint32_t));
    for (size_t k = 0; k < acc.n_kt; k++) cnt_r[acc.kt[k].range + 1]++;
    for (uint32_t r = 0; r < n; r++) cnt_r[r + 1] += cnt_r[r];
    nsys__kt *sorted = nsys_xmalloc((acc.n_kt ? acc.n_kt : 1) * sizeof *sorted);
    uint32_t *pos = nsys_xmalloc((nn + 1) * sizeof(uint32_t));
    memcpy(pos, cnt_r, (nn + 1) * sizeof(uint32_t));
    for (size_t k = 0; k < acc.n_kt; k++) sorted[pos[acc.kt[k].range]++] = acc.kt[k];
    for (uint32_t r = 0; r < n; r++)
      if (cnt_r[r + 1] - cnt_r[r] > 1) nsys__sort(sorted + cnt_r[r], cnt_r[r + 1] - cnt_r[r], sizeof *sorted, nsys__cmp_kt);
    free(acc.kt);
    acc.kt = sorted;
    free(pos);
    free(cnt_r);
  }
  /* exclusive kernel lists per range: [kt_first[r], kt_first[r+1]) after grouping */
  /* keep flags */
  bool *keep = nsys_xcalloc(nn, sizeof(bool));
  uint32_t considered = 0;
  for (uint32_t r = 0; r < n; r++) {
    if (!thread_ok[ix->nvtx.thread[r]]) continue;
    if (o->has_window && (ix->nvtx.start[r] > o->end || ix->nvtx.end[r] < o->start)) continue;
    if (o->has_device && acc.cnt[r] == 0) continue;
    keep[r] = true;
    considered++;
  }
  /* inclusive kernel lists, children before parents (children have larger ids) */
  nsys__klist *lists = nsys_xcalloc(nn, sizeof(nsys__klist));
  size_t kt_hi = acc.n_kt;
  for (uint32_t r = n; r-- > 0;) {
    size_t kt_lo = kt_hi;
    while (kt_lo > 0 && acc.kt[kt_lo - 1].range == r) kt_lo--;
    if (keep[r] && kt_lo < kt_hi) {
      nsys__klist ex = {nsys_xmalloc((kt_hi - kt_lo) * sizeof(nsys_kernel_stat)), 0};
      for (size_t k = kt_lo; k < kt_hi; k++) {
        if (ex.n && ex.v[ex.n - 1].name == acc.kt[k].name) {
          ex.v[ex.n - 1].count++;
          ex.v[ex.n - 1].ns += acc.kt[k].dur;
        } else {
          ex.v[ex.n++] = (nsys_kernel_stat){acc.kt[k].name, 1, acc.kt[k].dur};
        }
      }
      lists[r] = nsys__kmerge(lists[r], ex);
      free(ex.v);
    }
    kt_hi = kt_lo;
    int32_t pa = ix->nvtx.parent[r];
    if (keep[r] && pa >= 0 && keep[pa]) lists[pa] = nsys__kmerge(lists[pa], lists[r]);
  }
  /* nodes */
  nsys_nvtx_tree *tree = nsys_xcalloc(1, sizeof *tree);
  tree->n_ranges_considered = considered;
  uint32_t *node_of = nsys_xmalloc(nn * sizeof(uint32_t));
  uint32_t n_nodes = 0;
  for (uint32_t r = 0; r < n; r++) {
    node_of[r] = UINT32_MAX;
    if (keep[r] && (o->max_depth < 0 || ix->nvtx.depth[r] <= o->max_depth)) node_of[r] = n_nodes++;
  }
  nsys_nvtx_node *nodes = nsys_xcalloc(n_nodes ? n_nodes : 1, sizeof *nodes);
  uint32_t *n_kids = nsys_xcalloc(n_nodes ? n_nodes : 1, sizeof(uint32_t));
  uint32_t n_roots = 0;
  for (uint32_t r = 0; r < n; r++) {
    uint32_t id = node_of[r];
    if (id == UINT32_MAX) continue;
    nsys_nvtx_node *nd = &nodes[id];
    nd->range = r;
    nd->name = ix->nvtx.name[r];
    nd->domain = ix->nvtx.domain[r];
    nd->thread = ix->nvtx.thread[r];
    nd->depth = ix->nvtx.depth[r];
    nd->start = ix->nvtx.start[r];
    nd->end = ix->nvtx.end[r];
    nd->gpu_start = acc.gs[r];
    nd->gpu_end = acc.ge[r];
    nd->op_count = acc.cnt[r];
    nd->kernel_ns = acc.kns[r];
    nd->instances = 1;
    nd->cpu_ns = nd->end - nd->start;
    nd->kernels = lists[r].v;
    nd->n_kernels = lists[r].n;
    lists[r].v = NULL;
    if (nd->n_kernels) nsys__sort(nd->kernels, nd->n_kernels, sizeof *nd->kernels, nsys__cmp_stat_ns);
    int32_t pa = ix->nvtx.parent[r];
    if (pa >= 0 && node_of[pa] != UINT32_MAX) n_kids[node_of[pa]]++;
    else n_roots++;
  }
  uint32_t *roots = nsys_xmalloc((n_roots ? n_roots : 1) * sizeof(uint32_t));
  n_roots = 0;
  for (uint32_t i = 0; i < n_nodes; i++) nodes[i].children = nsys_xmalloc((n_kids[i] ? n_kids[i] : 1) * sizeof(uint32_t));
  for (uint32_t r = 0; r < n; r++) {
    uint32_t id = node_of[r];
    if (id == UINT32_MAX) continue;
    int32_t pa = ix->nvtx.parent[r];
    if (pa >= 0 && node_of[pa] != UINT32_MAX) {
      nsys_nvtx_node *p = &nodes[node_of[pa]];
      p->children[p->n_children++] = id;
    } else {
      roots[n_roots++] = id;
    }
  }
  for (uint32_t r = 0; r < n; r++) free(lists[r].v);
  free(lists);
  free(n_kids);
  free(node_of);
  free(keep);
  free(thread_ok);
  free(acc.cnt); free(acc.kns); free(acc.gs); free(acc.ge); free(acc.kt);
  tree->nodes = nodes;
  tree->n_nodes = n_nodes;
  tree->roots = roots;
  tree->n_roots = n_roots;
  if (o->aggregate) {
    nsys__agg a = {NULL, 0, 0, nodes};
    uint32_t *new_roots = NULL;
    uint32_t nr = nsys__agg_level(&a, roots, n_roots, &new_roots);
    nsys_nvtx_tree *agg = nsys_xcalloc(1, sizeof *agg);
    agg->nodes = a.nodes;
    agg->n_nodes = a.n;
    agg->roots = new_roots;
    agg->n_roots = nr;
    agg->n_ranges_considered = considered;
    nsys_nvtx_tree_free(tree);
    return agg;
  }
  return tree;
}

int32_t nsys_nvtx_innermost(const nsys_index *ix, uint32_t api) {
  const nsys_host_thread *th = &ix->threads[ix->api.thread[api]];
  if (!th->nvtx_count) return -1;
  int64_t as = ix->api.start[api], ae = ix->api.end[api];
  /* last range of the thread with start <= as */
  uint32_t lo = th->nvtx_first, hi = th->nvtx_first + th->nvtx_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->nvtx.start[mid] <= as) lo = mid + 1;
    else hi = mid;
  }
  if (lo == th->nvtx_first) return -1;
  /* ranges containing the call form a chain; the innermost starts last. Walk
   * the parent chain of each candidate, newest first. */
  for (uint32_t c = lo; c-- > th->nvtx_first && lo - c <= 64;) {
    for (int32_t r = (int32_t)c; r >= 0; r = ix->nvtx.parent[r])
      if (ix->nvtx.start[r] <= as && ix->nvtx.end[r] >= ae) return r;
  }
  return -1;
}
