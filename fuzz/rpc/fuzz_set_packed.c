/* libFuzzer target for the packed rank summaries that set/reduce reads from its
 * caller (methods/set_packed.c): any object is refused with a message or read,
 * never a crash; what is read packs again to the same collectives.
 * Input: first byte even — the rest is JSON text, the object itself; odd — two
 * bytes of n, then the bytes base64-encoded as "packed" beside fixed
 * dictionaries (so the varint decoder sees arbitrary bytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "methods/set_packed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *b64(const uint8_t *p, size_t n) {
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *o = malloc(4 * ((n + 2) / 3) + 1), *w = o;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    *w++ = A[v >> 18 & 63];
    *w++ = A[v >> 12 & 63];
    *w++ = i + 1 < n ? A[v >> 6 & 63] : '=';
    *w++ = i + 2 < n ? A[v & 63] : '=';
  }
  *w = '\0';
  return o;
}

static bool same(const nsys_rank_coll *a, const nsys_rank_coll *b) {
  return a->start == b->start && a->end == b->end && a->bytes == b->bytes && a->comm == b->comm &&
         a->comm_payload == b->comm_payload && a->comm_size == b->comm_size && a->step == b->step &&
         a->window == b->window && strcmp(a->type, b->type) == 0 && memcmp(a->cause, b->cause, sizeof a->cause) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  cJSON *o;
  if (!(data[0] & 1)) {
    o = cJSON_ParseWithLength((const char *)data + 1, size - 1);
  } else {
    if (size < 3) return 0;
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)(data[1] | (data[2] & 0x0f) << 8));
    cJSON *comms = cJSON_AddArrayToObject(o, "comms"), *types = cJSON_AddArrayToObject(o, "types");
    cJSON_AddItemToArray(comms, cJSON_CreateString("p5eed0001"));
    cJSON_AddItemToArray(comms, cJSON_CreateString("s2"));
    cJSON_AddItemToArray(types, cJSON_CreateString("AllReduce"));
    cJSON_AddItemToArray(types, cJSON_CreateString("SendRecv"));
    char *enc = b64(data + 3, size - 3);
    cJSON_AddStringToObject(o, "packed", enc);
    free(enc);
  }
  if (!o) return 0;
  nsys_rank_coll *c = NULL;
  uint32_t n = 0;
  char err[256];
  if (nsys_rank_colls_from_packed(o, &c, &n, err, sizeof err)) {
    cJSON *again = nsys_rank_colls_packed_json(c, n);
    nsys_rank_coll *c2 = NULL;
    uint32_t n2 = 0;
    if (!nsys_rank_colls_from_packed(again, &c2, &n2, err, sizeof err) || n2 != n) abort();
    for (uint32_t i = 0; i < n; i++)
      if (!same(&c[i], &c2[i])) abort();
    free(c2);
    cJSON_Delete(again);
  }
  free(c);
  cJSON_Delete(o);
  return 0;
}
