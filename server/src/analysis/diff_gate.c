/* Thresholds of the diff gate: flags and config file (diff_gate.h). */
#include "analysis/diff_gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

const char *const nsys_diff_comp_names[NSYS_DIFF_NCOMP] = {"step", "compute", "ncclExposed", "idle", "copies",
                                                         "launchOverhead"};

void nsys_diff_thresholds_init(nsys_diff_thresholds *t) { memset(t, 0, sizeof *t); }

void nsys_diff_thresholds_free(nsys_diff_thresholds *t) {
  for (uint32_t i = 0; i < t->n_fam; i++) free(t->fam[i].family);
  free(t->fam);
  memset(t, 0, sizeof *t);
}

bool nsys_diff_thresholds_any(const nsys_diff_thresholds *t) {
  for (int i = 0; i < NSYS_DIFF_NCOMP; i++)
    if (t->set[i]) return true;
  return t->n_fam > 0;
}

int nsys_diff_comp_find(const char *name, size_t len) {
  for (int i = 0; i < NSYS_DIFF_NCOMP; i++)
    if (strlen(nsys_diff_comp_names[i]) == len && !memcmp(nsys_diff_comp_names[i], name, len)) return i;
  return -1;
}

static void nsys__trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r')) (*n)--;
}

bool nsys_diff_threshold_set(nsys_diff_thresholds *t, const char *key, size_t klen, const char *val, size_t vlen,
                             char *err, size_t cap) {
  nsys__trim(&key, &klen);
  nsys__trim(&val, &vlen);
  if (vlen && val[vlen - 1] == '%') {
    vlen--;
    nsys__trim(&val, &vlen);
  }
  char num[64];
  if (!vlen || vlen >= sizeof num) {
    snprintf(err, cap, "threshold '%.*s': expected a percentage such as 5%%", (int)(klen > 64 ? 64 : klen), key);
    return false;
  }
  memcpy(num, val, vlen);
  num[vlen] = '\0';
  char *end = NULL;
  double v = strtod(num, &end);
  if (end == num || *end || !isfinite(v) || v <= 0 || v > 1e6) {
    snprintf(err, cap, "threshold '%.*s': '%s' is not a percentage in (0, 1e6]", (int)(klen > 64 ? 64 : klen), key,
             num);
    return false;
  }
  int c = nsys_diff_comp_find(key, klen);
  if (c >= 0) {
    t->set[c] = true;
    t->pct[c] = v;
    return true;
  }
  static const char pre[] = "kernel:";
  size_t pl = sizeof pre - 1;
  if (klen > pl && !memcmp(key, pre, pl)) {
    const char *f = key + pl;
    size_t fl = klen - pl;
    for (uint32_t i = 0; i < t->n_fam; i++)
      if (strlen(t->fam[i].family) == fl && !memcmp(t->fam[i].family, f, fl)) {
        t->fam[i].pct = v;
        return true;
      }
    if (t->n_fam >= 1024) {
      snprintf(err, cap, "too many kernel family thresholds (at most 1024)");
      return false;
    }
    t->fam = nsys_xrealloc(t->fam, (t->n_fam + 1) * sizeof *t->fam);
    t->fam[t->n_fam++] = (nsys_diff_family_th){nsys_xstrndup(f, fl), v};
    return true;
  }
  snprintf(err, cap,
           "unknown threshold '%.*s' (expected step, compute, ncclExposed, idle, copies, launchOverhead or "
           "kernel:FAMILY)",
           (int)(klen > 64 ? 64 : klen), key);
  return false;
}

bool nsys_diff_threshold_parse(nsys_diff_thresholds *t, const char *spec, char *err, size_t cap) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec) {
    snprintf(err, cap, "--threshold expects KEY=PERCENT (e.g. step=5%%), got '%.64s'", spec);
    return false;
  }
  return nsys_diff_threshold_set(t, spec, (size_t)(eq - spec), eq + 1, strlen(eq + 1), err, cap);
}

bool nsys_diff_gate_config_parse(nsys_diff_thresholds *t, const char *text, size_t len, char *err, size_t cap) {
  size_t i = 0;
  int line = 0;
  while (i < len) {
    line++;
    size_t j = i;
    while (j < len && text[j] != '\n') j++;
    const char *s = text + i;
    size_t n = j - i;
    i = j + 1;
    for (size_t k = 0; k < n; k++)
      if (s[k] == '#') n = k;
      else if (s[k] == '\0' || ((unsigned char)s[k] < 0x20 && s[k] != '\t' && s[k] != '\r')) {
        snprintf(err, cap, "gate config line %d: control character", line);
        return false;
      }
    nsys__trim(&s, &n);
    if (!n || (n == 6 && !memcmp(s, "[gate]", 6))) continue;
    const char *eq = memchr(s, '=', n);
    if (!eq) {
      snprintf(err, cap, "gate config line %d: expected KEY = PERCENT, got '%.*s'", line, (int)(n > 64 ? 64 : n), s);
      return false;
    }
    char e2[256];
    if (!nsys_diff_threshold_set(t, s, (size_t)(eq - s), eq + 1, n - (size_t)(eq - s) - 1, e2, sizeof e2)) {
      snprintf(err, cap, "gate config line %d: %s", line, e2);
      return false;
    }
  }
  return true;
}

void nsys_diff_gate_result_free(nsys_diff_gate_result *g) {
  for (uint32_t i = 0; i < g->n_fails; i++) {
    free(g->fails[i].target);
    free(g->fails[i].message);
  }
  free(g->fails);
  memset(g, 0, sizeof *g);
}
