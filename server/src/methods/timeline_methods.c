/* The timeline module's method table, and timeline/tracks.
 *   timeline/tracks  {profileId} -> {tracks, start, end}        (this file)
 *   timeline/range   -> timeline_range.c
 *   nvtx/tree        -> nvtx_tree_methods.c
 *   kernel/details   -> kernel_details_methods.c
 *   search           -> search_methods.c
 *   export/perfetto  -> perfetto_export_methods.c
 * Large answers (events, buckets, tree nodes) are written as JSON text
 * (methods/json_text.h) and attached as raw items, which the reply writer
 * sends without a copy (rpc/json_write.h). docs/protocol.md, protocol/schemas/. */
#include <stdio.h>

#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

static const char *const nsys__tl_kind_names[] = {"gpu", "nvtxProjected", "nvtx", "api"};

static void nsys__thread_label(const nsys_index *ix, uint32_t t, char *out, size_t cap) {
  const nsys_host_thread *th = &ix->threads[t];
  const char *name = nsys__s(ix, th->name);
  if (name[0]) snprintf(out, cap, "%s (pid %u, tid %u)", name, th->pid, th->tid);
  else snprintf(out, cap, "pid %u, tid %u", th->pid, th->tid);
}

static cJSON *nsys__track_json(const nsys_index *ix, const nsys_tl_track *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", t->id);
  cJSON_AddStringToObject(o, "kind", nsys__tl_kind_names[t->kind]);
  char name[400], th[300];
  switch (t->kind) {
  case NSYS_TL_GPU: {
    const nsys_gpu_track *g = &ix->tracks[t->ref];
    snprintf(name, sizeof name, "GPU %d · Stream %lld (%s)", t->device, (long long)t->stream,
             nsys_stream_class_name(g->cls));
    cJSON_AddNumberToObject(o, "device", t->device);
    nsys_json_add_i64(o, "stream", t->stream);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddStringToObject(o, "streamClass", nsys_stream_class_name(g->cls));
    nsys_json_add_i64(o, "busyNs", g->busy_ns);
    break;
  }
  case NSYS_TL_PROJ:
    snprintf(name, sizeof name, "GPU %d · NVTX (projected) depth %d", t->device, t->depth);
    cJSON_AddNumberToObject(o, "device", t->device);
    cJSON_AddNumberToObject(o, "depth", t->depth);
    break;
  case NSYS_TL_NVTX:
    nsys__thread_label(ix, t->thread, th, sizeof th);
    snprintf(name, sizeof name, "%s · NVTX depth %d", th, t->depth);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddNumberToObject(o, "tid", t->tid);
    cJSON_AddNumberToObject(o, "depth", t->depth);
    break;
  case NSYS_TL_API:
    nsys__thread_label(ix, t->thread, th, sizeof th);
    snprintf(name, sizeof name, "%s · CUDA API", th);
    cJSON_AddNumberToObject(o, "pid", t->pid);
    cJSON_AddNumberToObject(o, "tid", t->tid);
    break;
  }
  cJSON_AddStringToObject(o, "name", name);
  if (t->kind == NSYS_TL_NVTX || t->kind == NSYS_TL_API)
    cJSON_AddStringToObject(o, "threadName", nsys__s(ix, ix->threads[t->thread].name));
  cJSON_AddNumberToObject(o, "count", t->count);
  cJSON_AddNumberToObject(o, "order", t->order);
  return o;
}

cJSON *nsys_method_timeline_tracks(nsys_call *call) {
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  cJSON *res = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(res, "tracks");
  for (uint32_t i = 0; i < nsys_tl_track_count(ix); i++)
    cJSON_AddItemToArray(arr, nsys__track_json(ix, nsys_tl_track_at(ix, i)));
  nsys_json_add_i64(res, "start", ix->span_start);
  nsys_json_add_i64(res, "end", ix->span_end);
  nsys_profile_release(p);
  return res;
}


