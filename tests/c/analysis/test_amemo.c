/* The per-profile memo of the analyses' shared cache (analysis/amemo.h):
 * every analysis, the report and profile/diff answer the same bytes through
 * the memo as through a cache of their own (NSYS_AI_ANALYSIS_MEMO=0), on
 * real exports; a request cancelled before or while the memo is being built
 * (its devices on several threads) fails -32800 and keeps nothing
 * half-built, and the next request builds it whole and answers as a fresh
 * open does; concurrent first requests share one build and all answer the
 * same bytes; profile/diff answers the same with its two sides on one thread
 * or two, and from the side the memo keeps (after a cancelled first diff
 * too). Skips (77) when the shared real profiles are absent. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../index/index_test_util.h"
#include "analysis/amemo.h"
#include "analysis/analysis.h"
#include "analysis/report.h"
#include "common/errors.h"
#include "analysis/diff.h"
#include "methods/analysis_json.h"
#include "methods/diff_json.h"

static const char *const ANALYSES[] = {"top_kernels",     "gpu_idle_gaps",         "kernel_launch_overhead",
                                       "sync_cost",       "overlap",               "nccl_breakdown",
                                       "iterations",      "memory_transfers",      "stream_classification",
                                       "nvtx_summary",    "thread_utilization",    "stage_overlap"};
enum { N_ANALYSES = sizeof ANALYSES / sizeof ANALYSES[0] };

/* The answer of one analysis (or of the report when name is NULL) as compact
 * JSON; NULL when it failed (*code then holds the task's error). */
static char *answer(nsys_profile *p, const nsys_index *ix, const char *name, bool cancelled, int *code) {
  nsys_task task;
  nsys_task_init(&task);
  if (cancelled) nsys_task_cancel(&task);
  cJSON *j = NULL;
  if (name) {
    nsys_aresult *r = nsys_analysis_exec(&task, p, ix, name, NULL, NULL);
    if (r) j = nsys_aresult_json(r);
    nsys_aresult_free(r);
  } else {
    nsys_report *r = nsys_report_build(&task, p, ix);
    if (r) j = nsys_report_json(r);
    nsys_report_free(r);
  }
  *code = (int)task.err;
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return s;
}

/* profile/diff of the profile with itself, as compact JSON (NULL: failed). */
static char *diff_answer(nsys_profile *p, const nsys_index *ix, bool cancelled, int *code) {
  nsys_task task;
  nsys_task_init(&task);
  if (cancelled) nsys_task_cancel(&task);
  nsys_diff d;
  nsys_diff_page page = {0, 1000, 0, 1000};
  char *s = NULL;
  if (nsys_diff_run(&d, &task, p, ix, p, ix, NULL)) {
    cJSON *j = nsys_diff_json(&d, &page);
    s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
  }
  nsys_diff_free(&d);
  *code = (int)task.err;
  return s;
}

typedef struct {
  nsys_profile *p;
  const nsys_index *ix;
  const char *name; /* NULL: profile/diff */
  char *got;
  int code;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  r->got = r->name ? answer(r->p, r->ix, r->name, false, &r->code) : diff_answer(r->p, r->ix, false, &r->code);
  return NULL;
}

static void drop_memo(nsys_profile *p) {
  if (p->memo && p->memo_free) p->memo_free(p->memo);
  p->memo = NULL;
}

/* Concurrent first requests on a profile without a memo: one build, every
 * answer the reference's. */
