/* Rank sets: stragglers with causes. At every collective the rank whose
 * kernel starts last arrived last; it is late by (its start - the median
 * start of the others). A last arrival later than NSYS_LATE_THRESHOLD_NS is
 * an event; its cause is the category whose time in the window before the
 * collective exceeds the other ranks' median for the same collective the
 * most (their own largest category when none exceeds). A rank late again in
 * the same step by less than 1.5x its previous event there (most of the delay
 * is that one's, carried through the step) carries its cause (carried_from). */
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
  /* per rank: its latest event (UINT32_MAX: none) */
  uint32_t *prev_event = nsys_xmalloc(((size_t)s->n_ranks + 1) * sizeof *prev_event);
  for (uint32_t r = 0; r < s->n_ranks; r++) prev_event[r] = UINT32_MAX;
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
    uint32_t before = prev_event[L];
    if (before != UINT32_MAX && (c->step < 0 || s->events[before].step != c->step)) before = UINT32_MAX;
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
    e->carried_from = -1;
    if (before != UINT32_MAX && 2 * late < 3 * s->events[before].late) { /* most of it is the earlier delay */
      const nsys_set_event *b = &s->events[before];
      e->carried_from = b->carried_from >= 0 ? b->carried_from : (int32_t)b->coll;
      e->cause = b->cause;
    }
    prev_event[L] = s->n_events - 1;
    nsys_set_rank *rk = &s->ranks[L];
    rk->late_count++;
    rk->late_sum += late;
    if (late > rk->max_late) rk->max_late = late;
    rk->cause_count[e->cause]++;
  }
  free(v);
  free(prev_event);
  /* the straggler: the rank with the most total lateness over its events (two
   * at least) when that is at least twice the next rank's, else the rank last
   * at more than half the collectives */
  int32_t most = -1, second = -1, worst = -1;
  for (uint32_t r = 0; r < s->n_ranks; r++) {
    if (most < 0 || s->ranks[r].late_sum > s->ranks[most].late_sum) {
      second = most;
      most = (int32_t)r;
    } else if (second < 0 || s->ranks[r].late_sum > s->ranks[second].late_sum) {
      second = (int32_t)r;
    }
    if (worst < 0 || s->ranks[r].last_count > s->ranks[worst].last_count) worst = (int32_t)r;
  }
  if (most >= 0 && s->ranks[most].late_count >= 2 &&
      (second < 0 || s->ranks[most].late_sum >= 2 * s->ranks[second].late_sum))
    s->straggler = most;
  else if (s->n_colls && worst >= 0 && s->ranks[worst].last_count * 2 > s->n_colls)
    s->straggler = worst;
}
