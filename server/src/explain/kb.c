/* Knowledge-base loading and matching (see kb.h). */
#include "explain/kb.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "explain/context.h"

void nsys_kb_free(nsys_kb *kb) {
  for (int i = 0; i < kb->n; i++)
    if (kb->pats[i].has_re) regfree(&kb->pats[i].re);
  free(kb->pats);
  memset(kb, 0, sizeof *kb);
}

static bool nsys__known_frameworks(const char *list) {
  while (*list) {
    const char *e = strchr(list, ',');
    size_t n = e ? (size_t)(e - list) : strlen(list);
    bool known = false;
    for (int k = 0; k < NSYS_FW_COUNT && !known; k++) {
      const char *name = nsys_framework_name((nsys_framework)k);
      known = strlen(name) == n && strncmp(name, list, n) == 0;
    }
    if (!known) return false;
    list += n + (e ? 1 : 0);
  }
  return true;
}

/* Checks what the generator cannot (the framework names of this build,
 * POSIX regular expressions) and compiles the regex. */
static bool nsys__prepare(nsys_kb_pattern *p, char *err, size_t errcap) {
  const char *id = p->id ? p->id : "?";
  if (!p->id || !p->match || !p->match[0] || !p->origin || !p->category || !p->bound || !p->description) {
    snprintf(err, errcap, "pattern %s: needs id, a matcher, origin, category, bound, description", id);
    return false;
  }
  p->match_len = strlen(p->match);
  for (int i = 0; i < p->n_suggestions; i++) {
    const char *fw = p->suggestion_frameworks ? p->suggestion_frameworks[i] : NULL;
    if (fw && !nsys__known_frameworks(fw)) {
      snprintf(err, errcap, "pattern %s: suggestions[%d].frameworks: unknown framework in \"%s\"", id, i, fw);
      return false;
    }
  }
  if (p->kind == NSYS_KB_REGEX) {
    int rc = regcomp(&p->re, p->match, REG_EXTENDED | REG_NOSUB | (p->icase ? REG_ICASE : 0));
    if (rc != 0) {
      char msg[128];
      regerror(rc, &p->re, msg, sizeof msg);
      snprintf(err, errcap, "pattern %s: bad regex: %s", id, msg);
      return false;
    }
    p->has_re = true;
  }
  return true;
}

bool nsys_kb_load(nsys_kb *kb, const nsys_kb_pattern *rows, int n, char *err, size_t errcap) {
  memset(kb, 0, sizeof *kb);
  kb->pats = nsys_xcalloc(n > 0 ? (size_t)n : 1, sizeof *kb->pats);
  for (int i = 0; i < n; i++) {
    nsys_kb_pattern *p = &kb->pats[kb->n];
    *p = rows[i];
    p->has_re = false;
    p->order = kb->n;
    if (!nsys__prepare(p, err, errcap)) return false;
    kb->n++;
  }
  return true;
}

static nsys_kb nsys__global;
static pthread_once_t nsys__once = PTHREAD_ONCE_INIT;

static void nsys__load_global(void) {
  char err[512] = "";
  if (!nsys_kb_load(&nsys__global, nsys_kb_table, nsys_kb_table_count, err, sizeof err))
    nsys_log("knowledge base: %s (the patterns after it are not loaded)", err); /* a C test keeps this from shipping */
}

const nsys_kb *nsys_kb_get(void) {
  pthread_once(&nsys__once, nsys__load_global);
  return &nsys__global;
}

static const char *nsys__strstr_icase(const char *h, const char *n, size_t nl) {
  if (nl == 0) return h;
  for (; *h; h++) {
    if (strncasecmp(h, n, nl) == 0) return h;
  }
  return NULL;
}

static bool nsys__match_one(const nsys_kb_pattern *p, const char *s) {
  if (!s || !*s) return false;
  switch (p->kind) {
    case NSYS_KB_EXACT: return p->icase ? strcasecmp(s, p->match) == 0 : strcmp(s, p->match) == 0;
    case NSYS_KB_PREFIX:
      return p->icase ? strncasecmp(s, p->match, p->match_len) == 0 : strncmp(s, p->match, p->match_len) == 0;
    case NSYS_KB_CONTAINS:
      return p->icase ? nsys__strstr_icase(s, p->match, p->match_len) != NULL : strstr(s, p->match) != NULL;
    case NSYS_KB_GLOB: return fnmatch(p->match, s, p->icase ? FNM_CASEFOLD : 0) == 0;
    case NSYS_KB_REGEX: return p->has_re && regexec(&p->re, s, 0, NULL, 0) == 0;
  }
  return false;
}

bool nsys_kb_pattern_matches(const nsys_kb_pattern *p, const char *short_name, const char *full_name) {
  if (p->field != NSYS_KB_FIELD_FULL && nsys__match_one(p, short_name)) return true;
  if (p->field != NSYS_KB_FIELD_SHORT && nsys__match_one(p, full_name)) return true;
  return false;
}

const nsys_kb_pattern *nsys_kb_match(const nsys_kb *kb, const char *short_name, const char *full_name) {
  if (!kb) return NULL;
  /* bound the work on hostile input: names longer than this are cut */
  char sbuf[4096], fbuf[8192];
  const char *s = short_name, *f = full_name;
  if (s && strnlen(s, sizeof sbuf) >= sizeof sbuf) {
    memcpy(sbuf, s, sizeof sbuf - 1);
    sbuf[sizeof sbuf - 1] = '\0';
    s = sbuf;
  }
  if (f && strnlen(f, sizeof fbuf) >= sizeof fbuf) {
    memcpy(fbuf, f, sizeof fbuf - 1);
    fbuf[sizeof fbuf - 1] = '\0';
    f = fbuf;
  }
  const nsys_kb_pattern *best = NULL;
  for (int i = 0; i < kb->n; i++) {
    const nsys_kb_pattern *p = &kb->pats[i];
    if (best && (p->priority < best->priority ||
                 (p->priority == best->priority && p->match_len <= best->match_len)))
      continue;
    if (nsys_kb_pattern_matches(p, s, f)) best = p;
  }
  return best;
}