static void check_race(const char *path, nsys_profile *p, const nsys_index *ix, char *const *fresh, const char *diff) {
  drop_memo(p);
  enum { R = 6 };
  static const int which[R] = {0, 4, 9, -1, 1, -1}; /* analyses by index, -1: diff */
  racer rs[R];
  pthread_t th[R];
  for (int i = 0; i < R; i++) {
    rs[i] = (racer){p, ix, which[i] >= 0 ? ANALYSES[which[i]] : NULL, NULL, 0};
    CHECK(pthread_create(&th[i], NULL, race, &rs[i]) == 0);
  }
  for (int i = 0; i < R; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < R; i++) {
    const char *want = which[i] >= 0 ? fresh[which[i]] : diff;
    CHECK_MSG(rs[i].got && want && strcmp(rs[i].got, want) == 0, "%s %s: concurrent first request differs (%d)", path,
              rs[i].name ? rs[i].name : "diff", rs[i].code);
    free(rs[i].got);
  }
  CHECK(p->memo != NULL);
}

typedef struct {
  nsys_task *task;
  long delay_us;
} canceller;

static void *cancel_later(void *arg) {
  canceller *c = arg;
  struct timespec ts = {c->delay_us / 1000000, (c->delay_us % 1000000) * 1000};
  nanosleep(&ts, NULL);
  nsys_task_cancel(c->task);
  return NULL;
}

/* A first request cancelled at some point of the memo's (threaded) build:
 * either it finished first and answers the reference, or it answers -32800
 * (a build cut short is dropped, a whole one kept); either way the next
 * request answers the reference. */
static void check_cancel_midway(const char *path, nsys_profile *p, const nsys_index *ix, const char *want) {
  static const long delays[] = {0, 50, 200, 1000, 3000, 10000};
  for (size_t k = 0; k < sizeof delays / sizeof delays[0]; k++) {
    drop_memo(p);
    nsys_task task;
    nsys_task_init(&task);
    canceller cn = {&task, delays[k]};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_later, &cn) == 0);
    nsys_aresult *r = nsys_analysis_exec(&task, p, ix, "overlap", NULL, NULL);
    pthread_join(th, NULL);
    if (r) {
      cJSON *j = nsys_aresult_json(r);
      char *s = cJSON_PrintUnformatted(j);
      CHECK_MSG(s && strcmp(s, want) == 0, "%s: overlap finished before its cancel, but differs", path);
      free(s);
      cJSON_Delete(j);
      nsys_aresult_free(r);
    } else {
      CHECK_MSG(task.err == NSYS_E_CANCELLED, "%s: cancel after %ld us: error %d", path, delays[k], (int)task.err);
    }
    int code;
    char *again = answer(p, ix, "overlap", false, &code);
    CHECK_MSG(again && strcmp(again, want) == 0, "%s: overlap after a cancel at %ld us differs", path, delays[k]);
    free(again);
  }
}

