/* The CI gate of profile/diff: thresholds (from params, `--threshold` flags
 * or a small `key = value` config file) and the gate's outcome. Parsing is
 * here (fuzzed: fuzz/fuzz_gate_config.c); the evaluation is in diff.c. */
#ifndef NSYS_DIFF_GATE_H
#define NSYS_DIFF_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSYS_DIFF_NCOMP 6 /* the components of diff.h (NSYS_DC__COUNT) */
/* "step", "compute", "ncclExposed", "idle", "copies", "launchOverhead" */
extern const char *const nsys_diff_comp_names[NSYS_DIFF_NCOMP];

typedef struct nsys_diff_family_th {
  char *family;
  double pct;
} nsys_diff_family_th;

/* Allowed increase, in percent of the base, per component and per kernel family. */
typedef struct nsys_diff_thresholds {
  bool set[NSYS_DIFF_NCOMP];
  double pct[NSYS_DIFF_NCOMP];
  nsys_diff_family_th *fam;
  uint32_t n_fam;
} nsys_diff_thresholds;

void nsys_diff_thresholds_init(nsys_diff_thresholds *t);
void nsys_diff_thresholds_free(nsys_diff_thresholds *t);
bool nsys_diff_thresholds_any(const nsys_diff_thresholds *t);
/* The component index of a name (step, compute, ncclExposed, idle, copies,
 * launchOverhead), or -1. */
int nsys_diff_comp_find(const char *name, size_t len);
/* Sets one threshold: key is a component name or kernel:FAMILY; value a
 * positive number with an optional '%' (at most 1e6). False with a message
 * in err (the previous value is kept). */
bool nsys_diff_threshold_set(nsys_diff_thresholds *t, const char *key, size_t klen, const char *val, size_t vlen,
                             char *err, size_t cap);
/* "KEY=VALUE" (the --threshold flag). */
bool nsys_diff_threshold_parse(nsys_diff_thresholds *t, const char *spec, char *err, size_t cap);
/* A config file: one `KEY = VALUE` per line, '#' comments, blank lines; a
 * `[gate]` header line is allowed. Refuses anything else, naming the line. */
bool nsys_diff_gate_config_parse(nsys_diff_thresholds *t, const char *text, size_t len, char *err, size_t cap);

typedef struct nsys_diff_failure {
  char *target;   /* component name or kernel:FAMILY */
  double threshold;
  bool has_pct;
  double pct;
  const char *verdict;
  char *message;
} nsys_diff_failure;

typedef struct nsys_diff_gate_result {
  const char *status; /* pass, regression, incomparable */
  nsys_diff_failure *fails;
  uint32_t n_fails;
} nsys_diff_gate_result;

void nsys_diff_gate_result_free(nsys_diff_gate_result *g);

#endif
