/* The profile summary cache: nsys_cache_dir()/info-<key>.bin.
 *
 * nsys_info_build() scans every activity table (counts, span, devices and
 * streams), which on a 10M-kernel export costs seconds even when the index
 * is cached. The summary depends only on the file, so it is saved once and
 * read back on every later open of the same file.
 *
 * Key: the file identity the index cache uses (path, dev, inode, size,
 * mtime_ns). The header repeats it with a format version (mixed with the
 * release), sizeof(nsys_info),
 * the payload size and a checksum of the payload; any mismatch (another file,
 * a modified file, a truncated or corrupt cache file, another version) makes
 * the load fail and the caller silently recomputes and rewrites it. Files are
 * 0600 in the 0700 cache directory, written to a unique temporary name and
 * renamed; nothing is ever written beside the profile. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache_tmp.h"
#include "common/util.h"
#include "profile/loader_internal.h"

/* Bump when nsys_info's fields or their definitions (info.c) change; a new
 * release (NSYS_AI_VERSION) invalidates the entries too. */
#define NSYS__INFO_CACHE_VERSION 1u
#define NSYS__INFO_MAGIC "NSYSAII"
#define NSYS__INFO_MAX_FILE (64u << 20)

typedef struct {
  char magic[8];
  uint32_t version, sizeof_info;
  uint64_t dev, ino, size, mtime_ns, path_hash;
  uint64_t payload_size, checksum;
} nsys__info_header;

static void nsys__fill_header(nsys__info_header *h, const nsys_profile *p, uint64_t path_hash) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, NSYS__INFO_MAGIC, sizeof h->magic);
  /* the format version and the release: a new release recomputes */
  h->version = NSYS__INFO_CACHE_VERSION ^
               (uint32_t)nsys_fnv1a(NSYS_AI_VERSION, strlen(NSYS_AI_VERSION), NSYS_FNV_SEED) << 8;
  h->sizeof_info = (uint32_t)sizeof(nsys_info);
  h->dev = (uint64_t)p->st_dev;
  h->ino = (uint64_t)p->st_ino;
  h->size = (uint64_t)p->st_size;
  h->mtime_ns = (uint64_t)p->st_mtime_ns;
  h->path_hash = path_hash;
}

/* ---- writing ------------------------------------------------------------ */

static void nsys__w_i64(nsys_strbuf *b, int64_t v) { nsys_strbuf_append(b, (const char *)&v, sizeof v); }

static void nsys__w_str(nsys_strbuf *b, const char *s) {
  /* -1: NULL */
  int64_t n = s ? (int64_t)strlen(s) : -1;
  nsys__w_i64(b, n);
  if (s) nsys_strbuf_append(b, s, (size_t)n);
}

static void nsys__serialize(const nsys_info *in, nsys_strbuf *b) {
  nsys__w_str(b, in->nsys_version);
  nsys__w_str(b, in->schema_version);
  const int64_t scalars[] = {in->span_start,  in->span_end,     in->utc_epoch_ns,     in->n_kernels,
                             in->n_memcpy,    in->n_memset,     in->n_runtime,        in->n_nvtx,
                             in->n_syncs,     in->duration_ns,  in->n_osrt,           in->n_cpu_samples,
                             in->n_graph_launches, in->n_cuda_events};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(scalars); i++) nsys__w_i64(b, scalars[i]);
  const bool flags[] = {in->f_kernels,    in->f_memcpy,        in->f_memset,
                        in->f_nvtx,       in->f_nccl,          in->f_cuda_graphs,
                        in->f_cuda_callchains, in->f_cpu_sampling, in->f_osrt,
                        in->has_span,     in->has_utc_epoch};
  int64_t bits = 0;
  for (size_t i = 0; i < NSYS_ARRAY_LEN(flags); i++)
    if (flags[i]) bits |= (int64_t)1 << i;
  nsys__w_i64(b, bits);
  nsys__w_i64(b, in->n_gpus);
  for (int i = 0; i < in->n_gpus; i++) {
    const nsys_gpu_info *g = &in->gpus[i];
    nsys__w_i64(b, g->id);
    nsys__w_str(b, g->name);
    nsys__w_i64(b, g->sm_count);
    nsys__w_i64(b, g->memory_bytes);
    nsys__w_i64(b, g->bandwidth_bytes_per_sec);
    nsys__w_i64(b, g->clock_hz);
    nsys__w_i64(b, g->cc_major);
    nsys__w_i64(b, g->cc_minor);
  }
  nsys__w_i64(b, in->n_devices);
  for (int i = 0; i < in->n_devices; i++) {
    nsys__w_i64(b, in->devices[i].id);
    nsys__w_i64(b, in->devices[i].n_streams);
    for (int k = 0; k < in->devices[i].n_streams; k++) nsys__w_i64(b, in->devices[i].streams[k]);
  }
  nsys__w_i64(b, in->n_processes);
  for (int i = 0; i < in->n_processes; i++) {
    const nsys_process_info *pr = &in->processes[i];
    nsys__w_i64(b, pr->pid);
    nsys__w_str(b, pr->name);
    nsys__w_i64(b, pr->n_threads);
    for (int k = 0; k < pr->n_threads; k++) {
      nsys__w_i64(b, pr->threads[k].tid);
      nsys__w_str(b, pr->threads[k].name);
    }
  }
  nsys__w_i64(b, in->n_tables);
  for (int i = 0; i < in->n_tables; i++) {
    nsys__w_str(b, in->tables[i].name);
    nsys__w_i64(b, in->tables[i].rows);
  }
}

