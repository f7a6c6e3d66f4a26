/* JSON-RPC handlers for the profile module: params -> core call -> JSON.
 *   profile/open  {path, workDoneToken?} -> {profileId, info}
 *   profile/info  {profileId}            -> info
 *   profile/close {profileId}            -> {closed: true}
 *   profile/list  {}                     -> {profiles: [{profileId, path}]}
 * The info object is documented in docs/protocol.md ("Profiles") and
 * protocol/schemas/profile.info.result.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "index/index.h"
#include "profile/profile.h"
#include "rpc/call.h"
#include "rpc/jsonrpc.h"
#include "rpc/method_table.h"
#include "rpc/params.h"

static void nsys__add_int_or_null(cJSON *o, const char *key, bool known, int64_t v) {
  if (known) nsys_json_add_i64(o, key, v);
  else cJSON_AddNullToObject(o, key);
}

static void nsys__add_str_or_null(cJSON *o, const char *key, const char *s) {
  if (s) cJSON_AddStringToObject(o, key, s);
  else cJSON_AddNullToObject(o, key);
}

/* File paths are bytes: make them valid UTF-8 for JSON. */
static void nsys__add_path(cJSON *o, const char *key, const char *path) {
  char *clean = nsys_utf8_sanitize(path, strlen(path));
  cJSON_AddStringToObject(o, key, clean);
  free(clean);
}

static cJSON *nsys__gpu_json(const nsys_gpu_info *g) {
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "id", g->id);
  nsys__add_str_or_null(o, "name", g->name);
  nsys__add_int_or_null(o, "smCount", g->sm_count > 0, g->sm_count);
  nsys__add_int_or_null(o, "memoryBytes", g->memory_bytes > 0, g->memory_bytes);
  nsys__add_int_or_null(o, "bandwidthBytesPerSec", g->bandwidth_bytes_per_sec > 0,
                        g->bandwidth_bytes_per_sec);
  nsys__add_int_or_null(o, "clockHz", g->clock_hz > 0, g->clock_hz);
  if (g->cc_major > 0) {
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor < 0 ? 0 : g->cc_minor);
    cJSON_AddStringToObject(o, "computeCapability", cc);
  } else {
    cJSON_AddNullToObject(o, "computeCapability");
  }
  return o;
}

static cJSON *nsys__info_json(const nsys_profile *p) {
  const nsys_info *in = &p->info;
  cJSON *o = cJSON_CreateObject();
  nsys__add_path(o, "path", p->path);
  if (p->sqlite_path && strcmp(p->sqlite_path, p->path) != 0)
    nsys__add_path(o, "sqlitePath", p->sqlite_path);
  nsys__add_str_or_null(o, "nsysVersion", in->nsys_version);
  nsys__add_str_or_null(o, "schemaVersion", in->schema_version);
  cJSON_AddStringToObject(o, "schemaGeneration", nsys_schema_gen_name(p->schema.gen));
  if (in->has_span) {
    cJSON *span = cJSON_AddObjectToObject(o, "span");
    nsys_json_add_i64(span, "start", in->span_start);
    nsys_json_add_i64(span, "end", in->span_end);
  } else {
    cJSON_AddNullToObject(o, "span");
  }
  nsys__add_int_or_null(o, "utcEpochNs", in->has_utc_epoch, in->utc_epoch_ns);
  nsys__add_int_or_null(o, "durationNs", in->duration_ns >= 0, in->duration_ns);

  cJSON *counts = cJSON_AddObjectToObject(o, "counts");
  nsys_json_add_i64(counts, "kernels", in->n_kernels);
  nsys_json_add_i64(counts, "memcpy", in->n_memcpy);
  nsys_json_add_i64(counts, "memset", in->n_memset);
  nsys_json_add_i64(counts, "runtime", in->n_runtime);
  nsys_json_add_i64(counts, "nvtx", in->n_nvtx);
  nsys_json_add_i64(counts, "syncs", in->n_syncs);
  nsys_json_add_i64(counts, "osrt", in->n_osrt);
  nsys_json_add_i64(counts, "cpuSamples", in->n_cpu_samples);
  nsys_json_add_i64(counts, "graphLaunches", in->n_graph_launches);
  nsys_json_add_i64(counts, "cudaEvents", in->n_cuda_events);

  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  for (int i = 0; i < in->n_gpus; i++) cJSON_AddItemToArray(gpus, nsys__gpu_json(&in->gpus[i]));

  cJSON *devices = cJSON_AddArrayToObject(o, "devices");
  for (int i = 0; i < in->n_devices; i++) {
    cJSON *d = cJSON_CreateObject();
    nsys_json_add_i64(d, "id", in->devices[i].id);
    cJSON *streams = cJSON_AddArrayToObject(d, "streams");
    for (int k = 0; k < in->devices[i].n_streams; k++)
      cJSON_AddItemToArray(streams, nsys_json_i64(in->devices[i].streams[k]));
    cJSON_AddItemToArray(devices, d);
  }

  cJSON *procs = cJSON_AddArrayToObject(o, "processes");
  for (int i = 0; i < in->n_processes; i++) {
    const nsys_process_info *pr = &in->processes[i];
    cJSON *po = cJSON_CreateObject();
    nsys_json_add_i64(po, "pid", pr->pid);
    nsys__add_str_or_null(po, "name", pr->name);
    cJSON *threads = cJSON_AddArrayToObject(po, "threads");
    for (int k = 0; k < pr->n_threads; k++) {
      cJSON *t = cJSON_CreateObject();
      nsys_json_add_i64(t, "tid", pr->threads[k].tid);
      nsys__add_str_or_null(t, "name", pr->threads[k].name);
      cJSON_AddItemToArray(threads, t);
    }
    cJSON_AddItemToArray(procs, po);
  }

  cJSON *f = cJSON_AddObjectToObject(o, "features");
  cJSON_AddBoolToObject(f, "kernels", in->f_kernels);
  cJSON_AddBoolToObject(f, "memcpy", in->f_memcpy);
  cJSON_AddBoolToObject(f, "memset", in->f_memset);
  cJSON_AddBoolToObject(f, "nvtx", in->f_nvtx);
  cJSON_AddBoolToObject(f, "nccl", in->f_nccl);
  cJSON_AddBoolToObject(f, "cudaGraphs", in->f_cuda_graphs);
  cJSON_AddBoolToObject(f, "cudaCallchains", in->f_cuda_callchains);
  cJSON_AddBoolToObject(f, "cpuSampling", in->f_cpu_sampling);
  cJSON_AddBoolToObject(f, "osrt", in->f_osrt);

  cJSON *tables = cJSON_AddArrayToObject(o, "tables");
  for (int i = 0; i < in->n_tables; i++) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", in->tables[i].name);
    nsys_json_add_i64(t, "rows", in->tables[i].rows);
    cJSON_AddItemToArray(tables, t);
  }
  return o;
}

