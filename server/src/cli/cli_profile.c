/* CLI commands of the profile module:
 *   nsys-ai info FILE [--format text|json]
 * --format json prints exactly the result of profile/info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"

#define NSYS__MAX_LISTED 8 /* processes / threads / streams shown in text mode */

static const char *nsys__str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool nsys__value(const cJSON *v, double *out) {
  if (cJSON_IsNumber(v)) *out = v->valuedouble;
  return cJSON_IsNumber(v);
}

static bool nsys__num(const cJSON *o, const char *key, double *out) {
  return nsys__value(cJSON_GetObjectItemCaseSensitive(o, key), out);
}

static int nsys__cmp_busiest(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  int nx = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x, "threads"));
  int ny = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(y, "threads"));
  if (nx != ny) return nx > ny ? -1 : 1;
  double px = 0, py = 0;
  nsys__num(x, "pid", &px);
  nsys__num(y, "pid", &py);
  return px < py ? -1 : px > py;
}

static void nsys__print_info_text(const cJSON *info) {
  const char *path = nsys__str(info, "path");
  const char *nv = nsys__str(info, "nsysVersion"), *sv = nsys__str(info, "schemaVersion");
  printf("%s\n", path ? path : "?");
  printf("  nsys %s, schema %s (%s)\n", nv ? nv : "unknown", sv ? sv : "unknown",
         nsys__str(info, "schemaGeneration") ? nsys__str(info, "schemaGeneration") : "?");

  const cJSON *span = cJSON_GetObjectItemCaseSensitive(info, "span");
  double d = 0;
  int64_t s0, e0; /* exact: epoch clocks exceed what a double holds */
  if (cJSON_IsObject(span) && nsys_json_get_i64(cJSON_GetObjectItemCaseSensitive(span, "start"), &s0) &&
      nsys_json_get_i64(cJSON_GetObjectItemCaseSensitive(span, "end"), &e0))
    printf("  span     %lld .. %lld ns (%.3f ms)\n", (long long)s0, (long long)e0, (double)(e0 - s0) / 1e6);
  else
    printf("  span     no timed events\n");
  if (nsys__num(info, "durationNs", &d)) printf("  capture  %.3f ms\n", d / 1e6);

  const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(info, "gpus");
  const cJSON *g;
  printf("  GPUs     %d\n", cJSON_GetArraySize(gpus));
  cJSON_ArrayForEach(g, gpus) {
    double id = 0, sm = 0, mem = 0;
    nsys__num(g, "id", &id);
    const char *name = nsys__str(g, "name"), *cc = nsys__str(g, "computeCapability");
    printf("    [%.0f] %s", id, name ? name : "(unnamed)");
    if (nsys__num(g, "smCount", &sm)) printf(", %g SMs", sm);
    if (nsys__num(g, "memoryBytes", &mem)) printf(", %.1f GiB", mem / (1024.0 * 1024 * 1024));
    if (cc) printf(", sm_%s", cc);
    printf("\n");
  }

  const cJSON *devices = cJSON_GetObjectItemCaseSensitive(info, "devices"), *dv;
  cJSON_ArrayForEach(dv, devices) {
    double id = 0;
    nsys__num(dv, "id", &id);
    const cJSON *streams = cJSON_GetObjectItemCaseSensitive(dv, "streams"), *st;
    int n = cJSON_GetArraySize(streams), k = 0;
    printf("  device %.0f: %d stream%s:", id, n, n == 1 ? "" : "s");
    cJSON_ArrayForEach(st, streams) {
      if (k++ >= NSYS__MAX_LISTED * 2) {
        printf(" ...");
        break;
      }
      double sid = 0;
      nsys__value(st, &sid);
      printf(" %.0f", sid);
    }
    printf("\n");
  }

  /* Busiest processes first (most threads): system daemons sink to "... more". */
  const cJSON *procs = cJSON_GetObjectItemCaseSensitive(info, "processes"), *pr;
  int np = cJSON_GetArraySize(procs);
  const cJSON **order = nsys_xcalloc((size_t)np + 1, sizeof *order);
  int k0 = 0;
  cJSON_ArrayForEach(pr, procs) order[k0++] = pr;
  qsort(order, (size_t)np, sizeof *order, nsys__cmp_busiest);
  printf("  processes %d\n", np);
  for (int i = 0; i < np; i++) {
    if (i >= NSYS__MAX_LISTED) {
      printf("    ... %d more\n", np - NSYS__MAX_LISTED);
      break;
    }
    pr = order[i];
    double pid = 0;
    nsys__num(pr, "pid", &pid);
    const char *name = nsys__str(pr, "name");
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(pr, "threads"), *th;
    int nt = cJSON_GetArraySize(threads), k = 0;
    printf("    %.0f %s (%d thread%s)", pid, name ? name : "?", nt, nt == 1 ? "" : "s");
    cJSON_ArrayForEach(th, threads) {
      if (k >= 4) {
        printf(", ...");
        break;
      }
      double tid = 0;
      nsys__num(th, "tid", &tid);
      const char *tn = nsys__str(th, "name");
      printf("%s%.0f%s%s", k ? ", " : ": ", tid, tn ? " " : "", tn ? tn : "");
      k++;
    }
    printf("\n");
  }
  free(order);

  const cJSON *counts = cJSON_GetObjectItemCaseSensitive(info, "counts"), *c;
  printf("  counts  ");
  cJSON_ArrayForEach(c, counts) {
    double v = 0;
    nsys__value(c, &v);
    printf(" %s=%.0f", c->string, v);
  }
  printf("\n");
  const cJSON *features = cJSON_GetObjectItemCaseSensitive(info, "features"), *f;
  printf("  features");
  int nf = 0;
  cJSON_ArrayForEach(f, features) {
    if (cJSON_IsTrue(f)) {
      printf(" %s", f->string);
      nf++;
    }
  }
  printf("%s\n", nf ? "" : " (none)");
}

static int nsys__cmd_info(int argc, char **argv) {
  nsys_cli_args a;
  if (!nsys_cli_parse_args(argc, argv, 1, &a)) return nsys_cli_usage("info");
  if (a.n_pos != 1 || cJSON_GetArraySize(a.opts) != 0) {
    cJSON_Delete(a.opts);
    return nsys_cli_usage("info");
  }
  if (a.format == NSYS_FMT_MD) a.format = NSYS_FMT_TEXT;
  nsys_cli_session s;
  nsys_cli_session_init(&s);
  int code = NSYS_EXIT_OK;
  const char *id = nsys_cli_open(&s, a.pos[0], &code);
  if (id) {
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "profileId", id);
    cJSON *info = nsys_cli_call(&s, "profile/info", params, &code);
    if (info) {
      if (a.format == NSYS_FMT_JSON) nsys_cli_print_json(info);
      else nsys__print_info_text(info);
      cJSON_Delete(info);
    }
  }
  nsys_cli_session_dispose(&s);
  cJSON_Delete(a.opts);
  return code;
}

const nsys_cli_command nsys_cli_profile[] = {
    {"info", "FILE [--format text|json]",
     "summary of a profile: versions, span, GPUs, streams, processes, counts, features",
     nsys__cmd_info},
    {NULL, NULL, NULL, NULL},
};
