/* export/perfetto {profileId, path, start?, end?} -> writes Chrome Trace JSON
 * that ui.perfetto.dev loads: GPUs and host processes as processes, streams
 * and threads as threads, NVTX ranges as slices, flow arrows from API call to
 * kernel. docs/protocol.md ("export/perfetto"), protocol/schemas/export.perfetto.*. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "methods/json_text.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

#define NSYS__GPU_PID_BASE 1000000000

typedef struct {
  FILE *f;
  bool first;
  int64_t origin;
  nsys_escaped_names *names;
  uint64_t events, slices_gpu, slices_nvtx, slices_api, flows;
} nsys__pf;

static void nsys__pf_sep(nsys__pf *w) {
  if (!w->first) fputs(",\n", w->f);
  w->first = false;
  w->events++;
}

/* Microseconds since the origin with all nanosecond digits (-0.500 keeps its sign). */
static void nsys__pf_ts(nsys__pf *w, const char *key, int64_t ns) {
  int64_t rel = ns - w->origin;
  unsigned long long a = rel < 0 ? 0ULL - (unsigned long long)rel : (unsigned long long)rel;
  fprintf(w->f, "\"%s\":%s%llu.%03llu", key, rel < 0 ? "-" : "", a / 1000, a % 1000);
}

static void nsys__pf_meta(nsys__pf *w, const char *what, long long pid, long long tid, const char *name) {
  nsys__pf_sep(w);
  nsys_strbuf b;
  nsys_strbuf_init(&b);
  nsys_json_escape(&b, name);
  fprintf(w->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":%s}}", what, pid, tid, b.data);
  nsys_strbuf_free(&b);
}

