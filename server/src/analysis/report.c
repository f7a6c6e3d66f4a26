/* The root-cause report: runs the core analyses with their defaults, applies
 * rules to their results and emits findings {id, severity, title, evidence,
 * recommendation}, sorted by severity then by the time at stake. Thresholds
 * are documented in docs/analyses.md ("report"). */
#include "analysis/report_result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/result_defs.h"
#include "analysis/amemo.h"
#include "explain/hotspot.h"
#include "profile/profile.h"

static const char *nsys__dur(char *buf, size_t cap, double ns) {
  nsys_fmt_duration(buf, cap, (int64_t)ns);
  return buf;
}

static const char *nsys__bytes(char *buf, size_t cap, double b) {
  if (b >= 1024.0 * 1048576) snprintf(buf, cap, "%.1f GiB", b / (1024.0 * 1048576));
  else if (b >= 1048576) snprintf(buf, cap, "%.1f MiB", b / 1048576);
  else if (b >= 1024) snprintf(buf, cap, "%.1f KiB", b / 1024);
  else snprintf(buf, cap, "%.0f B", b);
  return buf;
}

/* A finding while the rules run; written into the report's findings table
 * once merged and sorted. */
typedef struct {
  const char *id;
  const char *severity; /* critical, warning or info */
  char *title;
  nsys_rec ev; /* its own table of one row: one of the nsys_rd_ev_* types */
  char *recommendation;
  double impact_ns; /* rounded */
} nsys__fnd;

typedef struct {
  nsys__fnd *v;
  uint32_t n, cap;
  int64_t t0, t1;
} nsys__findings;

static void nsys__set_window(nsys_rec o, nsys_c_obj c, int64_t s, int64_t e) {
  nsys_rec w = nsys_rset_obj(o, c);
  nsys_rset_i64(w, WIN_START, s);
  nsys_rset_i64(w, WIN_END, e);
}

/* Adds a finding; `ev` is consumed; its `window` (column win) defaults to the profile's. */
static void nsys__finding(nsys__findings *f, const char *id, const char *severity, double impact_ns, nsys_rec ev,
                          nsys_c_obj win, const char *recommendation, const char *title_fmt, ...)
    __attribute__((format(printf, 8, 9)));

static void nsys__finding(nsys__findings *f, const char *id, const char *severity, double impact_ns, nsys_rec ev,
                          nsys_c_obj win, const char *recommendation, const char *title_fmt, ...) {
  char title[512];
  va_list ap;
  va_start(ap, title_fmt);
  vsnprintf(title, sizeof title, title_fmt, ap);
  va_end(ap);
  if (!nsys_rhas(ev, win)) nsys__set_window(ev, win, f->t0, f->t1);
  if (f->n == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 16;
    f->v = nsys_xrealloc(f->v, f->cap * sizeof *f->v);
  }
  f->v[f->n++] = (nsys__fnd){id, severity, nsys_xstrdup(title), ev, nsys_xstrdup(recommendation), round(impact_ns)};
}

static void nsys__fnd_free(nsys__fnd *x) {
  free(x->title);
  free(x->recommendation);
  nsys_rtab_free(x->ev.t);
}

static int nsys__sev_rank(const char *s) {
  return !strcmp(s, "critical") ? 0 : !strcmp(s, "warning") ? 1 : 2;
}

static int nsys__cmp_finding(const void *a, const void *b) {
  const nsys__fnd *x = a, *y = b;
  int rx = nsys__sev_rank(x->severity), ry = nsys__sev_rank(y->severity);
  if (rx != ry) return rx - ry;
  if (x->impact_ns != y->impact_ns) return x->impact_ns > y->impact_ns ? -1 : 1;
  return strcmp(x->id, y->id);
}

/* ------------------------------------------------------------------ rules */

static void nsys__rule_short(nsys__findings *f, const nsys_aresult *top, const nsys_aresult *iters, int64_t span) {
  double kernels = (double)nsys_rget_i64(top->summary, TKS_KERNEL_COUNT);
  double n_it = (double)nsys_rget_i64(iters->summary, ITS_COUNT);
  char b1[32];
  if (kernels == 0) {
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_short0);
    nsys_rset_i64(ev, EVS0_KERNELS, 0);
    nsys_rset_i64(ev, EVS0_SPAN_NS, span);
    nsys__finding(f, "profile_too_short", "warning", 0, ev, EVS0_WINDOW,
                  "Capture with CUDA tracing on (nsys profile -t cuda,nvtx) and let the workload reach "
                  "its steady state (e.g. --delay past warm-up, --duration covering several iterations).",
                  "No GPU kernels in the profile: nothing to judge on the GPU side");
    return;
  }
  if (span < 50000000 || kernels < 100 || n_it < 3) {
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_short);
    nsys_rset_i64(ev, EVSH_SPAN_NS, span);
    nsys_rset_i64(ev, EVSH_KERNELS, (int64_t)kernels);
    nsys_rset_i64(ev, EVSH_ITERATIONS, (int64_t)n_it);
    nsys__finding(f, "profile_too_short", "info", 0, ev, EVSH_WINDOW,
                  "Profile at least 3-5 steady-state iterations (nsys profile --capture-range=cudaProfilerApi "
                  "or --delay/--duration) so per-iteration findings are representative.",
                  "Short capture (%s, %.0f kernels, %.0f iteration%s): conclusions are tentative",
                  nsys__dur(b1, sizeof b1, (double)span), kernels, n_it, n_it == 1 ? "" : "s");
  }
}

static const char *nsys__bubble_fix(const char *cause) {
  if (!cause) return "";
  if (!strcmp(cause, "sync"))
    return "The CPU is blocked in synchronisation calls while the GPU waits: remove per-step "
           "cudaDeviceSynchronize/cudaStreamSynchronize and .item()/.cpu() calls from the hot loop, "
           "or replace them with events (torch.cuda.set_sync_debug_mode can find them).";
  if (!strcmp(cause, "memcpy"))
    return "Blocking copies keep the GPU idle: use pinned host memory and cudaMemcpyAsync on a side "
           "stream, and prefetch the next batch while the current one computes.";
  if (!strcmp(cause, "launch"))
    return "The GPU starves while the CPU is still launching: capture the step in a CUDA graph "
           "(torch.cuda.graphs / torch.compile mode=reduce-overhead) or fuse small kernels.";
  if (!strcmp(cause, "module_load"))
    return "The host was loading CUDA modules (cuModuleLoadDataEx, cuLibraryLoadData): JIT compilation "
           "of PTX or lazy loading. Build for this GPU's architecture (cubin, no PTX JIT), keep the JIT "
           "cache (CUDA_CACHE_PATH), warm up before the measured steps, or set CUDA_MODULE_LOADING=EAGER.";
  if (!strcmp(cause, "alloc"))
    return "The host was allocating or freeing memory (cudaMalloc/cudaFree, cudaHostAlloc), which "
           "synchronises the device: allocate once outside the loop and reuse buffers (a caching "
           "allocator, memory pools with cudaMallocAsync).";
  if (!strcmp(cause, "host_register"))
    return "The host was pinning memory (cudaHostRegister): register buffers once at start-up and reuse "
           "them instead of registering per step.";
  return "No CUDA API activity during the gaps: the host is busy elsewhere (data loading, Python, "
         "GC, I/O). Overlap data loading (more DataLoader workers, pin_memory, prefetch), and "
         "profile the CPU side (nsys -s cpu) to find the stall.";
}

