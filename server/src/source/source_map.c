/* Kernel <-> source map builder; see source_map.h. No JSON in this file. */
#include "source/source_map.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "source/annotate.h"
#include "source/candidates.h"
#include "source/defs.h"
#include "source/frames.h"
#include "source/openacc_trace.h"
#include "source/python_backtrace.h"
#include "source/workspace.h"

const char *nsys_src_strategy_name(nsys_src_strategy s) {
  static const char *n[] = {"tag", "callchain", "module", "definition", "launch", "trace"};
  _Static_assert(sizeof n / sizeof *n == NSYS_SRC__COUNT, "one name per strategy");
  return (unsigned)s < NSYS_SRC__COUNT ? n[s] : "unknown";
}

typedef struct {
  nsys_src_map *m;
  uint32_t cap_sites;
  uint32_t *slots; uint32_t nslots; /* dedupe: site index + 1 */
} nsys__mb;

static uint64_t nsys__site_hash(const nsys_src_site *s) {
  uint64_t h = s->file * 0x9E3779B97F4A7C15ULL;
  h ^= (uint64_t)(uint32_t)s->line * 0xC2B2AE3D27D4EB4FULL;
  h ^= (uint64_t)s->strategy << 56;
  h ^= (uint64_t)s->evidence * 0x165667B19E3779F9ULL;
  h ^= (uint64_t)s->label * 0x27D4EB2F165667C5ULL;
  return h ^ (h >> 29);
}

static bool nsys__site_eq(const nsys_src_site *a, const nsys_src_site *b) {
  return a->file == b->file && a->line == b->line && a->strategy == b->strategy &&
         a->evidence == b->evidence && a->label == b->label;
}

static int32_t nsys__site(nsys__mb *b, const char *file, int line, nsys_src_strategy st, float conf,
                          const char *evidence, const char *label) {
  nsys_src_map *m = b->m;
  if (m->n_sites == b->cap_sites) {
    b->cap_sites = b->cap_sites ? b->cap_sites * 2 : 64;
    m->sites = nsys_xrealloc(m->sites, sizeof *m->sites * b->cap_sites);
  }
  nsys_src_site *s = &m->sites[m->n_sites];
  s->file = nsys_strtab_intern(&m->strs, file, strlen(file));
  s->line = line;
  s->strategy = (uint8_t)st;
  s->confidence = conf;
  s->evidence = nsys_strtab_intern(&m->strs, evidence, strlen(evidence));
  s->label = nsys_strtab_intern(&m->strs, label, strlen(label));
  s->n_ranges = 0;
  s->range_ns = 0;
  s->launch = s->frame_line = 0;
  s->first_line = s->last_line = line;
  if ((m->n_sites + 1) * 2 > b->nslots) {
    uint32_t ns = b->nslots ? b->nslots * 2 : 256;
    uint32_t *nt = nsys_xcalloc(ns, sizeof *nt);
    for (uint32_t i = 0; i < m->n_sites; i++) {
      uint32_t h = (uint32_t)nsys__site_hash(&m->sites[i]) & (ns - 1);
      while (nt[h]) h = (h + 1) & (ns - 1);
      nt[h] = i + 1;
    }
    free(b->slots);
    b->slots = nt;
    b->nslots = ns;
  }
  uint32_t h = (uint32_t)nsys__site_hash(s) & (b->nslots - 1);
  while (b->slots[h]) {
    if (nsys__site_eq(&m->sites[b->slots[h] - 1], s)) return (int32_t)b->slots[h] - 1;
    h = (h + 1) & (b->nslots - 1);
  }
  b->slots[h] = m->n_sites + 1;
  return (int32_t)m->n_sites++;
}


/* A file of the workspace (its scan interned every file's path). */
static bool nsys__workspace_file(const nsys_defs *defs, const char *rel) {
  return nsys_strtab_find(&defs->strs, rel, strlen(rel)) != NSYS_STR_NONE;
}

/* A source location named anywhere in an NVTX range's text (pyprof/DLProf
 * markers, stack lists, "conv2 @ model.py:22"): tokens PATH.EXT:LINE with a
 * source extension. The last one is the innermost frame of a stack; with a
 * workspace, the last one naming a workspace file wins. Writes the path
 * relative to the root. */
