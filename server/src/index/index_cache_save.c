/* Writing the index cache (format: index_cache_format.h): the payload in
 * 2 MiB writes at 2 MiB offsets to a unique temporary name, then renamed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cache_tmp.h"
#include "common/util.h"
#include "index/index_cache_format.h"
#include "index/index_internal.h"
#include "profile/profile.h"

/* Written in 2 MiB writes at 2 MiB-aligned offsets (the header is the start
 * of the first): the page cache then holds the file in 2 MiB folios where the
 * file system allows it, which a mapping maps with one PMD each instead of
 * 512 page table entries; a reopen's page faults nearly vanish. */
#define NSYS__WBUF_WORDS (2u << 20) / 8

typedef struct {
  int fd;
  nsys__sum sum;
  uint64_t *buf;
  size_t len;    /* bytes in buf */
  size_t skip;   /* leading bytes of buf that are not payload (the header) */
  uint64_t size; /* payload bytes written */
  bool ok;
} nsys__writer;

static void nsys__flush(nsys__writer *w) {
  /* len is a multiple of 8: the buffer fills in whole words, the end is padded */
  nsys__sum_words(&w->sum, w->buf + w->skip / 8, (w->len - w->skip) / 8);
  const char *c = (const char *)w->buf;
  size_t left = w->len;
  while (w->ok && left) {
    ssize_t k = write(w->fd, c, left);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) w->ok = false;
    else c += k, left -= (size_t)k;
  }
  w->size += w->len - w->skip;
  w->len = w->skip = 0;
}

static void nsys__put_raw(nsys__writer *w, const void *data, size_t n) {
  const unsigned char *c = data;
  while (n) {
    size_t k = NSYS_MIN(n, NSYS__WBUF_WORDS * 8 - w->len);
    memcpy((unsigned char *)w->buf + w->len, c, k);
    w->len += k, c += k, n -= k;
    if (w->len == NSYS__WBUF_WORDS * 8) nsys__flush(w);
  }
}

static void nsys__pad(nsys__writer *w) {
  static const unsigned char zeros[8] = {0};
  if (w->len % 8) nsys__put_raw(w, zeros, 8 - w->len % 8);
}

static void nsys__put(nsys__writer *w, const void *data, size_t n) {
  nsys__put_raw(w, data, n);
  nsys__pad(w);
}

