/* The root-cause report: runs the core analyses with their defaults, applies
 * rules to their results and emits findings {id, severity, title, evidence,
 * recommendation}, sorted by severity then by the time at stake. Thresholds
 * are documented in docs/analyses.md ("report"). */
#include "analysis/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "explain/hotspot.h"
#include "profile/profile.h"

static double nsys__num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
/* An integer field exactly (timestamps above 2^53: rpc/json_int.h). */
static int64_t nsys__int(const cJSON *o, const char *k) { return nsys_json_obj_i64(o, k, 0); }
static const char *nsys__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}
static const cJSON *nsys__get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

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

typedef struct {
  cJSON *arr;
  int64_t t0, t1;
} nsys__findings;

/* Adds a finding; `evidence` is consumed; window defaults to the profile's. */
static cJSON *nsys__finding(nsys__findings *f, const char *id, const char *severity, double impact_ns,
                            cJSON *evidence, const char *recommendation, const char *title_fmt, ...)
    __attribute__((format(printf, 7, 8)));

static cJSON *nsys__finding(nsys__findings *f, const char *id, const char *severity, double impact_ns,
                            cJSON *evidence, const char *recommendation, const char *title_fmt, ...) {
  char title[512];
  va_list ap;
  va_start(ap, title_fmt);
  vsnprintf(title, sizeof title, title_fmt, ap);
  va_end(ap);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "severity", severity);
  cJSON_AddStringToObject(o, "title", title);
  if (!cJSON_GetObjectItemCaseSensitive(evidence, "window")) {
    cJSON *w = cJSON_AddObjectToObject(evidence, "window");
    nsys_json_int(w, "start", f->t0);
    nsys_json_int(w, "end", f->t1);
  }
  cJSON_AddItemToObject(o, "evidence", evidence);
  cJSON_AddStringToObject(o, "recommendation", recommendation);
  nsys_json_num(o, "impactNs", round(impact_ns));
  cJSON_AddItemToArray(f->arr, o);
  return o;
}

static cJSON *nsys__win(int64_t s, int64_t e) {
  cJSON *w = cJSON_CreateObject();
  nsys_json_int(w, "start", s);
  nsys_json_int(w, "end", e);
  return w;
}

static int nsys__sev_rank(const char *s) {
  return !strcmp(s, "critical") ? 0 : !strcmp(s, "warning") ? 1 : 2;
}

static int nsys__cmp_finding(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  int rx = nsys__sev_rank(nsys__str(x, "severity")), ry = nsys__sev_rank(nsys__str(y, "severity"));
  if (rx != ry) return rx - ry;
  double ix = nsys__num(x, "impactNs"), iy = nsys__num(y, "impactNs");
  if (ix != iy) return ix > iy ? -1 : 1;
  return strcmp(nsys__str(x, "id"), nsys__str(y, "id"));
}

/* ------------------------------------------------------------------ rules */

