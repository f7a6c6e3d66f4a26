/* The NVTX annotator: wraps Python functions or statements in
 * `with torch.cuda.nvtx.range("PATH:LINE label"):  # nsys-ai` (or
 * `with nvtx.annotate(...)` when the file imports the nvtx package and not
 * torch), re-indenting the wrapped block, and removes exactly those edits
 * again. Pure functions over bytes: no JSON, no file I/O. The results are
 * LSP-style text edits (0-based lines, UTF-16 characters) plus the full new
 * text. See docs/protocol.md "Source mapping" for the conventions. */
#ifndef NSYS_ANNOTATE_H
#define NSYS_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nsys_text_edit {
  int start_line, start_char, end_line, end_char; /* 0-based; characters in UTF-16 units */
  char *text;                                     /* replacement (owned) */
} nsys_text_edit;

typedef struct nsys_annot_marker {
  int line;  /* 0-based line of the `with` in the new text */
  char *tag; /* "PATH:LINE label" */
} nsys_annot_marker;

typedef enum { NSYS_ANNOT_FILE, NSYS_ANNOT_FUNCTION, NSYS_ANNOT_LINES } nsys_annot_scope;

typedef struct nsys_annotate_opts {
  const char *rel_path;   /* path written into the tags (relative to the workspace root) */
  nsys_annot_scope scope;
  const char *function;   /* NAME or Class.NAME for NSYS_ANNOT_FUNCTION */
  int start_line, end_line; /* 0-based inclusive, for NSYS_ANNOT_LINES */
  bool statement;         /* granularity: statement (true) or function (false) */
} nsys_annotate_opts;

typedef struct nsys_annotate_result {
  nsys_text_edit *edits; int n_edits;
  nsys_annot_marker *markers; int n_markers; /* markers added (annotate) or removed (unannotate) */
  const char *api;        /* "torch.cuda.nvtx.range", "nvtx.annotate", ... (static or owned below) */
  char api_buf[96];
  bool import_added;
  int n_renumbered;       /* existing markers whose stale tag LINE was updated */
  int functions_matched;  /* NSYS_ANNOT_FUNCTION: how many defs matched */
  char *new_text; size_t new_len; /* the whole resulting file */
  bool refused;           /* annotate: the edits failed their own round-trip or
                             idempotence check (text the scanner cannot model),
                             so none are returned */
} nsys_annotate_result;

/* Both return 0 on success; annotate returns -1 when the function was not
 * found (functions_matched == 0). Inputs may be arbitrary bytes. */
int nsys_annotate(const char *src, size_t n, const nsys_annotate_opts *o, nsys_annotate_result *r);
int nsys_unannotate(const char *src, size_t n, nsys_annotate_result *r);
void nsys_annotate_result_free(nsys_annotate_result *r);

/* Parses an NVTX source tag "PATH:LINE[ label]" at the start of `text`.
 * On success fills path (NUL-terminated; false when it does not fit in cap)
 * and *line (1-based) and returns true. Spaces are legal in paths, but
 * "see foo.py:12 for" is free text: a PATH with spaces is taken only when it
 * is explicit (absolute, ./, ../, ~/). */
bool nsys_parse_source_tag(const char *text, char *path, size_t cap, int *line);
/* The same, taking any PATH with spaces ("My Project/train.py:3 step"):
 * for a caller that then checks that the file exists. */
bool nsys_parse_source_tag_spaced(const char *text, char *path, size_t cap, int *line);

#endif
