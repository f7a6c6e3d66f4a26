/* Index lifecycle: build (from the cache when valid, else from SQLite and then
 * cached), free, the once-per-profile publication in nsys_index_get, and the
 * background saver that writes a freshly built index to the cache after it is
 * published (the first answers do not wait for ~0.3 s at 1M ops, ~3 s at 10M). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cond_wait.h"
#include "common/util.h"
#include "index/index_bounds.h"
#include "index/index_internal.h"
#include "profile/profile.h"
#include "common/task.h"

/* The index from the cache when valid, else built from SQLite; *fresh tells
 * which (a fresh one is not saved yet). */
static nsys_index *nsys__index_load_or_build(struct nsys_profile *p, nsys_task *task, bool *fresh) {
  *fresh = false;
  nsys_index *ix = getenv("NSYS_AI_NO_INDEX_CACHE") ? NULL : nsys__cache_load(p);
  if (ix) {
    nsys__index_derive(ix);
    return ix;
  }
  ix = nsys__index_build_fresh(p, task);
  if (!ix) return NULL;
  const char *broken = nsys_index_bounds_broken(ix);
  if (broken) {
    nsys_index_free(ix);
    nsys_task_fail(task, NSYS_E_CORRUPT,
                   "%s: its %s: the export's clocks are corrupt",
                   p->path, broken);
    return NULL;
  }
  nsys_task_progress(task, 96, "summarising tracks");
  nsys__index_derive(ix);
  *fresh = !getenv("NSYS_AI_NO_INDEX_CACHE");
  return ix;
}

nsys_index *nsys_index_build(struct nsys_profile *p, nsys_task *task) {
  bool fresh;
  nsys_index *ix = nsys__index_load_or_build(p, task, &fresh);
  if (ix && fresh) {
    nsys_task_progress(task, 98, "saving the index cache");
    nsys__cache_save(ix, p);
  }
  return ix;
}

/* ---- the background saver ------------------------------------------------
 * One joinable thread, started on the first save, takes saves in order. A
 * save holds a reference to its profile, so the published (immutable) index
 * it reads stays alive even if the profile is closed. At exit the thread
 * finishes what is queued and is joined: a one-shot CLI run still leaves a
 * complete cache for the next one. */

typedef struct nsys__save {
  struct nsys__save *next;
  struct nsys_profile *p;
} nsys__save;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  nsys__save *head, *tail;
  bool started, busy, stopping;
  pthread_t th;
} nsys__saver = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *nsys__saver_run(void *arg) {
  (void)arg;
  nsys_thread_background(); /* no answer waits for the save */
  pthread_mutex_lock(&nsys__saver.mu);
  for (;;) {
    while (!nsys__saver.head && !nsys__saver.stopping) pthread_cond_wait(&nsys__saver.cv, &nsys__saver.mu);
    nsys__save *job = nsys__saver.head;
    if (!job) break; /* stopping, nothing queued */
    nsys__saver.head = job->next;
    if (!nsys__saver.head) nsys__saver.tail = NULL;
    nsys__saver.busy = true;
    pthread_mutex_unlock(&nsys__saver.mu);
    nsys__cache_save(atomic_load(&job->p->index), job->p);
    nsys_profile_release(job->p);
    free(job);
    pthread_mutex_lock(&nsys__saver.mu);
    nsys__saver.busy = false;
    pthread_cond_broadcast(&nsys__saver.cv);
  }
  pthread_mutex_unlock(&nsys__saver.mu);
  return NULL;
}

static void nsys__saver_stop(void) {
  pthread_mutex_lock(&nsys__saver.mu);
  bool started = nsys__saver.started;
  nsys__saver.stopping = true;
  pthread_cond_broadcast(&nsys__saver.cv);
  pthread_mutex_unlock(&nsys__saver.mu);
  if (started) pthread_join(nsys__saver.th, NULL);
}

/* Queues the save of p's published index; saves at once when no thread can be
 * started (or when exiting). */
static void nsys__save_later(struct nsys_profile *p) {
  pthread_mutex_lock(&nsys__saver.mu);
  if (!nsys__saver.started && !nsys__saver.stopping) {
    nsys__saver.started = pthread_create(&nsys__saver.th, NULL, nsys__saver_run, NULL) == 0;
    if (nsys__saver.started) atexit(nsys__saver_stop);
  }
  if (!nsys__saver.started || nsys__saver.stopping) {
    pthread_mutex_unlock(&nsys__saver.mu);
    nsys__cache_save(atomic_load(&p->index), p);
    return;
  }
  nsys__save *job = nsys_xcalloc(1, sizeof *job);
  nsys_profile_retain(p);
  job->p = p;
  if (nsys__saver.tail) nsys__saver.tail->next = job;
  else nsys__saver.head = job;
  nsys__saver.tail = job;
  pthread_cond_broadcast(&nsys__saver.cv);
  pthread_mutex_unlock(&nsys__saver.mu);
}

