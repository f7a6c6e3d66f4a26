/* profile/openSet: the files of a rank set opened through profile/open (same
 * checks, caches and registry) on worker threads, as many at once as the
 * memory budget allows by their estimated index sizes, each summarised
 * (nsys_rank_summarize) and its per-rank tables taken while its index is in
 * memory; when the whole set does not fit the budget a file the set opened
 * is closed after that. Then the summaries are reduced to the set. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "common/util.h"
#include "index/index.h"
#include "methods/analysis_json.h"
#include "methods/set_open.h"
#include "profile/profile.h"
#include "rpc/json_int.h"
#include "rpc/method_table.h"
#include "rpc/params.h"
#include "common/param_specs.gen.h"

/* Estimated index memory of a file: its size (the index holds about what the
 * export's activity tables hold; measured in bench/bench_ranks.py). */
static int64_t nsys__estimate(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fclose(f);
  return sz > 0 ? (int64_t)sz : 0;
}

static int nsys__cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int64_t nsys__default_budget_mb(void) {
  long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  int64_t mb = pages > 0 && psz > 0 ? (int64_t)pages * psz / 2 / (1 << 20) : 4096;
  return mb < 64 ? 64 : mb;
}

typedef struct {
  nsys_call *call;
  nsys_set *set;
  bool keep;           /* every file stays open */
  nsys_profile **before; /* open before the set (never closed by it) */
  int n_before;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint32_t next, done;
  int64_t in_flight, budget;
  nsys_rank_summary **sums; /* per file: its ranks */
  uint32_t *n_sums;
  bool failed;
} nsys__job;

static cJSON *nsys__tables(nsys_task *task, nsys_profile *p, const nsys_index *ix) {
  static const char *const names[][2] = {{"overlap", "overlap"}, {"nccl", "nccl_breakdown"}, {"iterations", "iterations"}};
  cJSON *t = cJSON_CreateObject();
  for (size_t i = 0; i < NSYS_ARRAY_LEN(names); i++) {
    nsys_aresult *res = nsys_analysis_exec(task, p, ix, names[i][1], NULL, NULL);
    cJSON *r = res ? nsys_aresult_json(res) : NULL;
    nsys_aresult_free(res);
    if (!r) {
      cJSON_Delete(t);
      return NULL;
    }
    cJSON_AddItemToObject(t, names[i][0], r);
  }
  return t;
}

/* One file: open, index, summarise (and the per-rank tables when f->tables
 * is wanted); closed after unless `keep` or it was open before (`before`). */
bool nsys_set_open_one(nsys_call *call, const char *path, bool keep, bool tables, nsys_profile *const *before,
                       int n_before, nsys_task *task, nsys_set_file *f, nsys_rank_summary **v, uint32_t *n) {
  cJSON *op = cJSON_CreateObject();
  cJSON_AddStringToObject(op, "path", path);
  nsys_call sub;
  nsys_call_init(&sub, "profile/open", op, call->profiles);
  sub.task.parent = task;
  const nsys_method *open = nsys_method_find("profile/open");
  cJSON *r = open ? nsys_method_run(open->fn, &sub) : NULL;
  if (!r) {
    nsys_task_fail(task, sub.task.err ? sub.task.err : NSYS_E_INTERNAL, "%s: %s", path, sub.task.err_msg);
    nsys_call_dispose(&sub);
    cJSON_Delete(op);
    return false;
  }
  nsys_call_dispose(&sub);
  cJSON_Delete(op);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "profileId");
  nsys_profile *p = cJSON_IsString(id) ? nsys_registry_get(call->profiles, id->valuestring) : NULL;
  cJSON_Delete(r);
  if (!p) return nsys_task_fail(task, NSYS_E_INTERNAL, "%s: profile vanished after open", path);
  const nsys_task *prev = nsys_task_enter(task);
  const nsys_index *ix = nsys_index_get(p, task);
  bool ok = ix != NULL;
  uint32_t cap = 0;
  if (ok) ok = nsys_rank_summarize(task, p, ix, v, n, &cap);
  if (ok && tables) ok = (f->tables = nsys__tables(task, p, ix)) != NULL;
  nsys_task_leave(prev);
  f->cached = nsys_index_from_cache(ix);
  snprintf(f->profile_id, sizeof f->profile_id, "%s", p->id);
  bool opened_before = false;
  for (int k = 0; k < n_before; k++) opened_before |= before[k] == p;
  if (!keep && !opened_before) {
    nsys_registry_remove(call->profiles, p->id);
    f->profile_id[0] = '\0';
  }
  nsys_profile_release(p);
  if (!ok) {
    for (uint32_t k = 0; k < *n; k++) nsys_rank_summary_dispose(&(*v)[k]);
    free(*v);
    *v = NULL;
    *n = 0;
  }
  return ok;
}

