/* agent/ask (see agent.h). */
#include "agent/agent.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "methods/analysis_json.h" /* the facts of an analysis result, read as JSON */
#include "rpc/json_int.h"
#include "common/util.h"
#include "explain/kb.h"
#include "explain/kernel_name.h"
#include "explain/kernel_stats.h"
#include "mcp/agent_loop.h" /* the tool loop over the MCP tools (a layering exception: ARCHITECTURE.md) */
#include "profile/profile.h"

enum {
  NSYS__EV_OVERVIEW,
  NSYS__EV_TOP,
  NSYS__EV_COMM,
  NSYS__EV_LAUNCH,
  NSYS__EV_COPIES,
  NSYS__EV_PRECISION,
  NSYS__EV_COUNT
};

static const char *const nsys__ev_ids[] = {"gpu_utilization", "top_kernels", "communication",
                                           "launch_overhead", "memory_copies", "precision"};
static const char *const nsys__ev_titles[] = {"GPU utilization", "Top kernels", "NCCL communication",
                                              "Small kernels and launch overhead", "Memory copies",
                                              "Precision and tensor cores"};

/* Keyword routing (lower-case substrings of the question). */
static const char *const nsys__kw[NSYS__EV_COUNT][14] = {
    {"idle", "bubble", "gap", "utiliz", "busy", "stall", "starv", "wait", "overall", "summary", NULL},
    {"kernel", "slow", "hot", "top", "bottleneck", "expensive", "time", "longest", "dominat", "optimi", "why", NULL},
    {"nccl", "communication", "allreduce", "all-reduce", "all_reduce", "collective", "overlap", "distributed",
     "multi-gpu", "rank", "allgather", "reduce_scatter", "sendrecv", NULL},
    {"launch", "small", "overhead", "cuda graph", "cpu", "tiny", "latency", NULL},
    {"memcpy", "copy", "copies", "transfer", "h2d", "d2h", "htod", "dtoh", "pcie", "memset", "pinned", NULL},
    {"precision", "fp32", "tf32", "bf16", "fp16", "fp8", "tensor core", "mfu", "flops", "gemm", "matmul", NULL},
};

typedef struct {
  int64_t s, e;
} nsys__iv;

static int nsys__cmp_iv(const void *a, const void *b) {
  const nsys__iv *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->e < y->e ? -1 : x->e > y->e);
}

/* Sorts and merges in place; returns the merged count. */
static size_t nsys__merge(nsys__iv *v, size_t n) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, nsys__cmp_iv);
  size_t m = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[m].e) {
      if (v[i].e > v[m].e) v[m].e = v[i].e;
    } else {
      v[++m] = v[i];
    }
  }
  return m + 1;
}

static int64_t nsys__len(const nsys__iv *v, size_t n) {
  int64_t t = 0;
  for (size_t i = 0; i < n; i++) t += v[i].e - v[i].s;
  return t;
}

static int64_t nsys__intersect(const nsys__iv *a, size_t na, const nsys__iv *b, size_t nb) {
  int64_t t = 0;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    int64_t s = a[i].s > b[j].s ? a[i].s : b[j].s, e = a[i].e < b[j].e ? a[i].e : b[j].e;
    if (e > s) t += e - s;
    if (a[i].e < b[j].e) i++;
    else j++;
  }
  return t;
}

static void nsys__fact(cJSON *facts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nsys__fact(cJSON *facts, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_strbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  cJSON_AddItemToArray(facts, cJSON_CreateString(b.data ? b.data : ""));
  nsys_strbuf_free(&b);
}

static cJSON *nsys__ev_new(cJSON *list, int id, cJSON **facts, cJSON **data) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", nsys__ev_ids[id]);
  cJSON_AddStringToObject(o, "title", nsys__ev_titles[id]);
  *facts = cJSON_AddArrayToObject(o, "facts");
  *data = cJSON_AddObjectToObject(o, "data");
  cJSON_AddItemToArray(list, o);
  return o;
}

/* Per-name classification: 1 NCCL/communication, 2 GEMM without tensor
 * cores, 4 GEMM; computed once per distinct name id. */
