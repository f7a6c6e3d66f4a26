/* JSON-RPC handlers of source/map, source/kernelsAt, source/locate and
 * source/refine, and the per-(profile, root) map cache. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/run_compare.h"
#include "common/util.h"
#include "index/index.h"
#include "profile/profile.h"
#include "methods/reply_limit.h"
#include "rpc/method_table.h"
#include "rpc/params.h"
#include "source/defs.h"
#include "source/pyscan.h"
#include "source/source_map.h"
#include "source/workspace.h"

/* ---- cache: one map per (profile identity, root) ---- */

#define NSYS__MAP_CACHE 6
static pthread_mutex_t nsys__mc_lock = PTHREAD_MUTEX_INITIALIZER;
static nsys_src_map *nsys__mc[NSYS__MAP_CACHE];
static uint64_t nsys__mc_tick[NSYS__MAP_CACHE], nsys__tick;

static void nsys__map_release(nsys_src_map *m) {
  if (!m) return;
  pthread_mutex_lock(&nsys__mc_lock);
  bool f = --m->refs == 0;
  pthread_mutex_unlock(&nsys__mc_lock);
  if (f) nsys_src_map_free(m);
}

static void nsys__profile_key(const nsys_profile *p, char *key, size_t cap) {
  snprintf(key, cap, "%s:%llu:%llu:%lld:%lld", p->id, (unsigned long long)p->st_dev,
           (unsigned long long)p->st_ino, (long long)p->st_size, (long long)p->st_mtime_ns);
}

/* Finds a cached map; root NULL means "the most recent map of this profile". */
static nsys_src_map *nsys__map_lookup(const char *key, const char *root) {
  nsys_src_map *best = NULL;
  int bi = -1;
  pthread_mutex_lock(&nsys__mc_lock);
  for (int i = 0; i < NSYS__MAP_CACHE; i++) {
    nsys_src_map *m = nsys__mc[i];
    if (!m || strcmp(m->key, key) != 0) continue;
    if (root && strcmp(m->root, root) != 0) continue;
    if (!best || nsys__mc_tick[i] > nsys__mc_tick[bi]) best = m, bi = i;
  }
  if (best) {
    best->refs++;
    nsys__mc_tick[bi] = ++nsys__tick;
  }
  pthread_mutex_unlock(&nsys__mc_lock);
  return best;
}

/* The map of params.profileId for `root`, built once and cached. *pp is set
 * to the retained profile (release it, even when the map is NULL) or stays
 * NULL when the profile itself could not be had. */
static nsys_src_map *nsys__map_get(nsys_call *call, const char *root, nsys_profile **pp,
                                   const nsys_index **ix_out) {
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", pp);
  if (!ix) return NULL;
  nsys_profile *p = *pp;
  *ix_out = ix;
  nsys_call_progress_begin(call, "source/map");
  char key[96];
  nsys__profile_key(p, key, sizeof key);
  nsys_src_map *m = nsys__map_lookup(key, root ? root : NULL);
  if (m) return m;
  nsys_defs *defs = NULL;
  if (root && *root) {
    nsys_call_progress(call, 2, "scanning the workspace");
    defs = nsys_defs_get(root, &call->task);
    if (!defs) return NULL; /* cancelled */
  }
  m = nsys_src_map_build(p, ix, defs, &call->task);
  nsys_defs_release(defs);
  if (!m) return NULL;
  snprintf(m->key, sizeof m->key, "%s", key);
  pthread_mutex_lock(&nsys__mc_lock);
  int slot = 0;
  for (int i = 0; i < NSYS__MAP_CACHE; i++) {
    if (!nsys__mc[i]) { slot = i; break; }
    if (nsys__mc_tick[i] < nsys__mc_tick[slot]) slot = i;
  }
  if (nsys__mc[slot] && --nsys__mc[slot]->refs == 0) nsys_src_map_free(nsys__mc[slot]);
  nsys__mc[slot] = m;
  nsys__mc_tick[slot] = ++nsys__tick;
  m->refs = 2;
  pthread_mutex_unlock(&nsys__mc_lock);
  return m;
}

/* params.workspaceRoot -> realpath (NULL when absent and optional). */
static bool nsys__root_param(nsys_call *call, bool required, char **out) {
  const char *root = NULL;
  *out = NULL;
  if (!nsys_param_string(call, "workspaceRoot", required, &root)) return false;
  if (!root) return true;
  char *r = realpath(root, NULL);
  if (!r) return nsys_call_fail(call, NSYS_E_IO, "workspaceRoot %s: no such directory", root), false;
  *out = r;
  return true;
}

