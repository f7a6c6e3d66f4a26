#include "methods/set_partial.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static pthread_mutex_t nsys__mu = PTHREAD_MUTEX_INITIALIZER;
static nsys_set_partial **nsys__kept;
static uint32_t nsys__n, nsys__cap, nsys__next;

static nsys_set_partial *nsys__take_locked(const char *id) {
  for (uint32_t i = 0; i < nsys__n; i++)
    if (!strcmp(nsys__kept[i]->id, id)) {
      nsys_set_partial *p = nsys__kept[i];
      nsys__kept[i] = nsys__kept[--nsys__n];
      if (!nsys__n) {
        free(nsys__kept);
        nsys__kept = NULL;
        nsys__cap = 0;
      }
      return p;
    }
  return NULL;
}

nsys_set_partial *nsys_set_partial_take(const char *id) {
  pthread_mutex_lock(&nsys__mu);
  nsys_set_partial *p = nsys__take_locked(id);
  pthread_mutex_unlock(&nsys__mu);
  return p;
}

void nsys_set_partial_keep(nsys_set_partial *p) {
  pthread_mutex_lock(&nsys__mu);
  if (!p->id[0]) snprintf(p->id, sizeof p->id, "p%u", ++nsys__next);
  if (nsys__n == nsys__cap)
    nsys__kept = nsys_xrealloc(nsys__kept, (nsys__cap = nsys__cap ? nsys__cap * 2 : 4) * sizeof *nsys__kept);
  nsys__kept[nsys__n++] = p;
  pthread_mutex_unlock(&nsys__mu);
}

bool nsys_set_partial_drop(const char *id) {
  pthread_mutex_lock(&nsys__mu);
  nsys_set_partial *p = nsys__take_locked(id);
  pthread_mutex_unlock(&nsys__mu);
  nsys_set_partial_free(p);
  return p != NULL;
}

void nsys_set_partial_free(nsys_set_partial *p) {
  if (!p) return;
  for (uint32_t k = 0; k < p->n; k++) nsys_rank_summary_dispose(&p->sums[k]);
  free(p->sums);
  free(p);
}
