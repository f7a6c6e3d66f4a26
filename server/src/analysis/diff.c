/* profile/diff: comparability, component verdicts, ranked deltas and the
 * gate, from two sides (diff_side.c). Definitions: docs/analyses.md#diff. */
#include "analysis/diff.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/amemo.h"
#include "analysis/analysis.h"
#include "common/util.h"

const char *const nsys_diff_change_names[] = {"added", "removed", "slower", "faster", "no_change", "changed"};

static int64_t nsys__per_iter(int64_t ns, uint32_t steady) {
  uint32_t n = steady ? steady : 1;
  return (int64_t)llround((double)ns / n);
}

static void nsys__reason(nsys_diff *d, const char *code, const char *sev, char *msg) {
  d->reasons = nsys_xrealloc(d->reasons, (d->n_reasons + 1) * sizeof *d->reasons);
  d->reasons[d->n_reasons++] = (nsys_diff_reason){code, sev, msg};
}

static int64_t nsys__median_kernels(const nsys_diff_side *s) {
  if (!s->steady) return 0;
  int64_t *v = nsys_xmalloc((size_t)s->steady * sizeof *v);
  for (uint32_t i = 0; i < s->steady; i++) v[i] = s->iters[s->warmup + i].kernels;
  int64_t m = nsys_diff_stats_of(v, s->steady).median;
  free(v);
  return m;
}

static double nsys__kernel_overlap(const nsys_diff *d) {
  const nsys_diff_side *a = &d->base, *b = &d->cmp;
  double shared = 0, all = 0;
  uint32_t i = 0, j = 0, na = a->n_agg[NSYS_DK_KERNEL], nb = b->n_agg[NSYS_DK_KERNEL];
  const nsys_diff_agg *ga = a->agg[NSYS_DK_KERNEL], *gb = b->agg[NSYS_DK_KERNEL];
  while (i < na || j < nb) {
    int c = i >= na ? 1 : j >= nb ? -1 : strcmp(ga[i].key, gb[j].key);
    double ta = c <= 0 ? (double)nsys__per_iter(ga[i].ns, a->steady) : 0;
    double tb = c >= 0 ? (double)nsys__per_iter(gb[j].ns, b->steady) : 0;
    all += ta + tb;
    if (!c) shared += ta + tb;
    if (c <= 0) i++;
    if (c >= 0) j++;
  }
  return all > 0 ? shared / all : 1;
}

static void nsys__comparability(nsys_diff *d) {
  const nsys_diff_side *a = &d->base, *b = &d->cmp;
  double score = 1;
  if (a->profile_id && b->profile_id && !strcmp(a->profile_id, b->profile_id))
    nsys__reason(d, "same_profile", "info", nsys_xstrdup("both sides are the same profile"));
  if (a->gpu_model && b->gpu_model && strcmp(a->gpu_model, b->gpu_model)) {
    score *= 0.5;
    nsys__reason(d, "gpu_model", "error", nsys_xasprintf("different GPUs: %s vs %s", a->gpu_model, b->gpu_model));
  }
  if (a->gpu_count != b->gpu_count) {
    score *= 0.5;
    nsys__reason(d, "gpu_count", "error",
                 nsys_xasprintf("%d GPU(s) active vs %d", (int)a->gpu_count, (int)b->gpu_count));
  }
  d->kernel_overlap = nsys__kernel_overlap(d);
  score *= d->kernel_overlap;
  if (d->kernel_overlap < 0.9)
    nsys__reason(d, "kernel_set", d->kernel_overlap < 0.5 ? "error" : "warning",
                 nsys_xasprintf("only %.0f%% of kernel time is in kernels present in both runs",
                                100 * d->kernel_overlap));
  if (!a->steady || !b->steady) {
    score *= 0.5;
    nsys__reason(d, "no_iterations", "warning",
                 nsys_xasprintf("no iterations in %s%s: no step verdict; the deltas compare whole profiles",
                                !a->steady && !b->steady ? "either run" : !a->steady ? "the base" : "the compare run",
                                a->irregular || b->irregular ? " (the GPU gaps do not repeat like steps)" : ""));
  } else {
    if (strcmp(a->method, b->method)) {
      score *= 0.8;
      nsys__reason(d, "iteration_method", "warning",
                   nsys_xasprintf("iterations found by %s in the base, by %s in the compare run", a->method, b->method));
    }
    int64_t ka = nsys__median_kernels(a), kb = nsys__median_kernels(b);
    int64_t lo = ka < kb ? ka : kb, hi = ka < kb ? kb : ka;
    if (hi > 0 && (double)lo < 0.9 * (double)hi) {
      score *= (double)lo / (double)hi;
      nsys__reason(d, "iteration_structure", (double)lo < 0.5 * (double)hi ? "error" : "warning",
                   nsys_xasprintf("a median iteration runs %lld GPU ops in the base, %lld in the compare run",
                                  (long long)ka, (long long)kb));
    }
    if (a->steady < 3 || b->steady < 3) {
      score *= 0.9;
      nsys__reason(d, "few_iterations", "info",
                   nsys_xasprintf("%u and %u steady iterations: under 3 on a side, the noise floor is 5%% and no "
                                  "test is run",
                                  a->steady, b->steady));
    }
  }
  d->score = score < 0 ? 0 : score > 1 ? 1 : score;
  d->comparable = d->score >= 0.5;
  for (uint32_t i = 0; i < d->n_reasons; i++)
    if (!strcmp(d->reasons[i].severity, "error")) d->comparable = false;
}

