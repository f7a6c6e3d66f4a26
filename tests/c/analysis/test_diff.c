/* profile/diff's pure parts: the statistics (values worked out by hand),
 * the gate's threshold parser, and nsys_diff_compare_sides on hand-built
 * sides (ranking, comparability, gate). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "common/util.h"
#include "../common/nsys_check.h"

static void test_stats(void) {
  int64_t v[] = {5, 1, 3, 9, 7};
  nsys_diff_stats s = nsys_diff_stats_of(v, 5); /* 1 3 5 7 9: median 5, |d| 0 2 2 4 4 -> MAD 2 */
  CHECK_EQ(s.median, 5);
  CHECK_EQ(s.mad, 2);
  CHECK_EQ(s.min, 1);
  CHECK_EQ(s.max, 9);
  int64_t w[] = {4, 1, 2, 3}; /* 1 2 3 4: median 2 + (3-2)/2 = 2 (floored) */
  CHECK_EQ(nsys_diff_stats_of(w, 4).median, 2);
  /* values near INT64_MAX: the median of an even count does not overflow */
  int64_t big[] = {INT64_MAX - 2, INT64_MAX};
  CHECK_EQ(nsys_diff_stats_of(big, 2).median, INT64_MAX - 1);
  CHECK_EQ(nsys_diff_stats_of(NULL, 0).n, 0);
}

static void test_mann_whitney(void) {
  /* fully separated 5 vs 5: U = 0, mu = 12.5, var = 25*11/12, z = (12.5-0.5)/sqrt(22.9167) = 2.5067, p = 0.01219 */
  int64_t a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
  CHECK_NEAR(nsys_diff_mann_whitney(a, 5, b, 5), 0.012186, 1e-5);
  /* identical samples: every value tied, p = 1 */
  int64_t c[] = {3, 3, 3}, d[] = {3, 3, 3};
  CHECK_NEAR(nsys_diff_mann_whitney(c, 3, d, 3), 1.0, 1e-12);
  CHECK(nsys_diff_mann_whitney(a, 2, b, 5) < 0); /* under 3 on a side: no test */
}

static void test_compare(void) {
  /* base 100 ± small, compare +20%: MAD 1 each, se = 1.2533*1.4826/sqrt(5) = 0.831, noise = max(3*1.175, 1% of 100 = 1) */
  int64_t a[] = {98, 99, 100, 101, 102}, b[] = {118, 119, 120, 121, 122};
  nsys_diff_comp c = nsys_diff_compare(a, 5, b, 5, 0);
  CHECK_EQ(c.delta, 20);
  CHECK_EQ(c.noise, 4); /* ceil(3 * sqrt(2) * 0.8310) = ceil(3.526) */
  CHECK(c.verdict == NSYS_DV_SLOWER);
  CHECK(c.has_p && c.p_value < 0.02);
  /* the same shift inside the noise: no change */
  int64_t e[] = {80, 100, 120, 90, 110}, f[] = {83, 103, 123, 93, 113};
  CHECK(nsys_diff_compare(e, 5, f, 5, 0).verdict == NSYS_DV_NO_CHANGE);
  /* constant values: the 1% floor keeps a 0.5% change from being a verdict */
  int64_t g[] = {1000, 1000, 1000}, h[] = {1005, 1005, 1005};
  CHECK(nsys_diff_compare(g, 3, h, 3, 0).verdict == NSYS_DV_NO_CHANGE);
  /* two iterations a side: 5% floor, no test */
  int64_t i2[] = {1000, 1000}, j2[] = {1040, 1040}, k2[] = {1000, 1000}, l2[] = {1060, 1060};
  nsys_diff_comp x = nsys_diff_compare(i2, 2, j2, 2, 0);
  CHECK(x.verdict == NSYS_DV_NO_CHANGE && !x.has_p);
  CHECK(nsys_diff_compare(k2, 2, l2, 2, 0).verdict == NSYS_DV_SLOWER);
  /* the absolute floor */
  int64_t m[] = {0, 0, 0}, n[] = {50, 50, 50};
  CHECK(nsys_diff_compare(m, 3, n, 3, 100).verdict == NSYS_DV_NO_CHANGE);
  CHECK(nsys_diff_compare(m, 3, n, 3, 10).verdict == NSYS_DV_SLOWER);
  CHECK(nsys_diff_compare(m, 0, n, 3, 10).verdict == NSYS_DV_UNKNOWN);
}

static void test_gate_parse(void) {
  nsys_diff_thresholds t;
  char err[256];
  nsys_diff_thresholds_init(&t);
  CHECK(nsys_diff_threshold_parse(&t, "step=5%", err, sizeof err));
  CHECK(t.set[NSYS_DC_STEP] && t.pct[NSYS_DC_STEP] == 5);
  CHECK(nsys_diff_threshold_parse(&t, "kernel:gemm=2.5", err, sizeof err));
  CHECK(t.n_fam == 1 && !strcmp(t.fam[0].family, "gemm") && t.fam[0].pct == 2.5);
  CHECK(nsys_diff_threshold_parse(&t, "kernel:gemm=3", err, sizeof err) && t.n_fam == 1 && t.fam[0].pct == 3);
  static const char *const bad[] = {"step", "=5", "step=", "step=-1", "step=0", "step=abc", "step=5%%",
                                    "steps=5", "kernel:=5", "step=nan", "step=inf", "step=1e7"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(bad); i++) CHECK_MSG(!nsys_diff_threshold_parse(&t, bad[i], err, sizeof err), "%s", bad[i]);
  const char cfg[] = "# CI gate\n[gate]\nstep = 5%\n  compute=3 # comment\n\nkernel:nccl = 10%\r\n";
  CHECK(nsys_diff_gate_config_parse(&t, cfg, strlen(cfg), err, sizeof err));
  CHECK(t.pct[NSYS_DC_COMPUTE] == 3 && t.n_fam == 2);
  const char bad1[] = "step = 5%\nthis is not a threshold\n";
  CHECK(!nsys_diff_gate_config_parse(&t, bad1, strlen(bad1), err, sizeof err) && strstr(err, "line 2"));
  const char bad2[] = "step = 5\0x\n";
  CHECK(!nsys_diff_gate_config_parse(&t, bad2, sizeof bad2 - 1, err, sizeof err));
  const char bad3[] = "idle = lots\n";
  CHECK(!nsys_diff_gate_config_parse(&t, bad3, strlen(bad3), err, sizeof err) && strstr(err, "line 1"));
  nsys_diff_thresholds_free(&t);
}

