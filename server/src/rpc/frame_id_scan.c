#include "rpc/frame_id_scan.h"

#include <string.h>

#include "common/utf8.h"
#include "rpc/json_int.h"
#include "rpc/jsonrpc.h"

enum {
  S_START,       /* before the top-level '{' */
  S_FIRST_KEY,   /* after '{': a member name or '}' */
  S_KEY_START,   /* after ',': a member name */
  S_KEY,         /* inside a member name (captured) */
  S_COLON,       /* after a member name */
  S_VALUE,       /* before a member's value */
  S_ID_STRING,   /* inside the id's string (captured) */
  S_ID_NUMBER,   /* inside the id's number (captured) */
  S_SKIP_STRING, /* inside another member's string value */
  S_SKIP_SCALAR, /* inside another member's number or literal */
  S_SKIP_NESTED, /* inside another member's object or array */
  S_AFTER_VALUE, /* after a member's value: ',' or '}' */
};

/* Whitespace as the request parser (cJSON) skips it: any byte up to ' ', not
 * only JSON's four, so that the scanner follows every body the parser reads. */
static bool nsys__ws(char c) { return (unsigned char)c <= ' '; }

static int nsys__hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Is the raw (escaped) member name key[0..n) the string "id"? */
static bool nsys__key_is_id(const char *key, size_t n) {
  char out[2];
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)key[i];
    if (c == '\\') {
      if (i + 6 > n || key[i + 1] != 'u') return false; /* \" \\ \n ...: not a letter of "id" */
      int v = 0;
      for (size_t j = i + 2; j < i + 6; j++) {
        int h = nsys__hex(key[j]);
        if (h < 0) return false;
        v = v * 16 + h;
      }
      c = v;
      i += 5;
    }
    if (k == 2) return false;
    out[k++] = (char)c;
    if (c > 0x7f) return false;
  }
  return k == 2 && out[0] == 'i' && out[1] == 'd';
}

void nsys_id_scan_init(nsys_id_scan *s) {
  memset(s, 0, sizeof *s);
  s->result = NSYS_ID_SCANNING;
  s->state = S_START;
}

static nsys_id_scan_result nsys__done(nsys_id_scan *s, nsys_id_scan_result r) {
  s->result = r;
  if (r == NSYS_ID_FOUND) s->id[s->id_len] = '\0';
  else s->id_len = 0;
  return r;
}

static bool nsys__id_put(nsys_id_scan *s, char c) {
  if (s->id_len == NSYS_FRAME_ID_MAX) return false;
  s->id[s->id_len++] = c;
  return true;
}

/* One byte; returns false when the scan is over (s->result set). */
static bool nsys__step(nsys_id_scan *s, char c) {
  switch (s->state) {
  case S_START:
    if (nsys__ws(c)) return true;
    if (c != '{') return nsys__done(s, NSYS_ID_NONE), false;
    s->depth = 1;
    s->state = S_FIRST_KEY;
    return true;
  case S_FIRST_KEY:
  case S_KEY_START:
    if (nsys__ws(c)) return true;
    if (c == '"') {
      s->key_len = 0;
      s->key_overflow = false;
      s->escape = false;
      s->state = S_KEY;
      return true;
    }
    return nsys__done(s, NSYS_ID_NONE), false; /* '}' (no id) or not JSON */
  case S_KEY:
    if (!s->escape && c == '"') {
      s->value_is_id = !s->key_overflow && nsys__key_is_id(s->key, s->key_len);
      s->state = S_COLON;
      return true;
    }
    s->escape = !s->escape && c == '\\';
    if (s->key_len < NSYS__ID_KEY_MAX) s->key[s->key_len++] = c;
    else s->key_overflow = true;
    return true;
  case S_COLON:
    if (nsys__ws(c)) return true;
    if (c != ':') return nsys__done(s, NSYS_ID_NONE), false;
    s->state = S_VALUE;
    return true;
  case S_VALUE:
    if (nsys__ws(c)) return true;
    s->escape = false;
    if (s->value_is_id) {
      s->id_len = 0;
      if (c == '"') s->state = S_ID_STRING;
      else if (c == '-' || (c >= '0' && c <= '9')) s->state = S_ID_NUMBER;
      else return nsys__done(s, NSYS_ID_NONE), false; /* null, a boolean, an object, an array */
      nsys__id_put(s, c);
      return true;
    }
    if (c == '"') s->state = S_SKIP_STRING;
    else if (c == '{' || c == '[') s->depth++, s->state = S_SKIP_NESTED;
    else s->state = S_SKIP_SCALAR;
    return true;
  case S_ID_STRING:
    if (!nsys__id_put(s, c)) return nsys__done(s, NSYS_ID_NONE), false;
    if (!s->escape && c == '"') return nsys__done(s, NSYS_ID_FOUND), false;
    s->escape = !s->escape && c == '\\';
    return true;
  case S_ID_NUMBER:
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
      if (!nsys__id_put(s, c)) return nsys__done(s, NSYS_ID_NONE), false;
      return true;
    }
    if (nsys__ws(c) || c == ',' || c == '}') return nsys__done(s, NSYS_ID_FOUND), false;
    return nsys__done(s, NSYS_ID_NONE), false;
  case S_SKIP_STRING:
    if (!s->escape && c == '"') {
      if (s->depth == 1) s->state = S_AFTER_VALUE;
      else s->state = S_SKIP_NESTED;
      return true;
    }
    s->escape = !s->escape && c == '\\';
    return true;
  case S_SKIP_SCALAR:
    if (nsys__ws(c) || c == ',' || c == '}') {
      s->state = S_AFTER_VALUE;
      return nsys__step(s, c);
    }
    return true;
  case S_SKIP_NESTED:
    if (c == '"') s->escape = false, s->state = S_SKIP_STRING;
    else if (c == '{' || c == '[') s->depth++;
    else if (c == '}' || c == ']') {
      if (--s->depth == 1) s->state = S_AFTER_VALUE;
    }
    return true;
  case S_AFTER_VALUE:
    if (nsys__ws(c)) return true;
    if (c == ',') {
      s->state = S_KEY_START;
      return true;
    }
    return nsys__done(s, NSYS_ID_NONE), false; /* '}': the object closed without an id */
  default: return nsys__done(s, NSYS_ID_NONE), false;
  }
}

nsys_id_scan_result nsys_id_scan_feed(nsys_id_scan *s, const char *p, size_t n) {
  for (size_t i = 0; i < n && s->result == NSYS_ID_SCANNING; i++) {
    if (s->state == S_SKIP_STRING) { /* the bulk of a large body: jump to the next quote or backslash */
      if (s->escape) {
        s->escape = false;
        continue;
      }
      size_t j = i;
      while (j < n && p[j] != '"' && p[j] != '\\') j++;
      if (j == n) break;
      i = j;
    }
    nsys__step(s, p[i]);
  }
  return s->result;
}

nsys_id_scan_result nsys_id_scan_end(nsys_id_scan *s) {
  if (s->result == NSYS_ID_SCANNING) nsys__done(s, NSYS_ID_NONE);
  return s->result;
}

cJSON *nsys_id_scan_parse(const char *text, size_t n) {
  if (!n || !nsys_utf8_valid(text, n)) return NULL;
  const char *end = NULL;
  cJSON *id = nsys_json_parse(text, n, &end);
  if (id && (end != text + n || !nsys_rpc_id_valid(id))) {
    cJSON_Delete(id);
    id = NULL;
  }
  return id;
}
