/* The cache directory's temporaries: those of processes that are gone are
 * removed before a new one is named; a live writer's, other files and names
 * that only look alike are kept. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cache_tmp.h"
#include "common/util.h"
#include "nsys_check.h"

static void touch(const char *dir, const char *name) {
  char *p = nsys_xasprintf("%s/%s", dir, name);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK_MSG(fd >= 0, "create %s", p);
  if (fd >= 0) close(fd);
  free(p);
}

static int exists(const char *dir, const char *name) {
  char *p = nsys_xasprintf("%s/%s", dir, name);
  struct stat st;
  int ok = stat(p, &st) == 0;
  free(p);
  return ok;
}

/* The pid of a child that has exited and been reaped: a process that is gone. */
static long gone_pid(void) {
  pid_t c = fork();
  if (c == 0) _exit(0);
  int st;
  waitpid(c, &st, 0);
  return (long)c;
}

int main(void) {
  char tmpl[] = "/tmp/nsys-ai-cache-tmp-XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (!dir) return nsys_check_done("test_cache_tmp");
  long dead = gone_pid(), self = (long)getpid();
  char *dead1 = nsys_xasprintf("index-00245ee770614b79.bin.tmp.%ld.1779782330176752435", dead);
  char *dead2 = nsys_xasprintf("info-00245ee770614b79.bin.tmp.%ld.42", dead);
  char *mine = nsys_xasprintf("index-00245ee770614b79.bin.tmp.%ld.7", self);
  char *live = nsys_xstrdup("index-1111111111111111.bin.tmp.1.7"); /* pid 1 is always there */
  char *odd1 = nsys_xasprintf("index-2222222222222222.bin.tmp.%ld.12a", dead);
  char *odd2 = nsys_xasprintf("index-3333333333333333.bin.tmp.%ld.", dead);
  char *odd3 = nsys_xasprintf(".tmp.%ld.5", dead);
  const char *keep[] = {"index-00245ee770614b79.bin", "notes.tmp.x.1", "index-4444444444444444.bin.tmp.-3.1",
                        "index-6666666666666666.bin.tmp.4294967297.1"};
  touch(dir, dead1);
  touch(dir, dead2);
  touch(dir, mine);
  touch(dir, live);
  touch(dir, odd1);
  touch(dir, odd2);
  touch(dir, odd3);
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) touch(dir, keep[i]);

  CHECK_EQ(nsys_cache_sweep_tmp(dir), 2);
  CHECK(!exists(dir, dead1));
  CHECK(!exists(dir, dead2));
  CHECK(exists(dir, mine));
  CHECK(exists(dir, live));
  CHECK(exists(dir, odd1));
  CHECK(exists(dir, odd2));
  CHECK(exists(dir, odd3));
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) CHECK_MSG(exists(dir, keep[i]), "%s", keep[i]);
  CHECK_EQ(nsys_cache_sweep_tmp(dir), 0);

  /* naming a new temporary sweeps first, and names it after this process */
  touch(dir, dead1);
  char *path = nsys_xasprintf("%s/index-5555555555555555.bin", dir);
  char *t = nsys_cache_tmp_name(path);
  char *want = nsys_xasprintf("%s.tmp.%ld.", path, self);
  CHECK_MSG(strncmp(t, want, strlen(want)) == 0, "%s", t);
  CHECK(!exists(dir, dead1));
  CHECK(exists(dir, mine));
  CHECK_EQ(nsys_cache_sweep_tmp("/nonexistent/nsys-ai"), 0);

  char *rm = nsys_xasprintf("rm -rf '%s'", dir);
  CHECK_EQ(system(rm), 0);
  free(rm);
  free(want);
  free(t);
  free(path);
  free(dead1);
  free(dead2);
  free(mine);
  free(live);
  free(odd1);
  free(odd2);
  free(odd3);
  return nsys_check_done("test_cache_tmp");
}
