/* `nsys profile` → (QdstrmImporter) → `nsys export`, and the run spec's facts. */
#include "capture/nsys_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

extern char **environ;

void nsys_strv_push(nsys_strv *s, const char *str) {
  s->v = nsys_xrealloc(s->v, (size_t)(s->n + 2) * sizeof *s->v);
  s->v[s->n++] = nsys_xstrdup(str);
  s->v[s->n] = NULL;
}

void nsys_strv_free(nsys_strv *s) {
  for (int i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  s->v = NULL;
  s->n = 0;
}

/* The script a command runs: the first argument ending in .py (python
 * CMD.py, torchrun ... CMD.py), resolved against root; NULL when none. */
static char *nsys__script(const nsys_capture_spec *spec) {
  for (int i = 0; i < spec->n_cmd; i++) {
    const char *a = spec->cmd[i];
    size_t n = strlen(a);
    if (n > 3 && strcmp(a + n - 3, ".py") == 0)
      return a[0] == '/' ? nsys_xstrdup(a) : nsys_xasprintf("%s/%s", spec->root, a);
  }
  return NULL;
}

/* True when the script marks a capture range (first 16 MiB). */
static bool nsys__marks_range(const nsys_capture_spec *spec) {
  char *path = nsys__script(spec);
  if (!path) return false;
  FILE *f = fopen(path, "rb");
  free(path);
  if (!f) return false;
  static const size_t cap = 16u << 20;
  char *buf = nsys_xmalloc(cap + 1);
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  buf[n] = '\0';
  bool found = strstr(buf, "cudaProfilerStart") || strstr(buf, "cuda.profiler.start(") ||
               strstr(buf, "cuda.cudart().cudaProfilerStart");
  free(buf);
  return found;
}

void nsys_capture_flags(const nsys_capture_spec *spec, nsys_strv *out) {
  char *t = nsys_xasprintf("--trace=%s", spec->trace ? spec->trace : "cuda,nvtx,osrt");
  nsys_strv_push(out, t);
  free(t);
  nsys_strv_push(out, "--sample=none");
  nsys_strv_push(out, "--cpuctxsw=none");
  if (nsys__marks_range(spec)) {
    nsys_strv_push(out, "--capture-range=cudaProfilerApi");
    nsys_strv_push(out, "--capture-range-end=stop");
  }
  for (int i = 0; i < spec->n_extra; i++) nsys_strv_push(out, spec->extra[i]);
}

/* Spawns argv (cwd dir) with stdout and stderr on this process's stderr;
 * returns the wait status, or -1 with errno. */
static int nsys__spawn(char *const *argv, const char *dir) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
  /* In another directory through /bin/sh's cd: the server has threads, so it
   * never chdirs itself, and posix_spawn_file_actions_addchdir_np is newer
   * than the glibc 2.28 the self-contained binary targets. */
  char **run = (char **)argv;
  if (dir) {
    size_t n = 0;
    while (argv[n]) n++;
    run = nsys_xcalloc(n + 5, sizeof *run);
    run[0] = (char *)"/bin/sh";
    run[1] = (char *)"-c";
    run[2] = (char *)"cd -- \"$0\" && exec \"$@\"";
    run[3] = (char *)dir;
    for (size_t i = 0; i < n; i++) run[4 + i] = argv[i];
  }
  pid_t pid;
  int rc = posix_spawnp(&pid, run[0], &fa, NULL, run, environ);
  if (run != (char **)argv) free(run);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

static bool nsys__ok(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

static bool nsys__exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *nsys__status_text(int status) {
  if (status < 0) return nsys_xasprintf("could not start: %s", strerror(errno));
  if (WIFEXITED(status)) return nsys_xasprintf("exit status %d", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return nsys_xasprintf("killed by signal %d", WTERMSIG(status));
  return nsys_xstrdup("stopped");
}

char *nsys_capture_find_importer(const char *nsys) {
  const char *env = getenv("NSYS_AI_QDSTRM_IMPORTER");
  if (env && *env) return access(env, X_OK) == 0 ? nsys_xstrdup(env) : NULL;
  char *real = nsys ? realpath(nsys, NULL) : NULL;
  char *cands[4] = {0};
  int n = 0;
  if (real) {
    char *dir = dirname(real); /* .../bin or .../target-linux-x64 */
    cands[n++] = nsys_xasprintf("%s/QdstrmImporter", dir);
    cands[n++] = nsys_xasprintf("%s/../host-linux-x64/QdstrmImporter", dir);
    cands[n++] = nsys_xasprintf("%s/../lib/nsight-systems/host-linux-x64/QdstrmImporter", dir);
  }
  cands[n++] = nsys_xstrdup("/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter");
  char *found = NULL;
  for (int i = 0; i < n; i++) {
    if (!found && nsys__exists(cands[i]) && access(cands[i], X_OK) == 0) found = realpath(cands[i], NULL);
    free(cands[i]);
  }
  free(real);
  return found;
}

bool nsys_capture_run(const char *nsys, const nsys_strv *flags, const nsys_capture_spec *spec, const char *out_dir,
                      char **sqlite_out, nsys_task *t) {
  *sqlite_out = NULL;
  if (spec->n_cmd < 1) return nsys_task_fail(t, NSYS_E_INVALID_PARAMS, "no command to profile");
  char *base = nsys_xasprintf("%s/report", out_dir);
  char *rep = nsys_xasprintf("%s.nsys-rep", base), *qd = nsys_xasprintf("%s.qdstrm", base);
  char *sq = nsys_xasprintf("%s.sqlite", base);
  nsys_strv argv = {0};
  nsys_strv_push(&argv, nsys);
  nsys_strv_push(&argv, "profile");
  for (int i = 0; i < flags->n; i++) nsys_strv_push(&argv, flags->v[i]);
  nsys_strv_push(&argv, "--output");
  nsys_strv_push(&argv, base);
  nsys_strv_push(&argv, "--force-overwrite=true");
  for (int i = 0; i < spec->n_cmd; i++) nsys_strv_push(&argv, spec->cmd[i]);
  bool ok = false;
  int st = nsys__spawn(argv.v, spec->root);
  nsys_strv_free(&argv);
  bool have_rep = nsys__exists(rep), have_qd = nsys__exists(qd);
  if (!have_rep && !have_qd) {
    char *why = nsys__status_text(st);
    nsys_task_fail(t, NSYS_E_EXPORT_FAILED,
                   "nsys profile wrote no report (%s): see its output above; check the command runs on its own",
                   why);
    free(why);
    goto done;
  }
  if (!have_rep) { /* nsys could not run its importer (Debian's package): run it */
    char *imp = nsys_capture_find_importer(nsys);
    if (!imp) {
      nsys_task_fail(t, NSYS_E_NSYS_UNAVAILABLE,
                     "nsys left %s but QdstrmImporter was not found beside it; set NSYS_AI_QDSTRM_IMPORTER", qd);
      goto done;
    }
    char *iargv[] = {imp, "-i", qd, NULL};
    int ist = nsys__spawn(iargv, out_dir);
    free(imp);
    if (!nsys__ok(ist) || !nsys__exists(rep)) {
      char *why = nsys__status_text(ist);
      nsys_task_fail(t, NSYS_E_EXPORT_FAILED, "QdstrmImporter could not import %s (%s)", qd, why);
      free(why);
      goto done;
    }
    unlink(qd);
  }
  char *eargv[] = {(char *)nsys, "export", "--type=sqlite", "--force-overwrite=true", "--output", sq, rep, NULL};
  int est = nsys__spawn(eargv, out_dir);
  if (!nsys__ok(est) || !nsys__exists(sq)) {
    char *why = nsys__status_text(est);
    nsys_task_fail(t, NSYS_E_EXPORT_FAILED, "nsys export of %s failed (%s)", rep, why);
    free(why);
    goto done;
  }
  if (!nsys__ok(st)) { /* a report despite a failing program: keep it, say so on stderr */
    char *why = nsys__status_text(st);
    fprintf(stderr, "nsys-ai: nsys profile ended with %s; the report was kept\n", why);
    free(why);
  }
  *sqlite_out = sq;
  sq = NULL;
  ok = true;
done:
  free(base), free(rep), free(qd), free(sq);
  return ok;
}

/* Runs `git -C root ARGS` and returns its stdout (trimmed), or NULL. */
static char *nsys__git(const char *root, const char *args) {
  char *q = nsys_xstrdup(root);
  for (char *c = q; *c; c++)
    if (*c == '\'') { /* a quote in the path: give up rather than quote */
      free(q);
      return NULL;
    }
  char *cmd = nsys_xasprintf("git -C '%s' %s 2>/dev/null", q, args);
  free(q);
  FILE *p = popen(cmd, "r");
  free(cmd);
  if (!p) return NULL;
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) nsys_strbuf_append(&b, buf, n);
  int st = pclose(p);
  char *s = nsys_strbuf_steal(&b);
  if (!nsys__ok(st)) {
    free(s);
    return NULL;
  }
  size_t len = strlen(s);
  while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' ')) s[--len] = '\0';
  return s;
}

void nsys_capture_git(const char *root, char **commit, int *dirty) {
  *commit = nsys__git(root, "rev-parse HEAD");
  *dirty = -1;
  if (!*commit) return;
  char *st = nsys__git(root, "status --porcelain --untracked-files=no");
  if (st) *dirty = st[0] != '\0';
  free(st);
}

static int nsys__cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void nsys_capture_env(nsys_strv *out) {
  static const char *const prefixes[] = {"CUDA_", "NCCL_", "TORCH_", "PYTORCH_", "NVIDIA_"};
  static const char *const names[] = {"OMP_NUM_THREADS", "WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR"};
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    size_t k = (size_t)(eq - *e);
    bool keep = false;
    for (size_t i = 0; i < NSYS_ARRAY_LEN(prefixes) && !keep; i++)
      keep = strncmp(*e, prefixes[i], strlen(prefixes[i])) == 0;
    for (size_t i = 0; i < NSYS_ARRAY_LEN(names) && !keep; i++)
      keep = strlen(names[i]) == k && strncmp(*e, names[i], k) == 0;
    if (keep) nsys_strv_push(out, *e);
  }
  if (out->n > 1) qsort(out->v, (size_t)out->n, sizeof *out->v, nsys__cmp_str);
}