static bool nsys__embedded_tag(const char *text, const nsys_defs *defs, const char *root, char *path,
                               size_t cap, int *line) {
  static const char *exts[] = {".py", ".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".f90"};
  bool found = false, found_ws = false;
  for (const char *c = strchr(text, ':'); c; c = strchr(c + 1, ':')) {
    const char *d = c + 1;
    long v = 0;
    int nd = 0;
    while (*d >= '0' && *d <= '9' && nd < 9) v = v * 10 + (*d++ - '0'), nd++;
    if (nd == 0 || v < 1 || (*d >= '0' && *d <= '9') || (*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z'))
      continue;
    const char *b = c;
    while (b > text && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '.' || b[-1] == '/' ||
                        b[-1] == '-'))
      b--;
    size_t pl = (size_t)(c - b);
    bool ext = false;
    for (size_t k = 0; k < NSYS_ARRAY_LEN(exts) && !ext; k++) {
      size_t el = strlen(exts[k]);
      ext = pl > el && memcmp(c - el, exts[k], el) == 0;
    }
    if (!ext || pl >= 512) continue;
    char tmp[512];
    memcpy(tmp, b, pl);
    tmp[pl] = '\0';
    const char *rel = nsys_ws_relative(root, tmp);
    bool in_ws = defs && nsys__workspace_file(defs, rel);
    if (found_ws && !in_ws) continue;
    if (strlen(rel) >= cap) continue;
    snprintf(path, cap, "%s", rel);
    *line = (int)v;
    found = true;
    found_ws |= in_ws;
  }
  return found;
}

/* A PyTorch module-path range "... (encoder.block.0.layer)" -> "layer". */
static bool nsys__module_attr(const char *text, char *out, size_t cap) {
  size_t n = strlen(text);
  if (n < 3 || text[n - 1] != ')') return false;
  const char *open = strrchr(text, '(');
  if (!open || open == text || open[-1] != ' ') return false;
  const char *b = open + 1, *e = text + n - 1;
  if (!memchr(b, '.', (size_t)(e - b))) return false;
  for (const char *q = b; q < e; q++)
    if (!(*q == '.' || *q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
          (*q >= '0' && *q <= '9')))
      return false;
  /* last component that is not a number */
  const char *end = e;
  while (end > b) {
    const char *s = end;
    while (s > b && s[-1] != '.') s--;
    bool numeric = true;
    for (const char *q = s; q < end; q++)
      if (*q < '0' || *q > '9') numeric = false;
    if (!numeric && end > s) {
      size_t l = NSYS_MIN((size_t)(end - s), cap - 1);
      memcpy(out, s, l);
      out[l] = '\0';
      return true;
    }
    end = s > b ? s - 1 : b;
  }
  return false;
}

/* A PyTorch op range "aten::linear, seq = 12, ..." -> the nn.Module class
 * that usually issues it ("Linear"), or NULL. */
static const char *nsys__aten_module(const char *text) {
  static const struct { const char *op, *cls; } map[] = {
      {"linear", "Linear"},       {"addmm", "Linear"},          {"conv1d", "Conv1d"},
      {"conv2d", "Conv2d"},       {"conv3d", "Conv3d"},         {"cudnn_convolution", "Conv2d"},
      {"layer_norm", "LayerNorm"}, {"native_layer_norm", "LayerNorm"}, {"group_norm", "GroupNorm"},
      {"batch_norm", "BatchNorm2d"}, {"embedding", "Embedding"}, {"gelu", "GELU"},
      {"relu", "ReLU"},           {"silu", "SiLU"},             {"dropout", "Dropout"},
      {"_softmax", "Softmax"},    {"softmax", "Softmax"},       {"lstm", "LSTM"},
      {"scaled_dot_product_attention", "MultiheadAttention"},
  };
  if (strncmp(text, "aten::", 6) != 0) return NULL;
  const char *op = text + 6;
  size_t n = strcspn(op, ", ");
  for (size_t i = 0; i < NSYS_ARRAY_LEN(map); i++)
    if (strlen(map[i].op) == n && strncmp(op, map[i].op, n) == 0) return map[i].cls;
  return NULL;
}

/* ---- callchains ---- */

typedef struct {
  int64_t *id; int32_t *depth; int64_t *sym, *mod;
  uint32_t n;
} nsys__frames;

static uint32_t nsys__frames_find(const nsys__frames *f, int64_t id, uint32_t *count) {
  uint32_t lo = 0, hi = f->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (f->id[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  uint32_t e = lo;
  while (e < f->n && f->id[e] == id) e++;
  *count = e - lo;
  return lo;
}

static bool nsys__system_module(const char *mod) {
  static const char *sys[] = {"/libc", "libc.so", "libc-", "libcuda", "libcudart", "libcupti",
                              "libpthread", "ld-linux", "libstdc++", "libtorch", "libc10",
                              "libpython", "python3", "libnccl", "libcublas", "libcudnn"};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(sys); i++)
    if (strstr(mod, sys[i])) return true;
  return false;
}

typedef struct { int64_t rowid; uint32_t api; } nsys__rowapi;
static int nsys__rowapi_cmp(const void *x, const void *y) {
  const nsys__rowapi *a = x, *b = y;
  return (a->rowid > b->rowid) - (a->rowid < b->rowid);
}

/* A call by (pid, tid, correlationId): the index keeps one row per call and
 * drops the CUDA-backtrace row (eventClass 67) that repeats it, which is the
 * row holding the callchainId. */
typedef struct { uint32_t pid, tid; int64_t corr; uint32_t api; } nsys__callkey;
static int nsys__callkey_cmp(const void *x, const void *y) {
  const nsys__callkey *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return (a->corr > b->corr) - (a->corr < b->corr);
}

/* Fills api_site[a] for launch calls with a usable backtrace. */
/* A statement on the private connection; NULL after recording why (or
 * with nothing recorded when the read was interrupted by a cancel). */
static sqlite3_stmt *nsys__prepare(sqlite3 *db, const char *sql, nsys_task *task) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) return st;
  if (!nsys_task_cancelled(task))
    nsys_task_fail(task, NSYS_E_CORRUPT, "cannot read the profile's backtraces: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return NULL;
}

static bool nsys__callchains(nsys__mb *b, nsys_profile *p, sqlite3 *db, const nsys_index *ix, nsys_defs *defs,
                             int32_t *api_site, nsys_task *task) {
  nsys_src_map *m = b->m;
  m->callchain_offset = -1;
  const char *rt = p->schema.table[NSYS_TBL_RUNTIME], *cc = p->schema.table[NSYS_TBL_CALLCHAINS];
  if (!rt || !cc || !nsys_schema_has_column(p, NSYS_TBL_RUNTIME, "callchainId")) return true;
  /* frames */
  char *sql = nsys_xasprintf("SELECT id, stackDepth, symbol, module FROM %s ORDER BY id, stackDepth", cc);
  sqlite3_stmt *st = nsys__prepare(db, sql, task);
  free(sql);
  if (!st) return false;
  nsys__frames fr = {0};
  uint32_t cap = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    if (fr.n == cap) {
      cap = cap ? cap * 2 : 1024;
      fr.id = nsys_xrealloc(fr.id, sizeof *fr.id * cap);
      fr.depth = nsys_xrealloc(fr.depth, sizeof *fr.depth * cap);
      fr.sym = nsys_xrealloc(fr.sym, sizeof *fr.sym * cap);
      fr.mod = nsys_xrealloc(fr.mod, sizeof *fr.mod * cap);
    }
    fr.id[fr.n] = sqlite3_column_int64(st, 0);
    fr.depth[fr.n] = sqlite3_column_int(st, 1);
    fr.sym[fr.n] = sqlite3_column_int64(st, 2);
    fr.mod[fr.n] = sqlite3_column_int64(st, 3);
    fr.n++;
  }
  sqlite3_finalize(st);
  /* rowid -> api index */
  nsys__rowapi *ra = nsys_xmalloc(sizeof *ra * (ix->api.n + 1));
  for (uint32_t a = 0; a < ix->api.n; a++) ra[a] = (nsys__rowapi){ix->api.rowid[a], a};
  qsort(ra, ix->api.n, sizeof *ra, nsys__rowapi_cmp);
  bool keyed = nsys_schema_has_column(p, NSYS_TBL_RUNTIME, "globalTid") &&
               nsys_schema_has_column(p, NSYS_TBL_RUNTIME, "correlationId");
  sql = nsys_xasprintf("SELECT rowid, callchainId, %s, %s FROM %s WHERE callchainId IS NOT NULL",
                       keyed ? "globalTid" : "NULL", keyed ? "correlationId" : "NULL", rt);
  st = nsys__prepare(db, sql, task);
  free(sql);
  if (!st) {
    free(ra);
    free(fr.id), free(fr.depth), free(fr.sym), free(fr.mod);
    return false;
  }
  int64_t *api_chain = nsys_xmalloc(sizeof *api_chain * (ix->api.n + 1));
  for (uint32_t a = 0; a < ix->api.n; a++) api_chain[a] = -1;
  nsys__callkey *ck = NULL; /* made at the first row the index does not hold */
  while (sqlite3_step(st) == SQLITE_ROW) {
    nsys__rowapi key = {sqlite3_column_int64(st, 0), 0};
    nsys__rowapi *hit = ix->api.n ? bsearch(&key, ra, ix->api.n, sizeof *ra, nsys__rowapi_cmp) : NULL;
    if (hit) {
      api_chain[hit->api] = sqlite3_column_int64(st, 1);
      continue;
    }
    if (!ix->api.n || sqlite3_column_type(st, 2) == SQLITE_NULL) continue;
    if (!ck) {
      ck = nsys_xmalloc(sizeof *ck * ix->api.n);
      for (uint32_t a = 0; a < ix->api.n; a++) {
        const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
        ck[a] = (nsys__callkey){th->pid, th->tid, ix->api.correlation[a], a};
      }
      qsort(ck, ix->api.n, sizeof *ck, nsys__callkey_cmp);
    }
    int64_t g = sqlite3_column_int64(st, 2);
    nsys__callkey k = {nsys_gtid_pid(g), nsys_gtid_tid(g), sqlite3_column_int64(st, 3), 0};
    nsys__callkey *twin = bsearch(&k, ck, ix->api.n, sizeof *ck, nsys__callkey_cmp);
    if (twin && api_chain[twin->api] < 0) api_chain[twin->api] = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  free(ck);
  free(ra);
  /* offset: does chain (callchainId + k) hold the API's own frame? */
  int votes[2] = {0, 0}, sampled = 0;
  for (uint32_t a = 0; a < ix->api.n && sampled < 256; a++) {
    if (api_chain[a] < 0) continue;
    sampled++;
    const char *api = nsys_strtab_get(&ix->strings, ix->api.name[a]);
    for (int k = 0; k < 2; k++) {
      uint32_t cnt, f0 = nsys__frames_find(&fr, api_chain[a] + k, &cnt);
      for (uint32_t j = f0; j < f0 + cnt; j++) {
        const char *s = nsys_profile_string(p, fr.sym[j]);
        if (s && *api && strncmp(s, api, strlen(api)) == 0) {
          votes[k]++;
          break;
        }
      }
    }
  }
  if (sampled && fr.n) m->callchain_offset = votes[1] > votes[0] ? 1 : 0;
  int64_t max_id = fr.n ? fr.id[fr.n - 1] : 0;
  int32_t *chain_site = NULL;
  if (max_id >= 0 && max_id < (1 << 24)) {
    chain_site = nsys_xmalloc(sizeof *chain_site * (size_t)(max_id + 2));
    for (int64_t k = 0; k <= max_id + 1; k++) chain_site[k] = -2;
  }
  for (uint32_t a = 0; a < ix->api.n && m->callchain_offset >= 0; a++) {
    if ((a & 4095) == 0 && nsys_task_cancelled(task)) break;
    if (api_chain[a] < 0 || ix->api.first_op[a] < 0) continue;
    int64_t cid = api_chain[a] + m->callchain_offset;
    if (chain_site && cid >= 0 && cid <= max_id && chain_site[cid] != -2) {
      api_site[a] = chain_site[cid];
      continue;
    }
    const char *api = nsys_strtab_get(&ix->strings, ix->api.name[a]);
    char kbase[160];
    nsys_symbol_base_name(nsys_strtab_get(&ix->strings, ix->ops.full_name[ix->api.first_op[a]]),
                          kbase, sizeof kbase);
    uint32_t cnt, f0 = nsys__frames_find(&fr, api_chain[a] + m->callchain_offset, &cnt);
    bool past_api = false;
    for (uint32_t j = f0; j < f0 + cnt; j++) {
      const char *s = nsys_profile_string(p, fr.sym[j]);
      const char *mod = nsys_profile_string(p, fr.mod[j]);
      if (!s) continue;
      char base[160];
      nsys_symbol_base_name(s, base, sizeof base);
      if (!past_api) {
        if (*api && strncmp(s, api, strlen(api)) == 0) past_api = true;
        continue;
      }
      if (strncmp(s, "0x", 2) == 0 || !base[0] || strncmp(base, "cuda", 4) == 0 ||
          (base[0] == 'c' && base[1] == 'u' && base[2] >= 'A' && base[2] <= 'Z') ||
          strncmp(base, "__device_stub", 13) == 0 || strcmp(base, kbase) == 0 ||
          (mod && nsys__system_module(mod)))
        continue;
      /* the first user frame */
      char ev[400], lab[200];
      const char *mbase = mod ? strrchr(mod, '/') : NULL;
      mbase = mbase ? mbase + 1 : (mod ? mod : "?");
      snprintf(ev, sizeof ev, "CUDA backtrace of %s: launched from %.150s in %.100s", api, s, mbase);
      snprintf(lab, sizeof lab, "%.150s", base);
      /* a native frame maps only to native source; a launch line of the
       * kernel in its body confirms it */
      nsys_frame_site fs;
      if (defs && nsys_native_frame_site(defs, base, mod, kbase, &fs)) {
        char ev2[800];
        snprintf(ev2, sizeof ev2, "%s%s", ev, fs.evidence);
        api_site[a] = nsys__site(b, nsys_strtab_get(&defs->strs, fs.file), fs.line, NSYS_SRC_CALLCHAIN,
                                 fs.confidence, ev2, lab);
        m->sites[api_site[a]].launch = fs.launch;
        m->sites[api_site[a]].frame_line = fs.func_line;
      } else {
        api_site[a] = nsys__site(b, "", 0, NSYS_SRC_CALLCHAIN, 0.3f, ev, lab);
      }
      break;
    }
    if (chain_site && cid >= 0 && cid <= max_id) chain_site[cid] = api_site[a];
  }
  free(chain_site);
  free(api_chain);
  free(fr.id), free(fr.depth), free(fr.sym), free(fr.mod);
  return true;
}

/* ---- rows ---- */

typedef struct { uint64_t key; uint32_t row; } nsys__slot;

static const nsys_src_map *nsys__sort_map;
static int nsys__row_cmp(const void *x, const void *y) {
  const nsys_src_row *a = x, *b = y;
  const nsys_src_site *sa = &nsys__sort_map->sites[a->site], *sb = &nsys__sort_map->sites[b->site];
  if (sa->file != sb->file) return sa->file < sb->file ? -1 : 1;
  if (sa->line != sb->line) return sa->line < sb->line ? -1 : 1;
  if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns ? -1 : 1;
  return (a->kname > b->kname) - (a->kname < b->kname);
}

#include <pthread.h>
static pthread_mutex_t nsys__sort_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t nsys__add_row(nsys_src_map *m, nsys__slot **tab, uint32_t *tcap, uint32_t *rcap,
                              uint32_t site, uint32_t kname, uint32_t op, int64_t dur) {
  if ((m->n_rows + 1) * 2 > *tcap) {
    uint32_t ncap = *tcap ? *tcap * 2 : 1024;
    nsys__slot *nt = nsys_xcalloc(ncap, sizeof *nt);
    for (uint32_t i = 0; i < *tcap; i++) {
      if (!(*tab)[i].key) continue;
      uint32_t h = (uint32_t)(((*tab)[i].key * 0x9E3779B97F4A7C15ULL) >> 32) & (ncap - 1);
      while (nt[h].key) h = (h + 1) & (ncap - 1);
      nt[h] = (*tab)[i];
    }
    free(*tab);
    *tab = nt;
    *tcap = ncap;
  }
  uint64_t key = (((uint64_t)site + 1) << 32) | kname;
  uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & (*tcap - 1);
  while ((*tab)[h].key && (*tab)[h].key != key) h = (h + 1) & (*tcap - 1);
  if (!(*tab)[h].key) {
    if (m->n_rows == *rcap) {
      *rcap = *rcap ? *rcap * 2 : 256;
      m->rows = nsys_xrealloc(m->rows, sizeof *m->rows * *rcap);
    }
    m->rows[m->n_rows] = (nsys_src_row){site, kname, 0, 0, op, 0};
    (*tab)[h] = (nsys__slot){key, m->n_rows++};
  }
  nsys_src_row *r = &m->rows[(*tab)[h].row];
  r->count++;
  r->total_ns += dur;
  return (*tab)[h].row;
}

/* ---- kernels grouped by (name, process): their candidate definitions ---- */

#define NSYS__GRP_STREAMS 8
#define NSYS__GRP_CONFIGS 8

typedef struct {
  uint32_t fn, pid;                  /* index strtab id of the demangled name; process */
  int64_t streams[NSYS__GRP_STREAMS];
  uint32_t n_streams;                /* distinct, counted up to NSYS__GRP_STREAMS + 1 */
  uint32_t chain_file;               /* map strtab: file of the launching frame, 0 none */
  int chain_launch;                  /* the kernel's launch line that frame confirms, 0 none */
  bool chain_refuted;                /* ... whose configuration the profile contradicts */
  int32_t refuted_site;              /* the frame's function instead (made on first use), -1 */
  int32_t configs[NSYS__GRP_CONFIGS][6];
  uint32_t n_configs;
  uint32_t files[NSYS_CAND_MAX], n_files; /* candidate files (defs strtab), before weighing */
  uint32_t site0, n_sites, n_defs;   /* G.sites[site0 ..): definitions first, then launches */
  bool wants_configs;                /* several candidates, or launch lines to check */
} nsys__grp;

typedef struct {
  nsys__grp *v;
  uint32_t n, cap;
  uint32_t *slots, nslots;           /* open addressing: group index + 1 */
  int32_t *sites;
  uint32_t n_sites, cap_sites;
} nsys__groups;

static void nsys__groups_free(nsys__groups *g) {
  free(g->v);
  free(g->slots);
  free(g->sites);
}

static uint32_t nsys__grp_hash(uint32_t fn, uint32_t pid) {
  uint64_t k = ((uint64_t)fn << 32 | pid) * 0x9E3779B97F4A7C15ULL;
  return (uint32_t)(k >> 32);
}

static uint32_t nsys__group(nsys__groups *G, uint32_t fn, uint32_t pid, int64_t stream) {
  if ((G->n + 1) * 2 > G->nslots) {
    uint32_t ns = G->nslots ? G->nslots * 2 : 64;
    uint32_t *nt = nsys_xcalloc(ns, sizeof *nt);
    for (uint32_t i = 0; i < G->n; i++) {
      uint32_t h = nsys__grp_hash(G->v[i].fn, G->v[i].pid) & (ns - 1);
      while (nt[h]) h = (h + 1) & (ns - 1);
      nt[h] = i + 1;
    }
    free(G->slots);
    G->slots = nt;
    G->nslots = ns;
  }
  uint32_t h = nsys__grp_hash(fn, pid) & (G->nslots - 1);
  while (G->slots[h]) {
    nsys__grp *g = &G->v[G->slots[h] - 1];
    if (g->fn == fn && g->pid == pid) break;
    h = (h + 1) & (G->nslots - 1);
  }
  if (!G->slots[h]) {
    if (G->n == G->cap) {
      G->cap = G->cap ? G->cap * 2 : 64;
      G->v = nsys_xrealloc(G->v, sizeof *G->v * G->cap);
    }
    memset(&G->v[G->n], 0, sizeof *G->v);
    G->v[G->n].refuted_site = -1;
    G->v[G->n].fn = fn;
    G->v[G->n].pid = pid;
    G->slots[h] = ++G->n;
  }
  nsys__grp *g = &G->v[G->slots[h] - 1];
  bool seen = false;
  for (uint32_t k = 0; k < g->n_streams && k < NSYS__GRP_STREAMS; k++) seen |= g->streams[k] == stream;
  if (!seen && g->n_streams <= NSYS__GRP_STREAMS) {
    if (g->n_streams < NSYS__GRP_STREAMS) g->streams[g->n_streams] = stream;
    g->n_streams++;
  }
  return G->slots[h] - 1;
}

static int32_t nsys__group_find(const nsys__groups *G, uint32_t fn, uint32_t pid) {
  if (!G->nslots) return -1;
  uint32_t h = nsys__grp_hash(fn, pid) & (G->nslots - 1);
  while (G->slots[h]) {
    const nsys__grp *g = &G->v[G->slots[h] - 1];
    if (g->fn == fn && g->pid == pid) return (int32_t)G->slots[h] - 1;
    h = (h + 1) & (G->nslots - 1);
  }
  return -1;
}

/* (pid, file) -> how many kernel groups of the process have a candidate there */
typedef struct { uint32_t pid, file, count; } nsys__pf;
static int nsys__pf_cmp(const void *x, const void *y) {
  const nsys__pf *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  return (a->file > b->file) - (a->file < b->file);
}
typedef struct { const nsys__pf *v; uint32_t n; uint32_t pid; } nsys__sib_ctx;
static uint32_t nsys__siblings(void *ctx, uint32_t file) {
  const nsys__sib_ctx *c = ctx;
  nsys__pf key = {c->pid, file, 0};
  const nsys__pf *hit = c->n ? bsearch(&key, c->v, c->n, sizeof *c->v, nsys__pf_cmp) : NULL;
  return hit && hit->count > 0 ? hit->count - 1 : 0;
}

typedef struct {
  uint32_t pid;
  char *name;
  char *main_thread;         /* its main thread's name when it differs, or NULL */
  bool builds_read;          /* the build lines naming either, computed once */
  uint32_t *builds, n_builds;
} nsys__proc;
static int nsys__proc_cmp(const void *x, const void *y) {
  const nsys__proc *a = x, *b = y;
  return (a->pid > b->pid) - (a->pid < b->pid);
}

static int nsys__sql_interrupt(void *arg) { return nsys_task_cancelled(arg); }

static void nsys__progress(nsys_task *task, int percent, const char *message) {
  if (task) nsys_task_progress(task, percent, message);
}

/* Process names (pid -> name) and each group's distinct launch configurations,
 * read on a private connection that a cancel interrupts. */
#define NSYS__CONFIG_NAMES 500 /* names bound in the configuration query; more: read all */

static bool nsys__read_process_facts(nsys_profile *p, sqlite3 *db, const nsys_index *ix, nsys__groups *G,
                                     uint32_t n_wanted, nsys__proc **procs, uint32_t *n_procs, nsys_task *task) {
  *procs = NULL;
  *n_procs = 0;
  if (!p || !db) return true; /* the facts are optional */
  const char *pt = p->schema.table[NSYS_TBL_PROCESSES];
  sqlite3_stmt *st = NULL;
  uint32_t cap = 0;
  if (pt && nsys_schema_has_column(p, NSYS_TBL_PROCESSES, "globalPid")) {
    char *sql = nsys_xasprintf("SELECT globalPid, name FROM %s WHERE name IS NOT NULL", pt);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n_procs == cap) {
          cap = cap ? cap * 2 : 64;
          *procs = nsys_xrealloc(*procs, sizeof **procs * cap);
        }
        (*procs)[*n_procs].pid = nsys_gtid_pid(sqlite3_column_int64(st, 0));
        (*procs)[*n_procs].name = nsys_xstrdup((const char *)sqlite3_column_text(st, 1));
        (*procs)[*n_procs].main_thread = NULL;
        (*procs)[*n_procs].builds_read = false;
        (*procs)[*n_procs].builds = NULL;
        (*procs)[(*n_procs)++].n_builds = 0;
      }
    }
    sqlite3_finalize(st);
    free(sql);
    if (*n_procs) qsort(*procs, *n_procs, sizeof **procs, nsys__proc_cmp);
  }
  /* main threads (tid == pid): after an exec their name is the program's */
  const char *tn = p->schema.table[NSYS_TBL_THREAD_NAMES];
  if (*n_procs && tn && nsys_schema_has_column(p, NSYS_TBL_THREAD_NAMES, "globalTid") &&
      nsys_schema_has_column(p, NSYS_TBL_THREAD_NAMES, "nameId")) {
    char *sql = nsys_xasprintf("SELECT globalTid, nameId FROM %s WHERE globalTid %% 16777216 = "
                               "(globalTid / 16777216) %% 16777216",
                               tn);
    st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        nsys__proc key = {.pid = nsys_gtid_pid(sqlite3_column_int64(st, 0))};
        nsys__proc *pr = bsearch(&key, *procs, *n_procs, sizeof **procs, nsys__proc_cmp);
        const char *name = nsys_profile_string(p, sqlite3_column_int64(st, 1));
        if (pr && name && *name && !pr->main_thread && strcmp(name, pr->name) != 0)
          pr->main_thread = nsys_xstrdup(name);
      }
    }
    sqlite3_finalize(st);
    free(sql);
  }
  const char *kt = p->schema.table[NSYS_TBL_KERNEL];
  if (n_wanted && kt && nsys_schema_has_column(p, NSYS_TBL_KERNEL, "gridX") &&
      nsys_schema_has_column(p, NSYS_TBL_KERNEL, "globalPid") &&
      nsys_schema_has_column(p, NSYS_TBL_KERNEL, "demangledName")) {
    /* only the kernels that need it: their names bound as parameters */
    bool bind = n_wanted <= NSYS__CONFIG_NAMES;
    nsys_strbuf q;
    nsys_strbuf_init(&q);
    nsys_strbuf_printf(&q, "SELECT demangledName, globalPid, gridX, gridY, gridZ, blockX, blockY, blockZ FROM %s", kt);
    if (bind) {
      nsys_strbuf_puts(&q, " WHERE demangledName IN (SELECT id FROM StringIds WHERE value IN (");
      for (uint32_t k = 0; k < n_wanted; k++) nsys_strbuf_puts(&q, k ? ",?" : "?");
      nsys_strbuf_puts(&q, "))");
    }
    nsys_strbuf_puts(&q, " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8");
    char *sql = nsys_strbuf_steal(&q);
    st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      int bi = 1;
      uint8_t *bound = bind ? nsys_xcalloc(ix->strings.count + 1, 1) : NULL;
      for (uint32_t gi = 0; gi < G->n && bind; gi++) {
        uint32_t fn = G->v[gi].fn;
        if (!G->v[gi].wants_configs || bound[fn]) continue; /* one binding per distinct name */
        bound[fn] = 1;
        sqlite3_bind_text(st, bi++, nsys_strtab_get(&ix->strings, fn), -1, SQLITE_STATIC);
      }
      free(bound);
      while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = nsys_profile_string(p, sqlite3_column_int64(st, 0));
        if (!name) continue;
        uint32_t fn = nsys_strtab_find(&ix->strings, name, strlen(name));
        if (fn == NSYS_STR_NONE) continue;
        int32_t gi = nsys__group_find(G, fn, nsys_gtid_pid(sqlite3_column_int64(st, 1)));
        if (gi < 0 || G->v[gi].n_configs >= NSYS__GRP_CONFIGS) continue;
        nsys__grp *g = &G->v[gi];
        for (int c = 0; c < 6; c++) g->configs[g->n_configs][c] = sqlite3_column_int(st, 2 + c);
        g->n_configs++;
      }
    }
    sqlite3_finalize(st);
    free(sql);
  }
  return !nsys_task_cancelled(task);
}

