/* Index lifecycle: build (from the cache when valid, else from SQLite and then
 * cached), free, and the once-per-profile publication in nsys_index_get. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "index/index_internal.h"
#include "profile/profile.h"
#include "rpc/call.h"

nsys_index *nsys_index_build(struct nsys_profile *p, struct nsys_call *call) {
  nsys_index *ix = getenv("NSYS_AI_NO_INDEX_CACHE") ? NULL : nsys__cache_load(p);
  if (ix) {
    nsys__index_derive(ix);
    return ix;
  }
  ix = nsys__index_build_fresh(p, call);
  if (!ix) return NULL;
  nsys_call_progress(call, 96, "summarising tracks");
  nsys__index_derive(ix);
  if (!getenv("NSYS_AI_NO_INDEX_CACHE")) {
    nsys_call_progress(call, 98, "saving the index cache");
    nsys__cache_save(ix, p);
  }
  return ix;
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

const nsys_index *nsys_index_get(struct nsys_profile *p, struct nsys_call *call) {
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
    if (nsys_call_cancelled(call)) {
      pthread_mutex_unlock(&nsys__build_mu);
      nsys_call_fail_cancelled(call);
      return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&nsys__build_cv, &nsys__build_mu, &ts);
  }
  size_t slot = NSYS_ARRAY_LEN(nsys__building);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(nsys__building); i++)
    if (!nsys__building[i]) {
      slot = i;
      break;
    }
  if (slot < NSYS_ARRAY_LEN(nsys__building)) nsys__building[slot] = p;
  pthread_mutex_unlock(&nsys__build_mu);

  ix = nsys_index_build(p, call);
  if (ix) {
    nsys_index *expected = NULL;
    if (!atomic_compare_exchange_strong(&p->index, &expected, ix)) {
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
