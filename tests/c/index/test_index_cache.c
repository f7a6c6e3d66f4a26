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

typedef struct {
  nsys_tl_bucket *b;
  uint32_t n, cap;
} buckets;

static void collect(void *ctx, const nsys_tl_bucket *bk) {
  buckets *c = ctx;
  if (c->n == c->cap) c->b = nsys_xrealloc(c->b, (c->cap = c->cap ? c->cap * 2 : 64) * sizeof *c->b);
  c->b[c->n++] = *bk;
}

static bool same_series(const nsys__series *x, const nsys__series *y) {
  if (x->n != y->n || x->first != y->first || x->n_blocks != y->n_blocks || x->n_super != y->n_super ||
      x->start != y->start || x->end != y->end)
    return false;
  for (uint32_t i = 0; i < x->n; i++)
    if ((x->idx ? x->idx[i] : x->first + i) != (y->idx ? y->idx[i] : y->first + i)) return false;
  return memcmp(x->blk_union, y->blk_union, (x->n_blocks + 1) * 8) == 0 &&
         memcmp(x->blk_maxend, y->blk_maxend, (x->n_blocks + 1) * 8) == 0 &&
         memcmp(x->blk_longest, y->blk_longest, x->n_blocks * 4) == 0 &&
         memcmp(x->sup_longest, y->sup_longest, x->n_super * 4) == 0;
}

/* What nsys__index_derive computes (the cache stores it): equal after a
 * reopen. b's series point into b's arrays, so compare them through a's
 * after swapping the base pointers. */
static void same_derived(const nsys_index *a, const nsys_index *b) {
  const nsys__index_priv *pa = nsys__priv(a), *pb = nsys__priv(b);
  /* display names, per op */
  for (uint32_t i = 0; i < a->ops.n && i < b->ops.n; i++)
    if (strcmp(nsys_strtab_get(&a->strings, nsys_op_display_name(a, i)),
               nsys_strtab_get(&b->strings, nsys_op_display_name(b, i))) != 0) {
      CHECK(!"display name differs after reopen");
      break;
    }
  CHECK_EQ(a->n_display, b->n_display);
  /* NVTX rows, projection */
  CHECK_EQ(pa->n_depth_rows, pb->n_depth_rows);
  CHECK_EQ(pa->n_proj, pb->n_proj);
  CHECK_EQ(pa->n_proj_rows, pb->n_proj_rows);
  if (pa->n_depth_rows == pb->n_depth_rows && a->nvtx.n == b->nvtx.n && a->n_threads == b->n_threads &&
      pa->n_depth_rows) {
    CHECK(memcmp(pa->nvtx_by_depth, pb->nvtx_by_depth, a->nvtx.n * 4) == 0);
    CHECK(memcmp(pa->thread_depth_first, pb->thread_depth_first, (a->n_threads + 1) * 4) == 0);
    CHECK(memcmp(pa->depth_row_first, pb->depth_row_first, pa->n_depth_rows * 4) == 0);
    CHECK(memcmp(pa->depth_row_count, pb->depth_row_count, pa->n_depth_rows * 4) == 0);
  }
  if (pa->n_proj == pb->n_proj && pa->n_proj_rows == pb->n_proj_rows) {
    CHECK(memcmp(pa->proj_start, pb->proj_start, pa->n_proj * 8) == 0);
    CHECK(memcmp(pa->proj_end, pb->proj_end, pa->n_proj * 8) == 0);
    CHECK(memcmp(pa->proj_nvtx, pb->proj_nvtx, pa->n_proj * 4) == 0);
    if (pa->n_proj_rows)
      CHECK(memcmp(pa->proj_rows, pb->proj_rows, pa->n_proj_rows * sizeof *pa->proj_rows) == 0);
  }
  /* every series, with b's table pointers mapped onto a's arrays */
  uint32_t nt = nsys_tl_track_count(a);
  if (nt != nsys_tl_track_count(b)) return;
  for (uint32_t t = 0; t < nt; t++) {
    const nsys_tl_track *x = nsys_tl_track_at(a, t), *y = nsys_tl_track_at(b, t);
    CHECK(strcmp(x->id, y->id) == 0 && x->kind == y->kind && x->ref == y->ref && x->count == y->count);
    const nsys__series *sa = NULL, *sb = NULL;
    switch (x->kind) {
    case NSYS_TL_GPU: sa = &pa->gpu_series[x->ref], sb = &pb->gpu_series[y->ref]; break;
    case NSYS_TL_API: sa = &pa->api_series[x->ref], sb = &pb->api_series[y->ref]; break;
    case NSYS_TL_NVTX: sa = &pa->nvtx_series[x->ref], sb = &pb->nvtx_series[y->ref]; break;
    case NSYS_TL_PROJ: sa = &pa->proj_series[x->ref], sb = &pb->proj_series[y->ref]; break;
    }
    nsys__series s2 = *sb;
    const int64_t *base_a[] = {a->ops.start, a->api.start, a->nvtx.start, pa->proj_start};
    const int64_t *base_b[] = {b->ops.start, b->api.start, b->nvtx.start, pb->proj_start};
    const int64_t *end_a[] = {a->ops.end, a->api.end, a->nvtx.end, pa->proj_end};
    for (int k = 0; k < 4; k++)
      if (s2.start == base_b[k]) s2.start = base_a[k], s2.end = end_a[k];
    if (s2.idx) s2.idx = pa->nvtx_by_depth + (sb->idx - pb->nvtx_by_depth);
    if (!same_series(sa, &s2)) {
      CHECK(!"series differs after reopen");
      fprintf(stderr, "  track %s\n", x->id);
    }
    /* and zoom answers at a few resolutions */
    int64_t span = a->span_end - a->span_start;
    for (int64_t res = 1; res <= span && res > 0; res *= 64) {
      uint32_t nb = (uint32_t)NSYS_MIN(span / res + 1, (int64_t)4096);
      buckets ba = {0}, bb = {0};
      nsys_tl_buckets(a, t, a->span_start, res, nb, collect, &ba);
      nsys_tl_buckets(b, t, b->span_start, res, nb, collect, &bb);
      bool same = ba.n == bb.n;
      for (uint32_t k = 0; same && k < ba.n; k++)
        same = ba.b[k].start == bb.b[k].start && ba.b[k].end == bb.b[k].end && ba.b[k].count == bb.b[k].count &&
               ba.b[k].busy_ns == bb.b[k].busy_ns && ba.b[k].longest == bb.b[k].longest &&
               ba.b[k].longest_dur == bb.b[k].longest_dur;
      if (!same) CHECK(!"buckets differ after reopen");
      free(ba.b);
      free(bb.b);
    }
  }
}