static void nsys__procs_free(nsys__proc *procs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(procs[i].name), free(procs[i].main_thread), free(procs[i].builds);
  free(procs);
}

static void nsys__push_site(nsys__groups *G, int32_t site) {
  if (G->n_sites == G->cap_sites) {
    G->cap_sites = G->cap_sites ? G->cap_sites * 2 : 256;
    G->sites = nsys_xrealloc(G->sites, sizeof *G->sites * G->cap_sites);
  }
  G->sites[G->n_sites++] = site;
}

static int32_t nsys__cand_site(nsys__mb *b, const nsys_defs *defs, const nsys_src_cand *c,
                               nsys_src_strategy st) {
  int32_t s = nsys__site(b, nsys_strtab_get(&defs->strs, c->file), c->line, st, c->confidence, c->evidence,
                         nsys_def_kind_name((nsys_def_kind)c->kind));
  nsys_src_site *site = &b->m->sites[s];
  if (c->first_line < site->first_line) site->first_line = c->first_line;
  if (c->last_line > site->last_line) site->last_line = c->last_line;
  return s;
}

static bool nsys__resolve_groups(nsys__mb *b, nsys_profile *p, sqlite3 *db, const nsys_index *ix,
                                 nsys_defs *defs, nsys__groups *G, nsys_task *task) {
  nsys_src_map *m = b->m;
  nsys_src_cand cands[NSYS_CAND_MAX], launches[NSYS_CAND_MAX];
  /* phase A: candidate files of each group, before weighing */
  uint32_t n_wanted = 0; /* distinct kernel names that need their launch configurations */
  uint8_t *name_wanted = nsys_xcalloc(ix->strings.count + 1, 1);
  nsys__pf *pf = NULL;
  uint32_t npf = 0, cpf = 0;
  for (uint32_t gi = 0; gi < G->n; gi++) {
    if ((gi & 255) == 0 && nsys_task_cancelled(task)) {
      free(pf);
      free(name_wanted);
      return nsys_task_fail_cancelled(task), false;
    }
    nsys__grp *g = &G->v[gi];
    nsys_kernel_facts f = {.name = nsys_strtab_get(&ix->strings, g->fn)};
    uint32_t n = nsys_kernel_candidates(defs, &f, cands, NULL);
    g->wants_configs = n > 1 || (n == 1 && nsys_kernel_launches(defs, &f, &cands[0], 1, launches, 1) > 0);
    if (g->wants_configs && !name_wanted[g->fn]) {
      name_wanted[g->fn] = 1;
      n_wanted++;
    }
    for (uint32_t k = 0; k < n; k++) {
      bool dup = false;
      for (uint32_t j = 0; j < g->n_files; j++) dup |= g->files[j] == cands[k].file;
      if (dup) continue;
      g->files[g->n_files++] = cands[k].file;
      if (npf == cpf) {
        cpf = cpf ? cpf * 2 : 256;
        pf = nsys_xrealloc(pf, sizeof *pf * cpf);
      }
      pf[npf++] = (nsys__pf){g->pid, cands[k].file, 1};
    }
  }
  if (npf) qsort(pf, npf, sizeof *pf, nsys__pf_cmp);
  uint32_t u = 0;
  for (uint32_t i = 0; i < npf; i++) {
    if (u && pf[u - 1].pid == pf[i].pid && pf[u - 1].file == pf[i].file) pf[u - 1].count++;
    else pf[u++] = pf[i];
  }
  npf = u;
  nsys__progress(task, 55, "reading the profile's process facts");
  nsys__proc *procs = NULL;
  uint32_t nprocs = 0;
  free(name_wanted);
  if (!nsys__read_process_facts(p, db, ix, G, n_wanted, &procs, &nprocs, task)) {
    free(pf);
    nsys__procs_free(procs, nprocs);
    return nsys_task_fail_cancelled(task), false;
  }
  /* phase B: weigh and keep */
  for (uint32_t gi = 0; gi < G->n; gi++) {
    if ((gi & 255) == 0) {
      if (nsys_task_cancelled(task)) {
        free(pf);
        nsys__procs_free(procs, nprocs);
        return nsys_task_fail_cancelled(task), false;
      }
      nsys__progress(task, 60 + (int)((uint64_t)gi * 30 / G->n), "weighing candidate definitions");
    }
    nsys__grp *g = &G->v[gi];
    g->site0 = G->n_sites;
    if (!g->n_files) continue;
    nsys__proc key = {.pid = g->pid};
    nsys__proc *proc = nprocs ? bsearch(&key, procs, nprocs, sizeof *procs, nsys__proc_cmp) : NULL;
    if (proc && !proc->builds_read) {
      proc->builds = nsys_exe_build_lines(defs, proc->name, &proc->n_builds);
      uint32_t n2 = 0, *b2 = proc->main_thread ? nsys_exe_build_lines(defs, proc->main_thread, &n2) : NULL;
      if (n2) {
        proc->builds = nsys_xrealloc(proc->builds, sizeof *proc->builds * (proc->n_builds + n2));
        memcpy(proc->builds + proc->n_builds, b2, sizeof *b2 * n2);
        proc->n_builds += n2;
      }
      free(b2);
      proc->builds_read = true;
    }
    static const uint32_t none = 0;
    nsys__sib_ctx sc = {pf, npf, g->pid};
    nsys_kernel_facts f = {
        .name = nsys_strtab_get(&ix->strings, g->fn),
        .exe = proc ? proc->name : NULL,
        .exe_alt = proc ? proc->main_thread : NULL,
        .n_streams = g->n_streams,
        .configs = (const int32_t(*)[6])g->configs,
        .n_configs = g->n_configs,
        .callchain_file = g->chain_file ? nsys_strtab_get(&m->strs, g->chain_file) : NULL,
        .callchain_launch = g->chain_launch,
        .exe_builds = proc ? (proc->builds ? proc->builds : &none) : NULL,
        .n_exe_builds = proc ? proc->n_builds : 0,
        .siblings = nsys__siblings,
        .siblings_ctx = &sc,
    };
    char why[300];
    if (g->chain_launch > 0 &&
        nsys_launch_refuted(defs, &f, f.callchain_file, g->chain_launch, why, sizeof why)) {
      g->chain_refuted = true;
      f.callchain_launch = 0; /* the frame's file still counts, its launch line does not */
    }
    uint32_t n = nsys_kernel_candidates(defs, &f, cands, NULL);
    for (uint32_t k = 0; k < n; k++) nsys__push_site(G, nsys__cand_site(b, defs, &cands[k], NSYS_SRC_DEFINITION));
    g->n_defs = n;
    for (uint32_t k = 0; k < n; k++) {
      if (cands[k].contradicted || cands[k].confidence < cands[0].confidence - 1e-6f) break;
      uint32_t nl = nsys_kernel_launches(defs, &f, &cands[k], n, launches, NSYS_CAND_MAX);
      for (uint32_t j = 0; j < nl; j++) nsys__push_site(G, nsys__cand_site(b, defs, &launches[j], NSYS_SRC_LAUNCH));
    }
    g->n_sites = G->n_sites - g->site0;
  }
  free(pf);
  nsys__procs_free(procs, nprocs);
  return true;
}

