/* The timeline methods through the method table (same path as the server and
 * the CLI): timeline/range bucket/event counts against the index arrays,
 * nvtx/tree inclusive counts, kernel/details, search, export/perfetto, and
 * bad params. Runs on real profiles when present. */
#include <unistd.h>

#include "index/index_query.h"
#include "index_test_util.h"
#include "rpc/method_table.h"

static nsys_profile_registry *reg;

static const char *add_profile(t_profile *tp) {
  static char id[16];
  nsys_profile_retain(tp->p); /* the registry's reference; ours stays for t_close */
  nsys_profile *got = nsys_registry_add(reg, tp->p);
  snprintf(id, sizeof id, "%s", got->id);
  nsys_profile_release(got);
  return id;
}

static cJSON *call_method(const char *method, cJSON *params, nsys_err *err) {
  const nsys_method *m = nsys_method_find(method);
  if (!m) {
    cJSON_Delete(params);
    *err = NSYS_E_METHOD_NOT_FOUND;
    return NULL;
  }
  nsys_call c;
  nsys_call_init(&c, method, params, reg);
  cJSON *res = m->fn(&c);
  *err = c.task.err;
  if (!res && getenv("VERBOSE")) fprintf(stderr, "%s: %s\n", method, c.task.err_msg);
  nsys_call_dispose(&c);
  cJSON_Delete(params);
  return res;
}

/* raw items hold JSON text: parse the printed result back */
static cJSON *roundtrip(cJSON *res) {
  if (!res) return NULL;
  char *s = cJSON_PrintUnformatted(res);
  cJSON_Delete(res);
  cJSON *back = cJSON_Parse(s);
  free(s);
  CHECK(back != NULL);
  return back;
}

static int64_t jint(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

static cJSON *params(const char *id) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "profileId", id);
  return p;
}

static void check_range(const char *pid, const nsys_index *ix, int64_t qs, int64_t qe, int width) {
  cJSON *p = params(pid);
  cJSON_AddNumberToObject(p, "start", (double)qs);
  cJSON_AddNumberToObject(p, "end", (double)qe);
  cJSON_AddNumberToObject(p, "width", width);
  nsys_err err;
  cJSON *r = roundtrip(call_method("timeline/range", p, &err));
  CHECK(r != NULL);
  if (!r) return;
  int64_t res = jint(r, "resolution"), gs = jint(r, "start"), ge = jint(r, "end");
  CHECK(res >= 1 && (res & (res - 1)) == 0);
  CHECK(gs <= qs && ge >= qe && gs % res == 0 && ge % res == 0);
  CHECK((ge - gs) / res <= width + 1);
  const cJSON *tracks = cJSON_GetObjectItemCaseSensitive(r, "tracks");
  CHECK_EQ(cJSON_GetArraySize(tracks), nsys_tl_track_count(ix));
  int k = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, tracks) {
    const nsys_tl_track *tt = nsys_tl_track_at(ix, (uint32_t)k++);
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(t, "events");
    const cJSON *bk = cJSON_GetObjectItemCaseSensitive(t, "buckets");
    CHECK((ev != NULL) != (bk != NULL));
    if (tt->kind != NSYS_TL_GPU) continue;
    const nsys_gpu_track *g = &ix->tracks[tt->ref];
    uint32_t in_grid = 0, overlap = 0;
    for (uint32_t i = g->first; i < g->first + g->count; i++) {
      in_grid += ix->ops.start[i] >= gs && ix->ops.start[i] < ge;
      overlap += ix->ops.start[i] < qe && ix->ops.end[i] >= qs;
    }
    if (ev) {
      CHECK_EQ(cJSON_GetArraySize(ev), overlap);
    } else {
      int64_t sum = 0, prev_end = INT64_MIN;
      const cJSON *b;
      cJSON_ArrayForEach(b, bk) {
        int64_t bs = jint(b, "start"), be = jint(b, "end");
        CHECK(be - bs == res && bs % res == 0 && bs >= prev_end);
        CHECK(jint(b, "busyNs") >= 0 && jint(b, "busyNs") <= res);
        prev_end = be;
        sum += jint(b, "count");
      }
      CHECK_EQ(sum, in_grid);
    }
  }
  cJSON_Delete(r);
}

