/* The statistics of profile/diff (docs/analyses.md#diff): median and MAD of
 * per-iteration values, the noise floor, a Mann-Whitney U test and the
 * verdict. Plain arrays only. */
#include <math.h>
#include <stdlib.h>

#include "analysis/diff.h"
#include "common/util.h"

static int64_t nsys__median_sorted(const int64_t *v, uint32_t n) {
  if (!n) return 0;
  if (n % 2) return v[n / 2];
  int64_t lo = v[n / 2 - 1], hi = v[n / 2];
  /* lo <= hi; (hi - lo) may exceed INT64_MAX only for values no clock gives */
  return lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
}

nsys_diff_stats nsys_diff_stats_of(int64_t *v, uint32_t n) {
  nsys_diff_stats s = {0};
  s.n = n;
  if (!n) return s;
  nsys_sort_i64(v, n);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = nsys__median_sorted(v, n);
  int64_t *d = nsys_xmalloc((size_t)n * sizeof *d);
  for (uint32_t i = 0; i < n; i++) d[i] = v[i] >= s.median ? v[i] - s.median : s.median - v[i];
  nsys_sort_i64(d, n);
  s.mad = nsys__median_sorted(d, n);
  free(d);
  return s;
}

double nsys_diff_mann_whitney(const int64_t *a, uint32_t na, const int64_t *b, uint32_t nb) {
  if (na < 3 || nb < 3) return -1;
  /* merge; each tie group of t values shares the mid-rank; R_a is the sum of a's ranks */
  double ra = 0, ties = 0;
  uint32_t i = 0, j = 0, rank = 0; /* ranks used so far */
  while (i < na || j < nb) {
    int64_t x = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
    uint32_t ca = 0, cb = 0;
    while (i < na && a[i] == x) i++, ca++;
    while (j < nb && b[j] == x) j++, cb++;
    double t = (double)(ca + cb);
    double mid = rank + (t + 1) / 2;
    ra += ca * mid;
    ties += t * t * t - t;
    rank += ca + cb;
  }
  double n1 = na, n2 = nb, n = n1 + n2;
  double u = ra - n1 * (n1 + 1) / 2, mu = n1 * n2 / 2;
  double var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (var <= 0) return 1;
  double z = (fabs(u - mu) - 0.5) / sqrt(var);
  if (z <= 0) return 1;
  double p = erfc(z / sqrt(2.0));
  return p > 1 ? 1 : p;
}

/* A standard error of the median from the MAD: 1.4826·MAD estimates σ for
 * normal data, and the median's standard error is sqrt(π/2)·σ/√n. */
static double nsys__se_median(const nsys_diff_stats *s) {
  return s->n ? 1.2533 * 1.4826 * (double)s->mad / sqrt((double)s->n) : 0;
}

nsys_diff_comp nsys_diff_compare(int64_t *a, uint32_t na, int64_t *b, uint32_t nb, int64_t abs_floor) {
  nsys_diff_comp c = {0};
  c.base = nsys_diff_stats_of(a, na);
  c.cmp = nsys_diff_stats_of(b, nb);
  if (!na || !nb) {
    c.verdict = NSYS_DV_UNKNOWN;
    return c;
  }
  c.delta = c.cmp.median - c.base.median;
  double ma = fabs((double)c.base.median);
  if (c.base.median != 0) {
    c.has_pct = true;
    c.pct = 100.0 * (double)c.delta / ma;
  }
  bool enough = na >= 3 && nb >= 3;
  double sa = nsys__se_median(&c.base), sb = nsys__se_median(&c.cmp);
  double noise = 3 * sqrt(sa * sa + sb * sb);
  double rel = (enough ? 0.01 : 0.05) * ma; /* runs never repeat closer than 1% (5% without a spread) */
  if (noise < rel) noise = rel;
  if (noise < (double)abs_floor) noise = (double)abs_floor;
  c.noise = noise >= 9.2e18 ? INT64_MAX : (int64_t)ceil(noise);
  if (enough) {
    c.has_p = true;
    c.p_value = nsys_diff_mann_whitney(a, na, b, nb);
  }
  int64_t ad = c.delta < 0 ? -c.delta : c.delta;
  if (ad <= c.noise) c.verdict = NSYS_DV_NO_CHANGE;
  else c.verdict = c.delta > 0 ? NSYS_DV_SLOWER : NSYS_DV_FASTER;
  return c;
}

const char *nsys_diff_verdict_name(nsys_diff_verdict v) {
  static const char *const names[] = {"no_change", "faster", "slower", "unknown"};
  return names[v];
}
