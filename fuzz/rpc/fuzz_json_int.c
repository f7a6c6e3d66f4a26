/* libFuzzer target: arbitrary text through the exact JSON parser
 * (rpc/json_int.c) and the one printer (rpc/json_write.c). Oracles: what
 * parses prints to text that parses again and prints the same (printing is
 * a fixed point, so no integer changes on a round trip); an integer literal
 * the input spells within int64 reads back, through nsys_json_get_i64, as
 * the value nsys_json_literal_i64 gives its text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/json_int.h"
#include "rpc/json_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  const char *end = NULL;
  cJSON *a = nsys_json_parse(text, size, &end);
  if (a) {
    char *p1 = nsys_json_print(a, false);
    cJSON *b = nsys_json_parse(p1, strlen(p1), &end);
    if (!b) abort(); /* the printer wrote something the parser refuses */
    char *p2 = nsys_json_print(b, false);
    if (strcmp(p1, p2) != 0) abort(); /* a round trip changed a value */
    if (cJSON_IsNumber(a)) { /* a bare number: its own literal is the truth */
      int64_t want, got;
      size_t n = size;
      while (n && (text[n - 1] == ' ' || text[n - 1] == '\n' || text[n - 1] == '\t' || text[n - 1] == '\r')) n--;
      size_t s = 0;
      while (s < n && (text[s] == ' ' || text[s] == '\n' || text[s] == '\t' || text[s] == '\r')) s++;
      if (nsys_json_literal_i64(text + s, n - s, &want) && (!nsys_json_get_i64(a, &got) || got != want)) abort();
    }
    free(p2);
    free(p1);
    cJSON_Delete(b);
    cJSON_Delete(a);
  }
  free(text);
  return 0;
}