typedef struct {
  const nsys_index *ix;
  uint8_t *cls; /* 0 = not computed; bit 7 = computed */
} nsys__classes;

static uint8_t nsys__class_of(nsys__classes *c, uint32_t op) {
  const nsys_index *ix = c->ix;
  uint32_t id = ix->ops.name[op];
  if (id >= ix->strings.count) return 0x80;
  if (c->cls[id]) return c->cls[id];
  const char *sn = nsys_strtab_get(&ix->strings, id);
  const char *fn = nsys_strtab_get(&ix->strings, ix->ops.full_name[op]);
  const nsys_kb_pattern *pat = nsys_kb_match(nsys_kb_get(), sn, fn);
  nsys_kname_info info;
  nsys_kname_analyze(sn, fn, &info);
  uint8_t v = 0x80;
  if (info.is_nccl || (pat && strcmp(pat->category, "communication") == 0)) v |= 1;
  if (pat && strcmp(pat->category, "gemm") == 0) {
    v |= 4;
    if (info.tensor_cores == 0) v |= 2;
  }
  c->cls[id] = v;
  return v;
}

static void nsys__fmt(char *o, size_t cap, int64_t ns) { nsys_fmt_duration(o, cap, ns); }

/* ---- the analyses -------------------------------------------------------- */

static bool nsys__overview(nsys_call *call, const nsys_index *ix, cJSON *list) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_OVERVIEW, &facts, &data);
  cJSON *devs = cJSON_AddArrayToObject(data, "devices");
  /* devices present, in track order */
  for (uint32_t t = 0; t < ix->n_tracks;) {
    int32_t dev = ix->tracks[t].device;
    size_t n = 0;
    uint32_t t2 = t;
    for (; t2 < ix->n_tracks && ix->tracks[t2].device == dev; t2++) n += ix->tracks[t2].count;
    nsys__iv *v = nsys_xmalloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    for (uint32_t q = t; q < t2; q++)
      for (uint32_t i = ix->tracks[q].first; i < ix->tracks[q].first + ix->tracks[q].count; i++)
        v[k++] = (nsys__iv){ix->ops.start[i], ix->ops.end[i]};
    if (nsys_call_cancelled(call)) {
      free(v);
      return false;
    }
    size_t m = nsys__merge(v, k);
    int64_t busy = nsys__len(v, m);
    int64_t span = m ? v[m - 1].e - v[0].s : 0;
    int64_t largest_gap = 0;
    for (size_t i = 1; i < m; i++)
      if (v[i].s - v[i - 1].e > largest_gap) largest_gap = v[i].s - v[i - 1].e;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "device", dev);
    cJSON_AddNumberToObject(d, "ops", (double)k);
    cJSON_AddNumberToObject(d, "spanNs", (double)span);
    cJSON_AddNumberToObject(d, "busyNs", (double)busy);
    cJSON_AddNumberToObject(d, "busyPct", span > 0 ? 100.0 * (double)busy / (double)span : 0);
    cJSON_AddNumberToObject(d, "largestGapNs", (double)largest_gap);
    cJSON_AddItemToArray(devs, d);
    char a[32], b[32], g[32];
    nsys__fmt(a, sizeof a, busy);
    nsys__fmt(b, sizeof b, span);
    nsys__fmt(g, sizeof g, largest_gap);
    nsys__fact(facts, "GPU %d: busy %.1f%% of its %s span (%s with at least one GPU operation running); largest idle gap %s.",
               dev, span > 0 ? 100.0 * (double)busy / (double)span : 0.0, b, a, g);
    free(v);
    t = t2;
  }
  if (ix->n_tracks == 0) nsys__fact(facts, "The profile has no GPU operations.");
  return true;
}

