/* The server's background warm-up (see warm.h). */
#include "rpc/warm.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/awarm.h"
#include "common/task.h"
#include "common/util.h"
#include "explain/context.h"
#include "explain/explain.h"
#include "explain/kernel_stats.h"
#include "profile/profile.h"

typedef struct nsys__warm_job {
  struct nsys__warm_job *next;
  nsys_profile *p; /* retained */
  nsys_task task;  /* cancelled when p closes or the server exits */
  int64_t due_ns;  /* not before (nsys_now_ns) */
} nsys__warm_job;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  nsys__warm_job *head, *tail, *running;
  bool started, stopping;
  pthread_t th;
} nsys__warm = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Requests running or queued on the server's pool: the warm-up waits
 * between two builds while there are any (it never delays a request). */
static atomic_int nsys__warm_inflight;

void nsys_warm_requests(int delta) { atomic_fetch_add(&nsys__warm_inflight, delta); }

static void nsys__warm_pause(void *task) {
  while (atomic_load(&nsys__warm_inflight) > 0 && !nsys_task_cancelled(task)) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
}

static bool nsys__warm_enabled(void) {
  const char *e = getenv("NSYS_AI_WARM");
  return !(e && strcmp(e, "0") == 0);
}

static int64_t nsys__warm_delay_ns(void) {
  const char *e = getenv("NSYS_AI_WARM_DELAY_MS");
  long ms = e && *e ? atol(e) : 250;
  return (int64_t)(ms < 0 ? 0 : ms) * 1000000;
}

static bool nsys__warm_cancelled(void *task) { return nsys_task_cancelled(task); }

/* how many names' explanation statistics the warm-up computes (nsys__warm_run) */
#define NSYS__WARM_NAMES 64
/* how many (name, device) pairs' detectors it runs ahead (explain/detect.c keeps 256) */
#define NSYS__WARM_DETECT_PAIRS 128

static void nsys__warm_run(nsys__warm_job *job) {
  const nsys_index *ix = atomic_load(&job->p->index);
  if (!ix || nsys_task_cancelled(&job->task)) return;
  nsys__warm_pause(&job->task);
  if (!nsys_awarm_area(&job->task, job->p, ix, nsys__warm_pause, &job->task) && nsys_task_cancelled(&job->task))
    return;
  nsys__warm_pause(&job->task);
  const nsys_explain_context *cx = nsys_explain_context_warm(job->p, ix, &job->task); /* kept in explain's cache */
  if (!cx) return;
  /* the largest names' statistics (their duration order, NVTX placement), largest
   * first, grouped by demangled name (a click on the timeline explains its
   * kernelId: explain groups by the kernel's demangled name) and then by short
   * name (a name asked for: CodeLens, the report's hotspot): a first click
   * then pays no grouping of every op (~0.5 s at 10M kernels) and no per-name
   * pass (tens of ms for a name of 1M kernels). At most NSYS__WARM_NAMES names
   * per grouping, so that a profile of many thousand names warms what the
   * timeline mostly shows and keeps a few hundred KB of statistics. */
  static const nsys_kstats_key keys[] = {NSYS_KSTATS_BY_FULL_NAME, NSYS_KSTATS_BY_NAME};
  uint32_t ids[NSYS__WARM_NAMES], n = 0;
  for (size_t k = 0; k < NSYS_ARRAY_LEN(keys) && !nsys_task_cancelled(&job->task); k++) {
    nsys__warm_pause(&job->task);
    n = nsys_kstats_top(job->p, ix, keys[k], -1, ids, NSYS__WARM_NAMES);
    for (uint32_t i = 0; i < n && !nsys_task_cancelled(&job->task); i++) {
      nsys__warm_pause(&job->task);
      nsys_kstats st;
      bool cut = false;
      (void)nsys_kstats_get(job->p, ix, keys[k], ids[i], &st, nsys__warm_cancelled, &job->task, &cut);
    }
  }
  /* then the detectors of the largest short names (ids: the last grouping's)
   * on each of their devices: the rest of a first click's per-name work */
  if (!nsys_task_cancelled(&job->task))
    (void)nsys_explain_warm_detectors(job->p, ix, cx, ids, n, NSYS__WARM_DETECT_PAIRS, &job->task, nsys__warm_pause,
                                      &job->task);
  nsys_explain_context_release(cx);
}

static void nsys__warm_job_free(nsys__warm_job *job) {
  nsys_profile_release(job->p);
  free(job);
}

