/* The annotation loop across runs: per run, the NVTX source tags of its
 * source map (source/source_map.h) with the kernels under each (the one
 * definition of coverage, taggedPct and split tags: source/refine and
 * runs/compare both read it); between two runs, the tags added and removed. Convergence: every tag with kernels holds
 * one kernel name (docs/analyses.md, "Annotation convergence"). No JSON. */
#ifndef NSYS_CAPTURE_RUN_COMPARE_H
#define NSYS_CAPTURE_RUN_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

struct nsys_src_map;
struct nsys_index;

typedef struct nsys_rc_tag {
  char *tag;          /* the NVTX text: "path:line label" */
  char *file;
  int line;
  char *key;          /* "file label": the tag without its line, which renumbering changes */
  uint32_t ranges;    /* NVTX ranges carrying it */
  uint32_t distinct;  /* distinct kernel names launched inside (innermost) */
  uint64_t kernels;   /* kernel launches inside */
  int64_t ns;         /* their GPU time */
  uint32_t site;      /* its site in the source map (m->sites) */
} nsys_rc_tag;

typedef struct nsys_rc_stats {
  nsys_rc_tag *tags;  /* sorted by key */
  uint32_t n_tags;
  uint64_t kernels;
  int64_t gpu_ns;
  double coverage;    /* % of kernel time under a tag holding one kernel name */
  double tagged_pct;  /* % of kernel time under any tag */
  uint32_t tagged_ranges; /* tags with kernels */
  uint32_t split;     /* tags with more than one kernel name: to refine */
} nsys_rc_stats;

void nsys_rc_stats_of(const struct nsys_src_map *m, nsys_rc_stats *out);
/* The split tags of s (more than one kernel name), most GPU time first (then
 * by site): what to annotate next. *n gets their count; free the result. */
const nsys_rc_tag **nsys_rc_split_by_time(const nsys_rc_stats *s, uint32_t *n);
void nsys_rc_stats_free(nsys_rc_stats *s);
/* Converged: kernels were traced, some are tagged, and no tag holds two names. */
bool nsys_rc_converged(const nsys_rc_stats *s);

/* Tags of `after` whose key is absent from `before` (*added, indices into after->tags) and
 * the reverse (*removed, into before->tags). O(n) over the sorted tags. */
void nsys_rc_diff(const nsys_rc_stats *before, const nsys_rc_stats *after, uint32_t **added, uint32_t *n_added,
                  uint32_t **removed, uint32_t *n_removed);

#endif
