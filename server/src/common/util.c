#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static void nsys__oom(size_t n) {
  fprintf(stderr, "nsys-ai: out of memory allocating %zu bytes\n", n);
  abort();
}

void *nsys_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) nsys__oom(n);
  return p;
}

void *nsys_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) nsys__oom(n * size);
  return p;
}

void *nsys_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) nsys__oom(n);
  return q;
}

char *nsys_xstrdup(const char *s) { return nsys_xstrndup(s, strlen(s)); }

char *nsys_xstrndup(const char *s, size_t n) {
  char *p = nsys_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *nsys_xasprintf(const char *fmt, ...) {
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  va_list ap;
  va_start(ap, fmt);
  nsys_strbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  return nsys_strbuf_steal(&b);
}

void nsys_strbuf_init(nsys_strbuf *b) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
}

void nsys_strbuf_free(nsys_strbuf *b) {
  free(b->data);
  nsys_strbuf_init(b);
}

void nsys_strbuf_reserve(nsys_strbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  b->data = nsys_xrealloc(b->data, cap);
  b->cap = cap;
}

void nsys_strbuf_append(nsys_strbuf *b, const char *s, size_t n) {
  nsys_strbuf_reserve(b, n);
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void nsys_strbuf_puts(nsys_strbuf *b, const char *s) { nsys_strbuf_append(b, s, strlen(s)); }

void nsys_strbuf_putc(nsys_strbuf *b, char c) { nsys_strbuf_append(b, &c, 1); }

void nsys_strbuf_vprintf(nsys_strbuf *b, const char *fmt, va_list ap) {
  /* Try the spare capacity first; grow and format again only when it is short. */
  nsys_strbuf_reserve(b, 64);
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = b->cap - b->len;
  int n = vsnprintf(b->data + b->len, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->data[b->len] = '\0';
    return;
  }
  if ((size_t)n >= room) {
    nsys_strbuf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  }
  b->len += (size_t)n;
}

void nsys_strbuf_printf(nsys_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nsys_strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *nsys_strbuf_steal(nsys_strbuf *b) {
  char *p = b->data ? b->data : nsys_xstrdup("");
  nsys_strbuf_init(b);
  return p;
}

int64_t nsys_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int nsys__mkdir_p(char *path, mode_t mode) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, mode) != 0 && errno != EEXIST) {
      *p = '/';
      return -1;
    }
    *p = '/';
  }
  if (mkdir(path, mode) != 0 && errno != EEXIST) return -1;
  return 0;
}

char *nsys_cache_dir(void) {
  const char *env = getenv("NSYS_AI_CACHE_DIR");
  char *dir;
  if (env && *env) {
    dir = nsys_xstrdup(env);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) {
      dir = nsys_xasprintf("%s/nsys-ai", xdg);
    } else {
      const char *home = getenv("HOME");
      if (!home || !*home) return NULL;
      dir = nsys_xasprintf("%s/.cache/nsys-ai", home);
    }
  }
  if (nsys__mkdir_p(dir, 0700) != 0) {
    free(dir);
    return NULL;
  }
  chmod(dir, 0700); /* the leaf is ours: keep it private even if it existed */
  return dir;
}

void nsys_fmt_duration(char *out, size_t cap, int64_t ns) {
  double v = (double)ns;
  double a = v < 0 ? -v : v;
  if (a >= 1e9) snprintf(out, cap, "%.3g s", v / 1e9);
  else if (a >= 1e6) snprintf(out, cap, "%.3g ms", v / 1e6);
  else if (a >= 1e3) snprintf(out, cap, "%.3g us", v / 1e3);
  else snprintf(out, cap, "%lld ns", (long long)ns);
}

void nsys_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("nsys-ai: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

uint64_t nsys_fnv1a(const void *data, size_t n, uint64_t h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void nsys_thread_background(void) {
#ifdef __linux__
  const char *v = getenv("NSYS_AI_INDEX_SAVE_NICE");
  int nice = v && *v ? atoi(v) : 10;
  id_t tid = (id_t)syscall(SYS_gettid);
  if (nice > 0 && getpriority(PRIO_PROCESS, tid) < nice) (void)setpriority(PRIO_PROCESS, tid, nice);
#endif
}

void nsys_tune_malloc(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}
