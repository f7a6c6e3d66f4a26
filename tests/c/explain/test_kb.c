/* The knowledge base: every pattern's example names resolve to that
 * pattern, every data/kernels file is in the generated tables and every
 * table row loads, malformed rows are rejected, matching semantics,
 * and the real kernel names of ../shared/profiles are classified (the
 * expected origins below were checked by hand). */
#include <dirent.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../common/nsys_check.h"
#include "explain/kb.h"
#include "explain/kernel_name.h"

static void test_examples(const nsys_kb *kb) {
  CHECK(kb->n >= 150);
  int n_examples = 0;
  for (int i = 0; i < kb->n; i++) {
    const nsys_kb_pattern *p = &kb->pats[i];
    CHECK(p->n_examples > 0);
    CHECK(p->n_suggestions > 0);
    for (int e = 0; e < p->n_examples; e++) {
      const char *ex = p->examples[e];
      n_examples++;
      bool matches = nsys_kb_pattern_matches(p, ex, ex);
      CHECK_MSG(matches, "pattern %s does not match its example '%s'", p->id, ex);
      if (!matches) continue;
      const nsys_kb_pattern *best = nsys_kb_match(kb, ex, ex);
      CHECK_MSG(best == p, "example '%.120s' of %s resolves to %s", ex, p->id, best ? best->id : "(none)");
    }
    /* origin/category are lower-case words */
    for (const char *c = p->origin; *c; c++) CHECK((*c >= 'a' && *c <= 'z') || *c == '-');
    for (const char *c = p->category; *c; c++) CHECK((*c >= 'a' && *c <= 'z') || *c == '-');
    static const char *const bounds[] = {"compute", "memory", "latency", "communication", "mixed", "unknown"};
    int ok = 0;
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) ok |= strcmp(p->bound, bounds[b]) == 0;
    CHECK_MSG(ok, "%s: bad bound %s", p->id, p->bound);
  }
  printf("kb: %d patterns, %d examples, %d files\n", kb->n, n_examples, nsys_kb_table_file_count);
}

static void test_all_files_embedded(void) {
  char *dir = NULL;
  const char *src = getenv("NSYS_TEST_SRCDIR");
  if (!src) return;
  size_t n = strlen(src) + 32;
  dir = malloc(n);
  snprintf(dir, n, "%s/data/kernels", src);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      size_t l = strlen(e->d_name);
      if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
      int found = 0;
      for (int i = 0; i < nsys_kb_table_file_count; i++) found |= strcmp(nsys_kb_table_files[i], e->d_name) == 0;
      CHECK_MSG(found, "data/kernels/%s is not listed in server/src/explain/meson.build", e->d_name);
    }
    closedir(d);
  }
  free(dir);
}

static const char *const nsys__sugg[] = {"s"};
static const char *const nsys__any[] = {NULL};
static const char *const nsys__bad_fw[] = {"pytorch,nosuchframework"};
static const int nsys__cc0[] = {0};
static const char *const nsys__ex[] = {"x"};
#define ROWF(ID, KIND, MATCH, FW) \
  .id = ID, .family = "t", .kind = KIND, .match = MATCH, .origin = "o", .category = "c", .bound = "memory", \
  .description = "d", .suggestions = nsys__sugg, .suggestion_frameworks = FW, .suggestion_min_cc = nsys__cc0, \
  .n_suggestions = 1, .examples = nsys__ex, .n_examples = 1
#define ROW(ID, KIND, MATCH) ROWF(ID, KIND, MATCH, nsys__any)

static void test_bad_rows(void) {
  const nsys_kb_pattern bad[] = {
      {ROW("no_match", NSYS_KB_PREFIX, "")},
      {ROW("bad_regex", NSYS_KB_REGEX, "(unclosed")},
      {ROWF("bad_fw", NSYS_KB_PREFIX, "a", nsys__bad_fw)},
      {ROW(NULL, NSYS_KB_PREFIX, "a")},
  };
  static const char *const want[] = {"no_match", "bad_regex", "nosuchframework", "?"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    nsys_kb kb;
    char err[256] = "";
    CHECK(!nsys_kb_load(&kb, &bad[i], 1, err, sizeof err));
    CHECK_MSG(strstr(err, want[i]) != NULL, "%s", err);
    nsys_kb_free(&kb);
  }
  const nsys_kb_pattern good[] = {
      {ROW("g", NSYS_KB_GLOB, "foo*bar")},
      {ROW("r", NSYS_KB_REGEX, "^ba+z$"), .icase = true},
      {ROW("f", NSYS_KB_CONTAINS, "qux"), .field = NSYS_KB_FIELD_FULL, .priority = 5},
  };
  nsys_kb kb;
  char err[256] = "";
  CHECK(nsys_kb_load(&kb, good, 3, err, sizeof err));
  CHECK(kb.n == 3);
  const nsys_kb_pattern *m = nsys_kb_match(&kb, "foo_x_bar", NULL);
  CHECK(m && strcmp(m->id, "g") == 0);
  m = nsys_kb_match(&kb, "BAAAZ", NULL);
  CHECK(m && strcmp(m->id, "r") == 0);
  CHECK(nsys_kb_match(&kb, "qux", NULL) == NULL); /* field full only */
  m = nsys_kb_match(&kb, "foo_bar", "foo qux bar");
  CHECK(m && strcmp(m->id, "f") == 0); /* priority beats the glob */
  CHECK(nsys_kb_match(&kb, NULL, NULL) == NULL);
  nsys_kb_free(&kb);
}

