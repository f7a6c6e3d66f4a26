/* capture/history.c: runs, names, references, notes, stats; threads writing at
 * once through their own connections lose nothing. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/history.h"
#include "common/util.h"
#include "nsys_check.h"

static char root[256];

static void test_add_get_list(void) {
  nsys_task t;
  nsys_task_init(&t);
  CHECK(nsys_history_open(root, false, &t) == NULL); /* readers create nothing */
  CHECK_EQ(t.err, NSYS_E_NOT_FOUND);
  nsys_task_init(&t);
  nsys_history *h = nsys_history_open(root, true, &t);
  CHECK(h != NULL);
  if (!h) return;
  struct stat st;
  CHECK(stat(nsys_history_dir(h), &st) == 0 && (st.st_mode & 0777) == 0700);
  char *gi = nsys_xasprintf("%s/.gitignore", nsys_history_dir(h));
  CHECK(stat(gi, &st) == 0);
  free(gi);
  nsys_run spec = {0}, a = {0}, b = {0}, c = {0}, g = {0};
  spec.status = "ok";
  spec.report = "/x/a.sqlite";
  spec.command = "[\"python\",\"a.py\"]";
  spec.git_dirty = -1;
  CHECK(nsys_history_add(h, &spec, &a, &t));
  CHECK_STR(a.name, "r1");
  CHECK(a.created_ns > 1600000000000000000LL);
  CHECK(!a.interrupted && !a.has_stats);
  spec.name = "named";
  spec.before_id = a.id;
  CHECK(nsys_history_add(h, &spec, &b, &t));
  CHECK_STR(b.name, "named");
  CHECK_EQ(b.before_id, a.id);
  /* a duplicate name: refused, nothing added */
  CHECK(!nsys_history_add(h, &spec, &c, &t));
  CHECK_EQ(t.err, NSYS_E_INVALID_PARAMS);
  nsys_task_init(&t);
  /* a run without a report is skipped by latest~K */
  spec.name = NULL;
  spec.report = NULL;
  spec.status = "capturing";
  CHECK(nsys_history_add(h, &spec, &c, &t));
  CHECK_STR(c.name, "r3"); /* the refused insert was rolled back whole */
  CHECK(!c.interrupted);   /* this process is alive */
  CHECK(nsys_history_get(h, "latest", &g, &t));
  CHECK_STR(g.name, "named");
  nsys_run_free(&g);
  CHECK(nsys_history_get(h, "latest~1", &g, &t));
  CHECK_STR(g.name, "r1");
  nsys_run_free(&g);
  CHECK(nsys_history_get(h, "#1", &g, &t));
  CHECK_STR(g.name, "r1");
  nsys_run_free(&g);
  CHECK(!nsys_history_get(h, "latest~2", &g, &t));
  CHECK_EQ(t.err, NSYS_E_NOT_FOUND);
  nsys_task_init(&t);
  CHECK(!nsys_history_get(h, "latest~x", &g, &t));
  CHECK_EQ(t.err, NSYS_E_INVALID_PARAMS);
  nsys_task_init(&t);
  CHECK(nsys_history_finish(h, c.id, "failed", NULL, NULL, "nsys crashed", NULL, &t));
  CHECK(nsys_history_set_stats(h, a.id, 42.5, 80.0, 7, &t));
  nsys_run_note n;
  CHECK(nsys_history_add_note(h, a.id, "hypothesis", "it's the \"loader\"", &n, &t));
  nsys_run_note_free(&n);
  nsys_run *all = NULL;
  int k = 0;
  CHECK(nsys_history_list(h, 0, &all, &k, &t));
  CHECK_EQ(k, 3);
  if (k == 3) {
    CHECK_STR(all[0].name, "r3");
    CHECK_STR(all[0].status, "failed");
    CHECK_STR(all[0].error, "nsys crashed");
    CHECK(all[2].has_stats && all[2].coverage == 42.5 && all[2].tagged_ranges == 7);
    CHECK_STR(all[2].command, "[\"python\",\"a.py\"]");
  }
  nsys_runs_free(all, k);
  CHECK(nsys_history_list(h, 1, &all, &k, &t));
  CHECK_EQ(k, 1);
  nsys_runs_free(all, k);
  nsys_run_note *notes = NULL;
  CHECK(nsys_history_notes(h, a.id, &notes, &k, &t));
  CHECK_EQ(k, 1);
  if (k == 1) CHECK_STR(notes[0].text, "it's the \"loader\"");
  nsys_run_notes_free(notes, k);
  /* a run and its hypothesis in one transaction: a refused run leaves no note behind */
  nsys_run d = {0};
  spec.name = "named";
  CHECK(!nsys_history_add_with_note(h, &spec, "hypothesis", "lost?", &d, &t));
  nsys_task_init(&t);
  spec.name = "with-note";
  CHECK(nsys_history_add_with_note(h, &spec, "hypothesis", "the loader", &d, &t));
  CHECK(nsys_history_notes(h, d.id, &notes, &k, &t));
  CHECK_EQ(k, 1);
  if (k == 1) CHECK(strcmp(notes[0].kind, "hypothesis") == 0 && strcmp(notes[0].text, "the loader") == 0);
  nsys_run_notes_free(notes, k);
  /* the previous run with a report: "named" (r3 failed), none before r1 */
  CHECK(nsys_history_previous(h, &d, &g, &t));
  CHECK_STR(g.name, "named");
  nsys_run_free(&g);
  CHECK(!nsys_history_previous(h, &a, &g, &t));
  CHECK_EQ(t.err, NSYS_E_NOT_FOUND);
  CHECK(strstr(t.err_msg, "before r1") != NULL);
  nsys_task_init(&t);
  sqlite3 *db = NULL;
  char *path = nsys_xasprintf("%s/runs.db", nsys_history_dir(h));
  CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  sqlite3_stmt *q = NULL;
  CHECK(sqlite3_prepare_v2(db, "SELECT count(*) FROM notes WHERE text = 'lost?'", -1, &q, NULL) == SQLITE_OK);
  CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 0);
  sqlite3_finalize(q);
  sqlite3_close(db);
  free(path);
  nsys_run_free(&d);
  nsys_run_free(&a), nsys_run_free(&b), nsys_run_free(&c);
  nsys_history_close(h);
}