static void nsys__components(nsys_diff *d) {
  const nsys_diff_side *a = &d->base, *b = &d->cmp;
  int64_t *va = nsys_xmalloc(((size_t)a->steady + 1) * sizeof *va);
  int64_t *vb = nsys_xmalloc(((size_t)b->steady + 1) * sizeof *vb);
  int64_t floor = 0;
  for (int c = 0; c < NSYS_DC__COUNT; c++) {
    for (uint32_t i = 0; i < a->steady; i++) va[i] = a->iters[a->warmup + i].v[c];
    for (uint32_t i = 0; i < b->steady; i++) vb[i] = b->iters[b->warmup + i].v[c];
    d->comps[c] = nsys_diff_compare(va, a->steady, vb, b->steady, floor);
    if (c == NSYS_DC_STEP) floor = d->comps[c].base.median / 200; /* components: 0.5% of the step */
  }
  free(va);
  free(vb);
}

/* ---- deltas -------------------------------------------------------------- */

static bool nsys__launch_same(const nsys_diff_launch *x, const nsys_diff_launch *y) {
  for (int k = 0; k < 3; k++)
    if (x->grid[k] != y->grid[k] || x->block[k] != y->block[k]) return false;
  return x->regs == y->regs && x->smem == y->smem;
}

static void nsys__add_delta(nsys_diff *d, uint32_t *cap, nsys_diff_kind k, const nsys_diff_agg *ga,
                            const nsys_diff_agg *gb, int64_t sig_floor) {
  const nsys_diff_agg *g = ga ? ga : gb;
  /* a configuration is a delta when it changed (a new or vanished kernel is one already) */
  if (k == NSYS_DK_LAUNCH && (!ga || !gb || nsys__launch_same(&ga->launch, &gb->launch))) return;
  if (d->n_deltas == *cap) {
    *cap = *cap ? *cap * 2 : 64;
    d->deltas = nsys_xrealloc(d->deltas, (size_t)*cap * sizeof *d->deltas);
  }
  nsys_diff_delta *x = &d->deltas[d->n_deltas++];
  memset(x, 0, sizeof *x);
  x->kind = k;
  x->key = g->key;
  x->base_ns = ga ? nsys__per_iter(ga->ns, d->base.steady) : 0;
  x->cmp_ns = gb ? nsys__per_iter(gb->ns, d->cmp.steady) : 0;
  x->delta = x->cmp_ns - x->base_ns;
  x->impact = x->delta < 0 ? -x->delta : x->delta;
  x->base_count = ga ? ga->count : 0;
  x->cmp_count = gb ? gb->count : 0;
  if (x->base_ns) {
    x->has_pct = true;
    x->pct = 100.0 * (double)x->delta / (double)x->base_ns;
  }
  if (ga) x->ev_base = ga->ev;
  if (gb) x->ev_cmp = gb->ev;
  x->device = g->device;
  x->has_stream = k == NSYS_DK_STREAM;
  x->stream = g->stream;
  x->family = g->family;
  if (k == NSYS_DK_LAUNCH) {
    x->lb = ga ? &ga->launch : NULL;
    x->lc = gb ? &gb->launch : NULL;
  }
  if (!ga) x->change = NSYS_DCH_ADDED;
  else if (!gb) x->change = NSYS_DCH_REMOVED;
  else if (k == NSYS_DK_LAUNCH) x->change = NSYS_DCH_CHANGED;
  else if (x->impact >= sig_floor && x->has_pct && fabs(x->pct) >= 5.0)
    x->change = x->delta > 0 ? NSYS_DCH_SLOWER : NSYS_DCH_FASTER;
  else x->change = NSYS_DCH_NO_CHANGE;
  if (k == NSYS_DK_STREAM) x->label = nsys_xasprintf("GPU %d stream %lld", (int)g->device, (long long)g->stream);
  else if (k == NSYS_DK_DEVICE) x->label = nsys_xasprintf("GPU %d", (int)g->device);
  else x->label = nsys_xstrdup(g->key);
}