/* Real names, expected origin (checked by hand against the profiles). */
static const struct {
  const char *name;
  const char *origin;
  const char *category;
} real_cases[] = {
    {"ampere_sgemm_128x64_tn", "cublas", "gemm"},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas", "cublas", "gemm"},
    {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", "cublas", "gemm"},
    {"splitKreduce_kernel", "cublas", "reduction"},
    {"flash_fwd_kernel", "flash-attention", "attention"},
    {"ncclDevKernel_SendRecv", "nccl", "communication"},
    {"vectorized_elementwise_kernel", "pytorch", "elementwise"},
    {"elementwise_kernel", "pytorch", "elementwise"},
    {"unrolled_elementwise_kernel", "pytorch", "elementwise"},
    {"reduce_kernel", "pytorch", "reduction"},
    {"vectorized_layer_norm_kernel", "pytorch", "normalization"},
    {"softmax_warp_forward", "pytorch", "softmax"},
    {"cunn_SoftMaxForwardSmem", "pytorch", "softmax"},
    {"index_elementwise_kernel", "pytorch", "index"},
    {"CatArrayBatchedCopy_vectorized", "pytorch", "copy"},
    {"multi_tensor_apply_kernel", "pytorch", "optimizer"},
    {"DeviceRadixSortSingleTileKernel", "cub", "sort"},
    {"DeviceScanKernel", "cub", "scan"},
    {"_kernel_agent", "cub", "elementwise"},
    {"cupy_copy__float32_float32", "cupy", "copy"},
    {"nvfuser_pointwise_f0_c1_r0_g0", "nvfuser", "elementwise"},
    {"Kernel2", "cutlass", "gemm"},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)", "cublas", "gemm"}, /* cuBLASLt ships it (H200 symbols) */
    {"[CUDA memcpy HtoD]", "cuda", "copy"},
    /* names the Python peer's documentation and tests cite */
    {"nvshmemi_init_array_kernel", "nvshmem", "communication"},
    {"flash_fwd_splitkv_kernel", "flash-attention", "attention"},
    {"volta_sgemm_128x64_nn", "cublas", "gemm"},
    {"void cutlass::Kernel<cutlass::gemm::kernel::DefaultGemm<float>>(T1::Params)", "cutlass", "gemm"},
    {"triton_poi_fused_add_0", "triton", "elementwise"},
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "nccl", "communication"},
    {"ncclKernel_AllGather_RING_LL_Sum_int8_t", "nccl", "communication"},
    {"fused_bias_gelu_kernel", "megatron", "elementwise"},
    {"[CUDA memset]", "cuda", "memset"},
};

static int starts_with_void_or_plain(const char *s) { return s != NULL; }

static void test_real_profiles(const nsys_kb *kb) {
  for (size_t i = 0; i < sizeof real_cases / sizeof real_cases[0]; i++) {
    const nsys_kb_pattern *p = nsys_kb_match(kb, real_cases[i].name, real_cases[i].name);
    CHECK_MSG(p && strcmp(p->origin, real_cases[i].origin) == 0 && strcmp(p->category, real_cases[i].category) == 0,
              "real name %s: got %s/%s want %s/%s", real_cases[i].name, p ? p->origin : "-", p ? p->category : "-",
              real_cases[i].origin, real_cases[i].category);
  }
  const char *shared = getenv("NSYS_AI_SHARED");
  if (!shared) {
    nsys_check_skip("real profiles: NSYS_AI_SHARED not set");
    return;
  }
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/profiles", shared);
  DIR *d = opendir(dir);
  if (!d) {
    nsys_check_skip("real profiles: %s is absent", dir);
    return;
  }
  long distinct = 0, distinct_known = 0, instances = 0, instances_known = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 8 || strcmp(e->d_name + l - 7, ".sqlite") != 0) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
      sqlite3_close(db);
      continue;
    }
    sqlite3_stmt *st = NULL;
    const char *sql =
        "SELECT s.value, d.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
        "LEFT JOIN StringIds d ON d.id = k.demangledName GROUP BY k.shortName, k.demangledName";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) {
        const char *sn = (const char *)sqlite3_column_text(st, 0);
        const char *fn = (const char *)sqlite3_column_text(st, 1);
        long cnt = sqlite3_column_int64(st, 2);
        const nsys_kb_pattern *p = nsys_kb_match(kb, sn, fn);
        char disp[256];
        nsys_kname_display(fn, sn, disp, sizeof disp);
        CHECK(disp[0] != '\0' && strlen(disp) <= NSYS_KNAME_DISPLAY_MAX);
        nsys_kname_info info;
        nsys_kname_analyze(sn, fn, &info);
        distinct++;
        instances += cnt;
        if (p && starts_with_void_or_plain(sn)) {
          distinct_known++;
          instances_known += cnt;
        } else if (getenv("NSYS_TEST_VERBOSE")) {
          printf("unknown: %s\n", sn ? sn : "(null)");
        }
      }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  closedir(d);
  printf("real kernel names: %ld distinct (short, demangled) pairs, %ld matched (%.1f%%); "
         "%ld kernel instances, %ld matched (%.1f%%)\n",
         distinct, distinct_known, distinct ? 100.0 * distinct_known / distinct : 0.0, instances, instances_known,
         instances ? 100.0 * instances_known / instances : 0.0);
  /* Library kernels dominate real workloads; the rest are user kernels. */
  if (instances) CHECK(instances_known * 100 >= instances * 80);
}

int main(void) {
  const nsys_kb *kb = nsys_kb_get();
  CHECK(kb && kb->n > 0 && kb->n == nsys_kb_table_count); /* every table row loaded */
  test_examples(kb);
  test_all_files_embedded();
  test_bad_rows();
  test_real_profiles(kb);
  return nsys_check_done("explain_kb");
}
