/* kernel/explain's result as JSON (see explain_json.h). */
#include "methods/explain_json.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "rpc/json_int.h"

static void nsys__str_or_null(cJSON *o, const char *k, const char *v) {
  if (v && *v) cJSON_AddStringToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

static cJSON *nsys__texts(const nsys_explain_texts *t) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < t->n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(t->v[i]));
  return a;
}

static void nsys__cc(cJSON *o, int major, int minor) {
  if (major < 0) {
    cJSON_AddNullToObject(o, "computeCapability");
    return;
  }
  char cc[24];
  snprintf(cc, sizeof cc, "%d.%d", major, minor);
  cJSON_AddStringToObject(o, "computeCapability", cc);
}

static cJSON *nsys__precision(const nsys_kname_info *in) {
  cJSON *o = cJSON_CreateObject();
  nsys__str_or_null(o, "dtype", in->precision);
  if (in->tensor_cores < 0) cJSON_AddNullToObject(o, "tensorCores");
  else cJSON_AddBoolToObject(o, "tensorCores", in->tensor_cores == 1);
  nsys__str_or_null(o, "mma", in->mma);
  nsys__str_or_null(o, "tile", in->tile);
  if (in->sm_arch > 0) nsys_json_add_i64(o, "smArch", in->sm_arch);
  else cJSON_AddNullToObject(o, "smArch");
  return o;
}

static cJSON *nsys__nccl(const nsys_kname_info *in) {
  if (!in->is_nccl) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  nsys__str_or_null(o, "collective", in->nccl_collective);
  nsys__str_or_null(o, "algorithm", in->nccl_algorithm);
  nsys__str_or_null(o, "protocol", in->nccl_protocol);
  nsys__str_or_null(o, "op", in->nccl_op);
  nsys__str_or_null(o, "dtype", in->nccl_dtype);
  return o;
}

static cJSON *nsys__launch(const nsys_explain_result *r) {
  if (!r->have_launch) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "kernelId", r->launch_op);
  cJSON *g = cJSON_AddArrayToObject(o, "grid");
  cJSON *b = cJSON_AddArrayToObject(o, "block");
  for (int i = 0; i < 3; i++) {
    cJSON_AddItemToArray(g, nsys_json_i64(r->launch.grid[i]));
    cJSON_AddItemToArray(b, nsys_json_i64(r->launch.block[i]));
  }
  nsys_json_add_i64(o, "registersPerThread", r->launch.regs_per_thread);
  nsys_json_add_i64(o, "staticSharedMemory", r->launch.static_smem);
  nsys_json_add_i64(o, "dynamicSharedMemory", r->launch.dynamic_smem);
  nsys_json_add_i64(o, "localMemoryPerThread", r->launch.local_mem_per_thread);
  if (r->launch.smem_config > 0) nsys_json_add_i64(o, "sharedMemoryConfig", r->launch.smem_config);
  return o;
}

static cJSON *nsys__occupancy(const nsys_explain_result *r) {
  if (!r->have_launch) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  const nsys_occupancy *oc = &r->occ;
  if (!r->have_occ || !oc->valid) {
    cJSON_AddNullToObject(o, "theoretical");
    cJSON_AddStringToObject(o, "note", r->have_occ && oc->why[0] ? oc->why : "unknown compute capability");
  } else {
    cJSON_AddNumberToObject(o, "theoretical", oc->occupancy);
    nsys_json_add_i64(o, "activeWarpsPerSm", oc->active_warps_per_sm);
    nsys_json_add_i64(o, "maxWarpsPerSm", oc->max_warps_per_sm);
    nsys_json_add_i64(o, "blocksPerSm", oc->blocks_per_sm);
    cJSON_AddStringToObject(o, "limiter", nsys_occ_limiter_name(oc->limiter));
    cJSON *lim = cJSON_AddObjectToObject(o, "blocksPerSmBy");
    nsys_json_add_i64(lim, "warps", oc->limit_warps);
    if (oc->limit_regs == NSYS_OCC_UNLIMITED) cJSON_AddNullToObject(lim, "registers");
    else nsys_json_add_i64(lim, "registers", oc->limit_regs);
    if (oc->limit_smem == NSYS_OCC_UNLIMITED) cJSON_AddNullToObject(lim, "sharedMemory");
    else nsys_json_add_i64(lim, "sharedMemory", oc->limit_smem);
    nsys_json_add_i64(lim, "blockSlots", oc->limit_blocks);
    nsys_json_add_i64(o, "totalBlocks", oc->total_blocks);
    if (oc->waves > 0) cJSON_AddNumberToObject(o, "waves", oc->waves);
    else cJSON_AddNullToObject(o, "waves");
  }
  cJSON *g = cJSON_AddObjectToObject(o, "gpu");
  nsys__str_or_null(g, "name", r->gpu.name);
  nsys__str_or_null(g, "spec", r->gpu.spec ? r->gpu.spec->name : NULL);
  nsys__cc(g, r->gpu.cc_major, r->gpu.cc_minor);
  if (r->gpu.sm_count > 0) nsys_json_add_i64(g, "smCount", r->gpu.sm_count);
  else cJSON_AddNullToObject(g, "smCount");
  return o;
}