static int64_t nsys__json_bytes(const cJSON *o) {
  char *t = cJSON_PrintUnformatted(o);
  int64_t n = t ? (int64_t)strlen(t) + 1 : 0;
  free(t);
  return n;
}

static void nsys__explain(const nsys_src_map *m, const nsys_index *ix, const nsys_src_row *r,
                          char *out, size_t cap) {
  char tot[32];
  nsys_fmt_duration(tot, sizeof tot, r->total_ns);
  const nsys_src_site *s = &m->sites[r->site];
  snprintf(out, cap, "%u x %s, %s total (%.2f%% of GPU time): %s", r->count,
           nsys_strtab_get(&ix->strings, r->kname), tot, nsys_src_pct(r->total_ns, m->gpu_ns),
           nsys_strtab_get(&m->strs, s->evidence));
}

/* The lines a hover answers on, when more than the site's own line. */
static void nsys__span_json(cJSON *o, const nsys_src_site *s) {
  if (s->line <= 0 || (s->first_line == s->line && s->last_line == s->line)) return;
  cJSON *sp = cJSON_AddObjectToObject(o, "span");
  cJSON_AddNumberToObject(sp, "startLine", s->first_line);
  cJSON_AddNumberToObject(sp, "endLine", s->last_line);
}

static cJSON *nsys__row_json(const nsys_src_map *m, const nsys_index *ix, const nsys_src_row *r,
                             bool explain) {
  const nsys_src_site *s = &m->sites[r->site];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", nsys_strtab_get(&ix->strings, r->kname));
  cJSON_AddNumberToObject(o, "kernelId", r->first_op);
  cJSON_AddNumberToObject(o, "count", r->count);
  cJSON_AddNumberToObject(o, "totalNs", (double)r->total_ns);
  cJSON_AddNumberToObject(o, "avgNs", r->count ? (double)(r->total_ns / r->count) : 0);
  cJSON_AddNumberToObject(o, "pctGpu", nsys_src_pct(r->total_ns, m->gpu_ns));
  cJSON_AddStringToObject(o, "strategy", nsys_src_strategy_name((nsys_src_strategy)s->strategy));
  cJSON_AddNumberToObject(o, "confidence", (double)(int)(s->confidence * 100.0f + 0.5f) / 100.0);
  cJSON_AddStringToObject(o, "evidence", nsys_strtab_get(&m->strs, s->evidence));
  if (r->candidates > 1) cJSON_AddNumberToObject(o, "candidates", r->candidates);
  nsys__span_json(o, s);
  if (explain) {
    char ex[900];
    nsys__explain(m, ix, r, ex, sizeof ex);
    cJSON_AddStringToObject(o, "explanation", ex);
  }
  return o;
}

static void nsys__summary(cJSON *res, const nsys_src_map *m) {
  cJSON_AddStringToObject(res, "workspaceRoot", m->root);
  cJSON_AddNumberToObject(res, "gpuTimeNs", (double)m->gpu_ns);
  cJSON_AddNumberToObject(res, "kernels", m->n_kernels);
  cJSON *st = cJSON_AddObjectToObject(res, "strategies");
  for (int s = 0; s < NSYS_SRC__COUNT; s++) {
    cJSON *o = cJSON_AddObjectToObject(st, nsys_src_strategy_name((nsys_src_strategy)s));
    cJSON_AddNumberToObject(o, "totalNs", (double)m->strategy_ns[s]);
    cJSON_AddNumberToObject(o, "pctGpu", nsys_src_pct(m->strategy_ns[s], m->gpu_ns));
  }
}

