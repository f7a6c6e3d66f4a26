#include "rpc/framing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define NSYS__CL "content-length:"
#define NSYS__CL_LEN (sizeof NSYS__CL - 1)

static char nsys__lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

static bool nsys__ieq(const char *a, size_t n, const char *lit) {
  if (strlen(lit) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (nsys__lower(a[i]) != lit[i]) return false;
  return true;
}

typedef enum { NSYS__MATCH_NO, NSYS__MATCH_YES, NSYS__MATCH_PARTIAL } nsys__match;

/* Does s[0..n) start a header "Content-Length:[ \t]*DIGITS[ \t]*(\r|\n)"?
 * PARTIAL: s is a prefix of such a header (more bytes needed to decide). */
static nsys__match nsys__header_at(const char *s, size_t n) {
  size_t i = 0;
  for (; i < NSYS__CL_LEN; i++) {
    if (i == n) return NSYS__MATCH_PARTIAL;
    if (nsys__lower(s[i]) != NSYS__CL[i]) return NSYS__MATCH_NO;
  }
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  size_t digits = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9' && digits < 20) i++, digits++;
  if (i == n) return NSYS__MATCH_PARTIAL;
  if (!digits) return NSYS__MATCH_NO;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i == n) return NSYS__MATCH_PARTIAL;
  return (s[i] == '\r' || s[i] == '\n') ? NSYS__MATCH_YES : NSYS__MATCH_NO;
}

/* Finds the first header start at an offset in [0, limit) of s[0..n).
 * Returns YES or PARTIAL with *at set, or NO. */
static nsys__match nsys__scan(const char *s, size_t n, size_t limit, size_t *at) {
  for (size_t m = 0; m < limit && m < n; m++) {
    if ((s[m] | 0x20) != 'c') continue;
    nsys__match k = nsys__header_at(s + m, n - m);
    if (k != NSYS__MATCH_NO) {
      *at = m;
      return k;
    }
  }
  return NSYS__MATCH_NO;
}

void nsys_frame_reader_init(nsys_frame_reader *r, size_t max_frame) {
  memset(r, 0, sizeof *r);
  r->max_frame = max_frame ? max_frame : NSYS_FRAME_DEFAULT_MAX;
  r->state = NSYS__FR_HEADER;
}

void nsys_frame_reader_free(nsys_frame_reader *r) {
  free(r->in);
  free(r->body);
  memset(r, 0, sizeof *r);
}

void nsys_frame_push(nsys_frame_reader *r, const char *data, size_t n) {
  if (!n) return;
  if (r->pos) {
    memmove(r->in, r->in + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n) cap *= 2;
    r->in = nsys_xrealloc(r->in, cap);
    r->cap = cap;
  }
  memcpy(r->in + r->len, data, n);
  r->len += n;
}

int nsys_frame_pending(const nsys_frame_reader *r) {
  return r->state == NSYS__FR_BODY || r->state == NSYS__FR_DISCARD || r->pos < r->len ||
         r->have_length;
}

static void nsys__reset_header(nsys_frame_reader *r) {
  r->state = NSYS__FR_HEADER;
  r->hdr_bytes = 0;
  r->have_length = 0;
  r->length = 0;
}

static nsys_frame_kind nsys__error(nsys_frame_reader *r, nsys_frame_event *ev, nsys_err err,
                                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static nsys_frame_kind nsys__error(nsys_frame_reader *r, nsys_frame_event *ev, nsys_err err,
                                   const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ev->msg, sizeof ev->msg, fmt, ap);
  va_end(ap);
  ev->kind = NSYS_FRAME_ERROR;
  ev->err = err;
  r->n_errors++;
  return NSYS_FRAME_ERROR;
}

/* Garbage header: report it and scan for the next header from `from`. */
static nsys_frame_kind nsys__garbage(nsys_frame_reader *r, nsys_frame_event *ev, size_t from,
                                     const char *why) {
  r->pos = from;
  nsys__reset_header(r);
  r->state = NSYS__FR_RESYNC;
  return nsys__error(r, ev, NSYS_E_PARSE, "parse error: bad frame header: %s", why);
}