static bool nsys__is_where(nsys_diff_kind k) { return k == NSYS_DK_NVTX || k == NSYS_DK_STREAM || k == NSYS_DK_DEVICE; }

/* The ranking of docs/analyses.md#diff. */
static int nsys__cmp_delta(const void *p, const void *q) {
  const nsys_diff_delta *x = p, *y = q;
  int sx = x->change != NSYS_DCH_NO_CHANGE, sy = y->change != NSYS_DCH_NO_CHANGE;
  if (sx != sy) return sy - sx;
  int wx = nsys__is_where(x->kind), wy = nsys__is_where(y->kind);
  if (wx != wy) return wx - wy;
  if (x->impact != y->impact) return x->impact > y->impact ? -1 : 1;
  if (x->kind != y->kind) return (int)x->kind - (int)y->kind;
  return strcmp(x->key, y->key);
}

static void nsys__deltas(nsys_diff *d) {
  int64_t sig_floor = d->comps[NSYS_DC_STEP].base.median / 200; /* 0.5% of the step */
  if (sig_floor < 1000) sig_floor = 1000;
  uint32_t cap = 0;
  for (int k = 0; k < NSYS_DK__COUNT; k++) {
    const nsys_diff_agg *ga = d->base.agg[k], *gb = d->cmp.agg[k];
    uint32_t i = 0, j = 0, na = d->base.n_agg[k], nb = d->cmp.n_agg[k];
    while (i < na || j < nb) {
      int c = i >= na ? 1 : j >= nb ? -1 : strcmp(ga[i].key, gb[j].key);
      nsys__add_delta(d, &cap, (nsys_diff_kind)k, c <= 0 ? &ga[i] : NULL, c >= 0 ? &gb[j] : NULL, sig_floor);
      if (c <= 0) i++;
      if (c >= 0) j++;
    }
  }
  if (d->n_deltas > 1) qsort(d->deltas, d->n_deltas, sizeof *d->deltas, nsys__cmp_delta);
}

/* ---- gate and text -------------------------------------------------------- */

static void nsys__fail(nsys_diff_gate_result *g, char *target, double th, bool has_pct, double pct,
                       const char *verdict, char *msg) {
  g->fails = nsys_xrealloc(g->fails, (g->n_fails + 1) * sizeof *g->fails);
  g->fails[g->n_fails++] = (nsys_diff_failure){target, th, has_pct, pct, verdict, msg};
}