static cJSON *nsys__stats(const nsys_explain_result *r) {
  if (!r->have_stats) return cJSON_CreateNull();
  const nsys_kstats *s = &r->stats;
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "count", s->count);
  nsys_json_add_i64(o, "totalNs", s->total_ns);
  cJSON_AddNumberToObject(o, "avgNs", s->avg_ns);
  nsys_json_add_i64(o, "medianNs", s->median_ns);
  nsys_json_add_i64(o, "p95Ns", s->p95_ns);
  nsys_json_add_i64(o, "minNs", s->min_ns);
  nsys_json_add_i64(o, "maxNs", s->max_ns);
  cJSON_AddNumberToObject(o, "pctGpuTime", s->pct_gpu_time);
  if (s->kind == NSYS_OP_KERNEL) cJSON_AddNumberToObject(o, "pctKernelTime", s->pct_kind_time);
  else cJSON_AddNullToObject(o, "pctKernelTime");
  nsys_json_add_i64(o, "rank", s->rank);
  nsys_json_add_i64(o, "distinctNames", s->n_groups);
  nsys_json_add_i64(o, "variants", s->n_variants);
  nsys_json_add_i64(o, "streamCount", s->n_tracks);
  cJSON *streams = cJSON_AddArrayToObject(o, "streams");
  for (int i = 0; i < r->n_streams; i++) {
    cJSON *so = cJSON_CreateObject();
    nsys_json_add_i64(so, "device", r->streams[i].device);
    nsys_json_add_i64(so, "stream", r->streams[i].stream);
    cJSON_AddItemToArray(streams, so);
  }
  nsys_json_add_i64(o, "longestKernelId", s->longest_op);
  nsys_json_add_i64(o, "medianKernelId", s->median_op);
  cJSON *nv = cJSON_AddObjectToObject(o, "nvtx");
  nsys_json_add_i64(nv, "sampled", s->nvtx_sampled);
  nsys_json_add_i64(nv, "attributed", s->nvtx_attributed);
  cJSON *paths = cJSON_AddArrayToObject(nv, "paths");
  for (int i = 0; i < s->n_nvtx; i++) {
    cJSON *po = cJSON_CreateObject();
    cJSON_AddStringToObject(po, "path", s->nvtx[i].path);
    nsys_json_add_i64(po, "count", s->nvtx[i].count);
    cJSON_AddItemToArray(paths, po);
  }
  return o;
}

static cJSON *nsys__priority(const nsys_explain_result *r) {
  if (!r->have_priority) return cJSON_CreateNull();
  const nsys_explain_priority *p = &r->priority;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "item", p->item);
  if (p->rank > 0) {
    nsys_json_add_i64(o, "rank", p->rank);
    nsys_json_add_i64(o, "itemNs", p->item_ns);
  } else {
    cJSON_AddNullToObject(o, "rank");
    cJSON_AddNullToObject(o, "itemNs");
  }
  nsys_json_add_i64(o, "of", p->of);
  cJSON *fo = cJSON_AddObjectToObject(o, "first");
  cJSON_AddStringToObject(fo, "item", p->first_item);
  nsys_json_add_i64(fo, "ns", p->first_ns);
  cJSON_AddNumberToObject(fo, "pctRankedTime", p->first_pct);
  nsys_json_add_i64(o, "rankedNs", p->ranked_ns);
  cJSON_AddBoolToObject(o, "isFirst", p->is_first);
  return o;
}