/* The site of an OpenACC record: its srcFile (relative to the root when
 * under it) and lineNo. */
static int32_t nsys__acc_site(nsys__mb *b, nsys_profile *p, const nsys_acc_site *r) {
  const char *file = p ? nsys_profile_string(p, r->file) : NULL;
  if (!file || !*file) return -1;
  const char *func = r->func >= 0 ? nsys_profile_string(p, r->func) : NULL;
  char ev[700];
  snprintf(ev, sizeof ev, "OpenACC trace: launched by the %s at %.300s:%d%s%.100s",
           r->launch ? "compute construct's kernel launch" : "construct", file, r->line,
           func && *func ? " in function " : "", func && *func ? func : "");
  return nsys__site(b, nsys_ws_relative(b->m->root, file), r->line, NSYS_SRC_TRACE, 0.95f, ev, func ? func : "");
}

/* The site of a Python backtrace's launching frame: its file:line, confirmed
 * when that line is a launch line of the kernel. */
static int32_t nsys__pybt_site(nsys__mb *b, nsys_profile *p, const nsys_defs *defs, const nsys_pybt_site *r,
                               const char *kbase) {
  const char *file = nsys_profile_string(p, r->file);
  if (!file || !*file) return -1;
  const char *func = nsys_profile_string(p, r->func);
  const char *rel = nsys_ws_relative(b->m->root, file);
  nsys_frame_site fs;
  bool ws = defs && nsys_python_frame_site(defs, rel, r->line, kbase, &fs);
  char ev[900];
  snprintf(ev, sizeof ev, "nsys Python backtrace of the launching call: %.80s at %.300s:%d (frame %u from the innermost)%s",
           func && *func ? func : "?", rel, r->line, r->depth, ws ? fs.evidence : "");
  return nsys__site(b, rel, r->line, NSYS_SRC_TRACE, ws ? fs.confidence : 0.9f, ev, func ? func : "");
}

