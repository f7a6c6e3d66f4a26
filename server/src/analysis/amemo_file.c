/* The memo file (see amemo_file.h). */
#include "analysis/amemo_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/devunions.h"
#include "common/cache_tmp.h"
#include "common/util.h"
#include "index/index_cache_format.h"
#include "profile/profile.h"

#define NSYS__MEMO_MAGIC "NSYSAIM"
/* 1: device orders and the five whole-time unions; 2: the device orders'
 * ties by track (devunions.h: one total order; a version-1 file's orders
 * are the heap's history order, which the window sweeps must not read) */
#define NSYS__MEMO_VERSION 2u
enum { NSYS__N_IVLS = 5 };

typedef struct {
  char magic[8];
  uint32_t version, header_size, index_version, n_dev;
  uint64_t dev, ino, size, mtime_ns, path_hash;
  uint32_t n_ops, n_tracks, n_strings, n_threads, n_api, n_nvtx;
  int64_t span_start, span_end;
  uint64_t tracks_hash, class_hash;
  uint64_t payload_size, checksum;
} nsys__memo_header;

typedef struct {
  int32_t device;
  uint32_t n_ops;
  int64_t min_start, max_end;
  uint32_t n_ivl[NSYS__N_IVLS];
  uint32_t pad;
} nsys__memo_dev;

static atomic_uint_fast64_t nsys__reads;

uint64_t nsys_amemo_file_reads(void) { return atomic_load(&nsys__reads); }

static bool nsys__trace(void) {
  return getenv("NSYS_AI_VERBOSE") != NULL;
}

static nsys_ivls *nsys__ivl(nsys_devunions *du, int i) {
  nsys_ivls *v[NSYS__N_IVLS] = {&du->compute, &du->comm, &du->any, &du->both, &du->kernel};
  return v[i];
}

/* Hash of the op classes the unions were built from (8-byte words, the last
 * one zero-padded). */
static uint64_t nsys__class_hash(const nsys_acache *k) {
  nsys__sum s;
  memset(&s, 0, sizeof s);
  uint64_t w[512];
  size_t n = k->ix->ops.n;
  for (size_t at = 0; at < n; at += sizeof w) {
    size_t len = NSYS_MIN(sizeof w, n - at);
    memset(w, 0, sizeof w);
    memcpy(w, k->op_class + at, len);
    nsys__sum_words(&s, w, (len + 7) / 8);
  }
  return nsys__sum_final(&s);
}

static uint64_t nsys__tracks_hash(const nsys_index *ix) {
  uint64_t h = NSYS_FNV_SEED;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *tr = &ix->tracks[t];
    uint32_t v[3] = {(uint32_t)tr->device, tr->first, tr->count};
    h = nsys_fnv1a(v, sizeof v, h);
  }
  return h;
}

/* The header a file for k must have (payload size and checksum aside). */
static void nsys__header(nsys__memo_header *h, const nsys_profile *p, const nsys_acache *k, uint64_t path_hash) {
  const nsys_index *ix = k->ix;
  memset(h, 0, sizeof *h);
  memcpy(h->magic, NSYS__MEMO_MAGIC, 8);
  h->version = NSYS__MEMO_VERSION;
  h->header_size = sizeof *h;
  h->index_version = NSYS__CACHE_VERSION;
  h->dev = (uint64_t)p->st_dev;
  h->ino = (uint64_t)p->st_ino;
  h->size = (uint64_t)p->st_size;
  h->mtime_ns = (uint64_t)p->st_mtime_ns;
  h->path_hash = path_hash;
  h->n_ops = ix->ops.n;
  h->n_tracks = ix->n_tracks;
  h->n_strings = ix->strings.count;
  h->n_threads = ix->n_threads;
  h->n_api = ix->api.n;
  h->n_nvtx = ix->nvtx.n;
  h->span_start = ix->span_start;
  h->span_end = ix->span_end;
  h->tracks_hash = nsys__tracks_hash(ix);
  h->class_hash = nsys__class_hash(k);
}

static size_t nsys__words(size_t bytes) { return (bytes + 7) / 8; }

/* ---- saving -------------------------------------------------------------- */

