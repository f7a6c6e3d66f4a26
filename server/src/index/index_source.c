/* Reading side of the index: a private read-only SQLite connection per reader
 * thread, the real table names, column probes, StringIds lookups and the
 * StringIds-id -> strtab-id map used to intern names without hashing per row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index_build_internal.h"
#include "index/index_internal.h"
#include "profile/profile.h"

static const struct {
  nsys_table logical;
} nsys__src_tables[NSYS__SRC__COUNT] = {
    [NSYS__SRC_KERNEL] = {NSYS_TBL_KERNEL},
    [NSYS__SRC_MEMCPY] = {NSYS_TBL_MEMCPY},
    [NSYS__SRC_MEMSET] = {NSYS_TBL_MEMSET},
    [NSYS__SRC_GRAPH] = {NSYS_TBL_GRAPH_TRACE},
    [NSYS__SRC_RUNTIME] = {NSYS_TBL_RUNTIME},
    [NSYS__SRC_NVTX] = {NSYS_TBL_NVTX},
    [NSYS__SRC_THREAD_NAMES] = {NSYS_TBL_THREAD_NAMES},
    [NSYS__SRC_STRING_IDS] = {NSYS_TBL_STRING_IDS},
};

static void nsys__quote(const char *name, char *out, size_t cap) {
  size_t j = 0;
  out[j++] = '"';
  for (const char *c = name; *c && j + 3 < cap; c++) {
    if (*c == '"') out[j++] = '"';
    out[j++] = *c;
  }
  out[j++] = '"';
  out[j] = '\0';
}

bool nsys__src_open(nsys__src *s, nsys_profile *p, nsys_task *task) {
  memset(s, 0, sizeof *s);
  s->p = p;
  /* Same read-only, immutable URI as the loader: never a journal/WAL beside the file. */
  s->db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, task);
  if (!s->db) return false;
  sqlite3_busy_timeout(s->db, 2000);
  /* Opt-in (NSYS_AI_INDEX_MMAP=1): pages straight from the file's mapping
   * (SQLite clamps the size to its compile-time maximum, 2 GiB by default),
   * no read() call and no copy per 4 KiB page: ~5% of a cold build at 1M.
   * Off by default because a profile truncated in place while it is read
   * would then kill the process with SIGBUS, where read() returns an error
   * that is answered as one. The connection only lives for the build. */
  if (getenv("NSYS_AI_INDEX_MMAP") && strcmp(getenv("NSYS_AI_INDEX_MMAP"), "1") == 0)
    sqlite3_exec(s->db, "PRAGMA mmap_size=1099511627776", NULL, NULL, NULL);
  for (int t = 0; t < NSYS__SRC__COUNT; t++) {
    const char *real = p->schema.table[nsys__src_tables[t].logical];
    if (real) nsys__quote(real, s->table[t], sizeof s->table[t]);
  }
  return true;
}

void nsys__src_close(nsys__src *s) {
  if (s->db) sqlite3_close(s->db);
  s->db = NULL;
}

bool nsys__src_has(const nsys__src *s, nsys__src_table t) { return s->table[t][0] != '\0'; }

bool nsys__src_has_column(const nsys__src *s, nsys__src_table t, const char *col) {
  if (!nsys__src_has(s, t)) return false;
  char sql[1024];
  snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", s->table[t]);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return false;
  bool found = false;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const char *n = (const char *)sqlite3_column_text(st, 1);
    if (n && strcmp(n, col) == 0) found = true;
  }
  sqlite3_finalize(st);
  return found;
}

int64_t nsys__src_max_rowid(const nsys__src *s, nsys__src_table t) {
  if (!nsys__src_has(s, t)) return 0;
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT max(rowid) FROM %s", s->table[t]);
  sqlite3_stmt *st = NULL;
  int64_t v = 0;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v < 0 ? 0 : v;
}

/* ---- strings ------------------------------------------------------------ */

void nsys__strings_init(nsys__strings *st, nsys_profile *p, nsys__src *src) {
  memset(st, 0, sizeof *st);
  st->p = p;
  if (p->strings || p->n_strings > 0 || !nsys__src_has(src, NSYS__SRC_STRING_IDS)) return;
  /* FALLBACK: the loader did not decode StringIds (not landed yet); read them
   * here, dense ids only (sparse ids beyond 4x the row count are dropped). */
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT count(*), max(id) FROM %s", src->table[NSYS__SRC_STRING_IDS]);
  sqlite3_stmt *q = NULL;
  int64_t count = 0, maxid = -1;
  if (sqlite3_prepare_v2(src->db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
    count = sqlite3_column_int64(q, 0);
    maxid = sqlite3_column_int64(q, 1);
  }
  sqlite3_finalize(q);
  if (maxid < 0) return;
  int64_t n = NSYS_MIN(maxid + 1, 4 * count + 1024);
  st->fb = nsys_xcalloc((size_t)n, sizeof(char *));
  st->n_fb = n;
  st->use_fb = true;
  snprintf(sql, sizeof sql, "SELECT id, value FROM %s", src->table[NSYS__SRC_STRING_IDS]);
  if (sqlite3_prepare_v2(src->db, sql, -1, &q, NULL) != SQLITE_OK) return;
  while (sqlite3_step(q) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(q, 0);
    if (id < 0 || id >= n) continue;
    const char *v = (const char *)sqlite3_column_text(q, 1);
    int len = sqlite3_column_bytes(q, 1);
    if (!v) continue;
    free(st->fb[id]);
    st->fb[id] = nsys_utf8_sanitize(v, (size_t)len);
  }
  sqlite3_finalize(q);
}

void nsys__strings_free(nsys__strings *st) {
  for (int64_t i = 0; i < st->n_fb; i++) free(st->fb[i]);
  free(st->fb);
  memset(st, 0, sizeof *st);
}

const char *nsys__strings_get(const nsys__strings *st, int64_t id) {
  if (st->use_fb) return id >= 0 && id < st->n_fb ? st->fb[id] : NULL;
  return nsys_profile_string(st->p, id);
}

/* ---- sid map ------------------------------------------------------------ */

#define NSYS__SIDMAP_DIRECT ((int64_t)1 << 26)

void nsys__sidmap_free(nsys__sidmap *m) {
  free(m->map);
  free(m->hkeys);
  free(m->hvals);
  memset(m, 0, sizeof *m);
}

static uint32_t nsys__intern_sid(const nsys__strings *st, nsys_strtab *tab, int64_t sid,
                                 nsys__name_mode mode) {
  const char *s = nsys__strings_get(st, sid);
  if (!s) s = "";
  size_t n = strlen(s);
  if (mode == NSYS__NAME_STRIP_VERSION) {
    /* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": strip _v[0-9]+$ */
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k < n && k >= 2 && s[k - 1] == 'v' && s[k - 2] == '_' && k > 2) n = k - 2;
  }
  return nsys_strtab_intern(tab, s, n);
}

