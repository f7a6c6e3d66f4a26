/* Schema detection: which generation of export this is, where each logical
 * table lives (plain, `_V<n>`-suffixed or renamed), and the columns of each
 * (PRAGMA table_info, read once at open and cached in p->schema).
 * See shared/reference/nsys-sqlite-schema.md §1.1, §1.4, §2, §9. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "profile/loader_internal.h"
#include "common/task.h"

/* Candidate real names for each logical table, in order of preference. */
typedef struct {
  nsys_table table;
  const char *names[3];
} nsys__table_spec;

static const nsys__table_spec nsys__specs[] = {
    {NSYS_TBL_STRING_IDS, {"StringIds"}},
    {NSYS_TBL_KERNEL, {"CUPTI_ACTIVITY_KIND_KERNEL"}},
    {NSYS_TBL_MEMCPY, {"CUPTI_ACTIVITY_KIND_MEMCPY"}},
    {NSYS_TBL_MEMSET, {"CUPTI_ACTIVITY_KIND_MEMSET"}},
    {NSYS_TBL_RUNTIME, {"CUPTI_ACTIVITY_KIND_RUNTIME"}},
    {NSYS_TBL_SYNC, {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}},
    {NSYS_TBL_GRAPH_TRACE, {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}},
    {NSYS_TBL_NVTX, {"NVTX_EVENTS"}},
    {NSYS_TBL_GPU_INFO, {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU"}},
    {NSYS_TBL_CUDA_DEVICE, {"TARGET_INFO_CUDA_DEVICE"}},
    {NSYS_TBL_PROCESSES, {"PROCESSES"}},
    {NSYS_TBL_THREAD_NAMES, {"ThreadNames"}},
    {NSYS_TBL_SESSION_START, {"TARGET_INFO_SESSION_START_TIME"}},
    {NSYS_TBL_CALLCHAINS, {"CUDA_CALLCHAINS"}},
    {NSYS_TBL_SAMPLING, {"COMPOSITE_EVENTS"}},
    {NSYS_TBL_SAMPLING_CALLCHAINS, {"SAMPLING_CALLCHAINS"}},
    {NSYS_TBL_OSRT, {"OSRT_API"}},
    {NSYS_TBL_CUDA_GRAPH_EVENTS, {"CUDA_GRAPH_EVENTS", "CUDA_GRAPH_NODE_EVENTS"}},
    {NSYS_TBL_META, {"META_DATA_EXPORT", "EXPORT_META_DATA"}},
    {NSYS_TBL_ENUM_NSYS_EVENT_TYPE, {"ENUM_NSYS_EVENT_TYPE"}},
    {NSYS_TBL_CUDA_GPU_LEGACY, {"TARGET_INFO_CUDA_GPU"}},
    {NSYS_TBL_CUDA_GRAPH_NODE_EVENTS, {"CUDA_GRAPH_NODE_EVENTS"}},
    {NSYS_TBL_CUDA_EVENT, {"CUPTI_ACTIVITY_KIND_CUDA_EVENT"}},
    {NSYS_TBL_META_CAPTURE, {"META_DATA_CAPTURE"}},
    {NSYS_TBL_ANALYSIS_DETAILS, {"ANALYSIS_DETAILS"}},
    {NSYS_TBL_CONTEXT_INFO, {"TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_NULL_STREAM"}},
    {NSYS_TBL_CUDA_STREAM, {"TARGET_INFO_CUDA_STREAM"}},
    {NSYS_TBL_OSRT_CALLCHAINS, {"OSRT_CALLCHAINS"}},
    {NSYS_TBL_SCHED, {"SCHED_EVENTS"}},
    {NSYS_TBL_PROFILER_OVERHEAD, {"PROFILER_OVERHEAD"}},
    {NSYS_TBL_SYSTEM_ENV, {"TARGET_INFO_SYSTEM_ENV"}},
    {NSYS_TBL_ENUM_LAUNCH_TYPE, {"ENUM_CUDA_KERNEL_LAUNCH_TYPE", "ENUM_CUDA_KRENEL_LAUNCH_TYPE"}},
};

const char *nsys_schema_gen_name(nsys_schema_gen g) {
  switch (g) {
  case NSYS_GEN_META_EXPORT: return "META_DATA_EXPORT";
  case NSYS_GEN_EXPORT_META: return "EXPORT_META_DATA";
  case NSYS_GEN_PRE2022: return "pre-2022";
  default: return "unknown";
  }
}

bool nsys_schema_is_nsys_table(const char *name) {
  static const char *const exact[] = {
      "StringIds", "ThreadNames", "NVTX_EVENTS", "ANALYSIS_DETAILS", "META_DATA_EXPORT",
      "META_DATA_CAPTURE", "EXPORT_META_DATA", "OSRT_API", "COMPOSITE_EVENTS",
      "SAMPLING_CALLCHAINS", "PROFILER_OVERHEAD", "ENUM_NSYS_EVENT_TYPE", "ENUM_NSYS_EVENT_CLASS",
  };
  static const char *const prefix[] = {"TARGET_INFO_", "CUPTI_ACTIVITY_KIND_"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(exact); i++)
    if (strcasecmp(name, exact[i]) == 0) return true;
  for (size_t i = 0; i < NSYS_ARRAY_LEN(prefix); i++)
    if (strncasecmp(name, prefix[i], strlen(prefix[i])) == 0) return true;
  return false;
}

/* If `real` is `base` or `base_V<digits>`, returns the version (0 for the
 * plain name), else -1. Case-insensitive like SQLite's own names. */
static long nsys__variant_of(const char *real, const char *base) {
  size_t n = strlen(base);
  if (strncasecmp(real, base, n) != 0) return -1;
  const char *rest = real + n;
  if (*rest == '\0') return 0;
  if ((rest[0] != '_') || (rest[1] != 'V' && rest[1] != 'v') || !rest[2]) return -1;
  long v = 0;
  for (const char *d = rest + 2; *d; d++) {
    if (*d < '0' || *d > '9' || v > 100000) return -1;
    v = v * 10 + (*d - '0');
  }
  return v;
}

/* Best real table for `base`: the plain name if present, else the highest
 * `_V<n>` variant. */
static const char *nsys__resolve(const nsys_schema *s, const char *base) {
  const char *best = NULL;
  long best_v = -1;
  for (int i = 0; i < s->n_all_tables; i++) {
    long v = nsys__variant_of(s->all_tables[i], base);
    if (v < 0) continue;
    if (v == 0) return s->all_tables[i];
    if (v > best_v) {
      best_v = v;
      best = s->all_tables[i];
    }
  }
  return best;
}

static int nsys__cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool nsys__list_tables(nsys_profile *p, nsys_task *task) {
  nsys_schema *s = &p->schema;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(p->db, "SELECT name FROM sqlite_master WHERE type='table'", -1, &st,
                              NULL);
  int cap = 0;
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const unsigned char *name = sqlite3_column_text(st, 0);
      if (!name) continue;
      if (s->n_all_tables == cap) {
        cap = cap ? cap * 2 : 64;
        s->all_tables = nsys_xrealloc(s->all_tables, (size_t)cap * sizeof *s->all_tables);
      }
      s->all_tables[s->n_all_tables++] = nsys_xstrdup((const char *)name);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_OK) {
    if ((rc & 0xFF) == SQLITE_NOTADB) {
      nsys_task_fail(task, NSYS_E_NOT_SQLITE, "%s is not a readable SQLite database: %s", p->path,
                     sqlite3_errmsg(p->db));
      return false;
    }
    return nsys_profile_sql_fail(p, task, rc, "the table list");
  }
  if (s->n_all_tables > 1)
    qsort(s->all_tables, (size_t)s->n_all_tables, sizeof *s->all_tables, nsys__cmp_str);
  return true;
}

static bool nsys__load_columns(nsys_profile *p, nsys_table t, nsys_task *task) {
  nsys_schema *s = &p->schema;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(p->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL);
  int cap = 0;
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, s->table[t], -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const unsigned char *name = sqlite3_column_text(st, 0);
      if (!name) continue;
      if (s->n_cols[t] == cap) {
        cap = cap ? cap * 2 : 16;
        s->cols[t] = nsys_xrealloc(s->cols[t], (size_t)cap * sizeof *s->cols[t]);
      }
      s->cols[t][s->n_cols[t]++] = nsys_xstrdup((const char *)name);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_OK) return nsys_profile_sql_fail(p, task, rc, s->table[t]);
  return true;
}

