/* kernel/details {profileId, kernelId} -> every column of the op's source row,
 * the launching API call (thread, CPU times, queue delay), the NVTX path and
 * the stream. docs/protocol.md ("kernel/details"), protocol/schemas/kernel.details.*. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "index/index.h"
#include "index/index_query.h"
#include "index/nvtx_tree.h"
#include "methods/timeline_handlers.h"
#include "profile/profile.h"
#include "rpc/jsonrpc.h"
#include "rpc/params.h"

static const char *nsys__s(const nsys_index *ix, uint32_t id) { return nsys_strtab_get(&ix->strings, id); }

static const char *const nsys__op_tables[] = {"kernel", "memcpy", "memset", "graph"};

static bool nsys__is_string_column(const char *table_kind, const char *col) {
  (void)table_kind;
  return strcmp(col, "demangledName") == 0 || strcmp(col, "shortName") == 0 ||
         strcmp(col, "mangledName") == 0;
}

static cJSON *nsys__source_row(nsys_profile *p, uint8_t kind, int64_t rowid) {
  if (kind > NSYS_OP_GRAPH) return NULL;
  nsys_table t = kind == NSYS_OP_MEMCPY   ? NSYS_TBL_MEMCPY
                 : kind == NSYS_OP_MEMSET ? NSYS_TBL_MEMSET
                 : kind == NSYS_OP_GRAPH  ? NSYS_TBL_GRAPH_TRACE
                                          : NSYS_TBL_KERNEL;
  const char *real = p->schema.table[t];
  static const char *const fallback[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"};
  if (!real && p->schema.n_all_tables == 0) real = fallback[kind];
  if (!real) return NULL;
  char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" WHERE rowid = %lld", real, (long long)rowid);
  sqlite3_stmt *st = NULL;
  cJSON *cols = NULL;
  if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    cols = cJSON_CreateObject();
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
      const char *name = sqlite3_column_name(st, i);
      switch (sqlite3_column_type(st, i)) {
      case SQLITE_INTEGER: {
        int64_t v = sqlite3_column_int64(st, i);
        const char *s = nsys__is_string_column(nsys__op_tables[kind], name) ? nsys_profile_string(p, v) : NULL;
        if (s) cJSON_AddStringToObject(cols, name, s);
        else nsys_json_add_i64(cols, name, v);
        break;
      }
      case SQLITE_FLOAT: cJSON_AddNumberToObject(cols, name, sqlite3_column_double(st, i)); break;
      case SQLITE_TEXT: {
        char *clean = nsys_utf8_sanitize((const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
        cJSON_AddStringToObject(cols, name, clean);
        free(clean);
        break;
      }
      case SQLITE_NULL: cJSON_AddNullToObject(cols, name); break;
      default: cJSON_AddNullToObject(cols, name); break;
      }
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return cols;
}

cJSON *nsys_method_kernel_details(nsys_call *call) {
  int64_t id = -1;
  if (!nsys_param_int64(call, NSYS_P_KERNEL_DETAILS_KERNEL_ID, &id)) return NULL;
  nsys_profile *p = NULL;
  const nsys_index *ix = nsys_param_profile_index(call, "profileId", &p);
  if (!ix) return NULL;
  if ((uint64_t)id >= ix->ops.n) {
    nsys_profile_release(p);
    return nsys_call_fail(call, NSYS_E_NOT_FOUND, "params.kernelId: no GPU operation %lld (the profile has %u)",
                          (long long)id, ix->ops.n);
  }
  uint32_t i = (uint32_t)id;
  const nsys_gpu_track *tr = &ix->tracks[ix->ops.track[i]];
  cJSON *res = cJSON_CreateObject();
  cJSON_AddNumberToObject(res, "id", i);
  cJSON_AddStringToObject(res, "kind", nsys_op_kind_name(ix->ops.kind[i]));
  cJSON_AddStringToObject(res, "name", nsys__s(ix, ix->ops.name[i]));
  cJSON_AddStringToObject(res, "demangledName", nsys__s(ix, ix->ops.full_name[i]));
  cJSON_AddStringToObject(res, "displayName", nsys__s(ix, nsys_op_display_name(ix, i)));
  nsys_json_add_i64(res, "start", ix->ops.start[i]);
  nsys_json_add_i64(res, "end", ix->ops.end[i]);
  nsys_json_add_i64(res, "durNs", nsys_op_dur(ix, i));
  cJSON_AddNumberToObject(res, "device", tr->device);
  nsys_json_add_i64(res, "stream", tr->stream);
  cJSON_AddNumberToObject(res, "pid", tr->pid);
  uint32_t tl_index = 0;
  for (uint32_t k = 0; k < nsys_tl_track_count(ix); k++) {
    const nsys_tl_track *t = nsys_tl_track_at(ix, k);
    if (t->kind == NSYS_TL_GPU && t->ref == ix->ops.track[i]) {
      tl_index = k;
      cJSON_AddStringToObject(res, "track", t->id);
      break;
    }
  }
  (void)tl_index;
  cJSON_AddStringToObject(res, "streamClass", nsys_stream_class_name(tr->cls));
  nsys_json_add_i64(res, "rowid", ix->ops.rowid[i]);
  cJSON *cols = nsys__source_row(p, ix->ops.kind[i], ix->ops.rowid[i]);
  cJSON_AddItemToObject(res, "columns", cols ? cols : cJSON_CreateObject());
  int32_t a = ix->ops.api[i];
  if (a >= 0) {
    const nsys_host_thread *th = &ix->threads[ix->api.thread[a]];
    cJSON *api = cJSON_AddObjectToObject(res, "api");
    cJSON_AddNumberToObject(api, "id", a);
    cJSON_AddStringToObject(api, "name", nsys__s(ix, ix->api.name[a]));
    cJSON_AddNumberToObject(api, "pid", th->pid);
    cJSON_AddNumberToObject(api, "tid", th->tid);
    cJSON_AddStringToObject(api, "threadName", nsys__s(ix, th->name));
    nsys_json_add_i64(api, "start", ix->api.start[a]);
    nsys_json_add_i64(api, "end", ix->api.end[a]);
    nsys_json_add_i64(api, "correlationId", ix->api.correlation[a]);
    nsys_json_add_i64(api, "queueDelayNs", ix->ops.start[i] - ix->api.end[a]);
    cJSON *path = cJSON_AddArrayToObject(res, "nvtxPath");
    int32_t r = nsys_nvtx_innermost(ix, (uint32_t)a);
    /* outermost first */
    int32_t chain[256];
    int n = 0;
    for (; r >= 0 && n < 256; r = ix->nvtx.parent[r]) chain[n++] = r;
    for (int k = n; k-- > 0;) {
      cJSON *nd = cJSON_CreateObject();
      cJSON_AddNumberToObject(nd, "id", chain[k]);
      cJSON_AddStringToObject(nd, "name", nsys__s(ix, ix->nvtx.name[chain[k]]));
      cJSON_AddStringToObject(nd, "domain", nsys__s(ix, ix->nvtx.domain[chain[k]]));
      nsys_json_add_i64(nd, "start", ix->nvtx.start[chain[k]]);
      nsys_json_add_i64(nd, "end", ix->nvtx.end[chain[k]]);
      cJSON_AddItemToArray(path, nd);
    }
  } else {
    cJSON_AddNullToObject(res, "api");
    cJSON_AddArrayToObject(res, "nvtxPath");
  }
  nsys_profile_release(p);
  return res;
}
