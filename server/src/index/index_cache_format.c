/* The index cache's checksum and payload order; see index_cache_format.h. */
#include "index/index_cache_format.h"

void nsys__sum_words(nsys__sum *s, const uint64_t *w, size_t n) {
  const uint64_t k = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i < n && (s->n & 3); i++, s->n++) { /* continue to lane 0 */
    s->a[s->n & 3] += w[i] ^ k;
    s->b[s->n & 3] += s->a[s->n & 3];
  }
  uint64_t a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
  uint64_t b0 = s->b[0], b1 = s->b[1], b2 = s->b[2], b3 = s->b[3];
  for (; i + 4 <= n; i += 4) {
    a0 += w[i] ^ k;
    b0 += a0;
    a1 += w[i + 1] ^ k;
    b1 += a1;
    a2 += w[i + 2] ^ k;
    b2 += a2;
    a3 += w[i + 3] ^ k;
    b3 += a3;
    s->n += 4;
  }
  s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
  s->b[0] = b0, s->b[1] = b1, s->b[2] = b2, s->b[3] = b3;
  for (; i < n; i++, s->n++) {
    s->a[s->n & 3] += w[i] ^ k;
    s->b[s->n & 3] += s->a[s->n & 3];
  }
}

uint64_t nsys__sum_final(const nsys__sum *s) {
  uint64_t h = s->n;
  for (int l = 0; l < 4; l++) h = (h ^ s->a[l] ^ (s->b[l] * 0xC2B2AE3D27D4EB4FULL)) * 0x100000001B3ULL;
  return h;
}

uint32_t nsys__n_series(const nsys_index *ix) {
  const nsys__index_priv *pv = nsys__priv(ix);
  return ix->n_tracks + ix->n_threads + pv->n_depth_rows + pv->n_proj_rows;
}

nsys__series *nsys__series_at(const nsys_index *ix, uint32_t i) {
  nsys__index_priv *pv = nsys__priv(ix);
  if (i < ix->n_tracks) return &pv->gpu_series[i];
  i -= ix->n_tracks;
  if (i < ix->n_threads) return &pv->api_series[i];
  i -= ix->n_threads;
  if (i < pv->n_depth_rows) return &pv->nvtx_series[i];
  return &pv->proj_series[i - pv->n_depth_rows];
}

void nsys__sum_concat(nsys__sum *s1, const nsys__sum *s2) {
  for (uint64_t lane = 0; lane < 4; lane++) {
    uint64_t q = (s2->n + 3 - lane) / 4; /* s2's words in this lane */
    s1->b[lane] += q * s1->a[lane] + s2->b[lane];
    s1->a[lane] += s2->a[lane];
  }
  s1->n += s2->n;
}
