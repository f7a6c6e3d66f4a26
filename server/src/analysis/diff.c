/* profile/diff: kernels added/removed/faster/slower by name, and deltas of
 * overlap, idle and iteration time, with a short plain-language summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/util.h"
#include "analysis/report.h"
#include "profile/profile.h"

static double nsys__dn(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
static const cJSON *nsys__dg(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static double nsys__sum_rows(const cJSON *rows, const char *k) {
  double s = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) s += nsys__dn(r, k);
  return s;
}

static int nsys__cmp_delta(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  double dx = fabs(nsys__dn(x, "deltaNs")), dy = fabs(nsys__dn(y, "deltaNs"));
  if (dx != dy) return dx > dy ? -1 : 1;
  return strcmp(cJSON_GetStringValue(nsys__dg(x, "name")), cJSON_GetStringValue(nsys__dg(y, "name")));
}

static cJSON *nsys__side(struct nsys_profile *p, const nsys_index *ix) {
  cJSON *o = cJSON_CreateObject();
  nsys_json_str(o, "profileId", p->id);
  nsys_json_str(o, "file", p->path);
  cJSON *w = cJSON_AddObjectToObject(o, "window");
  nsys_json_int(w, "start", ix->span_start);
  nsys_json_int(w, "end", ix->span_end);
  return o;
}

static cJSON *nsys__pair(double a, double b) {
  cJSON *o = cJSON_CreateObject();
  nsys_json_num(o, "base", a);
  nsys_json_num(o, "compare", b);
  nsys_json_num(o, "delta", b - a);
  nsys_json_num(o, "deltaPct", a != 0 ? nsys_round2(100.0 * (b - a) / fabs(a)) : 0);
  return o;
}

static int nsys__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double nsys__median_iter(const cJSON *it) {
  int n = cJSON_GetArraySize(nsys__dg(it, "rows"));
  if (!n) return 0;
  double *v = nsys_xmalloc((size_t)n * sizeof *v);
  int k = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, nsys__dg(it, "rows")) v[k++] = nsys__dn(r, "durationNs");
  qsort(v, (size_t)n, sizeof *v, nsys__cmp_double);
  double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  free(v);
  return m;
}

/* The rows of a top_kernels result by name, for O(log n) lookups (the first
 * row of a name wins, as a linear search would). */
typedef struct {
  const char *name;
  int pos;
  const cJSON *row;
} nsys__named;

static int nsys__cmp_named(const void *a, const void *b) {
  const nsys__named *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static nsys__named *nsys__by_name(const cJSON *rows, int *n) {
  *n = cJSON_GetArraySize(rows);
  nsys__named *v = nsys_xcalloc((size_t)*n + 1, sizeof *v);
  int k = 0;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    v[k] = (nsys__named){cJSON_GetStringValue(nsys__dg(r, "name")), k, r};
    k++;
  }
  if (*n > 1) qsort(v, (size_t)*n, sizeof *v, nsys__cmp_named);
  return v;
}

static const cJSON *nsys__find_name(const nsys__named *v, int n, const char *name) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int m = lo + (hi - lo) / 2;
    if (strcmp(v[m].name, name) < 0) lo = m + 1;
    else hi = m;
  }
  return lo < n && !strcmp(v[lo].name, name) ? v[lo].row : NULL;
}