static void check_profile(const char *path) {
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK_MSG(ix != NULL, "%s: no index", path);
  if (!ix) {
    t_close(&tp);
    return;
  }
  /* the reference: every run with a cache of its own */
  setenv("NSYS_AI_ANALYSIS_MEMO", "0", 1);
  char *fresh[N_ANALYSES + 1];
  int code;
  for (int i = 0; i <= N_ANALYSES; i++) fresh[i] = answer(tp.p, ix, i < N_ANALYSES ? ANALYSES[i] : NULL, false, &code);
  CHECK(tp.p->memo == NULL);
  unsetenv("NSYS_AI_ANALYSIS_MEMO");

  /* the first request is cancelled: its memo build is cut short, nothing kept */
  char *cut = answer(tp.p, ix, "overlap", true, &code);
  CHECK_MSG(cut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled first run answered (%d)", path, code);
  free(cut);
  CHECK_MSG(tp.p->memo == NULL, "%s: a cancelled build left a memo", path);

  /* then every answer through the memo, twice (built by the first, read by
   * the rest), equals the fresh one byte for byte */
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i <= N_ANALYSES; i++) {
      const char *name = i < N_ANALYSES ? ANALYSES[i] : "report";
      char *got = answer(tp.p, ix, i < N_ANALYSES ? ANALYSES[i] : NULL, false, &code);
      CHECK_MSG((got == NULL) == (fresh[i] == NULL), "%s %s: one path failed (%d)", path, name, code);
      if (got && fresh[i]) CHECK_MSG(strcmp(got, fresh[i]) == 0, "%s %s: memo answer differs", path, name);
      free(got);
    }
    CHECK_MSG(tp.p->memo != NULL, "%s: no memo after a successful run", path);
  }
  /* profile/diff: through the memo (built) = with caches of its own, its
   * sides on two threads or one */
  setenv("NSYS_AI_ANALYSIS_MEMO", "0", 1);
  setenv("NSYS_AI_ANALYSIS_THREADS", "1", 1);
  char *diff_fresh = diff_answer(tp.p, ix, false, &code);
  CHECK_MSG(diff_fresh != NULL, "%s: diff failed (%d)", path, code);
  unsetenv("NSYS_AI_ANALYSIS_MEMO");
  char *diff_memo = diff_answer(tp.p, ix, false, &code);
  unsetenv("NSYS_AI_ANALYSIS_THREADS");
  setenv("NSYS_AI_ANALYSIS_THREADS", "4", 1); /* threaded whatever the CPUs: sides and the memo's devices */
  char *diff_threads = diff_answer(tp.p, ix, false, &code);
  CHECK_MSG(diff_fresh && diff_memo && strcmp(diff_fresh, diff_memo) == 0, "%s: diff through the memo differs", path);
  CHECK_MSG(diff_fresh && diff_threads && strcmp(diff_fresh, diff_threads) == 0, "%s: threaded diff differs", path);
  free(diff_memo);
  free(diff_threads);
  /* a cancelled first diff keeps no memo */
  drop_memo(tp.p);
  char *dcut = diff_answer(tp.p, ix, true, &code);
  CHECK_MSG(dcut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled diff answered (%d)", path, code);
  CHECK_MSG(tp.p->memo == NULL, "%s: a cancelled diff left a memo", path);
  free(dcut);
  /* a diff cancelled once the memo is built (its side not yet): -32800, and
   * the next diff builds the side whole and answers as before, twice (the
   * second from the memo's side) */
  char *warm = answer(tp.p, ix, "nccl_breakdown", false, &code);
  free(warm);
  dcut = diff_answer(tp.p, ix, true, &code);
  CHECK_MSG(dcut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled diff on a built memo answered (%d)", path, code);
  free(dcut);
  for (int k = 0; k < 2; k++) {
    char *d2 = diff_answer(tp.p, ix, false, &code);
    CHECK_MSG(d2 && strcmp(d2, diff_fresh) == 0, "%s: diff after a cancelled one differs (%d)", path, k);
    free(d2);
  }
  check_race(path, tp.p, ix, fresh, diff_fresh);
  check_cancel_midway(path, tp.p, ix, fresh[4]);
  unsetenv("NSYS_AI_ANALYSIS_THREADS");
  free(diff_fresh);

  /* a cancelled request on a built memo is cancelled, and leaves it whole */
  cut = answer(tp.p, ix, "gpu_idle_gaps", true, &code);
  CHECK(cut == NULL && code == NSYS_E_CANCELLED);
  free(cut);
  char *again = answer(tp.p, ix, "gpu_idle_gaps", false, &code);
  CHECK(again && fresh[1] && strcmp(again, fresh[1]) == 0);
  free(again);
  for (int i = 0; i <= N_ANALYSES; i++) free(fresh[i]);
  t_close(&tp);
}

int main(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  static const char *const names[] = {"nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2023_rtx3060_23k",
                                      "nsys2024_a100_cudagraph"};
  int found = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *path = nsys_xasprintf("%s/profiles/%s.sqlite", shared ? shared : "../shared", names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      found++;
      check_profile(path);
    }
    free(path);
  }
  if (!found) nsys_check_skip("the shared real profiles are absent (NSYS_AI_SHARED/profiles)");
  return nsys_check_done("amemo");
}