cJSON *nsys_method_source_map(nsys_call *call) {
  char *root = NULL;
  int64_t per_line = 20, max_bytes = NSYS_REPLY_MAX_BYTES;
  if (!nsys__root_param(call, true, &root) ||
      !nsys_param_int64(call, NSYS_P_SOURCE_MAP_KERNELS_PER_LINE, &per_line) ||
      !nsys_reply_max_bytes(call, &max_bytes)) {
    free(root);
    return NULL;
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = NULL;
  nsys_src_map *m = nsys__map_get(call, root, &p, &ix);
  cJSON *res = NULL;
  if (m) {
    res = cJSON_CreateObject();
    nsys__summary(res, m);
    cJSON *files = cJSON_AddArrayToObject(res, "files");
    cJSON *cur = NULL, *lines = NULL;
    uint32_t cur_file = UINT32_MAX;
    int64_t file_ns = 0, used = 4096; /* the summary and the tags' share is bounded below */
    bool truncated = false;
    for (uint32_t i = 0; i < m->n_lines; i++) {
      const nsys_src_line *l = &m->lines[i];
      if (l->file != cur_file) {
        if (cur) {
          cJSON_AddNumberToObject(cur, "totalNs", (double)file_ns);
          cJSON_AddNumberToObject(cur, "pctGpu", nsys_src_pct(file_ns, m->gpu_ns));
          /* the reply-size rule: whole files only, in order, while they fit */
          used += nsys__json_bytes(cur);
          if (used > max_bytes) {
            cJSON_DeleteItemFromArray(files, cJSON_GetArraySize(files) - 1);
            cur = NULL;
            truncated = true;
            break;
          }
        }
        cur = cJSON_CreateObject();
        cJSON_AddItemToArray(files, cur);
        cJSON_AddStringToObject(cur, "file", nsys_strtab_get(&m->strs, l->file));
        lines = cJSON_AddArrayToObject(cur, "lines");
        cur_file = l->file;
        file_ns = 0;
      }
      file_ns += l->total_ns;
      cJSON *lo = cJSON_CreateObject();
      cJSON_AddNumberToObject(lo, "line", l->line);
      cJSON_AddNumberToObject(lo, "count", l->kernels);
      cJSON_AddNumberToObject(lo, "totalNs", (double)l->total_ns);
      cJSON_AddNumberToObject(lo, "pctGpu", nsys_src_pct(l->total_ns, m->gpu_ns));
      cJSON *ks = cJSON_AddArrayToObject(lo, "kernels");
      for (uint32_t k = 0; k < l->count && k < (uint32_t)per_line; k++)
        cJSON_AddItemToArray(ks, nsys__row_json(m, ix, &m->rows[l->first + k], false));
      cJSON_AddItemToArray(lines, lo);
    }
    if (cur) {
      cJSON_AddNumberToObject(cur, "totalNs", (double)file_ns);
      cJSON_AddNumberToObject(cur, "pctGpu", nsys_src_pct(file_ns, m->gpu_ns));
      used += nsys__json_bytes(cur);
      if (used > max_bytes) {
        cJSON_DeleteItemFromArray(files, cJSON_GetArraySize(files) - 1);
        truncated = true;
      }
    }
    cJSON_AddBoolToObject(res, "truncated", truncated);
    /* every NVTX source tag seen, with or without kernels */
    cJSON *tags = cJSON_AddArrayToObject(res, "tags");
    for (uint32_t s = 0; s < m->n_sites; s++) {
      const nsys_src_site *st = &m->sites[s];
      if (st->strategy != NSYS_SRC_TAG || st->n_ranges == 0) continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "file", nsys_strtab_get(&m->strs, st->file));
      cJSON_AddNumberToObject(o, "line", st->line);
      cJSON_AddStringToObject(o, "text", nsys_strtab_get(&m->strs, st->label));
      cJSON_AddNumberToObject(o, "ranges", st->n_ranges);
      cJSON_AddNumberToObject(o, "cpuNs", (double)st->range_ns);
      used += nsys__json_bytes(o);
      if (used > max_bytes) {
        cJSON_Delete(o);
        cJSON_ReplaceItemInObject(res, "truncated", cJSON_CreateTrue());
        break;
      }
      cJSON_AddItemToArray(tags, o);
    }
    nsys__map_release(m);
  }
  if (p) nsys_profile_release(p);
  free(root);
  return res;
}

/* Appends o to arr while the reply stays within max_bytes (the first entry
 * always, so a reply is never empty for the limit's sake); else frees it,
 * sets *truncated and returns false. */
static bool nsys__append_capped(cJSON *arr, cJSON *o, int64_t *used, int64_t max_bytes, bool *truncated) {
  *used += nsys__json_bytes(o);
  if (*used > max_bytes && cJSON_GetArraySize(arr) > 0) { /* the first entry always comes */
    cJSON_Delete(o);
    *truncated = true;
    return false;
  }
  cJSON_AddItemToArray(arr, o);
  return true;
}

