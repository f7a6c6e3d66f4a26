/* The area selection's structures built ahead (analysis/awarm.h): the four
 * area analyses (the clients' params) on windows of 1/1, 1/2, 1/4, 1/20 of
 * the span, a third from its start and none (the report's whole-profile
 * call) answer the same bytes as the old whole-profile loops
 * (NSYS_AI_WINDOW_FAST=0) when the warm-up has not started (a fresh memo),
 * has finished, runs on another thread meanwhile, or was cancelled after
 * 0 .. 20 ms (what it finished is kept, nothing half-built; ASan and
 * valgrind runs check that nothing leaks). Skips (77) when the shared real
 * profiles are absent. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../index/index_test_util.h"
#include "analysis/amemo.h"
#include "analysis/analysis.h"
#include "aresult_text.h"
#include "analysis/awarm.h"
#include "methods/analysis_json.h"

enum { N_AREA = 4, N_WIN = 6, N_Q = N_AREA * N_WIN };
static const char *const AREA[N_AREA] = {"top_kernels", "overlap", "gpu_idle_gaps", "kernel_launch_overhead"};

/* Query q's answer as compact JSON (NULL: failed). */
static char *answer(nsys_profile *p, const nsys_index *ix, int q) {
  const nsys_analysis *a = nsys_analysis_find(AREA[q % N_AREA]);
  nsys_aparams ps;
  nsys_aparams_defaults(&ps, a);
  if (q % N_AREA == 0) nsys_aparams_set_int(&ps, "limit", 5);
  if (q % N_AREA == 1) nsys_aparams_set_bool(&ps, "perIteration", false);
  if (q % N_AREA >= 2) nsys_aparams_set_int(&ps, "limit", 1);
  int64_t span = ix->span_end - ix->span_start, s = ix->span_start, e = ix->span_end;
  switch (q / N_AREA) {
  case 0: s = e = 0; break; /* no window */
  case 1: break;            /* the whole span */
  case 2: s += span / 4, e = s + span / 2; break;
  case 3: s += span / 2, e = s + span / 4; break;
  case 4: s += span / 2, e = s + span / 20; break;
  default: e = s + span / 3; break;
  }
  if (q / N_AREA) {
    nsys_aparams_set_int(&ps, "start", s);
    nsys_aparams_set_int(&ps, "end", e);
  }
  nsys_task task;
  nsys_task_init(&task);
  nsys_aresult *r = nsys_analysis_exec(&task, p, ix, a->name, &ps, NULL);
  nsys_aparams_dispose(&ps);
  return t_aresult_text(r);
}

static void drop_memo(nsys_profile *p) {
  if (p->memo && p->memo_free) p->memo_free(p->memo);
  p->memo = NULL;
}

static void check_all(const char *path, const char *state, nsys_profile *p, const nsys_index *ix, char *const *want) {
  for (int q = 0; q < N_Q; q++) {
    char *got = answer(p, ix, q);
    CHECK_MSG(got && want[q] && strcmp(got, want[q]) == 0, "%s: %s: %s window %d differs", path, state,
              AREA[q % N_AREA], q / N_AREA);
    free(got);
  }
}

typedef struct {
  nsys_profile *p;
  const nsys_index *ix;
  nsys_task task;
  bool ok;
} warmer;

static void *warm(void *arg) {
  warmer *w = arg;
  w->ok = nsys_awarm_area(&w->task, w->p, w->ix, NULL, NULL);
  return NULL;
}

static void check_profile(const char *path) {
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK_MSG(ix != NULL, "%s: no index", path);
  if (!ix) {
    t_close(&tp);
    return;
  }
  char *want[N_Q];
  setenv("NSYS_AI_WINDOW_FAST", "0", 1); /* the reference: the old loops */
  for (int q = 0; q < N_Q; q++) want[q] = answer(tp.p, ix, q);
  unsetenv("NSYS_AI_WINDOW_FAST");
  drop_memo(tp.p);

  check_all(path, "not started", tp.p, ix, want);
  drop_memo(tp.p);

  warmer w = {tp.p, ix, {0}, false};
  nsys_task_init(&w.task);
  warm(&w);
  nsys_acache *k = nsys_amemo_peek(tp.p, ix);
  CHECK_MSG(w.ok && k && k->winidx && k->kname[0] && k->klaunch && k->ksweep && k->phaser,
            "%s: the warm-up left something unbuilt", path);
  check_all(path, "done", tp.p, ix, want);
  drop_memo(tp.p);

  pthread_t th;
  nsys_task_init(&w.task);
  CHECK(pthread_create(&th, NULL, warm, &w) == 0);
  check_all(path, "in progress", tp.p, ix, want);
  pthread_join(th, NULL);
  CHECK_MSG(w.ok, "%s: the warm-up beside requests failed", path);
  drop_memo(tp.p);

  static const long delays_us[] = {0, 200, 1000, 5000, 20000};
  for (size_t d = 0; d < sizeof delays_us / sizeof delays_us[0]; d++) {
    nsys_task_init(&w.task);
    CHECK(pthread_create(&th, NULL, warm, &w) == 0);
    struct timespec ts = {0, delays_us[d] * 1000};
    nanosleep(&ts, NULL);
    nsys_task_cancel(&w.task);
    pthread_join(th, NULL);
    check_all(path, "cancelled", tp.p, ix, want);
    drop_memo(tp.p);
  }
  for (int q = 0; q < N_Q; q++) free(want[q]);
  t_close(&tp);
}

int main(void) {
  static const char *const names[] = {"nsys2023_rtx3060_23k", "nsys2024_a100_cudagraph"};
  if (!t_each_real(names, sizeof names / sizeof names[0], check_profile))
    nsys_check_skip("the shared real profiles are absent (NSYS_AI_SHARED/profiles)");
  return nsys_check_done("awarm");
}