static uint32_t nsys__sidmap_hash_get(nsys__sidmap *m, const nsys__strings *st, nsys_strtab *tab,
                                      int64_t sid, nsys__name_mode mode) {
  if ((m->hcount + 1) * 2 > m->hcap) {
    uint32_t ncap = m->hcap ? m->hcap * 2 : 64;
    int64_t *nk = nsys_xmalloc(ncap * sizeof(int64_t));
    uint32_t *nv = nsys_xcalloc(ncap, sizeof(uint32_t));
    for (uint32_t i = 0; i < m->hcap; i++) {
      if (!m->hvals[i]) continue;
      uint32_t j = (uint32_t)(((uint64_t)m->hkeys[i] * 0x9E3779B97F4A7C15ULL) >> 32) & (ncap - 1);
      while (nv[j]) j = (j + 1) & (ncap - 1);
      nk[j] = m->hkeys[i];
      nv[j] = m->hvals[i];
    }
    free(m->hkeys);
    free(m->hvals);
    m->hkeys = nk;
    m->hvals = nv;
    m->hcap = ncap;
  }
  uint32_t j = (uint32_t)(((uint64_t)sid * 0x9E3779B97F4A7C15ULL) >> 32) & (m->hcap - 1);
  while (m->hvals[j]) {
    if (m->hkeys[j] == sid) return m->hvals[j] - 1;
    j = (j + 1) & (m->hcap - 1);
  }
  uint32_t id = nsys__intern_sid(st, tab, sid, mode);
  m->hkeys[j] = sid;
  m->hvals[j] = id + 1;
  m->hcount++;
  return id;
}

uint32_t nsys__sidmap_get(nsys__sidmap *m, const nsys__strings *st, nsys_strtab *tab, int64_t sid,
                          nsys__name_mode mode) {
  if (sid < 0 || sid >= NSYS__SIDMAP_DIRECT) return nsys__sidmap_hash_get(m, st, tab, sid, mode);
  if (sid < m->cap) {
    uint32_t v = m->map[sid];
    if (v) return v - 1;
  } else {
    int64_t ncap = m->cap ? m->cap : 4096;
    while (ncap <= sid) ncap *= 2;
    m->map = nsys_xrealloc(m->map, (size_t)ncap * sizeof(uint32_t));
    memset(m->map + m->cap, 0, (size_t)(ncap - m->cap) * sizeof(uint32_t));
    m->cap = ncap;
  }
  uint32_t id = nsys__intern_sid(st, tab, sid, mode);
  m->map[sid] = id + 1;
  return id;
}

/* ---- a reader's SELECT arguments ---------------------------------------- */

void nsys__args_add(nsys__args *a, const char *expr) {
  if (a->n >= NSYS__ARGS_MAX || strlen(expr) >= sizeof a->expr[0]) abort(); /* fixed lists, all short */
  snprintf(a->expr[a->n++], sizeof a->expr[0], "%s", expr);
}

/* the expression without surrounding blanks and without double quotes */
static void nsys__args_norm(const char *s, size_t n, char *out, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < cap; i++)
    if (s[i] != '"' && s[i] != ' ') out[k++] = s[i];
  out[k] = '\0';
}

void nsys__args_map(nsys__args *a, const char *cols, uint8_t *arg, int n) {
  const char *c = cols;
  for (int k = 0; k < n; k++) {
    const char *comma = strchr(c, ',');
    size_t len = comma ? (size_t)(comma - c) : strlen(c);
    char want[64], have[64];
    nsys__args_norm(c, len, want, sizeof want);
    int found = -1;
    for (int i = 0; i < a->n && found < 0; i++) {
      nsys__args_norm(a->expr[i], strlen(a->expr[i]), have, sizeof have);
      if (strcmp(want, have) == 0) found = i;
    }
    if (found < 0) {
      char expr[64];
      snprintf(expr, sizeof expr, "%.*s", (int)len, c);
      nsys__args_add(a, expr);
      found = a->n - 1;
    }
    arg[k] = (uint8_t)found;
    c = comma ? comma + 1 : c + len;
  }
}

char *nsys__args_join(const nsys__args *a) {
  size_t cap = (size_t)a->n * (sizeof a->expr[0] + 2) + 1, k = 0;
  char *out = nsys_xmalloc(cap);
  out[0] = '\0';
  for (int i = 0; i < a->n; i++) k += (size_t)snprintf(out + k, cap - k, i ? ", %s" : "%s", a->expr[i]);
  return out;
}