static void nsys__top(const nsys_profile *p, const nsys_index *ix, cJSON *list, int64_t kernel_ns) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_TOP, &facts, &data);
  uint32_t ids[5];
  uint32_t n = nsys_kstats_top(p, ix, NSYS_KSTATS_BY_NAME, NSYS_OP_KERNEL, ids, 5);
  cJSON *arr = cJSON_AddArrayToObject(data, "kernels");
  char tot[32], avg[32];
  nsys__fmt(tot, sizeof tot, kernel_ns);
  nsys__fact(facts, "Kernels ran for %s in total (summed durations).", tot);
  for (uint32_t i = 0; i < n; i++) {
    nsys_kstats st;
    if (!nsys_kstats_get(p, ix, NSYS_KSTATS_BY_NAME, ids[i], &st, NULL, NULL, NULL)) continue;
    const char *sn = nsys_strtab_get(&ix->strings, ids[i]);
    const char *fn = nsys_strtab_get(&ix->strings, ix->ops.full_name[st.longest_op]);
    /* a short name shared by several instantiations is described by itself */
    const char *idf = st.n_variants > 1 ? "" : fn;
    const nsys_kb_pattern *pat = nsys_kb_match(nsys_kb_get(), sn, idf);
    char disp[NSYS_KNAME_DISPLAY_MAX + 8];
    nsys_kname_display(idf, sn, disp, sizeof disp);
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "name", sn);
    cJSON_AddStringToObject(k, "displayName", disp);
    cJSON_AddStringToObject(k, "origin", pat ? pat->origin : "unknown");
    cJSON_AddStringToObject(k, "category", pat ? pat->category : "unknown");
    cJSON_AddNumberToObject(k, "count", st.count);
    cJSON_AddNumberToObject(k, "totalNs", (double)st.total_ns);
    cJSON_AddNumberToObject(k, "avgNs", st.avg_ns);
    cJSON_AddNumberToObject(k, "pctKernelTime", st.pct_kind_time);
    cJSON_AddItemToArray(arr, k);
    nsys__fmt(tot, sizeof tot, st.total_ns);
    nsys__fmt(avg, sizeof avg, (int64_t)st.avg_ns);
    nsys__fact(facts, "#%u %s (%s, %s): %.1f%% of kernel time, %s over %u calls (avg %s).", i + 1, sn,
               pat ? pat->origin : "origin unknown", pat ? pat->category : "?", st.pct_kind_time, tot, st.count, avg);
  }
}

static bool nsys__comm(nsys_call *call, const nsys_index *ix, nsys__classes *cls, cJSON *list, int64_t kernel_ns) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_COMM, &facts, &data);
  int64_t comm_sum = 0, overlap_all = 0, comm_union_all = 0;
  uint32_t comm_count = 0;
  for (uint32_t t = 0; t < ix->n_tracks;) {
    int32_t dev = ix->tracks[t].device;
    uint32_t t2 = t;
    size_t n = 0;
    for (; t2 < ix->n_tracks && ix->tracks[t2].device == dev; t2++) n += ix->tracks[t2].count;
    nsys__iv *cv = nsys_xmalloc((n ? n : 1) * sizeof *cv), *kv = nsys_xmalloc((n ? n : 1) * sizeof *kv);
    size_t nc = 0, nk = 0;
    for (uint32_t q = t; q < t2; q++)
      for (uint32_t i = ix->tracks[q].first; i < ix->tracks[q].first + ix->tracks[q].count; i++) {
        if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
        if (nsys__class_of(cls, i) & 1) {
          cv[nc++] = (nsys__iv){ix->ops.start[i], ix->ops.end[i]};
          comm_sum += nsys_op_dur(ix, i);
          comm_count++;
        } else {
          kv[nk++] = (nsys__iv){ix->ops.start[i], ix->ops.end[i]};
        }
      }
    if (nsys_call_cancelled(call)) {
      free(cv);
      free(kv);
      return false;
    }
    size_t mc = nsys__merge(cv, nc), mk = nsys__merge(kv, nk);
    int64_t cu = nsys__len(cv, mc), ov = nsys__intersect(cv, mc, kv, mk);
    comm_union_all += cu;
    overlap_all += ov;
    if (nc) {
      char a[32];
      nsys__fmt(a, sizeof a, cu);
      nsys__fact(facts, "GPU %d: communication kernels active for %s; %.1f%% of that time overlaps compute kernels.", dev, a,
                 cu > 0 ? 100.0 * (double)ov / (double)cu : 0.0);
    }
    free(cv);
    free(kv);
    t = t2;
  }
  cJSON_AddNumberToObject(data, "commKernels", comm_count);
  cJSON_AddNumberToObject(data, "commSumNs", (double)comm_sum);
  cJSON_AddNumberToObject(data, "commUnionNs", (double)comm_union_all);
  cJSON_AddNumberToObject(data, "overlapNs", (double)overlap_all);
  cJSON_AddNumberToObject(data, "pctKernelTime", kernel_ns > 0 ? 100.0 * (double)comm_sum / (double)kernel_ns : 0);
  cJSON_AddNumberToObject(data, "overlapPct", comm_union_all > 0 ? 100.0 * (double)overlap_all / (double)comm_union_all : 0);
  if (comm_count == 0) nsys__fact(facts, "No NCCL or other communication kernels in this profile.");
  else {
    char a[32];
    nsys__fmt(a, sizeof a, comm_sum);
    nsys__fact(facts, "%u communication kernels, %s in total (%.1f%% of kernel time); %.1f%% of their active time is hidden behind compute.",
               comm_count, a, kernel_ns > 0 ? 100.0 * (double)comm_sum / (double)kernel_ns : 0.0,
               comm_union_all > 0 ? 100.0 * (double)overlap_all / (double)comm_union_all : 0.0);
  }
  return true;
}

