/* Small shared helpers: allocation that aborts on OOM, a growable string
 * buffer, monotonic time, the cache directory. No JSON and no SQLite here. */
#ifndef NSYS_UTIL_H
#define NSYS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSYS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NSYS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NSYS_MAX(a, b) ((a) > (b) ? (a) : (b))

void *nsys_xmalloc(size_t n);
void *nsys_xcalloc(size_t n, size_t size);
void *nsys_xrealloc(void *p, size_t n);
char *nsys_xstrdup(const char *s);
char *nsys_xstrndup(const char *s, size_t n);
char *nsys_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable byte buffer, always NUL-terminated. */
typedef struct {
  char *data;
  size_t len;
  size_t cap;
} nsys_strbuf;

void nsys_strbuf_init(nsys_strbuf *b);
void nsys_strbuf_free(nsys_strbuf *b);
void nsys_strbuf_reserve(nsys_strbuf *b, size_t extra);
void nsys_strbuf_append(nsys_strbuf *b, const char *s, size_t n);
void nsys_strbuf_puts(nsys_strbuf *b, const char *s);
void nsys_strbuf_putc(nsys_strbuf *b, char c);
void nsys_strbuf_printf(nsys_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void nsys_strbuf_vprintf(nsys_strbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
char *nsys_strbuf_steal(nsys_strbuf *b); /* caller frees; buffer is reset */

/* Profile clocks (ns) are kept within [NSYS_TIME_MIN, NSYS_TIME_MAX], the
 * protocol's time range (+-2^61 ns, about 73 years either side of the clock's
 * zero; epoch clocks of today are ~2^60.6): the index clamps a time outside
 * it as it reads a row (a hostile or broken export), so the difference of
 * any two times fits in an int64; and it refuses an export whose op, API
 * call or NVTX range durations add up to more than NSYS_TOTAL_MAX (2^61 ns
 * each: index/index_bounds.h), so that no sum of durations, nor a time plus
 * such a sum, overflows. */
#define NSYS_TIME_MIN (-((int64_t)1 << 61))
#define NSYS_TIME_MAX (((int64_t)1 << 61) - 1)
#define NSYS_TOTAL_MAX ((int64_t)1 << 61)
static inline int64_t nsys_time_clamp(int64_t t) {
  return t < NSYS_TIME_MIN ? NSYS_TIME_MIN : t > NSYS_TIME_MAX ? NSYS_TIME_MAX : t;
}

/* Monotonic clock in nanoseconds. */
int64_t nsys_now_ns(void);

/* Cache directory: $NSYS_AI_CACHE_DIR, else $XDG_CACHE_HOME/nsys-ai, else
 * ~/.cache/nsys-ai. Created with mode 0700 (parents as needed). Returns a
 * malloc'd path or NULL when it cannot be created. */
char *nsys_cache_dir(void);
/* Keeps per-request buffers of up to 64 MB (zoom answers are a few MB, built
 * and freed per request) in the heap instead of fresh mmaps, which cost one
 * page fault per 4 KiB every time. Called once at start by the server. */
void nsys_tune_malloc(void);
/* Lowers the calling thread's priority for work no answer waits for (the
 * index cache saver, the server's warm-up): on a busy machine or 2 cores the
 * requests take the CPU first. Linux: the thread's own nice value,
 * $NSYS_AI_INDEX_SAVE_NICE (default 10; 0 keeps the process's). */
void nsys_thread_background(void);
/* FNV-1a over n bytes, continuing from h (start with NSYS_FNV_SEED). */
#define NSYS_FNV_SEED 1469598103934665603ULL
uint64_t nsys_fnv1a(const void *data, size_t n, uint64_t h);

/* Format a nanosecond duration for humans: "12.3 ms", "840 ns", "1.25 s". */
void nsys_fmt_duration(char *out, size_t cap, int64_t ns);

/* Logging to stderr (never stdout: stdout carries the protocol). */
void nsys_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