static void nsys__rule_bubbles(nsys__findings *f, const nsys_aresult *gaps) {
  const nsys_rtab *devs = nsys_rget_arr(gaps->summary, GS_DEVICES);
  const nsys_rtab *rows = gaps->rows;
  for (uint32_t di = 0; di < nsys_rtab_len(devs); di++) {
    nsys_rec d = nsys_rtab_row(devs, di);
    double idle_pct = nsys_rget_f64(d, GD_IDLE_PCT), gap_idle = (double)nsys_rget_i64(d, GD_GAP_IDLE_NS);
    double gap_n = (double)nsys_rget_i64(d, GD_GAP_COUNT);
    int dev = (int)nsys_rget_i64(d, GD_DEVICE);
    double span = (double)nsys_rget_i64(d, GD_END) - (double)nsys_rget_i64(d, GD_START);
    /* gaps of start-up, process switches and first launches are not bubbles
     * of the steady state (nsys__rule_gap_phases reports them): leave them out */
    nsys_rec phases = nsys_rget_obj(d, GD_PHASE_NS), phase_n = nsys_rget_obj(d, GD_PHASE_GAPS);
    int64_t unsteady = nsys_rget_i64(phases, GPH_PROCESS_SWITCH) + nsys_rget_i64(phases, GPH_STARTUP) +
                       nsys_rget_i64(phases, GPH_FIRST_LAUNCH);
    int64_t steady_idle = nsys_rget_i64(d, GD_IDLE_NS) - unsteady;
    int64_t steady_gaps = nsys_rget_i64(d, GD_GAP_COUNT) - nsys_rget_i64(phase_n, GPH_PROCESS_SWITCH) -
                          nsys_rget_i64(phase_n, GPH_STARTUP) - nsys_rget_i64(phase_n, GPH_FIRST_LAUNCH);
    gap_idle -= (double)unsteady;
    gap_n = (double)steady_gaps;
    span -= (double)unsteady; /* the steady part of the device's span */
    if (span > 0) idle_pct = nsys_round2(100.0 * (double)steady_idle / span);
    const char *span_word = unsteady > 0 ? "steady span" : "span";
    /* largest steady device-level gap of this device */
    nsys_rec big = {NULL, 0};
    for (uint32_t ri = 0; ri < nsys_rtab_len(rows); ri++) {
      nsys_rec r = nsys_rtab_row(rows, ri);
      if ((int)nsys_rget_i64(r, GAP_DEVICE) != dev || nsys_rhas(r, GAP_STREAM)) continue;
      const char *ph = nsys_rget_str(r, GAP_PHASE);
      if (ph && strcmp(ph, "steady")) continue;
      if (!big.t || nsys_rget_i64(r, GAP_DURATION_NS) > nsys_rget_i64(big, GAP_DURATION_NS)) big = r;
    }
    bool has_big = big.t != NULL;
    double big_ns = (double)nsys_rget_i64(big, GAP_DURATION_NS);
    bool concentrated = span > 0 && big_ns >= 5e6 && big_ns >= 0.03 * span;
    if (idle_pct < 10 && !concentrated) continue;
    nsys_rec causes = nsys_rget_obj(d, GD_CAUSE_NS);
    const char *cause = NULL;
    double best = -1;
    for (int k = 0; causes.t && k < nsys_rd_gap_causes.n; k++) {
      double v = (double)nsys_rget_i64(causes, nsys_rcol_i64(&nsys_rd_gap_causes, k));
      if (v > best) {
        best = v;
        cause = nsys_rd_gap_causes.cols[k].key;
      }
    }
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_bubbles);
    nsys_rset_i64(ev, EVB_DEVICE, dev);
    nsys_rset_f64(ev, EVB_IDLE_PCT, idle_pct);
    nsys_rset_i64(ev, EVB_IDLE_NS, steady_idle);
    nsys_rset_i64(ev, EVB_GAPS_OVER_1MS, steady_gaps);
    nsys_rset_i64(ev, EVB_GAP_IDLE_NS, (int64_t)gap_idle);
    nsys_rset_obj_copy(ev, EVB_CAUSE_NS, causes);
    nsys_rset_obj_copy(ev, EVB_SPLIT, nsys_rget_obj(d, GD_SPLIT));
    const char *big_cause = nsys_rget_str(big, GAP_CAUSE);
    if (has_big) {
      nsys_rec g = nsys_rset_obj(ev, EVB_LARGEST_GAP);
      nsys_rset_i64(g, EVG_START, nsys_rget_i64(big, GAP_START));
      nsys_rset_i64(g, EVG_END, nsys_rget_i64(big, GAP_END));
      nsys_rset_i64(g, EVG_DURATION_NS, nsys_rget_i64(big, GAP_DURATION_NS));
      nsys_rset_str(g, EVG_CAUSE, big_cause);
      nsys_rset_str(g, EVG_TOP_API, nsys_rget_str(big, GAP_TOP_API));
      nsys_rset_str(g, EVG_AFTER_SYNC, nsys_rget_str(big, GAP_AFTER_SYNC));
      nsys_rset_str(g, EVG_CPU_NVTX, nsys_rget_str(big, GAP_CPU_NVTX));
    }
    nsys__set_window(ev, EVB_WINDOW, nsys_rget_i64(d, GD_START), nsys_rget_i64(d, GD_END));
    char b1[32], b2[32];
    const char *as = nsys_rget_str(big, GAP_AFTER_SYNC), *nv = nsys_rget_str(big, GAP_CPU_NVTX);
    const char *sev = idle_pct >= 30 ? "critical" : "warning";
    double impact = NSYS_MAX((double)steady_idle * (idle_pct >= 10), big_ns);
    if (concentrated && has_big) {
      char fix[1024];
      if (as)
        snprintf(fix, sizeof fix,
                 "The GPU queue was drained by %s and the host then ran host-only work%s%s%s instead of "
                 "queueing kernels. Move that work off the critical path (asynchronous checkpointing, a "
                 "background thread, overlapping it with the next step) or drop the synchronisation.",
                 as, nv ? " (NVTX '" : "", nv ? nv : "", nv ? "')" : "");
      else
        snprintf(fix, sizeof fix, "%s", nsys__bubble_fix(big_cause));
      nsys__finding(f, "gpu_bubbles", sev, impact, ev, EVB_WINDOW, fix,
                    "GPU %d idle for %s at +%.3f s (%.1f%% of its %s)%s%s%s%s%s; %.0f gap%s >= 1 ms, %.1f%% idle "
                    "overall",
                    dev, nsys__dur(b1, sizeof b1, big_ns), (double)(nsys_rget_i64(big, GAP_START) - f->t0) / 1e9,
                    100.0 * big_ns / span, span_word,
                    as ? ": the queue drained in " : nv ? "" : !strcmp(big_cause ? big_cause : "", "cpu_stall") ? ", no CUDA call in progress (CPU stall)" : ", cause: ",
                    as ? as : nv ? "" : strcmp(big_cause ? big_cause : "", "cpu_stall") ? (big_cause ? big_cause : "unknown") : "",
                    nv ? (as ? ", then host-only work in NVTX '" : ": host in NVTX '") : "", nv ? nv : "",
                    nv ? "'" : "", gap_n, gap_n == 1 ? "" : "s", idle_pct);
    } else if (gap_n < 1) {
      /* idle >= 10% with no gap reaching the threshold: many short gaps */
      double min_gap = (double)nsys_rget_i64(gaps->summary, GS_MIN_GAP_NS);
      nsys__finding(f, "gpu_bubbles", sev, impact, ev, EVB_WINDOW,
                    "The idle time is spread over many short gaps between GPU operations: the GPU waits "
                    "for the host to queue the next one. Queue work further ahead (fewer synchronisations), "
                    "capture the step in a CUDA graph, or fuse small kernels.",
                    "GPU %d idle %.1f%% of its active %s (%s), all in gaps shorter than %s", dev, idle_pct, span_word,
                    nsys__dur(b1, sizeof b1, (double)steady_idle), nsys__dur(b2, sizeof b2, min_gap));
    } else {
      nsys__finding(f, "gpu_bubbles", sev, impact, ev, EVB_WINDOW, nsys__bubble_fix(cause),
                    "GPU %d idle %.1f%% of its active %s: %.0f gap%s >= 1 ms (%s), mostly %s", dev, idle_pct, span_word,
                    gap_n, gap_n == 1 ? "" : "s", nsys__dur(b1, sizeof b1, gap_idle),
                    cause && !strcmp(cause, "cpu_stall") ? "CPU stall (no CUDA call in progress)"
                    : cause ? cause : "unknown");
    }
  }
}