static bool nsys__one(nsys__job *j, uint32_t i, nsys_task *task) {
  nsys_rank_summary *v = NULL;
  uint32_t n = 0;
  bool ok = nsys_set_open_one(j->call, j->set->files[i].path, j->keep, true, j->before, j->n_before, task,
                              &j->set->files[i], &v, &n);
  pthread_mutex_lock(&j->mu);
  j->sums[i] = v;
  j->n_sums[i] = n;
  pthread_mutex_unlock(&j->mu);
  return ok;
}

static void *nsys__worker(void *arg) {
  nsys__job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->mu);
    uint32_t i = j->next;
    if (j->failed || i >= j->set->n_files) {
      pthread_mutex_unlock(&j->mu);
      return NULL;
    }
    int64_t need = j->set->files[i].est_bytes;
    /* within the budget: wait while others run and this one would pass it */
    while (!j->failed && j->in_flight > 0 && j->in_flight + need > j->budget) pthread_cond_wait(&j->cv, &j->mu);
    if (j->failed || j->next != i) { /* another worker took it meanwhile */
      pthread_mutex_unlock(&j->mu);
      continue;
    }
    j->next++;
    j->in_flight += need;
    pthread_mutex_unlock(&j->mu);
    nsys_task t;
    nsys_task_init_child(&t, &j->call->task);
    bool ok = nsys__one(j, i, &t);
    pthread_mutex_lock(&j->mu);
    j->in_flight -= need;
    j->done++;
    if (!ok && !j->failed) {
      j->failed = true;
      if (t.err == NSYS_E_CANCELLED) nsys_task_fail_from(&j->call->task, &t);
      else nsys_task_fail(&j->call->task, t.err, "params.paths[%u]: %s", i, t.err_msg);
    }
    nsys_task_progress(&j->call->task, (int)(90 * j->done / j->set->n_files), j->set->files[i].path);
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
  }
}

void nsys_set_free(nsys_set *s) {
  if (!s) return;
  nsys_rankset_dispose(&s->rs);
  for (uint32_t i = 0; i < s->n_files; i++) {
    free((char *)s->files[i].path);
    cJSON_Delete(s->files[i].tables);
  }
  free(s->files);
  free(s);
}

cJSON *nsys_method_profile_open_set(nsys_call *call) {
  const cJSON *paths = NULL;
  int64_t budget_mb = 0, threads = 0;
  if (!nsys_param_array(call, "paths", true, &paths)) return NULL;
  int n = cJSON_GetArraySize(paths);
  if (n < 1 || n > 1024) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.paths: expected 1 to 1024 paths");
  const char **pv = nsys_xcalloc((size_t)n, sizeof *pv);
  int i = 0;
  const cJSON *pi;
  cJSON_ArrayForEach(pi, paths) {
    if (!cJSON_IsString(pi)) {
      free(pv);
      return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.paths[%d]: expected a string", i);
    }
    pv[i++] = pi->valuestring;
  }
  /* the same path twice would be two copies of its ranks: sorted copies, neighbours compared */
  const char **sorted = nsys_xcalloc((size_t)n, sizeof *sorted);
  memcpy(sorted, pv, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, nsys__cmp_str);
  for (int k = 1; k < n; k++)
    if (!strcmp(sorted[k - 1], sorted[k])) {
      cJSON *r = nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.paths: %s is listed twice", sorted[k]);
      free(sorted);
      free(pv);
      return r;
    }
  free(sorted);
  if (!nsys_param_int64(call, NSYS_P_PROFILE_OPEN_SET_MEMORY_BUDGET_MB, &budget_mb) ||
      !nsys_param_int64(call, NSYS_P_PROFILE_OPEN_SET_THREADS, &threads))
    return NULL;
  if (!budget_mb) budget_mb = nsys__default_budget_mb();
  if (!threads) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    threads = c > 0 ? c : 1;
  }
  if (threads > n) threads = n;
  nsys_set *s = nsys_xcalloc(1, sizeof *s);
  s->n_files = (uint32_t)n;
  s->files = nsys_xcalloc((size_t)n, sizeof *s->files);
  s->threads = (uint32_t)threads;
  s->budget_mb = budget_mb;
  int64_t est = 0;
  for (i = 0; i < n; i++) {
    s->files[i].path = nsys_xstrdup(pv[i]);
    s->files[i].est_bytes = nsys__estimate(s->files[i].path);
    est += s->files[i].est_bytes;
  }
  free(pv);
  s->est_mb = (est + (1 << 20) - 1) >> 20;
  nsys__job j = {.call = call, .set = s, .budget = budget_mb << 20};
  j.keep = s->kept_open = s->est_mb <= budget_mb;
  j.before = nsys_registry_list(call->profiles, &j.n_before);
  j.sums = nsys_xcalloc((size_t)n, sizeof *j.sums);
  j.n_sums = nsys_xcalloc((size_t)n, sizeof *j.n_sums);
  pthread_mutex_init(&j.mu, NULL);
  pthread_cond_init(&j.cv, NULL);
  nsys_task_progress_begin(&call->task, "profile/openSet");
  pthread_t *th = nsys_xcalloc((size_t)threads, sizeof *th);
  int started = 0;
  for (int64_t t = 1; t < threads; t++)
    if (pthread_create(&th[started], NULL, nsys__worker, &j) == 0) started++;
  nsys__worker(&j);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  free(th);
  pthread_mutex_destroy(&j.mu);
  pthread_cond_destroy(&j.cv);
  for (int k = 0; k < j.n_before; k++) nsys_profile_release(j.before[k]);
  free(j.before);
  /* every rank, in file order */
  nsys_rank_summary *all = NULL;
  uint32_t na = 0, cap = 0;
  for (i = 0; i < n; i++) {
    for (uint32_t k = 0; k < j.n_sums[i] && !j.failed; k++) {
      if (na == cap) all = nsys_xrealloc(all, (cap = cap ? cap * 2 : 64) * sizeof *all);
      all[na++] = j.sums[i][k];
    }
    if (j.failed)
      for (uint32_t k = 0; k < j.n_sums[i]; k++) nsys_rank_summary_dispose(&j.sums[i][k]);
    free(j.sums[i]);
  }
  free(j.sums);
  free(j.n_sums);
  if (j.failed) {
    free(all);
    nsys_set_free(s);
    return NULL;
  }
  nsys_task_progress(&call->task, 95, "matching collectives");
  if (!nsys_rankset_reduce(&call->task, all, na, &s->rs)) {
    nsys_set_free(s);
    return NULL;
  }
  nsys_set *kept = nsys_set_registry_add(s);
  cJSON *res = nsys_set_json_open(kept);
  nsys_set_put(kept);
  return res;
}