static void nsys__body_append(nsys_frame_reader *r, const char *s, size_t n) {
  if (r->body_len + n + 1 > r->body_cap) {
    size_t cap = r->body_cap ? r->body_cap * 2 : 65536;
    if (cap > r->want + 1) cap = r->want + 1;
    if (cap < r->body_len + n + 1) cap = r->body_len + n + 1;
    r->body = nsys_xrealloc(r->body, cap);
    r->body_cap = cap;
  }
  memcpy(r->body + r->body_len, s, n);
  r->body_len += n;
}

/* Parses "  123 " into *out; false when not a plain non-negative integer. */
static bool nsys__parse_length(const char *s, size_t n, size_t *out) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  size_t start = i;
  uint64_t v = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
    i++;
  }
  if (i == start) return false;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i != n || v > (uint64_t)SIZE_MAX / 2) return false;
  *out = (size_t)v;
  return true;
}

/* RFC 7230 token characters, for header names. */
static bool nsys__is_tchar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The header block stays unconsumed (in[pos..)) until it is complete, so that
 * a garbage block can be rescanned from its second byte; hdr_bytes is the
 * offset of the next unparsed line. */
static nsys_frame_kind nsys__step_header(nsys_frame_reader *r, nsys_frame_event *ev) {
  for (;;) {
    size_t line_off = r->hdr_bytes;
    const char *p = r->in + r->pos + line_off;
    size_t avail = r->len - r->pos - line_off;
    size_t look = avail < NSYS_FRAME_MAX_LINE + 1 ? avail : NSYS_FRAME_MAX_LINE + 1;
    const char *nl = memchr(p, '\n', look);
    if (!nl) {
      if (avail > NSYS_FRAME_MAX_LINE)
        return nsys__garbage(r, ev, r->pos + 1, "header line longer than 8192 bytes");
      return NSYS_FRAME_NONE;
    }
    size_t n = (size_t)(nl - p);
    size_t line_len = n;
    if (line_len && p[line_len - 1] == '\r') line_len--;
    if (line_len == 0 && line_off == 0) { /* blank line between frames */
      r->pos += n + 1;
      continue;
    }
    r->hdr_bytes += n + 1;
    if (line_len == 0) {
      if (!r->have_length) return nsys__garbage(r, ev, r->pos + 1, "no Content-Length header");
      size_t length = r->length;
      r->pos += r->hdr_bytes;
      nsys__reset_header(r);
      if (length > r->max_frame) { /* refused once its id is found or its body skipped */
        r->state = NSYS__FR_DISCARD;
        r->want = length;
        r->refusal_pending = 1;
        r->refused_length = length;
        nsys_id_scan_init(&r->id_scan);
        return NSYS_FRAME_NONE;
      }
      r->state = NSYS__FR_BODY;
      r->want = length;
      r->body = NULL;
      r->body_len = r->body_cap = 0;
      return NSYS_FRAME_NONE; /* the caller's loop continues into the body */
    }
    if (r->hdr_bytes > NSYS_FRAME_MAX_HEADER)
      return nsys__garbage(r, ev, r->pos + 1, "header block longer than 64 KiB");
    const char *colon = memchr(p, ':', line_len);
    if (!colon) return nsys__garbage(r, ev, r->pos + 1, "header line without ':'");
    size_t name_len = (size_t)(colon - p);
    while (name_len && (p[name_len - 1] == ' ' || p[name_len - 1] == '\t')) name_len--;
    if (!name_len) return nsys__garbage(r, ev, r->pos + 1, "empty header name");
    for (size_t i = 0; i < name_len; i++)
      if (!nsys__is_tchar(p[i])) return nsys__garbage(r, ev, r->pos + 1, "invalid header name");
    if (nsys__ieq(p, name_len, "content-length")) {
      size_t v;
      const char *val = colon + 1;
      if (!nsys__parse_length(val, line_len - (size_t)(val - p), &v))
        return nsys__garbage(r, ev, r->pos + 1, "Content-Length is not a non-negative integer");
      if (r->have_length && v != r->length)
        return nsys__garbage(r, ev, r->pos + r->hdr_bytes, "conflicting Content-Length headers");
      r->have_length = 1;
      r->length = v;
    }
    /* Content-Type and unknown headers are ignored. */
  }
}

