/* Index cache: a reopen loads the cache and gives the same index (same op
 * ids); corrupt, truncated and stale caches are detected and rebuilt; files
 * are 0600. Uses a real profile when available, else a generated one. */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "index/index_internal.h"
#include "index_test_util.h"

static char cache_dir[512];

static bool from_cache(const nsys_index *ix) { return nsys__priv(ix)->from_cache; }

static void same_index(const nsys_index *a, const nsys_index *b) {
  CHECK_EQ_I(a->ops.n, b->ops.n);
  CHECK_EQ_I(a->api.n, b->api.n);
  CHECK_EQ_I(a->nvtx.n, b->nvtx.n);
  CHECK_EQ_I(a->n_tracks, b->n_tracks);
  CHECK_EQ_I(a->n_threads, b->n_threads);
  CHECK_EQ_I(a->strings.count, b->strings.count);
  CHECK_EQ_I(a->span_start, b->span_start);
  CHECK_EQ_I(a->span_end, b->span_end);
  if (a->ops.n != b->ops.n || a->api.n != b->api.n || a->nvtx.n != b->nvtx.n) return;
  for (uint32_t i = 0; i < a->ops.n; i++) {
    if (a->ops.start[i] != b->ops.start[i] || a->ops.end[i] != b->ops.end[i] ||
        a->ops.rowid[i] != b->ops.rowid[i] || a->ops.api[i] != b->ops.api[i] ||
        a->ops.kind[i] != b->ops.kind[i] || a->op_next[i] != b->op_next[i] ||
        strcmp(nsys_strtab_get(&a->strings, a->ops.name[i]),
               nsys_strtab_get(&b->strings, b->ops.name[i])) != 0) {
      CHECK(!"op differs after reopen");
      return;
    }
  }
  for (uint32_t i = 0; i < a->api.n; i++)
    if (a->api.start[i] != b->api.start[i] || a->api.first_op[i] != b->api.first_op[i]) {
      CHECK(!"api differs after reopen");
      return;
    }
  for (uint32_t i = 0; i < a->nvtx.n; i++)
    if (a->nvtx.start[i] != b->nvtx.start[i] || a->nvtx.parent[i] != b->nvtx.parent[i] ||
        a->nvtx.depth[i] != b->nvtx.depth[i]) {
      CHECK(!"nvtx differs after reopen");
      return;
    }
  CHECK(memcmp(a->tracks, b->tracks, a->n_tracks * sizeof *a->tracks) == 0);
  CHECK_EQ_I(nsys_tl_track_count(a), nsys_tl_track_count(b));
}

static char *only_cache_file(void) {
  DIR *d = opendir(cache_dir);
  char *found = NULL;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "index-", 6) == 0) {
      free(found);
      found = nsys_xasprintf("%s/%s", cache_dir, e->d_name);
    }
  if (d) closedir(d);
  return found;
}

static void clear_cache(void) {
  char *f;
  while ((f = only_cache_file()) != NULL) {
    unlink(f);
    free(f);
  }
}

static void test_profile(const char *path) {
  clear_cache();
  t_profile a = t_open(path);
  const nsys_index *ia = t_index(&a);
  CHECK(ia && !from_cache(ia));
  char *file = only_cache_file();
  CHECK(file != NULL);
  if (!file || !ia) {
    t_close(&a);
    free(file);
    return;
  }
  struct stat st;
  CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
  /* reopen: from the cache, identical */
  t_profile b = t_open(path);
  const nsys_index *ib = t_index(&b);
  CHECK(ib && from_cache(ib));
  if (ib) same_index(ia, ib);
  t_close(&b);
  /* corrupt one payload byte: detected, rebuilt, same answer */
  {
    int fd = open(file, O_RDWR);
    off_t off = st.st_size - 3;
    unsigned char c = 0;
    CHECK(pread(fd, &c, 1, off) == 1);
    c ^= 0x5A;
    CHECK(pwrite(fd, &c, 1, off) == 1);
    close(fd);
    t_profile c2 = t_open(path);
    const nsys_index *ic = t_index(&c2);
    CHECK(ic && !from_cache(ic));
    if (ic) same_index(ia, ic);
    t_close(&c2);
  }
  /* truncated: detected, rebuilt */
  {
    CHECK(truncate(file, st.st_size / 2) == 0);
    t_profile c3 = t_open(path);
    const nsys_index *ic = t_index(&c3);
    CHECK(ic && !from_cache(ic));
    if (ic) same_index(ia, ic);
    t_close(&c3);
  }
  /* garbage header: detected */
  {
    FILE *f = fopen(file, "wb");
    fputs("not an index", f);
    fclose(f);
    t_profile c4 = t_open(path);
    const nsys_index *ic = t_index(&c4);
    CHECK(ic && !from_cache(ic));
    t_close(&c4);
  }
  free(file);
  t_close(&a);
}

/* stale: the same path with another mtime is a different key */
static void test_stale(const char *src) {
  clear_cache();
  char *copy = nsys_xasprintf("%s/stale.sqlite", cache_dir);
  char *cmd = nsys_xasprintf("cp '%s' '%s'", src, copy);
  CHECK(system(cmd) == 0);
  t_profile a = t_open(copy);
  const nsys_index *ia = t_index(&a);
  CHECK(ia && !from_cache(ia));
  t_close(&a);
  struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
  CHECK(utimensat(AT_FDCWD, copy, ts, 0) == 0);
  t_profile b = t_open(copy);
  const nsys_index *ib = t_index(&b);
  CHECK(ib && !from_cache(ib));
  t_close(&b);
  unlink(copy);
  free(cmd);
  free(copy);
}

int main(void) {
  unsetenv("NSYS_AI_NO_INDEX_CACHE");
  snprintf(cache_dir, sizeof cache_dir, "%s/nsys-ai-cache-test-%d",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  mkdir(cache_dir, 0700);
  setenv("NSYS_AI_CACHE_DIR", cache_dir, 1);
  const char *shared = getenv("NSYS_AI_SHARED");
  char *real = nsys_xasprintf("%s/profiles/nsys2026_2gpu_nccl_before.sqlite", shared ? shared : "../shared");
  char *tiny = nsys_xasprintf("%s/profiles/nsys2026_tiny.sqlite", shared ? shared : "../shared");
  if (access(real, R_OK) == 0) {
    test_profile(real);
    test_profile(tiny);
    test_stale(tiny);
  } else {
    printf("SKIP real-profile cache tests: %s is absent\n", real);
  }
  clear_cache();
  rmdir(cache_dir);
  free(real);
  free(tiny);
  if (t_failures) {
    fprintf(stderr, "%d check(s) failed\n", t_failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
