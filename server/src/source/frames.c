/* Backtrace frames resolved against the workspace; see frames.h. */
#include "source/frames.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "source/candidates.h"

/* Launch lines of `kbase` in `file` within [first, last]: how many, the first. */
static int nsys__launches_in(const nsys_defs *d, const char *kbase, uint32_t file, int first, int last,
                             int *line, const char **text) {
  uint32_t n, d0 = nsys_defs_find(d, kbase, &n);
  int count = 0;
  for (uint32_t k = d0; k < d0 + n; k++) {
    const nsys_def *v = &d->v[k];
    if (v->kind != NSYS_DEF_LAUNCH || v->file != file || v->line < first || v->line > last) continue;
    if (count++ == 0) {
      *line = v->line;
      *text = nsys_strtab_get(&d->strs, v->aux);
    }
  }
  return count;
}

static bool nsys__native_kind(uint8_t k) { return k == NSYS_DEF_C_FUNC; }

bool nsys_native_frame_site(const nsys_defs *d, const char *func, const char *module, const char *kbase,
                            nsys_frame_site *out) {
  memset(out, 0, sizeof *out);
  if (!d || !func || !*func) return false;
  uint32_t n, d0 = nsys_defs_find(d, func, &n);
  struct {
    const nsys_def *fn;
    int launches, line, score;
    const char *text;
  } c[16];
  uint32_t nc = 0;
  int best = -1;
  for (uint32_t k = d0; k < d0 + n && nc < NSYS_ARRAY_LEN(c); k++) {
    const nsys_def *v = &d->v[k];
    if (!nsys__native_kind(v->kind)) continue;
    c[nc].fn = v;
    c[nc].line = 0;
    c[nc].text = "";
    c[nc].launches = kbase && *kbase ? nsys__launches_in(d, kbase, v->file, v->first_line, v->last_line,
                                                         &c[nc].line, &c[nc].text)
                                     : 0;
    /* a launch line of the kernel in its body, then the binary named after its file */
    c[nc].score = (c[nc].launches > 0 ? 4 : 0) +
                  nsys_exe_names_file(module, nsys_strtab_get(&d->strs, v->file));
    if (c[nc].score > best) best = c[nc].score;
    nc++;
  }
  if (!nc) return false;
  uint32_t winners = 0, w = 0;
  for (uint32_t i = 0; i < nc; i++)
    if (c[i].score == best && winners++ == 0) w = i;
  const nsys_def *fn = c[w].fn;
  const char *file = nsys_strtab_get(&d->strs, fn->file);
  out->file = fn->file;
  out->line = out->func_line = fn->line;
  out->confidence = 0.6f / (float)winners;
  char more[120] = "";
  if (nc > 1)
    snprintf(more, sizeof more, "; %s of %u functions named %.40s%s", winners > 1 ? "one" : "the likeliest", nc,
             func, winners > 1 ? ", nothing tells them apart" : "");
  if (c[w].launches == 1 && winners == 1) {
    out->line = out->launch = c[w].line;
    out->confidence = 0.9f;
    snprintf(out->evidence, sizeof out->evidence, "; %.60s (%.100s:%d-%d) launches %.60s at line %d: %.80s%s",
             func, file, fn->first_line, fn->last_line, kbase, c[w].line, c[w].text, more);
  } else if (c[w].launches > 1) {
    out->launch = c[w].line;
    snprintf(out->evidence, sizeof out->evidence, "; %.60s (%.100s:%d-%d) launches %.60s at %d lines%s", func,
             file, fn->first_line, fn->last_line, kbase, c[w].launches, more);
  } else {
    snprintf(out->evidence, sizeof out->evidence, "; the function %.60s at %.100s:%d%s", func, file, fn->line,
             more);
  }
  return true;
}

bool nsys_python_frame_site(const nsys_defs *d, const char *file, int line, const char *kbase,
                            nsys_frame_site *out) {
  memset(out, 0, sizeof *out);
  if (!d || !file || line < 1) return false;
  uint32_t fid = nsys_strtab_find(&d->strs, file, strlen(file));
  if (fid == NSYS_STR_NONE || fid == 0) return false;
  out->file = fid;
  out->line = line;
  int at = 0;
  const char *text = "";
  if (kbase && *kbase && nsys__launches_in(d, kbase, fid, line, line, &at, &text) > 0) {
    out->launch = line;
    out->confidence = 0.95f;
    snprintf(out->evidence, sizeof out->evidence, "; %.100s:%d is a launch line of %.60s: %.80s", file, line,
             kbase, text);
  } else {
    out->confidence = 0.9f;
    snprintf(out->evidence, sizeof out->evidence, "; %.100s:%d", file, line);
  }
  return true;
}
