/* libFuzzer target for the diff gate's config file and --threshold parsers
 * (analysis/diff_gate.c): any bytes are refused or accepted, never crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nsys_diff_thresholds t;
  char err[320];
  nsys_diff_thresholds_init(&t);
  (void)nsys_diff_gate_config_parse(&t, (const char *)data, size, err, sizeof err);
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = '\0';
  (void)nsys_diff_threshold_parse(&t, s, err, sizeof err);
  free(s);
  nsys_diff_thresholds_free(&t);
  return 0;
}