void nsys_info_cache_save(const nsys_profile *p) {
  if (getenv("NSYS_AI_NO_INFO_CACHE")) return;
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "info", &path_hash);
  if (!path) return;
  nsys_strbuf payload;
  nsys_strbuf_init(&payload);
  nsys__serialize(&p->info, &payload);
  nsys__info_header h;
  nsys__fill_header(&h, p, path_hash);
  h.payload_size = payload.len;
  h.checksum = nsys_fnv1a(payload.data, payload.len, NSYS_FNV_SEED);
  char *tmp = nsys_cache_tmp_name(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && payload.len < NSYS__INFO_MAX_FILE;
  if (ok) ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h;
  if (ok && payload.len) ok = write(fd, payload.data, payload.len) == (ssize_t)payload.len;
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (fd >= 0) {
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
  }
  free(tmp);
  free(path);
  nsys_strbuf_free(&payload);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct {
  const unsigned char *d;
  size_t n, off;
  bool ok;
} nsys__reader;

static int64_t nsys__r_i64(nsys__reader *r) {
  int64_t v = 0;
  if (!r->ok || r->n - r->off < sizeof v) {
    r->ok = false;
    return 0;
  }
  memcpy(&v, r->d + r->off, sizeof v);
  r->off += sizeof v;
  return v;
}

/* A count in [0, max]; anything else marks the file corrupt. */
static int nsys__r_count(nsys__reader *r, int64_t max) {
  int64_t v = nsys__r_i64(r);
  if (v < 0 || v > max) r->ok = false;
  return r->ok ? (int)v : 0;
}

static int nsys__r_int(nsys__reader *r) {
  int64_t v = nsys__r_i64(r);
  if (v < INT32_MIN || v > INT32_MAX) r->ok = false;
  return r->ok ? (int)v : 0;
}

static char *nsys__r_str(nsys__reader *r) {
  int64_t n = nsys__r_i64(r);
  if (!r->ok || n == -1) return NULL;
  if (n < 0 || (uint64_t)n > r->n - r->off || memchr(r->d + r->off, 0, (size_t)n)) {
    r->ok = false;
    return NULL;
  }
  char *s = nsys_xstrndup((const char *)r->d + r->off, (size_t)n);
  r->off += (size_t)n;
  return s;
}

static bool nsys__deserialize(nsys__reader *r, nsys_info *in) {
  in->nsys_version = nsys__r_str(r);
  in->schema_version = nsys__r_str(r);
  int64_t *scalars[] = {&in->span_start,  &in->span_end,     &in->utc_epoch_ns,     &in->n_kernels,
                        &in->n_memcpy,    &in->n_memset,     &in->n_runtime,        &in->n_nvtx,
                        &in->n_syncs,     &in->duration_ns,  &in->n_osrt,           &in->n_cpu_samples,
                        &in->n_graph_launches, &in->n_cuda_events};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(scalars); i++) *scalars[i] = nsys__r_i64(r);
  bool *flags[] = {&in->f_kernels,    &in->f_memcpy,        &in->f_memset,
                   &in->f_nvtx,       &in->f_nccl,          &in->f_cuda_graphs,
                   &in->f_cuda_callchains, &in->f_cpu_sampling, &in->f_osrt,
                   &in->has_span,     &in->has_utc_epoch};
  int64_t bits = nsys__r_i64(r);
  for (size_t i = 0; i < NSYS_ARRAY_LEN(flags); i++) *flags[i] = (bits >> i) & 1;
  /* every element takes at least 8 bytes: counts beyond what is left are corrupt */
  int64_t max = (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 8);
  int n = nsys__r_count(r, NSYS_MIN(max, 4096));
  in->gpus = nsys_xcalloc((size_t)n + 1, sizeof *in->gpus);
  for (int i = 0; i < n && r->ok; i++, in->n_gpus++) {
    nsys_gpu_info *g = &in->gpus[i];
    g->id = nsys__r_i64(r);
    g->name = nsys__r_str(r);
    g->sm_count = nsys__r_int(r);
    g->memory_bytes = nsys__r_i64(r);
    g->bandwidth_bytes_per_sec = nsys__r_i64(r);
    g->clock_hz = nsys__r_i64(r);
    g->cc_major = nsys__r_int(r);
    g->cc_minor = nsys__r_int(r);
  }
  max = (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 8);
  n = nsys__r_count(r, NSYS_MIN(max, INT32_MAX));
  in->devices = nsys_xcalloc((size_t)n + 1, sizeof *in->devices);
  for (int i = 0; i < n && r->ok; i++, in->n_devices++) {
    nsys_device_info *d = &in->devices[i];
    d->id = nsys__r_i64(r);
    int ns = nsys__r_count(r, (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 8));
    d->streams = nsys_xcalloc((size_t)ns + 1, sizeof *d->streams);
    for (int k = 0; k < ns && r->ok; k++, d->n_streams++) d->streams[k] = nsys__r_i64(r);
  }
  max = (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 8);
  n = nsys__r_count(r, NSYS_MIN(max, INT32_MAX));
  in->processes = nsys_xcalloc((size_t)n + 1, sizeof *in->processes);
  for (int i = 0; i < n && r->ok; i++, in->n_processes++) {
    nsys_process_info *pr = &in->processes[i];
    pr->pid = (uint32_t)nsys__r_i64(r);
    pr->name = nsys__r_str(r);
    int nt = nsys__r_count(r, (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 16));
    pr->threads = nsys_xcalloc((size_t)nt + 1, sizeof *pr->threads);
    for (int k = 0; k < nt && r->ok; k++, pr->n_threads++) {
      pr->threads[k].tid = (uint32_t)nsys__r_i64(r);
      pr->threads[k].name = nsys__r_str(r);
    }
  }
  max = (int64_t)((r->n - NSYS_MIN(r->off, r->n)) / 16);
  n = nsys__r_count(r, NSYS_MIN(max, INT32_MAX));
  in->tables = nsys_xcalloc((size_t)n + 1, sizeof *in->tables);
  for (int i = 0; i < n && r->ok; i++, in->n_tables++) {
    in->tables[i].name = nsys__r_str(r);
    in->tables[i].rows = nsys__r_i64(r);
    if (!in->tables[i].name) r->ok = false;
  }
  return r->ok && r->off == r->n;
}

