/* nccl_breakdown and the NCCL kernel-name parser. */
#include "analysis/nccl.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/analyses.h"
#include "common/util.h"

static const char *const nsys__colls[] = {"ReduceScatter", "AllReduce", "AllGather", "Broadcast",
                                          "AllToAll", "SendRecv", "Reduce", "Send", "Recv", "Generic"};
static const char *const nsys__algos[] = {"COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "COLLNET",
                                          "NVLS", "RING", "TREE", "PAT"};
static const char *const nsys__protos[] = {"LL128", "SIMPLE", "LL"};
static const char *const nsys__redops[] = {"PreMulSum", "SumPostDiv", "Sum", "Prod", "Max", "Min"};
static const char *const nsys__dtypes[] = {"bf16", "f16", "f32", "f64", "i8", "u8", "i32", "u32",
                                           "i64", "u64", "f8e4m3", "f8e5m2", "half", "float",
                                           "double", "int8_t", "uint8_t", "int32_t", "uint32_t",
                                           "int64_t", "uint64_t", "__nv_bfloat16", "int8", "uint8",
                                           "int32", "uint32", "int64", "uint64"};

static void nsys__set(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s); }

/* Exact token (case-sensitive unless ci) in a list; returns the canonical entry. */
static const char *nsys__in(const char *tok, const char *const *list, size_t n, bool ci) {
  for (size_t i = 0; i < n; i++)
    if (ci ? !strcasecmp(tok, list[i]) : !strcmp(tok, list[i])) return list[i];
  return NULL;
}

bool nsys_nccl_parse(const char *name, nsys_nccl_info *out) {
  memset(out, 0, sizeof *out);
  if (!name || !nsys_icontains(name, "nccl")) return false;
  /* tokens of the base name (before '(' or '<'), split on '_' */
  char base[256];
  size_t n = 0;
  for (const char *p = name; *p && *p != '(' && *p != '<' && n + 1 < sizeof base; p++) base[n++] = *p;
  base[n] = '\0';
  char *save = NULL;
  char *tok = strtok_r(base, "_ ", &save);
  char prev[32] = "";
  while (tok) {
    const char *hit;
    /* two-token algorithms: COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE */
    char joined[64];
    snprintf(joined, sizeof joined, "%s_%s", prev, tok);
    if (*prev && (hit = nsys__in(joined, nsys__algos, NSYS_ARRAY_LEN(nsys__algos), false)))
      nsys__set(out->algorithm, sizeof out->algorithm, hit);
    else if (!*out->collective && (hit = nsys__in(tok, nsys__colls, NSYS_ARRAY_LEN(nsys__colls), false)))
      nsys__set(out->collective, sizeof out->collective, hit);
    else if (!*out->algorithm && (hit = nsys__in(tok, nsys__algos, NSYS_ARRAY_LEN(nsys__algos), false)))
      nsys__set(out->algorithm, sizeof out->algorithm, hit);
    else if (!*out->protocol && (hit = nsys__in(tok, nsys__protos, NSYS_ARRAY_LEN(nsys__protos), false)))
      nsys__set(out->protocol, sizeof out->protocol, hit);
    else if (!*out->redop && (hit = nsys__in(tok, nsys__redops, NSYS_ARRAY_LEN(nsys__redops), true)))
      nsys__set(out->redop, sizeof out->redop, hit);
    else if (!*out->dtype && (hit = nsys__in(tok, nsys__dtypes, NSYS_ARRAY_LEN(nsys__dtypes), false)))
      nsys__set(out->dtype, sizeof out->dtype, hit);
    snprintf(prev, sizeof prev, "%s", tok);
    tok = strtok_r(NULL, "_ ", &save);
  }
  if (!*out->collective) {
    /* camel case (ncclAllReduceRingLLKernel) or unknown: substring search */
    for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__colls) && !*out->collective; i++)
      if (nsys_icontains(name, nsys__colls[i])) nsys__set(out->collective, sizeof out->collective, nsys__colls[i]);
    if (!*out->collective) nsys__set(out->collective, sizeof out->collective, "other");
    if (!*out->algorithm) {
      if (strstr(name, "RingLL128") || strstr(name, "TreeLL128")) nsys__set(out->protocol, sizeof out->protocol, "LL128");
      else if (strstr(name, "RingLL") || strstr(name, "TreeLL")) nsys__set(out->protocol, sizeof out->protocol, "LL");
      if (strstr(name, "Ring")) nsys__set(out->algorithm, sizeof out->algorithm, "RING");
      else if (strstr(name, "Tree")) nsys__set(out->algorithm, sizeof out->algorithm, "TREE");
    }
  }
  return true;
}

typedef struct {
  nsys_nccl_info info;
  uint32_t count;
  int64_t total, min, max;
} nsys__ngroup;

static int nsys__cmp_ngroup(const void *a, const void *b) {
  const nsys__ngroup *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return memcmp(&x->info, &y->info, sizeof x->info);
}

static uint32_t nsys__ngroup_find(nsys__ngroup **g, uint32_t *n, uint32_t *cap, const nsys_nccl_info *in) {
  for (uint32_t i = 0; i < *n; i++)
    if (!memcmp(&(*g)[i].info, in, sizeof *in)) return i;
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    *g = nsys_xrealloc(*g, *cap * sizeof **g);
  }
  memset(&(*g)[*n], 0, sizeof **g);
  (*g)[*n].info = *in;
  return (*n)++;
}