cJSON *nsys_method_source_kernels_at(nsys_call *call) {
  const char *file = NULL;
  int64_t line = 0, max_bytes = NSYS_REPLY_MAX_BYTES, used = 1024;
  bool truncated = false;
  char *root = NULL;
  if (!nsys_param_string(call, "file", true, &file) ||
      !nsys_param_int64(call, NSYS_P_SOURCE_KERNELS_AT_LINE, &line) ||
      !nsys__root_param(call, false, &root) || !nsys_reply_max_bytes(call, &max_bytes)) {
    free(root);
    return NULL;
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = NULL;
  nsys_src_map *m = nsys__map_get(call, root, &p, &ix);
  cJSON *res = NULL;
  if (m) {
    res = cJSON_CreateObject();
    const nsys_src_line *l = nsys_src_map_at(m, file, (int)line);
    cJSON_AddStringToObject(res, "file", l ? nsys_strtab_get(&m->strs, l->file) : file);
    cJSON_AddNumberToObject(res, "line", (double)line);
    cJSON_AddNumberToObject(res, "count", l ? l->kernels : 0);
    cJSON_AddNumberToObject(res, "totalNs", l ? (double)l->total_ns : 0);
    cJSON_AddNumberToObject(res, "pctGpu", l ? nsys_src_pct(l->total_ns, m->gpu_ns) : 0);
    cJSON *ks = cJSON_AddArrayToObject(res, "kernels");
    for (uint32_t k = 0; l && k < l->count && k < 50; k++)
      if (!nsys__append_capped(ks, nsys__row_json(m, ix, &m->rows[l->first + k], true), &used, max_bytes,
                               &truncated))
        break;
    if (truncated) cJSON_AddTrueToObject(res, "truncated");
    nsys__map_release(m);
  }
  if (p) nsys_profile_release(p);
  free(root);
  return res;
}

typedef struct { uint32_t site; uint32_t count; int64_t ns; } nsys__cand;
static int nsys__cand_cmp(const void *x, const void *y, void *ctx) {
  const nsys__cand *a = x, *b = y;
  const nsys_src_map *m = ctx;
  float ca = m->sites[a->site].confidence, cb = m->sites[b->site].confidence;
  if (ca != cb) return ca > cb ? -1 : 1;
  return (a->ns < b->ns) - (a->ns > b->ns);
}

cJSON *nsys_method_source_locate(nsys_call *call) {
  int64_t kid = -1, max_bytes = NSYS_REPLY_MAX_BYTES, used = 1024;
  bool truncated = false;
  const char *name = NULL;
  char *root = NULL;
  if (!nsys_param_int64(call, NSYS_P_SOURCE_LOCATE_KERNEL_ID, &kid) ||
      !nsys_param_string(call, "name", false, &name) || !nsys__root_param(call, false, &root) ||
      !nsys_reply_max_bytes(call, &max_bytes)) {
    free(root);
    return NULL;
  }
  if (kid < 0 && !name) {
    free(root);
    return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params: give kernelId or name");
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = NULL;
  nsys_src_map *m = nsys__map_get(call, root, &p, &ix);
  cJSON *res = NULL;
  if (m) {
    nsys__cand *c = nsys_xcalloc(m->n_sites + 1, sizeof *c);
    uint32_t nc = 0;
    uint32_t want = NSYS_STR_NONE;
    const char *kname = NULL;
    if (kid >= 0) {
      if ((uint64_t)kid >= ix->ops.n || ix->ops.kind[kid] != NSYS_OP_KERNEL) {
        nsys_call_fail(call, NSYS_E_NOT_FOUND, "no kernel with kernelId %lld", (long long)kid);
      } else {
        kname = nsys_strtab_get(&ix->strings, ix->ops.name[kid]);
        /* its launch site, then every candidate definition and launch line of
         * its name in its process */
        int64_t dur = nsys_op_dur(ix, (uint32_t)kid);
        if (m->op_launch[kid] >= 0) c[nc++] = (nsys__cand){(uint32_t)m->op_launch[kid], 1, dur};
        const nsys_src_group *g = nsys_src_map_group(m, ix, (uint32_t)kid);
        for (uint32_t k = 0; g && k < g->count && nc < m->n_sites; k++) {
          uint32_t site = (uint32_t)m->group_sites[g->first + k];
          bool dup = false;
          for (uint32_t j = 0; j < nc; j++) dup |= c[j].site == site;
          if (!dup) c[nc++] = (nsys__cand){site, 1, dur};
        }
      }
    } else {
      want = nsys_strtab_find(&ix->strings, name, strlen(name));
      if (want != NSYS_STR_NONE) {
        /* the short name of ops whose short or full name is `name` */
        for (uint32_t i = 0; i < ix->ops.n; i++)
          if (ix->ops.full_name[i] == want || ix->ops.name[i] == want) {
            want = ix->ops.name[i];
            kname = nsys_strtab_get(&ix->strings, want);
            break;
          }
      }
      if (!kname) {
        nsys_call_fail(call, NSYS_E_NOT_FOUND, "no kernel named '%s' in the profile", name);
      } else {
        for (uint32_t r = 0; r < m->n_rows; r++) {
          if (m->rows[r].kname != want) continue;
          c[nc++] = (nsys__cand){m->rows[r].site, m->rows[r].count, m->rows[r].total_ns};
        }
      }
    }
    if (kname) {
      qsort_r(c, nc, sizeof *c, nsys__cand_cmp, m);
      res = cJSON_CreateObject();
      cJSON_AddStringToObject(res, "name", kname);
      if (kid >= 0) cJSON_AddNumberToObject(res, "kernelId", (double)kid);
      cJSON *arr = cJSON_AddArrayToObject(res, "candidates");
      for (uint32_t i = 0; i < nc; i++) {
        const nsys_src_site *s = &m->sites[c[i].site];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", nsys_strtab_get(&m->strs, s->file));
        cJSON_AddNumberToObject(o, "line", s->line);
        cJSON_AddStringToObject(o, "strategy", nsys_src_strategy_name((nsys_src_strategy)s->strategy));
        cJSON_AddNumberToObject(o, "confidence", (double)(int)(s->confidence * 100.0f + 0.5f) / 100.0);
        cJSON_AddStringToObject(o, "evidence", nsys_strtab_get(&m->strs, s->evidence));
        cJSON_AddNumberToObject(o, "count", c[i].count);
        cJSON_AddNumberToObject(o, "totalNs", (double)c[i].ns);
        nsys__span_json(o, s);
        if (!nsys__append_capped(arr, o, &used, max_bytes, &truncated)) break;
      }
      if (truncated) cJSON_AddTrueToObject(res, "truncated");
    }
    free(c);
    nsys__map_release(m);
  }
  if (p) nsys_profile_release(p);
  free(root);
  return res;
}

/* ---- refine ---- */

static void nsys__suggest(cJSON *cand, const char *root, const char *file, int line) {
  cJSON *sug = cJSON_AddArrayToObject(cand, "statements");
  char *abs = NULL, *rel = NULL, *rroot = NULL, err[600];
  if (!root || !*root ||
      nsys_ws_resolve(root, file, &abs, &rel, &rroot, err, sizeof err) != NSYS_OK) {
    cJSON_AddStringToObject(cand, "note", "source file not found under the workspace root");
    free(abs), free(rel), free(rroot);
    return;
  }
  size_t len = 0;
  char *text = nsys_ws_read_file(abs, 16u << 20, &len, err, sizeof err);
  if (!text) {
    cJSON_AddStringToObject(cand, "note", err);
    free(abs), free(rel), free(rroot);
    return;
  }
  nsys_py_file f;
  nsys_py_scan(&f, text, len);
  int s = nsys_py_stmt_at_line(&f, line - 1);
  int h = s;
  /* descend through a function-level marker */
  if (h >= 0 && f.stmts[h].opens_block) {
    int c = h + 1;
    if (c <= f.stmts[h].block_end && f.stmts[c].kind == NSYS_PY_STRING) c = nsys_py_unit_end(&f, c) + 1;
    if (c <= f.stmts[h].block_end && f.stmts[c].marker && f.stmts[c].kind == NSYS_PY_WITH &&
        nsys_py_unit_end(&f, c) == f.stmts[h].block_end)
      h = c;
  }
  if (h < 0) {
    cJSON_AddStringToObject(cand, "note", "no statement starts on the tagged line (file changed?)");
  } else if (!f.stmts[h].opens_block) {
    cJSON_AddStringToObject(cand, "note",
                            "a single statement: its kernels come from the functions it calls; "
                            "annotate those functions next");
    if (f.stmts[h].name[0]) cJSON_AddStringToObject(cand, "calls", f.stmts[h].name);
  } else {
    int first = -1, last = -1;
    for (int u = h + 1; u <= f.stmts[h].block_end;) {
      int e = nsys_py_unit_end(&f, u);
      const nsys_py_stmt *st = &f.stmts[u];
      bool useful = !(st->marker && st->kind == NSYS_PY_WITH) &&
                    (st->has_call || st->has_op || st->opens_block) && st->kind != NSYS_PY_STRING &&
                    st->kind != NSYS_PY_IMPORT && st->kind != NSYS_PY_FROM &&
                    st->kind != NSYS_PY_DEF && st->kind != NSYS_PY_CLASS;
      if (useful) {
        const nsys_py_line *pl = &f.lines[st->first_line];
        const char *p = text + pl->off + st->indent_len;
        size_t n = pl->len - st->indent_len;
        if (n > 120) n = 120;
        char *t = nsys_xstrndup(p, n);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "line", st->first_line + 1);
        cJSON_AddStringToObject(o, "text", t);
        cJSON_AddItemToArray(sug, o);
        free(t);
        if (first < 0) first = st->first_line;
        last = f.stmts[e].last_line;
      }
      u = e + 1;
    }
    if (first >= 0) {
      cJSON *ap = cJSON_AddObjectToObject(cand, "annotate");
      cJSON_AddStringToObject(ap, "file", rel);
      cJSON_AddStringToObject(ap, "workspaceRoot", rroot);
      cJSON *sc = cJSON_AddObjectToObject(ap, "scope");
      cJSON_AddNumberToObject(sc, "startLine", first);
      cJSON_AddNumberToObject(sc, "endLine", last);
      cJSON_AddStringToObject(ap, "granularity", "statement");
    }
  }
  nsys_py_free(&f);
  free(text);
  free(abs), free(rel), free(rroot);
}

cJSON *nsys_method_source_refine(nsys_call *call) {
  char *root = NULL;
  int64_t limit = 20;
  if (!nsys__root_param(call, true, &root) ||
      !nsys_param_int64(call, NSYS_P_SOURCE_REFINE_LIMIT, &limit)) {
    free(root);
    return NULL;
  }
  nsys_profile *p = NULL;
  const nsys_index *ix = NULL;
  nsys_src_map *m = nsys__map_get(call, root, &p, &ix);
  cJSON *res = NULL;
  if (m) {
    /* the tag statistics are capture/run_compare's (one definition with runs/compare) */
    nsys_rc_stats st;
    nsys_rc_stats_of(m, &st);
    uint32_t n_split = 0;
    const nsys_rc_tag **split = nsys_rc_split_by_time(&st, &n_split);
    res = cJSON_CreateObject();
    nsys__summary(res, m);
    cJSON_AddNumberToObject(res, "coverage", st.coverage);
    cJSON_AddNumberToObject(res, "taggedPct", st.tagged_pct);
    cJSON_AddNumberToObject(res, "taggedRanges", st.tagged_ranges);
    cJSON *cands = cJSON_AddArrayToObject(res, "candidates");
    for (uint32_t i = 0; i < n_split && (int64_t)i < limit; i++) {
      const nsys_rc_tag *t = split[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "file", t->file);
      cJSON_AddNumberToObject(o, "line", t->line);
      cJSON_AddStringToObject(o, "tag", t->tag);
      cJSON_AddNumberToObject(o, "totalNs", (double)t->ns);
      cJSON_AddNumberToObject(o, "pctGpu", nsys_src_pct(t->ns, m->gpu_ns));
      cJSON_AddNumberToObject(o, "distinctKernels", t->distinct);
      cJSON *top = cJSON_AddArrayToObject(o, "topKernels");
      int nt = 0;
      for (uint32_t r = 0; r < m->n_rows && nt < 5; r++)
        if (m->rows[r].site == t->site) {
          cJSON_AddItemToArray(top, nsys__row_json(m, ix, &m->rows[r], false));
          nt++;
        }
      nsys__suggest(o, root, t->file, t->line);
      cJSON_AddItemToArray(cands, o);
    }
    free(split);
    nsys_rc_stats_free(&st);
    nsys__map_release(m);
  }
  if (p) nsys_profile_release(p);
  free(root);
  return res;
}