cJSON *nsys_method_export_perfetto(nsys_call *call) {
  const char *path = NULL;
  int64_t start = INT64_MIN, end = INT64_MAX;
  if (!nsys_param_string(call, "path", true, &path) ||
      !nsys_param_int64(call, NSYS_P_EXPORT_PERFETTO_START, &start) ||
      !nsys_param_int64(call, NSYS_P_EXPORT_PERFETTO_END, &end))
    return NULL;
  if (!path[0]) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.path: must not be empty");
  if (end < start) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.end: must not be before params.start");
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (ix) nsys_call_progress_begin(call, "export/perfetto");
  if (!ix) return NULL;
  char *tmp = nsys_xasprintf("%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_IO, "params.path: cannot write %s", path);
  }
  nsys_escaped_names names = {&ix->strings, NULL, NULL};
  nsys__pf w = {f, true, ix->span_start, &names, 0, 0, 0, 0, 0};
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
  /* processes and threads */
  int32_t last_dev = INT32_MIN;
  for (uint32_t t = 0; t < ix->n_tracks; t++) {
    const nsys_gpu_track *g = &ix->tracks[t];
    long long gp = NSYS__GPU_PID_BASE + g->device;
    char name[128];
    if (g->device != last_dev) {
      snprintf(name, sizeof name, "GPU %d", g->device);
      nsys__pf_meta(&w, "process_name", gp, 0, name);
      last_dev = g->device;
    }
    snprintf(name, sizeof name, "Stream %lld (%s, pid %u)", (long long)g->stream, nsys_stream_class_name(g->cls), g->pid);
    nsys__pf_meta(&w, "thread_name", gp, g->stream, name);
  }
  uint32_t last_pid = UINT32_MAX;
  for (uint32_t t = 0; t < ix->n_threads; t++) {
    const nsys_host_thread *th = &ix->threads[t];
    char name[300];
    if (th->pid != last_pid) {
      snprintf(name, sizeof name, "Process %u", th->pid);
      nsys__pf_meta(&w, "process_name", th->pid, 0, name);
      last_pid = th->pid;
    }
    const char *tn = nsys__s(ix, th->name);
    snprintf(name, sizeof name, "%s%s%u", tn, tn[0] ? " " : "tid ", th->tid);
    nsys__pf_meta(&w, "thread_name", th->pid, th->tid, name);
  }
  /* GPU ops, with flow ends */
  /* cancellation: polled every 1024 events (one event is ~1 us of printf: about 1 ms between polls) */
  for (uint32_t i = 0; i < ix->ops.n; i++) {
    if ((i & 0x3FF) == 0 && nsys_call_cancelled(call)) break;
    if (ix->ops.start[i] > end || ix->ops.end[i] < start) continue;
    const nsys_gpu_track *g = &ix->tracks[ix->ops.track[i]];
    nsys__pf_sep(&w);
    /* slice name: the display name; the names CUPTI recorded go in args */
    uint32_t disp = nsys_op_display_name(ix, i);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":%s,\"pid\":%d,\"tid\":%lld,", nsys_op_kind_name(ix->ops.kind[i]),
            nsys_escaped_name(&names, disp), NSYS__GPU_PID_BASE + g->device, (long long)g->stream);
    nsys__pf_ts(&w, "ts", ix->ops.start[i]);
    fputc(',', f);
    int64_t d = nsys_op_dur(ix, i);
    fprintf(f, "\"dur\":%lld.%03lld,\"args\":{\"kernelId\":%u", (long long)(d / 1000), (long long)(d % 1000), i);
    if (ix->ops.kind[i] == NSYS_OP_KERNEL) {
      fprintf(f, ",\"shortName\":%s", nsys_escaped_name(&names, ix->ops.name[i]));
      fprintf(f, ",\"demangledName\":%s", nsys_escaped_name(&names, ix->ops.full_name[i]));
    }
    fputs("}}", f);
    w.slices_gpu++;
    int32_t a = ix->ops.api[i];
    if (a >= 0 && ix->api.start[a] <= end && ix->api.end[a] >= start) {
      nsys__pf_sep(&w);
      fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%u,\"pid\":%d,\"tid\":%lld,", i,
              NSYS__GPU_PID_BASE + g->device, (long long)g->stream);
      nsys__pf_ts(&w, "ts", ix->ops.start[i]);
      fputc('}', f);
      const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
      nsys__pf_sep(&w);
      fprintf(f, "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%u,\"pid\":%u,\"tid\":%u,", i, th->pid, th->tid);
      nsys__pf_ts(&w, "ts", ix->api.start[a]);
      fputc('}', f);
      w.flows++;
    }
  }
  /* host: NVTX ranges and CUDA API calls */
  for (uint32_t i = 0; i < ix->nvtx.n; i++) {
    if ((i & 0x3FF) == 0 && nsys_call_cancelled(call)) break;
    if (ix->nvtx.start[i] > end || ix->nvtx.end[i] < start) continue;
    const nsys_host_thread *th = &ix->threads[ix->nvtx.thread[i]];
    nsys__pf_sep(&w);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":%s,\"pid\":%u,\"tid\":%u,", nsys_escaped_name(&names, ix->nvtx.name[i]),
            th->pid, th->tid);
    nsys__pf_ts(&w, "ts", ix->nvtx.start[i]);
    int64_t d = ix->nvtx.end[i] - ix->nvtx.start[i];
    fprintf(f, ",\"dur\":%lld.%03lld,\"args\":{\"nvtxId\":%u,\"domain\":%s}}", (long long)(d / 1000), (long long)(d % 1000),
            i, nsys_escaped_name(&names, ix->nvtx.domain[i]));
    w.slices_nvtx++;
  }
  for (uint32_t i = 0; i < ix->api.n; i++) {
    if ((i & 0x3FF) == 0 && nsys_call_cancelled(call)) break;
    if (ix->api.start[i] > end || ix->api.end[i] < start) continue;
    const nsys_host_thread *th = &ix->threads[ix->api.thread[i]];
    nsys__pf_sep(&w);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_api\",\"name\":%s,\"pid\":%u,\"tid\":%u,", nsys_escaped_name(&names, ix->api.name[i]),
            th->pid, th->tid);
    nsys__pf_ts(&w, "ts", ix->api.start[i]);
    int64_t d = ix->api.end[i] - ix->api.start[i];
    fprintf(f, ",\"dur\":%lld.%03lld,\"args\":{\"apiId\":%u}}", (long long)(d / 1000), (long long)(d % 1000), i);
    w.slices_api++;
  }
  fputs("\n]}\n", f);
  nsys_escaped_names_free(&names);
  bool ok = !ferror(f);
  long size = ftell(f);
  ok = fclose(f) == 0 && ok;
  if (nsys_call_cancelled(call)) {
    remove(tmp);
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail_cancelled(call);
  }
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    free(tmp);
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_IO, "params.path: cannot write %s", path);
  }
  free(tmp);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "path", path);
  cJSON_AddNumberToObject(res, "bytes", (double)size);
  cJSON_AddNumberToObject(res, "events", (double)w.events);
  cJSON *sl = cJSON_AddObjectToObject(res, "slices");
  cJSON_AddNumberToObject(sl, "gpu", (double)w.slices_gpu);
  cJSON_AddNumberToObject(sl, "nvtx", (double)w.slices_nvtx);
  cJSON_AddNumberToObject(sl, "api", (double)w.slices_api);
  cJSON_AddNumberToObject(res, "flows", (double)w.flows);
  nsys_profile_release(p);
  return res;
}
