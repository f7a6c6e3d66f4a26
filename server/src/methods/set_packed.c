/* The packed form of a rank summary's collectives: see set_packed.h. */
#include "methods/set_packed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

enum { NSYS__PK_COLS = 13, NSYS__PK_COMM = 11, NSYS__PK_TYPE = 12 };

static const char nsys__b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* column k of collective c, as int64 (comm and type: their dictionary indexes) */
static int64_t nsys__col(const nsys_rank_coll *c, int k) {
  switch (k) {
  case 0: return c->start;
  case 1: return c->end;
  case 2: return c->bytes;
  case 3: return c->comm_size;
  case 4: return c->step;
  case 5: return c->window;
  default: return c->cause[k - 6];
  }
}

static void nsys__set_col(nsys_rank_coll *c, int k, int64_t v) {
  switch (k) {
  case 0: c->start = v; break;
  case 1: c->end = v; break;
  case 2: c->bytes = v; break;
  case 3: c->comm_size = (int32_t)v; break;
  case 4: c->step = (int32_t)v; break;
  case 5: c->window = v; break;
  default: c->cause[k - 6] = v; break;
  }
}

typedef struct { uint8_t *p; size_t n, cap; } nsys__bytes;

static void nsys__put(nsys__bytes *b, uint64_t v) {
  if (b->n + 10 > b->cap) b->p = nsys_xrealloc(b->p, b->cap = b->cap * 2 + 64);
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    b->p[b->n++] = byte | (v ? 0x80 : 0);
  } while (v);
}

static uint64_t nsys__zig(int64_t delta_bits) { return ((uint64_t)delta_bits << 1) ^ (uint64_t)(delta_bits >> 63); }

/* index of s in dict (appending it when new) */
static uint32_t nsys__intern(cJSON *dict, const char *s) {
  uint32_t i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, dict) {
    if (!strcmp(e->valuestring, s)) return i;
    i++;
  }
  cJSON_AddItemToArray(dict, cJSON_CreateString(s));
  return i;
}

cJSON *nsys_rank_colls_packed_json(const nsys_rank_coll *c, uint32_t n) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", n);
  cJSON *comms = cJSON_AddArrayToObject(o, "comms"), *types = cJSON_AddArrayToObject(o, "types");
  /* a rank has a handful of communicators and types: a linear dictionary look-up, with the last hit remembered */
  uint32_t *idx = nsys_xcalloc(2 * (size_t)n + 1, sizeof *idx);
  char last_comm[40] = "", last_type[24] = "";
  uint32_t lc = 0, lt = 0;
  for (uint32_t i = 0; i < n; i++) {
    char buf[40];
    snprintf(buf, sizeof buf, "%s%llx", c[i].comm_payload ? "p" : "s", (unsigned long long)c[i].comm);
    if (i == 0 || strcmp(buf, last_comm)) lc = nsys__intern(comms, buf), snprintf(last_comm, sizeof last_comm, "%s", buf);
    if (i == 0 || strcmp(c[i].type, last_type)) lt = nsys__intern(types, c[i].type), snprintf(last_type, sizeof last_type, "%s", c[i].type);
    idx[2 * i] = lc;
    idx[2 * i + 1] = lt;
  }
  nsys__bytes b = {0};
  for (int k = 0; k < NSYS__PK_COLS; k++) {
    uint64_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t v = k == NSYS__PK_COMM ? idx[2 * i] : k == NSYS__PK_TYPE ? idx[2 * i + 1] : (uint64_t)nsys__col(&c[i], k);
      nsys__put(&b, nsys__zig((int64_t)(v - prev)));
      prev = v;
    }
  }
  free(idx);
  size_t len = 4 * ((b.n + 2) / 3);
  char *text = nsys_xmalloc(len + 1), *t = text;
  for (size_t i = 0; i < b.n; i += 3) {
    uint32_t w = (uint32_t)b.p[i] << 16 | (i + 1 < b.n ? (uint32_t)b.p[i + 1] << 8 : 0) | (i + 2 < b.n ? b.p[i + 2] : 0);
    *t++ = nsys__b64[w >> 18 & 63];
    *t++ = nsys__b64[w >> 12 & 63];
    *t++ = i + 1 < b.n ? nsys__b64[w >> 6 & 63] : '=';
    *t++ = i + 2 < b.n ? nsys__b64[w & 63] : '=';
  }
  *t = 0;
  cJSON_AddStringToObject(o, "packed", text);
  free(text);
  free(b.p);
  return o;
}

static int nsys__b64val(unsigned char ch) {
  const char *at = ch ? strchr(nsys__b64, ch) : NULL;
  return at ? (int)(at - nsys__b64) : -1;
}

/* base64 (standard alphabet, padded) to bytes; NULL when it is not */
static uint8_t *nsys__unbase64(const char *s, size_t *outn) {
  size_t len = strlen(s);
  if (len % 4) return NULL;
  uint8_t *out = nsys_xmalloc(len / 4 * 3 + 1);
  size_t n = 0;
  for (size_t i = 0; i < len; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      if (s[i + k] == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) {
        v[k] = 0;
        pad++;
      } else if ((v[k] = nsys__b64val((unsigned char)s[i + k])) < 0) {
        free(out);
        return NULL;
      }
    }
    uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    out[n++] = (uint8_t)(w >> 16);
    if (pad < 2) out[n++] = (uint8_t)(w >> 8);
    if (pad < 1) out[n++] = (uint8_t)w;
  }
  *outn = n;
  return out;
}