/* Idle gaps that are not steady-state bubbles (analysis/gap_phase.h): one
 * finding per device and phase when the phase's gaps reach 5 ms and 3% of
 * the device's span, with the cure of that phase instead of the bubble's. */
static void nsys__rule_gap_phases(nsys__findings *f, const nsys_aresult *gaps) {
  static const struct {
    const char *phase, *id, *what, *fix;
    int col; /* its column of nsys_rd_gap_phases */
  } kinds[] = {
      {"startup", "gpu_idle_startup", "before the first iteration (set-up: model build, data loading, compilation, autotuning)",
       "This is start-up, not a bubble of the training loop. Leave it out of the capture so the other findings describe "
       "the steady state: nsys profile --capture-range=cudaProfilerApi with cudaProfilerStart() / "
       "torch.cuda.profiler.start() at the first measured step (or --capture-range=nvtx, --delay). If start-up time "
       "itself matters, profile it on the CPU side (nsys -s cpu, python -X importtime) and keep compile caches warm.",
       GPH_STARTUP__i},
      {"first_launch", "gpu_idle_first_launch", "before the first launch of kernels",
       "The host was preparing kernels on their first call: JIT compilation (Triton, torch.compile, CuPy, NVRTC, PTX "
       "JIT) or lazy module loading. Warm up before the measured region, keep the compile caches (TRITON_CACHE_DIR, "
       "CuPy's kernel cache, CUDA_CACHE_PATH for PTX), build for this GPU's architecture so no PTX is JIT-compiled, or "
       "set CUDA_MODULE_LOADING=EAGER to move module loading to start-up.",
       GPH_FIRST_LAUNCH__i},
      {"process_switch", "gpu_idle_process_switch", "between processes (a process's first GPU work starts after it)",
       "The GPU waited for the next program to start: the gap is that process's start-up (interpreter, CUDA context, "
       "data), not a stall inside either program. Profile the programs separately, or, if they are parts of one "
       "job, start them before the GPU work of the previous one ends (overlap, a persistent worker).",
       GPH_PROCESS_SWITCH__i},
  };
  const nsys_rtab *devs = nsys_rget_arr(gaps->summary, GS_DEVICES);
  const nsys_rtab *rows = gaps->rows;
  for (uint32_t di = 0; di < nsys_rtab_len(devs); di++) {
    nsys_rec d = nsys_rtab_row(devs, di);
    int dev = (int)nsys_rget_i64(d, GD_DEVICE);
    double span = (double)nsys_rget_i64(d, GD_END) - (double)nsys_rget_i64(d, GD_START);
    nsys_rec phases = nsys_rget_obj(d, GD_PHASE_NS);
    for (size_t k = 0; k < NSYS_ARRAY_LEN(kinds); k++) {
      int64_t ns = nsys_rget_i64(phases, nsys_rcol_i64(&nsys_rd_gap_phases, kinds[k].col));
      if (span <= 0 || ns < 5000000 || (double)ns < 0.03 * span) continue;
      /* the largest such gap (rows are the longest gaps) and the kernels first launched after them */
      nsys_rec big = {NULL, 0};
      nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_phase);
      nsys_rtab *launched = NULL;
      for (uint32_t ri = 0; ri < nsys_rtab_len(rows); ri++) {
        nsys_rec r = nsys_rtab_row(rows, ri);
        if ((int)nsys_rget_i64(r, GAP_DEVICE) != dev || nsys_rhas(r, GAP_STREAM)) continue;
        const char *ph = nsys_rget_str(r, GAP_PHASE);
        if (!ph || strcmp(ph, kinds[k].phase)) continue;
        if (!big.t || nsys_rget_i64(r, GAP_DURATION_NS) > nsys_rget_i64(big, GAP_DURATION_NS)) big = r;
        const char *kn = nsys_rget_str(r, GAP_FIRST_LAUNCH);
        if (kn && nsys_rtab_len(launched) < 8) {
          if (!launched) launched = nsys_rset_list(ev, EVQ_FIRST_LAUNCHED);
          nsys_rlist_str(launched, kn);
        }
      }
      nsys_rset_i64(ev, EVQ_DEVICE, dev);
      nsys_rset_str(ev, EVQ_PHASE, kinds[k].phase);
      nsys_rset_i64(ev, EVQ_IDLE_NS, ns);
      nsys_rset_f64(ev, EVQ_PCT_OF_SPAN, nsys_round2(100.0 * (double)ns / span));
      char b1[32], extra[256] = "";
      if (big.t) {
        nsys_rec g = nsys_rset_obj(ev, EVQ_LARGEST_GAP);
        nsys_rset_i64(g, EVQG_START, nsys_rget_i64(big, GAP_START));
        nsys_rset_i64(g, EVQG_END, nsys_rget_i64(big, GAP_END));
        nsys_rset_i64(g, EVQG_DURATION_NS, nsys_rget_i64(big, GAP_DURATION_NS));
        if (nsys_rhas(big, GAP_PHASE_PID)) nsys_rset_i64(g, EVQG_PID, nsys_rget_i64(big, GAP_PHASE_PID));
        if (nsys_rhas(big, GAP_FIRST_ITERATION)) nsys_rset_i64(g, EVQG_FIRST_ITERATION, nsys_rget_i64(big, GAP_FIRST_ITERATION));
        nsys__set_window(ev, EVQ_WINDOW, nsys_rget_i64(big, GAP_START), nsys_rget_i64(big, GAP_END));
        if (nsys_rhas(big, GAP_PHASE_PID) && kinds[k].col == GPH_PROCESS_SWITCH__i)
          snprintf(extra, sizeof extra, "; pid %lld starts after it", (long long)nsys_rget_i64(big, GAP_PHASE_PID));
      }
      if (launched) snprintf(extra, sizeof extra, ", e.g. %s", nsys_rget_str(nsys_rtab_row(launched, 0), STRLIST_V));
      const char *sev = kinds[k].col == GPH_FIRST_LAUNCH__i && (double)ns >= 0.10 * span ? "warning" : "info";
      nsys__finding(f, kinds[k].id, sev, (double)ns, ev, EVQ_WINDOW, kinds[k].fix, "GPU %d idle %s (%.1f%% of its span) %s%s",
                    dev, nsys__dur(b1, sizeof b1, (double)ns), 100.0 * (double)ns / span, kinds[k].what, extra);
    }
  }
}

