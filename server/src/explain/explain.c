/* kernel/explain: the typed result (see explain.h). */
#include "explain/explain.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "explain/advice.h"
#include "explain/context.h"
#include "explain/gpu_specs.h"
#include "explain/kb.h"
#include "explain/kernel_name.h"
#include "explain/kernel_stats.h"
#include "explain/occupancy.h"
#include "profile/profile.h"

/* ---- helpers ------------------------------------------------------------ */

static bool nsys__icontains(const char *h, const char *n) {
  size_t nl = strlen(n);
  for (; *h; h++)
    if (strncasecmp(h, n, nl) == 0) return true;
  return false;
}

const char *nsys_explain_guess_category(const char *name) {
  if (!name) return "unknown";
  static const struct {
    const char *kw, *cat;
  } rules[] = {{"gemm", "gemm"},       {"matmul", "gemm"},      {"mma", "gemm"},        {"attn", "attention"},
               {"attention", "attention"}, {"softmax", "softmax"}, {"norm", "normalization"}, {"reduc", "reduction"},
               {"sum", "reduction"},    {"scan", "scan"},        {"sort", "sort"},       {"transpose", "copy"},
               {"copy", "copy"},        {"memset", "memset"},    {"fill", "memset"},     {"conv", "convolution"},
               {"fft", "fft"},          {"histogram", "reduction"}, {"gather", "index"}, {"scatter", "index"},
               {"embed", "embedding"},  {"allreduce", "communication"}, {"all_reduce", "communication"}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(rules); i++)
    if (nsys__icontains(name, rules[i].kw)) return rules[i].cat;
  return "unknown";
}

static void nsys__fmt_ns(char *out, size_t cap, double ns) { nsys_fmt_duration(out, cap, (int64_t)llround(ns)); }

/* "23.4 MiB" */
static void nsys__fmt_bytes(char *out, size_t cap, int64_t b) {
  if (b >= 1 << 30) snprintf(out, cap, "%.1f GiB", (double)b / (1 << 30));
  else if (b >= 1 << 20) snprintf(out, cap, "%.1f MiB", (double)b / (1 << 20));
  else if (b >= 1 << 10) snprintf(out, cap, "%.1f KiB", (double)b / (1 << 10));
  else snprintf(out, cap, "%lld B", (long long)b);
}

/* Appends a copy of s. */
static void nsys__text(nsys_explain_texts *t, const char *s) {
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 8;
    t->v = nsys_xrealloc(t->v, (size_t)t->cap * sizeof *t->v);
  }
  t->v[t->n++] = nsys_xstrdup(s);
}

static void nsys__texts_free(nsys_explain_texts *t) {
  for (int i = 0; i < t->n; i++) free(t->v[i]);
  free(t->v);
  memset(t, 0, sizeof *t);
}

/* Appends s unless already present. */
static void nsys__suggest(nsys_explain_texts *t, const char *s) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->v[i], s) == 0) return;
  nsys__text(t, s);
}

/* ---- GPU of an op ----------------------------------------------------- */

static void nsys__gpu_for(const nsys_profile *p, int32_t device, int arch_hint, nsys_explain_gpu *g) {
  memset(g, 0, sizeof *g);
  g->cc_major = g->cc_minor = -1;
  const nsys_gpu_info *gi = NULL;
  if (p) {
    for (int i = 0; i < p->info.n_gpus; i++)
      if (p->info.gpus[i].id == device) gi = &p->info.gpus[i];
    if (!gi && p->info.n_gpus == 1) gi = &p->info.gpus[0];
  }
  if (gi) {
    snprintf(g->name, sizeof g->name, "%s", gi->name ? gi->name : "");
    g->cc_major = gi->cc_major;
    g->cc_minor = gi->cc_minor;
    g->sm_count = gi->sm_count;
    g->spec = nsys_gpu_spec_match_or_cc(gi->name, gi->cc_major, gi->cc_minor);
  }
  if (g->spec) {
    if (g->cc_major < 0) {
      g->cc_major = g->spec->cc_major;
      g->cc_minor = g->spec->cc_minor;
    }
    if (g->sm_count <= 0) g->sm_count = g->spec->sm_count;
  }
  if (g->cc_major < 0 && arch_hint > 0) { /* from the kernel name: sm90_ -> 9.0 */
    g->cc_major = arch_hint >= 100 ? arch_hint / 10 : arch_hint / 10;
    g->cc_minor = arch_hint % 10;
  }
}

/* ---- launch configuration (by rowid from the kernel table) -------------- */

