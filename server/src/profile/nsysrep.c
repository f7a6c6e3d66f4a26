/* .nsys-rep (and legacy .qdrep) reports: converted once with
 *   nsys export --type=sqlite --force-overwrite=true -o CACHE/KEY.sqlite REPORT
 * where KEY hashes the report's identity (real path, device, inode, size,
 * mtime), so reopening an unchanged report reuses the export. The export is
 * written under a temporary name and renamed into place, 0600 in the 0700
 * cache directory. Without nsys on PATH the user gets -32006 with the exact
 * command to run by hand. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "profile/loader_internal.h"
#include "common/task.h"

extern char **environ;

bool nsys_path_is_report(const char *path) {
  size_t n = strlen(path);
  return (n > 9 && strcasecmp(path + n - 9, ".nsys-rep") == 0) ||
         (n > 6 && strcasecmp(path + n - 6, ".qdrep") == 0);
}

char *nsys_find_nsys(void) {
  const char *env = getenv("NSYS_AI_NSYS");
  if (env && *env) return access(env, X_OK) == 0 ? nsys_xstrdup(env) : NULL;
  const char *path = getenv("PATH");
  if (!path) return NULL;
  char *copy = nsys_xstrdup(path), *save = NULL;
  char *found = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
    char *cand = nsys_xasprintf("%s/nsys", *dir ? dir : ".");
    struct stat st;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) found = cand;
    else free(cand);
  }
  free(copy);
  return found;
}

static uint64_t nsys__fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *s = data;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001B3ULL;
  }
  return h;
}

static char *nsys__base_sqlite_name(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t n = dot ? (size_t)(dot - base) : strlen(base);
  char *stem = nsys_xstrndup(base, n);
  char *out = nsys_xasprintf("%s.sqlite", stem);
  free(stem);
  return out;
}

static void nsys__fail_no_nsys(const char *path, nsys_task *task) {
  char *sq = nsys__base_sqlite_name(path);
  nsys_task_fail(task, NSYS_E_NSYS_UNAVAILABLE,
                 "%s is an Nsight Systems report and nsys is not on PATH to convert it; export it "
                 "by hand with: nsys export --type=sqlite -o %s %s  and open the .sqlite file",
                 path, sq, path);
  free(sq);
}

/* Runs nsys; captures the tail of its stderr; honours cancellation. */
static bool nsys__run_export(const char *nsys, const char *report, const char *out,
                             nsys_task *task) {
  char errpath[] = "/tmp/nsys-ai-export-XXXXXX";
  int errfd = mkstemp(errpath);
  if (errfd < 0) {
    nsys_task_fail(task, NSYS_E_IO, "cannot create a temporary file: %s", strerror(errno));
    return false;
  }
  unlink(errpath);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, errfd, STDERR_FILENO);
  char *argv[] = {(char *)nsys, "export", "--type=sqlite", "--force-overwrite=true", "-o",
                  (char *)out, (char *)report, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, nsys, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    close(errfd);
    nsys_task_fail(task, NSYS_E_EXPORT_FAILED, "cannot run %s: %s", nsys, strerror(rc));
    return false;
  }
  nsys_task_progress(task, 1, "nsys export");
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (nsys_task_cancelled(task)) {
      kill(pid, SIGTERM);
      waitpid(pid, &status, 0);
      close(errfd);
      unlink(out);
      nsys_task_fail_cancelled(task);
      return false;
    }
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(out, R_OK) == 0) {
    close(errfd);
    return true;
  }
  char tail[400] = "";
  off_t size = lseek(errfd, 0, SEEK_END);
  off_t from = size > (off_t)sizeof tail - 1 ? size - (off_t)sizeof tail + 1 : 0;
  ssize_t got = pread(errfd, tail, sizeof tail - 1, from);
  tail[got > 0 ? got : 0] = '\0';
  for (char *c = tail; *c; c++)
    if (*c == '\n' || *c == '\r' || (unsigned char)*c < 0x20) *c = ' ';
  close(errfd);
  unlink(out);
  nsys_task_fail(task, NSYS_E_EXPORT_FAILED, "nsys export of %s failed (%s %d): %s", report,
                 WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail);
  return false;
}

char *nsys_report_to_sqlite(const char *path, const struct stat *st, nsys_task *task) {
  char *cache = nsys_cache_dir();
  if (!cache) {
    nsys_task_fail(task, NSYS_E_IO, "cannot create the cache directory to convert %s", path);
    return NULL;
  }
  uint64_t h = 0xCBF29CE484222325ULL;
  h = nsys__fnv1a(h, path, strlen(path));
  int64_t ident[4] = {(int64_t)st->st_dev, (int64_t)st->st_ino, (int64_t)st->st_size,
                      (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec};
  h = nsys__fnv1a(h, ident, sizeof ident);
  char *out = nsys_xasprintf("%s/rep-%016llx.sqlite", cache, (unsigned long long)h);
  if (access(out, R_OK) == 0 && nsys_file_has_sqlite_magic(out)) {
    free(cache);
    return out; /* converted before */
  }
  char *nsys = nsys_find_nsys();
  if (!nsys) {
    nsys__fail_no_nsys(path, task);
    free(cache);
    free(out);
    return NULL;
  }
  /* unique per process and per conversion: two requests may convert at once */
  static atomic_uint seq;
  char *tmp = nsys_xasprintf("%s/rep-%016llx.%d.%u.tmp.sqlite", cache, (unsigned long long)h,
                             (int)getpid(), atomic_fetch_add(&seq, 1));
  bool ok = nsys__run_export(nsys, path, tmp, task);
  free(nsys);
  free(cache);
  if (ok) {
    chmod(tmp, 0600);
    if (rename(tmp, out) != 0) {
      nsys_task_fail(task, NSYS_E_IO, "cannot store the export of %s: %s", path, strerror(errno));
      unlink(tmp);
      ok = false;
    }
  }
  free(tmp);
  if (!ok) {
    free(out);
    return NULL;
  }
  return out;
}
