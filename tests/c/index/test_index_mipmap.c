/* Zoom summary invariants against brute force on random series (overlaps,
 * zero-length items, long items spanning many buckets, negative times):
 * counts sum to the items starting in the grid, busyNs equals the covered
 * time and is <= the bucket width, longest is the true maximum, buckets not
 * reported are empty, and bucket values do not depend on where the window
 * starts (stable edges across pans). Also the events query. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "common/util.h"
#include "index/index_internal.h"


static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

typedef struct {
  int64_t *start, *end;
  uint32_t n;
} series_data;

static int cmp_pair(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

static series_data make(uint32_t n, int mode) {
  int64_t *pairs = nsys_xmalloc((size_t)n * 2 * sizeof(int64_t));
  int64_t t = -5000;
  for (uint32_t i = 0; i < n; i++) {
    int64_t gap = (int64_t)(rnd() % 200);
    int64_t dur = (int64_t)(rnd() % 150);
    if (mode == 1 && rnd() % 50 == 0) dur = 20000;          /* long items */
    if (mode == 2) gap = (int64_t)(rnd() % 40) - 10;        /* overlaps, zero gaps */
    if (rnd() % 20 == 0) dur = 0;
    t += gap < 0 ? 0 : gap;
    pairs[2 * i] = t;
    pairs[2 * i + 1] = t + dur;
  }
  qsort(pairs, n, 2 * sizeof(int64_t), cmp_pair);
  series_data d = {nsys_xmalloc((n + 1) * sizeof(int64_t)), nsys_xmalloc((n + 1) * sizeof(int64_t)), n};
  for (uint32_t i = 0; i < n; i++) {
    d.start[i] = pairs[2 * i];
    d.end[i] = pairs[2 * i + 1];
  }
  free(pairs);
  return d;
}

static int64_t brute_union(const series_data *d, int64_t a, int64_t b) {
  int64_t total = 0, cs = 0, ce = 0;
  bool open = false;
  for (uint32_t i = 0; i < d->n; i++) { /* sorted by start */
    int64_t s = d->start[i] < a ? a : d->start[i], e = d->end[i] > b ? b : d->end[i];
    if (e <= s) continue;
    if (!open || s > ce) {
      if (open) total += ce - cs;
      cs = s;
      ce = e;
      open = true;
    } else if (e > ce) {
      ce = e;
    }
  }
  if (open) total += ce - cs;
  return total;
}

typedef struct {
  nsys_tl_bucket b[5000];
  uint32_t n;
} bucket_list;