static void nsys__gate(nsys_diff *d, const nsys_diff_thresholds *th) {
  d->has_gate = true;
  nsys_diff_gate_result *g = &d->gate;
  if (!d->comparable) {
    g->status = "incomparable";
    return;
  }
  for (int c = 0; c < NSYS_DC__COUNT; c++) {
    const nsys_diff_comp *x = &d->comps[c];
    if (!th->set[c] || x->verdict != NSYS_DV_SLOWER || !x->has_pct || x->pct <= th->pct[c]) continue;
    nsys__fail(g, nsys_xstrdup(nsys_diff_comp_names[c]), th->pct[c], true, x->pct, "slower",
               nsys_xasprintf("%s: median %+.2f%% per iteration, beyond the noise floor and above the %g%% threshold",
                              nsys_diff_comp_names[c], x->pct, th->pct[c]));
  }
  for (uint32_t f = 0; f < th->n_fam; f++)
    for (uint32_t i = 0; i < d->n_deltas; i++) {
      const nsys_diff_delta *x = &d->deltas[i];
      if (x->kind != NSYS_DK_FAMILY || strcmp(x->key, th->fam[f].family)) continue;
      bool added = x->change == NSYS_DCH_ADDED;
      if (!added && !(x->change == NSYS_DCH_SLOWER && x->pct > th->fam[f].pct)) continue;
      nsys__fail(g, nsys_xasprintf("kernel:%s", x->key), th->fam[f].pct, x->has_pct, x->pct,
                 nsys_diff_change_names[x->change],
                 added ? nsys_xasprintf("kernel family %s is new in the compare run", x->key)
                       : nsys_xasprintf("kernel family %s: %+.2f%% per iteration, above the %g%% threshold", x->key,
                                        x->pct, th->fam[f].pct));
    }
  g->status = g->n_fails ? "regression" : "pass";
}

static void nsys__texts(nsys_diff *d) {
  nsys_strbuf t;
  nsys_strbuf_init(&t);
  const nsys_diff_comp *st = &d->comps[NSYS_DC_STEP];
  char a[32], b[32], n[32];
  if (!d->comparable) {
    nsys_strbuf_puts(&t, "INCOMPARABLE runs:");
    for (uint32_t i = 0; i < d->n_reasons; i++)
      if (strcmp(d->reasons[i].severity, "info")) nsys_strbuf_printf(&t, " %s;", d->reasons[i].message);
    nsys_strbuf_printf(&t, " comparability %.2f. The deltas below are listed for inspection only.", d->score);
  } else if (st->verdict == NSYS_DV_UNKNOWN) {
    nsys_strbuf_puts(&t, "No verdict: no steady-state iterations to compare.");
  } else {
    nsys_fmt_duration(a, sizeof a, st->base.median);
    nsys_fmt_duration(b, sizeof b, st->cmp.median);
    nsys_fmt_duration(n, sizeof n, st->noise);
    nsys_strbuf_printf(&t, "%s: median step %s -> %s (%+.1f%%, noise floor %s)",
                       st->verdict == NSYS_DV_SLOWER   ? "SLOWER"
                       : st->verdict == NSYS_DV_FASTER ? "FASTER"
                                                       : "NO CHANGE beyond noise",
                       a, b, st->has_pct ? st->pct : 0.0, n);
    if (st->has_p && st->verdict != NSYS_DV_NO_CHANGE)
      nsys_strbuf_printf(&t, ", confidence %.1f%%", 100 * (1 - st->p_value));
    nsys_strbuf_printf(&t, "; %u vs %u steady iterations.", d->base.steady, d->cmp.steady);
  }
  d->verdict_text = nsys_xstrdup(t.data ? t.data : "");
  int shown = 0;
  for (uint32_t i = 0; i < d->n_deltas && shown < 3; i++) {
    const nsys_diff_delta *x = &d->deltas[i];
    if (x->change == NSYS_DCH_NO_CHANGE) break;
    nsys_fmt_duration(a, sizeof a, x->impact);
    nsys_strbuf_printf(&t, "%s %s %s %s (%s%s per iteration)", shown ? ";" : " Top changes:",
                       nsys_diff_kind_names[x->kind], x->label, nsys_diff_change_names[x->change],
                       x->delta < 0 ? "-" : "+", a);
    shown++;
  }
  if (shown) nsys_strbuf_puts(&t, ".");
  d->text = nsys_xstrdup(t.data ? t.data : "");
  nsys_strbuf_free(&t);
}