/* The whole tree, asked for explicitly: every depth, every root, no byte cap. */
static cJSON *whole_tree(const char *pid, bool aggregate) {
  nsys_err err;
  cJSON *p = params(pid);
  cJSON_AddNumberToObject(p, "maxDepth", 65535);
  cJSON_AddNumberToObject(p, "limit", 1e9);
  cJSON_AddNumberToObject(p, "maxBytes", 1099511627776.0);
  if (aggregate) cJSON_AddStringToObject(p, "mode", "aggregate");
  return roundtrip(call_method("nvtx/tree", p, &err));
}

static int64_t count_nodes(const cJSON *nodes) {
  int64_t k = 0;
  const cJSON *n;
  cJSON_ArrayForEach(n, nodes) k += 1 + count_nodes(cJSON_GetObjectItemCaseSensitive(n, "children"));
  return k;
}

static void check_tree(const char *pid, const nsys_index *ix) {
  cJSON *r = whole_tree(pid, false);
  CHECK(r != NULL);
  if (!r) return;
  /* every op launched inside a root range on its thread counts once in that root;
   * roots of one thread don't overlap, so the root op counts sum to the ops
   * whose API call lies inside some root */
  int64_t roots_sum = 0;
  const cJSON *n;
  cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(r, "nodes")) roots_sum += jint(n, "opCount");
  CHECK(roots_sum <= (int64_t)ix->ops.n);
  CHECK_EQ(count_nodes(cJSON_GetObjectItemCaseSensitive(r, "nodes")), ix->nvtx.n);
  CHECK_EQ(jint(r, "nodeCount"), ix->nvtx.n);
  cJSON_Delete(r);
  cJSON *a = whole_tree(pid, true);
  CHECK(a != NULL);
  if (a) {
    int64_t agg_sum = 0, inst = 0;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(a, "nodes")) {
      agg_sum += jint(n, "opCount");
      inst += jint(n, "instances");
    }
    CHECK_EQ(agg_sum, roots_sum);
    CHECK_EQ(jint(a, "rangeCount"), ix->nvtx.n);
    CHECK(inst <= (int64_t)ix->nvtx.n);
  }
  cJSON_Delete(a);
}