static void nsys__launch(const nsys_index *ix, cJSON *list, int64_t kernel_ns) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_LAUNCH, &facts, &data);
  uint32_t small = 0, kernels = 0;
  int64_t small_ns = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
    kernels++;
    int64_t d = nsys_op_dur(ix, i);
    if (d < 10000) {
      small++;
      small_ns += d;
    }
  }
  cJSON_AddNumberToObject(data, "kernels", kernels);
  cJSON_AddNumberToObject(data, "under10us", small);
  cJSON_AddNumberToObject(data, "under10usNs", (double)small_ns);
  char a[32];
  nsys__fmt(a, sizeof a, small_ns);
  nsys__fact(facts, "%u of %u kernels (%.1f%%) ran for less than 10 us; together %s (%.1f%% of kernel time).", small, kernels,
             kernels ? 100.0 * small / kernels : 0.0, a, kernel_ns > 0 ? 100.0 * (double)small_ns / (double)kernel_ns : 0.0);
  if (kernels && small * 2 > kernels)
    nsys__fact(facts, "Most kernels are tiny: launch overhead likely matters; fusion (torch.compile) or CUDA graphs help.");
}

static void nsys__copies(const nsys_profile *p, const nsys_index *ix, cJSON *list) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_COPIES, &facts, &data);
  uint32_t ids[8];
  cJSON *arr = cJSON_AddArrayToObject(data, "copies");
  uint32_t n = nsys_kstats_top(p, ix, NSYS_KSTATS_BY_NAME, NSYS_OP_MEMCPY, ids, 6);
  uint32_t n2 = nsys_kstats_top(p, ix, NSYS_KSTATS_BY_NAME, NSYS_OP_MEMSET, ids + n, 2);
  for (uint32_t i = 0; i < n + n2; i++) {
    nsys_kstats st;
    if (!nsys_kstats_get(p, ix, NSYS_KSTATS_BY_NAME, ids[i], &st, NULL, NULL, NULL)) continue;
    const char *nm = nsys_strtab_get(&ix->strings, ids[i]);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", nm);
    cJSON_AddNumberToObject(o, "count", st.count);
    cJSON_AddNumberToObject(o, "totalNs", (double)st.total_ns);
    cJSON_AddNumberToObject(o, "pctGpuTime", st.pct_gpu_time);
    cJSON_AddItemToArray(arr, o);
    char a[32];
    nsys__fmt(a, sizeof a, st.total_ns);
    nsys__fact(facts, "%s: %u operations, %s (%.1f%% of GPU operation time).", nm, st.count, a, st.pct_gpu_time);
  }
  if (n + n2 == 0) nsys__fact(facts, "No memory copies or memsets in this profile.");
}

