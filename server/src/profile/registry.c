#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "profile/profile.h"

struct nsys_profile_registry {
  pthread_mutex_t mu;
  nsys_profile **items;
  int n, cap;
  unsigned next_id;
};

nsys_profile_registry *nsys_registry_new(void) {
  nsys_profile_registry *r = nsys_xcalloc(1, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  r->next_id = 1;
  return r;
}

void nsys_registry_free(nsys_profile_registry *r) {
  if (!r) return;
  for (int i = 0; i < r->n; i++) nsys_profile_release(r->items[i]);
  free(r->items);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

static bool nsys__same_file(const nsys_profile *a, const nsys_profile *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtime_ns == b->st_mtime_ns;
}

nsys_profile *nsys_registry_add(nsys_profile_registry *r, nsys_profile *p) {
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->n; i++) {
    if (nsys__same_file(r->items[i], p)) {
      nsys_profile *existing = r->items[i];
      nsys_profile_retain(existing);
      pthread_mutex_unlock(&r->mu);
      nsys_profile_release(p);
      return existing;
    }
  }
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 8;
    r->items = nsys_xrealloc(r->items, (size_t)r->cap * sizeof *r->items);
  }
  snprintf(p->id, sizeof p->id, "p%u", r->next_id++);
  r->items[r->n++] = p; /* the registry keeps the caller's reference */
  nsys_profile_retain(p); /* ...and the caller gets a new one */
  pthread_mutex_unlock(&r->mu);
  return p;
}

nsys_profile *nsys_registry_get(nsys_profile_registry *r, const char *id) {
  nsys_profile *found = NULL;
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->n; i++) {
    if (strcmp(r->items[i]->id, id) == 0) {
      found = r->items[i];
      nsys_profile_retain(found);
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return found;
}

bool nsys_registry_remove(nsys_profile_registry *r, const char *id) {
  nsys_profile *found = NULL;
  pthread_mutex_lock(&r->mu);
  for (int i = 0; i < r->n; i++) {
    if (strcmp(r->items[i]->id, id) == 0) {
      found = r->items[i];
      r->items[i] = r->items[--r->n];
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  if (found) nsys_profile_release(found);
  return found != NULL;
}

nsys_profile **nsys_registry_list(nsys_profile_registry *r, int *n) {
  pthread_mutex_lock(&r->mu);
  nsys_profile **out = nsys_xcalloc((size_t)r->n + 1, sizeof *out);
  for (int i = 0; i < r->n; i++) {
    out[i] = r->items[i];
    nsys_profile_retain(out[i]);
  }
  *n = r->n;
  pthread_mutex_unlock(&r->mu);
  return out;
}