static void nsys__rule_short(nsys__findings *f, const cJSON *top, const cJSON *iters, int64_t span) {
  double kernels = nsys__num(nsys__get(top, "summary"), "kernelCount");
  double n_it = nsys__num(nsys__get(iters, "summary"), "count");
  char b1[32];
  if (kernels == 0) {
    cJSON *ev = cJSON_CreateObject();
    nsys_json_int(ev, "kernels", 0);
    nsys_json_int(ev, "spanNs", span);
    nsys__finding(f, "profile_too_short", "warning", 0, ev,
                  "Capture with CUDA tracing on (nsys profile -t cuda,nvtx) and let the workload reach "
                  "its steady state (e.g. --delay past warm-up, --duration covering several iterations).",
                  "No GPU kernels in the profile: nothing to judge on the GPU side");
    return;
  }
  if (span < 50000000 || kernels < 100 || n_it < 3) {
    cJSON *ev = cJSON_CreateObject();
    nsys_json_int(ev, "spanNs", span);
    nsys_json_int(ev, "kernels", (int64_t)kernels);
    nsys_json_int(ev, "iterations", (int64_t)n_it);
    nsys__finding(f, "profile_too_short", "info", 0, ev,
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

static void nsys__rule_bubbles(nsys__findings *f, const cJSON *gaps) {
  const cJSON *devs = nsys__get(nsys__get(gaps, "summary"), "devices");
  const cJSON *rows = nsys__get(gaps, "rows");
  const cJSON *d;
  cJSON_ArrayForEach(d, devs) {
    double idle_pct = nsys__num(d, "idlePct"), gap_idle = nsys__num(d, "gapIdleNs");
    double gap_n = nsys__num(d, "gapCount");
    int dev = (int)nsys__num(d, "device");
    double span = nsys__num(d, "end") - nsys__num(d, "start");
    /* gaps of start-up, process switches and first launches are not bubbles
     * of the steady state (nsys__rule_gap_phases reports them): leave them out */
    const cJSON *phases = nsys__get(d, "phaseNs");
    double unsteady = nsys__num(phases, "process_switch") + nsys__num(phases, "startup") +
                      nsys__num(phases, "first_launch");
    double steady_idle = nsys__num(d, "idleNs") - unsteady;
    gap_idle -= unsteady;
    const cJSON *phase_n = nsys__get(d, "phaseGaps");
    gap_n -= nsys__num(phase_n, "process_switch") + nsys__num(phase_n, "startup") + nsys__num(phase_n, "first_launch");
    span -= unsteady; /* the steady part of the device's span */
    const char *span_word = unsteady > 0 ? "steady span" : "span";
    if (span > 0) idle_pct = nsys_round2(100.0 * steady_idle / span);
    /* largest steady device-level gap of this device */
    const cJSON *big = NULL, *r;
    cJSON_ArrayForEach(r, rows) {
      if ((int)nsys__num(r, "device") != dev || !cJSON_IsNull(nsys__get(r, "stream"))) continue;
      const char *ph = nsys__str(r, "phase");
      if (ph && strcmp(ph, "steady")) continue;
      if (!big || nsys__num(r, "durationNs") > nsys__num(big, "durationNs")) big = r;
    }
    double big_ns = big ? nsys__num(big, "durationNs") : 0;
    bool concentrated = span > 0 && big_ns >= 5e6 && big_ns >= 0.03 * span;
    if (idle_pct < 10 && !concentrated) continue;
    const cJSON *causes = nsys__get(d, "causeNs");
    const char *cause = NULL;
    double best = -1;
    const cJSON *c;
    cJSON_ArrayForEach(c, causes) if (c->valuedouble > best) {
      best = c->valuedouble;
      cause = c->string;
    }
    cJSON *ev = cJSON_CreateObject();
    nsys_json_int(ev, "device", dev);
    nsys_json_num(ev, "idlePct", idle_pct);
    nsys_json_num(ev, "idleNs", steady_idle);
    nsys_json_num(ev, "gapsOver1ms", gap_n);
    nsys_json_num(ev, "gapIdleNs", gap_idle);
    cJSON_AddItemToObject(ev, "causeNs", cJSON_Duplicate(causes, true));
    cJSON_AddItemToObject(ev, "streamIdleSplit", cJSON_Duplicate(nsys__get(d, "streamIdleSplit"), true));
    if (big) {
      cJSON *g = cJSON_AddObjectToObject(ev, "largestGap");
      nsys_json_int(g, "start", nsys__int(big, "start"));
      nsys_json_int(g, "end", nsys__int(big, "end"));
      nsys_json_num(g, "durationNs", nsys__num(big, "durationNs"));
      nsys_json_str(g, "cause", nsys__str(big, "cause"));
      nsys_json_str(g, "topApi", nsys__str(big, "topApi"));
      nsys_json_str(g, "afterSync", nsys__str(big, "afterSync"));
      nsys_json_str(g, "cpuNvtx", nsys__str(big, "cpuNvtx"));
    }
    cJSON_AddItemToObject(ev, "window", nsys__win(nsys__int(d, "start"), nsys__int(d, "end")));
    char b1[32], b2[32];
    const char *as = big ? nsys__str(big, "afterSync") : NULL, *nv = big ? nsys__str(big, "cpuNvtx") : NULL;
    const char *sev = idle_pct >= 30 ? "critical" : "warning";
    double impact = NSYS_MAX(steady_idle * (idle_pct >= 10), big_ns);
    if (concentrated && big) {
      char fix[1024];
      if (as)
        snprintf(fix, sizeof fix,
                 "The GPU queue was drained by %s and the host then ran host-only work%s%s%s instead of "
                 "queueing kernels. Move that work off the critical path (asynchronous checkpointing, a "
                 "background thread, overlapping it with the next step) or drop the synchronisation.",
                 as, nv ? " (NVTX '" : "", nv ? nv : "", nv ? "')" : "");
      else
        snprintf(fix, sizeof fix, "%s", nsys__bubble_fix(nsys__str(big, "cause")));
      nsys__finding(f, "gpu_bubbles", sev, impact, ev, fix,
                    "GPU %d idle for %s at +%.3f s (%.1f%% of its %s)%s%s%s%s%s; %.0f gap%s >= 1 ms, %.1f%% idle "
                    "overall",
                    dev, nsys__dur(b1, sizeof b1, big_ns), (double)(nsys__int(big, "start") - f->t0) / 1e9,
                    100.0 * big_ns / span, span_word,
                    as ? ": the queue drained in " : nv ? "" : !strcmp(nsys__str(big, "cause") ? nsys__str(big, "cause") : "", "cpu_stall") ? ", no CUDA call in progress (CPU stall)" : ", cause: ",
                    as ? as : nv ? "" : strcmp(nsys__str(big, "cause") ? nsys__str(big, "cause") : "", "cpu_stall") ? (nsys__str(big, "cause") ? nsys__str(big, "cause") : "unknown") : "",
                    nv ? (as ? ", then host-only work in NVTX '" : ": host in NVTX '") : "", nv ? nv : "",
                    nv ? "'" : "", gap_n, gap_n == 1 ? "" : "s", idle_pct);
    } else if (gap_n < 1) {
      /* idle >= 10% with no gap reaching the threshold: many short gaps */
      double min_gap = nsys__num(nsys__get(gaps, "summary"), "minGapNs");
      nsys__finding(f, "gpu_bubbles", sev, impact, ev,
                    "The idle time is spread over many short gaps between GPU operations: the GPU waits "
                    "for the host to queue the next one. Queue work further ahead (fewer synchronisations), "
                    "capture the step in a CUDA graph, or fuse small kernels.",
                    "GPU %d idle %.1f%% of its active %s (%s), all in gaps shorter than %s", dev, idle_pct, span_word,
                    nsys__dur(b1, sizeof b1, steady_idle), nsys__dur(b2, sizeof b2, min_gap));
    } else {
      nsys__finding(f, "gpu_bubbles", sev, impact, ev, nsys__bubble_fix(cause),
                    "GPU %d idle %.1f%% of its active %s: %.0f gap%s >= 1 ms (%s), mostly %s", dev, idle_pct, span_word,
                    gap_n, gap_n == 1 ? "" : "s", nsys__dur(b1, sizeof b1, gap_idle),
                    cause && !strcmp(cause, "cpu_stall") ? "CPU stall (no CUDA call in progress)"
                    : cause ? cause : "unknown");
    }
    (void)b2;
  }
}

/* Idle gaps that are not steady-state bubbles (analysis/gap_phase.h): one
 * finding per device and phase when the phase's gaps reach 5 ms and 3% of
 * the device's span, with the cure of that phase instead of the bubble's. */
static void nsys__rule_gap_phases(nsys__findings *f, const cJSON *gaps) {
  static const struct {
    const char *phase, *id, *what, *fix;
  } kinds[] = {
      {"startup", "gpu_idle_startup", "before the first iteration (set-up: model build, data loading, compilation, autotuning)",
       "This is start-up, not a bubble of the training loop. Leave it out of the capture so the other findings describe "
       "the steady state: nsys profile --capture-range=cudaProfilerApi with cudaProfilerStart() / "
       "torch.cuda.profiler.start() at the first measured step (or --capture-range=nvtx, --delay). If start-up time "
       "itself matters, profile it on the CPU side (nsys -s cpu, python -X importtime) and keep compile caches warm."},
      {"first_launch", "gpu_idle_first_launch", "before the first launch of kernels",
       "The host was preparing kernels on their first call: JIT compilation (Triton, torch.compile, CuPy, NVRTC, PTX "
       "JIT) or lazy module loading. Warm up before the measured region, keep the compile caches (TRITON_CACHE_DIR, "
       "CuPy's kernel cache, CUDA_CACHE_PATH for PTX), build for this GPU's architecture so no PTX is JIT-compiled, or "
       "set CUDA_MODULE_LOADING=EAGER to move module loading to start-up."},
      {"process_switch", "gpu_idle_process_switch", "between processes (a process's first GPU work starts after it)",
       "The GPU waited for the next program to start: the gap is that process's start-up (interpreter, CUDA context, "
       "data), not a stall inside either program. Profile the programs separately, or, if they are parts of one "
       "job, start them before the GPU work of the previous one ends (overlap, a persistent worker)."},
  };
  const cJSON *devs = nsys__get(nsys__get(gaps, "summary"), "devices");
  const cJSON *rows = nsys__get(gaps, "rows");
  const cJSON *d;
  cJSON_ArrayForEach(d, devs) {
    int dev = (int)nsys__num(d, "device");
    double span = nsys__num(d, "end") - nsys__num(d, "start");
    const cJSON *phases = nsys__get(d, "phaseNs");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      double ns = nsys__num(phases, kinds[k].phase);
      if (span <= 0 || ns < 5e6 || ns < 0.03 * span) continue;
      /* the largest such gap (rows are the longest gaps) and the kernels first launched after them */
      const cJSON *big = NULL, *r;
      cJSON *launched = cJSON_CreateArray();
      cJSON_ArrayForEach(r, rows) {
        if ((int)nsys__num(r, "device") != dev || !cJSON_IsNull(nsys__get(r, "stream"))) continue;
        const char *ph = nsys__str(r, "phase");
        if (!ph || strcmp(ph, kinds[k].phase)) continue;
        if (!big || nsys__num(r, "durationNs") > nsys__num(big, "durationNs")) big = r;
        const char *kn = nsys__str(r, "firstLaunch");
        if (kn && cJSON_GetArraySize(launched) < 8) cJSON_AddItemToArray(launched, cJSON_CreateString(kn));
      }
      cJSON *ev = cJSON_CreateObject();
      nsys_json_int(ev, "device", dev);
      nsys_json_str(ev, "phase", kinds[k].phase);
      nsys_json_num(ev, "idleNs", ns);
      nsys_json_num(ev, "pctOfSpan", nsys_round2(100.0 * ns / span));
      char b1[32], extra[256] = "";
      if (big) {
        cJSON *g = cJSON_AddObjectToObject(ev, "largestGap");
        nsys_json_int(g, "start", nsys__int(big, "start"));
        nsys_json_int(g, "end", nsys__int(big, "end"));
        nsys_json_num(g, "durationNs", nsys__num(big, "durationNs"));
        if (nsys__get(big, "phasePid")) nsys_json_int(g, "pid", nsys__int(big, "phasePid"));
        if (nsys__get(big, "firstIterationStart")) nsys_json_int(g, "firstIterationStart", nsys__int(big, "firstIterationStart"));
        cJSON_AddItemToObject(ev, "window", nsys__win(nsys__int(big, "start"), nsys__int(big, "end")));
        if (nsys__get(big, "phasePid") && !strcmp(kinds[k].phase, "process_switch"))
          snprintf(extra, sizeof extra, "; pid %lld starts after it", (long long)nsys__int(big, "phasePid"));
      }
      if (cJSON_GetArraySize(launched)) {
        snprintf(extra, sizeof extra, ", e.g. %s", cJSON_GetArrayItem(launched, 0)->valuestring);
        cJSON_AddItemToObject(ev, "firstLaunched", launched);
      } else {
        cJSON_Delete(launched);
      }
      const char *sev = !strcmp(kinds[k].phase, "first_launch") && ns >= 0.10 * span ? "warning" : "info";
      nsys__finding(f, kinds[k].id, sev, ns, ev, kinds[k].fix, "GPU %d idle %s (%.1f%% of its span) %s%s", dev,
                    nsys__dur(b1, sizeof b1, ns), 100.0 * ns / span, kinds[k].what, extra);
    }
  }
}

static void nsys__rule_launch(nsys__findings *f, const cJSON *launch, const cJSON *gaps, int64_t span) {
  const cJSON *s = nsys__get(launch, "summary");
  double shorter = nsys__num(s, "pctShorterThanLaunch"), exposed = nsys__num(s, "exposedLaunchNs");
  const cJSON *hs = nsys__get(nsys__get(gaps, "summary"), "streamIdleSplit");
  double host = nsys__num(hs, "hostWaitNs"), total_idle = host + nsys__num(hs, "kernelWaitNs") + nsys__num(hs, "otherNs");
  double launched = nsys__num(s, "launchedKernels");
  bool exposed_big = span > 0 && exposed >= 0.05 * (double)span;
  bool host_dom = total_idle > 0 && host / total_idle >= 0.5 && host >= 0.1 * (double)span;
  if (launched < 100 || !((shorter >= 30 && (exposed_big || host_dom)) || exposed_big)) return;
  cJSON *ev = cJSON_CreateObject();
  nsys_json_num(ev, "launchedKernels", launched);
  nsys_json_num(ev, "pctShorterThanLaunch", shorter);
  nsys_json_num(ev, "avgApiNs", nsys__num(s, "avgApiNs"));
  nsys_json_num(ev, "exposedLaunchNs", exposed);
  nsys_json_num(ev, "hostWaitNs", host);
  char b1[32], b2[32];
  nsys__finding(f, "cpu_bound_launch", exposed_big && shorter >= 50 ? "critical" : "warning", exposed, ev,
                "The CPU cannot launch kernels as fast as the GPU runs them. Batch work into fewer, larger "
                "kernels (fusion, torch.compile), capture the loop in CUDA graphs, and move Python "
                "overhead off the launch thread.",
                "CPU-bound launching: %.0f%% of kernels run shorter than their launch call (avg %s); "
                "%s of GPU idle is spent waiting on launches",
                shorter, nsys__dur(b1, sizeof b1, nsys__num(s, "avgApiNs")), nsys__dur(b2, sizeof b2, exposed));
}

static void nsys__rule_nccl(nsys__findings *f, const cJSON *ov, const cJSON *nccl) {
  const cJSON *d;
  cJSON_ArrayForEach(d, nsys__get(ov, "rows")) {
    double comm = nsys__num(d, "commNs"), only = nsys__num(d, "commOnlyNs");
    double span = nsys__num(d, "end") - nsys__num(d, "start");
    const cJSON *hp = nsys__get(d, "commHiddenPct");
    if (comm <= 0 || span <= 0) continue;
    double hidden = cJSON_IsNumber(hp) ? hp->valuedouble : 0;
    double only_pct = 100.0 * only / span;
    double exposed_share = 100.0 * only / comm;
    if (only_pct < 5 && !(exposed_share >= 15 && only_pct >= 1)) continue;
    cJSON *ev = cJSON_CreateObject();
    int dev = (int)nsys__num(d, "device");
    nsys_json_int(ev, "device", dev);
    nsys_json_num(ev, "commNs", comm);
    nsys_json_num(ev, "commOnlyNs", only);
    nsys_json_num(ev, "commOnlyPct", nsys_round2(only_pct));
    nsys_json_num(ev, "commHiddenPct", hidden);
    nsys_json_num(ev, "exposedShareOfCommPct", nsys_round2(exposed_share));
    nsys_json_str(ev, "dominantCollective", nsys__str(nsys__get(nccl, "summary"), "dominantCollective"));
    cJSON_AddItemToObject(ev, "window", nsys__win(nsys__int(d, "start"), nsys__int(d, "end")));
    const char *coll = nsys__str(nsys__get(nccl, "summary"), "dominantCollective");
    char b1[32];
    nsys__finding(f, "exposed_nccl", only_pct >= 20 ? "critical" : "warning", only, ev,
                  "Communication runs while no compute kernel does. Overlap it: bucket gradients so "
                  "all-reduce starts during backward (DDP bucket_cap_mb, FSDP prefetch), put NCCL on its "
                  "own stream, and avoid syncing the compute stream on the comm stream before it is needed.",
                  "Exposed NCCL on GPU %d: %s of communication runs with no compute kernel (%.0f%% of NCCL "
                  "time, %.1f%% of the span)%s%s",
                  dev, nsys__dur(b1, sizeof b1, only), exposed_share, only_pct, coll ? "; mostly " : "",
                  coll ? coll : "");
  }
}

static void nsys__rule_h2d(nsys__findings *f, const cJSON *mem, int64_t span) {
  const cJSON *s = nsys__get(mem, "summary");
  double pn = nsys__num(s, "pageableH2dCount"), pb = nsys__num(s, "pageableH2dBytes"),
         pns = nsys__num(s, "pageableH2dNs");
  double h2d_ns = nsys__num(s, "h2dNs"), h2d_b = nsys__num(s, "h2dBytes"), sync = nsys__num(s, "syncCopies");
  char b1[32], bb[32];
  if (pn > 0) {
    cJSON *ev = cJSON_CreateObject();
    nsys_json_num(ev, "pageableH2dCopies", pn);
    nsys_json_num(ev, "pageableH2dBytes", pb);
    nsys_json_num(ev, "pageableH2dNs", pns);
    nsys_json_num(ev, "gbPerSec", pns > 0 ? nsys_round2(pb / pns) : 0);
    nsys_json_num(ev, "syncCopies", sync);
    const cJSON *pw = nsys__get(s, "pageableH2dWindow");
    if (cJSON_IsObject(pw)) cJSON_AddItemToObject(ev, "window", cJSON_Duplicate(pw, true));
    nsys__finding(f, "pageable_h2d", pb >= 16.0 * 1048576 || pns >= 0.01 * (double)span ? "warning" : "info", pns,
                  ev,
                  "Copies from pageable host memory are staged through a driver buffer, run at a fraction of "
                  "PCIe/NVLink bandwidth and block the host: allocate host buffers pinned (cudaMallocHost, "
                  "DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True / "
                  "cudaMemcpyAsync.",
                  "%.0f host-to-device cop%s (%s, %s at %.1f GB/s) read pageable host memory%s", pn,
                  pn == 1 ? "y" : "ies", nsys__bytes(bb, sizeof bb, pb), nsys__dur(b1, sizeof b1, pns),
                  pns > 0 ? pb / pns : 0,
                  sync > 0 ? "; blocking cudaMemcpy calls are used" : "");
  }
  double dev_ns = nsys__num(s, "h2dBusiestDeviceNs");
  if (span > 0 && dev_ns >= 0.05 * (double)span) {
    double pct = 100.0 * dev_ns / (double)span;
    cJSON *ev = cJSON_CreateObject();
    nsys_json_num(ev, "h2dNs", h2d_ns);
    nsys_json_num(ev, "h2dBytes", h2d_b);
    nsys_json_num(ev, "h2dCount", nsys__num(s, "h2dCount"));
    nsys_json_num(ev, "busiestDevice", nsys__num(s, "h2dBusiestDevice"));
    nsys_json_num(ev, "busiestDeviceH2dNs", dev_ns);
    nsys_json_num(ev, "h2dPctOfWindow", nsys__num(s, "h2dPctOfWindow"));
    nsys_json_num(ev, "gbPerSec", h2d_ns > 0 ? nsys_round2(h2d_b / h2d_ns) : 0);
    char b2[32], b3[32];
    nsys__finding(f, "excessive_h2d", pct >= 30 ? "critical" : pct >= 15 ? "warning" : "info", dev_ns, ev,
                  "Host-to-device traffic takes a large share of the run: keep data resident on the GPU, "
                  "move preprocessing to the GPU, copy once per batch rather than per tensor, and overlap "
                  "copies with compute on a separate stream.",
                  "Host-to-device copies keep GPU %.0f's copy engines busy %.1f%% of the window (%s); %s in "
                  "%.0f host-to-device cop%s overall",
                  nsys__num(s, "h2dBusiestDevice"), pct, nsys__dur(b1, sizeof b1, dev_ns),
                  nsys__bytes(b2, sizeof b2, h2d_b), nsys__num(s, "h2dCount"),
                  nsys__num(s, "h2dCount") == 1 ? "y" : "ies");
    (void)b3;
  }
}

static void nsys__rule_small(nsys__findings *f, const cJSON *launch, const cJSON *top) {
  const cJSON *s = nsys__get(launch, "summary");
  double storms = nsys__num(s, "stormCount"), pct = nsys__num(s, "pctSmallKernels");
  double small = nsys__num(s, "smallKernels");
  if (storms < 1 && !(pct >= 50 && small >= 1000)) return;
  cJSON *ev = cJSON_CreateObject();
  nsys_json_num(ev, "smallKernels", small);
  nsys_json_num(ev, "pctSmallKernels", pct);
  nsys_json_num(ev, "storms", storms);
  const cJSON *big = NULL, *st;
  cJSON_ArrayForEach(st, nsys__get(s, "storms")) if (!big || nsys__num(st, "kernels") > nsys__num(big, "kernels")) big = st;
  if (big) {
    cJSON *b = cJSON_AddObjectToObject(ev, "largestStorm");
    nsys_json_num(b, "device", nsys__num(big, "device"));
    nsys_json_int(b, "start", nsys__int(big, "start"));
    nsys_json_int(b, "end", nsys__int(big, "end"));
    nsys_json_num(b, "kernels", nsys__num(big, "kernels"));
    nsys_json_num(b, "kernelsPerMs", nsys__num(big, "kernelsPerMs"));
    cJSON_AddItemToObject(ev, "window", nsys__win(nsys__int(big, "start"), nsys__int(big, "end")));
  }
  /* the most frequent short kernel names from top_kernels */
  cJSON *names = cJSON_AddArrayToObject(ev, "shortKernels");
  const cJSON *r;
  int k = 0;
  cJSON_ArrayForEach(r, nsys__get(top, "rows")) {
    if (nsys__num(r, "medianNs") < 10000 && k < 3) {
      cJSON_AddItemToArray(names, cJSON_CreateString(nsys__str(r, "name")));
      k++;
    }
  }
  const cJSON *first = cJSON_GetArrayItem(names, 0);
  char burst[96] = "";
  if (big)
    snprintf(burst, sizeof burst, "; largest burst %.0f back-to-back (%.0f per ms)", nsys__num(big, "kernels"),
             nsys__num(big, "kernelsPerMs"));
  nsys__finding(f, "small_kernel_storm", storms >= 1 ? "warning" : "info", 0, ev,
                "Thousands of kernels under 10 us are dominated by launch cost: fuse them (torch.compile, "
                "fused optimizers such as foreach/fused Adam, apex/TE fused layers) or capture them in a CUDA graph.",
                "Small-kernel storm: %.0f kernels (%.0f%%) shorter than 10 us%s%s%s",
                small, pct, first ? ", e.g. " : "", first ? first->valuestring : "", burst);
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
static void nsys__rule_hotspot(nsys__findings *f, const cJSON *top, const nsys_explain_hotspot *v) {
  const cJSON *r = cJSON_GetArrayItem(nsys__get(top, "rows"), 0);
  if (!r) return;
  double pct = nsys__num(r, "pctOfGpu");
  if (pct < 25) return;
  const char *name = nsys__str(r, "name");
  cJSON *ev = cJSON_CreateObject();
  nsys_json_str(ev, "kernel", name);
  nsys_json_num(ev, "pctOfGpu", pct);
  nsys_json_num(ev, "totalNs", nsys__num(r, "totalNs"));
  nsys_json_num(ev, "count", nsys__num(r, "count"));
  nsys_json_num(ev, "avgNs", nsys__num(r, "avgNs"));
  nsys_json_num(ev, "p95Ns", nsys__num(r, "p95Ns"));
  char b1[32], b2[32];
  /* where time goes, not time wasted: impact 0 so that waste findings of the
   * same severity come first */
  if (v) nsys_json_str(ev, "cause", nsys_hotspot_cause_name(v->cause));
  nsys__finding(f, "hotspot_kernel", pct >= 40 ? "warning" : "info", 0, ev,
                v && v->recommendation[0] ? v->recommendation : nsys__hotspot_fix(name),
                "Hotspot kernel %s: %.1f%% of GPU kernel time (%s over %.0f calls, avg %s)%s%s", name, pct,
                nsys__dur(b1, sizeof b1, nsys__num(r, "totalNs")), nsys__num(r, "count"),
                nsys__dur(b2, sizeof b2, nsys__num(r, "avgNs")), v && v->cause_text[0] ? "; " : "",
                v ? v->cause_text : "");
}

static void nsys__rule_nvtx(nsys__findings *f, const cJSON *nv) {
  const cJSON *s = nsys__get(nv, "summary");
  double ranges = nsys__num(s, "ranges"), kernels = nsys__num(s, "kernels"), pct = nsys__num(s, "kernelsInNvtxPct");
  if (kernels <= 0) return;
  if (ranges > 0 && pct >= 50) return;
  cJSON *ev = cJSON_CreateObject();
  nsys_json_num(ev, "nvtxRanges", ranges);
  nsys_json_num(ev, "kernels", kernels);
  nsys_json_num(ev, "kernelsInNvtxPct", pct);
  nsys__finding(f, "missing_nvtx", "info", 0, ev,
                "Annotate the training loop with NVTX ranges (torch.cuda.nvtx.range / nvtx.annotate around "
                "step, forward, backward, optimizer) so time can be attributed to code; nsys-ai can suggest "
                "where (source/annotate).",
                ranges == 0 ? "No NVTX ranges: GPU time cannot be attributed to code regions"
                            : "Only %.0f%% of kernels are launched inside an NVTX range", pct);
}

static void nsys__rule_sync(nsys__findings *f, const cJSON *sync, int64_t span) {
  const cJSON *s = nsys__get(sync, "summary");
  double total = nsys__num(s, "totalSyncNs"), idle = nsys__num(s, "gpuIdleDuringSyncNs");
  if (span <= 0 || idle < 1e6 || idle < 0.02 * (double)span) return;
  const cJSON *r = cJSON_GetArrayItem(nsys__get(sync, "rows"), 0);
  cJSON *ev = cJSON_CreateObject();
  nsys_json_num(ev, "totalSyncNs", total);
  nsys_json_num(ev, "gpuIdleDuringSyncNs", idle);
  nsys_json_num(ev, "calls", nsys__num(s, "calls"));
  if (r) {
    nsys_json_str(ev, "topApi", nsys__str(r, "api"));
    nsys_json_num(ev, "topApiCount", nsys__num(r, "count"));
    nsys_json_num(ev, "topApiNs", nsys__num(r, "totalNs"));
  }
  char b1[32], b2[32];
  nsys__finding(f, "sync_stalls", idle >= 0.1 * (double)span ? "critical" : "warning", idle, ev,
                "Each blocking synchronisation drains the GPU queue. Remove syncs from the steady-state loop "
                "(.item(), .cpu(), print of tensors, cudaDeviceSynchronize), use events or non_blocking "
                "copies, and sync once per step at most.",
                "Synchronisation stalls: %.0f blocking call%s take%s %s on the CPU while the GPU idles %s%s%s",
                nsys__num(s, "calls"), nsys__num(s, "calls") == 1 ? "" : "s", nsys__num(s, "calls") == 1 ? "s" : "", nsys__dur(b1, sizeof b1, total), nsys__dur(b2, sizeof b2, idle),
                r ? "; mostly " : "", r ? nsys__str(r, "api") : "");
}

static void nsys__rule_iters(nsys__findings *f, const cJSON *it) {
  const cJSON *s = nsys__get(it, "summary");
  double n = nsys__num(s, "count"), out = nsys__num(s, "outliers");
  const char *method = nsys__str(s, "method");
  int ndev = cJSON_GetArraySize(nsys__get(s, "devices"));
  if (ndev < 1) ndev = 1;
  double per_dev = n / ndev;
  if (out < 1 || per_dev < 3) return;
  /* gap-split windows are a heuristic (the first "iteration" often holds the
   * whole warm-up): outliers are only reported for marker-based iterations */
  if (method && !strcmp(method, "gap")) return;
  cJSON *ev = cJSON_CreateObject();
  nsys_json_num(ev, "iterationsPerDevice", round(per_dev));
  nsys_json_num(ev, "outliers", out);
  nsys_json_str(ev, "method", method);
  cJSON *list = cJSON_AddArrayToObject(ev, "outlierIterations");
  const cJSON *r, *worst = NULL;
  double excess = 0;
  char idx[256] = "";
  int n_idx = 0, seen[32];
  cJSON_ArrayForEach(r, nsys__get(it, "rows")) {
    if (!cJSON_IsTrue(nsys__get(r, "outlier"))) continue;
    cJSON *o = cJSON_CreateObject();
    nsys_json_num(o, "index", nsys__num(r, "index"));
    nsys_json_str(o, "name", nsys__str(r, "name"));
    nsys_json_num(o, "device", nsys__num(r, "device"));
    nsys_json_int(o, "start", nsys__int(r, "start"));
    nsys_json_int(o, "end", nsys__int(r, "end"));
    nsys_json_num(o, "durationNs", nsys__num(r, "durationNs"));
    nsys_json_num(o, "vsMedian", nsys__num(r, "vsMedian"));
    if (cJSON_GetArraySize(list) < 16) cJSON_AddItemToArray(list, o);
    else cJSON_Delete(o);
    double v = nsys__num(r, "vsMedian");
    if (v > 0) excess += nsys__num(r, "durationNs") * (1 - 1 / v);
    if (!worst || nsys__num(r, "vsMedian") > nsys__num(worst, "vsMedian")) worst = r;
    int k = (int)nsys__num(r, "index");
    bool dup = false;
    for (int q = 0; q < n_idx; q++) dup |= seen[q] == k;
    if (!dup && n_idx < 32) {
      seen[n_idx++] = k;
      size_t len = strlen(idx);
      if (len < sizeof idx - 16) snprintf(idx + len, sizeof idx - len, "%s#%d", n_idx > 1 ? ", " : "", k);
    }
  }
  cJSON_AddItemToObject(ev, "window", nsys__win(nsys__int(worst, "start"), nsys__int(worst, "end")));
  char b1[32];
  const char *wn = nsys__str(worst, "name");
  nsys__finding(f, "iteration_outliers", "warning", excess, ev,
                "Some iterations are much slower than the median: if it is the first ones, exclude warm-up "
                "(JIT, cudnn autotune, allocator growth) from the capture; otherwise look for periodic work "
                "(checkpointing, logging, evaluation, GC) or data-loading hiccups in those windows.",
                "Outlier iteration%s %s (> 1.5x the median of %.0f per GPU): worst %s%s%s%.2fx the median (%s)",
                n_idx == 1 ? "" : "s", idx, round(per_dev), wn ? "'" : "", wn ? wn : "", wn ? "' at " : "at ",
                nsys__num(worst, "vsMedian"), nsys__dur(b1, sizeof b1, nsys__num(worst, "durationNs")));
}

/* Per-device findings of one rule are merged: the title and numbers of the
 * worst device, evidence.devices listing all, evidence.perDevice theirs. */
static void nsys__merge_devices(cJSON *arr) {
  int n = cJSON_GetArraySize(arr);
  for (int i = 0; i < n; i++) {
    cJSON *a = cJSON_GetArrayItem(arr, i);
    const cJSON *dv = nsys__get(nsys__get(a, "evidence"), "device");
    if (!cJSON_IsNumber(dv)) continue;
    const char *id = nsys__str(a, "id");
    cJSON *group = cJSON_CreateArray();
    cJSON_AddItemToArray(group, cJSON_Duplicate(a, true));
    for (int j = i + 1; j < n;) {
      cJSON *b = cJSON_GetArrayItem(arr, j);
      if (!strcmp(nsys__str(b, "id"), id) && cJSON_IsNumber(nsys__get(nsys__get(b, "evidence"), "device"))) {
        cJSON_AddItemToArray(group, cJSON_DetachItemFromArray(arr, j));
        n--;
      } else {
        j++;
      }
    }
    int gn = cJSON_GetArraySize(group);
    if (gn == 1) {
      cJSON_Delete(group);
      continue;
    }
    /* worst = highest impact */
    cJSON *worst = NULL, *g;
    cJSON_ArrayForEach(g, group) if (!worst || nsys__num(g, "impactNs") > nsys__num(worst, "impactNs")) worst = g;
    cJSON *m = cJSON_Duplicate(worst, true);
    cJSON *ev = nsys__get(m, "evidence") ? cJSON_GetObjectItemCaseSensitive(m, "evidence") : NULL;
    cJSON *devs = cJSON_CreateArray(), *per = cJSON_CreateArray();
    double impact = 0;
    const char *sev = "info";
    cJSON_ArrayForEach(g, group) {
      cJSON_AddItemToArray(devs, cJSON_CreateNumber(nsys__num(nsys__get(g, "evidence"), "device")));
      cJSON_AddItemToArray(per, cJSON_Duplicate(nsys__get(g, "evidence"), true));
      impact += nsys__num(g, "impactNs");
      if (nsys__sev_rank(nsys__str(g, "severity")) < nsys__sev_rank(sev)) sev = nsys__str(g, "severity");
    }
    cJSON_AddItemToObject(ev, "devices", devs);
    cJSON_AddItemToObject(ev, "perDevice", per);
    cJSON_ReplaceItemInObject(m, "severity", cJSON_CreateString(sev));
    cJSON_ReplaceItemInObject(m, "impactNs", cJSON_CreateNumber(impact));
    char title[700], list[128] = "";
    const cJSON *dv2;
    cJSON_ArrayForEach(dv2, devs) {
      size_t len = strlen(list);
      if (len < sizeof list - 12) snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", (int)dv2->valuedouble);
    }
    snprintf(title, sizeof title, "[GPUs %s; worst shown] %s", list, nsys__str(m, "title"));
    cJSON_ReplaceItemInObject(m, "title", cJSON_CreateString(title));
    cJSON_ReplaceItemInArray(arr, i, m);
    cJSON_Delete(group);
  }
}

/* ------------------------------------------------------------------ build */

cJSON *nsys_report_build(nsys_task *task, struct nsys_profile *p, const nsys_index *ix) {
  static const char *const names[] = {"top_kernels", "gpu_idle_gaps", "overlap", "nccl_breakdown",
                                      "iterations", "memory_transfers", "kernel_launch_overhead",
                                      "sync_cost", "nvtx_summary"};
  enum { N = NSYS_ARRAY_LEN(names) };
  nsys_acache cache; /* what the analyses derive from the index alone: built once for all of them */
  nsys_acache_init(&cache, ix);
  nsys_arun runs[N];
  for (size_t i = 0; i < N; i++) runs[i] = (nsys_arun){.p = p, .ix = ix, .name = names[i], .cache = &cache};
  bool ok = nsys_analysis_run_all(task, runs, N, "report");
  nsys_acache_dispose(&cache);
  cJSON *analyses = cJSON_CreateObject();
  const cJSON *r[N];
  for (size_t i = 0; i < N; i++) {
    cJSON *x = runs[i].result;
    /* a missing table is not fatal for the report; the first other failure (in order) is */
    if (ok && !x && !nsys_task_cancelled(task) && nsys_task_forgive(&runs[i].task, NSYS_E_DATA_MISSING)) {
      x = cJSON_CreateObject();
      cJSON_AddItemToObject(x, "rows", cJSON_CreateArray());
      cJSON_AddItemToObject(x, "summary", cJSON_CreateObject());
    } else if (ok && !x) {
      ok = nsys_task_cancelled(task) ? nsys_task_fail_cancelled(task) : nsys_task_fail_from(task, &runs[i].task);
    }
    if (x) cJSON_AddItemToObject(analyses, names[i], x);
    r[i] = x;
  }
  if (ok && nsys_task_cancelled(task)) ok = nsys_task_fail_cancelled(task);
  if (!ok) {
    cJSON_Delete(analyses);
    return NULL;
  }
  /* explain's verdict on the largest kernel (explain/hotspot.h) */
  nsys_explain_hotspot hot;
  const cJSON *top0 = cJSON_GetArrayItem(nsys__get(r[0], "rows"), 0);
  bool have_hot = top0 && nsys__num(top0, "pctOfGpu") >= 25 && /* the rule's threshold: only then is it asked */
                  nsys_explain_hotspot_of(p, ix, nsys__str(top0, "name"), task, &hot);
  if (!have_hot && nsys_task_failed(task)) {
    cJSON_Delete(analyses);
    return NULL;
  }
  int64_t span = ix->span_end - ix->span_start;
  nsys__findings f = {cJSON_CreateArray(), ix->span_start, ix->span_end};
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
  nsys__merge_devices(f.arr);
  /* sort findings */
  int n = cJSON_GetArraySize(f.arr);
  cJSON **v = nsys_xcalloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[i] = cJSON_DetachItemFromArray(f.arr, 0);
  if ((size_t)n > 1) qsort(v, (size_t)n, sizeof *v, nsys__cmp_finding);
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(f.arr, v[i]);
  free(v);

  cJSON *res = cJSON_CreateObject();
  nsys_json_str(res, "file", p ? p->path : NULL);
  cJSON *gpus = cJSON_AddArrayToObject(res, "gpus");
  for (int i = 0; p && i < p->info.n_gpus; i++) {
    cJSON *g = cJSON_CreateObject();
    nsys_json_int(g, "id", p->info.gpus[i].id);
    nsys_json_str(g, "name", p->info.gpus[i].name);
    if (p->info.gpus[i].sm_count) nsys_json_int(g, "smCount", p->info.gpus[i].sm_count);
    cJSON_AddItemToArray(gpus, g);
  }
  cJSON_AddItemToObject(res, "window", nsys__win(ix->span_start, ix->span_end));
  cJSON *tot = cJSON_AddObjectToObject(res, "totals");
  nsys_json_int(tot, "durationNs", span);
  const cJSON *ts = nsys__get(r[0], "summary");
  nsys_json_num(tot, "kernels", nsys__num(ts, "kernelCount"));
  nsys_json_num(tot, "kernelNs", nsys__num(ts, "totalKernelNs"));
  nsys_json_num(tot, "gpuBusyNs", nsys__num(ts, "gpuBusyNs"));
  nsys_json_num(tot, "memcpys", nsys__num(nsys__get(r[5], "summary"), "count"));
  nsys_json_num(tot, "nvtxRanges", nsys__num(nsys__get(r[8], "summary"), "ranges"));
  nsys_json_num(tot, "iterations", nsys__num(nsys__get(r[4], "summary"), "count"));
  nsys_json_str(tot, "iterationMethod", nsys__str(nsys__get(r[4], "summary"), "method"));
  int32_t ndev = 0;
  for (uint32_t t = 0; t < ix->n_tracks; t++)
    if (t == 0 || ix->tracks[t].device != ix->tracks[t - 1].device) ndev++;
  nsys_json_int(tot, "devices", ndev);
  cJSON *cnt = cJSON_AddObjectToObject(res, "counts");
  int c3[3] = {0};
  const cJSON *it;
  cJSON_ArrayForEach(it, f.arr) c3[nsys__sev_rank(nsys__str(it, "severity"))]++;
  nsys_json_int(cnt, "critical", c3[0]);
  nsys_json_int(cnt, "warning", c3[1]);
  nsys_json_int(cnt, "info", c3[2]);
  cJSON_AddItemToObject(res, "findings", f.arr);
  cJSON_AddItemToObject(res, "analyses", analyses);
  nsys_task_progress_end(task, NULL);
  return res;
}