/* A side with n iterations of `step` ns (+ i*jitter) and kernels k0 (ns per iteration each). */
static void side(nsys_diff_side *s, int n, int64_t step, int64_t jitter, const char *const *names, const int64_t *ns,
                 int nk, int gpus) {
  memset(s, 0, sizeof *s);
  s->method = "nvtx";
  s->device = 0;
  s->gpu_count = gpus;
  s->gpu_model = nsys_xstrdup("H100");
  s->iters = nsys_xcalloc((size_t)n, sizeof *s->iters);
  s->n_iters = s->steady = (uint32_t)n;
  for (int i = 0; i < n; i++) {
    s->iters[i].start = 1000000 + (int64_t)i * 2 * step;
    s->iters[i].end = s->iters[i].start + step + (i % 3) * jitter;
    s->iters[i].v[NSYS_DC_STEP] = s->iters[i].end - s->iters[i].start;
    s->iters[i].kernels = 10;
  }
  s->steady_win = (nsys_diff_win){true, s->iters[0].start, s->iters[n - 1].end};
  s->agg[NSYS_DK_KERNEL] = nsys_xcalloc((size_t)nk, sizeof(nsys_diff_agg));
  s->n_agg[NSYS_DK_KERNEL] = (uint32_t)nk;
  for (int k = 0; k < nk; k++) {
    nsys_diff_agg *g = &s->agg[NSYS_DK_KERNEL][k];
    g->key = nsys_xstrdup(names[k]);
    g->ns = ns[k] * n;
    g->count = n;
    g->device = -1;
    g->ev = (nsys_diff_win){true, s->iters[0].start, s->iters[0].start + ns[k]};
  }
}

static void test_compare_sides(void) {
  static const char *const names[] = {"a_gemm", "b_elt", "c_new"};
  int64_t na[] = {5000000, 100000}, nb[] = {6000000, 100000, 400000};
  nsys_diff_side a, b;
  side(&a, 10, 10000000, 10000, names, na, 2, 2);
  side(&b, 10, 11000000, 10000, names, nb, 3, 2);
  nsys_diff_thresholds th;
  nsys_diff_thresholds_init(&th);
  char err[64];
  CHECK(nsys_diff_threshold_parse(&th, "step=5", err, sizeof err));
  nsys_diff d;
  nsys_diff_compare_sides(&d, &a, &b, &th);
  CHECK(d.comparable);
  CHECK(d.comps[NSYS_DC_STEP].verdict == NSYS_DV_SLOWER);
  CHECK_EQ(d.comps[NSYS_DC_STEP].delta, 1000000);
  CHECK_STR(d.overall, "slower");
  /* ranked: a_gemm +1 ms, then c_new added 0.4 ms, b_elt unchanged last */
  CHECK(d.n_deltas == 3);
  CHECK_STR(d.deltas[0].key, "a_gemm");
  CHECK(d.deltas[0].change == NSYS_DCH_SLOWER && d.deltas[0].delta == 1000000);
  CHECK_STR(d.deltas[1].key, "c_new");
  CHECK(d.deltas[1].change == NSYS_DCH_ADDED && d.deltas[1].base_ns == 0 && !d.deltas[1].ev_base.set);
  CHECK(d.deltas[2].change == NSYS_DCH_NO_CHANGE);
  CHECK(d.has_gate && !strcmp(d.gate.status, "regression") && d.gate.n_fails == 1);
  CHECK_STR(d.gate.fails[0].target, "step");
  /* share of kernel time in names present in both: (5.1 + 6.1) / (5.1 + 6.5) */
  CHECK_NEAR(d.kernel_overlap, 11.2 / 11.6, 1e-9);
  nsys_diff_free(&d);
  /* different GPU counts: incomparable, and the gate says so */
  side(&a, 10, 10000000, 10000, names, na, 2, 2);
  side(&b, 10, 10000000, 10000, names, na, 2, 4);
  nsys_diff_compare_sides(&d, &a, &b, &th);
  CHECK(!d.comparable);
  CHECK_STR(d.overall, "incomparable");
  CHECK_STR(d.gate.status, "incomparable");
  nsys_diff_free(&d);
  /* the same run twice: no change, the gate passes */
  side(&a, 10, 10000000, 10000, names, na, 2, 2);
  side(&b, 10, 10000000, 10000, names, na, 2, 2);
  nsys_diff_compare_sides(&d, &a, &b, &th);
  CHECK_STR(d.overall, "no_change");
  CHECK_STR(d.gate.status, "pass");
  nsys_diff_free(&d);
  nsys_diff_thresholds_free(&th);
}

int main(void) {
  test_stats();
  test_mann_whitney();
  test_compare();
  test_gate_parse();
  test_compare_sides();
  return nsys_check_done("diff");
}
