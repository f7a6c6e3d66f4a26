/* Rank sets: the NCCL summary (nccl_sum-style) per collective type and
 * message-size bucket: count, time once every rank had arrived (end - last
 * start), bus bandwidth, against the link's expected bandwidth where the GPU
 * names tell it (docs/multirank.md has the table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "common/util.h"

/* The link between the set's GPUs: NVLink per direction for SXM data-centre
 * parts, else PCIe by compute capability's generation. */
static void nsys__link(nsys_rankset *s) {
  s->link_kind = "unknown";
  s->link_gbps = -1;
  if (s->n_nodes > 1) {
    snprintf(s->link_source, sizeof s->link_source, "ranks on %u nodes: the network is not in the exports", s->n_nodes);
    return;
  }
  const nsys_rank_summary *r = s->n_ranks ? &s->sums[s->ranks[0].summary] : NULL;
  if (!r || !r->gpu) {
    snprintf(s->link_source, sizeof s->link_source, "no GPU name in the exports");
    return;
  }
  static const struct {
    const char *name;
    double gbps;
  } nvl[] = {{"GB200", 900}, {"B200", 900}, {"B100", 900}, {"H200", 450}, {"H100", 450}, {"H800", 200},
             {"A100", 300},  {"A800", 200}, {"V100", 150}};
  snprintf(s->link_source, sizeof s->link_source, "%s", r->gpu);
  if (!nsys_icontains(r->gpu, "PCIe"))
    for (size_t i = 0; i < NSYS_ARRAY_LEN(nvl); i++)
      if (nsys_icontains(r->gpu, nvl[i].name)) {
        s->link_kind = "NVLink";
        s->link_gbps = nvl[i].gbps;
        return;
      }
  if (r->cc_major < 0) return;
  s->link_kind = "PCIe";
  s->link_gbps = r->cc_major >= 9 ? 64 : r->cc_major >= 8 ? 32 : 16; /* gen5, gen4, gen3 x16 per direction */
}

/* Bucket of a message size: <1KiB, then powers of 4 from 1 KiB. */
static void nsys__bucket(int64_t bytes, char *out, size_t cap, int64_t *lo, int64_t *hi) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 0) {
    snprintf(out, cap, "unknown");
    *lo = *hi = -1;
    return;
  }
  if (bytes < 1024) {
    snprintf(out, cap, "<1KiB");
    *lo = 0;
    *hi = 1024;
    return;
  }
  int64_t b = 1024;
  while (b <= bytes / 4) b *= 4;
  *lo = b;
  *hi = b * 4;
  int u = 0;
  int64_t x = b;
  while (x >= 1024 && u < 4) {
    x /= 1024;
    u++;
  }
  int u2 = 0;
  int64_t y = b * 4;
  while (y >= 1024 && u2 < 4) {
    y /= 1024;
    u2++;
  }
  snprintf(out, cap, "%lld%s-%lld%s", (long long)x, units[u], (long long)y, units[u2]);
}

typedef struct {
  double bytes_f; /* sum of bytes x bus factor */
  int64_t busy;   /* sum of (end - last start) where bytes are known */
} nsys__acc;

void nsys_rankset_nccl(nsys_rankset *s) {
  nsys__link(s);
  uint32_t cap = 0;
  nsys__acc *acc = NULL;
  for (uint32_t ci = 0; ci < s->n_colls; ci++) {
    const nsys_set_coll *c = &s->colls[ci];
    char bucket[48];
    int64_t lo, hi;
    nsys__bucket(c->bytes, bucket, sizeof bucket, &lo, &hi);
    uint32_t i = 0;
    while (i < s->n_nccl && !(!strcmp(s->nccl[i].type, c->type) && !strcmp(s->nccl[i].bucket, bucket))) i++;
    if (i == s->n_nccl) {
      if (s->n_nccl == cap) {
        cap = cap ? cap * 2 : 16;
        s->nccl = nsys_xrealloc(s->nccl, cap * sizeof *s->nccl);
        acc = nsys_xrealloc(acc, cap * sizeof *acc);
      }
      nsys_set_nccl_row *row = &s->nccl[s->n_nccl++];
      memset(row, 0, sizeof *row);
      memset(&acc[i], 0, sizeof acc[i]);
      row->type = c->type;
      snprintf(row->bucket, sizeof row->bucket, "%s", bucket);
      row->min_bytes = row->max_bytes = c->bytes;
      row->max_bus_bw = -1;
    }
    nsys_set_nccl_row *row = &s->nccl[i];
    int64_t last = c->start + c->skew;
    int64_t busy = c->end - last > 0 ? c->end - last : 1;
    row->count++;
    row->total_ns += busy;
    if (c->bytes >= 0) {
      row->min_bytes = NSYS_MIN(row->min_bytes, c->bytes);
      row->max_bytes = NSYS_MAX(row->max_bytes, c->bytes);
      acc[i].bytes_f += (double)c->bytes * nsys_bus_factor(c->type, c->ranks);
      acc[i].busy += busy;
      if (c->bus_bw > row->max_bus_bw) row->max_bus_bw = c->bus_bw;
    }
  }
  for (uint32_t i = 0; i < s->n_nccl; i++) {
    nsys_set_nccl_row *row = &s->nccl[i];
    row->bus_bw = acc[i].busy > 0 ? acc[i].bytes_f / (double)acc[i].busy : -1;
    row->pct_of_link = row->bus_bw >= 0 && s->link_gbps > 0 ? 100.0 * row->bus_bw / s->link_gbps : -1;
  }
  free(acc);
  /* by type, then size */
  for (uint32_t i = 1; i < s->n_nccl; i++)
    for (uint32_t j = i; j > 0; j--) {
      nsys_set_nccl_row *a = &s->nccl[j - 1], *b = &s->nccl[j];
      int k = strcmp(a->type, b->type);
      if (k < 0 || (k == 0 && a->min_bytes <= b->min_bytes)) break;
      nsys_set_nccl_row t = *a;
      *a = *b;
      *b = t;
    }
}