bool nsys_info_cache_load(nsys_profile *p) {
  if (getenv("NSYS_AI_NO_INFO_CACHE")) return false;
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "info", &path_hash);
  if (!path) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  free(path);
  if (fd < 0) return false;
  struct stat st;
  nsys__info_header h, want;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof h &&
            st.st_size < (off_t)NSYS__INFO_MAX_FILE && read(fd, &h, sizeof h) == (ssize_t)sizeof h;
  nsys__fill_header(&want, p, path_hash);
  ok = ok && memcmp(h.magic, want.magic, sizeof h.magic) == 0 && h.version == want.version &&
       h.sizeof_info == want.sizeof_info && h.dev == want.dev && h.ino == want.ino &&
       h.size == want.size && h.mtime_ns == want.mtime_ns && h.path_hash == want.path_hash &&
       h.payload_size == (uint64_t)st.st_size - sizeof h;
  unsigned char *data = NULL;
  if (ok) {
    data = nsys_xmalloc(h.payload_size + 1);
    size_t got = 0;
    while (got < h.payload_size) {
      ssize_t k = read(fd, data + got, h.payload_size - got);
      if (k <= 0) break;
      got += (size_t)k;
    }
    ok = got == h.payload_size &&
         nsys_fnv1a(data, h.payload_size, NSYS_FNV_SEED) == h.checksum;
  }
  close(fd);
  if (!ok) {
    free(data);
    return false;
  }
  nsys_info in;
  memset(&in, 0, sizeof in);
  nsys__reader r = {data, h.payload_size, 0, true};
  ok = nsys__deserialize(&r, &in);
  free(data);
  if (!ok) {
    nsys_info_free(&in);
    return false;
  }
  nsys_info_free(&p->info);
  p->info = in;
  return true;
}