/* The refusal of the oversized frame being skipped, with its id when the scanner found one. */
static nsys_frame_kind nsys__refuse(nsys_frame_reader *r, nsys_frame_event *ev) {
  r->refusal_pending = 0;
  if (nsys_id_scan_end(&r->id_scan) == NSYS_ID_FOUND) {
    memcpy(ev->id, r->id_scan.id, r->id_scan.id_len + 1);
    ev->id_len = r->id_scan.id_len;
  }
  return nsys__error(r, ev, NSYS_E_INVALID_REQUEST,
                     "invalid request: frame of %zu bytes exceeds the maximum of %zu bytes "
                     "(--max-frame-bytes); skipped",
                     r->refused_length, r->max_frame);
}

/* BODY and DISCARD: take up to `want` more bytes, cutting at an embedded header. */
static nsys_frame_kind nsys__step_body(nsys_frame_reader *r, nsys_frame_event *ev) {
  bool discard = r->state == NSYS__FR_DISCARD;
  size_t have = discard ? 0 : r->body_len;
  size_t need = r->want - have;
  size_t avail = r->len - r->pos;
  size_t take = avail < need ? avail : need;
  const char *p = r->in + r->pos;
  size_t at = 0;
  nsys__match m = nsys__scan(p, avail, take, &at);
  if (m == NSYS__MATCH_PARTIAL && avail >= need) m = NSYS__MATCH_NO; /* body completes first */
  if (m != NSYS__MATCH_NO) take = at;
  if (discard) {
    if (r->refusal_pending) nsys_id_scan_feed(&r->id_scan, p, take);
    r->n_discarded_bytes += take;
    r->want -= take;
  } else if (take) {
    nsys__body_append(r, p, take);
  }
  r->pos += take;
  /* refused as soon as the scanner settles (the id found, or none to find) */
  bool settled = discard && r->refusal_pending && r->id_scan.result != NSYS_ID_SCANNING;
  if (m == NSYS__MATCH_PARTIAL) /* wait for the rest */
    return settled ? nsys__refuse(r, ev) : NSYS_FRAME_NONE;
  if (m == NSYS__MATCH_YES) {
    size_t got = discard ? 0 : r->body_len;
    size_t claimed = discard ? 0 : r->want;
    free(r->body);
    r->body = NULL;
    r->body_len = r->body_cap = 0;
    nsys__reset_header(r);
    if (discard) return r->refusal_pending ? nsys__refuse(r, ev) : NSYS_FRAME_NONE;
    return nsys__error(r, ev, NSYS_E_PARSE,
                       "parse error: truncated frame: Content-Length said %zu bytes but a new "
                       "header began after %zu",
                       claimed, got);
  }
  if (discard) {
    if (r->want == 0) nsys__reset_header(r);
    return r->refusal_pending && (r->want == 0 || settled) ? nsys__refuse(r, ev) : NSYS_FRAME_NONE;
  }
  if (r->body_len < r->want) return NSYS_FRAME_NONE;
  nsys__body_append(r, "", 0); /* make sure there is room for the NUL */
  r->body[r->body_len] = '\0';
  ev->kind = NSYS_FRAME_MESSAGE;
  ev->body = r->body;
  ev->len = r->body_len;
  r->body = NULL;
  r->body_len = r->body_cap = 0;
  r->n_messages++;
  nsys__reset_header(r);
  return NSYS_FRAME_MESSAGE;
}

static nsys_frame_kind nsys__step_resync(nsys_frame_reader *r) {
  size_t avail = r->len - r->pos;
  size_t at = 0;
  nsys__match m = nsys__scan(r->in + r->pos, avail, avail, &at);
  if (m == NSYS__MATCH_NO) at = avail;
  r->n_discarded_bytes += at;
  r->pos += at;
  if (m == NSYS__MATCH_YES) nsys__reset_header(r);
  return NSYS_FRAME_NONE;
}

nsys_frame_kind nsys_frame_next(nsys_frame_reader *r, nsys_frame_event *ev) {
  memset(ev, 0, sizeof *ev);
  for (;;) {
    nsys__frame_state before = r->state;
    size_t pos_before = r->pos;
    nsys_frame_kind k;
    switch (r->state) {
    case NSYS__FR_HEADER: k = nsys__step_header(r, ev); break;
    case NSYS__FR_BODY:
    case NSYS__FR_DISCARD: k = nsys__step_body(r, ev); break;
    default: k = nsys__step_resync(r); break;
    }
    if (k != NSYS_FRAME_NONE) return k;
    /* Loop while a step made progress (changed state or consumed bytes). */
    if (r->state == before && r->pos == pos_before) return NSYS_FRAME_NONE;
  }
}
