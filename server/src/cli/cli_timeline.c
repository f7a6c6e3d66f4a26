/* CLI commands of the timeline module; each runs the same method as the
 * server (`--format json` prints exactly its result):
 *   nsys-ai timeline FILE [--start NS] [--end NS] [--width PX] [--tracks ID,ID]
 *   nsys-ai tree FILE [--device D] [--thread TID|PID:TID] [--max-depth N] [--aggregate]
 *   nsys-ai search FILE QUERY [--kinds kernel,nvtx,memcpy,memset,api] [--limit N]
 *   nsys-ai export FILE -o trace.json [--start NS] [--end NS] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"

static bool nsys__opt_i64(const nsys_cli_args *a, const char *key, int64_t *out, bool *given) {
  const char *v = nsys_cli_opt(a, key);
  *given = false;
  if (!v) return true;
  char *e = NULL;
  errno = 0;
  long long x = strtoll(v, &e, 10);
  if (errno || !e || *e || e == v) {
    nsys_cli_error(NSYS_EXIT_USAGE, "--%s: expected an integer, got '%s'", key, v);
    return false;
  }
  *out = x;
  *given = true;
  return true;
}

static int64_t nsys__jint(const cJSON *o, const char *k) { return nsys_json_obj_i64(o, k, 0); }

static const char *nsys__jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* Raw items (big arrays) are JSON text: reparse the result to walk it. */
static cJSON *nsys__reparse(cJSON *res) {
  char *s = nsys_json_print(res, false);
  cJSON_Delete(res);
  cJSON *back = nsys_json_parse(s, strlen(s), NULL);
  free(s);
  return back;
}

/* "a,b,c" -> params[key] = ["a","b","c"]; nothing when csv is NULL. */
static void nsys__add_csv(cJSON *params, const char *key, const char *csv) {
  if (!csv) return;
  cJSON *arr = cJSON_AddArrayToObject(params, key);
  char *copy = nsys_xstrdup(csv);
  for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) cJSON_AddItemToArray(arr, cJSON_CreateString(tok));
  free(copy);
}

static int nsys__finish_json(nsys_cli_args *a, cJSON *res) {
  cJSON *clean = nsys__reparse(res);
  nsys_cli_print_json(clean);
  cJSON_Delete(clean);
  cJSON_Delete(a->opts);
  return NSYS_EXIT_OK;
}

/* ---- timeline ----------------------------------------------------------- */