static int nsys__group_cmp(const void *x, const void *y) {
  const nsys_src_group *a = x, *b = y;
  if (a->fn != b->fn) return a->fn < b->fn ? -1 : 1;
  return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The groups with sites, kept for source/locate by kernelId. */
static void nsys__keep_groups(nsys_src_map *m, nsys__groups *G) {
  m->groups = nsys_xmalloc(sizeof *m->groups * (G->n + 1));
  for (uint32_t gi = 0; gi < G->n; gi++)
    if (G->v[gi].n_sites)
      m->groups[m->n_groups++] = (nsys_src_group){G->v[gi].fn, G->v[gi].pid, G->v[gi].site0, G->v[gi].n_sites};
  if (m->n_groups) qsort(m->groups, m->n_groups, sizeof *m->groups, nsys__group_cmp);
  m->group_sites = G->sites;
  G->sites = NULL;
}

const nsys_src_group *nsys_src_map_group(const nsys_src_map *m, const nsys_index *ix, uint32_t op) {
  if (op >= ix->ops.n || !m->n_groups) return NULL;
  uint32_t t = ix->ops.track[op];
  const nsys_gpu_track *tr = ix->tracks && t < ix->n_tracks ? &ix->tracks[t] : NULL;
  nsys_src_group key = {ix->ops.full_name[op], tr ? tr->pid : 0, 0, 0};
  return bsearch(&key, m->groups, m->n_groups, sizeof *m->groups, nsys__group_cmp);
}

nsys_src_map *nsys_src_map_build(nsys_profile *p, const nsys_index *ix, nsys_defs *defs,
                                 nsys_task *task) {
  nsys_src_map *m = nsys_xcalloc(1, sizeof *m);
  nsys_strtab_init(&m->strs);
  nsys_strtab_intern(&m->strs, "", 0);
  m->root = nsys_xstrdup(defs ? defs->root : "");
  nsys__mb b = {.m = m};
  sqlite3 *db = NULL;
  uint32_t nops = ix->ops.n;
  m->op_launch = nsys_xmalloc(sizeof *m->op_launch * (nops + 1));
  m->op_def = nsys_xmalloc(sizeof *m->op_def * (nops + 1));
  /* NVTX range names -> sites (per distinct name) */
  uint32_t ns = ix->strings.count;
  int32_t *name_site = nsys_xmalloc(sizeof *name_site * (ns + 1));
  for (uint32_t i = 0; i < ns; i++) name_site[i] = -2;
  uint32_t nr = ix->nvtx.n;
  int32_t *rsite = nsys_xmalloc(sizeof *rsite * (nr + 1));
  for (uint32_t r = 0; r < nr; r++) {
    uint32_t nm = ix->nvtx.name[r];
    if (nm >= ns) { rsite[r] = -1; continue; }
    if (name_site[nm] == -2) {
      const char *text = nsys_strtab_get(&ix->strings, nm);
      char path[512], attr[128];
      int line;
      name_site[nm] = -1;
      if (nsys_parse_source_tag(text, path, sizeof path, &line) ||
          (defs && nsys_parse_source_tag_spaced(text, path, sizeof path, &line) &&
           nsys__workspace_file(defs, nsys_ws_relative(m->root, path)))) {
        char ev[600];
        snprintf(ev, sizeof ev, "launched inside the NVTX source tag range \"%.500s\"", text);
        name_site[nm] = nsys__site(&b, nsys_ws_relative(m->root, path), line, NSYS_SRC_TAG, 0.95f, ev, text);
      } else if (nsys__embedded_tag(text, defs, m->root, path, sizeof path, &line)) {
        char ev[600];
        snprintf(ev, sizeof ev, "launched inside an NVTX range whose text names %.200s:%d (\"%.300s\")", path,
                 line, text);
        name_site[nm] = nsys__site(&b, path, line, NSYS_SRC_TAG, 0.9f, ev, text);
      } else if (defs && nsys__aten_module(text)) {
        const char *cls = nsys__aten_module(text);
        uint32_t n, d0 = nsys_defs_find(defs, cls, &n), nk = 0;
        const nsys_def *best = NULL;
        for (uint32_t k = d0; k < d0 + n; k++)
          if (defs->v[k].kind == NSYS_DEF_PY_MODULE) {
            if (!best) best = &defs->v[k];
            nk++;
          }
        if (best) {
          char ev[600];
          snprintf(ev, sizeof ev, "PyTorch op range \"%.200s\" -> an nn.%s attribute%s", text, cls,
                   nk > 1 ? " (one of several candidates)" : "");
          name_site[nm] = nsys__site(&b, nsys_strtab_get(&defs->strs, best->file), best->line,
                                     NSYS_SRC_MODULE, 0.2f / (float)nk, ev, text);
        }
      } else if (defs && nsys__module_attr(text, attr, sizeof attr)) {
        uint32_t n, d0 = nsys_defs_find(defs, attr, &n), nk = 0;
        const nsys_def *best = NULL;
        for (uint32_t k = d0; k < d0 + n; k++)
          if (defs->v[k].kind == NSYS_DEF_PY_ATTR) {
            if (!best) best = &defs->v[k];
            nk++;
          }
        if (best) {
          char ev[600];
          snprintf(ev, sizeof ev, "module-path range \"%.300s\" -> attribute self.%s%s", text, attr,
                   nk > 1 ? " (one of several candidates)" : "");
          name_site[nm] = nsys__site(&b, nsys_strtab_get(&defs->strs, best->file), best->line,
                                     NSYS_SRC_MODULE, 0.4f / (float)nk, ev, text);
        }
      }
    }
    rsite[r] = name_site[nm];
    if (rsite[r] >= 0 && m->sites[rsite[r]].strategy == NSYS_SRC_TAG) {
      m->sites[rsite[r]].n_ranges++;
      m->sites[rsite[r]].range_ns += ix->nvtx.end[r] - ix->nvtx.start[r];
    }
  }
  /* nearest tagged (or module) ancestor-or-self, memoised */
  int32_t *up = nsys_xmalloc(sizeof *up * (nr + 1));
  for (uint32_t r = 0; r < nr; r++) up[r] = -2;
  int32_t *api_site = nsys_xmalloc(sizeof *api_site * (ix->api.n + 1));
  nsys_acc_site *acc = NULL;
  nsys_pybt_site *pyb = NULL;
  for (uint32_t a = 0; a < ix->api.n; a++) api_site[a] = -1;
  /* the profile's reads run on a private connection that a cancel interrupts */
  if (p) {
    nsys_task open_task; /* a profile we cannot reopen maps without its backtraces */
    nsys_task_init(&open_task);
    db = nsys_profile_open_db(p, SQLITE_OPEN_NOMUTEX, &open_task);
    if (db) sqlite3_progress_handler(db, 10000, nsys__sql_interrupt, task);
  }
  if (db && !nsys__callchains(&b, p, db, ix, defs, api_site, task)) {
    if (nsys_task_cancelled(task)) goto cancelled;
    goto fail;
  }
  if (nsys_task_cancelled(task)) goto cancelled;
  /* OpenACC records around the calls */
  acc = nsys_xmalloc(sizeof *acc * (ix->api.n + 1));
  for (uint32_t a = 0; a < ix->api.n; a++) acc[a].line = 0;
  if (db && !nsys_openacc_sites(db, ix, acc, task)) {
    if (nsys_task_cancelled(task)) goto cancelled;
    goto fail;
  }
  /* nsys Python backtraces at the calls */
  pyb = nsys_xmalloc(sizeof *pyb * (ix->api.n + 1));
  for (uint32_t a = 0; a < ix->api.n; a++) pyb[a].file = 0;
  if (db && !nsys_python_backtraces(db, p, ix, defs, m->root, pyb, task)) {
    if (nsys_task_cancelled(task)) goto cancelled;
    goto fail;
  }
  /* pass 1: launch sites, and the kernels grouped by (name, process) */
  nsys__groups G = {0};
  int32_t *op_group = nsys_xmalloc(sizeof *op_group * (nops + 1));
  nsys__slot *tab = NULL;
  uint32_t tcap = 0, rcap = 0;
  for (uint32_t i = 0; i < nops; i++) {
    m->op_launch[i] = m->op_def[i] = -1;
    op_group[i] = -1;
    if (ix->ops.kind[i] != NSYS_OP_KERNEL) continue;
    if ((i & 65535) == 0) {
      if (nsys_task_cancelled(task)) {
        free(tab);
        free(op_group);
        nsys__groups_free(&G);
        goto cancelled;
      }
      nsys__progress(task, 10 + (int)((uint64_t)i * 40 / (nops + 1)), "attributing kernels");
    }
    int64_t dur = nsys_op_dur(ix, i);
    m->gpu_ns += dur;
    m->n_kernels++;
    int32_t a = ix->ops.api[i];
    int32_t site = -1, module_site = -1, chain_site = -1;
    if (a >= 0 && (uint32_t)a < ix->api.n) {
      const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
      int64_t t = ix->api.start[a];
      uint32_t lo = th->nvtx_first, hi = th->nvtx_first + th->nvtx_count;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->nvtx.start[mid] <= t) lo = mid + 1;
        else hi = mid;
      }
      int32_t r = (int32_t)lo - 1;
      if (r >= (int32_t)th->nvtx_first) {
        int guard = 0;
        while (r >= 0 && ix->nvtx.end[r] < t && guard++ < 4096) r = ix->nvtx.parent[r];
        /* walk up to the innermost tagged range */
        int32_t q = r;
        guard = 0;
        while (q >= 0 && guard++ < 4096) {
          if (rsite[q] >= 0) {
            if (m->sites[rsite[q]].strategy == NSYS_SRC_TAG) {
              site = rsite[q];
              break;
            }
            if (module_site < 0 || m->sites[rsite[q]].confidence > m->sites[module_site].confidence)
              module_site = rsite[q];
          }
          q = ix->nvtx.parent[q];
        }
      }
      if (api_site[a] >= 0 && m->sites[api_site[a]].file != 0) chain_site = api_site[a];
      int32_t ts = acc[a].line > 0 ? nsys__acc_site(&b, p, &acc[a]) : -1;
      if (ts < 0 && pyb[a].file) {
        char kbase[160];
        nsys_symbol_base_name(nsys_strtab_get(&ix->strings, ix->ops.full_name[i]), kbase, sizeof kbase);
        ts = nsys__pybt_site(&b, p, defs, &pyb[a], kbase);
        if (ts >= 0) chain_site = ts; /* the backtrace's file weighs the candidates too */
      }
      if (ts >= 0) site = ts;
      if (site < 0) site = chain_site;
      if (site < 0) site = module_site;
    }
    m->op_launch[i] = site;
    /* a backtrace confirmed by a launch line waits for the profile's launch
     * configuration (pass 3) */
    bool deferred = site >= 0 && m->sites[site].launch > 0 && defs && ix->ops.full_name[i] < ns;
    if (site >= 0 && !deferred) {
      m->strategy_ns[m->sites[site].strategy] += dur;
      nsys__add_row(m, &tab, &tcap, &rcap, (uint32_t)site, ix->ops.name[i], i, dur);
    }
    if (defs && ix->ops.full_name[i] < ns) {
      uint32_t t = ix->ops.track[i];
      const nsys_gpu_track *tr = ix->tracks && t < ix->n_tracks ? &ix->tracks[t] : NULL;
      op_group[i] = (int32_t)nsys__group(&G, ix->ops.full_name[i], tr ? tr->pid : 0, tr ? tr->stream : 0);
      nsys__grp *g = &G.v[op_group[i]];
      if (g->chain_file == 0 && chain_site >= 0) {
        g->chain_file = m->sites[chain_site].file;
        g->chain_launch = m->sites[chain_site].launch;
      }
    }
  }
  free(up);
  up = NULL;
  /* pass 2: each group's candidate definitions and launch lines */
  if (defs && G.n) {
    if (!nsys__resolve_groups(&b, p, db, ix, defs, &G, task)) {
      free(tab);
      free(op_group);
      nsys__groups_free(&G);
      if (nsys_task_cancelled(task)) goto cancelled;
      goto fail;
    }
  }
  nsys__progress(task, 90, "attributing kernels");
  /* pass 3: rows of the definitions and launch lines */
  for (uint32_t i = 0; i < nops; i++) {
    if (op_group[i] < 0) continue;
    if ((i & 65535) == 0 && nsys_task_cancelled(task)) {
      free(tab);
      free(op_group);
      nsys__groups_free(&G);
      goto cancelled;
    }
    nsys__grp *g = &G.v[op_group[i]];
    int64_t dur = nsys_op_dur(ix, i);
    int32_t ls = m->op_launch[i];
    if (ls >= 0 && m->sites[ls].launch > 0) { /* deferred in pass 1 */
      if (g->chain_refuted) {
        if (g->refuted_site < 0) {
          const nsys_src_site *cs = &m->sites[ls];
          char ev[900];
          snprintf(ev, sizeof ev, "%s; but the profile's launch configuration rules out that launch line",
                   nsys_strtab_get(&m->strs, cs->evidence));
          char *file = nsys_xstrdup(nsys_strtab_get(&m->strs, cs->file));
          char *lab = nsys_xstrdup(nsys_strtab_get(&m->strs, cs->label));
          g->refuted_site = nsys__site(&b, file, cs->frame_line, NSYS_SRC_CALLCHAIN, 0.6f, ev, lab);
          free(file);
          free(lab);
        }
        ls = m->op_launch[i] = g->refuted_site;
      }
      m->strategy_ns[NSYS_SRC_CALLCHAIN] += dur;
      nsys__add_row(m, &tab, &tcap, &rcap, (uint32_t)ls, ix->ops.name[i], i, dur);
    }
    for (uint32_t k = 0; k < g->n_sites; k++) {
      int32_t site = G.sites[g->site0 + k];
      uint32_t r = nsys__add_row(m, &tab, &tcap, &rcap, (uint32_t)site, ix->ops.name[i], i, dur);
      if (m->sites[site].strategy == NSYS_SRC_DEFINITION && m->rows[r].candidates < g->n_defs)
        m->rows[r].candidates = g->n_defs;
    }
    if (g->n_defs) {
      m->op_def[i] = G.sites[g->site0];
      m->strategy_ns[NSYS_SRC_DEFINITION] += dur;
    }
    if (g->n_sites > g->n_defs) m->strategy_ns[NSYS_SRC_LAUNCH] += dur;
  }
  free(tab);
  free(op_group);
  nsys__keep_groups(m, &G);
  nsys__groups_free(&G);
  /* sort rows, build the line index */
  pthread_mutex_lock(&nsys__sort_lock);
  nsys__sort_map = m;
  if (m->n_rows) qsort(m->rows, m->n_rows, sizeof *m->rows, nsys__row_cmp);
  pthread_mutex_unlock(&nsys__sort_lock);
  m->lines = nsys_xmalloc(sizeof *m->lines * (m->n_rows + 1));
  for (uint32_t i = 0; i < m->n_rows;) {
    const nsys_src_site *s = &m->sites[m->rows[i].site];
    nsys_src_line *l = &m->lines[m->n_lines];
    *l = (nsys_src_line){s->file, s->line, s->first_line, s->last_line, i, 0, 0, 0};
    while (i < m->n_rows && m->sites[m->rows[i].site].file == s->file &&
           m->sites[m->rows[i].site].line == s->line) {
      const nsys_src_site *si = &m->sites[m->rows[i].site];
      if (si->first_line < l->first_line) l->first_line = si->first_line;
      if (si->last_line > l->last_line) l->last_line = si->last_line;
      l->count++;
      l->total_ns += m->rows[i].total_ns;
      l->kernels += m->rows[i].count;
      i++;
    }
    if (s->file == 0) continue; /* sites without a file are not lines */
    m->n_lines++;
  }
  free(name_site);
  free(rsite);
  free(api_site);
  free(acc);
  free(pyb);
  free(b.slots);
  if (db) sqlite3_close(db);
  return m;