bool nsys_index_saves_pending(void) {
  pthread_mutex_lock(&nsys__saver.mu);
  bool pending = nsys__saver.head || nsys__saver.busy;
  pthread_mutex_unlock(&nsys__saver.mu);
  return pending;
}

void nsys_index_wait_saves(void) {
  pthread_mutex_lock(&nsys__saver.mu);
  while (nsys__saver.started && (nsys__saver.head || nsys__saver.busy))
    pthread_cond_wait(&nsys__saver.cv, &nsys__saver.mu);
  pthread_mutex_unlock(&nsys__saver.mu);
}

void nsys_index_free(nsys_index *ix) {
  if (!ix) return;
  nsys__index_priv *pv = nsys__priv(ix);
  nsys__index_free_derived(ix);
  if (pv && pv->map_base) {
    /* the op/API/NVTX arrays live in the mapped cache file */
    nsys_strtab_free(&ix->strings);
    free(ix->tracks);
    free(ix->threads);
    nsys__cache_unmap(pv->map_base, pv->map_size);
  } else {
    nsys_strtab_free(&ix->strings);
    free(ix->tracks);
    free(ix->threads);
    free(ix->ops.start); free(ix->ops.end); free(ix->ops.name); free(ix->ops.full_name);
    free(ix->ops.track); free(ix->ops.api); free(ix->ops.rowid); free(ix->ops.kind);
    free(ix->op_next);
    free(ix->api.start); free(ix->api.end); free(ix->api.name); free(ix->api.thread);
    free(ix->api.first_op); free(ix->api.correlation); free(ix->api.rowid);
    free(ix->nvtx.start); free(ix->nvtx.end); free(ix->nvtx.name); free(ix->nvtx.domain);
    free(ix->nvtx.thread); free(ix->nvtx.depth); free(ix->nvtx.parent);
  }
  free(pv);
  free(ix);
}

/* One build per profile at a time: later callers wait for the first. */
static pthread_mutex_t nsys__build_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nsys__build_cv = PTHREAD_COND_INITIALIZER;
static struct nsys_profile *nsys__building[64];

static bool nsys__is_building(struct nsys_profile *p) {
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__building); i++)
    if (nsys__building[i] == p) return true;
  return false;
}

const nsys_index *nsys_index_get(struct nsys_profile *p, nsys_task *task) {
  nsys_index *ix = atomic_load(&p->index);
  if (ix) return ix;
  pthread_mutex_lock(&nsys__build_mu);
  for (;;) {
    ix = atomic_load(&p->index);
    if (ix) {
      pthread_mutex_unlock(&nsys__build_mu);
      return ix;
    }
    if (!nsys__is_building(p)) break;
    if (!nsys_task_wait_turn(task, &nsys__build_cv, &nsys__build_mu, 50)) {
      pthread_mutex_unlock(&nsys__build_mu);
      nsys_task_fail_cancelled(task);
      return NULL;
    }
  }
  size_t slot = NSYS_ARRAY_LEN(nsys__building);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__building); i++)
    if (!nsys__building[i]) {
      slot = i;
      break;
    }
  if (slot < NSYS_ARRAY_LEN(nsys__building)) nsys__building[slot] = p;
  pthread_mutex_unlock(&nsys__build_mu);

  bool fresh = false;
  ix = nsys__index_load_or_build(p, task, &fresh);
  if (ix) {
    nsys_index *expected = NULL;
    if (atomic_compare_exchange_strong(&p->index, &expected, ix)) {
      if (fresh) nsys__save_later(p); /* published first: the answers do not wait for the file */
    } else {
      nsys_index_free(ix);
      ix = expected;
    }
  }
  pthread_mutex_lock(&nsys__build_mu);
  if (slot < NSYS_ARRAY_LEN(nsys__building)) nsys__building[slot] = NULL;
  pthread_cond_broadcast(&nsys__build_cv);
  pthread_mutex_unlock(&nsys__build_mu);
  return ix;
}

bool nsys_index_from_cache(const nsys_index *ix) { return ix && ix->priv && nsys__priv(ix)->from_cache; }