static void nsys__rule_launch(nsys__findings *f, const nsys_aresult *launch, const nsys_aresult *gaps, int64_t span) {
  nsys_rec s = launch->summary;
  double shorter = nsys_rget_f64(s, KLS_PCT_SHORTER), exposed = (double)nsys_rget_i64(s, KLS_EXPOSED_NS);
  nsys_rec hs = nsys_rget_obj(gaps->summary, GS_SPLIT);
  double host = (double)nsys_rget_i64(hs, GSPL_HOST_WAIT_NS),
         total_idle = host + (double)nsys_rget_i64(hs, GSPL_KERNEL_WAIT_NS) + (double)nsys_rget_i64(hs, GSPL_OTHER_NS);
  double launched = (double)nsys_rget_i64(s, KLS_LAUNCHED);
  bool exposed_big = span > 0 && exposed >= 0.05 * (double)span;
  bool host_dom = total_idle > 0 && host / total_idle >= 0.5 && host >= 0.1 * (double)span;
  if (launched < 100 || !((shorter >= 30 && (exposed_big || host_dom)) || exposed_big)) return;
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_launch);
  nsys_rset_i64(ev, EVL_LAUNCHED, nsys_rget_i64(s, KLS_LAUNCHED));
  nsys_rset_f64(ev, EVL_PCT_SHORTER, shorter);
  nsys_rset_f64(ev, EVL_AVG_API_NS, nsys_rget_f64(s, KLS_AVG_API_NS));
  nsys_rset_i64(ev, EVL_EXPOSED_NS, nsys_rget_i64(s, KLS_EXPOSED_NS));
  nsys_rset_i64(ev, EVL_HOST_WAIT_NS, nsys_rget_i64(hs, GSPL_HOST_WAIT_NS));
  char b1[32], b2[32];
  nsys__finding(f, "cpu_bound_launch", exposed_big && shorter >= 50 ? "critical" : "warning", exposed, ev, EVL_WINDOW,
                "The CPU cannot launch kernels as fast as the GPU runs them. Batch work into fewer, larger "
                "kernels (fusion, torch.compile), capture the loop in CUDA graphs, and move Python "
                "overhead off the launch thread.",
                "CPU-bound launching: %.0f%% of kernels run shorter than their launch call (avg %s); "
                "%s of GPU idle is spent waiting on launches",
                shorter, nsys__dur(b1, sizeof b1, nsys_rget_f64(s, KLS_AVG_API_NS)), nsys__dur(b2, sizeof b2, exposed));
}

static void nsys__rule_nccl(nsys__findings *f, const nsys_aresult *ov, const nsys_aresult *nccl) {
  for (uint32_t i = 0; i < nsys_rtab_len(ov->rows); i++) {
    nsys_rec d = nsys_rtab_row(ov->rows, i);
    double comm = (double)nsys_rget_i64(d, OV_COMM_NS), only = (double)nsys_rget_i64(d, OV_COMM_ONLY_NS);
    double span = (double)nsys_rget_i64(d, OV_END) - (double)nsys_rget_i64(d, OV_START);
    if (comm <= 0 || span <= 0) continue;
    double hidden = nsys_rget_f64(d, OV_COMM_HIDDEN_PCT); /* 0 when null */
    double only_pct = 100.0 * only / span;
    double exposed_share = 100.0 * only / comm;
    if (only_pct < 5 && !(exposed_share >= 15 && only_pct >= 1)) continue;
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_nccl);
    int dev = (int)nsys_rget_i64(d, OV_DEVICE);
    const char *coll = nsys_rget_str(nccl->summary, NCS_DOMINANT);
    nsys_rset_i64(ev, EVN_DEVICE, dev);
    nsys_rset_i64(ev, EVN_COMM_NS, nsys_rget_i64(d, OV_COMM_NS));
    nsys_rset_i64(ev, EVN_COMM_ONLY_NS, nsys_rget_i64(d, OV_COMM_ONLY_NS));
    nsys_rset_f64(ev, EVN_COMM_ONLY_PCT, nsys_round2(only_pct));
    nsys_rset_f64(ev, EVN_COMM_HIDDEN_PCT, hidden);
    nsys_rset_f64(ev, EVN_EXPOSED_SHARE_PCT, nsys_round2(exposed_share));
    nsys_rset_str(ev, EVN_DOMINANT, coll);
    nsys__set_window(ev, EVN_WINDOW, nsys_rget_i64(d, OV_START), nsys_rget_i64(d, OV_END));
    char b1[32];
    nsys__finding(f, "exposed_nccl", only_pct >= 20 ? "critical" : "warning", only, ev, EVN_WINDOW,
                  "Communication runs while no compute kernel does. Overlap it: bucket gradients so "
                  "all-reduce starts during backward (DDP bucket_cap_mb, FSDP prefetch), put NCCL on its "
                  "own stream, and avoid syncing the compute stream on the comm stream before it is needed.",
                  "Exposed NCCL on GPU %d: %s of communication runs with no compute kernel (%.0f%% of NCCL "
                  "time, %.1f%% of the span)%s%s",
                  dev, nsys__dur(b1, sizeof b1, only), exposed_share, only_pct, coll ? "; mostly " : "",
                  coll ? coll : "");
  }
}