/* one varint at *pos of p[0..n): false when truncated or longer than 64 bits */
static bool nsys__get(const uint8_t *p, size_t n, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= n) return false;
    uint8_t byte = p[(*pos)++];
    if (shift == 63 && byte > 1) return false;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

/* the dictionary's strings, NULL when it is not an array of strings of at most max - 1 bytes */
static const char **nsys__dict(const cJSON *a, uint32_t *n, size_t max) {
  if (!cJSON_IsArray(a)) return NULL;
  int len = cJSON_GetArraySize(a);
  const char **v = nsys_xcalloc((size_t)len + 1, sizeof *v);
  int i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    const char *s = cJSON_GetStringValue(e);
    if (!s || strlen(s) >= max) {
      free(v);
      return NULL;
    }
    v[i++] = s;
  }
  *n = (uint32_t)len;
  return v;
}

bool nsys_rank_colls_from_packed(const cJSON *c, nsys_rank_coll **out, uint32_t *n, char *err, size_t errcap) {
  const cJSON *jn = cJSON_GetObjectItemCaseSensitive(c, "n");
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "packed"));
  uint32_t nc = 0, nt = 0;
  const char **comms = nsys__dict(cJSON_GetObjectItemCaseSensitive(c, "comms"), &nc, 34);
  const char **types = nsys__dict(cJSON_GetObjectItemCaseSensitive(c, "types"), &nt, sizeof((nsys_rank_coll *)0)->type);
  nsys_rank_coll *colls = NULL;
  uint8_t *bytes = NULL;
  size_t nb = 0, pos = 0;
  bool ok = false;
  if (!cJSON_IsNumber(jn) || jn->valuedouble < 0 || jn->valuedouble > 1e9 || jn->valuedouble != (double)(uint32_t)jn->valuedouble) {
    snprintf(err, errcap, ".n: expected a count");
    goto done;
  }
  if (!comms || !types) {
    snprintf(err, errcap, ".%s: expected an array of short strings", !comms ? "comms" : "types");
    goto done;
  }
  for (uint32_t i = 0; i < nc; i++)
    if ((comms[i][0] != 'p' && comms[i][0] != 's') || !comms[i][1] || strspn(comms[i] + 1, "0123456789abcdefABCDEF") != strlen(comms[i] + 1) || strlen(comms[i] + 1) > 16) {
      snprintf(err, errcap, ".comms[%u]: expected p<hex> or s<hex>", i);
      goto done;
    }
  if (!text || !(bytes = nsys__unbase64(text, &nb))) {
    snprintf(err, errcap, ".packed: expected base64 text");
    goto done;
  }
  uint32_t count = (uint32_t)jn->valuedouble;
  if ((size_t)count * NSYS__PK_COLS > nb) { /* every varint is one byte at least */
    snprintf(err, errcap, ".packed: %zu bytes cannot hold %u collectives", nb, count);
    goto done;
  }
  colls = nsys_xcalloc((size_t)count + 1, sizeof *colls);
  for (int k = 0; k < NSYS__PK_COLS; k++) {
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
      uint64_t z;
      if (!nsys__get(bytes, nb, &pos, &z)) {
        snprintf(err, errcap, ".packed: column %d, collective %u: a truncated or overlong number", k, i);
        goto done;
      }
      uint64_t v = prev + ((z >> 1) ^ (0 - (z & 1)));
      prev = v;
      int64_t sv = (int64_t)v;
      if (k == NSYS__PK_COMM || k == NSYS__PK_TYPE) {
        if (v >= (k == NSYS__PK_COMM ? nc : nt)) {
          snprintf(err, errcap, ".packed: collective %u: %s index %llu outside its dictionary", i, k == NSYS__PK_COMM ? "comm" : "type", (unsigned long long)v);
          goto done;
        }
        if (k == NSYS__PK_COMM) {
          colls[i].comm_payload = comms[v][0] == 'p';
          colls[i].comm = strtoull(comms[v] + 1, NULL, 16);
        } else {
          snprintf(colls[i].type, sizeof colls[i].type, "%s", types[v]);
        }
      } else {
        if ((k == 3 || k == 4) && (sv < INT32_MIN || sv > INT32_MAX)) {
          snprintf(err, errcap, ".packed: collective %u: %s out of range", i, k == 3 ? "commSize" : "step");
          goto done;
        }
        nsys__set_col(&colls[i], k, sv);
      }
    }
  }
  if (pos != nb) {
    snprintf(err, errcap, ".packed: %zu bytes left over", nb - pos);
    goto done;
  }
  *out = colls;
  *n = count;
  colls = NULL;
  ok = true;
done:
  free(colls);
  free(bytes);
  free(comms);
  free(types);
  return ok;
}
