/* The on-disk index cache: nsys_cache_dir()/index-<key>.bin.
 *
 * Key: file identity (path, dev, ino, size, mtime_ns); the header repeats it
 * with a format version, the struct sizes, the payload size and a checksum of
 * the payload. Loading maps the file and points the contract arrays into the
 * mapping (read-only; the index is immutable), so a reopen costs a checksum
 * pass instead of a build. Any mismatch (stale, truncated, corrupt, other
 * version) makes the load return NULL and the caller silently rebuilds.
 * Files are 0600, written to a unique temporary name, then renamed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "index/index_internal.h"
#include "profile/profile.h"

#define NSYS__CACHE_MAGIC "NSYSAIX"
#define NSYS__CACHE_VERSION 4u /* 3: graph launches (NSYS_OP_GRAPH); 4: four-lane checksum */

typedef struct {
  char magic[8];
  uint32_t version, header_size;
  uint32_t sizeof_track, sizeof_thread;
  uint64_t dev, ino, size, mtime_ns, path_hash;
  uint64_t payload_size, checksum;
  uint32_t n_strings, n_tracks, n_ops, n_threads, n_api, n_nvtx;
  int64_t span_start, span_end;
  uint64_t string_bytes;
  uint32_t n_proj, n_proj_rows; /* derived: NVTX projected on GPUs */
} nsys__cache_header;

/* Checksum over 8-byte words: two running sums (Fletcher-style) in each of
 * four lanes (word i goes to lane i % 4), so the loop runs four independent
 * chains; a reopen checks the whole mapping, so this is most of its cost. */
typedef struct {
  uint64_t a[4], b[4];
  uint64_t n; /* words summed so far */
} nsys__sum;

static void nsys__sum_words(nsys__sum *s, const uint64_t *w, size_t n) {
  const uint64_t k = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i < n && (s->n & 3); i++, s->n++) { /* continue to lane 0 */
    s->a[s->n & 3] += w[i] ^ k;
    s->b[s->n & 3] += s->a[s->n & 3];
  }
  uint64_t a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
  uint64_t b0 = s->b[0], b1 = s->b[1], b2 = s->b[2], b3 = s->b[3];
  for (; i + 4 <= n; i += 4) {
    a0 += w[i] ^ k;
    b0 += a0;
    a1 += w[i + 1] ^ k;
    b1 += a1;
    a2 += w[i + 2] ^ k;
    b2 += a2;
    a3 += w[i + 3] ^ k;
    b3 += a3;
    s->n += 4;
  }
  s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
  s->b[0] = b0, s->b[1] = b1, s->b[2] = b2, s->b[3] = b3;
  for (; i < n; i++, s->n++) {
    s->a[s->n & 3] += w[i] ^ k;
    s->b[s->n & 3] += s->a[s->n & 3];
  }
}