static void *nsys__warm_main(void *arg) {
  (void)arg;
  nsys_thread_background(); /* the requests take the CPU first */
  pthread_mutex_lock(&nsys__warm.mu);
  for (;;) {
    while (!nsys__warm.head && !nsys__warm.stopping) pthread_cond_wait(&nsys__warm.cv, &nsys__warm.mu);
    if (nsys__warm.stopping) break;
    nsys__warm_job *job = nsys__warm.head;
    int64_t now = nsys_now_ns();
    if (now < job->due_ns && !nsys_task_cancelled(&job->task)) { /* the first frame's requests go first */
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (job->due_ns - now);
      ts.tv_sec = (time_t)(at / 1000000000);
      ts.tv_nsec = (long)(at % 1000000000);
      (void)pthread_cond_timedwait(&nsys__warm.cv, &nsys__warm.mu, &ts);
      continue; /* look again: stopped, cancelled or due */
    }
    nsys__warm.head = job->next;
    if (!nsys__warm.head) nsys__warm.tail = NULL;
    nsys__warm.running = job;
    pthread_mutex_unlock(&nsys__warm.mu);
    nsys__warm_run(job);
    pthread_mutex_lock(&nsys__warm.mu);
    nsys__warm.running = NULL;
    pthread_cond_broadcast(&nsys__warm.cv);
    pthread_mutex_unlock(&nsys__warm.mu);
    nsys__warm_job_free(job); /* may free the profile: outside the lock */
    pthread_mutex_lock(&nsys__warm.mu);
  }
  pthread_mutex_unlock(&nsys__warm.mu);
  return NULL;
}

void nsys_warm_start(nsys_profile_registry *r, const char *id) {
  if (!nsys__warm_enabled() || !id) return;
  nsys_profile *p = nsys_registry_get(r, id);
  if (!p) return;
  pthread_mutex_lock(&nsys__warm.mu);
  bool queued = nsys__warm.running && nsys__warm.running->p == p;
  for (nsys__warm_job *j = nsys__warm.head; j && !queued; j = j->next) queued = j->p == p;
  if (!nsys__warm.started && !nsys__warm.stopping)
    nsys__warm.started = pthread_create(&nsys__warm.th, NULL, nsys__warm_main, NULL) == 0;
  if (queued || !nsys__warm.started || nsys__warm.stopping) {
    pthread_mutex_unlock(&nsys__warm.mu);
    nsys_profile_release(p);
    return;
  }
  nsys__warm_job *job = nsys_xcalloc(1, sizeof *job);
  job->p = p; /* the registry's reference, now the job's */
  nsys_task_init(&job->task);
  job->due_ns = nsys_now_ns() + nsys__warm_delay_ns();
  if (nsys__warm.tail) nsys__warm.tail->next = job;
  else nsys__warm.head = job;
  nsys__warm.tail = job;
  pthread_cond_broadcast(&nsys__warm.cv);
  pthread_mutex_unlock(&nsys__warm.mu);
}

static bool nsys__listed(nsys_profile *const *all, int n, const nsys_profile *p) {
  for (int i = 0; i < n; i++)
    if (all[i] == p) return true;
  return false;
}

void nsys_warm_prune(nsys_profile_registry *r) {
  pthread_mutex_lock(&nsys__warm.mu);
  bool any = nsys__warm.running || nsys__warm.head;
  pthread_mutex_unlock(&nsys__warm.mu);
  if (!any) return;
  int n = 0;
  nsys_profile **all = nsys_registry_list(r, &n);
  pthread_mutex_lock(&nsys__warm.mu);
  if (nsys__warm.running && !nsys__listed(all, n, nsys__warm.running->p)) nsys_task_cancel(&nsys__warm.running->task);
  for (nsys__warm_job *j = nsys__warm.head; j; j = j->next)
    if (!nsys__listed(all, n, j->p)) nsys_task_cancel(&j->task);
  pthread_cond_broadcast(&nsys__warm.cv);
  pthread_mutex_unlock(&nsys__warm.mu);
  for (int i = 0; i < n; i++) nsys_profile_release(all[i]);
  free(all);
}

void nsys_warm_stop(void) {
  pthread_mutex_lock(&nsys__warm.mu);
  nsys__warm.stopping = true;
  if (nsys__warm.running) nsys_task_cancel(&nsys__warm.running->task);
  nsys__warm_job *queued = nsys__warm.head;
  nsys__warm.head = nsys__warm.tail = NULL;
  bool started = nsys__warm.started;
  pthread_cond_broadcast(&nsys__warm.cv);
  pthread_mutex_unlock(&nsys__warm.mu);
  if (started) pthread_join(nsys__warm.th, NULL);
  while (queued) {
    nsys__warm_job *next = queued->next;
    nsys__warm_job_free(queued);
    queued = next;
  }
}

bool nsys_warm_pending(void) {
  pthread_mutex_lock(&nsys__warm.mu);
  bool pending = nsys__warm.running || nsys__warm.head;
  pthread_mutex_unlock(&nsys__warm.mu);
  return pending;
}
