/* nsys_analysis_exec_all: the runs of a report or diff on several threads.
 * Each cache the runs share is built whole first (nsys_acache_build), so the
 * threads only read it; each run has its own sub-task (its own error; the
 * request's cancellation reaches it). The calling thread works too and alone
 * reports progress on the request's task. Answers are those of the same runs
 * one after another. nsys_analysis_parallel is the pool it runs on. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "common/util.h"

typedef struct {
  uint32_t n;
  void (*fn)(void *arg, uint32_t i);
  void *arg;
  atomic_uint next, done;
} nsys__pool;

static bool nsys__work_one(nsys__pool *pl) {
  uint32_t i = atomic_fetch_add(&pl->next, 1);
  if (i >= pl->n) return false;
  pl->fn(pl->arg, i);
  atomic_fetch_add(&pl->done, 1);
  return true;
}

static void *nsys__worker(void *arg) {
  while (nsys__work_one(arg)) {
  }
  return NULL;
}

uint32_t nsys_analysis_threads(uint32_t n) {
  const char *env = getenv("NSYS_AI_ANALYSIS_THREADS");
  long t = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  if (t < 1) t = 1;
  return (uint32_t)NSYS_MIN((long)n, t);
}

void nsys_analysis_parallel(uint32_t n, void (*fn)(void *arg, uint32_t i), void *arg,
                            void (*tick)(void *arg, uint32_t done)) {
  nsys__pool pl = {.n = n, .fn = fn, .arg = arg};
  atomic_init(&pl.next, 0);
  atomic_init(&pl.done, 0);
  uint32_t nt = nsys_analysis_threads(n);
  pthread_t *th = nsys_xcalloc((size_t)nt + 1, sizeof *th);
  uint32_t started = 0;
  for (uint32_t t = 1; t < nt; t++)
    if (pthread_create(&th[started], NULL, nsys__worker, &pl) == 0) started++;
  while (nsys__work_one(&pl))
    if (tick) tick(arg, atomic_load(&pl.done));
  for (uint32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
  free(th);
}

typedef struct {
  nsys_aexec *runs;
  uint32_t n;
  nsys_task *task;
  const char *title;
} nsys__execs;

static void nsys__exec_one(void *arg, uint32_t i) {
  nsys_aexec *r = &((nsys__execs *)arg)->runs[i];
  const nsys_task *prev = nsys_task_enter(&r->task); /* its SQL stops when the request is cancelled */
  r->result = nsys_analysis_exec(&r->task, r->p, r->ix, r->name, r->params, r->cache);
  nsys_task_leave(prev);
}

static void nsys__exec_tick(void *arg, uint32_t done) {
  nsys__execs *x = arg;
  nsys_task_progress(x->task, (int)(100 * done / x->n), x->title);
}

bool nsys_analysis_exec_all(nsys_task *task, nsys_aexec *runs, uint32_t n, const char *title) {
  for (uint32_t i = 0; i < n; i++) {
    nsys_task_init_child(&runs[i].task, task);
    runs[i].result = NULL;
  }
  /* every shared cache whole before any thread reads it */
  for (uint32_t i = 0; i < n; i++) {
    nsys_acache *k = runs[i].cache;
    bool seen = false;
    for (uint32_t j = 0; j < i && !seen; j++) seen = runs[j].cache == k;
    if (k && !seen && k->ix == runs[i].ix && !nsys_acache_build(k, task)) return nsys_task_fail_cancelled(task);
  }
  nsys_task_progress_begin(task, title);
  nsys__execs x = {runs, n, task, title};
  nsys_analysis_parallel(n, nsys__exec_one, &x, nsys__exec_tick);
  nsys_task_progress(task, 100, title);
  return true;
}