static void nsys__rule_h2d(nsys__findings *f, const nsys_aresult *mem, int64_t span) {
  nsys_rec s = mem->summary;
  double pn = (double)nsys_rget_i64(s, MEMS_PH2D_COUNT), pb = (double)nsys_rget_i64(s, MEMS_PH2D_BYTES),
         pns = (double)nsys_rget_i64(s, MEMS_PH2D_NS);
  double h2d_ns = (double)nsys_rget_i64(s, MEMS_H2D_NS), h2d_b = (double)nsys_rget_i64(s, MEMS_H2D_BYTES),
         sync = (double)nsys_rget_i64(s, MEMS_SYNC_COPIES);
  double h2d_n = (double)nsys_rget_i64(s, MEMS_H2D_COUNT), busiest = (double)nsys_rget_i64(s, MEMS_H2D_BUSIEST_DEVICE);
  char b1[32], bb[32];
  if (pn > 0) {
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_pageable);
    nsys_rset_i64(ev, EVP_COPIES, nsys_rget_i64(s, MEMS_PH2D_COUNT));
    nsys_rset_i64(ev, EVP_BYTES, nsys_rget_i64(s, MEMS_PH2D_BYTES));
    nsys_rset_i64(ev, EVP_NS, nsys_rget_i64(s, MEMS_PH2D_NS));
    nsys_rset_f64(ev, EVP_GB_PER_SEC, pns > 0 ? nsys_round2(pb / pns) : 0);
    nsys_rset_i64(ev, EVP_SYNC_COPIES, nsys_rget_i64(s, MEMS_SYNC_COPIES));
    nsys_rec pw = nsys_rget_obj(s, MEMS_PH2D_WINDOW);
    if (pw.t) nsys_rset_obj_copy(ev, EVP_WINDOW, pw);
    nsys__finding(f, "pageable_h2d", pb >= 16.0 * 1048576 || pns >= 0.01 * (double)span ? "warning" : "info", pns,
                  ev, EVP_WINDOW,
                  "Copies from pageable host memory are staged through a driver buffer, run at a fraction of "
                  "PCIe/NVLink bandwidth and block the host: allocate host buffers pinned (cudaMallocHost, "
                  "DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True / "
                  "cudaMemcpyAsync.",
                  "%.0f host-to-device cop%s (%s, %s at %.1f GB/s) read pageable host memory%s", pn,
                  pn == 1 ? "y" : "ies", nsys__bytes(bb, sizeof bb, pb), nsys__dur(b1, sizeof b1, pns),
                  pns > 0 ? pb / pns : 0,
                  sync > 0 ? "; blocking cudaMemcpy calls are used" : "");
  }
  double dev_ns = (double)nsys_rget_i64(s, MEMS_H2D_BUSIEST_NS);
  if (span > 0 && dev_ns >= 0.05 * (double)span) {
    double pct = 100.0 * dev_ns / (double)span;
    nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_h2d);
    nsys_rset_i64(ev, EVH_NS, nsys_rget_i64(s, MEMS_H2D_NS));
    nsys_rset_i64(ev, EVH_BYTES, nsys_rget_i64(s, MEMS_H2D_BYTES));
    nsys_rset_i64(ev, EVH_COUNT, nsys_rget_i64(s, MEMS_H2D_COUNT));
    nsys_rset_i64(ev, EVH_BUSIEST_DEVICE, nsys_rget_i64(s, MEMS_H2D_BUSIEST_DEVICE));
    nsys_rset_i64(ev, EVH_BUSIEST_NS, nsys_rget_i64(s, MEMS_H2D_BUSIEST_NS));
    nsys_rset_f64(ev, EVH_PCT_OF_WINDOW, nsys_rget_f64(s, MEMS_H2D_PCT_OF_WINDOW));
    nsys_rset_f64(ev, EVH_GB_PER_SEC, h2d_ns > 0 ? nsys_round2(h2d_b / h2d_ns) : 0);
    char b2[32];
    nsys__finding(f, "excessive_h2d", pct >= 30 ? "critical" : pct >= 15 ? "warning" : "info", dev_ns, ev, EVH_WINDOW,
                  "Host-to-device traffic takes a large share of the run: keep data resident on the GPU, "
                  "move preprocessing to the GPU, copy once per batch rather than per tensor, and overlap "
                  "copies with compute on a separate stream.",
                  "Host-to-device copies keep GPU %.0f's copy engines busy %.1f%% of the window (%s); %s in "
                  "%.0f host-to-device cop%s overall",
                  busiest, pct, nsys__dur(b1, sizeof b1, dev_ns), nsys__bytes(b2, sizeof b2, h2d_b), h2d_n,
                  h2d_n == 1 ? "y" : "ies");
  }
}

static void nsys__rule_small(nsys__findings *f, const nsys_aresult *launch, const nsys_aresult *top) {
  nsys_rec s = launch->summary;
  double storms = (double)nsys_rget_i64(s, KLS_STORM_COUNT), pct = nsys_rget_f64(s, KLS_PCT_SMALL);
  double small = (double)nsys_rget_i64(s, KLS_SMALL);
  if (storms < 1 && !(pct >= 50 && small >= 1000)) return;
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_small);
  nsys_rset_i64(ev, EVK_SMALL, nsys_rget_i64(s, KLS_SMALL));
  nsys_rset_f64(ev, EVK_PCT_SMALL, pct);
  nsys_rset_i64(ev, EVK_STORMS, nsys_rget_i64(s, KLS_STORM_COUNT));
  const nsys_rtab *st = nsys_rget_arr(s, KLS_STORMS);
  nsys_rec big = {NULL, 0};
  for (uint32_t i = 0; i < nsys_rtab_len(st); i++) {
    nsys_rec x = nsys_rtab_row(st, i);
    if (!big.t || nsys_rget_i64(x, KLST_KERNELS) > nsys_rget_i64(big, KLST_KERNELS)) big = x;
  }
  if (big.t) {
    nsys_rset_obj_copy(ev, EVK_LARGEST_STORM, big);
    nsys__set_window(ev, EVK_STORM_WINDOW, nsys_rget_i64(big, KLST_START), nsys_rget_i64(big, KLST_END));
  }
  /* the most frequent short kernel names from top_kernels */
  nsys_rtab *names = nsys_rset_list(ev, EVK_SHORT_KERNELS);
  for (uint32_t i = 0; i < nsys_rtab_len(top->rows) && nsys_rtab_len(names) < 3; i++) {
    nsys_rec r = nsys_rtab_row(top->rows, i);
    if (nsys_rget_f64(r, TK_MEDIAN_NS) < 10000) nsys_rlist_str(names, nsys_rget_str(r, TK_NAME));
  }
  const char *first = nsys_rtab_len(names) ? nsys_rrec_val(nsys_rtab_row(names, 0), 0)->u.s : NULL;
  char burst[96] = "";
  if (big.t)
    snprintf(burst, sizeof burst, "; largest burst %.0f back-to-back (%.0f per ms)",
             (double)nsys_rget_i64(big, KLST_KERNELS), nsys_rget_f64(big, KLST_PER_MS));
  /* the window: the largest storm's, else the profile's after shortKernels */
  nsys_c_obj win = big.t ? EVK_STORM_WINDOW : EVK_WINDOW;
  nsys__finding(f, "small_kernel_storm", storms >= 1 ? "warning" : "info", 0, ev, win,
                "Thousands of kernels under 10 us are dominated by launch cost: fuse them (torch.compile, "
                "fused optimizers such as foreach/fused Adam, apex/TE fused layers) or capture them in a CUDA graph.",
                "Small-kernel storm: %.0f kernels (%.0f%%) shorter than 10 us%s%s%s",
                small, pct, first ? ", e.g. " : "", first ? first : "", burst);
}

