/* nsys-ai-bench-source: server-side time of source/kernelsAt (handler + JSON
 * serialisation, no transport), in-process, after one source/map built the
 * (profile, root) map. Prints one JSON object. Driven by bench/bench_source.py.
 *   nsys-ai-bench-source PROFILE ROOT N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "profile/profile.h"
#include "rpc/call.h"
#include "rpc/method_table.h"

static cJSON *run(nsys_profile_registry *reg, const char *method, cJSON *params, double *ms) {
  const nsys_method *m = nsys_method_find(method);
  nsys_call c;
  nsys_call_init(&c, method, params, reg);
  int64_t t0 = nsys_now_ns();
  cJSON *r = m->fn(&c);
  char *s = r ? cJSON_PrintUnformatted(r) : NULL;
  *ms = (double)(nsys_now_ns() - t0) / 1e6;
  if (!r) fprintf(stderr, "%s: %s\n", method, c.task.err_msg);
  free(s);
  nsys_call_dispose(&c);
  return r;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: nsys-ai-bench-source PROFILE ROOT N\n");
    return 1;
  }
  int n = atoi(argv[3]);
  if (n < 1) n = 1;
  nsys_profile_registry *reg = nsys_registry_new();
  nsys_call c;
  nsys_call_init(&c, "profile/open", NULL, NULL);
  nsys_profile *p = nsys_profile_open(argv[1], &c.task);
  if (!p) {
    fprintf(stderr, "open: %s\n", c.task.err_msg);
    return 2;
  }
  nsys_call_dispose(&c);
  p = nsys_registry_add(reg, p);
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(params, "profileId", p->id);
  cJSON_AddStringToObject(params, "workspaceRoot", argv[2]);
  double map_ms;
  cJSON *map = run(reg, "source/map", params, &map_ms);
  cJSON_Delete(params);
  if (!map) return 2;
  /* (file, line) pairs of the map */
  const char *files[4096];
  int lines[4096], nl = 0;
  const cJSON *f, *l;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(map, "files")) {
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(f, "lines")) {
      if (nl < 4096) {
        files[nl] = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "file"));
        lines[nl++] = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "line"));
      }
    }
  }
  if (nl == 0) {
    fprintf(stderr, "no mapped lines\n");
    return 2;
  }
  double *v = nsys_xmalloc(sizeof *v * (size_t)n);
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    int k = (int)(seed % (uint64_t)nl);
    cJSON *pp = cJSON_CreateObject();
    cJSON_AddStringToObject(pp, "profileId", p->id);
    cJSON_AddStringToObject(pp, "file", files[k]);
    cJSON_AddNumberToObject(pp, "line", lines[k] + (i % 10 == 9 ? 1000 : 0));
    cJSON *r = run(reg, "source/kernelsAt", pp, &v[i]);
    cJSON_Delete(r);
    cJSON_Delete(pp);
  }
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  printf("{\"mapBuildMs\": %.3f, \"calls\": %d, \"p50Ms\": %.4f, \"p99Ms\": %.4f, \"maxMs\": %.4f}\n", map_ms, n,
         v[n / 2], v[(int)((double)n * 0.99) < n ? (int)((double)n * 0.99) : n - 1], v[n - 1]);
  free(v);
  cJSON_Delete(map);
  nsys_profile_release(p);
  nsys_registry_free(reg);
  return 0;
}