static cJSON *nsys__context(const nsys_explain_result *r) {
  if (!r->have_context) return cJSON_CreateNull();
  const nsys_explain_context *cx = &r->context;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "framework", nsys_framework_name(cx->framework));
  cJSON_AddStringToObject(o, "frameworkEvidence", cx->framework_evidence);
  cJSON *g = cJSON_AddObjectToObject(o, "gpu");
  nsys__str_or_null(g, "name", cx->gpu_name);
  nsys__cc(g, cx->cc_major, cx->cc_minor);
  if (cx->sm_count > 0) nsys_json_add_i64(g, "smCount", cx->sm_count);
  else cJSON_AddNullToObject(g, "smCount");
  if (cx->mem_bw_gbps > 0) cJSON_AddNumberToObject(g, "memoryBandwidthGBs", cx->mem_bw_gbps);
  else cJSON_AddNullToObject(g, "memoryBandwidthGBs");
  cJSON *tc = cJSON_AddArrayToObject(g, "tensorCorePrecisions");
  static const char *const names[] = {"fp16", "int8", "tf32", "bf16", "fp8"};
  const bool has[] = {cx->tc_fp16, cx->tc_int8, cx->tc_tf32, cx->tc_bf16, cx->tc_fp8};
  for (size_t i = 0; i < NSYS_ARRAY_LEN(names); i++)
    if (has[i]) cJSON_AddItemToArray(tc, cJSON_CreateString(names[i]));
  cJSON *items = cJSON_AddArrayToObject(o, "ranking");
  static const char *const kinds[] = {"kernels", "copy", "memset", "idle"};
  for (int i = 0; i < cx->n_items; i++) {
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "item", cx->items[i].label);
    cJSON_AddStringToObject(it, "kind", kinds[cx->items[i].kind]);
    nsys_json_add_i64(it, "ns", cx->items[i].ns);
    nsys_json_add_i64(it, "count", cx->items[i].count);
    cJSON_AddItemToArray(items, it);
  }
  nsys_json_add_i64(o, "gpuOperationNs", cx->gpu_op_ns);
  nsys_json_add_i64(o, "idleNs", cx->idle_ns);
  nsys_json_add_i64(o, "unifiedMemoryMigrations", cx->um_ops);
  cJSON *api = cJSON_AddObjectToObject(o, "apiCalls");
  for (int a = 0; a < NSYS_XAPI_COUNT; a++) nsys_json_add_i64(api, nsys_xapi_name((nsys_xapi)a), cx->api_calls[a]);
  return o;
}

