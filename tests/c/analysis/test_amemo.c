/* The per-profile memo of the analyses' shared cache (analysis/amemo.h):
 * every analysis and the report answer the same bytes through the memo as
 * through a cache of their own (NSYS_AI_ANALYSIS_MEMO=0), on real exports;
 * a request cancelled while the memo is being built fails -32800 and keeps
 * nothing half-built, and the next request builds it whole and answers as a
 * fresh open does. Skips (77) when the shared real profiles are absent. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../index/index_test_util.h"
#include "analysis/amemo.h"
#include "analysis/analysis.h"
#include "analysis/report.h"
#include "common/errors.h"
#include "methods/analysis_json.h"

static const char *const ANALYSES[] = {"top_kernels",     "gpu_idle_gaps",         "kernel_launch_overhead",
                                       "sync_cost",       "overlap",               "nccl_breakdown",
                                       "iterations",      "memory_transfers",      "stream_classification",
                                       "nvtx_summary",    "thread_utilization",    "stage_overlap"};
enum { N_ANALYSES = sizeof ANALYSES / sizeof ANALYSES[0] };

/* The answer of one analysis (or of the report when name is NULL) as compact
 * JSON; NULL when it failed (*code then holds the task's error). */
static char *answer(nsys_profile *p, const nsys_index *ix, const char *name, bool cancelled, int *code) {
  nsys_task task;
  nsys_task_init(&task);
  if (cancelled) nsys_task_cancel(&task);
  cJSON *j = NULL;
  if (name) {
    nsys_aresult *r = nsys_analysis_exec(&task, p, ix, name, NULL, NULL);
    if (r) j = nsys_aresult_json(r);
    nsys_aresult_free(r);
  } else {
    nsys_report *r = nsys_report_build(&task, p, ix);
    if (r) j = nsys_report_json(r);
    nsys_report_free(r);
  }
  *code = (int)task.err;
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return s;
}

static void check_profile(const char *path) {
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK_MSG(ix != NULL, "%s: no index", path);
  if (!ix) {
    t_close(&tp);
    return;
  }
  /* the reference: every run with a cache of its own */
  setenv("NSYS_AI_ANALYSIS_MEMO", "0", 1);
  char *fresh[N_ANALYSES + 1];
  int code;
  for (int i = 0; i <= N_ANALYSES; i++) fresh[i] = answer(tp.p, ix, i < N_ANALYSES ? ANALYSES[i] : NULL, false, &code);
  CHECK(tp.p->memo == NULL);
  unsetenv("NSYS_AI_ANALYSIS_MEMO");

  /* the first request is cancelled: its memo build is cut short, nothing kept */
  char *cut = answer(tp.p, ix, "overlap", true, &code);
  CHECK_MSG(cut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled first run answered (%d)", path, code);
  free(cut);
  CHECK_MSG(tp.p->memo == NULL, "%s: a cancelled build left a memo", path);

  /* then every answer through the memo, twice (built by the first, read by
   * the rest), equals the fresh one byte for byte */
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i <= N_ANALYSES; i++) {
      const char *name = i < N_ANALYSES ? ANALYSES[i] : "report";
      char *got = answer(tp.p, ix, i < N_ANALYSES ? ANALYSES[i] : NULL, false, &code);
      CHECK_MSG((got == NULL) == (fresh[i] == NULL), "%s %s: one path failed (%d)", path, name, code);
      if (got && fresh[i]) CHECK_MSG(strcmp(got, fresh[i]) == 0, "%s %s: memo answer differs", path, name);
      free(got);
    }
    CHECK_MSG(tp.p->memo != NULL, "%s: no memo after a successful run", path);
  }
  /* a cancelled request on a built memo is cancelled, and leaves it whole */
  cut = answer(tp.p, ix, "gpu_idle_gaps", true, &code);
  CHECK(cut == NULL && code == NSYS_E_CANCELLED);
  free(cut);
  char *again = answer(tp.p, ix, "gpu_idle_gaps", false, &code);
  CHECK(again && fresh[1] && strcmp(again, fresh[1]) == 0);
  free(again);
  for (int i = 0; i <= N_ANALYSES; i++) free(fresh[i]);
  t_close(&tp);
}

int main(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  static const char *const names[] = {"nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2023_rtx3060_23k",
                                      "nsys2024_a100_cudagraph"};
  int found = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *path = nsys_xasprintf("%s/profiles/%s.sqlite", shared ? shared : "../shared", names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      fclose(f);
      found++;
      check_profile(path);
    }
    free(path);
  }
  if (!found) nsys_check_skip("the shared real profiles are absent (NSYS_AI_SHARED/profiles)");
  return nsys_check_done("amemo");
}