bool nsys_schema_has_column(const nsys_profile *p, nsys_table table, const char *col) {
  if (table < 0 || table >= NSYS_TBL__COUNT) return false;
  for (int i = 0; i < p->schema.n_cols[table]; i++)
    if (strcmp(p->schema.cols[table][i], col) == 0) return true;
  return false;
}

bool nsys_schema_load(nsys_profile *p, nsys_task *task) {
  nsys_schema *s = &p->schema;
  if (!nsys__list_tables(p, task)) return false;

  bool is_nsys = false;
  for (int i = 0; i < s->n_all_tables && !is_nsys; i++)
    is_nsys = nsys_schema_is_nsys_table(s->all_tables[i]);
  if (!is_nsys) {
    nsys_task_fail(task, NSYS_E_NOT_NSYS_EXPORT,
                   "%s is SQLite but not an Nsight Systems export (%d tables, none of StringIds, "
                   "TARGET_INFO_*, CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, ThreadNames or the export "
                   "metadata)",
                   p->path, s->n_all_tables);
    return false;
  }

  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__specs); i++) {
    const nsys__table_spec *spec = &nsys__specs[i];
    for (size_t k = 0; k < NSYS_ARRAY_LEN(spec->names) && spec->names[k]; k++) {
      const char *real = nsys__resolve(s, spec->names[k]);
      if (real) {
        s->table[spec->table] = nsys_xstrdup(real);
        break;
      }
    }
  }
  for (int t = 0; t < NSYS_TBL__COUNT; t++)
    if (s->table[t] && !nsys__load_columns(p, (nsys_table)t, task)) return false;

  /* 2021-era exports carry both a minimal TARGET_INFO_GPU (vmId, deviceId,
   * name, busLocation) and the detailed TARGET_INFO_CUDA_GPU: prefer the
   * detailed one when TARGET_INFO_GPU lacks the modern `id` column. */
  if (s->table[NSYS_TBL_GPU_INFO] && s->table[NSYS_TBL_CUDA_GPU_LEGACY] &&
      !nsys_schema_has_column(p, NSYS_TBL_GPU_INFO, "id")) {
    free(s->table[NSYS_TBL_GPU_INFO]);
    for (int i = 0; i < s->n_cols[NSYS_TBL_GPU_INFO]; i++) free(s->cols[NSYS_TBL_GPU_INFO][i]);
    free(s->cols[NSYS_TBL_GPU_INFO]);
    s->table[NSYS_TBL_GPU_INFO] = nsys_xstrdup(s->table[NSYS_TBL_CUDA_GPU_LEGACY]);
    s->n_cols[NSYS_TBL_GPU_INFO] = 0;
    s->cols[NSYS_TBL_GPU_INFO] = NULL;
    if (!nsys__load_columns(p, NSYS_TBL_GPU_INFO, task)) return false;
  }

  if (nsys__resolve(s, "META_DATA_EXPORT")) s->gen = NSYS_GEN_META_EXPORT;
  else if (nsys__resolve(s, "EXPORT_META_DATA")) s->gen = NSYS_GEN_EXPORT_META;
  else if (nsys__resolve(s, "TARGET_INFO_CUDA_GPU")) s->gen = NSYS_GEN_PRE2022;
  else s->gen = NSYS_GEN_UNKNOWN;
  return true;
}

void nsys_schema_free(nsys_schema *s) {
  for (int t = 0; t < NSYS_TBL__COUNT; t++) {
    free(s->table[t]);
    for (int i = 0; i < s->n_cols[t]; i++) free(s->cols[t][i]);
    free(s->cols[t]);
  }
  for (int i = 0; i < s->n_all_tables; i++) free(s->all_tables[i]);
  free(s->all_tables);
  memset(s, 0, sizeof *s);
}