/* A first open of a file: its summary is being computed on a worker thread
 * (nsys_profile_open_begin); build the index meanwhile, then wait for the
 * summary. The profile is registered only afterwards. Errors keep the order
 * of a serial open: a failed summary (say, corruption found by its scan)
 * wins over the index's error. */
static bool nsys__index_beside_info(nsys_profile *p, nsys_call *call) {
  if (nsys_index_get(p, &call->task)) return nsys_profile_open_finish(p, &call->task);
  nsys_task sub; /* the summary's own error */
  nsys_task_init(&sub);
  if (!nsys_profile_open_finish(p, &sub) && nsys_task_failed(&sub) && sub.err != NSYS_E_CANCELLED &&
      !nsys_call_cancelled(call)) {
    /* the summary's error (the more specific) replaces the index's */
    nsys_task_forgive(&call->task, NSYS_OK);
    cJSON_Delete(call->err_data);
    call->err_data = NULL;
    nsys_task_fail_from(&call->task, &sub);
  }
  if (call->task.err == NSYS_OK) nsys_call_fail(call, NSYS_E_INTERNAL, "building the index failed");
  return false;
}

cJSON *nsys_method_profile_open(nsys_call *call) {
  const char *path = NULL;
  if (!nsys_param_string(call, "path", true, &path)) return NULL;
  const cJSON *token = NULL;
  if (!nsys_param_any(call, "workDoneToken", false, &token)) return NULL;
  if (!*path) return nsys_call_fail(call, NSYS_E_INVALID_PARAMS, "params.path: must not be empty");
  nsys_profile *p = nsys_profile_open_begin_indexed(path, &call->task);
  if (!p) return NULL;
  if (p->info_job && !nsys__index_beside_info(p, call)) {
    nsys_profile_release(p);
    return NULL;
  }
  p = nsys_registry_add(call->profiles, p); /* same file already open: that one */
  if (!nsys_index_get(p, &call->task)) {
    /* the index failed or was cancelled: do not leave a half-open profile */
    nsys_registry_remove(call->profiles, p->id);
    nsys_profile_release(p);
    if (call->task.err == NSYS_OK) nsys_call_fail(call, NSYS_E_INTERNAL, "building the index failed");
    return NULL;
  }
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "profileId", p->id);
  cJSON_AddItemToObject(res, "info", nsys__info_json(p));
  nsys_profile_release(p);
  return res;
}

cJSON *nsys_method_profile_info(nsys_call *call) {
  nsys_profile *p = nsys_param_profile(call, "profileId");
  if (!p) return NULL;
  cJSON *res = nsys__info_json(p); /* nsys_param_profile checked the file is unchanged */
  nsys_profile_release(p);
  return res;
}

cJSON *nsys_method_profile_close(nsys_call *call) {
  const char *id = NULL;
  if (!nsys_param_string(call, "profileId", true, &id)) return NULL;
  if (!nsys_registry_remove(call->profiles, id))
    return nsys_call_fail(call, NSYS_E_PROFILE_NOT_OPEN, "no open profile with id '%s'", id);
  cJSON *res = cJSON_CreateObject();
  cJSON_AddTrueToObject(res, "closed");
  return res;
}

cJSON *nsys_method_profile_list(nsys_call *call) {
  int n = 0;
  nsys_profile **all = nsys_registry_list(call->profiles, &n);
  cJSON *res = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(res, "profiles");
  for (int i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "profileId", all[i]->id);
    nsys__add_path(o, "path", all[i]->path);
    cJSON_AddItemToArray(arr, o);
    nsys_profile_release(all[i]);
  }
  free(all);
  return res;
}