/* --- the registry of sets --- */

typedef struct nsys__entry {
  nsys_set *set;
  int refs;
  bool removed;
} nsys__entry;

static pthread_mutex_t nsys__reg_mu = PTHREAD_MUTEX_INITIALIZER;
static nsys__entry *nsys__reg;
static uint32_t nsys__reg_n, nsys__reg_cap, nsys__reg_next;

nsys_set *nsys_set_registry_add(nsys_set *s) {
  pthread_mutex_lock(&nsys__reg_mu);
  snprintf(s->id, sizeof s->id, "s%u", ++nsys__reg_next);
  if (nsys__reg_n == nsys__reg_cap)
    nsys__reg = nsys_xrealloc(nsys__reg, (nsys__reg_cap = nsys__reg_cap ? nsys__reg_cap * 2 : 8) * sizeof *nsys__reg);
  nsys__reg[nsys__reg_n++] = (nsys__entry){s, 2, false}; /* the registry's and the caller's */
  pthread_mutex_unlock(&nsys__reg_mu);
  return s;
}

static void nsys__unref(uint32_t i) {
  if (--nsys__reg[i].refs > 0) return;
  nsys_set_free(nsys__reg[i].set);
  nsys__reg[i] = nsys__reg[--nsys__reg_n];
}

nsys_set *nsys_set_get(const char *id) {
  nsys_set *s = NULL;
  pthread_mutex_lock(&nsys__reg_mu);
  for (uint32_t i = 0; i < nsys__reg_n; i++)
    if (!nsys__reg[i].removed && !strcmp(nsys__reg[i].set->id, id)) {
      nsys__reg[i].refs++;
      s = nsys__reg[i].set;
      break;
    }
  pthread_mutex_unlock(&nsys__reg_mu);
  return s;
}

void nsys_set_put(nsys_set *s) {
  pthread_mutex_lock(&nsys__reg_mu);
  for (uint32_t i = 0; i < nsys__reg_n; i++)
    if (nsys__reg[i].set == s) {
      nsys__unref(i);
      break;
    }
  pthread_mutex_unlock(&nsys__reg_mu);
}

bool nsys_set_remove(const char *id) {
  bool found = false;
  pthread_mutex_lock(&nsys__reg_mu);
  for (uint32_t i = 0; i < nsys__reg_n; i++)
    if (!nsys__reg[i].removed && !strcmp(nsys__reg[i].set->id, id)) {
      nsys__reg[i].removed = found = true;
      nsys__unref(i);
      break;
    }
  if (!nsys__reg_n) {
    free(nsys__reg);
    nsys__reg = NULL;
    nsys__reg_cap = 0;
  }
  pthread_mutex_unlock(&nsys__reg_mu);
  return found;
}
