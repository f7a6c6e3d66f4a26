/* Per-run tag statistics from a source map, and the tag diff of two runs. */
#include "capture/run_compare.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "source/source_map.h"

static int nsys__tag_cmp(const void *a, const void *b) {
  const nsys_rc_tag *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

void nsys_rc_stats_of(const nsys_src_map *m, nsys_rc_stats *out) {
  memset(out, 0, sizeof *out);
  int32_t *slot = nsys_xmalloc((size_t)(m->n_sites + 1) * sizeof *slot);
  for (uint32_t s = 0; s < m->n_sites; s++) {
    slot[s] = -1;
    const nsys_src_site *site = &m->sites[s];
    if (site->strategy != NSYS_SRC_TAG) continue;
    slot[s] = (int32_t)out->n_tags;
    out->tags = nsys_xrealloc(out->tags, (size_t)(out->n_tags + 1) * sizeof *out->tags);
    nsys_rc_tag *t = &out->tags[out->n_tags++];
    memset(t, 0, sizeof *t);
    t->tag = nsys_xstrdup(nsys_strtab_get(&m->strs, site->label));
    t->file = nsys_xstrdup(nsys_strtab_get(&m->strs, site->file));
    const char *sp = strchr(t->tag, ' '); /* "path:line label": the label survives renumbering */
    t->key = nsys_xasprintf("%s %s", t->file, sp ? sp + 1 : t->tag);
    t->line = site->line;
    t->ranges = site->n_ranges;
    t->site = s;
  }
  for (uint32_t r = 0; r < m->n_rows; r++) {
    const nsys_src_row *row = &m->rows[r];
    if (row->site >= m->n_sites || slot[row->site] < 0) continue;
    nsys_rc_tag *t = &out->tags[slot[row->site]];
    t->distinct++;
    t->kernels += row->count;
    t->ns += row->total_ns;
  }
  free(slot);
  int64_t exact = 0, tagged = 0;
  for (uint32_t i = 0; i < out->n_tags; i++) {
    const nsys_rc_tag *t = &out->tags[i];
    if (!t->distinct) continue;
    out->tagged_ranges++;
    tagged += t->ns;
    if (t->distinct == 1) exact += t->ns;
    else out->split++;
  }
  out->kernels = m->n_kernels;
  out->gpu_ns = m->gpu_ns;
  out->coverage = nsys_src_pct(exact, m->gpu_ns);
  out->tagged_pct = nsys_src_pct(tagged, m->gpu_ns);
  if (out->n_tags > 1) qsort(out->tags, out->n_tags, sizeof *out->tags, nsys__tag_cmp);
}

static int nsys__by_time(const void *a, const void *b) {
  const nsys_rc_tag *x = *(const nsys_rc_tag *const *)a, *y = *(const nsys_rc_tag *const *)b;
  if (x->ns != y->ns) return x->ns < y->ns ? 1 : -1;
  return (x->site > y->site) - (x->site < y->site);
}

const nsys_rc_tag **nsys_rc_split_by_time(const nsys_rc_stats *s, uint32_t *n) {
  const nsys_rc_tag **v = nsys_xmalloc((size_t)(s->n_tags + 1) * sizeof *v);
  *n = 0;
  for (uint32_t i = 0; i < s->n_tags; i++)
    if (s->tags[i].distinct > 1) v[(*n)++] = &s->tags[i];
  if (*n > 1) qsort(v, *n, sizeof *v, nsys__by_time);
  return v;
}

void nsys_rc_stats_free(nsys_rc_stats *s) {
  for (uint32_t i = 0; i < s->n_tags; i++) {
    free(s->tags[i].tag);
    free(s->tags[i].file);
    free(s->tags[i].key);
  }
  free(s->tags);
  memset(s, 0, sizeof *s);
}

bool nsys_rc_converged(const nsys_rc_stats *s) {
  return s->kernels > 0 && s->tagged_ranges > 0 && s->split == 0;
}

void nsys_rc_diff(const nsys_rc_stats *before, const nsys_rc_stats *after, uint32_t **added, uint32_t *n_added,
                  uint32_t **removed, uint32_t *n_removed) {
  *added = nsys_xmalloc((size_t)(after->n_tags + 1) * sizeof **added);
  *removed = nsys_xmalloc((size_t)(before->n_tags + 1) * sizeof **removed);
  *n_added = *n_removed = 0;
  uint32_t i = 0, j = 0;
  while (i < before->n_tags || j < after->n_tags) {
    int c = i >= before->n_tags ? 1 : j >= after->n_tags ? -1 : strcmp(before->tags[i].key, after->tags[j].key);
    if (c < 0) (*removed)[(*n_removed)++] = i++;
    else if (c > 0) (*added)[(*n_added)++] = j++;
    else {
      /* the same key on several lines counts once per side */
      const char *k = before->tags[i].key;
      uint32_t i0 = i;
      while (i < before->n_tags && strcmp(before->tags[i].key, k) == 0) i++;
      while (j < after->n_tags && strcmp(after->tags[j].key, before->tags[i0].key) == 0) j++;
    }
  }
}
