/* libFuzzer: arbitrary bytes as a kernel or symbol name (and an NVTX text)
 * through the name readers of source mapping: base names, Numba decorations,
 * NVHPC function/line names, lambda parents, Triton suffixes and NVTX
 * `file:LINE` tags. Asserts: no crash/UB, every output NUL-terminated inside
 * its buffer at every buffer size, NVHPC and tag lines positive. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/annotate.h"
#include "source/defs.h"

static void nsys__terminated(const char *out, size_t cap) {
  if (cap > 0 && memchr(out, '\0', cap) == NULL) abort();
}

static void nsys__check(const char *name, size_t cap) {
  char out[260], mod[260];
  memset(out, 'x', sizeof out);
  memset(mod, 'x', sizeof mod);
  nsys_symbol_base_name(name, out, cap);
  nsys__terminated(out, cap);
  nsys_kernel_def_name(name, out, cap, mod, cap);
  nsys__terminated(out, cap);
  nsys__terminated(mod, cap);
  int line = -7;
  if (nsys_nvhpc_kernel(name, out, cap, &line)) {
    nsys__terminated(out, cap);
    if (line <= 0) abort();
  }
  if (nsys_lambda_parent(name, out, cap)) nsys__terminated(out, cap);
  if (nsys_triton_strip_suffix(name, out, cap)) nsys__terminated(out, cap);
  line = -7;
  if (nsys_parse_source_tag(name, out, cap, &line)) {
    nsys__terminated(out, cap);
    if (line <= 0) abort();
  }
  line = -7;
  if (nsys_parse_source_tag_spaced(name, out, cap, &line)) {
    nsys__terminated(out, cap);
    if (line <= 0) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *name = malloc(size + 1);
  memcpy(name, data, size);
  name[size] = '\0';
  static const size_t caps[] = {1, 2, 7, 64, 256};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) nsys__check(name, caps[i]);
  free(name);
  return 0;
}
