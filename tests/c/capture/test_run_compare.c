/* capture/run_compare.c: per-tag statistics from a source map, and the tag diff
 * of two runs (keys without line numbers). */
#include <stdlib.h>
#include <string.h>

#include "capture/run_compare.h"
#include "common/util.h"
#include "nsys_check.h"
#include "source/source_map.h"

/* A map with tag sites `labels` (file a.py) and rows (site, kernel name id, count, ns). */
static void make_map(nsys_src_map *m, const char *const *labels, int n, const int (*rows)[4], int nr) {
  memset(m, 0, sizeof *m);
  nsys_strtab_init(&m->strs);
  m->sites = nsys_xcalloc((size_t)n + 1, sizeof *m->sites);
  for (int i = 0; i < n; i++) {
    nsys_src_site *s = &m->sites[m->n_sites++];
    s->strategy = NSYS_SRC_TAG;
    s->file = nsys_strtab_intern(&m->strs, "a.py", 4);
    s->label = nsys_strtab_intern(&m->strs, labels[i], strlen(labels[i]));
    s->line = atoi(strchr(labels[i], ':') + 1);
    s->n_ranges = 3;
  }
  m->rows = nsys_xcalloc((size_t)nr + 1, sizeof *m->rows);
  for (int i = 0; i < nr; i++) {
    m->rows[i] = (nsys_src_row){.site = (uint32_t)rows[i][0], .kname = (uint32_t)rows[i][1],
                                .count = (uint32_t)rows[i][2], .total_ns = rows[i][3]};
    m->gpu_ns += rows[i][3];
    m->n_kernels += (uint32_t)rows[i][2];
  }
  m->n_rows = (uint32_t)nr;
}

static void free_map(nsys_src_map *m) {
  nsys_strtab_free(&m->strs);
  free(m->sites);
  free(m->rows);
}

int main(void) {
  const char *before_labels[] = {"a.py:5 step", "a.py:9 loss"};
  const int before_rows[][4] = {{0, 1, 10, 600}, {0, 2, 10, 300}, {1, 3, 5, 100}};
  /* after: annotations inserted above renumber step (5 -> 6) and add two tags */
  const char *after_labels[] = {"a.py:6 step", "a.py:7 fwd", "a.py:8 bwd", "a.py:11 loss"};
  const int after_rows[][4] = {{1, 1, 10, 600}, {2, 2, 10, 300}, {3, 3, 5, 100}};
  nsys_src_map mb, ma;
  make_map(&mb, before_labels, 2, before_rows, 3);
  make_map(&ma, after_labels, 4, after_rows, 3);
  nsys_rc_stats sb, sa;
  nsys_rc_stats_of(&mb, &sb);
  nsys_rc_stats_of(&ma, &sa);
  CHECK_EQ(sb.n_tags, 2);
  CHECK_EQ(sb.split, 1);
  CHECK_NEAR(sb.coverage, 10.0, 1e-9); /* loss: 100 of 1000 ns under a one-name tag */
  CHECK_NEAR(sb.tagged_pct, 100.0, 1e-9);
  CHECK(!nsys_rc_converged(&sb));
  CHECK_EQ(sa.split, 0);
  CHECK_EQ(sa.tagged_ranges, 3); /* step now holds no kernel of its own */
  CHECK_NEAR(sa.coverage, 100.0, 1e-9);
  CHECK(nsys_rc_converged(&sa));
  uint32_t *add = NULL, *rem = NULL, na = 0, nr = 0;
  nsys_rc_diff(&sb, &sa, &add, &na, &rem, &nr);
  CHECK_EQ(na, 2);
  CHECK_EQ(nr, 0);
  if (na == 2) {
    CHECK_STR(sa.tags[add[0]].tag, "a.py:8 bwd");
    CHECK_STR(sa.tags[add[1]].tag, "a.py:7 fwd");
  }
  free(add), free(rem);
  nsys_rc_diff(&sa, &sb, &add, &na, &rem, &nr); /* the reverse: removed */
  CHECK_EQ(na, 0);
  CHECK_EQ(nr, 2);
  free(add), free(rem);
  /* no kernels: never converged */
  nsys_src_map mz;
  make_map(&mz, before_labels, 2, NULL, 0);
  nsys_rc_stats sz;
  nsys_rc_stats_of(&mz, &sz);
  CHECK(!nsys_rc_converged(&sz));
  CHECK_EQ(sz.n_tags, 2);
  CHECK_NEAR(sz.coverage, 0.0, 0);
  nsys_rc_stats_free(&sz), nsys_rc_stats_free(&sa), nsys_rc_stats_free(&sb);
  free_map(&mz), free_map(&ma), free_map(&mb);
  return nsys_check_done("run_compare");
}