static const char *nsys__hotspot_fix(const char *name) {
  if (nsys_icontains(name, "sgemm") || nsys_icontains(name, "f32f32_f32f32") || nsys_icontains(name, "_ffma_"))
    return "This GEMM runs in plain FP32 (sgemm/ffma in its name), without tensor cores: enable TF32 "
           "(torch.backends.cuda.matmul.allow_tf32 = True) or run it in BF16/FP16 (autocast) for up to "
           "8-16x the throughput.";
  if (nsys_icontains(name, "gemm") || nsys_icontains(name, "nvjet") || nsys_icontains(name, "cutlass") ||
      nsys_icontains(name, "xmma") || nsys_icontains(name, "matmul"))
    return "A GEMM dominates: check it runs on tensor cores in BF16/FP16/FP8 (not FP32), that M/N/K are "
           "multiples of 64-128, and that the batch is large enough to fill the GPU.";
  if (nsys_icontains(name, "flash") || nsys_icontains(name, "attn") || nsys_icontains(name, "attention"))
    return "Attention dominates: use the newest FlashAttention for this GPU (FA3 on Hopper), check the "
           "sequence length and head dimension, and consider sequence packing to avoid padding.";
  if (nsys_icontains(name, "elementwise") || nsys_icontains(name, "vectorized") || nsys_icontains(name, "reduce"))
    return "A memory-bound elementwise/reduction kernel dominates: fuse it with its neighbours "
           "(torch.compile, fused kernels) to cut memory traffic.";
  if (nsys_icontains(name, "nccl"))
    return "Communication dominates GPU time: reduce the volume (gradient compression, larger buckets, "
           "fewer parameters replicated) or overlap it with compute.";
  return "Optimise this kernel first: it bounds the achievable speed-up (Amdahl). Inspect it with Nsight "
         "Compute (ncu --kernel-name) for occupancy and memory throughput.";
}

/* v: explain's verdict on the kernel (explain/hotspot.h), NULL when none */
static void nsys__rule_hotspot(nsys__findings *f, const nsys_aresult *top, const nsys_explain_hotspot *v) {
  nsys_rec r = nsys_rtab_row(top->rows, 0);
  if (!r.t) return;
  double pct = nsys_rget_f64(r, TK_PCT_OF_GPU);
  if (pct < 25) return;
  const char *name = nsys_rget_str(r, TK_NAME);
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_hotspot);
  nsys_rset_str(ev, EVT_KERNEL, name);
  nsys_rset_f64(ev, EVT_PCT_OF_GPU, pct);
  nsys_rset_i64(ev, EVT_TOTAL_NS, nsys_rget_i64(r, TK_TOTAL_NS));
  nsys_rset_i64(ev, EVT_COUNT, nsys_rget_i64(r, TK_COUNT));
  nsys_rset_f64(ev, EVT_AVG_NS, nsys_rget_f64(r, TK_AVG_NS));
  nsys_rset_f64(ev, EVT_P95_NS, nsys_rget_f64(r, TK_P95_NS));
  char b1[32], b2[32];
  /* where time goes, not time wasted: impact 0 so that waste findings of the
   * same severity come first */
  if (v) nsys_rset_str(ev, EVT_CAUSE, nsys_hotspot_cause_name(v->cause));
  nsys__finding(f, "hotspot_kernel", pct >= 40 ? "warning" : "info", 0, ev, EVT_WINDOW,
                v && v->recommendation[0] ? v->recommendation : nsys__hotspot_fix(name),
                "Hotspot kernel %s: %.1f%% of GPU kernel time (%s over %.0f calls, avg %s)%s%s", name, pct,
                nsys__dur(b1, sizeof b1, (double)nsys_rget_i64(r, TK_TOTAL_NS)), (double)nsys_rget_i64(r, TK_COUNT),
                nsys__dur(b2, sizeof b2, nsys_rget_f64(r, TK_AVG_NS)), v && v->cause_text[0] ? "; " : "",
                v ? v->cause_text : "");
}

static void nsys__rule_nvtx(nsys__findings *f, const nsys_aresult *nv) {
  nsys_rec s = nv->summary;
  double ranges = (double)nsys_rget_i64(s, NVS_RANGES), kernels = (double)nsys_rget_i64(s, NVS_KERNELS),
         pct = nsys_rget_f64(s, NVS_KERNELS_IN_NVTX_PCT);
  if (kernels <= 0) return;
  if (ranges > 0 && pct >= 50) return;
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_nvtx);
  nsys_rset_i64(ev, EVX_RANGES, nsys_rget_i64(s, NVS_RANGES));
  nsys_rset_i64(ev, EVX_KERNELS, nsys_rget_i64(s, NVS_KERNELS));
  nsys_rset_f64(ev, EVX_PCT, pct);
  nsys__finding(f, "missing_nvtx", "info", 0, ev, EVX_WINDOW,
                "Annotate the training loop with NVTX ranges (torch.cuda.nvtx.range / nvtx.annotate around "
                "step, forward, backward, optimizer) so time can be attributed to code; nsys-ai can suggest "
                "where (source/annotate).",
                ranges == 0 ? "No NVTX ranges: GPU time cannot be attributed to code regions"
                            : "Only %.0f%% of kernels are launched inside an NVTX range", pct);
}

static void nsys__rule_sync(nsys__findings *f, const nsys_aresult *sync, int64_t span) {
  nsys_rec s = sync->summary;
  double total = (double)nsys_rget_i64(s, SYS_TOTAL_NS), idle = (double)nsys_rget_i64(s, SYS_GPU_IDLE_NS);
  double calls = (double)nsys_rget_i64(s, SYS_CALLS);
  if (span <= 0 || idle < 1e6 || idle < 0.02 * (double)span) return;
  nsys_rec r = nsys_rtab_row(sync->rows, 0);
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_sync);
  nsys_rset_i64(ev, EVY_TOTAL_NS, nsys_rget_i64(s, SYS_TOTAL_NS));
  nsys_rset_i64(ev, EVY_GPU_IDLE_NS, nsys_rget_i64(s, SYS_GPU_IDLE_NS));
  nsys_rset_i64(ev, EVY_CALLS, nsys_rget_i64(s, SYS_CALLS));
  const char *api = nsys_rget_str(r, SY_API);
  if (r.t) {
    nsys_rset_str(ev, EVY_TOP_API, api);
    nsys_rset_i64(ev, EVY_TOP_API_COUNT, nsys_rget_i64(r, SY_COUNT));
    nsys_rset_i64(ev, EVY_TOP_API_NS, nsys_rget_i64(r, SY_TOTAL_NS));
  }
  char b1[32], b2[32];
  nsys__finding(f, "sync_stalls", idle >= 0.1 * (double)span ? "critical" : "warning", idle, ev, EVY_WINDOW,
                "Each blocking synchronisation drains the GPU queue. Remove syncs from the steady-state loop "
                "(.item(), .cpu(), print of tensors, cudaDeviceSynchronize), use events or non_blocking "
                "copies, and sync once per step at most.",
                "Synchronisation stalls: %.0f blocking call%s take%s %s on the CPU while the GPU idles %s%s%s",
                calls, calls == 1 ? "" : "s", calls == 1 ? "s" : "", nsys__dur(b1, sizeof b1, total),
                nsys__dur(b2, sizeof b2, idle), r.t ? "; mostly " : "", r.t ? api : "");
}

