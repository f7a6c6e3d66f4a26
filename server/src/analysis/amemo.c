/* The per-profile memo of the analyses' shared cache (see amemo.h). */
#include "analysis/amemo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/amemo_file.h"
#include "analysis/diff.h"
#include "common/cond_wait.h"
#include "common/util.h"
#include "profile/profile.h"

typedef struct {
  nsys_acache k;
  const nsys_index *ix;
  bool ready; /* built whole; until then the building request owns k */
  nsys_diff_side *side; /* profile/diff's side of this profile, once built */
  bool side_building;   /* a request is building it */
} nsys__memo;

/* One lock for every profile's memo: held only to look up, claim and
 * publish, never while building. */
static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nsys__cv = PTHREAD_COND_INITIALIZER;

static void nsys__memo_free(void *v) {
  nsys__memo *m = v;
  if (!m) return;
  nsys_acache_dispose(&m->k);
  if (m->side) nsys_diff_side_free(m->side);
  free(m->side);
  free(m);
}

static bool nsys__enabled(void) {
  const char *e = getenv("NSYS_AI_ANALYSIS_MEMO");
  return !(e && strcmp(e, "0") == 0);
}

bool nsys_amemo_get(nsys_task *task, nsys_profile *p, const nsys_index *ix, nsys_acache **out) {
  *out = NULL;
  if (!p || !ix || atomic_load(&p->index) != ix || !nsys__enabled()) return true;
  pthread_mutex_lock(&nsys__mu);
  for (;;) {
    nsys__memo *m = p->memo;
    if (!m) break; /* nobody has built it or is building it: this request builds */
    if (m->ready) {
      pthread_mutex_unlock(&nsys__mu);
      *out = &m->k;
      return true;
    }
    if (!nsys_task_wait_turn(task, &nsys__cv, &nsys__mu, 10)) {
      pthread_mutex_unlock(&nsys__mu);
      return nsys_task_fail_cancelled(task);
    }
  }
  nsys__memo *m = nsys_xcalloc(1, sizeof *m);
  m->ix = ix;
  nsys_acache_init(&m->k, ix);
  p->memo = m;
  p->memo_free = nsys__memo_free;
  pthread_mutex_unlock(&nsys__mu);

  /* a saved memo (a cached open) is read instead of merging every device */
  nsys_acache_fill_classes(&m->k);
  bool loaded = !nsys_task_cancelled(task) && nsys_amemo_file_load(p, &m->k);
  bool ok = nsys_acache_build(&m->k, task);
  if (ok && !loaded) nsys_amemo_file_save(p, &m->k);

  pthread_mutex_lock(&nsys__mu);
  if (ok) {
    m->ready = true;
  } else { /* cut short: nothing half-built is kept */
    p->memo = NULL;
    nsys__memo_free(m);
    m = NULL;
  }
  pthread_cond_broadcast(&nsys__cv);
  pthread_mutex_unlock(&nsys__mu);
  if (!ok) return nsys_task_fail_cancelled(task);
  *out = &m->k;
  return true;
}

nsys_acache *nsys_amemo_peek(nsys_profile *p, const nsys_index *ix) {
  if (!p || !ix || atomic_load(&p->index) != ix || !nsys__enabled()) return NULL;
  pthread_mutex_lock(&nsys__mu);
  nsys__memo *m = p->memo;
  nsys_acache *k = m && m->ready ? &m->k : NULL;
  pthread_mutex_unlock(&nsys__mu);
  return k;
}

bool nsys_amemo_diff_side(nsys_task *task, nsys_profile *p, const nsys_index *ix, nsys_diff_side *out) {
  memset(out, 0, sizeof *out);
  /* only on a built memo: a memo built for one diff costs more than the
   * diff's own passes (a one-shot `nsys-ai diff`) */
  if (!nsys_amemo_peek(p, ix)) return nsys_diff_side_build(out, task, p, ix);
  pthread_mutex_lock(&nsys__mu);
  nsys__memo *m = p->memo; /* built: kept until the profile is freed */
  for (;;) {
    if (m->side) {
      nsys_diff_side_copy(out, m->side);
      pthread_mutex_unlock(&nsys__mu);
      return true;
    }
    if (!m->side_building) break;
    if (!nsys_task_wait_turn(task, &nsys__cv, &nsys__mu, 10)) {
      pthread_mutex_unlock(&nsys__mu);
      return nsys_task_fail_cancelled(task);
    }
  }
  m->side_building = true;
  pthread_mutex_unlock(&nsys__mu);
  nsys_diff_side built;
  bool ok = nsys_diff_side_build(&built, task, p, ix);
  pthread_mutex_lock(&nsys__mu);
  m->side_building = false;
  if (ok) {
    m->side = nsys_xmalloc(sizeof *m->side);
    *m->side = built; /* moved */
    nsys_diff_side_copy(out, m->side);
  } else {
    nsys_diff_side_free(&built); /* cut short: nothing kept */
  }
  pthread_cond_broadcast(&nsys__cv);
  pthread_mutex_unlock(&nsys__mu);
  return ok;
}
