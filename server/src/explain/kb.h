/* The kernel knowledge base: patterns over kernel names. Its source is
 * data/kernels/<family>.json (one human-editable JSON file per family); the build
 * turns them into C tables (gen_kb_tables.py writes one static const
 * nsys_kb_pattern per pattern, after validating every file), so nothing is
 * parsed at run time. Edit the JSON and rebuild.
 *
 * Pattern file format (one object per file):
 *   {"family": "cublas",
 *    "defaults": {"origin": "cublas", "category": "gemm", "bound": "compute"},
 *    "patterns": [{"id": "cublas.ampere_sgemm", "prefix": "ampere_sgemm",
 *                  "title": "...", "description": "...", "suggestions": ["..."],
 *                  "examples": ["ampere_sgemm_128x64_tn"]}, ...]}
 * Exactly one matcher per pattern: "exact", "prefix", "contains", "glob"
 * (fnmatch), or "regex" (POSIX extended). Optional: "field" ("short",
 * "full", "any" = default), "icase" (bool), "priority" (int, default 0).
 * A suggestion is a string, or {"text": ..., "frameworks": ["pytorch", ...],
 * "minCc": 80} when it holds only in those frameworks (nsys_framework_name)
 * or from that compute capability (x10) on.
 * The best match has the highest priority, then the longest matcher text,
 * then comes first (files in name order). */
#ifndef NSYS_KB_H
#define NSYS_KB_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum { NSYS_KB_EXACT, NSYS_KB_PREFIX, NSYS_KB_CONTAINS, NSYS_KB_GLOB, NSYS_KB_REGEX } nsys_kb_kind;
typedef enum { NSYS_KB_FIELD_ANY, NSYS_KB_FIELD_SHORT, NSYS_KB_FIELD_FULL } nsys_kb_field;

typedef struct nsys_kb_pattern {
  const char *id, *family;
  nsys_kb_kind kind;
  const char *match;
  size_t match_len;
  nsys_kb_field field;
  bool icase;
  int priority;
  const char *origin, *category, *bound, *title, *description; /* title may be NULL */
  const char *const *suggestions;
  int n_suggestions;
  /* per suggestion, its preconditions: suggestion_frameworks[i] is NULL
   * (any) or a comma list of framework names, suggestion_min_cc[i] 0 (any)
   * or the least compute capability x10 */
  const char *const *suggestion_frameworks;
  const int *suggestion_min_cc;
  const char *const *examples;
  int n_examples;
  /* set when loaded (zero in the tables) */
  regex_t re;
  bool has_re;
  int order;
} nsys_kb_pattern;

/* The generated tables (kb_tables.c): every pattern, and the source files
 * they came from (in name order). */
extern const nsys_kb_pattern nsys_kb_table[];
extern const int nsys_kb_table_count;
extern const char *const nsys_kb_table_files[];
extern const int nsys_kb_table_file_count;

typedef struct nsys_kb {
  nsys_kb_pattern *pats; /* copies of table rows, regular expressions compiled */
  int n;
} nsys_kb;

/* The process-wide KB (loaded once from the tables, thread-safe, never freed). */
const nsys_kb *nsys_kb_get(void);

/* Building blocks (tests, fuzzing): a KB from n table rows (false with a
 * message naming the pattern when one is malformed: no matcher, a bad
 * regular expression, an unknown framework in its preconditions); free
 * it with nsys_kb_free (also after a failure). */
bool nsys_kb_load(nsys_kb *kb, const nsys_kb_pattern *rows, int n, char *err, size_t errcap);
void nsys_kb_free(nsys_kb *kb);

/* Best pattern for a kernel, or NULL (unknown). Either name may be NULL. */
const nsys_kb_pattern *nsys_kb_match(const nsys_kb *kb, const char *short_name, const char *full_name);
/* True when pattern p matches (used by tests to check each pattern alone). */
bool nsys_kb_pattern_matches(const nsys_kb_pattern *p, const char *short_name, const char *full_name);

#endif