static uint64_t nsys__sum_final(const nsys__sum *s) {
  uint64_t h = s->n;
  for (int l = 0; l < 4; l++) h = (h ^ s->a[l] ^ (s->b[l] * 0xC2B2AE3D27D4EB4FULL)) * 0x100000001B3ULL;
  return h;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct {
  FILE *f;
  nsys__sum sum;
  uint64_t size;
  bool ok;
} nsys__writer;

static void nsys__put(nsys__writer *w, const void *data, size_t n) {
  if (!w->ok) return;
  if (n && fwrite(data, 1, n, w->f) != n) w->ok = false;
  size_t full = n / 8;
  if (full) {
    /* data may be unaligned (strings): copy through a word buffer */
    uint64_t buf[512];
    const unsigned char *c = data;
    for (size_t done = 0; done < full;) {
      size_t k = NSYS_MIN(full - done, (size_t)512);
      memcpy(buf, c + done * 8, k * 8);
      nsys__sum_words(&w->sum, buf, k);
      done += k;
    }
  }
  size_t rest = n % 8;
  if (rest) {
    uint64_t last = 0;
    memcpy(&last, (const unsigned char *)data + full * 8, rest);
    nsys__sum_words(&w->sum, &last, 1);
    static const char zeros[8] = {0};
    if (fwrite(zeros, 1, 8 - rest, w->f) != 8 - rest) w->ok = false;
  }
  w->size += (n + 7) / 8 * 8;
}

void nsys__cache_save(const nsys_index *ix, nsys_profile *p) {
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "index", &path_hash);
  if (!path) return;
  char *tmp = nsys_xasprintf("%s.tmp.%d.%lld", path, (int)getpid(), (long long)nsys_now_ns());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    free(tmp);
    free(path);
    return;
  }
  nsys__writer w = {fdopen(fd, "wb"), {{0}, {0}, 0}, 0, true};
  if (!w.f) {
    close(fd);
    unlink(tmp);
    free(tmp);
    free(path);
    return;
  }
  static char iobuf[1 << 16];
  setvbuf(w.f, iobuf, _IOFBF, sizeof iobuf);
  nsys__cache_header h;
  memset(&h, 0, sizeof h);
  if (fwrite(&h, sizeof h, 1, w.f) != 1) w.ok = false;
  const nsys_strtab *st = &ix->strings;
  uint64_t sbytes = 0;
  for (uint32_t i = 0; i < st->count; i++) sbytes += st->lens[i] + 1;
  nsys__put(&w, st->lens, st->count * sizeof(uint32_t));
  {
    /* strings, NUL-terminated, as one padded section */
    char *blob = nsys_xmalloc(sbytes ? sbytes : 1);
    uint64_t off = 0;
    for (uint32_t i = 0; i < st->count; i++) {
      memcpy(blob + off, st->strs[i], st->lens[i] + 1);
      off += st->lens[i] + 1;
    }
    nsys__put(&w, blob, sbytes);
    free(blob);
  }
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
  const nsys__index_priv *pv = nsys__priv(ix);
  uint32_t n_proj = pv ? pv->n_proj : 0, n_proj_rows = pv ? pv->n_proj_rows : 0;
  if (n_proj) {
    nsys__put(&w, pv->proj_rows, n_proj_rows * sizeof *pv->proj_rows);
    nsys__put(&w, pv->proj_start, (size_t)n_proj * 8);
    nsys__put(&w, pv->proj_end, (size_t)n_proj * 8);
    nsys__put(&w, pv->proj_nvtx, (size_t)n_proj * 4);
  }
  h.n_proj = n_proj;
  h.n_proj_rows = n_proj ? n_proj_rows : 0;
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
  if (w.ok && (fseek(w.f, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, w.f) != 1)) w.ok = false;
  if (fclose(w.f) != 0) w.ok = false;
  if (!w.ok || rename(tmp, path) != 0) {
    nsys_log("index cache: cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  free(path);
}

/* ---- loading ------------------------------------------------------------ */

typedef struct {
  const unsigned char *base;
  uint64_t off, size;
  bool ok;
} nsys__reader;

static const void *nsys__take(nsys__reader *r, uint64_t n) {
  uint64_t padded = (n + 7) / 8 * 8;
  if (!r->ok || padded > r->size - r->off) {
    r->ok = false;
    return NULL;
  }
  const void *p = r->base + r->off;
  r->off += padded;
  return p;
}

void nsys__cache_unmap(void *base, size_t size) {
  if (base) munmap(base, size);
}

nsys_index *nsys__cache_load(nsys_profile *p) {
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "index", &path_hash);
  if (!path) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    free(path);
    return NULL;
  }
  struct stat st;
  nsys__cache_header h;
  bool ok = fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof h &&
            pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
            memcmp(h.magic, NSYS__CACHE_MAGIC, 8) == 0 && h.version == NSYS__CACHE_VERSION &&
            h.header_size == sizeof h && h.sizeof_track == sizeof(nsys_gpu_track) &&
            h.sizeof_thread == sizeof(nsys_host_thread) && h.dev == (uint64_t)p->st_dev &&
            h.ino == (uint64_t)p->st_ino && h.size == (uint64_t)p->st_size &&
            h.mtime_ns == (uint64_t)p->st_mtime_ns && h.path_hash == path_hash &&
            h.payload_size % 8 == 0 && (uint64_t)st.st_size == sizeof h + h.payload_size;
  if (!ok) {
    close(fd);
    free(path);
    return NULL;
  }
  size_t map_size = (size_t)st.st_size;
  void *map = mmap(NULL, map_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    free(path);
    return NULL;
  }
  nsys__sum sum = {{0}, {0}, 0};
  nsys__sum_words(&sum, (const uint64_t *)((const char *)map + sizeof h), h.payload_size / 8);
  if (nsys__sum_final(&sum) != h.checksum) {
    nsys_log("index cache: %s is corrupt; rebuilding", path);
    munmap(map, map_size);
    unlink(path);
    free(path);
    return NULL;
  }
  free(path);
  nsys__reader r = {(const unsigned char *)map + sizeof h, 0, h.payload_size, true};
  nsys_index *ix = nsys_xcalloc(1, sizeof *ix);
  nsys__index_priv *pv = nsys_xcalloc(1, sizeof *pv);
  ix->priv = pv;
  pv->map_base = map;
  pv->map_size = map_size;
  pv->from_cache = true;
  nsys_strtab_init(&ix->strings);
  const uint32_t *lens = nsys__take(&r, (uint64_t)h.n_strings * 4);
  const char *blob = nsys__take(&r, h.string_bytes);
  if (r.ok) {
    uint64_t off = 0;
    for (uint32_t i = 0; i < h.n_strings && r.ok; i++) {
      if (off + lens[i] + 1 > h.string_bytes || blob[off + lens[i]] != '\0') {
        r.ok = false;
        break;
      }
      if (nsys_strtab_intern(&ix->strings, blob + off, lens[i]) != i) r.ok = false;
      off += lens[i] + 1;
    }
  }
  size_t no = h.n_ops, na = h.n_api, nv = h.n_nvtx;
  const void *tracks = nsys__take(&r, (uint64_t)h.n_tracks * sizeof(nsys_gpu_track));