cancelled:
  nsys_task_fail_cancelled(task);
fail:
  if (db) sqlite3_close(db);
  free(name_site);
  free(rsite);
  free(up); /* NULL once passed */
  free(api_site);
  free(acc);
  free(pyb);
  free(b.slots);
  nsys_src_map_free(m);
  return NULL;
}

void nsys_src_map_free(nsys_src_map *m) {
  if (!m) return;
  free(m->root);
  nsys_strtab_free(&m->strs);
  free(m->sites);
  free(m->op_launch);
  free(m->op_def);
  free(m->rows);
  free(m->lines);
  free(m->groups);
  free(m->group_sites);
  free(m);
}

const nsys_src_line *nsys_src_map_at(const nsys_src_map *m, const char *file, int line) {
  const char *rel = nsys_ws_relative(m->root, file);
  uint32_t fid = nsys_strtab_find(&m->strs, rel, strlen(rel));
  if (fid == NSYS_STR_NONE || fid == 0) {
    /* suffix match: "dir/train.py" vs "train.py" */
    size_t rl = strlen(rel);
    for (uint32_t i = 0; i < m->n_lines && fid == NSYS_STR_NONE; i++) {
      const char *f = nsys_strtab_get(&m->strs, m->lines[i].file);
      size_t fl = strlen(f);
      if ((fl > rl && f[fl - rl - 1] == '/' && strcmp(f + fl - rl, rel) == 0) ||
          (rl > fl && rel[rl - fl - 1] == '/' && strcmp(rel + rl - fl, f) == 0))
        fid = m->lines[i].file;
    }
    if (fid == NSYS_STR_NONE || fid == 0) return NULL;
  }
  uint32_t lo = 0, hi = m->n_lines;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const nsys_src_line *l = &m->lines[mid];
    if (l->file < fid || (l->file == fid && l->line < line)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < m->n_lines && m->lines[lo].file == fid && m->lines[lo].line == line) return &m->lines[lo];
  /* a span holding the line: the nearest entry above it (its body, signature
   * continuation) or below it (its template or decorator lines) */
  const nsys_src_line *best = NULL;
  for (uint32_t k = lo; k > 0 && lo - k < 256; k--) {
    const nsys_src_line *l = &m->lines[k - 1];
    if (l->file != fid) break;
    if (l->first_line <= line && line <= l->last_line) {
      best = l;
      break;
    }
  }
  for (uint32_t k = lo; k < m->n_lines && k - lo < 8 && !best; k++) {
    const nsys_src_line *l = &m->lines[k];
    if (l->file != fid) break;
    if (l->first_line <= line && line <= l->last_line) best = l;
  }
  return best;
}

double nsys_src_pct(int64_t part, int64_t whole) {
  return whole > 0 ? (double)(int64_t)((double)part * 10000.0 / (double)whole) / 100.0 : 0.0;
}