static void collect(void *ctx, const nsys_tl_bucket *b) {
  bucket_list *l = ctx;
  if (l->n < 5000) l->b[l->n++] = *b;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* d holds the items in series order; item i is table row s->idx[i] (or
 * s->first + i). The longest of a bucket is its first item of maximal
 * duration in series order. */
static void check_grid(const series_data *d, const nsys__series *s, int64_t base, int64_t res,
                       uint32_t nb) {
  static bucket_list l;
  l.n = 0;
  nsys__series_buckets(s, base, res, nb, collect, &l);
  uint32_t total = 0, expect_total = 0;
  for (uint32_t i = 0; i < d->n; i++) expect_total += d->start[i] >= base && d->start[i] < base + res * nb;
  uint32_t k = 0;
  for (uint32_t q = 0; q < nb; q++) {
    int64_t bs = base + res * q, be = bs + res;
    uint32_t cnt = 0;
    int64_t longest = -1;
    uint32_t longest_row = UINT32_MAX;
    for (uint32_t i = 0; i < d->n; i++)
      if (d->start[i] >= bs && d->start[i] < be) {
        cnt++;
        if (d->end[i] - d->start[i] > longest) {
          longest = d->end[i] - d->start[i];
          longest_row = s->idx ? s->idx[i] : s->first + i;
        }
      }
    int64_t busy = brute_union(d, bs, be);
    bool reported = k < l.n && l.b[k].start == bs;
    if (!reported) {
      CHECK(cnt == 0 && busy == 0);
      continue;
    }
    const nsys_tl_bucket *b = &l.b[k++];
    CHECK(b->end == be);
    CHECK(b->count == cnt);
    CHECK(b->busy_ns == busy);
    CHECK(b->busy_ns >= 0 && b->busy_ns <= res);
    if (cnt) {
      CHECK(b->longest_dur == longest);
      CHECK(b->longest == longest_row);
      CHECK(s->end[b->longest] - s->start[b->longest] == longest);
      CHECK(s->start[b->longest] >= bs && s->start[b->longest] < be);
    } else {
      CHECK(b->longest == UINT32_MAX);
    }
    total += b->count;
  }
  CHECK(k == l.n);
  CHECK(total == expect_total);
}

/* the same bucket seen from two windows (a pan) has the same values */
static void check_pan(const nsys__series *s, int64_t res, int64_t start) {
  static bucket_list a, b;
  a.n = b.n = 0;
  int64_t base = floor_div(start, res) * res;
  nsys__series_buckets(s, base, res, 400, collect, &a);
  nsys__series_buckets(s, base + 137 * res, res, 400, collect, &b);
  for (uint32_t i = 0; i < b.n; i++) {
    for (uint32_t j = 0; j < a.n; j++) {
      if (a.b[j].start != b.b[i].start) continue;
      CHECK(a.b[j].count == b.b[i].count);
      CHECK(a.b[j].busy_ns == b.b[i].busy_ns);
      CHECK(a.b[j].longest == b.b[i].longest);
    }
  }
}

typedef struct {
  uint32_t rows[100000];
  uint32_t n;
} row_list;

static void collect_row(void *ctx, uint32_t row) {
  row_list *l = ctx;
  if (l->n < 100000) l->rows[l->n++] = row;
}

static void check_events(const series_data *d, const nsys__series *s, int64_t qs, int64_t qe) {
  static row_list l;
  l.n = 0;
  nsys__series_events(s, qs, qe, collect_row, &l);
  uint32_t expect = 0;
  for (uint32_t i = 0; i < d->n; i++) expect += d->start[i] < qe && d->end[i] >= qs;
  CHECK(l.n == expect);
  for (uint32_t i = 0; i < l.n; i++) CHECK(d->start[l.rows[i]] < qe && d->end[l.rows[i]] >= qs);
}

int main(void) {
  static const uint32_t sizes[] = {0, 1, 5, 31, 32, 33, 1000, 5000};
  for (int mode = 0; mode < 3; mode++) {
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      series_data d = make(sizes[si], mode);
      nsys__series s;
      nsys__series_init(&s, d.start, d.end, NULL, 0, d.n);
      int64_t lo = d.n ? d.start[0] - 500 : -1000, hi = d.n ? d.end[d.n - 1] + 500 : 1000;
      for (int it = 0; it < 40; it++) {
        int64_t res = (int64_t)1 << (rnd() % 14);
        int64_t qs = lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
        int64_t base = floor_div(qs, res) * res;
        uint32_t nb = 1 + (uint32_t)(rnd() % 300);
        check_grid(&d, &s, base, res, nb);
        check_pan(&s, res, qs);
        int64_t qe = qs + 1 + (int64_t)(rnd() % 30000);
        check_events(&d, &s, qs, qe);
      }
      /* the whole series in one bucket and in many */
      check_grid(&d, &s, floor_div(lo, 1 << 20) * (1 << 20), (int64_t)1 << 20, 2);
      nsys__series_free(&s);
      free(d.start);
      free(d.end);
    }
  }
  /* an indexed series (items reached through idx[], rows stored in reverse)
   * and a contiguous one that starts at row `first` of a larger table */
  {
    series_data d = make(5000, 2);
    uint32_t n = d.n, pad = 13;
    int64_t *st = nsys_xmalloc((n + pad) * sizeof(int64_t)), *en = nsys_xmalloc((n + pad) * sizeof(int64_t));
    uint32_t *idx = nsys_xmalloc(n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
      idx[i] = n - 1 - i;
      st[idx[i]] = d.start[i];
      en[idx[i]] = d.end[i];
    }
    for (int pass = 0; pass < 2; pass++) {
      nsys__series s;
      if (pass == 0) {
        nsys__series_init(&s, st, en, idx, 0, n);
      } else {
        for (uint32_t i = 0; i < pad; i++) st[i] = en[i] = -999999; /* rows before the series */
        for (uint32_t i = 0; i < n; i++) {
          st[pad + i] = d.start[i];
          en[pad + i] = d.end[i];
        }
        nsys__series_init(&s, st, en, NULL, pad, n);
      }
      int64_t lo = d.start[0] - 500, hi = d.end[n - 1] + 500;
      for (int it = 0; it < 40; it++) {
        int64_t res = (int64_t)1 << (rnd() % 14);
        int64_t qs = lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
        check_grid(&d, &s, floor_div(qs, res) * res, res, 1 + (uint32_t)(rnd() % 300));
      }
      check_grid(&d, &s, floor_div(lo, 1 << 20) * (1 << 20), (int64_t)1 << 20, 2);
      nsys__series_free(&s);
    }
    free(idx);
    free(st);
    free(en);
    free(d.start);
    free(d.end);
  }
  return nsys_check_done("index_mipmap");
}