static int nsys__cmd_timeline(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage("timeline");
  if (a.n_pos != 1) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("timeline");
  }
  int64_t start = 0, end = 0, width = a.format == NSYS_FMT_JSON ? 2000 : 100;
  bool has_s, has_e, has_w;
  if (!nsys__opt_i64(&a, "start", &start, &has_s) || !nsys__opt_i64(&a, "end", &end, &has_e) ||
      !nsys__opt_i64(&a, "width", &width, &has_w)) {
    cJSON_Delete(a.opts);
    return NSYS_EXIT_USAGE;
  }
  if (!has_w && width < 1) width = 100;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  const char *id = nsys_cli_open(&s, a.pos[0], &code);
  cJSON *tracks_res = NULL, *res = NULL;
  if (!id) goto out;
  cJSON *tp = cJSON_CreateObject();
  cJSON_AddStringToObject(tp, "profileId", id);
  tracks_res = nsys_cli_call(&s, "timeline/tracks", tp, &code);
  if (!tracks_res) goto out;
  tracks_res = nsys__reparse(tracks_res);
  if (!has_s) start = nsys__jint(tracks_res, "start");
  if (!has_e) end = nsys__jint(tracks_res, "end");
  if (end <= start) end = start + 1;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "profileId", id);
  nsys_json_add_i64(p, "start", start);
  nsys_json_add_i64(p, "end", end);
  nsys_json_add_i64(p, "width", width);
  nsys__add_csv(p, "tracks", nsys_cli_opt(&a, "tracks"));
  res = nsys_cli_call(&s, "timeline/range", p, &code);
  if (!res) goto out;
  if (a.format == NSYS_FMT_JSON) {
    code = nsys__finish_json(&a, res);
    a.opts = NULL;
    res = NULL;
    goto out;
  }
  res = nsys__reparse(res);
  int64_t r = nsys__jint(res, "resolution"), gs = nsys__jint(res, "start"), ge = nsys__jint(res, "end");
  char rs[32], ws[32];
  nsys_fmt_duration(rs, sizeof rs, r);
  nsys_fmt_duration(ws, sizeof ws, ge - gs);
  printf("window %lld .. %lld ns (%s), %s per column; '#' busy, '.' partly busy\n", (long long)gs, (long long)ge, ws, rs);
  int cols = (int)((ge - gs) / r);
  if (cols > 400) cols = 400;
  char *line = nsys_xmalloc((size_t)cols + 1);
  const cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(res, "tracks")) {
    memset(line, ' ', (size_t)cols);
    line[cols] = '\0';
    int64_t *busy = nsys_xcalloc((size_t)cols + 1, sizeof(int64_t));
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(t, "buckets");
    const cJSON *it;
    if (items) {
      cJSON_ArrayForEach(it, items) {
        int64_t c = (nsys__jint(it, "start") - gs) / r;
        if (c >= 0 && c < cols) busy[c] += nsys__jint(it, "busyNs");
      }
    } else {
      cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(t, "events")) {
        int64_t es = nsys__jint(it, "start"), ee = nsys__jint(it, "end");
        if (es < gs) es = gs;
        if (ee > ge) ee = ge;
        for (int64_t c = (es - gs) / r; c < cols && gs + c * r <= ee; c++) {
          int64_t lo = gs + c * r > es ? gs + c * r : es, hi = gs + (c + 1) * r < ee ? gs + (c + 1) * r : ee;
          if (hi > lo) busy[c] += hi - lo;
          else if (ee == es && c == (es - gs) / r) busy[c] += 1;
        }
      }
    }
    for (int c = 0; c < cols; c++) line[c] = busy[c] <= 0 ? ' ' : busy[c] * 2 >= r ? '#' : '.';
    free(busy);
    printf("%-22.22s |%s|\n", nsys__jstr(t, "id"), line);
  }
  free(line);
out:
  cJSON_Delete(tracks_res);
  cJSON_Delete(res);
  cJSON_Delete(a.opts);
  nsys_cli_session_dispose(&s);
  return code;
}

/* ---- tree --------------------------------------------------------------- */

static void nsys__print_node(const cJSON *n, int depth) {
  char cpu[32], gpu[32], kern[32];
  const cJSON *cpu_ns = cJSON_GetObjectItemCaseSensitive(n, "cpuNs");
  nsys_fmt_duration(cpu, sizeof cpu, nsys_json_i64_or(cpu_ns, nsys__jint(n, "end") - nsys__jint(n, "start")));
  const cJSON *gs = cJSON_GetObjectItemCaseSensitive(n, "gpuStart");
  if (cJSON_IsNumber(gs)) nsys_fmt_duration(gpu, sizeof gpu, nsys__jint(n, "gpuEnd") - nsys__jint(n, "gpuStart"));
  else snprintf(gpu, sizeof gpu, "-");
  nsys_fmt_duration(kern, sizeof kern, nsys__jint(n, "kernelNs"));
  const char *dom = nsys__jstr(n, "domain");
  printf("%*s%s%s%s%s  cpu %s, gpu %s, %lld ops, kernels %s", depth * 2, "", dom[0] ? "[" : "", dom,
         dom[0] ? "] " : "", nsys__jstr(n, "name"), cpu, gpu, (long long)nsys__jint(n, "opCount"), kern);
  const cJSON *inst = cJSON_GetObjectItemCaseSensitive(n, "instances");
  if (cJSON_IsNumber(inst)) printf(", x%lld", (long long)nsys_json_i64_or(inst, 0));
  const cJSON *top = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(n, "topKernels"), 0);
  if (top) printf("; top %s", nsys__jstr(top, "name"));
  putchar('\n');
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(n, "children")) nsys__print_node(c, depth + 1);
}

