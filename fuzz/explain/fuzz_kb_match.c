/* libFuzzer target for the kernel-name knowledge base and name analysis.
 * Input: "SHORT\0FULL" (or one name used as both). Runs the matcher over
 * the knowledge base's tables, the display-name simplifier and the name
 * analyser.
 * Run: build-fuzz/fuzz/explain/fuzz_kb_match -max_total_time=60 fuzz/explain/corpus */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explain/kb.h"
#include "explain/kernel_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *buf = malloc(size + 2);
  memcpy(buf, data, size);
  buf[size] = '\0';
  buf[size + 1] = '\0';
  const char *short_name = buf;
  size_t sl = strlen(buf);
  const char *full = sl < size ? buf + sl + 1 : buf;
  const nsys_kb_pattern *p = nsys_kb_match(nsys_kb_get(), short_name, full);
  if (p && (!p->origin || !p->category)) abort();
  char out[NSYS_KNAME_DISPLAY_MAX + 8];
  nsys_kname_display(full, short_name, out, sizeof out);
  if (strlen(out) > NSYS_KNAME_DISPLAY_MAX) abort();
  char tiny[5];
  nsys_kname_display(full, NULL, tiny, sizeof tiny);
  nsys_kname_info info;
  nsys_kname_analyze(short_name, full, &info);
  if (info.precision[sizeof info.precision - 1] != '\0') abort();
  free(buf);
  return 0;
}