void nsys_amemo_file_save(nsys_profile *p, const nsys_acache *k) {
  if (!p || !k->built || !k->devunions_whole || !k->op_class || k->n_devorder != k->n_devunions) return;
  uint32_t nd = k->n_devunions;
  size_t words = nsys__words((size_t)nd * sizeof(nsys__memo_dev));
  for (uint32_t d = 0; d < nd; d++) {
    const nsys_devorder *o = &k->devorder[d];
    nsys_devunions *du = &k->devunions[d];
    if (o->device != du->device || !o->whole || o->n != o->n_ops || !du->with_kernel) return;
    words += nsys__words((size_t)o->n * 4);
    for (int i = 0; i < NSYS__N_IVLS; i++) words += 3 * (size_t)nsys__ivl(du, i)->n + 1;
  }
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "memo", &path_hash);
  if (!path) return;
  uint64_t *buf = nsys_xcalloc(words + 1, 8);
  unsigned char *at = (unsigned char *)buf;
  for (uint32_t d = 0; d < nd; d++) {
    nsys__memo_dev md;
    memset(&md, 0, sizeof md);
    md.device = k->devorder[d].device;
    md.n_ops = k->devorder[d].n;
    md.min_start = k->devorder[d].min_start;
    md.max_end = k->devorder[d].max_end;
    for (int i = 0; i < NSYS__N_IVLS; i++) md.n_ivl[i] = nsys__ivl(&k->devunions[d], i)->n;
    memcpy(at, &md, sizeof md);
    at += sizeof md;
  }
  at = (unsigned char *)(buf + nsys__words((size_t)nd * sizeof(nsys__memo_dev)));
  for (uint32_t d = 0; d < nd; d++) {
    const nsys_devorder *o = &k->devorder[d];
    if (o->n) memcpy(at, o->ops, (size_t)o->n * 4);
    at += nsys__words((size_t)o->n * 4) * 8;
    for (int i = 0; i < NSYS__N_IVLS; i++) {
      const nsys_ivls *v = nsys__ivl(&k->devunions[d], i);
      if (v->n) { /* an empty union may have no arrays */
        memcpy(at, v->s, (size_t)v->n * 8);
        memcpy(at + (size_t)v->n * 8, v->e, (size_t)v->n * 8);
      }
      at += (size_t)v->n * 16;
      int64_t pre = 0;
      for (uint32_t j = 0; j <= v->n; j++) { /* prefix lengths (nsys_ivls_index) */
        memcpy(at, &pre, 8);
        at += 8;
        if (j < v->n) pre += v->e[j] - v->s[j];
      }
    }
  }
  nsys__memo_header h;
  nsys__header(&h, p, k, path_hash);
  h.n_dev = nd;
  h.payload_size = (uint64_t)words * 8;
  nsys__sum s;
  memset(&s, 0, sizeof s);
  nsys__sum_words(&s, buf, words);
  h.checksum = nsys__sum_final(&s);

  char *tmp = nsys_cache_tmp_name(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write(fd, &h, sizeof h) == (ssize_t)sizeof h;
  const char *c = (const char *)buf;
  for (size_t left = words * 8; ok && left;) {
    ssize_t n = write(fd, c, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else c += n, left -= (size_t)n;
  }
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (fd >= 0 && (!ok || rename(tmp, path) != 0)) {
    nsys_log("analysis memo: cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
  } else if (ok && nsys__trace()) {
    nsys_log("analysis memo: saved %s", path);
  }
  free(buf);
  free(tmp);
  free(path);
}

/* ---- reading ------------------------------------------------------------- */

/* Starts, ends and prefix lengths of one union: sorted, disjoint, non-empty
 * intervals whose prefix sums add up (no overflow). */
static bool nsys__ivls_ok(const int64_t *s, const int64_t *e, const int64_t *pre, uint32_t n) {
  if (pre[0] != 0) return false;
  for (uint32_t i = 0; i < n; i++) {
    int64_t len, next;
    if (s[i] >= e[i] || (i && e[i - 1] >= s[i])) return false;
    if (__builtin_sub_overflow(e[i], s[i], &len) || __builtin_add_overflow(pre[i], len, &next) ||
        pre[i + 1] != next)
      return false;
  }
  return true;
}

static int64_t *nsys__copy_i64(const unsigned char *src, size_t n) {
  int64_t *v = nsys_xmalloc((n ? n : 1) * 8);
  memcpy(v, src, n * 8);
  return v;
}

/* The payload into k, checked against its index; false (k's tables freed
 * again) when anything does not add up. */
static bool nsys__parse(const uint64_t *buf, size_t words, uint32_t nd, nsys_acache *k) {
  const nsys_index *ix = k->ix;
  int32_t *devs;
  uint32_t u = nsys_track_devices(ix, &devs);
  size_t table = nsys__words((size_t)nd * sizeof(nsys__memo_dev));
  bool ok = u == nd && table <= words; /* nd is the header's: checked before it sizes anything */
  nsys__memo_dev *md = nsys_xcalloc(ok ? (size_t)nd + 1 : 1, sizeof *md);
  if (ok) memcpy(md, buf, (size_t)nd * sizeof *md);
  /* the devices and their op counts are the index's */
  size_t need = table;
  for (uint32_t d = 0; ok && d < nd; d++) {
    uint64_t n_ops = 0;
    for (uint32_t t = 0; t < ix->n_tracks; t++)
      if (ix->tracks[t].device == devs[d]) n_ops += ix->tracks[t].count;
    ok = md[d].device == devs[d] && md[d].n_ops == n_ops;
    need += nsys__words((size_t)md[d].n_ops * 4);
    for (int i = 0; ok && i < NSYS__N_IVLS; i++) {
      ok = md[d].n_ivl[i] <= md[d].n_ops; /* a union has at most one interval per op */
      need += 3 * (size_t)md[d].n_ivl[i] + 1;
    }
  }
  free(devs);
  ok = ok && need == words;
  if (!ok) {
    free(md);
    return false;
  }
  k->devorder = nsys_xcalloc((size_t)nd + 1, sizeof *k->devorder);
  k->n_devorder = nd;
  k->devunions = nsys_xcalloc((size_t)nd + 1, sizeof *k->devunions);
  k->n_devunions = nd;
  const unsigned char *at = (const unsigned char *)(buf + table);
  for (uint32_t d = 0; ok && d < nd; d++) {
    nsys_devorder *o = &k->devorder[d];
    o->device = md[d].device;
    o->min_start = md[d].min_start;
    o->max_end = md[d].max_end;
    o->n_ops = o->n = md[d].n_ops;
    o->ops = nsys_xmalloc(((size_t)o->n + 1) * 4);
    memcpy(o->ops, at, (size_t)o->n * 4);
    at += nsys__words((size_t)o->n * 4) * 8;
    for (uint32_t j = 0; ok && j < o->n; j++) ok = o->ops[j] < ix->ops.n;
    o->whole = true;
    nsys_devunions *du = &k->devunions[d];
    du->device = md[d].device;
    du->with_kernel = true;
    for (int i = 0; i < NSYS__N_IVLS; i++) {
      nsys_ivls *v = nsys__ivl(du, i);
      uint32_t n = md[d].n_ivl[i];
      v->s = nsys__copy_i64(at, n);
      v->e = nsys__copy_i64(at + (size_t)n * 8, n);
      v->pre = nsys__copy_i64(at + (size_t)n * 16, (size_t)n + 1);
      v->n = v->cap = n;
      at += (3 * (size_t)n + 1) * 8;
      ok = ok && nsys__ivls_ok(v->s, v->e, v->pre, n);
    }
  }
  free(md);
  if (!ok) {
    nsys_devunions_free(k);
    nsys_devorder_free(k);
    return false;
  }
  k->devunions_whole = true;
  return true;
}

bool nsys_amemo_file_load(nsys_profile *p, nsys_acache *k) {
  if (!p || !k->op_class || k->devorder || k->devunions) return false;
  uint64_t path_hash = 0;
  char *path = nsys_profile_cache_file(p, "memo", &path_hash);
  if (!path) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    free(path);
    return false;
  }
  struct stat st;
  nsys__memo_header h, want;
  nsys__header(&want, p, k, path_hash);
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= sizeof h &&
            pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
  /* everything but the device count, payload size and checksum is the expected header */
  if (ok) {
    want.n_dev = h.n_dev;
    want.payload_size = h.payload_size;
    want.checksum = h.checksum;
    /* the most a file for this index can hold (words): the device table (6 a
     * device), each op once in an order (half a word, one of padding a
     * device), five unions of at most one interval per op (3 words each and
     * a prefix word a union): <= 12 a device + 15.5 an op */
    uint64_t most = 8 * (12 * (uint64_t)k->ix->n_tracks + 16 * (uint64_t)k->ix->ops.n + 16);
    ok = memcmp(&h, &want, sizeof h) == 0 && h.payload_size == (uint64_t)st.st_size - sizeof h &&
         h.payload_size % 8 == 0 && h.payload_size <= most;
  }
  const char *why = ok ? NULL : "stale or another version";
  uint64_t *buf = NULL;
  size_t words = ok ? (size_t)(h.payload_size / 8) : 0;
  if (ok) {
    buf = nsys_xmalloc((words + 1) * 8);
    unsigned char *c = (unsigned char *)buf;
    for (size_t got = 0; ok && got < words * 8;) {
      ssize_t n = pread(fd, c + got, words * 8 - got, (off_t)(sizeof h + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ok = false, why = "truncated";
      else got += (size_t)n;
    }
  }
  close(fd);
  if (ok) {
    nsys__sum s;
    memset(&s, 0, sizeof s);
    nsys__sum_words(&s, buf, words);
    if (nsys__sum_final(&s) != h.checksum) ok = false, why = "corrupt";
    else if (!nsys__parse(buf, words, h.n_dev, k)) ok = false, why = "inconsistent with the index";
  }
  free(buf);
  if (ok) {
    atomic_fetch_add(&nsys__reads, 1);
    if (nsys__trace()) nsys_log("analysis memo: read %s", path);
  } else if (nsys__trace()) {
    nsys_log("analysis memo: %s ignored (%s)", path, why);
  }
  free(path);
  return ok;
}
