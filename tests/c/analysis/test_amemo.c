/* The per-profile memo of the analyses' shared cache (analysis/amemo.h):
 * every analysis, the report and profile/diff answer the same bytes through
 * the memo as through a cache of their own (NSYS_AI_ANALYSIS_MEMO=0), on
 * real exports; a request cancelled before or while the memo is being built
 * (its devices on several threads) fails -32800 and keeps nothing
 * half-built, and the next request builds it whole and answers as a fresh
 * open does; concurrent first requests share one build and all answer the
 * same bytes; profile/diff answers the same with its two sides on one thread
 * or two, and from the side the memo keeps (after a cancelled first diff
 * too). Skips (77) when the shared real profiles are absent. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../index/index_test_util.h"
#include "analysis/amemo.h"
#include "analysis/amemo_file.h"
#include "analysis/analysis.h"
#include "analysis/report.h"
#include "common/errors.h"
#include "analysis/diff.h"
#include "methods/analysis_json.h"
#include "methods/diff_json.h"
#include "index/index_cache_format.h"

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

/* profile/diff of the profile with itself, as compact JSON (NULL: failed). */
static char *diff_answer(nsys_profile *p, const nsys_index *ix, bool cancelled, int *code) {
  nsys_task task;
  nsys_task_init(&task);
  if (cancelled) nsys_task_cancel(&task);
  nsys_diff d;
  nsys_diff_page page = {0, 1000, 0, 1000};
  char *s = NULL;
  if (nsys_diff_run(&d, &task, p, ix, p, ix, NULL)) {
    cJSON *j = nsys_diff_json(&d, &page);
    s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
  }
  nsys_diff_free(&d);
  *code = (int)task.err;
  return s;
}

typedef struct {
  nsys_profile *p;
  const nsys_index *ix;
  const char *name; /* NULL: profile/diff */
  char *got;
  int code;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  r->got = r->name ? answer(r->p, r->ix, r->name, false, &r->code) : diff_answer(r->p, r->ix, false, &r->code);
  return NULL;
}

static void drop_memo(nsys_profile *p) {
  if (p->memo && p->memo_free) p->memo_free(p->memo);
  p->memo = NULL;
}

/* Concurrent first requests on a profile without a memo: one build, every
 * answer the reference's. */
static void check_race(const char *path, nsys_profile *p, const nsys_index *ix, char *const *fresh, const char *diff) {
  drop_memo(p);
  enum { R = 6 };
  static const int which[R] = {0, 4, 9, -1, 1, -1}; /* analyses by index, -1: diff */
  racer rs[R];
  pthread_t th[R];
  for (int i = 0; i < R; i++) {
    rs[i] = (racer){p, ix, which[i] >= 0 ? ANALYSES[which[i]] : NULL, NULL, 0};
    CHECK(pthread_create(&th[i], NULL, race, &rs[i]) == 0);
  }
  for (int i = 0; i < R; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < R; i++) {
    const char *want = which[i] >= 0 ? fresh[which[i]] : diff;
    CHECK_MSG(rs[i].got && want && strcmp(rs[i].got, want) == 0, "%s %s: concurrent first request differs (%d)", path,
              rs[i].name ? rs[i].name : "diff", rs[i].code);
    free(rs[i].got);
  }
  CHECK(p->memo != NULL);
}

typedef struct {
  nsys_task *task;
  long delay_us;
} canceller;

static void *cancel_later(void *arg) {
  canceller *c = arg;
  struct timespec ts = {c->delay_us / 1000000, (c->delay_us % 1000000) * 1000};
  nanosleep(&ts, NULL);
  nsys_task_cancel(c->task);
  return NULL;
}

/* A first request cancelled at some point of the memo's (threaded) build:
 * either it finished first and answers the reference, or it answers -32800
 * (a build cut short is dropped, a whole one kept); either way the next
 * request answers the reference. */