static cJSON *nsys__detectors(const nsys_explain_result *r) {
  if (!r->have_detect) return cJSON_CreateNull();
  const nsys_detect *d = &r->detect;
  cJSON *o = cJSON_CreateObject();
  nsys_json_add_i64(o, "instances", d->instances);
  cJSON *c = cJSON_AddObjectToObject(o, "copies");
  cJSON_AddBoolToObject(c, "fires", r->fires_copies);
  nsys_json_add_i64(c, "instancesNextToCopy", d->copy_instances);
  nsys_json_add_i64(c, "copies", d->copies);
  nsys_json_add_i64(c, "pageable", d->pageable_copies);
  nsys_json_add_i64(c, "synchronous", d->sync_copies);
  nsys_json_add_i64(c, "bytes", d->copy_bytes);
  nsys_json_add_i64(c, "ns", d->copy_ns);
  cJSON *u = cJSON_AddObjectToObject(o, "unifiedMemory");
  cJSON_AddBoolToObject(u, "fires", r->fires_unified_memory);
  nsys_json_add_i64(u, "migrations", d->um_migrations);
  nsys_json_add_i64(u, "migrationBytes", d->um_bytes);
  nsys_json_add_i64(u, "migrationNs", d->um_ns);
  nsys_json_add_i64(u, "instancesWithMigrations", d->um_instances);
  cJSON_AddBoolToObject(u, "faultTables", d->fault_tables);
  nsys_json_add_i64(u, "gpuFaultGroups", d->gpu_fault_events);
  nsys_json_add_i64(u, "gpuFaults", d->gpu_faults);
  nsys_json_add_i64(u, "gpuFaultNs", d->gpu_fault_ns);
  nsys_json_add_i64(u, "instancesWithGpuFaults", d->gpu_fault_instances);
  nsys_json_add_i64(u, "cpuFaults", d->cpu_faults);
  cJSON *l = cJSON_AddObjectToObject(o, "launch");
  cJSON_AddBoolToObject(l, "fires", r->fires_launch_bound);
  nsys_json_add_i64(l, "launched", d->launched);
  nsys_json_add_i64(l, "graphLaunched", d->graph_launched);
  nsys_json_add_i64(l, "shorterThanLaunch", d->shorter_than_launch);
  nsys_json_add_i64(l, "streamEmpty", d->starved);
  nsys_json_add_i64(l, "launchApiNs", d->launch_api_ns);
  nsys_json_add_i64(l, "kernelNs", d->launched_kernel_ns);
  return o;
}

cJSON *nsys_explain_result_json(const nsys_explain_result *r) {
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "name", r->name);
  cJSON_AddStringToObject(res, "demangledName", r->demangled_name);
  cJSON_AddStringToObject(res, "displayName", r->display_name);
  if (r->kernel_id >= 0) nsys_json_add_i64(res, "kernelId", r->kernel_id);
  cJSON_AddBoolToObject(res, "inProfile", r->in_profile);
  cJSON_AddStringToObject(res, "origin", r->origin);
  cJSON_AddStringToObject(res, "category", r->category);
  cJSON_AddBoolToObject(res, "known", r->pattern != NULL);
  cJSON_AddBoolToObject(res, "categoryGuessed", r->pattern == NULL);
  if (r->pattern) {
    cJSON *po = cJSON_AddObjectToObject(res, "pattern");
    cJSON_AddStringToObject(po, "id", r->pattern->id);
    cJSON_AddStringToObject(po, "family", r->pattern->family);
    nsys__str_or_null(po, "title", r->pattern->title);
  } else {
    cJSON_AddNullToObject(res, "pattern");
  }
  cJSON_AddStringToObject(res, "description", r->description);
  cJSON_AddItemToObject(res, "precision", nsys__precision(&r->info));
  cJSON_AddItemToObject(res, "nccl", nsys__nccl(&r->info));
  cJSON_AddStringToObject(res, "bound", r->bound);
  cJSON_AddStringToObject(res, "typicalBound", r->typical_bound);
  cJSON_AddItemToObject(res, "boundReasons", nsys__texts(&r->reasons));
  cJSON_AddItemToObject(res, "launch", nsys__launch(r));
  cJSON_AddItemToObject(res, "occupancy", nsys__occupancy(r));
  cJSON_AddItemToObject(res, "stats", nsys__stats(r));
  if (r->have_nvtx_path) cJSON_AddStringToObject(res, "nvtxPath", r->nvtx_path);
  else cJSON_AddNullToObject(res, "nvtxPath");
  cJSON_AddItemToObject(res, "priority", nsys__priority(r));
  cJSON_AddItemToObject(res, "suggestions", nsys__texts(&r->suggestions));
  cJSON *withheld = cJSON_AddArrayToObject(res, "suggestionsWithheld");
  for (int i = 0; i < r->withheld.n; i++) {
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "text", r->withheld.v[i]);
    cJSON_AddStringToObject(w, "reason", r->withheld_reasons.v[i]);
    cJSON_AddItemToArray(withheld, w);
  }
  cJSON_AddItemToObject(res, "context", nsys__context(r));
  cJSON_AddItemToObject(res, "detectors", nsys__detectors(r));
  cJSON_AddStringToObject(res, "markdown", r->markdown);
  return res;
}