void nsys__cache_save(const nsys_index *ix, nsys_profile *p) {
  const nsys__index_priv *pv = nsys__priv(ix);
  if (!pv || !pv->gpu_series || !pv->api_series || !pv->nvtx_series || !pv->proj_series ||
      !pv->thread_depth_first)
    return; /* not derived: nothing consistent to save */
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "index", &path_hash);
  if (!path) return;
  char *tmp = nsys_cache_tmp_name(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    free(tmp);
    free(path);
    return;
  }
  nsys__cache_header h;
  memset(&h, 0, sizeof h);
  /* the header's place is zeros until the end */
  nsys__writer w = {fd, {{0}, {0}, 0}, nsys_xcalloc(NSYS__WBUF_WORDS, 8), sizeof h, sizeof h, 0, true};
  const nsys_strtab *st = &ix->strings;
  uint64_t sbytes = 0;
  for (uint32_t i = 0; i < st->count; i++) sbytes += st->lens[i] + 1;
  nsys__put(&w, st->lens, st->count * sizeof(uint32_t));
  for (uint32_t i = 0; i < st->count; i++) nsys__put_raw(&w, st->strs[i], st->lens[i] + 1);
  nsys__pad(&w);
  size_t no = ix->ops.n, na = ix->api.n, nv = ix->nvtx.n;
  nsys__put(&w, ix->tracks, ix->n_tracks * sizeof *ix->tracks);
  nsys__put(&w, ix->ops.start, no * 8);
  nsys__put(&w, ix->ops.end, no * 8);
  nsys__put(&w, ix->ops.rowid, no * 8);
  nsys__put(&w, ix->ops.name, no * 4);
  nsys__put(&w, ix->ops.full_name, no * 4);
  nsys__put(&w, ix->ops.track, no * 4);
  nsys__put(&w, ix->ops.api, no * 4);
  nsys__put(&w, ix->op_next, no * 4);
  nsys__put(&w, ix->ops.kind, no);
  nsys__put(&w, ix->threads, ix->n_threads * sizeof *ix->threads);
  nsys__put(&w, ix->api.start, na * 8);
  nsys__put(&w, ix->api.end, na * 8);
  nsys__put(&w, ix->api.correlation, na * 8);
  nsys__put(&w, ix->api.rowid, na * 8);
  nsys__put(&w, ix->api.name, na * 4);
  nsys__put(&w, ix->api.thread, na * 4);
  nsys__put(&w, ix->api.first_op, na * 4);
  nsys__put(&w, ix->nvtx.start, nv * 8);
  nsys__put(&w, ix->nvtx.end, nv * 8);
  nsys__put(&w, ix->nvtx.name, nv * 4);
  nsys__put(&w, ix->nvtx.domain, nv * 4);
  nsys__put(&w, ix->nvtx.thread, nv * 4);
  nsys__put(&w, ix->nvtx.parent, nv * 4);
  nsys__put(&w, ix->nvtx.depth, nv * 2);
  size_t np = pv->n_proj;
  nsys__put(&w, pv->proj_rows, pv->n_proj_rows * sizeof *pv->proj_rows);
  nsys__put(&w, pv->proj_start, np * 8);
  nsys__put(&w, pv->proj_end, np * 8);
  nsys__put(&w, pv->proj_nvtx, np * 4);
  {
    uint32_t *short_of = nsys__display_short_names(ix, ix->n_display);
    nsys__put(&w, short_of, (size_t)ix->n_display * 4);
    free(short_of);
  }
  nsys__put(&w, pv->thread_depth_first, ((size_t)ix->n_threads + 1) * 4);
  nsys__put(&w, pv->depth_row_first, (size_t)pv->n_depth_rows * 4);
  nsys__put(&w, pv->depth_row_count, (size_t)pv->n_depth_rows * 4);
  nsys__put(&w, pv->nvtx_by_depth, nv * 4);
  uint32_t ns = nsys__n_series(ix);
  uint64_t n_blocks = 0, n_super = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const nsys__series *s = nsys__series_at(ix, i);
    n_blocks += s->n_blocks;
    n_super += s->n_super;
    nsys__put_raw(&w, s->blk_union, ((size_t)s->n_blocks + 1) * 8);
  }
  for (uint32_t i = 0; i < ns; i++) {
    const nsys__series *s = nsys__series_at(ix, i);
    nsys__put_raw(&w, s->blk_maxend, ((size_t)s->n_blocks + 1) * 8);
  }
  for (uint32_t i = 0; i < ns; i++) {
    const nsys__series *s = nsys__series_at(ix, i);
    nsys__put_raw(&w, s->blk_longest, (size_t)s->n_blocks * 4);
  }
  nsys__pad(&w);
  for (uint32_t i = 0; i < ns; i++) {
    const nsys__series *s = nsys__series_at(ix, i);
    nsys__put_raw(&w, s->sup_longest, (size_t)s->n_super * 4);
  }
  nsys__pad(&w);
  if (w.len) nsys__flush(&w);
  free(w.buf);
  memcpy(h.magic, NSYS__CACHE_MAGIC, 8);
  h.version = NSYS__CACHE_VERSION;
  h.header_size = sizeof h;
  h.sizeof_track = sizeof(nsys_gpu_track);
  h.sizeof_thread = sizeof(nsys_host_thread);
  h.dev = (uint64_t)p->st_dev;
  h.ino = (uint64_t)p->st_ino;
  h.size = (uint64_t)p->st_size;
  h.mtime_ns = (uint64_t)p->st_mtime_ns;
  h.path_hash = path_hash;
  h.payload_size = w.size;
  h.checksum = nsys__sum_final(&w.sum);
  h.n_strings = st->count;
  h.n_tracks = ix->n_tracks;
  h.n_ops = ix->ops.n;
  h.n_threads = ix->n_threads;
  h.n_api = ix->api.n;
  h.n_nvtx = ix->nvtx.n;
  h.span_start = ix->span_start;
  h.span_end = ix->span_end;
  h.string_bytes = sbytes;
  h.n_proj = pv->n_proj;
  h.n_proj_rows = pv->n_proj_rows;
  h.n_display = ix->n_display;
  h.n_depth_rows = pv->n_depth_rows;
  h.n_blocks = n_blocks;
  h.n_super = n_super;
  h.sizeof_proj_row = sizeof(nsys__proj_row);
  h.block = NSYS__BLOCK;
  if (w.ok && pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) w.ok = false;
  if (close(fd) != 0) w.ok = false;
  if (!w.ok || rename(tmp, path) != 0) {
    nsys_log("index cache: cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  free(path);
}