#define NSYS__TAKE(dst, n, sz) (dst) = (void *)nsys__take(&r, (uint64_t)(n) * (sz))
  NSYS__TAKE(ix->ops.start, no, 8);
  NSYS__TAKE(ix->ops.end, no, 8);
  NSYS__TAKE(ix->ops.rowid, no, 8);
  NSYS__TAKE(ix->ops.name, no, 4);
  NSYS__TAKE(ix->ops.full_name, no, 4);
  NSYS__TAKE(ix->ops.track, no, 4);
  NSYS__TAKE(ix->ops.api, no, 4);
  NSYS__TAKE(ix->op_next, no, 4);
  NSYS__TAKE(ix->ops.kind, no, 1);
  const void *threads = nsys__take(&r, (uint64_t)h.n_threads * sizeof(nsys_host_thread));
  NSYS__TAKE(ix->api.start, na, 8);
  NSYS__TAKE(ix->api.end, na, 8);
  NSYS__TAKE(ix->api.correlation, na, 8);
  NSYS__TAKE(ix->api.rowid, na, 8);
  NSYS__TAKE(ix->api.name, na, 4);
  NSYS__TAKE(ix->api.thread, na, 4);
  NSYS__TAKE(ix->api.first_op, na, 4);
  NSYS__TAKE(ix->nvtx.start, nv, 8);
  NSYS__TAKE(ix->nvtx.end, nv, 8);
  NSYS__TAKE(ix->nvtx.name, nv, 4);
  NSYS__TAKE(ix->nvtx.domain, nv, 4);
  NSYS__TAKE(ix->nvtx.thread, nv, 4);
  NSYS__TAKE(ix->nvtx.parent, nv, 4);
  NSYS__TAKE(ix->nvtx.depth, nv, 2);
  const nsys__proj_row *proj_rows = NULL;
  if (h.n_proj) {
    proj_rows = nsys__take(&r, (uint64_t)h.n_proj_rows * sizeof(nsys__proj_row));
    NSYS__TAKE(pv->proj_start, h.n_proj, 8);
    NSYS__TAKE(pv->proj_end, h.n_proj, 8);
    NSYS__TAKE(pv->proj_nvtx, h.n_proj, 4);
    pv->proj_cached = true; /* mapped: never freed */
  }
