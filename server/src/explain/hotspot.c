/* The report's "Hotspot" verdict (see hotspot.h). */
#include "explain/hotspot.h"

#include <stdio.h>
#include <string.h>

#include "explain/explain.h"

const char *nsys_hotspot_cause_name(nsys_hotspot_cause c) {
  static const char *const names[] = {"own_work", "unified_memory", "copies", "launch_bound", "serial"};
  return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "own_work";
}

bool nsys_explain_hotspot_of(struct nsys_profile *p, const nsys_index *ix, const char *name, nsys_task *task,
                             nsys_explain_hotspot *out) {
  memset(out, 0, sizeof *out);
  if (!p || !ix || !name || !*name) return false;
  nsys_explain_req req = {p, ix, name, -1};
  nsys_explain_result r;
  if (!nsys_explain_kernel(task, &req, &r)) {
    nsys_explain_result_free(&r);
    return false;
  }
  bool ok = r.in_profile && r.have_detect;
  if (ok) {
    const nsys_detect *d = &r.detect;
    out->detect = *d;
    snprintf(out->origin, sizeof out->origin, "%s", r.origin);
    snprintf(out->category, sizeof out->category, "%s", r.category);
    if (r.have_priority) {
      snprintf(out->family, sizeof out->family, "%s", r.priority.item);
      out->rank = r.priority.rank;
      out->of = r.priority.of;
      snprintf(out->first, sizeof out->first, "%s", r.priority.first_item);
      out->first_ns = r.priority.first_ns;
      out->first_pct = r.priority.first_pct;
      out->is_first = r.priority.is_first;
    }
    /* the cause, most specific first (the order explain's bound follows) */
    if (strcmp(r.bound, "serial") == 0) {
      out->cause = NSYS_HOTSPOT_SERIAL;
      snprintf(out->cause_text, sizeof out->cause_text,
               "it runs on one thread of one block (grid 1x1x1, block 1x1x1): the loop was not parallelised");
    } else if (r.fires_unified_memory) {
      out->cause = NSYS_HOTSPOT_UNIFIED_MEMORY;
      snprintf(out->cause_text, sizeof out->cause_text,
               "its time is unified-memory page migration, not its own work (%u migrations, %lld bytes, during %u of "
               "%u launches; %lld GPU page faults; %lld CPU page faults around it)",
               d->um_migrations, (long long)d->um_bytes, d->um_instances, d->instances, (long long)d->gpu_faults,
               (long long)d->cpu_faults);
    } else if (r.fires_launch_bound) {
      out->cause = NSYS_HOTSPOT_LAUNCH_BOUND;
      snprintf(out->cause_text, sizeof out->cause_text,
               "it is launch-bound: %u of %u launches ran shorter than their launch call and %u found the stream empty",
               d->shorter_than_launch, d->launched, d->starved);
    } else if (r.fires_copies) {
      out->cause = NSYS_HOTSPOT_COPIES;
      snprintf(out->cause_text, sizeof out->cause_text,
               "%u of its %u instances sit next to pageable or synchronous copies on its stream (%u copies, %lld bytes)",
               d->copy_instances, d->instances, d->copies, (long long)d->copy_bytes);
    }
    /* explain's first recommendation from the evidence, else the first
     * knowledge-base suggestion that holds here; never the ranking's
     * "priority" statement (the report has its own idle and copy findings) */
    int pick = r.n_evidence_suggestions > 0 ? 0 : r.first_kb_suggestion;
    if (pick >= 0 && pick < r.suggestions.n)
      snprintf(out->recommendation, sizeof out->recommendation, "%s", r.suggestions.v[pick]);
  }
  nsys_explain_result_free(&r);
  return ok;
}