static void nsys__precision(const nsys_index *ix, nsys__classes *cls, cJSON *list) {
  cJSON *facts, *data;
  nsys__ev_new(list, NSYS__EV_PRECISION, &facts, &data);
  int64_t gemm_ns = 0, ffma_ns = 0;
  uint32_t gemm_n = 0, ffma_n = 0;
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
    uint8_t c = nsys__class_of(cls, i);
    if (!(c & 4)) continue;
    gemm_ns += nsys_op_dur(ix, i);
    gemm_n++;
    if (c & 2) {
      ffma_ns += nsys_op_dur(ix, i);
      ffma_n++;
    }
  }
  cJSON_AddNumberToObject(data, "gemmKernels", gemm_n);
  cJSON_AddNumberToObject(data, "gemmNs", (double)gemm_ns);
  cJSON_AddNumberToObject(data, "noTensorCoreGemmKernels", ffma_n);
  cJSON_AddNumberToObject(data, "noTensorCoreGemmNs", (double)ffma_ns);
  char a[32], b[32];
  nsys__fmt(a, sizeof a, gemm_ns);
  nsys__fmt(b, sizeof b, ffma_ns);
  if (gemm_n == 0) nsys__fact(facts, "No GEMM kernels recognised in this profile.");
  else
    nsys__fact(facts, "%u GEMM kernels took %s; %u of them (%s, %.1f%% of GEMM time) run in FP32 without tensor cores.", gemm_n,
               a, ffma_n, b, gemm_ns > 0 ? 100.0 * (double)ffma_ns / (double)gemm_ns : 0.0);
  if (ffma_n && ffma_ns * 10 > gemm_ns)
    nsys__fact(facts, "Enable TF32 or BF16 autocast: FP32 FFMA GEMMs run far below the tensor-core peak.");
}

/* ---- the analysis module's analyses (analysis/run) ------------------------ */

/* Integers exactly, other numbers with 4 significant decimals. */
/* An integer with all its digits (timestamps of epoch clocks), else 4 significant digits. */
static void nsys__num_text(nsys_strbuf *b, const cJSON *item) {
  int64_t v;
  if (nsys_json_get_i64(item, &v)) nsys_strbuf_printf(b, "%lld", (long long)v);
  else nsys_strbuf_printf(b, "%.4g", item->valuedouble);
}

/* Scalars of an analysis summary as "key = value" facts; arrays of objects
 * (per device, per stream) become one line per element (first few). */
static void nsys__summary_facts(const cJSON *summary, cJSON *facts) {
  nsys_strbuf line;
  nsys_strbuf_init(&line);
  const cJSON *it;
  cJSON_ArrayForEach(it, summary) {
    if (cJSON_IsNumber(it)) {
      nsys_strbuf_printf(&line, "%s%s = ", line.len ? ", " : "", it->string);
      nsys__num_text(&line, it);
    }
    else if (cJSON_IsString(it)) nsys_strbuf_printf(&line, "%s%s = %s", line.len ? ", " : "", it->string, it->valuestring);
    else if (cJSON_IsBool(it)) nsys_strbuf_printf(&line, "%s%s = %s", line.len ? ", " : "", it->string, cJSON_IsTrue(it) ? "true" : "false");
  }
  if (line.len) cJSON_AddItemToArray(facts, cJSON_CreateString(line.data));
  nsys_strbuf_free(&line);
  cJSON_ArrayForEach(it, summary) {
    if (!cJSON_IsArray(it)) continue;
    int k = 0;
    const cJSON *el;
    cJSON_ArrayForEach(el, it) {
      if (!cJSON_IsObject(el) || k++ >= 4) break;
      nsys_strbuf l2;
      nsys_strbuf_init(&l2);
      nsys_strbuf_printf(&l2, "%s[%d]:", it->string, k - 1);
      const cJSON *f;
      cJSON_ArrayForEach(f, el) {
        if (cJSON_IsNumber(f)) {
          nsys_strbuf_printf(&l2, " %s = ", f->string);
          nsys__num_text(&l2, f);
        }
        else if (cJSON_IsString(f)) nsys_strbuf_printf(&l2, " %s = %s", f->string, f->valuestring);
      }
      cJSON_AddItemToArray(facts, cJSON_CreateString(l2.data));
      nsys_strbuf_free(&l2);
    }
  }
}