static void nsys__rule_iters(nsys__findings *f, const nsys_aresult *it) {
  nsys_rec s = it->summary;
  double n = (double)nsys_rget_i64(s, ITS_COUNT), out = (double)nsys_rget_i64(s, ITS_OUTLIERS);
  const char *method = nsys_rget_str(s, ITS_METHOD);
  int ndev = (int)nsys_rtab_len(nsys_rget_arr(s, ITS_DEVICES));
  if (ndev < 1) ndev = 1;
  double per_dev = n / ndev;
  if (out < 1 || per_dev < 3) return;
  /* gap-split windows are a heuristic (the first "iteration" often holds the
   * whole warm-up): outliers are only reported for marker-based iterations */
  if (method && !strcmp(method, "gap")) return;
  nsys_rec ev = nsys_rrec_new(&nsys_rd_ev_iters);
  nsys_rset_f64(ev, EVI_PER_DEVICE, round(per_dev));
  nsys_rset_i64(ev, EVI_OUTLIERS, nsys_rget_i64(s, ITS_OUTLIERS));
  nsys_rset_str(ev, EVI_METHOD, method);
  nsys_rtab *list = nsys_rset_arr(ev, EVI_LIST);
  nsys_rec worst = {NULL, 0};
  double excess = 0;
  char idx[256] = "";
  int n_idx = 0, seen[32];
  for (uint32_t i = 0; i < nsys_rtab_len(it->rows); i++) {
    nsys_rec r = nsys_rtab_row(it->rows, i);
    if (!nsys_rget_bool(r, IT_OUTLIER)) continue;
    if (nsys_rtab_len(list) < 16) {
      nsys_rec o = nsys_rtab_add(list);
      nsys_rset_i64(o, EVO_INDEX, nsys_rget_i64(r, IT_INDEX));
      nsys_rset_str(o, EVO_NAME, nsys_rget_str(r, IT_NAME));
      nsys_rset_i64(o, EVO_DEVICE, nsys_rget_i64(r, IT_DEVICE));
      nsys_rset_i64(o, EVO_START, nsys_rget_i64(r, IT_START));
      nsys_rset_i64(o, EVO_END, nsys_rget_i64(r, IT_END));
      nsys_rset_i64(o, EVO_DURATION_NS, nsys_rget_i64(r, IT_DURATION_NS));
      nsys_rset_f64(o, EVO_VS_MEDIAN, nsys_rget_f64(r, IT_VS_MEDIAN));
    }
    double v = nsys_rget_f64(r, IT_VS_MEDIAN);
    if (v > 0) excess += (double)nsys_rget_i64(r, IT_DURATION_NS) * (1 - 1 / v);
    if (!worst.t || v > nsys_rget_f64(worst, IT_VS_MEDIAN)) worst = r;
    int k = (int)nsys_rget_i64(r, IT_INDEX);
    bool dup = false;
    for (int q = 0; q < n_idx; q++) dup |= seen[q] == k;
    if (!dup && n_idx < 32) {
      seen[n_idx++] = k;
      size_t len = strlen(idx);
      if (len < sizeof idx - 16) snprintf(idx + len, sizeof idx - len, "%s#%d", n_idx > 1 ? ", " : "", k);
    }
  }
  nsys__set_window(ev, EVI_WINDOW, nsys_rget_i64(worst, IT_START), nsys_rget_i64(worst, IT_END));
  char b1[32];
  const char *wn = nsys_rget_str(worst, IT_NAME);
  nsys__finding(f, "iteration_outliers", "warning", excess, ev, EVI_WINDOW,
                "Some iterations are much slower than the median: if it is the first ones, exclude warm-up "
                "(JIT, cudnn autotune, allocator growth) from the capture; otherwise look for periodic work "
                "(checkpointing, logging, evaluation, GC) or data-loading hiccups in those windows.",
                "Outlier iteration%s %s (> 1.5x the median of %.0f per GPU): worst %s%s%s%.2fx the median (%s)",
                n_idx == 1 ? "" : "s", idx, round(per_dev), wn ? "'" : "", wn ? wn : "", wn ? "' at " : "at ",
                nsys_rget_f64(worst, IT_VS_MEDIAN), nsys__dur(b1, sizeof b1, (double)nsys_rget_i64(worst, IT_DURATION_NS)));
}

/* The per-device evidence types and their device columns. */
typedef struct {
  const nsys_rdef *def;
  nsys_c_i64 device;
  nsys_c_list devices;
  nsys_c_arr per;
} nsys__perdev;

/* The device columns of ev when it is per-device evidence with a device set. */
static bool nsys__perdev_of(nsys_rec ev, nsys__perdev *out) {
  if (!ev.t) return false;
  if (ev.t->def == &nsys_rd_ev_bubbles) *out = (nsys__perdev){&nsys_rd_ev_bubbles, EVB_DEVICE, EVB_DEVICES, EVB_PER_DEVICE};
  else if (ev.t->def == &nsys_rd_ev_nccl) *out = (nsys__perdev){&nsys_rd_ev_nccl, EVN_DEVICE, EVN_DEVICES, EVN_PER_DEVICE};
  else return false;
  return nsys_rhas(ev, out->device);
}

/* Per-device findings of one rule are merged: the title and numbers of the
 * worst device, evidence.devices listing all, evidence.perDevice theirs. */
static void nsys__merge_devices(nsys__findings *f) {
  for (uint32_t i = 0; i < f->n; i++) {
    nsys__perdev pdv, other;
    if (!nsys__perdev_of(f->v[i].ev, &pdv)) continue;
    const nsys__perdev *pd = &pdv;
    const char *id = f->v[i].id;
    /* the group: i and the later findings of the same rule with a device, in order */
    uint32_t *grp = nsys_xmalloc((f->n - i) * sizeof *grp), gn = 0;
    for (uint32_t j = i; j < f->n; j++)
      if (!strcmp(f->v[j].id, id) && nsys__perdev_of(f->v[j].ev, &other)) grp[gn++] = j;
    if (gn == 1) {
      free(grp);
      continue;
    }
    uint32_t worst = grp[0];
    for (uint32_t g = 1; g < gn; g++)
      if (f->v[grp[g]].impact_ns > f->v[worst].impact_ns) worst = grp[g];
    nsys__fnd m = f->v[worst];
    m.ev = nsys_rrec_copy(m.ev);
    m.recommendation = nsys_xstrdup(m.recommendation);
    nsys_rtab *devs = nsys_rset_list(m.ev, pd->devices), *per = nsys_rset_arr(m.ev, pd->per);
    double impact = 0;
    const char *sev = "info";
    char list[128] = "";
    for (uint32_t g = 0; g < gn; g++) {
      nsys__fnd *x = &f->v[grp[g]];
      int64_t dv = nsys_rget_i64(x->ev, pd->device);
      nsys_rlist_f64(devs, (double)dv);
      nsys_rtab_add_copy(per, x->ev);
      impact += x->impact_ns;
      if (nsys__sev_rank(x->severity) < nsys__sev_rank(sev)) sev = x->severity;
      size_t len = strlen(list);
      if (len < sizeof list - 12) snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", (int)dv);
    }
    m.severity = sev;
    m.impact_ns = impact;
    char title[700];
    snprintf(title, sizeof title, "[GPUs %s; worst shown] %s", list, m.title);
    m.title = nsys_xstrdup(title);
    /* the merged finding takes the group's first place; the others go */
    for (uint32_t g = 0; g < gn; g++) nsys__fnd_free(&f->v[grp[g]]);
    f->v[i] = m;
    uint32_t w = i + 1, g = 1;
    for (uint32_t j = i + 1; j < f->n; j++) {
      if (g < gn && grp[g] == j) {
        g++;
        continue;
      }
      f->v[w++] = f->v[j];
    }
    f->n = w;
    free(grp);
  }
}

