/* Rank sets: stragglers with causes. At every collective the rank whose
 * kernel starts last arrived last; it is late by (its start - the median
 * start of the others). A last arrival later than NSYS_LATE_THRESHOLD_NS is
 * an event; its cause is the category whose time in the window before the
 * collective exceeds the other ranks' median for the same collective the
 * most (their own largest category when none exceeds). */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks.h"
#include "common/util.h"

#define NSYS_LATE_THRESHOLD_NS 100000

void nsys_rankset_stragglers(nsys_rankset *s) {
  s->late_threshold = NSYS_LATE_THRESHOLD_NS;
  s->straggler = -1;
  int64_t *v = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *v);
  uint32_t cap = 0;
  for (uint32_t ci = 0; ci < s->n_colls; ci++) {
    const nsys_set_coll *c = &s->colls[ci];
    if (c->step + 1 > (int32_t)s->steps) s->steps = (uint32_t)(c->step + 1);
    uint32_t L = c->last_rank;
    if (c->skew > 0) s->ranks[L].last_count++; /* all starting together: nobody is last */
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->n_ranks; r++) {
      if (c->member[r] == UINT32_MAX) continue;
      int64_t st = nsys_set_coll_start(s, c, r);
      s->ranks[r].behind_sum += st - c->start;
      if (r != L) v[n++] = st;
    }
    int64_t late = nsys_set_coll_start(s, c, L) - nsys_rank_median(v, n);
    if (!n || late <= NSYS_LATE_THRESHOLD_NS) continue;
    if (s->n_events == cap) s->events = nsys_xrealloc(s->events, (cap = cap ? cap * 2 : 64) * sizeof *s->events);
    nsys_set_event *e = &s->events[s->n_events++];
    memset(e, 0, sizeof *e);
    e->coll = ci;
    e->rank = L;
    e->step = c->step;
    e->late = late;
    e->rc = nsys_set_coll_member(s, c, L);
    for (int k = 0; k <= NSYS_CAUSE__N; k++) {
      uint32_t m = 0;
      for (uint32_t r = 0; r < s->n_ranks; r++) {
        const nsys_rank_coll *o = r == L ? NULL : nsys_set_coll_member(s, c, r);
        if (o) v[m++] = k < NSYS_CAUSE__N ? o->cause[k] : o->window;
      }
      e->peer_median[k] = nsys_rank_median(v, m);
    }
    int best = 0, own = 0;
    int64_t best_x = INT64_MIN;
    for (int k = 0; k < NSYS_CAUSE__N; k++) {
      int64_t x = e->rc->cause[k] - e->peer_median[k];
      if (x > best_x) {
        best_x = x;
        best = k;
      }
      if (e->rc->cause[k] > e->rc->cause[own]) own = k;
    }
    e->cause = best_x > 0 ? best : own;
    nsys_set_rank *rk = &s->ranks[L];
    rk->late_count++;
    rk->late_sum += late;
    if (late > rk->max_late) rk->max_late = late;
    rk->cause_count[e->cause]++;
  }
  free(v);
  /* the straggler: more than half the late events (two at least), else last
   * at more than half the collectives */
  int32_t most = -1, worst = -1;
  for (uint32_t r = 0; r < s->n_ranks; r++) {
    if (most < 0 || s->ranks[r].late_count > s->ranks[most].late_count) most = (int32_t)r;
    if (worst < 0 || s->ranks[r].last_count > s->ranks[worst].last_count) worst = (int32_t)r;
  }
  if (most >= 0 && s->ranks[most].late_count >= 2 && s->ranks[most].late_count * 2 > s->n_events) s->straggler = most;
  else if (s->n_colls && worst >= 0 && s->ranks[worst].last_count * 2 > s->n_colls) s->straggler = worst;
}