static int nsys__cmd_tree(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage("tree");
  if (a.n_pos != 1) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("tree");
  }
  int64_t v;
  bool given;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  cJSON *p = cJSON_CreateObject(), *res = NULL;
  static const char *const int_opts[][2] = {{"start", "start"}, {"end", "end"}, {"device", "device"},
                                            {"max-depth", "maxDepth"}, {"top", "topKernels"},
                                            {"parent", "parent"}, {"limit", "limit"},
                                            {"max-bytes", "maxBytes"}};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(int_opts); i++) {
    if (!nsys__opt_i64(&a, int_opts[i][0], &v, &given)) {
      code = NSYS_EXIT_USAGE;
      goto out;
    }
    if (given) nsys_json_add_i64(p, int_opts[i][1], v);
  }
  const char *th = nsys_cli_opt(&a, "thread");
  if (th) {
    if (strchr(th, ':')) cJSON_AddStringToObject(p, "thread", th);
    else cJSON_AddNumberToObject(p, "thread", atof(th));
  }
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a.opts, "aggregate"))) cJSON_AddStringToObject(p, "mode", "aggregate");
  const char *cursor = nsys_cli_opt(&a, "cursor");
  if (cursor) cJSON_AddStringToObject(p, "cursor", cursor);
  /* a terminal prints the whole tree below the level unless told otherwise
   * (still within maxBytes) */
  if (!cJSON_GetObjectItemCaseSensitive(p, "maxDepth")) cJSON_AddNumberToObject(p, "maxDepth", 65535);
  const char *id = nsys_cli_open(&s, a.pos[0], &code);
  if (!id) goto out;
  cJSON_AddStringToObject(p, "profileId", id);
  res = nsys_cli_call(&s, "nvtx/tree", p, &code);
  p = NULL;
  if (!res) goto out;
  if (a.format == NSYS_FMT_JSON) {
    code = nsys__finish_json(&a, res);
    a.opts = NULL;
    res = NULL;
    goto out;
  }
  res = nsys__reparse(res);
  const cJSON *roots = cJSON_GetObjectItemCaseSensitive(res, "nodes");
  if (!cJSON_GetArraySize(roots)) printf("no NVTX ranges\n");
  const cJSON *n;
  int64_t last_pid = -1, last_tid = -1;
  cJSON_ArrayForEach(n, roots) {
    int64_t pid = nsys__jint(n, "pid"), tid = nsys__jint(n, "tid");
    if (cJSON_GetObjectItemCaseSensitive(n, "tid") && (pid != last_pid || tid != last_tid)) {
      printf("thread %lld:%lld\n", (long long)pid, (long long)tid);
      last_pid = pid;
      last_tid = tid;
    }
    nsys__print_node(n, 1);
  }
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "truncated"))) {
    const char *next = nsys__jstr(res, "next");
    printf("(truncated at %lld of %lld nodes at this level%s%s; --max-bytes N shows more)\n",
           (long long)cJSON_GetArraySize(roots), (long long)nsys__jint(res, "total"), next[0] ? ", continue with --cursor " : "",
           next);
  }
out:
  cJSON_Delete(p);
  cJSON_Delete(res);
  cJSON_Delete(a.opts);
  nsys_cli_session_dispose(&s);
  return code;
}

/* ---- search ------------------------------------------------------------- */

static int nsys__cmd_search(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 2, &a)) return nsys_cli_usage("search");
  if (a.n_pos != 2) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("search");
  }
  int64_t limit = 0;
  bool has_limit;
  if (!nsys__opt_i64(&a, "limit", &limit, &has_limit)) {
    cJSON_Delete(a.opts);
    return NSYS_EXIT_USAGE;
  }
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  cJSON *res = NULL;
  const char *id = nsys_cli_open(&s, a.pos[0], &code);
  if (!id) goto out;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "profileId", id);
  cJSON_AddStringToObject(p, "query", a.pos[1]);
  if (has_limit) nsys_json_add_i64(p, "limit", limit);
  nsys__add_csv(p, "kinds", nsys_cli_opt(&a, "kinds"));
  res = nsys_cli_call(&s, "search", p, &code);
  if (!res) goto out;
  if (a.format == NSYS_FMT_JSON) {
    code = nsys__finish_json(&a, res);
    a.opts = NULL;
    res = NULL;
    goto out;
  }
  res = nsys__reparse(res);
  const cJSON *r;
  int n = 0;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(res, "results")) {
    char tot[32];
    nsys_fmt_duration(tot, sizeof tot, nsys__jint(r, "totalNs"));
    printf("%-6s %8lld x  %10s  %s\n", nsys__jstr(r, "kind"), (long long)nsys__jint(r, "count"), tot,
           nsys__jstr(r, "name"));
    n++;
  }
  if (!n) printf("no matches for '%s'\n", a.pos[1]);