static void check_cancel_midway(const char *path, nsys_profile *p, const nsys_index *ix, const char *want) {
  static const long delays[] = {0, 50, 200, 1000, 3000, 10000};
  for (size_t k = 0; k < sizeof delays / sizeof delays[0]; k++) {
    drop_memo(p);
    nsys_task task;
    nsys_task_init(&task);
    canceller cn = {&task, delays[k]};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cancel_later, &cn) == 0);
    nsys_aresult *r = nsys_analysis_exec(&task, p, ix, "overlap", NULL, NULL);
    pthread_join(th, NULL);
    if (r) {
      cJSON *j = nsys_aresult_json(r);
      char *s = cJSON_PrintUnformatted(j);
      CHECK_MSG(s && strcmp(s, want) == 0, "%s: overlap finished before its cancel, but differs", path);
      free(s);
      cJSON_Delete(j);
      nsys_aresult_free(r);
    } else {
      CHECK_MSG(task.err == NSYS_E_CANCELLED, "%s: cancel after %ld us: error %d", path, delays[k], (int)task.err);
    }
    int code;
    char *again = answer(p, ix, "overlap", false, &code);
    CHECK_MSG(again && strcmp(again, want) == 0, "%s: overlap after a cancel at %ld us differs", path, delays[k]);
    free(again);
  }
}


/* ---- the memo file (analysis/amemo_file.h) -------------------------------- */

static char *memo_file(nsys_profile *p) {
  uint64_t h;
  return nsys_profile_cache_file(p, "memo", &h);
}

static void spit(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(b, 1, n, f) == n);
  fclose(f);
}

/* Header layout of the memo file (amemo_file.c): version at 8, profile
 * mtime at 48, payload size at 120, checksum at 128, payload from 136: the device table (48-byte
 * entries: device, n_ops, ...) then the first device's op order. */
enum { H_VERSION = 8, H_MTIME = 48, H_PAYLOAD = 120, H_CHECKSUM = 128, H_SIZE = 136, DEV_ENTRY = 48 };

static void reseal(unsigned char *b, size_t n) {
  nsys__sum s;
  memset(&s, 0, sizeof s);
  size_t words = (n - H_SIZE) / 8;
  uint64_t *w = nsys_xmalloc((words + 1) * 8);
  memcpy(w, b + H_SIZE, words * 8);
  nsys__sum_words(&s, w, words);
  uint64_t c = nsys__sum_final(&s);
  memcpy(b + H_CHECKSUM, &c, 8);
  free(w);
}

/* A memo built (no file) saves one; dropped and asked again, it is read
 * (not built) and every answer is the reference's byte for byte; a file
 * that is corrupt, truncated, of another version, stale or inconsistent is
 * ignored (not read), the answers are the same, and the rebuilt memo writes
 * a good file again; concurrent first requests and cancelled first requests
 * with and without the file answer the same. */