cJSON *nsys_diff_build(nsys_task *task, struct nsys_profile *a, const nsys_index *ia,
                       struct nsys_profile *b, const nsys_index *ib) {
  nsys_aparams pk; /* every kernel name, so each side's names can be matched */
  nsys_aparams_defaults(&pk, nsys_analysis_find("top_kernels"));
  nsys_aparams_set_int(&pk, "limit", 0);
  /* what the analyses derive from each index alone: built once per side */
  nsys_acache cache_a, cache_b;
  nsys_acache_init(&cache_a, ia);
  nsys_acache_init(&cache_b, ib);
  nsys_arun runs[6] = {
      {.p = a, .ix = ia, .name = "top_kernels", .params = &pk, .cache = &cache_a},
      {.p = b, .ix = ib, .name = "top_kernels", .params = &pk, .cache = &cache_b},
      {.p = a, .ix = ia, .name = "overlap", .cache = &cache_a},
      {.p = b, .ix = ib, .name = "overlap", .cache = &cache_b},
      {.p = a, .ix = ia, .name = "iterations", .cache = &cache_a},
      {.p = b, .ix = ib, .name = "iterations", .cache = &cache_b},
  };
  bool ok = nsys_analysis_run_all(task, runs, 6, "profile/diff");
  nsys_aparams_dispose(&pk);
  nsys_acache_dispose(&cache_a);
  nsys_acache_dispose(&cache_b);
  for (int i = 0; i < 6 && ok; i++) /* the first failure, in order */
    if (!runs[i].result) ok = nsys_task_fail_from(task, &runs[i].task);
  if (ok && nsys_task_cancelled(task)) ok = nsys_task_fail_cancelled(task);
  if (!ok) {
    for (int i = 0; i < 6; i++) cJSON_Delete(runs[i].result);
    return NULL;
  }
  cJSON *ka = runs[0].result, *kb = runs[1].result, *oa = runs[2].result, *ob = runs[3].result;
  cJSON *ta = runs[4].result, *tb = runs[5].result;
  double min_delta_pct = 5.0; /* faster/slower when the total moves by >= 5% */
  cJSON *res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "base", nsys__side(a, ia));
  cJSON_AddItemToObject(res, "compare", nsys__side(b, ib));
  cJSON *rows = cJSON_CreateArray();
  int n_add = 0, n_rem = 0, n_fast = 0, n_slow = 0;
  int n_na, n_nb;
  nsys__named *by_a = nsys__by_name(nsys__dg(ka, "rows"), &n_na), *by_b = nsys__by_name(nsys__dg(kb, "rows"), &n_nb);
  const cJSON *r;
  cJSON_ArrayForEach(r, nsys__dg(ka, "rows")) {
    const char *nm = cJSON_GetStringValue(nsys__dg(r, "name"));
    const cJSON *m = nsys__find_name(by_b, n_nb, nm);
    double ta_ns = nsys__dn(r, "totalNs"), tb_ns = m ? nsys__dn(m, "totalNs") : 0;
    const char *status = "same";
    if (!m) {
      status = "removed";
      n_rem++;
    } else if (tb_ns < ta_ns * (1 - min_delta_pct / 100)) {
      status = "faster";
      n_fast++;
    } else if (tb_ns > ta_ns * (1 + min_delta_pct / 100)) {
      status = "slower";
      n_slow++;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nm);
    cJSON_AddStringToObject(o, "status", status);
    nsys_json_num(o, "baseCount", nsys__dn(r, "count"));
    nsys_json_num(o, "compareCount", m ? nsys__dn(m, "count") : 0);
    nsys_json_num(o, "baseTotalNs", ta_ns);
    nsys_json_num(o, "compareTotalNs", tb_ns);
    nsys_json_num(o, "deltaNs", tb_ns - ta_ns);
    nsys_json_num(o, "deltaPct", ta_ns > 0 ? nsys_round2(100.0 * (tb_ns - ta_ns) / ta_ns) : 0);
    nsys_json_num(o, "baseAvgNs", nsys__dn(r, "avgNs"));
    nsys_json_num(o, "compareAvgNs", m ? nsys__dn(m, "avgNs") : 0);
    /* per-call change, independent of how many calls fell in each window */
    double aa = nsys__dn(r, "avgNs"), ab = m ? nsys__dn(m, "avgNs") : 0;
    if (m && aa > 0) {
      nsys_json_num(o, "avgDeltaPct", nsys_round2(100.0 * (ab - aa) / aa));
      cJSON_AddStringToObject(o, "perCall", ab < aa * (1 - min_delta_pct / 100)   ? "faster"
                                            : ab > aa * (1 + min_delta_pct / 100) ? "slower"
                                                                                  : "same");
    } else {
      cJSON_AddNullToObject(o, "avgDeltaPct");
      cJSON_AddNullToObject(o, "perCall");
    }
    cJSON_AddItemToArray(rows, o);
  }
  cJSON_ArrayForEach(r, nsys__dg(kb, "rows")) {
    const char *nm = cJSON_GetStringValue(nsys__dg(r, "name"));
    if (nsys__find_name(by_a, n_na, nm)) continue;
    n_add++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nm);
    cJSON_AddStringToObject(o, "status", "added");
    nsys_json_num(o, "baseCount", 0);
    nsys_json_num(o, "compareCount", nsys__dn(r, "count"));
    nsys_json_num(o, "baseTotalNs", 0);
    nsys_json_num(o, "compareTotalNs", nsys__dn(r, "totalNs"));
    nsys_json_num(o, "deltaNs", nsys__dn(r, "totalNs"));
    cJSON_AddNullToObject(o, "deltaPct");
    nsys_json_num(o, "baseAvgNs", 0);
    nsys_json_num(o, "compareAvgNs", nsys__dn(r, "avgNs"));
    cJSON_AddNullToObject(o, "avgDeltaPct");
    cJSON_AddNullToObject(o, "perCall");
    cJSON_AddItemToArray(rows, o);
  }
  free(by_a);
  free(by_b);
  /* sort by |delta| */
  int n = cJSON_GetArraySize(rows);
  cJSON **v = nsys_xcalloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[i] = cJSON_DetachItemFromArray(rows, 0);
  if ((size_t)n > 1) qsort(v, (size_t)n, sizeof *v, nsys__cmp_delta);
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(rows, v[i]);
  free(v);
  cJSON_AddItemToObject(res, "rows", rows);

  cJSON *s = cJSON_AddObjectToObject(res, "summary");
  double kta = nsys__dn(nsys__dg(ka, "summary"), "totalKernelNs"), ktb = nsys__dn(nsys__dg(kb, "summary"), "totalKernelNs");
  cJSON_AddItemToObject(s, "kernelNs", nsys__pair(kta, ktb));
  cJSON_AddItemToObject(s, "kernels", nsys__pair(nsys__dn(nsys__dg(ka, "summary"), "kernelCount"),
                                                 nsys__dn(nsys__dg(kb, "summary"), "kernelCount")));
  const cJSON *ova = nsys__dg(ka, "rows");
  (void)ova;
  cJSON_AddItemToObject(s, "spanNs", nsys__pair((double)(ia->span_end - ia->span_start), (double)(ib->span_end - ib->span_start)));
  cJSON_AddItemToObject(s, "idleNs", nsys__pair(nsys__sum_rows(nsys__dg(oa, "rows"), "idleNs"),
                                                nsys__sum_rows(nsys__dg(ob, "rows"), "idleNs")));
  cJSON_AddItemToObject(s, "overlapNs", nsys__pair(nsys__sum_rows(nsys__dg(oa, "rows"), "overlapNs"),
                                                   nsys__sum_rows(nsys__dg(ob, "rows"), "overlapNs")));
  cJSON_AddItemToObject(s, "commOnlyNs", nsys__pair(nsys__sum_rows(nsys__dg(oa, "rows"), "commOnlyNs"),
                                                    nsys__sum_rows(nsys__dg(ob, "rows"), "commOnlyNs")));
  cJSON_AddItemToObject(s, "computeOnlyNs", nsys__pair(nsys__sum_rows(nsys__dg(oa, "rows"), "computeOnlyNs"),
                                                       nsys__sum_rows(nsys__dg(ob, "rows"), "computeOnlyNs")));
  double ma = nsys__median_iter(ta), mb = nsys__median_iter(tb);
  cJSON *it = nsys__pair(ma, mb);
  cJSON_AddItemToObject(s, "iterationMedianNs", it);
  cJSON_AddItemToObject(s, "iterations", nsys__pair(nsys__dn(nsys__dg(ta, "summary"), "count"),
                                                    nsys__dn(nsys__dg(tb, "summary"), "count")));
  cJSON *cnt = cJSON_AddObjectToObject(s, "kernelChanges");
  nsys_json_int(cnt, "added", n_add);
  nsys_json_int(cnt, "removed", n_rem);
  nsys_json_int(cnt, "faster", n_fast);
  nsys_json_int(cnt, "slower", n_slow);
  /* plain-language summary */
  nsys_strbuf t;
  nsys_strbuf_init(&t);
  char d1[32], d2[32];
  nsys_fmt_duration(d1, sizeof d1, (int64_t)fabs(ktb - kta));
  nsys_strbuf_printf(&t, "GPU kernel time %s by %s (%+.1f%%)", ktb <= kta ? "fell" : "rose", d1,
                     kta > 0 ? 100.0 * (ktb - kta) / kta : 0.0);
  if (ma > 0 && mb > 0) {
    nsys_fmt_duration(d2, sizeof d2, (int64_t)mb);
    nsys_strbuf_printf(&t, "; median iteration %s (%+.1f%%)", d2, 100.0 * (mb - ma) / ma);
  }
  nsys_strbuf_puts(&t, ". ");
  const cJSON *top = cJSON_GetArrayItem(rows, 0);
  if (top) {
    nsys_fmt_duration(d1, sizeof d1, (int64_t)fabs(nsys__dn(top, "deltaNs")));
    nsys_strbuf_printf(&t, "Biggest change: %s %s%s (%.0f -> %.0f calls", cJSON_GetStringValue(nsys__dg(top, "name")),
                       nsys__dn(top, "deltaNs") < 0 ? "-" : "+", d1, nsys__dn(top, "baseCount"),
                       nsys__dn(top, "compareCount"));
    const cJSON *ad = nsys__dg(top, "avgDeltaPct");
    if (cJSON_IsNumber(ad))
      nsys_strbuf_printf(&t, ", %+.1f%% per call%s", ad->valuedouble,
                         fabs(ad->valuedouble) < min_delta_pct ? ": the change is in the number of calls" : "");
    nsys_strbuf_puts(&t, "). ");
  }
  nsys_strbuf_printf(&t, "%d kernel names added, %d removed, %d faster, %d slower (>= 5%% change). ", n_add,
                     n_rem, n_fast, n_slow);
  double ia_ = nsys__sum_rows(nsys__dg(oa, "rows"), "idleNs"), ib_ = nsys__sum_rows(nsys__dg(ob, "rows"), "idleNs");
  double ca = nsys__sum_rows(nsys__dg(oa, "rows"), "commOnlyNs"), cb = nsys__sum_rows(nsys__dg(ob, "rows"), "commOnlyNs");
  nsys_fmt_duration(d1, sizeof d1, (int64_t)fabs(ib_ - ia_));
  nsys_fmt_duration(d2, sizeof d2, (int64_t)fabs(cb - ca));
  nsys_strbuf_printf(&t, "GPU idle %s by %s; exposed communication %s by %s.", ib_ <= ia_ ? "fell" : "rose", d1,
                     cb <= ca ? "fell" : "rose", d2);
  cJSON_AddStringToObject(s, "text", t.data);
  nsys_strbuf_free(&t);
  cJSON_Delete(ka);
  cJSON_Delete(kb);
  cJSON_Delete(oa);
  cJSON_Delete(ob);
  cJSON_Delete(ta);
  cJSON_Delete(tb);
  return res;
}