#define THREADS 4
#define PER 25

static void *writer(void *arg) {
  (void)arg;
  nsys_task t;
  nsys_task_init(&t);
  nsys_history *h = nsys_history_open(root, true, &t); /* one connection per thread, as separate processes */
  for (int i = 0; h && i < PER; i++) {
    nsys_run spec = {0}, got = {0};
    spec.git_dirty = -1;
    if (!nsys_history_add(h, &spec, &got, &t)) break;
    nsys_run_free(&got);
  }
  if (t.err) fprintf(stderr, "writer: %s\n", t.err_msg);
  nsys_history_close(h);
  return (void *)(intptr_t)(t.err == NSYS_OK);
}

static void test_concurrent_threads(void) {
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, writer, NULL);
  for (int i = 0; i < THREADS; i++) {
    void *ok = NULL;
    pthread_join(th[i], &ok);
    CHECK(ok != NULL);
  }
  nsys_task t;
  nsys_task_init(&t);
  nsys_history *h = nsys_history_open(root, false, &t);
  nsys_run *all = NULL;
  int k = 0;
  CHECK(h && nsys_history_list(h, 0, &all, &k, &t));
  CHECK_EQ(k, 4 + THREADS * PER); /* test_add_get_list left 4 */
  nsys_runs_free(all, k);
  nsys_history_close(h);
}

static void test_bad_root(void) {
  nsys_task t;
  nsys_task_init(&t);
  CHECK(nsys_history_open("/nonexistent/dir", true, &t) == NULL);
  CHECK_EQ(t.err, NSYS_E_IO);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/nsys-ai-test-history-%d", (int)getpid());
  mkdir(root, 0700);
  test_add_get_list();
  test_concurrent_threads();
  test_bad_root();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return nsys_check_done("history");
}