/* Runs one registered analysis; adds {id: "analysis:NAME", ...} to list.
 * A failed analysis (data missing) is skipped; false only when cancelled. */
static bool nsys__run_analysis(nsys_call *call, nsys_profile *p, const nsys_index *ix, const char *name, cJSON *list) {
  const nsys_analysis *a = nsys_analysis_find(name);
  if (!a) return true;
  nsys_aresult *res = nsys_analysis_exec(&call->task, p, ix, name, NULL, NULL);
  cJSON *r = res ? nsys_aresult_json(res) : NULL;
  nsys_aresult_free(res);
  if (!r) {
    if (call->task.err == NSYS_E_CANCELLED || nsys_call_cancelled(call)) return false;
    /* forget the sub-analysis error: the answer goes on without it */
    nsys_task_forgive(&call->task, NSYS_OK);
    cJSON_Delete(call->err_data);
    call->err_data = NULL;
    return true;
  }
  cJSON *o = cJSON_CreateObject();
  char *id = nsys_xasprintf("analysis:%s", name);
  cJSON_AddStringToObject(o, "id", id);
  free(id);
  cJSON_AddStringToObject(o, "title", a->description);
  cJSON *facts = cJSON_AddArrayToObject(o, "facts");
  cJSON *summary = cJSON_DetachItemFromObjectCaseSensitive(r, "summary");
  if (!summary) summary = cJSON_CreateObject();
  nsys__summary_facts(summary, facts);
  cJSON_AddItemToObject(o, "data", summary);
  cJSON_AddItemToArray(list, o);
  cJSON_Delete(r);
  return true;
}

/* ---- ask ---------------------------------------------------------------- */

static bool nsys__wants(const char *lq, int ev) {
  for (int k = 0; nsys__kw[ev][k]; k++)
    if (strstr(lq, nsys__kw[ev][k])) return true;
  return false;
}