static void check_memo_file(const char *path, nsys_profile *p, const nsys_index *ix, char *const *fresh,
                            const char *diff) {
  char *file = memo_file(p);
  CHECK_MSG(file != NULL, "%s: no cache directory", path);
  if (!file) return;
  int code;
  unlink(file);
  drop_memo(p);
  uint64_t reads = nsys_amemo_file_reads();
  char *got = answer(p, ix, "top_kernels", false, &code);
  CHECK_MSG(got && strcmp(got, fresh[0]) == 0, "%s: top_kernels (memo built) differs", path);
  free(got);
  CHECK_MSG(nsys_amemo_file_reads() == reads, "%s: memo read while there was no file", path);
  size_t n = 0;
  unsigned char *good = t_slurp(file, &n);
  CHECK_MSG(good != NULL && n > H_SIZE, "%s: no memo file saved", path);
  if (!good || n <= H_SIZE) {
    free(good);
    free(file);
    return;
  }
  /* read, not built: every answer is the reference's */
  drop_memo(p);
  for (int i = 0; i <= N_ANALYSES; i++) {
    got = answer(p, ix, i < N_ANALYSES ? ANALYSES[i] : NULL, false, &code);
    CHECK_MSG((got == NULL) == (fresh[i] == NULL), "%s %s: one path failed (%d)", path,
              i < N_ANALYSES ? ANALYSES[i] : "report", code);
    if (got && fresh[i])
      CHECK_MSG(strcmp(got, fresh[i]) == 0, "%s %s: answer from the memo file differs", path,
                i < N_ANALYSES ? ANALYSES[i] : "report");
    free(got);
  }
  CHECK_MSG(nsys_amemo_file_reads() == reads + 1, "%s: the memo file was not read", path);

  /* bad files: ignored, the same answers, a good file written again */
  uint32_t nd;
  memcpy(&nd, good + 20, 4);
  size_t ops_at = H_SIZE + ((size_t)nd * DEV_ENTRY + 7) / 8 * 8;
  uint32_t dev0_ops = 0;
  if (nd) memcpy(&dev0_ops, good + H_SIZE + 4, 4);
  enum { FLIP, TRUNC, HEADER_ONLY, EMPTY, VERSION, STALE, BAD_OP, BAD_COUNT, HUGE_NDEV, HUGE_PAYLOAD, N_BAD };
  static const char *const what[N_BAD] = {"flipped byte", "truncated",          "header only", "empty",
                                          "other version", "stale",             "op id out of range",
                                          "op count",      "huge device count", "huge payload"};
  for (int b = 0; b < N_BAD; b++) {
    unsigned char *bad = nsys_xmalloc(n);
    memcpy(bad, good, n);
    size_t len = n;
    uint32_t v;
    uint64_t m;
    switch (b) {
    case FLIP: bad[H_SIZE + (n - H_SIZE) / 2] ^= 0x40; break;
    case TRUNC: len = n - 8; break;
    case HEADER_ONLY: len = H_SIZE; break;
    case EMPTY: len = 0; break;
    case VERSION: memcpy(&v, bad + H_VERSION, 4), v++, memcpy(bad + H_VERSION, &v, 4); break;
    case STALE: memcpy(&m, bad + H_MTIME, 8), m++, memcpy(bad + H_MTIME, &m, 8); break;
    case BAD_OP: /* checksum right, content wrong */
      if (!nd || !dev0_ops) break;
      v = 0xFFFFFFF0u;
      memcpy(bad + ops_at, &v, 4);
      reseal(bad, n);
      break;
    case BAD_COUNT:
      if (!nd) break;
      memcpy(&v, bad + H_SIZE + 4, 4), v++, memcpy(bad + H_SIZE + 4, &v, 4);
      reseal(bad, n);
      break;
    case HUGE_NDEV: /* the header is not under the checksum: it must size nothing unchecked */
      v = 0xFFFFFFFFu;
      memcpy(bad + 20, &v, 4);
      break;
    case HUGE_PAYLOAD: /* a payload larger than any memo of this index, its size in the header */
      bad = nsys_xrealloc(bad, n + (64u << 20));
      memset(bad + n, 0, 64u << 20);
      len = n + (64u << 20);
      m = len - H_SIZE;
      memcpy(bad + H_PAYLOAD, &m, 8);
      reseal(bad, len);
      break;
    }
    spit(file, bad, len);
    free(bad);
    drop_memo(p);
    reads = nsys_amemo_file_reads();
    for (int i = 0; i < 3; i++) { /* top_kernels, gpu_idle_gaps, kernel_launch_overhead */
      got = answer(p, ix, ANALYSES[i], false, &code);
      CHECK_MSG(got && strcmp(got, fresh[i]) == 0, "%s: %s after a %s memo file differs", path, ANALYSES[i], what[b]);
      free(got);
    }
    bool skipped = (b == BAD_OP && (!nd || !dev0_ops)) || (b == BAD_COUNT && !nd);
    if (!skipped) CHECK_MSG(nsys_amemo_file_reads() == reads, "%s: a %s memo file was read", path, what[b]);
    size_t n2 = 0;
    unsigned char *again = t_slurp(file, &n2);
    CHECK_MSG(again && n2 == n && memcmp(again, good, n) == 0, "%s: no good memo file after a %s one", path,
              what[b]);
    free(again);
  }
  /* concurrent first requests and cancels, with the file then without */
  for (int with = 1; with >= 0; with--) {
    if (!with) unlink(file);
    check_race(path, p, ix, fresh, diff);
    if (!with) unlink(file);
    check_cancel_midway(path, p, ix, fresh[4]);
  }
  free(good);
  free(file);
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
  /* profile/diff: through the memo (built) = with caches of its own, its
   * sides on two threads or one */
  setenv("NSYS_AI_ANALYSIS_MEMO", "0", 1);
  setenv("NSYS_AI_ANALYSIS_THREADS", "1", 1);
  char *diff_fresh = diff_answer(tp.p, ix, false, &code);
  CHECK_MSG(diff_fresh != NULL, "%s: diff failed (%d)", path, code);
  unsetenv("NSYS_AI_ANALYSIS_MEMO");
  char *diff_memo = diff_answer(tp.p, ix, false, &code);
  unsetenv("NSYS_AI_ANALYSIS_THREADS");
  setenv("NSYS_AI_ANALYSIS_THREADS", "4", 1); /* threaded whatever the CPUs: sides and the memo's devices */
  char *diff_threads = diff_answer(tp.p, ix, false, &code);
  CHECK_MSG(diff_fresh && diff_memo && strcmp(diff_fresh, diff_memo) == 0, "%s: diff through the memo differs", path);
  CHECK_MSG(diff_fresh && diff_threads && strcmp(diff_fresh, diff_threads) == 0, "%s: threaded diff differs", path);
  free(diff_memo);
  free(diff_threads);
  /* a cancelled first diff keeps no memo */
  drop_memo(tp.p);
  char *dcut = diff_answer(tp.p, ix, true, &code);
  CHECK_MSG(dcut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled diff answered (%d)", path, code);
  CHECK_MSG(tp.p->memo == NULL, "%s: a cancelled diff left a memo", path);
  free(dcut);
  /* a diff cancelled once the memo is built (its side not yet): -32800, and
   * the next diff builds the side whole and answers as before, twice (the
   * second from the memo's side) */
  char *warm = answer(tp.p, ix, "nccl_breakdown", false, &code);
  free(warm);
  dcut = diff_answer(tp.p, ix, true, &code);
  CHECK_MSG(dcut == NULL && code == NSYS_E_CANCELLED, "%s: cancelled diff on a built memo answered (%d)", path, code);
  free(dcut);
  for (int k = 0; k < 2; k++) {
    char *d2 = diff_answer(tp.p, ix, false, &code);
    CHECK_MSG(d2 && strcmp(d2, diff_fresh) == 0, "%s: diff after a cancelled one differs (%d)", path, k);
    free(d2);
  }
  check_race(path, tp.p, ix, fresh, diff_fresh);
  check_cancel_midway(path, tp.p, ix, fresh[4]);
  check_memo_file(path, tp.p, ix, fresh, diff_fresh);
  unsetenv("NSYS_AI_ANALYSIS_THREADS");
  free(diff_fresh);

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

/* A cache directory of this test's own: other tests of the suite run at the
 * same time on the same real profiles and would save memo files over the bad
 * ones planted here. */
static void own_cache_dir(void) {
  char *base = nsys_cache_dir();
  char *dir = nsys_xasprintf("%s/test_amemo", base ? base : "/tmp");
  CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
  setenv("NSYS_AI_CACHE_DIR", dir, 1);
  free(dir);
  free(base);
}

int main(void) {
  own_cache_dir();
  static const char *const names[] = {"nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2023_rtx3060_23k",
                                      "nsys2024_a100_cudagraph"};
  if (!t_each_real(names, sizeof names / sizeof names[0], check_profile))
    nsys_check_skip("the shared real profiles are absent (NSYS_AI_SHARED/profiles)");
  return nsys_check_done("amemo");
}