static void same_index(const nsys_index *a, const nsys_index *b) {
  CHECK_EQ(a->ops.n, b->ops.n);
  CHECK_EQ(a->api.n, b->api.n);
  CHECK_EQ(a->nvtx.n, b->nvtx.n);
  CHECK_EQ(a->n_tracks, b->n_tracks);
  CHECK_EQ(a->n_threads, b->n_threads);
  CHECK_EQ(a->strings.count, b->strings.count);
  CHECK_EQ(a->span_start, b->span_start);
  CHECK_EQ(a->span_end, b->span_end);
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
  CHECK_EQ(nsys_tl_track_count(a), nsys_tl_track_count(b));
  same_derived(a, b);
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

static unsigned char *slurp(const char *file, size_t *n) { return t_slurp(file, n); }

static void spit(const char *file, const unsigned char *buf, size_t n) {
  FILE *f = fopen(file, "wb");
  CHECK(f && fwrite(buf, 1, n, f) == n);
  if (f) fclose(f);
}

/* Sections whose content the loader checks (indices, lengths, row tables):
 * damaged, with the checksum rewritten to match, they must be refused (and
 * the index rebuilt, the same), never followed. */
static const char *const checked_sections[] = {
    "strings.lens", "tracks", "ops.name", "ops.full_name", "ops.track", "ops.api", "op_next", "ops.kind", "threads",
    "api.name", "api.thread", "api.first_op", "nvtx.name", "nvtx.domain", "nvtx.thread", "nvtx.parent",
    "nvtx.depth", "proj.rows", "proj.nvtx", "display.short", "nvtx_rows.thread_first", "nvtx_rows.first",
    "nvtx_rows.count", "nvtx_rows.ranges", "series.longest", "series.super_longest",
    /* times out of the kept range (index_bounds.h), unions and running maxima out of theirs */
    "ops.start", "ops.end", "api.start", "api.end", "nvtx.start", "nvtx.end", "proj.start", "proj.end", "series.union",
    "series.maxend"};

static void damaged_sections(const char *path, const char *file, const nsys_index *ia) {
  size_t n = 0;
  unsigned char *orig = slurp(file, &n);
  if (!orig) return;
  /* resealing an intact file keeps it valid */
  CHECK(nsys__cache_reseal(file));
  {
    t_profile b = t_open(path);
    const nsys_index *ib = t_index(&b);
    CHECK(ib && from_cache(ib));
    t_close(&b);
  }
  uint32_t seen = 0, n_sections = 0;
  uint64_t off, bytes;
  const char *name;
  while ((name = nsys__cache_section(file, n_sections, &off, &bytes)) != NULL) {
    n_sections++;
    bool checked = false;
    for (size_t i = 0; i < NSYS_ARRAY_LEN(checked_sections); i++) checked |= strcmp(name, checked_sections[i]) == 0;
    if (!checked || !bytes) continue;
    seen++;
    unsigned char *bad = nsys_xmalloc(n);
    memcpy(bad, orig, n);
    memset(bad + off, 0x7F, NSYS_MIN(bytes, (uint64_t)64));
    spit(file, bad, n);
    free(bad);
    CHECK(nsys__cache_reseal(file));
    t_profile b = t_open(path);
    const nsys_index *ib = t_index(&b);
    if (!(ib && !from_cache(ib))) {
      CHECK(!"a damaged section was accepted");
      fprintf(stderr, "  section %s\n", name);
    }
    if (ib) same_index(ia, ib);
    t_close(&b);
    spit(file, orig, n);
  }
  CHECK_EQ(n_sections, 40);
  CHECK(seen >= 10); /* a small profile may have no projection, no NVTX */
  printf("%s: %u damaged sections refused\n", path, seen);
  free(orig);
}

/* Links that would make a walk loop (a range enclosing itself, an op
 * linked back to itself or to an earlier op) are refused too: the values
 * are in range, only their direction is wrong. */
static void write_i32(const char *file, const char *section, uint32_t element, int32_t value) {
  uint64_t off = 0, bytes = 0;
  const char *name;
  for (uint32_t k = 0; (name = nsys__cache_section(file, k, &off, &bytes)) != NULL; k++)
    if (strcmp(name, section) == 0) break;
  CHECK(name != NULL && (uint64_t)(element + 1) * 4 <= bytes);
  if (!name || (uint64_t)(element + 1) * 4 > bytes) return;
  int fd = open(file, O_RDWR);
  CHECK(fd >= 0 && pwrite(fd, &value, 4, (off_t)(off + element * 4)) == 4);
  if (fd >= 0) close(fd);
  CHECK(nsys__cache_reseal(file));
}

static void cyclic_links(const char *path, const char *file, const nsys_index *ia) {
  size_t n = 0;
  unsigned char *orig = slurp(file, &n);
  if (!orig) return;
  struct {
    const char *section;
    uint32_t element;
    int32_t value;
    uint32_t need; /* elements the array must have */
  } cases[] = {
      {"nvtx.parent", 1, 1, ia->nvtx.n},  /* encloses itself */
      {"nvtx.parent", 0, 1, ia->nvtx.n},  /* enclosed by a later range */
      {"op_next", 0, 0, ia->ops.n},       /* linked to itself */
      {"op_next", 1, 0, ia->ops.n},       /* linked back */
  };
  for (size_t c = 0; c < NSYS_ARRAY_LEN(cases); c++) {
    if (cases[c].need < 2) continue;
    write_i32(file, cases[c].section, cases[c].element, cases[c].value);
    t_profile b = t_open(path);
    const nsys_index *ib = t_index(&b);
    if (!(ib && !from_cache(ib))) {
      CHECK(!"a cyclic link was accepted");
      fprintf(stderr, "  %s[%u] = %d\n", cases[c].section, cases[c].element, cases[c].value);
    }
    if (ib) same_index(ia, ib);
    t_close(&b);
    spit(file, orig, n);
  }
  free(orig);
}

/* a cache of the previous format (version 4) is not read, and is replaced */
static void old_format(const char *path, const char *file, const nsys_index *ia) {
  int fd = open(file, O_RDWR);
  uint32_t v = 4;
  CHECK(fd >= 0 && pwrite(fd, &v, 4, 8) == 4);
  if (fd >= 0) close(fd);
  t_profile b = t_open(path);
  const nsys_index *ib = t_index(&b);
  CHECK(ib && !from_cache(ib));
  if (ib) same_index(ia, ib);
  t_close(&b);
  t_profile c = t_open(path);
  const nsys_index *ic = t_index(&c);
  CHECK(ic && from_cache(ic));
  t_close(&c);
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
  /* reopens with the check split over two threads, and with one thread */
  {
    setenv("NSYS_AI_CACHE_SPLIT_ANY", "1", 1);
    t_profile b2 = t_open(path);
    const nsys_index *ib2 = t_index(&b2);
    CHECK(ib2 && from_cache(ib2));
    if (ib2) same_index(ia, ib2);
    t_close(&b2);
    unsetenv("NSYS_AI_CACHE_SPLIT_ANY");
    setenv("NSYS_AI_DERIVE_SERIAL", "1", 1);
    t_profile b3 = t_open(path);
    const nsys_index *ib3 = t_index(&b3);
    CHECK(ib3 && from_cache(ib3));
    t_close(&b3);
    unsetenv("NSYS_AI_DERIVE_SERIAL");
  }
  damaged_sections(path, file, ia);
  cyclic_links(path, file, ia);
  old_format(path, file, ia);
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

/* nsys_index_get publishes a fresh index and saves it in the background: the
 * save still completes when the profile is released at once (the saver holds
 * its own reference; under ASan a use after free would show), and the next
 * open maps it. */
static void test_background_save(const char *path) {
  clear_cache();
  t_profile a = t_open(path);
  nsys_task task;
  nsys_task_init(&task);
  const nsys_index *ia = nsys_index_get(a.p, &task);
  CHECK(ia && !from_cache(ia));
  uint32_t n_ops = ia ? ia->ops.n : 0;
  t_close(&a); /* possibly before the saver ran */
  nsys_index_wait_saves();
  char *file = only_cache_file();
  CHECK(file != NULL);
  free(file);
  t_profile b = t_open(path);
  const nsys_index *ib = t_index(&b);
  CHECK(ib && from_cache(ib) && ib->ops.n == n_ops);
  t_close(&b);
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
    test_background_save(real);
  } else {
    nsys_check_skip("real-profile cache tests: %s is absent", real);
  }
  clear_cache();
  rmdir(cache_dir);
  free(real);
  free(tiny);
  return nsys_check_done("index_cache");
}