static bool nsys__read_launch(nsys_profile *p, int64_t rowid, nsys_launch *l) {
  memset(l, 0, sizeof *l);
  char tbl[512];
  if (!p || !nsys_profile_table_sql(p, NSYS_TBL_KERNEL, tbl, sizeof tbl)) return false;
  static const char *const cols[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                                     "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
                                     "sharedMemoryExecuted", "localMemoryPerThread"};
  nsys_strbuf sql;
  nsys_strbuf_init(&sql);
  nsys_strbuf_puts(&sql, "SELECT ");
  for (size_t i = 0; i < NSYS_ARRAY_LEN(cols); i++) {
    if (i) nsys_strbuf_puts(&sql, ", ");
    nsys_strbuf_puts(&sql, nsys_schema_has_column(p, NSYS_TBL_KERNEL, cols[i]) ? cols[i] : "NULL");
  }
  nsys_strbuf_printf(&sql, " FROM %s WHERE rowid = %lld", tbl, (long long)rowid);
  sqlite3_stmt *st = NULL;
  bool ok = false;
  if (sqlite3_prepare_v2(p->db, sql.data, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    int64_t v[11];
    bool known[11];
    for (int i = 0; i < 11; i++) {
      known[i] = sqlite3_column_type(st, i) == SQLITE_INTEGER || sqlite3_column_type(st, i) == SQLITE_FLOAT;
      v[i] = known[i] ? sqlite3_column_int64(st, i) : 0;
    }
    ok = known[0] && known[3];
    for (int i = 0; i < 3; i++) {
      l->grid[i] = v[i] > 0 ? v[i] : (known[i] ? v[i] : 1);
      l->block[i] = v[3 + i] > 0 ? v[3 + i] : (known[3 + i] ? v[3 + i] : 1);
    }
    l->regs_per_thread = v[6] > 0 && v[6] < 100000 ? (int)v[6] : 0;
    l->static_smem = v[7] > 0 ? v[7] : 0;
    l->dynamic_smem = v[8] > 0 ? v[8] : 0;
    l->smem_config = v[9] > 0 ? v[9] : 0;
    l->local_mem_per_thread = v[10] > 0 ? v[10] : 0;
  }
  sqlite3_finalize(st);
  nsys_strbuf_free(&sql);
  return ok;
}

/* ---- the result -------------------------------------------------------- */

typedef struct {
  const char *short_name, *full_name;
  const char *id_full; /* full name used for identity; "" when a short-name group mixes variants */
  const nsys_kb_pattern *pat;
  nsys_kname_info info;
  char display[NSYS_KNAME_DISPLAY_MAX + 8];
  const char *origin, *category, *typical_bound;
  /* profile evidence */
  bool in_profile;
  bool have_stats;
  nsys_kstats st;
  int64_t op;            /* representative op, -1 */
  bool have_launch;
  nsys_launch launch;
  nsys_explain_gpu gpu;
  nsys_occupancy occ;
  bool have_occ;
  char instance_nvtx[512];
  const nsys_explain_context *cx; /* NULL without a profile */
  bool serial;                     /* one thread in one block */
  bool have_detect;
  nsys_detect det;                 /* detectors around its instances (detect.h) */
  char short_buf[256]; /* short name derived from a full name given alone */
  char qual_buf[2048]; /* mangled names: the nested names, then the mangled name */
} nsys__ctx;

static bool nsys__is_gemm(const nsys__ctx *c) {
  return strcmp(c->category, "gemm") == 0 || strcmp(c->category, "convolution") == 0;
}

static bool nsys__um_matters(const nsys__ctx *c) {
  return c->have_detect &&
         nsys_detect_um_matters(&c->det, c->have_stats ? c->st.count : 1u, c->have_stats ? c->st.total_ns : 0);
}

static bool nsys__copies_matter(const nsys__ctx *c) { return c->have_detect && nsys_detect_copies_matter(&c->det); }

static bool nsys__launch_bound(const nsys__ctx *c) {
  return c->have_detect && !c->serial && !c->info.is_nccl && nsys_detect_launch_bound(&c->det);
}

/* Decides the likely bound with reasons (strings added to `reasons`). */
static const char *nsys__bound(const nsys__ctx *c, nsys_explain_texts *reasons) {
  char buf[512], a[32], b[32];
  const char *bound = c->typical_bound;
  if (c->pat) {
    snprintf(buf, sizeof buf, "Typical bound for %s: %s.", c->pat->title ? c->pat->title : c->category, c->typical_bound);
    nsys__text(reasons, buf);
  }
  if (c->info.is_nccl || strcmp(c->typical_bound, "communication") == 0) {
    nsys__text(reasons, (
        "Communication kernel: its duration includes waiting for the other ranks, so it measures synchronisation as much as bandwidth."));
    return "communication";
  }
  if (nsys__is_gemm(c) && c->info.tensor_cores == 0) {
    double tc = c->gpu.spec ? nsys_gpu_spec_peak(c->gpu.spec, "bf16") : 0;
    double f32 = c->gpu.spec ? c->gpu.spec->fp32_tflops : 0;
    if (tc > 0 && f32 > 0)
      snprintf(buf, sizeof buf,
               "Runs on FP32 FMA units, not tensor cores: peak %.0f TFLOP/s versus %.0f TFLOP/s for BF16 tensor cores on %s.",
               f32, tc, c->gpu.spec->name);
    else
      snprintf(buf, sizeof buf, "Runs on FP32 FMA units (FFMA), not tensor cores: far below the GPU's tensor-core peak.");
    nsys__text(reasons, buf);
  }
  if (c->have_stats && c->st.kind == NSYS_OP_KERNEL) {
    if (c->st.median_ns < 5000 && c->st.count >= 50) {
      nsys__fmt_ns(a, sizeof a, (double)c->st.median_ns);
      snprintf(buf, sizeof buf,
               "%u launches with a median of %s: a launch costs a few microseconds of CPU and GPU front-end time, so kernels "
               "this short are dominated by launch latency.",
               c->st.count, a);
      nsys__text(reasons, buf);
      bound = "latency";
    }
    if (c->st.p95_ns > 3 * c->st.median_ns && c->st.median_ns > 0 && c->st.count >= 20) {
      nsys__fmt_ns(a, sizeof a, (double)c->st.median_ns);
      nsys__fmt_ns(b, sizeof b, (double)c->st.p95_ns);
      snprintf(buf, sizeof buf,
               "Durations vary widely (median %s, p95 %s): the calls have different shapes, or some wait on other work.", a, b);
      nsys__text(reasons, buf);
    }
  }
  if (c->serial) {
    nsys__text(reasons, (
        "Launched with grid 1x1x1 and block 1x1x1: one thread on one SM does all the work, serially; occupancy and "
        "grid-size figures do not matter until the work is spread over threads."));
    bound = "serial";
  } else if (c->have_occ && c->occ.valid && c->gpu.sm_count > 0 && c->occ.total_blocks > 0) {
    int64_t blocks = c->occ.total_blocks, sms = c->gpu.sm_count;
    int64_t slots = sms * (c->occ.blocks_per_sm > 0 ? c->occ.blocks_per_sm : 1);
    if (blocks * 2 < sms) {
      snprintf(buf, sizeof buf, "Its grid has %lld block%s for %lld SMs: %lld SMs idle while it runs.", (long long)blocks,
               blocks == 1 ? "" : "s", (long long)sms, (long long)(sms - blocks));
      nsys__text(reasons, buf);
      if (strcmp(bound, "compute") == 0 || strcmp(bound, "memory") == 0) bound = "latency";
    } else if (blocks < sms) {
      snprintf(buf, sizeof buf, "Its %lld blocks occupy %lld of the %lld SMs: one wave that fills %.0f%% of the GPU, "
               "not a latency problem.", (long long)blocks, (long long)blocks, (long long)sms, 100.0 * (double)blocks / (double)sms);
      nsys__text(reasons, buf);
    } else if (blocks > slots) {
      int64_t full = blocks / slots, tail = blocks % slots;
      double tail_frac = (double)tail / (double)slots;
      if (tail > 0 && full < 4 && tail_frac < 0.5) {
        snprintf(buf, sizeof buf,
                 "Wave quantisation: %lld blocks at %d per SM make %lld full wave%s of %lld and a last wave %.0f%% full, "
                 "so about %.0f%% of the GPU's block slots sit idle over its run.",
                 (long long)blocks, c->occ.blocks_per_sm > 0 ? c->occ.blocks_per_sm : 1, (long long)full, full == 1 ? "" : "s",
                 (long long)slots, 100 * tail_frac, 100 * (1 - tail_frac) / (double)(full + 1));
        nsys__text(reasons, buf);
      }
    }
  }
  if (nsys__launch_bound(c)) {
    const nsys_detect *d = &c->det;
    nsys__fmt_ns(a, sizeof a, (double)d->launched_kernel_ns / d->launched);
    nsys__fmt_ns(b, sizeof b, (double)d->launch_api_ns / d->launched);
    snprintf(buf, sizeof buf,
             "Launch-bound: %u of its %u launches ran shorter than their launch call (%s on the GPU against %s on the "
             "CPU, on average) and %u found their stream empty: the GPU waits for the CPU to issue the next kernel.",
             d->shorter_than_launch, d->launched, a, b, d->starved);
    nsys__text(reasons, buf);
    bound = "latency";
  }
  if (nsys__um_matters(c)) {
    const nsys_detect *d = &c->det;
    uint32_t launches = c->have_stats ? c->st.count : 1u;
    if (d->um_migrations > 0) {
      char mb[32];
      nsys__fmt_ns(a, sizeof a, (double)d->um_ns);
      nsys__fmt_bytes(mb, sizeof mb, d->um_bytes);
      snprintf(buf, sizeof buf,
               "%u unified-memory migrations (%s, %s of copy time) ran on the same GPU while %u of its %u launches ran: "
               "the kernel waits on page faults, so its duration measures migration, not its own work.",
               d->um_migrations, mb, a, d->um_instances, launches);
      nsys__text(reasons, buf);
    }
    if (d->gpu_fault_events > 0) {
      nsys__fmt_ns(a, sizeof a, (double)d->gpu_fault_ns);
      snprintf(buf, sizeof buf,
               "The GPU page-fault table records %lld page faults in %u fault groups (%s servicing them) during %u of its "
               "%u launches.",
               (long long)d->gpu_faults, d->gpu_fault_events, a, d->gpu_fault_instances, launches);
      nsys__text(reasons, buf);
    }
    if (d->cpu_faults > 0) {
      snprintf(buf, sizeof buf,
               "%lld CPU page faults of its process fell between it and the operations next to it on its stream: the "
               "host touches the same managed memory, so pages migrate back and forth.",
               (long long)d->cpu_faults);
      nsys__text(reasons, buf);
    }
    bound = "memory";
  }
  if (nsys__copies_matter(c)) {
    const nsys_detect *d = &c->det;
    char mb[32];
    nsys__fmt_ns(a, sizeof a, (double)d->copy_ns);
    nsys__fmt_bytes(mb, sizeof mb, d->copy_bytes);
    snprintf(buf, sizeof buf,
             "%u of its %u instances sit next to host<->device copies on its stream: %u cop%s (%u from or to pageable "
             "host memory, %u synchronous), %s, %s. A pageable copy is staged through a driver buffer at a fraction of "
             "the link's bandwidth and a synchronous one blocks the host, so copy and kernel serialise.",
             d->copy_instances, d->instances, d->copies, d->copies == 1 ? "y" : "ies", d->pageable_copies,
             d->sync_copies, mb, a);
    nsys__text(reasons, buf);
  }
  if (!c->have_stats && c->st.kind != NSYS_OP_KERNEL && strncmp(c->short_name, "[CUDA memcpy", 12) == 0) {
    nsys__text(reasons, ("A copy is limited by the link it crosses (PCIe/NVLink) or by device memory."));
  }
  if (!c->pat && reasons->n == 0)
    nsys__text(reasons, (
        "Not in the knowledge base: no typical bound is known; judge it by its share of GPU time and its launch configuration."));
  return bound;
}

static nsys_framework nsys__fw(const nsys__ctx *c) { return c->cx ? c->cx->framework : NSYS_FW_CUDA; }

static void nsys__evidence_suggestions(const nsys__ctx *c, nsys_explain_texts *sugg) {
  char buf[640], a[32];
  if (c->serial) nsys__suggest(sugg, nsys_advice_serial(nsys__fw(c)));
  if (nsys__um_matters(c)) nsys__suggest(sugg, nsys_advice_unified_memory(nsys__fw(c)));
  if (nsys__copies_matter(c)) nsys__suggest(sugg, nsys_advice_copies(nsys__fw(c)));
  if (nsys__launch_bound(c)) {
    snprintf(buf, sizeof buf, "Launch-bound (%u of %u launches shorter than their launch call, stream empty): %s",
             c->det.shorter_than_launch, c->det.launched, nsys_advice_launch_overhead(nsys__fw(c)));
    nsys__suggest(sugg, buf);
  } else if (c->have_stats && c->st.kind == NSYS_OP_KERNEL && c->st.median_ns < 10000 && c->st.count >= 100 &&
             !c->info.is_nccl && !c->serial) {
    nsys__fmt_ns(a, sizeof a, (double)c->st.median_ns);
    snprintf(buf, sizeof buf, "%u launches of about %s each: %s", c->st.count, a, nsys_advice_launch_overhead(nsys__fw(c)));
    nsys__suggest(sugg, buf);
  }
  bool kb_tf32 = false; /* an applicable KB suggestion already covers TF32 */
  for (int i = 0; c->pat && i < c->pat->n_suggestions; i++)
    if (strstr(c->pat->suggestions[i], "TF32") && nsys_advice_kb_applies(c->pat, i, c->cx, buf, sizeof buf)) kb_tf32 = true;
  if (nsys__is_gemm(c) && c->info.tensor_cores == 0 && strcmp(c->info.precision, "fp32") == 0 && !kb_tf32) {
    nsys_advice_fp32_gemm(c->cx, c->origin, buf, sizeof buf);
    if (buf[0]) nsys__suggest(sugg, buf);
  }
  if (!c->serial && c->have_occ && c->occ.valid && c->occ.occupancy < 0.25 && !c->pat &&
      c->occ.limiter != NSYS_OCC_LIMIT_WARPS) {
    snprintf(buf, sizeof buf,
             "Theoretical occupancy is %.0f%%, limited by %s: reduce %s per block (or use __launch_bounds__) so more "
             "warps fit per SM.",
             100 * c->occ.occupancy, nsys_occ_limiter_name(c->occ.limiter),
             c->occ.limiter == NSYS_OCC_LIMIT_REGISTERS ? "registers" : "shared memory");
    nsys__suggest(sugg, buf);
  }
  if (!c->serial && !c->pat && c->have_occ && c->occ.valid && c->gpu.sm_count > 0 && c->occ.total_blocks > 0 &&
      c->occ.total_blocks * 2 < c->gpu.sm_count) {
    snprintf(buf, sizeof buf,
             "The grid (%lld block%s) covers less than half of the %d SMs: give each launch more blocks (more work per "
             "launch, or a smaller block size), or run independent work on another stream.",
             (long long)c->occ.total_blocks, c->occ.total_blocks == 1 ? "" : "s", c->gpu.sm_count);
    nsys__suggest(sugg, buf);
  }
  if (!c->pat && !c->serial)
    nsys__suggest(sugg, "Origin unknown (probably user-written or from a library the knowledge base lacks): profile it with "
                        "Nsight Compute (ncu --set full -k <name>) to see whether memory or compute limits it.");
}

/* Where the kernel's family ranks in the whole-profile ranking (context.h),
 * and what is first; adds the statement to `sugg` and returns the JSON. */
static bool nsys__priority(const nsys__ctx *c, const nsys_index *ix, nsys_explain_texts *sugg, nsys_explain_priority *o) {
  memset(o, 0, sizeof *o);
  if (!c->cx || !c->have_stats || c->cx->n_items == 0) return false;
  const nsys_explain_context *cx = c->cx;
  char buf[640], a[32], b[32];
  if (c->st.kind == NSYS_OP_KERNEL) nsys_explain_item_label(c->pat, c->short_name, o->item, sizeof o->item);
  else snprintf(o->item, sizeof o->item, "%s", c->short_name);
  const char *label = o->item;
  int rank = nsys_explain_context_rank(cx, label);
  int64_t ranked = 0;
  for (int i = 0; i < cx->n_items; i++) ranked += cx->items[i].ns;
  o->rank = rank;
  if (rank > 0) o->item_ns = cx->items[rank - 1].ns;
  o->of = cx->n_items;
  const nsys_xctx_item *first = &cx->items[0];
  snprintf(o->first_item, sizeof o->first_item, "%s", first->label);
  o->first_ns = first->ns;
  o->first_pct = ranked > 0 ? 100.0 * (double)first->ns / (double)ranked : 0;
  o->ranked_ns = ranked;
  /* "first place to optimise" only for the largest name of the first item */
  bool is_first = rank == 1 && c->op >= 0 && ix && cx->items[0].top_name == ix->ops.name[c->op];
  o->is_first = is_first;
  if (is_first && ranked > 0) {
    snprintf(buf, sizeof buf, "Its family (%s) is %.0f%% of the profile's GPU time plus idle time, the largest item: this "
             "is the first place to optimise.", label, 100.0 * (double)first->ns / (double)ranked);
    nsys__suggest(sugg, buf);
  } else if (rank != 1 && ranked > 0) {
    nsys__fmt_ns(a, sizeof a, (double)first->ns);
    nsys__fmt_ns(b, sizeof b, rank > 0 ? (double)cx->items[rank - 1].ns : (double)c->st.total_ns);
    if (rank > 0)
      snprintf(buf, sizeof buf, "Priority: its family (%s, %s) ranks #%d of %d in where GPU time goes; first is %s (%s, "
               "%.0f%%): look there before this kernel.", label, b, rank, cx->n_items, first->label, a,
               100.0 * (double)first->ns / (double)ranked);
    else
      snprintf(buf, sizeof buf, "Priority: it is outside the %d largest items of the profile; first is %s (%s, %.0f%%).",
               cx->n_items, first->label, a, 100.0 * (double)first->ns / (double)ranked);
    nsys__suggest(sugg, buf);
  }
  return true;
}

/* Escapes markdown-special characters of names shown in prose/tables. */
static void nsys__md_text(nsys_strbuf *b, const char *s) {
  for (; *s; s++) {
    if (strchr("\\`*_[]<>|#", *s)) nsys_strbuf_putc(b, '\\');
    nsys_strbuf_putc(b, *s);
  }
}

static char *nsys__markdown(const nsys__ctx *c, const char *bound, const nsys_explain_texts *reasons,
                            const nsys_explain_texts *sugg,
                            const nsys_index *ix) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  char x[32], y[32], z[32];
  nsys_strbuf_puts(&b, "**");
  nsys__md_text(&b, c->display);
  nsys_strbuf_puts(&b, "**");
  if (c->pat && c->pat->title) {
    nsys_strbuf_puts(&b, " \xE2\x80\x94 ");
    nsys__md_text(&b, c->pat->title);
  }
  if (strcmp(bound, "unknown") == 0)
    nsys_strbuf_printf(&b, "\n\n`%s` \xC2\xB7 `%s` \xC2\xB7 bound unknown", c->origin, c->category);
  else
    nsys_strbuf_printf(&b, "\n\n`%s` \xC2\xB7 `%s` \xC2\xB7 %s-bound", c->origin, c->category, bound);
  if (c->info.precision[0]) nsys_strbuf_printf(&b, " \xC2\xB7 %s", c->info.precision);
  if (c->info.tensor_cores == 1) nsys_strbuf_printf(&b, " \xC2\xB7 tensor cores%s%s%s", c->info.mma[0] ? " (" : "", c->info.mma, c->info.mma[0] ? ")" : "");
  else if (c->info.tensor_cores == 0) nsys_strbuf_puts(&b, " \xC2\xB7 no tensor cores");
  if (c->info.tile[0]) nsys_strbuf_printf(&b, " \xC2\xB7 tile %s", c->info.tile);
  if (c->info.is_nccl && c->info.nccl_collective[0]) {
    nsys_strbuf_printf(&b, " \xC2\xB7 %s", c->info.nccl_collective);
    if (c->info.nccl_algorithm[0]) nsys_strbuf_printf(&b, " %s", c->info.nccl_algorithm);
    if (c->info.nccl_protocol[0]) nsys_strbuf_printf(&b, "/%s", c->info.nccl_protocol);
    if (c->info.nccl_dtype[0]) nsys_strbuf_printf(&b, " %s", c->info.nccl_dtype);
  }
  nsys_strbuf_puts(&b, "\n\n");
  if (c->pat) nsys__md_text(&b, c->pat->description);
  else
    nsys_strbuf_puts(&b, "**Origin unknown.** This name is not in the knowledge base: it is probably user-written code or comes "
                         "from a library the knowledge base does not cover. The statistics below still show whether it matters.");
  nsys_strbuf_puts(&b, "\n\n");
  if (c->have_stats || c->have_launch) {
    nsys_strbuf_puts(&b, "| | |\n|---|---|\n");
    if (c->have_stats) {
      const nsys_kstats *s = &c->st;
      nsys__fmt_ns(x, sizeof x, (double)s->total_ns);
      if (s->kind == NSYS_OP_KERNEL)
        nsys_strbuf_printf(&b,
                           "| Calls | %u |\n| Total | %s (%.1f%% of kernel time, %.1f%% of GPU operation time; #%u of %u "
                           "kernel names) |\n",
                           s->count, x, s->pct_kind_time, s->pct_gpu_time, s->rank, s->n_groups);
      else
        nsys_strbuf_printf(&b, "| Calls | %u |\n| Total | %s (%.1f%% of GPU operation time, #%u of %u names) |\n",
                           s->count, x, s->pct_gpu_time, s->rank, s->n_groups);
      nsys__fmt_ns(x, sizeof x, s->avg_ns);
      nsys__fmt_ns(y, sizeof y, (double)s->median_ns);
      nsys__fmt_ns(z, sizeof z, (double)s->p95_ns);
      nsys_strbuf_printf(&b, "| Avg / median / p95 | %s / %s / %s |\n", x, y, z);
      if (s->n_variants > 1)
        nsys_strbuf_printf(&b, "| Variants | %u template instantiations share this name (explain a kernelId for one) |\n",
                           s->n_variants);
      nsys_strbuf_puts(&b, "| Streams | ");
      for (uint32_t i = 0; i < NSYS_MIN(s->n_tracks, (uint32_t)NSYS_KSTATS_MAX_STREAMS); i++) {
        const nsys_gpu_track *t = &ix->tracks[s->tracks[i]];
        nsys_strbuf_printf(&b, "%sGPU %d stream %lld", i ? ", " : "", t->device, (long long)t->stream);
      }
      if (s->n_tracks > NSYS_KSTATS_MAX_STREAMS) nsys_strbuf_printf(&b, " (+%u more)", s->n_tracks - NSYS_KSTATS_MAX_STREAMS);
      nsys_strbuf_puts(&b, " |\n");
      if (s->n_nvtx > 0) {
        nsys_strbuf_puts(&b, "| NVTX | ");
        nsys__md_text(&b, s->nvtx[0].path);
        nsys_strbuf_printf(&b, " (%u of %u sampled) |\n", s->nvtx[0].count, s->nvtx_sampled);
      }
    }
    if (c->cx) {
      const nsys_explain_context *cx = c->cx;
      nsys_strbuf_printf(&b, "| Context | %s", nsys_framework_name(cx->framework));
      if (cx->gpu_name[0]) {
        nsys_strbuf_puts(&b, " on ");
        nsys__md_text(&b, cx->gpu_name);
      }
      if (cx->cc_major >= 0) {
        nsys_strbuf_printf(&b, " (cc %d.%d; tensor cores:", cx->cc_major, cx->cc_minor);
        static const char *const names[] = {"fp16", "int8", "tf32", "bf16", "fp8"};
        const bool has[] = {cx->tc_fp16, cx->tc_int8, cx->tc_tf32, cx->tc_bf16, cx->tc_fp8};
        bool any = false;
        for (size_t i = 0; i < NSYS_ARRAY_LEN(names); i++)
          if (has[i]) nsys_strbuf_printf(&b, " %s", names[i]), any = true;
        nsys_strbuf_puts(&b, any ? ")" : " none)");
      }
      nsys_strbuf_puts(&b, " |\n");
    }
    if (c->have_launch) {
      const nsys_launch *l = &c->launch;
      nsys_strbuf_printf(&b, "| Launch | grid %lld\xC3\x97%lld\xC3\x97%lld, block %lld\xC3\x97%lld\xC3\x97%lld, %d regs, %lld B smem |\n",
                         (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                         (long long)l->block[1], (long long)l->block[2], l->regs_per_thread,
                         (long long)(l->static_smem + l->dynamic_smem));
      if (c->have_occ && c->occ.valid)
        nsys_strbuf_printf(&b, "| Occupancy | %.0f%% theoretical (limited by %s)%s%s |\n", 100 * c->occ.occupancy,
                           nsys_occ_limiter_name(c->occ.limiter), c->gpu.spec ? " on " : "",
                           c->gpu.spec ? c->gpu.spec->name : "");
    }
    nsys_strbuf_puts(&b, "\n");
  }
  if (reasons->n > 0) {
    if (strcmp(bound, "unknown") == 0) nsys_strbuf_puts(&b, "**Bound unknown:**");
    else nsys_strbuf_printf(&b, "**Likely %s-bound:**", bound);
    for (int i = 0; i < reasons->n; i++) {
      nsys_strbuf_putc(&b, ' ');
      nsys__md_text(&b, reasons->v[i]);
    }
    nsys_strbuf_puts(&b, "\n\n");
  }
  if (sugg->n > 0) {
    nsys_strbuf_puts(&b, "**What to do:**\n");
    for (int i = 0; i < sugg->n; i++) {
      nsys_strbuf_puts(&b, "- ");
      nsys__md_text(&b, sugg->v[i]);
      nsys_strbuf_putc(&b, '\n');
    }
  }
  return nsys_strbuf_steal(&b);
}

static bool nsys__cancel_cb(void *ctx) { return nsys_task_cancelled((nsys_task *)ctx); }

/* Identity memo: KB match, name analysis and display name per (short, full)
 * name pair, so repeated hovers skip the regex matching. Direct-mapped,
 * keyed by a hash of both names and verified by comparing them. */
#define NSYS__MEMO_SLOTS 1024

typedef struct {
  char *short_name, *full_name; /* owned copies; NULL when empty */
  const nsys_kb_pattern *pat;
  nsys_kname_info info;
  char display[NSYS_KNAME_DISPLAY_MAX + 8];
} nsys__memo;

static pthread_mutex_t nsys__memo_mu = PTHREAD_MUTEX_INITIALIZER;
static nsys__memo nsys__memo_tab[NSYS__MEMO_SLOTS];

static uint64_t nsys__hash2(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ull;
  for (; *a; a++) h = (h ^ (unsigned char)*a) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (; *b; b++) h = (h ^ (unsigned char)*b) * 1099511628211ull;
  return h;
}

static void nsys__identity(nsys__ctx *c) {
  const char *idf = c->id_full ? c->id_full : c->full_name;
  uint64_t h = nsys__hash2(c->short_name, idf);
  nsys__memo *m = &nsys__memo_tab[h % NSYS__MEMO_SLOTS];
  pthread_mutex_lock(&nsys__memo_mu);
  if (m->short_name && strcmp(m->short_name, c->short_name) == 0 && strcmp(m->full_name, idf) == 0) {
    c->pat = m->pat;
    c->info = m->info;
    memcpy(c->display, m->display, sizeof c->display);
    pthread_mutex_unlock(&nsys__memo_mu);
    return;
  }
  pthread_mutex_unlock(&nsys__memo_mu);
  c->pat = nsys_kb_match(nsys_kb_get(), c->short_name, idf);
  nsys_kname_analyze(c->short_name, idf, &c->info);
  nsys_kname_display(idf, c->short_name, c->display, sizeof c->display);
  if (strlen(c->short_name) + strlen(idf) > 16384) return; /* not worth keeping */
  pthread_mutex_lock(&nsys__memo_mu);
  free(m->short_name);
  free(m->full_name);
  m->short_name = nsys_xstrdup(c->short_name);
  m->full_name = nsys_xstrdup(idf);
  m->pat = c->pat;
  m->info = c->info;
  memcpy(m->display, c->display, sizeof m->display);
  pthread_mutex_unlock(&nsys__memo_mu);
}

bool nsys_explain_kernel(nsys_task *task, const nsys_explain_req *req, nsys_explain_result *out) {
  memset(out, 0, sizeof *out);
  out->kernel_id = req->kernel_id;
  nsys__ctx c;
  memset(&c, 0, sizeof c);
  c.op = -1;
  const nsys_index *ix = req->ix;
  char *name_copy = NULL;
  uint32_t name_id = NSYS_STR_NONE;
  nsys_kstats_key key = NSYS_KSTATS_BY_NAME;
  if (req->kernel_id >= 0) {
    if (!ix || (uint64_t)req->kernel_id >= ix->ops.n)
      return nsys_task_fail(task, NSYS_E_NOT_FOUND, "params.kernelId: no GPU operation %lld (the profile has %u)",
                            (long long)req->kernel_id, ix ? ix->ops.n : 0);
    c.op = req->kernel_id;
    c.short_name = nsys_strtab_get(&ix->strings, ix->ops.name[c.op]);
    c.full_name = nsys_strtab_get(&ix->strings, ix->ops.full_name[c.op]);
    name_id = ix->ops.full_name[c.op];
    key = NSYS_KSTATS_BY_FULL_NAME;
  } else {
    name_copy = nsys_utf8_sanitize(req->name, strlen(req->name));
    c.short_name = name_copy;
    c.full_name = name_copy;
    if (ix) {
      uint32_t id = nsys_strtab_find(&ix->strings, name_copy, strlen(name_copy));
      if (id != NSYS_STR_NONE) {
        /* a short name, else a demangled name */
        nsys_kstats probe;
        bool cancelled = false;
        if (nsys_kstats_get(req->p, ix, NSYS_KSTATS_BY_NAME, id, &probe, nsys__cancel_cb, task, &cancelled)) {
          name_id = id;
          key = NSYS_KSTATS_BY_NAME;
        } else if (!cancelled &&
                   nsys_kstats_get(req->p, ix, NSYS_KSTATS_BY_FULL_NAME, id, &probe, nsys__cancel_cb, task, &cancelled)) {
          name_id = id;
          key = NSYS_KSTATS_BY_FULL_NAME;
        }
        if (cancelled) {
          free(name_copy);
          return nsys_task_fail_cancelled(task);
        }
      }
    }
  }
  if (name_id != NSYS_STR_NONE && ix) {
    nsys_task_progress(task, 30, "statistics per kernel name");
    bool cancelled = false;
    c.have_stats = nsys_kstats_get(req->p, ix, key, name_id, &c.st, nsys__cancel_cb, task, &cancelled);
    if (cancelled) {
      free(name_copy);
      return nsys_task_fail_cancelled(task);
    }
    c.in_profile = c.have_stats;
    if (c.have_stats && c.op < 0) {
      c.op = c.st.longest_op;
      if (key == NSYS_KSTATS_BY_NAME) {
        c.full_name = nsys_strtab_get(&ix->strings, ix->ops.full_name[c.op]);
        /* several template instantiations share this short name: describe
         * the name, not one instantiation (ask by kernelId for that) */
        if (c.st.n_variants > 1) c.id_full = "";
      }
      else c.short_name = nsys_strtab_get(&ix->strings, ix->ops.name[c.op]);
    }
  }

  /* a full name given alone (not found in the profile): match the KB on
   * the short name CUPTI would have recorded as well */
  if (!c.have_stats && c.short_name == c.full_name) {
    nsys_kname_short(c.full_name, c.short_buf, sizeof c.short_buf, c.qual_buf, sizeof c.qual_buf);
    if (c.short_buf[0] && strcmp(c.short_buf, c.full_name) != 0) {
      c.short_name = c.short_buf;
      if (strncmp(c.full_name, "_Z", 2) == 0 && c.qual_buf[0]) {
        size_t ql = strlen(c.qual_buf);
        snprintf(c.qual_buf + ql, sizeof c.qual_buf - ql, " %s", c.full_name);
        c.id_full = c.qual_buf;
      }
    }
  }

  /* identity */
  nsys__identity(&c);
  c.origin = c.pat ? c.pat->origin : "unknown";
  c.category = c.pat ? c.pat->category : nsys_explain_guess_category(c.short_name);
  c.typical_bound = c.pat ? c.pat->bound : "unknown";

  /* launch configuration and occupancy of the representative instance
   * (and the profile's context) */
  if (ix && c.op >= 0) {
    int32_t device = ix->tracks[ix->ops.track[c.op]].device;
    nsys__gpu_for(req->p, device, c.info.sm_arch, &c.gpu);
    if (ix->ops.kind[c.op] == NSYS_OP_KERNEL && req->p) {
      c.have_launch = nsys__read_launch(req->p, ix->ops.rowid[c.op], &c.launch);
      if (c.have_launch) {
        const nsys_sm_limits *lim = c.gpu.cc_major >= 0 ? nsys_sm_limits_for(c.gpu.cc_major, c.gpu.cc_minor) : NULL;
        nsys_occupancy_compute(&c.launch, lim, c.gpu.sm_count, &c.occ);
        c.have_occ = true;
      }
    }
    nsys_kstats_nvtx_path(ix, (uint32_t)c.op, c.instance_nvtx, sizeof c.instance_nvtx);
    c.serial = c.have_launch && c.launch.grid[0] * c.launch.grid[1] * c.launch.grid[2] == 1 &&
               c.launch.block[0] * c.launch.block[1] * c.launch.block[2] == 1;
    if (req->p) {
      nsys_task_progress(task, 70, "profile context and ranking");
      c.cx = nsys_explain_context_get(req->p, ix, task);
      if (!c.cx) {
        free(name_copy);
        return false; /* cancelled: the task holds the error */
      }
      if (ix->ops.kind[c.op] == NSYS_OP_KERNEL) {
        nsys_task_progress(task, 85, "detectors");
        uint32_t sid = ix->ops.name[c.op];
        if (!nsys_detect_recall(c.cx->detect_data, sid, device, &c.det)) {
          uint32_t n_inst = 0;
          uint32_t *inst = nsys_kstats_ops_by_id(req->p, ix, NSYS_KSTATS_BY_NAME, sid, &n_inst);
          bool ok = nsys_detect_kernel(ix, c.cx->detect_data, inst, n_inst, device, c.cx->um_ops > 0, task, &c.det);
          free(inst);
          if (!ok) {
            nsys_explain_context_release(c.cx);
            free(name_copy);
            return false;
          }
          nsys_detect_remember(c.cx->detect_data, sid, device, &c.det);
        }
        c.have_detect = true;
      }
    }
  } else if (!c.have_stats) {
    c.st.kind = strncmp(c.short_name, "[CUDA mem", 9) == 0 ? NSYS_OP_MEMCPY : NSYS_OP_KERNEL;
  }

  /* a kernel no pattern knows, in a Julia, Numba or CuPy program, was
   * compiled by that runtime from the user's code (CUDA.jl, numba.cuda.jit,
   * cupy.RawKernel/ElementwiseKernel) */
  if (!c.pat && c.cx &&
      (c.cx->framework == NSYS_FW_JULIA || c.cx->framework == NSYS_FW_NUMBA || c.cx->framework == NSYS_FW_CUPY))
    c.origin = nsys_framework_name(c.cx->framework);

  out->name = nsys_xstrdup(c.short_name);
  out->demangled_name = nsys_xstrdup(c.full_name);
  memcpy(out->display_name, c.display, sizeof out->display_name);
  out->in_profile = c.in_profile;
  out->origin = c.origin;
  out->category = c.category;
  out->pattern = c.pat;
  out->description = c.pat ? c.pat->description
                           : "Origin unknown: this name is not in the knowledge base (probably user-written code or a "
                             "library it does not cover). The analysis below relies on the profile's statistics only.";
  out->info = c.info;
  out->bound = nsys__bound(&c, &out->reasons);
  out->typical_bound = c.typical_bound;
  out->have_launch = c.have_launch;
  out->launch_op = c.op;
  out->launch = c.launch;
  out->have_occ = c.have_occ;
  out->occ = c.occ;
  out->gpu = c.gpu;
  out->have_stats = c.have_stats && ix;
  if (out->have_stats) {
    out->stats = c.st;
    out->n_streams = (int)NSYS_MIN(c.st.n_tracks, (uint32_t)NSYS_KSTATS_MAX_STREAMS);
    for (int i = 0; i < out->n_streams; i++) {
      const nsys_gpu_track *t = &ix->tracks[c.st.tracks[i]];
      out->streams[i].device = t->device;
      out->streams[i].stream = t->stream;
    }
  }
  out->have_nvtx_path = c.op >= 0 && ix && c.instance_nvtx[0];
  memcpy(out->nvtx_path, c.instance_nvtx, sizeof out->nvtx_path);
  nsys__evidence_suggestions(&c, &out->suggestions);
  out->n_evidence_suggestions = out->suggestions.n;
  out->have_priority = nsys__priority(&c, ix, &out->suggestions, &out->priority);
  out->first_kb_suggestion = -1;
  for (int i = 0; c.pat && i < c.pat->n_suggestions; i++) {
    char why[512];
    if (nsys_advice_kb_applies(c.pat, i, c.cx, why, sizeof why)) {
      int before = out->suggestions.n;
      nsys__suggest(&out->suggestions, c.pat->suggestions[i]);
      if (out->first_kb_suggestion < 0 && out->suggestions.n > before) out->first_kb_suggestion = before;
    } else {
      nsys__text(&out->withheld, c.pat->suggestions[i]);
      nsys__text(&out->withheld_reasons, why);
    }
  }
  if (c.cx) {
    out->have_context = true;
    out->context = *c.cx;
    out->context.detect_data = NULL;
  }
  out->have_detect = c.have_detect;
  out->detect = c.det;
  out->fires_copies = nsys__copies_matter(&c);
  out->fires_unified_memory = nsys__um_matters(&c);
  out->fires_launch_bound = nsys__launch_bound(&c);
  out->markdown = nsys__markdown(&c, out->bound, &out->reasons, &out->suggestions, ix);
  nsys_explain_context_release(c.cx); /* read until here (out holds a copy) */
  free(name_copy);
  return true;
}

bool nsys_explain_warm_detectors(const nsys_profile *p, const nsys_index *ix, const nsys_explain_context *cx,
                                 const uint32_t *names, uint32_t n_names, uint32_t max_pairs, nsys_task *task,
                                 void (*pause)(void *), void *pause_ctx) {
  uint32_t pairs = 0;
  for (uint32_t i = 0; i < n_names && pairs < max_pairs; i++) {
    uint32_t n_inst = 0;
    uint32_t *inst = nsys_kstats_ops_by_id(p, ix, NSYS_KSTATS_BY_NAME, names[i], &n_inst);
    /* the devices its kernels ran on, in order of first appearance */
    int32_t devs[64];
    uint32_t n_dev = 0;
    for (uint32_t k = 0; k < n_inst && n_dev < NSYS_ARRAY_LEN(devs); k++) {
      if (ix->ops.kind[inst[k]] != NSYS_OP_KERNEL) continue;
      int32_t d = ix->tracks[ix->ops.track[inst[k]]].device;
      uint32_t x = 0;
      while (x < n_dev && devs[x] != d) x++;
      if (x == n_dev) devs[n_dev++] = d;
    }
    for (uint32_t x = 0; x < n_dev && pairs < max_pairs; x++, pairs++) {
      if (pause) pause(pause_ctx);
      if (nsys_task_cancelled(task)) {
        free(inst);
        return false;
      }
      nsys_detect det;
      if (nsys_detect_recall(cx->detect_data, names[i], devs[x], &det)) continue;
      if (!nsys_detect_kernel(ix, cx->detect_data, inst, n_inst, devs[x], cx->um_ops > 0, task, &det)) {
        free(inst);
        return false;
      }
      nsys_detect_remember(cx->detect_data, names[i], devs[x], &det);
    }
    free(inst);
  }
  return true;
}

void nsys_explain_result_free(nsys_explain_result *r) {
  free(r->name);
  free(r->demangled_name);
  nsys__texts_free(&r->reasons);
  nsys__texts_free(&r->suggestions);
  nsys__texts_free(&r->withheld);
  nsys__texts_free(&r->withheld_reasons);
  free(r->markdown);
  memset(r, 0, sizeof *r);
}