cJSON *nsys_agent_ask(nsys_call *call, nsys_profile *p, const nsys_index *ix, const char *question,
                      const nsys_llm_config *cfg) {
  if (!nsys_agent_loop_check(call)) return NULL;
  char *lq = nsys_xstrdup(question);
  for (char *c = lq; *c; c++) *c = (char)tolower((unsigned char)*c);
  bool want[NSYS__EV_COUNT] = {false};
  int n_want = 0;
  for (int e = 0; e < NSYS__EV_COUNT; e++)
    if (nsys__wants(lq, e)) {
      want[e] = true;
      n_want++;
    }
  free(lq);
  if (n_want == 0) {
    want[NSYS__EV_OVERVIEW] = want[NSYS__EV_TOP] = want[NSYS__EV_COMM] = want[NSYS__EV_LAUNCH] = true;
  }
  want[NSYS__EV_OVERVIEW] = want[NSYS__EV_TOP] = true; /* always the context */

  nsys_call_progress_begin(call, "Analysing the profile");
  int64_t all_ns = 0, kernel_ns = 0;
  nsys_kstats_totals(p, ix, &all_ns, &kernel_ns);
  nsys__classes cls = {ix, nsys_xcalloc(ix->strings.count ? ix->strings.count : 1, 1)};
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "question", question);
  cJSON *list = cJSON_CreateArray();
  bool ok = true;
  if (want[NSYS__EV_OVERVIEW]) ok = nsys__overview(call, ix, list);
  nsys_call_progress(call, 30, "top kernels");
  if (ok && want[NSYS__EV_TOP]) nsys__top(p, ix, list, kernel_ns);
  nsys_call_progress(call, 50, "communication");
  if (ok && want[NSYS__EV_COMM]) ok = nsys__comm(call, ix, &cls, list, kernel_ns);
  if (ok && want[NSYS__EV_LAUNCH]) nsys__launch(ix, list, kernel_ns);
  if (ok && want[NSYS__EV_COPIES]) nsys__copies(p, ix, list);
  if (ok && want[NSYS__EV_PRECISION]) nsys__precision(ix, &cls, list);
  free(cls.cls);
  /* the analysis module's deeper analyses for what the question is about */
  nsys_call_progress(call, 60, "analyses");
  {
    char *lq2 = nsys_xstrdup(question);
    for (char *c = lq2; *c; c++) *c = (char)tolower((unsigned char)*c);
    const char *runs[8];
    int nr = 0;
    if (n_want == 0 || nsys__wants(lq2, NSYS__EV_OVERVIEW)) runs[nr++] = "gpu_idle_gaps";
    if (n_want == 0 || nsys__wants(lq2, NSYS__EV_COMM)) {
      runs[nr++] = "overlap";
      runs[nr++] = "nccl_breakdown";
    }
    if (nsys__wants(lq2, NSYS__EV_LAUNCH)) runs[nr++] = "kernel_launch_overhead";
    if (nsys__wants(lq2, NSYS__EV_COPIES)) runs[nr++] = "memory_transfers";
    if (strstr(lq2, "sync") || strstr(lq2, "block")) runs[nr++] = "sync_cost";
    if (strstr(lq2, "iteration") || strstr(lq2, "step") || strstr(lq2, "epoch")) runs[nr++] = "iterations";
    free(lq2);
    for (int i = 0; ok && i < nr; i++) ok = nsys__run_analysis(call, p, ix, runs[i], list);
  }
  if (!ok || nsys_call_cancelled(call)) {
    cJSON_Delete(list);
    cJSON_Delete(res);
    nsys_call_progress_end(call, NULL);
    return nsys_call_fail_cancelled(call);
  }
  cJSON *analyses = cJSON_AddArrayToObject(res, "analyses");
  const cJSON *ev;
  cJSON_ArrayForEach(ev, list) {
    cJSON_AddItemToArray(analyses, cJSON_CreateString(cJSON_GetObjectItemCaseSensitive(ev, "id")->valuestring));
  }
  /* the deterministic evidence answer */
  nsys_strbuf md;
  nsys_strbuf_init(&md);
  nsys_strbuf_puts(&md, "**Evidence from the profile**\n");
  cJSON_ArrayForEach(ev, list) {
    nsys_strbuf_printf(&md, "\n*%s*\n", cJSON_GetObjectItemCaseSensitive(ev, "title")->valuestring);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ev, "facts")) nsys_strbuf_printf(&md, "- %s\n", f->valuestring);
  }
  cJSON_AddItemToObject(res, "evidence", list);
  if (cfg) {
    nsys_call_progress(call, 70, "asking the LLM");
    static const char *system =
        "You are an expert in GPU performance for machine-learning workloads. Answer the user's question about an "
        "Nsight Systems profile using the evidence given (kernel names and statistics) and what the tools return. Cite "
        "the numbers. If neither answers the question, say what is missing. At most 200 words.";
    nsys_strbuf u;
    nsys_strbuf_init(&u);
    nsys_strbuf_printf(&u, "Question: %s\n\n%s", question, md.data);
    cJSON *lo = cJSON_CreateObject();
    cJSON_AddStringToObject(lo, "model", cfg->model);
    cJSON_AddStringToObject(lo, "provider", cfg->provider);
    cJSON_AddFalseToObject(lo, "cached");
    char *text = nsys_agent_loop(call, cfg, p->id, system, u.data, lo);
    nsys_strbuf_free(&u);
    if (!text) {
      cJSON_Delete(lo);
      nsys_strbuf_free(&md);
      cJSON_Delete(res);
      nsys_call_progress_end(call, NULL);
      return NULL;
    }
    char *answer = nsys_xasprintf("%s\n\n---\n%s", text, md.data);
    cJSON_AddStringToObject(res, "mode", "llm");
    cJSON_AddStringToObject(res, "answer", answer);
    cJSON_AddItemToObject(res, "llm", lo);
    free(answer);
    free(text);
  } else {
    cJSON_AddStringToObject(res, "mode", "evidence");
    cJSON_AddStringToObject(res, "answer", md.data);
    cJSON_AddNullToObject(res, "llm");
  }
  nsys_strbuf_free(&md);
  nsys_call_progress_end(call, NULL);
  return res;
}