void nsys_diff_compare_sides(nsys_diff *d, nsys_diff_side *base, nsys_diff_side *cmp, const nsys_diff_thresholds *th) {
  memset(d, 0, sizeof *d);
  d->base = *base;
  d->cmp = *cmp;
  memset(base, 0, sizeof *base);
  memset(cmp, 0, sizeof *cmp);
  nsys__components(d);
  nsys__comparability(d);
  nsys__deltas(d);
  const nsys_diff_comp *st = &d->comps[NSYS_DC_STEP];
  d->overall = !d->comparable ? "incomparable" : nsys_diff_verdict_name(st->verdict);
  if (st->has_p) {
    d->has_conf = true;
    d->conf = 1 - st->p_value;
  }
  if (th && nsys_diff_thresholds_any(th)) nsys__gate(d, th);
  nsys__texts(d);
}

/* The compare side, built on a thread of its own beside the base side. */
typedef struct {
  nsys_diff_side side;
  nsys_task task; /* a child of the request's: its own error, the request's cancellation */
  struct nsys_profile *p;
  const nsys_index *ix;
  bool ok;
} nsys__side_job;

static void *nsys__side_thread(void *arg) {
  nsys__side_job *j = arg;
  const nsys_task *prev = nsys_task_enter(&j->task); /* its SQL stops when the request is cancelled */
  j->ok = nsys_amemo_diff_side(&j->task, j->p, j->ix, &j->side);
  nsys_task_leave(prev);
  return NULL;
}

bool nsys_diff_run(nsys_diff *d, nsys_task *task, struct nsys_profile *a, const nsys_index *ia,
                   struct nsys_profile *b, const nsys_index *ib, const nsys_diff_thresholds *th) {
  memset(d, 0, sizeof *d);
  nsys_diff_side sa;
  nsys__side_job jb = {.p = b, .ix = ib};
  nsys_task_init_child(&jb.task, task);
  nsys_task_progress_begin(task, "profile/diff");
  /* the two sides are independent (each reads its own index and memo, or
   * both the same one, read-only): the compare side on a second thread */
  pthread_t th_b;
  bool threaded = nsys_analysis_threads(2) > 1 && pthread_create(&th_b, NULL, nsys__side_thread, &jb) == 0;
  bool ok = nsys_amemo_diff_side(task, a, ia, &sa);
  nsys_task_progress(task, 50, "base analysed");
  if (threaded) pthread_join(th_b, NULL);
  else if (ok) nsys__side_thread(&jb);
  nsys_diff_side sb = jb.side;
  if (ok && !jb.ok) ok = nsys_task_fail_from(task, &jb.task);
  if (ok && nsys_task_cancelled(task)) ok = nsys_task_fail_cancelled(task); /* a side's SQL cut short */
  if (ok) nsys_diff_compare_sides(d, &sa, &sb, th);
  else {
    nsys_diff_side_free(&sa);
    nsys_diff_side_free(&sb);
  }
  nsys_task_progress_end(task, ok ? "done" : "stopped");
  return ok;
}

void nsys_diff_free(nsys_diff *d) {
  for (uint32_t i = 0; i < d->n_deltas; i++) free(d->deltas[i].label);
  free(d->deltas);
  for (uint32_t i = 0; i < d->n_reasons; i++) free(d->reasons[i].message);
  free(d->reasons);
  nsys_diff_gate_result_free(&d->gate);
  free(d->verdict_text);
  free(d->text);
  nsys_diff_side_free(&d->base);
  nsys_diff_side_free(&d->cmp);
  memset(d, 0, sizeof *d);
}