/* ------------------------------------------------------------------ build */

void nsys_report_free(nsys_report *r) {
  if (!r) return;
  nsys_rtab_free(r->rec.t);
  for (int i = 0; i < NSYS_REPORT_ANALYSES; i++) nsys_aresult_free(r->results[i]);
  free(r);
}

nsys_report *nsys_report_build(nsys_task *task, struct nsys_profile *p, const nsys_index *ix) {
  static const char *const names[NSYS_REPORT_ANALYSES] = {
      "top_kernels", "gpu_idle_gaps", "overlap", "nccl_breakdown", "iterations", "memory_transfers",
      "kernel_launch_overhead", "sync_cost", "nvtx_summary"};
  enum { N = NSYS_REPORT_ANALYSES };
  /* what the analyses derive from the index alone, built once for all of
   * them: the profile's memo (analysis/amemo.h), else a cache of this run */
  nsys_acache own, *cache = NULL;
  if (!nsys_amemo_get(task, p, ix, &cache)) return NULL;
  if (!cache) nsys_acache_init(cache = &own, ix);
  nsys_aexec runs[N];
  for (size_t i = 0; i < N; i++) runs[i] = (nsys_aexec){.p = p, .ix = ix, .name = names[i], .cache = cache};
  bool ok = nsys_analysis_exec_all(task, runs, N, "report");
  if (cache == &own) nsys_acache_dispose(&own);
  nsys_report *rep = nsys_xcalloc(1, sizeof *rep);
  for (size_t i = 0; i < N; i++) {
    nsys_aresult *x = runs[i].result;
    /* a missing table is not fatal for the report; the first other failure (in order) is */
    if (ok && !x && !nsys_task_cancelled(task) && nsys_task_forgive(&runs[i].task, NSYS_E_DATA_MISSING)) {
      x = nsys_aresult_stub();
    } else if (ok && !x) {
      ok = nsys_task_cancelled(task) ? nsys_task_fail_cancelled(task) : nsys_task_fail_from(task, &runs[i].task);
    }
    rep->names[i] = names[i];
    rep->results[i] = x;
  }
  if (ok && nsys_task_cancelled(task)) ok = nsys_task_fail_cancelled(task);
  if (!ok) {
    nsys_report_free(rep);
    return NULL;
  }
  nsys_aresult *const *r = rep->results;
  /* explain's verdict on the largest kernel (explain/hotspot.h) */
  nsys_explain_hotspot hot;
  nsys_rec top0 = nsys_rtab_row(r[0]->rows, 0);
  bool have_hot = top0.t && nsys_rget_f64(top0, TK_PCT_OF_GPU) >= 25 && /* the rule's threshold: only then is it asked */
                  nsys_explain_hotspot_of(p, ix, nsys_rget_str(top0, TK_NAME), task, &hot);
  if (!have_hot && nsys_task_failed(task)) {
    nsys_report_free(rep);
    return NULL;
  }
  int64_t span = ix->span_end - ix->span_start;
  nsys__findings f = {NULL, 0, 0, ix->span_start, ix->span_end};
  nsys__rule_short(&f, r[0], r[4], span);
  nsys__rule_bubbles(&f, r[1]);
  nsys__rule_gap_phases(&f, r[1]);
  nsys__rule_launch(&f, r[6], r[1], span);
  nsys__rule_nccl(&f, r[2], r[3]);
  nsys__rule_h2d(&f, r[5], span);
  nsys__rule_small(&f, r[6], r[0]);
  nsys__rule_hotspot(&f, r[0], have_hot ? &hot : NULL);
  nsys__rule_nvtx(&f, r[8]);
  nsys__rule_sync(&f, r[7], span);
  nsys__rule_iters(&f, r[4]);
  nsys__merge_devices(&f);
  if (f.n > 1) qsort(f.v, f.n, sizeof *f.v, nsys__cmp_finding);

  nsys_rec res = rep->rec = nsys_rrec_new(&nsys_rd_report);
  nsys_rset_str(res, REP_FILE, p ? p->path : NULL);
  nsys_rtab *gpus = nsys_rset_arr(res, REP_GPUS);
  for (int i = 0; p && i < p->info.n_gpus; i++) {
    nsys_rec g = nsys_rtab_add(gpus);
    nsys_rset_i64(g, RG_ID, p->info.gpus[i].id);
    nsys_rset_str(g, RG_NAME, p->info.gpus[i].name);
    if (p->info.gpus[i].sm_count) nsys_rset_i64(g, RG_SM_COUNT, p->info.gpus[i].sm_count);
  }
  nsys__set_window(res, REP_WINDOW, ix->span_start, ix->span_end);
  nsys_rec tot = nsys_rset_obj(res, REP_TOTALS);
  nsys_rset_i64(tot, RT_DURATION_NS, span);
  nsys_rset_i64(tot, RT_KERNELS, nsys_rget_i64(r[0]->summary, TKS_KERNEL_COUNT));
  nsys_rset_i64(tot, RT_KERNEL_NS, nsys_rget_i64(r[0]->summary, TKS_TOTAL_KERNEL_NS));
  nsys_rset_i64(tot, RT_GPU_BUSY_NS, nsys_rget_i64(r[0]->summary, TKS_GPU_BUSY_NS));
  nsys_rset_i64(tot, RT_MEMCPYS, nsys_rget_i64(r[5]->summary, MEMS_COUNT));
  nsys_rset_i64(tot, RT_NVTX_RANGES, nsys_rget_i64(r[8]->summary, NVS_RANGES));
  nsys_rset_i64(tot, RT_ITERATIONS, nsys_rget_i64(r[4]->summary, ITS_COUNT));
  nsys_rset_str(tot, RT_ITERATION_METHOD, nsys_rget_str(r[4]->summary, ITS_METHOD));
  int32_t ndev = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (t == 0 || ix->tracks[t].device != ix->tracks[t - 1].device) ndev++;
  nsys_rset_i64(tot, RT_DEVICES, ndev);
  int64_t c3[3] = {0};
  nsys_rtab *fa = nsys_rset_arr(res, REP_FINDINGS);
  for (uint32_t i = 0; i < f.n; i++) {
    nsys__fnd *x = &f.v[i];
    c3[nsys__sev_rank(x->severity)]++;
    nsys_rec o = nsys_rtab_add(fa);
    nsys_rset_str(o, FND_ID, x->id);
    nsys_rset_str(o, FND_SEVERITY, x->severity);
    nsys_rset_str(o, FND_TITLE, x->title);
    nsys_rset_obj_copy(o, FND_EVIDENCE, x->ev);
    nsys_rset_str(o, FND_RECOMMENDATION, x->recommendation);
    nsys_rset_f64(o, FND_IMPACT_NS, x->impact_ns);
    nsys__fnd_free(x);
  }
  free(f.v);
  nsys_rec cnt = nsys_rset_obj(res, REP_COUNTS);
  nsys_rset_i64(cnt, RC_CRITICAL, c3[0]);
  nsys_rset_i64(cnt, RC_WARNING, c3[1]);
  nsys_rset_i64(cnt, RC_INFO, c3[2]);
  nsys_task_progress_end(task, NULL);
  return rep;
}
