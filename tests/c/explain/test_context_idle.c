/* The explanation context's GPU idle time (explain/context.c) read from the
 * per-profile memo's whole-device unions equals the heap merge of every
 * device's ops it replaces (NSYS_AI_ANALYSIS_MEMO=0), and the hand-computed
 * sum, on a hand-built export made to break it: zero-length ops first and
 * last on a device (they move its span, cover nothing), an op that ends
 * before it starts as a device's latest start, nested, overlapping and
 * touching ops on several streams, a device whose only op is empty, negative
 * timestamps and absolute (epoch) clocks past 2^53. Then the whole context
 * (ranking included) on the shared real exports when present. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../index/index_test_util.h"
#include "analysis/amemo.h"
#include "explain/context.h"

#define EPOCH 1726751178667767434LL /* an absolute clock above 2^53 */

/* (device, stream, start, end) of each kernel of the hand-built export. */
static const int64_t KERNELS[][4] = {
    /* device 0: idle 50 + 100 + 100 + 80 + 100 = 430 (see expected_idle) */
    {0, 1, 100, 200},
    {0, 1, 180, 260},  /* overlaps the one before */
    {0, 1, 260, 300},  /* touches it */
    {0, 1, 400, 400},  /* empty, alone in a gap */
    {0, 1, 500, 520},
    {0, 2, 50, 50},    /* empty: the device's first start */
    {0, 2, 210, 230},  /* nested */
    {0, 2, 600, 590},  /* ends before it starts: the device's latest start */
    {0, 3, 700, 800},
    /* device 1: one empty op (a device, no idle) */
    {1, 1, 1000, 1000},
    /* device 2: negative timestamps, idle 50 + 30 (an empty op last) */
    {2, 4, -500, -100},
    {2, 4, -50, 10},
    {2, 4, 40, 40},
    /* device 3: absolute clock, idle 7 + 0 (an empty op touching) + 100 (an
     * op that ends before it starts, last) */
    {3, 5, EPOCH, EPOCH + 1000},
    {3, 5, EPOCH + 1007, EPOCH + 2000},
    {3, 6, EPOCH + 2000, EPOCH + 2000},
    {3, 7, EPOCH + 2100, EPOCH + 2050},
};
enum { N_KERNELS = sizeof KERNELS / sizeof KERNELS[0] };

static char *make_export(void) {
  char *path = nsys_xasprintf("/tmp/nsys-ai-ctx-idle-%d.sqlite", (int)getpid());
  unlink(path);
  sqlite3 *db;
  CHECK(sqlite3_open(path, &db) == SQLITE_OK);
  t_create_schema(db);
  t_exec(db, "INSERT INTO StringIds VALUES (1,'my_kernel'),(2,'other_kernel');");
  for (int i = 0; i < N_KERNELS; i++) {
    char *sql = nsys_xasprintf("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld,%lld,%lld,1,%lld,%d,1,%d,%d,NULL,1,1);",
                               (long long)KERNELS[i][2], (long long)KERNELS[i][3], (long long)KERNELS[i][0],
                               (long long)KERNELS[i][1], i + 1, 1 + i % 2, 1 + i % 2);
    t_exec(db, sql);
    free(sql);
  }
  sqlite3_close(db);
  return path;
}

/* The GPU idle item of a context: its ns and device count (0, 0 when none). */
static void idle_item(const nsys_explain_context *cx, int64_t *ns, uint32_t *devices) {
  *ns = 0;
  *devices = 0;
  for (int i = 0; i < cx->n_items; i++)
    if (cx->items[i].kind == NSYS_XITEM_IDLE) *ns = cx->items[i].ns, *devices = cx->items[i].count;
}

/* The context without the memo (heap merge) and with it (unions): equal in
 * every field the explanations read. */
static void check_profile(const char *path, int64_t expect_idle, uint32_t expect_devices) {
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK_MSG(ix != NULL, "%s: no index", path);
  if (!ix) return;
  nsys_task task;
  nsys_task_init(&task);

  nsys_explain_context_clear();
  setenv("NSYS_AI_ANALYSIS_MEMO", "0", 1);
  const nsys_explain_context *m = nsys_explain_context_get(tp.p, ix, &task);
  CHECK_MSG(m != NULL, "%s: context (merge) failed", path);
  nsys_explain_context merged;
  if (m) merged = *m;
  unsetenv("NSYS_AI_ANALYSIS_MEMO");
  CHECK_MSG(nsys_amemo_peek(tp.p, ix) == NULL, "%s: a memo before any analysis", path);

  nsys_acache *k = NULL;
  CHECK(nsys_amemo_get(&task, tp.p, ix, &k) && k != NULL);
  nsys_explain_context_clear();
  const nsys_explain_context *u = nsys_explain_context_get(tp.p, ix, &task);
  CHECK_MSG(u != NULL, "%s: context (memo) failed", path);
  if (m && u) {
    CHECK_MSG(u->idle_ns == merged.idle_ns, "%s: idle %lld from the memo, %lld merged", path, (long long)u->idle_ns,
              (long long)merged.idle_ns);
    CHECK_MSG(u->n_items == merged.n_items && memcmp(u->items, merged.items, sizeof u->items) == 0,
              "%s: the ranking differs", path);
    int64_t ns;
    uint32_t devices;
    idle_item(u, &ns, &devices);
    if (expect_idle >= 0) {
      CHECK_MSG(u->idle_ns == expect_idle && ns == expect_idle, "%s: idle %lld, expected %lld", path,
                (long long)u->idle_ns, (long long)expect_idle);
      CHECK_MSG(devices == expect_devices, "%s: %u devices, expected %u", path, devices, expect_devices);
    }
  }
  nsys_explain_context_clear();
  t_close(&tp);
}

static void check_real(const char *path) { check_profile(path, -1, 0); }

int main(void) {
  char *made = make_export();
  check_profile(made, 430 + 0 + 80 + 107, 4);
  unlink(made);
  free(made);

  static const char *const names[] = {"nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2023_rtx3060_23k",
                                      "nsys2024_a100_cudagraph"};
  int found = t_each_real(names, sizeof names / sizeof names[0], check_real);
  if (!found) fprintf(stderr, "the shared real profiles are absent (NSYS_AI_SHARED/profiles): hand-built export only\n");
  return nsys_check_done("explain context idle");
}