#undef NSYS__TAKE
  if (!r.ok || r.off != r.size) {
    nsys_index_free(ix);
    return NULL;
  }
  ix->n_tracks = h.n_tracks;
  ix->tracks = nsys_xmalloc(((size_t)h.n_tracks + 1) * sizeof(nsys_gpu_track));
  memcpy(ix->tracks, tracks, (size_t)h.n_tracks * sizeof(nsys_gpu_track));
  ix->n_threads = h.n_threads;
  ix->threads = nsys_xmalloc(((size_t)h.n_threads + 1) * sizeof(nsys_host_thread));
  memcpy(ix->threads, threads, (size_t)h.n_threads * sizeof(nsys_host_thread));
  ix->ops.n = h.n_ops;
  ix->api.n = h.n_api;
  ix->nvtx.n = h.n_nvtx;
  ix->span_start = h.span_start;
  ix->span_end = h.span_end;
  /* indices inside the payload must be in range before anyone follows them */
  bool sane = true;
  for (size_t i = 0; sane && i < no; i++)
    sane = ix->ops.track[i] < h.n_tracks && ix->ops.name[i] < h.n_strings &&
           ix->ops.full_name[i] < h.n_strings && ix->ops.api[i] < (int64_t)na &&
           ix->op_next[i] < (int64_t)no;
  for (size_t i = 0; sane && i < na; i++)
    sane = ix->api.thread[i] < h.n_threads && ix->api.name[i] < h.n_strings &&
           ix->api.first_op[i] < (int64_t)no;
  for (size_t i = 0; sane && i < nv; i++)
    sane = ix->nvtx.thread[i] < h.n_threads && ix->nvtx.name[i] < h.n_strings &&
           ix->nvtx.domain[i] < h.n_strings && ix->nvtx.parent[i] < (int64_t)nv;
  for (uint32_t t = 0; sane && t < h.n_tracks; t++)
    sane = (uint64_t)ix->tracks[t].first + ix->tracks[t].count <= no;
  for (uint32_t t = 0; sane && t < h.n_threads; t++)
    sane = (uint64_t)ix->threads[t].api_first + ix->threads[t].api_count <= na &&
           (uint64_t)ix->threads[t].nvtx_first + ix->threads[t].nvtx_count <= nv;
  if (h.n_proj) {
    uint64_t covered = 0;
    for (uint32_t q = 0; sane && q < h.n_proj_rows; q++) {
      sane = proj_rows[q].first == covered;
      covered += proj_rows[q].count;
    }
    sane = sane && covered == h.n_proj;
    for (uint32_t q = 0; sane && q < h.n_proj; q++) sane = pv->proj_nvtx[q] < nv;
  }
  if (!sane) {
    nsys_index_free(ix);
    return NULL;
  }
  if (h.n_proj) {
    pv->n_proj = h.n_proj;
    pv->n_proj_rows = h.n_proj_rows;
    pv->proj_rows = nsys_xmalloc((size_t)h.n_proj_rows * sizeof(nsys__proj_row));
    memcpy(pv->proj_rows, proj_rows, (size_t)h.n_proj_rows * sizeof(nsys__proj_row));
  }
  return ix;
}
