/* Temporary files of the cache directory (see cache_tmp.h). */
#include "common/cache_tmp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/util.h"

/* The writer's pid of a temporary's name "<name>.tmp.<pid>.<digits>", or 0
 * for any other name. */
static long nsys__tmp_pid(const char *name) {
  const char *t = NULL;
  for (const char *s = strstr(name, ".tmp."); s; s = strstr(s + 1, ".tmp.")) t = s;
  if (!t || t == name) return 0;
  const char *p = t + 5;
  char *end = NULL;
  errno = 0;
  long pid = strtol(p, &end, 10);
  if (errno || end == p || *end != '.' || pid <= 0 || pid > INT_MAX) return 0; /* kill() takes a pid_t */
  const char *ns = end + 1;
  if (!*ns) return 0;
  for (const char *c = ns; *c; c++)
    if (*c < '0' || *c > '9') return 0;
  return pid;
}

static bool nsys__process_gone(long pid) {
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int nsys_cache_sweep_tmp(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int removed = 0;
  long self = (long)getpid();
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    long pid = nsys__tmp_pid(e->d_name);
    if (pid == 0 || pid == self || !nsys__process_gone(pid)) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
  }
  closedir(d);
  return removed;
}

char *nsys_cache_tmp_name(const char *path) {
  const char *slash = strrchr(path, '/');
  if (slash) {
    char *dir = slash == path ? nsys_xstrdup("/") : nsys_xasprintf("%.*s", (int)(slash - path), path);
    int n = nsys_cache_sweep_tmp(dir);
    if (n) nsys_log("cache: removed %d temporary file(s) left by processes that are gone in %s", n, dir);
    free(dir);
  }
  return nsys_xasprintf("%s.tmp.%d.%lld", path, (int)getpid(), (long long)nsys_now_ns());
}