static void check_misc(const char *pid, const nsys_index *ix, const char *dir) {
  nsys_err err;
  if (ix->ops.n) {
    cJSON *p = params(pid);
    cJSON_AddNumberToObject(p, "kernelId", ix->ops.n - 1);
    cJSON *d = roundtrip(call_method("kernel/details", p, &err));
    CHECK(d != NULL);
    if (d) {
      CHECK(cJSON_GetObjectItemCaseSensitive(d, "columns") != NULL);
      CHECK_EQ(jint(d, "start"), ix->ops.start[ix->ops.n - 1]);
    }
    cJSON_Delete(d);
    p = params(pid);
    cJSON_AddNumberToObject(p, "kernelId", ix->ops.n);
    CHECK(call_method("kernel/details", p, &err) == NULL && err == NSYS_E_NOT_FOUND);
    uint32_t k = 0;
    while (k < ix->ops.n && ix->ops.kind[k] != NSYS_OP_KERNEL) k++;
    const char *kn = k < ix->ops.n ? nsys_strtab_get(&ix->strings, ix->ops.name[k]) : "";
    if (kn[0] && !strpbrk(kn, "*?[")) {
      p = params(pid);
      cJSON_AddStringToObject(p, "query", kn);
      cJSON *s = roundtrip(call_method("search", p, &err));
      CHECK(s != NULL && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "results")) >= 1);
      cJSON_Delete(s);
    }
  }
  char *out = nsys_xasprintf("%s/trace-%d.json", dir, (int)getpid());
  cJSON *p = params(pid);
  cJSON_AddStringToObject(p, "path", out);
  cJSON *e = call_method("export/perfetto", p, &err);
  CHECK(e != NULL);
  if (e) {
    FILE *f = fopen(out, "rb");
    CHECK(f != NULL);
    if (f) {
      fseek(f, 0, SEEK_END);
      long n = ftell(f);
      fseek(f, 0, SEEK_SET);
      char *buf = nsys_xmalloc((size_t)n + 1);
      CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
      buf[n] = 0;
      fclose(f);
      cJSON *j = cJSON_Parse(buf);
      CHECK(j != NULL);
      CHECK_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "traceEvents")), jint(e, "events"));
      cJSON_Delete(j);
      free(buf);
    }
    unlink(out);
  }
  cJSON_Delete(e);
  free(out);
  /* bad params */
  p = params(pid);
  cJSON_AddNumberToObject(p, "start", 10);
  cJSON_AddNumberToObject(p, "end", 5);
  cJSON_AddNumberToObject(p, "width", 100);
  CHECK(call_method("timeline/range", p, &err) == NULL && err == NSYS_E_INVALID_PARAMS);
  p = params(pid);
  cJSON_AddNumberToObject(p, "start", 0);
  cJSON_AddNumberToObject(p, "end", 5);
  cJSON_AddNumberToObject(p, "width", 0);
  CHECK(call_method("timeline/range", p, &err) == NULL && err == NSYS_E_INVALID_PARAMS);
  p = params(pid);
  cJSON_AddNumberToObject(p, "start", 0);
  cJSON_AddNumberToObject(p, "end", 5);
  cJSON_AddNumberToObject(p, "width", 10);
  cJSON *tr = cJSON_AddArrayToObject(p, "tracks");
  cJSON_AddItemToArray(tr, cJSON_CreateString("gpu:99:99"));
  CHECK(call_method("timeline/range", p, &err) == NULL && err == NSYS_E_NOT_FOUND);
  CHECK(call_method("timeline/tracks", params("nope"), &err) == NULL && err == NSYS_E_PROFILE_NOT_OPEN);
}

static void run(const char *path) {
  t_profile tp = t_open(path);
  const nsys_index *ix = t_index(&tp);
  CHECK(ix != NULL);
  if (!ix) return;
  const char *id = add_profile(&tp);
  nsys_err err;
  cJSON *tracks = call_method("timeline/tracks", params(id), &err);
  CHECK(tracks != NULL);
  cJSON_Delete(tracks);
  int64_t s = ix->span_start, e = ix->span_end > ix->span_start ? ix->span_end : ix->span_start + 1;
  check_range(id, ix, s, e, 2000);
  check_range(id, ix, s, e, 7);
  check_range(id, ix, s + (e - s) / 3, s + (e - s) / 3 + (e - s) / 50 + 1, 1000);
  check_range(id, ix, s + (e - s) / 2, s + (e - s) / 2 + 1000, 100);
  check_tree(id, ix);
  check_misc(id, ix, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  nsys_registry_remove(reg, id);
  t_close(&tp);
}

int main(int argc, char **argv) {
  setenv("NSYS_AI_NO_INDEX_CACHE", "1", 0);
  reg = nsys_registry_new();
  if (argc > 1) {
    for (int i = 1; i < argc; i++) run(argv[i]);
  } else {
    const char *shared = getenv("NSYS_AI_SHARED");
    static const char *names[] = {"nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2025_h200_nvtx13k",
                                  "nsys2022_nvtx_only_negative_ts", "nsys_failed_capture_no_meta",
                                  "nsys2023_rtx3060_23k"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      char *path = nsys_xasprintf("%s/profiles/%s.sqlite", shared ? shared : "../shared", names[i]);
      if (access(path, R_OK) == 0) run(path);
      else nsys_check_skip("%s: absent", path);
      free(path);
    }
  }
  nsys_registry_free(reg);
  return nsys_check_done("timeline_methods");
}
