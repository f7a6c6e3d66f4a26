/* libFuzzer: arbitrary bytes as a Python file through annotate + unannotate.
 * Asserts: no crash/UB, every scope/granularity round-trips byte-exactly
 * (to the input without pre-existing markers),
 * and annotating the result again adds nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/annotate.h"

static void nsys__check(const char *src, size_t n, const nsys_annotate_opts *o) {
  nsys_annotate_result r;
  nsys_annotate(src, n, o, &r);
  /* Removing the markers from the result gives the input without its markers
   * (the input itself when it had none). */
  nsys_annotate_result u, base;
  nsys_unannotate(r.new_text, r.new_len, &u);
  nsys_unannotate(src, n, &base);
  if (r.n_markers > 0 && (u.new_len != base.new_len || memcmp(u.new_text, base.new_text, base.new_len) != 0))
    abort();
  nsys_annotate_result_free(&base);
  if (o->scope != NSYS_ANNOT_LINES) {
    nsys_annotate_result r2;
    nsys_annotate(r.new_text, r.new_len, o, &r2);
    if (r2.n_edits != 0) abort();
    nsys_annotate_result_free(&r2);
  }
  nsys_annotate_result_free(&u);
  nsys_annotate_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  const char *src = (const char *)data;
  nsys_annotate_opts o = {.rel_path = "f.py", .scope = NSYS_ANNOT_FILE};
  nsys__check(src, size, &o);
  o.statement = true;
  nsys__check(src, size, &o);
  o.scope = NSYS_ANNOT_LINES;
  o.start_line = 0;
  o.end_line = (int)(size % 7) + 1;
  nsys__check(src, size, &o);
  o.statement = false;
  nsys__check(src, size, &o);
  return 0;
}