out:
  cJSON_Delete(res);
  cJSON_Delete(a.opts);
  nsys_cli_session_dispose(&s);
  return code;
}

/* ---- export ------------------------------------------------------------- */

static int nsys__cmd_export(int argc, char **argv) {
  /* accept "-o PATH" as well as "--output PATH" */
  char **args = nsys_xcalloc((size_t)argc + 1, sizeof(char *));
  for (int i = 0; i < argc; i++) args[i] = strcmp(argv[i], "-o") == 0 ? (char *)"--output" : argv[i];
  nsys_cli_args a;
  bool ok = nsys_cli_parse_args(argc, args, 1, &a);
  free(args);
  if (!ok) return nsys_cli_usage("export");
  const char *outp = nsys_cli_opt(&a, "output");
  if (a.n_pos != 1 || !outp) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("export");
  }
  int64_t v;
  bool given;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  cJSON *res = NULL, *p = cJSON_CreateObject();
  static const char *const keys[] = {"start", "end"};
  for (size_t i = 0; i < 2; i++) {
    if (!nsys__opt_i64(&a, keys[i], &v, &given)) {
      code = NSYS_EXIT_USAGE;
      goto out;
    }
    if (given) nsys_json_add_i64(p, keys[i], v);
  }
  const char *id = nsys_cli_open(&s, a.pos[0], &code);
  if (!id) goto out;
  cJSON_AddStringToObject(p, "profileId", id);
  cJSON_AddStringToObject(p, "path", outp);
  res = nsys_cli_call(&s, "export/perfetto", p, &code);
  p = NULL;
  if (!res) goto out;
  if (a.format == NSYS_FMT_JSON) {
    nsys_cli_print_json(res);
  } else {
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(res, "slices");
    printf("wrote %s: %lld GPU slices, %lld NVTX slices, %lld API slices, %lld flows (open it in ui.perfetto.dev)\n",
           outp, (long long)nsys__jint(sl, "gpu"), (long long)nsys__jint(sl, "nvtx"), (long long)nsys__jint(sl, "api"),
           (long long)nsys__jint(res, "flows"));
  }
out:
  cJSON_Delete(p);
  cJSON_Delete(res);
  cJSON_Delete(a.opts);
  nsys_cli_session_dispose(&s);
  return code;
}

const nsys_cli_command nsys_cli_timeline[] = {
    {"timeline", "FILE [--start NS] [--end NS] [--width PX] [--tracks ID,...] [--format text|json]",
     "GPU streams, projected NVTX, NVTX and CUDA API rows over a time window (zoom buckets)", nsys__cmd_timeline},
    {"tree", "FILE [--device D] [--thread TID|PID:TID] [--max-depth N] [--aggregate] [--parent ID] [--limit N] [--cursor TOKEN] [--max-bytes N] [--format text|json]",
     "NVTX range tree with GPU projection, op counts, kernel time and top kernels", nsys__cmd_tree},
    {"search", "FILE QUERY [--kinds kernel,nvtx,memcpy,memset,api] [--limit N] [--format text|json]",
     "kernel and NVTX names matching a substring or glob, with counts and total time", nsys__cmd_search},
    {"export", "FILE -o TRACE.json [--start NS] [--end NS] [--format text|json]",
     "write Chrome Trace JSON for ui.perfetto.dev (GPU streams, threads, NVTX, launch arrows)", nsys__cmd_export},
    {NULL, NULL, NULL, NULL},
};
