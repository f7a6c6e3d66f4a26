/* The kernel knowledge base: patterns over kernel names, kept as data in
 * data/kernels/ (one JSON file per family) and embedded into the binary at build time (see
 * embed_kb.py). At run time the JSON files in $NSYS_AI_DATA_DIR/kernels, when that
 * directory exists, replaces the embedded copy (for editing the KB without
 * rebuilding); a file that fails to load is reported and the embedded KB
 * is used instead.
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
  char *id, *family;
  nsys_kb_kind kind;
  char *match;
  size_t match_len;
  nsys_kb_field field;
  bool icase;
  int priority;
  char *origin, *category, *bound, *title, *description;
  char **suggestions;
  int n_suggestions;
  /* per suggestion, its preconditions (a suggestion may be written as
   * {"text": ..., "frameworks": ["pytorch", ...], "minCc": 80}):
   * suggestion_frameworks[i] is NULL (any) or a comma list of framework
   * names (nsys_framework_name), suggestion_min_cc[i] 0 (any) or the least
   * compute capability x10 */
  char **suggestion_frameworks;
  int *suggestion_min_cc;
  char **examples;
  int n_examples;
  regex_t re;
  bool has_re;
  int order;
} nsys_kb_pattern;

typedef struct nsys_kb {
  nsys_kb_pattern *pats;
  int n, cap;
  char source[256]; /* "embedded" or the directory loaded */
} nsys_kb;

/* The process-wide KB (loaded once, thread-safe, never freed). */
const nsys_kb *nsys_kb_get(void);

/* Building blocks (tests, fuzzing): an empty KB, add one file's JSON text
 * (returns false with a message naming file and pattern), free. */
void nsys_kb_init(nsys_kb *kb);
bool nsys_kb_add_json(nsys_kb *kb, const char *text, size_t len, const char *file, char *err, size_t errcap);
bool nsys_kb_load_embedded(nsys_kb *kb, char *err, size_t errcap);
void nsys_kb_free(nsys_kb *kb);

/* Best pattern for a kernel, or NULL (unknown). Either name may be NULL. */
const nsys_kb_pattern *nsys_kb_match(const nsys_kb *kb, const char *short_name, const char *full_name);
/* True when pattern p matches (used by tests to check each pattern alone). */
bool nsys_kb_pattern_matches(const nsys_kb_pattern *p, const char *short_name, const char *full_name);

#endif