bool nsys_an_nccl_breakdown(nsys_actx *c, nsys_rtab *rows, nsys_rec summary) {
  const nsys_index *ix = c->ix;
  uint32_t ns = ix->strings.count;
  /* parse each distinct name once */
  nsys_nccl_info *parsed = NULL;
  uint8_t *is = nsys_xcalloc((size_t)ns + 1, 1);
  parsed = nsys_xcalloc((size_t)ns + 1, sizeof *parsed);
  for (uint32_t k = 0; k < ns; k++) is[k] = nsys_nccl_parse(nsys_strtab_get(&ix->strings, k), &parsed[k]);
  nsys__ngroup *g = NULL;
  uint32_t ng = 0, gcap = 0;
  int64_t total = 0;
  uint64_t count = 0;
  /* per track and per device (rank) totals */
  int64_t *trk_ns = nsys_xcalloc(ix->n_tracks + 1, sizeof *trk_ns);
  uint32_t *trk_n = nsys_xcalloc(ix->n_tracks + 1, sizeof *trk_n);
  uint32_t *trk_coll = nsys_xcalloc(ix->n_tracks + 1, sizeof *trk_coll); /* bitmask over nsys__colls */
  for (uint32_t i = 0; i < ix->ops.n && !nsys_actx_stop(c, i); i++) {
    if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
    uint32_t nm = ix->ops.name[i];
    if (nm >= ns || !is[nm]) continue;
    if (ix->ops.start[i] < c->t0 || ix->ops.start[i] >= c->t1) continue;
    uint32_t t = ix->ops.track[i];
    if (!nsys_actx_device_selected(c, ix->tracks[t].device)) continue;
    /* dtype/redop live in the short name for new NCCL; the demangled name
     * adds nothing, so group on the short name's parse */
    uint32_t gi = nsys__ngroup_find(&g, &ng, &gcap, &parsed[nm]);
    int64_t d = nsys_op_dur(ix, i);
    if (!g[gi].count || d < g[gi].min) g[gi].min = d;
    if (d > g[gi].max) g[gi].max = d;
    g[gi].count++;
    g[gi].total += d;
    total += d;
    count++;
    trk_ns[t] += d;
    trk_n[t]++;
    for (size_t k = 0; k < NSYS_ARRAY_LEN(nsys__colls); k++)
      if (!strcmp(parsed[nm].collective, nsys__colls[k])) trk_coll[t] |= 1u << k;
  }
  if (ng > 1) qsort(g, ng, sizeof *g, nsys__cmp_ngroup);
  for (uint32_t i = 0; i < ng; i++) {
    nsys_rec o = nsys_rtab_add(rows);
    nsys_rset_str(o, NC_COLLECTIVE, g[i].info.collective);
    nsys_rset_str(o, NC_ALGORITHM, g[i].info.algorithm);
    nsys_rset_str(o, NC_PROTOCOL, g[i].info.protocol);
    nsys_rset_str(o, NC_DTYPE, g[i].info.dtype);
    nsys_rset_str(o, NC_REDOP, g[i].info.redop);
    nsys_rset_i64(o, NC_COUNT, g[i].count);
    nsys_rset_i64(o, NC_TOTAL_NS, g[i].total);
    nsys_rset_f64(o, NC_AVG_NS, round((double)g[i].total / g[i].count));
    nsys_rset_i64(o, NC_MIN_NS, g[i].min);
    nsys_rset_i64(o, NC_MAX_NS, g[i].max);
    nsys_rset_f64(o, NC_PCT_OF_NCCL, total ? nsys_round2(100.0 * (double)g[i].total / (double)total) : 0);
  }
  nsys_rtab *bs = nsys_rset_arr(summary, NCS_BY_STREAM);
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    if (!trk_n[t]) continue;
    nsys_rec o = nsys_rtab_add(bs);
    nsys_rset_i64(o, NCST_DEVICE, ix->tracks[t].device);
    nsys_rset_i64(o, NCST_STREAM, ix->tracks[t].stream);
    nsys_rset_i64(o, NCST_COUNT, trk_n[t]);
    nsys_rset_i64(o, NCST_TOTAL_NS, trk_ns[t]);
    nsys_rtab *cl = nsys_rset_list(o, NCST_COLLECTIVES);
    for (size_t k = 0; k < NSYS_ARRAY_LEN(nsys__colls); k++)
      if (trk_coll[t] & (1u << k)) nsys_rlist_str(cl, nsys__colls[k]);
  }
  /* per rank = per device (one rank per GPU in a profile; openSet adds files) */
  nsys_rtab *br = nsys_rset_arr(summary, NCS_BY_RANK);
  int32_t *devs;
  uint32_t nd = nsys_actx_devices(c, &devs);
  nsys_ivls u;
  nsys_ivls_init(&u);
  for (uint32_t d = 0; d < nd; d++) {
    int64_t sum = 0;
    uint32_t cnt = 0;
    for (uint32_t t = 0; t < ix->n_tracks; t++)
      if (ix->tracks[t].device == devs[d]) {
        sum += trk_ns[t];
        cnt += trk_n[t];
      }
    if (!cnt) continue;
    const nsys_ivls *cu = nsys_actx_device_union_ref(c, devs[d], nsys_pred_comm, c->t0, c->t1, &u);
    nsys_rec o = nsys_rtab_add(br);
    nsys_rset_i64(o, NCR_DEVICE, devs[d]);
    nsys_rset_i64(o, NCR_COUNT, cnt);
    nsys_rset_i64(o, NCR_TOTAL_NS, sum);
    nsys_rset_i64(o, NCR_UNION_NS, nsys_ivls_total(cu));
  }
  nsys_ivls_free(&u);
  free(devs);
  nsys_rset_i64(summary, NCS_KERNELS, (int64_t)count);
  nsys_rset_i64(summary, NCS_TOTAL_NS, total);
  nsys_rset_str(summary, NCS_DOMINANT, ng ? g[0].info.collective : NULL);
  free(trk_ns);
  free(trk_n);
  free(trk_coll);
  free(g);
  free(parsed);
  free(is);
  return true;
}
