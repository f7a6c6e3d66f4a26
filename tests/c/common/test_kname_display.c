/* Display names (common/kname_display.c) on real kernel names: a table of
 * names copied from ../shared/profiles with the expected display form, then
 * every distinct demangled kernel name of every real profile (read with
 * SQLite at test time; skipped when the profiles are absent) checked for the
 * properties the index and the protocol rely on: non-empty, valid UTF-8, at
 * most NSYS_KNAME_DISPLAY_MAX bytes, never longer than the name itself, no
 * return type, no argument list, deterministic. */
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kname_display.h"
#include "common/utf8.h"
#include "nsys_check.h"

static void test_table(void) {
  static const struct {
    const char *full, *short_name, *want;
  } cases[] = {
      /* nsys2024_a100_lm_nvtx: at::native templates with lambdas, wrappers, offsets */
      {"void at::native::index_elementwise_kernel<(int)128, (int)4, void at::native::gpu_index_kernel<void "
       "at::native::index_kernel_impl<at::native::OpaqueType<(int)4>>(at::TensorIteratorBase &, "
       "c10::ArrayRef<long>, c10::ArrayRef<long>)::[lambda(char *, const char *, long) (instance 1)]>"
       "(at::TensorIteratorBase &, c10::ArrayRef<long>, c10::ArrayRef<long>, const T1 &)::[lambda(int) "
       "(instance 1)]>(long, T3)",
       "index_elementwise_kernel", "index_elementwise_kernel<index_kernel_impl>"},
      {"void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<"
       "at::native::<unnamed>::where_kernel_impl(at::TensorIterator &)::[lambda() (instance 1)]::operator ()() "
       "const::[lambda() (instance 7)]::operator ()() const::[lambda(bool, float, float) (instance 1)]>"
       "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
       "elementwise_kernel", "elementwise_kernel<where_kernel_impl>"},
      {"void <unnamed>::elementwise_kernel_with_index<int, at::native::arange_cuda_out(const c10::Scalar &, "
       "const c10::Scalar &, const c10::Scalar &, at::Tensor &)::[lambda() (instance 1)]::operator ()() "
       "const::[lambda() (instance 4)]::operator ()() const::[lambda(long) (instance 1)]>(T1, T2, "
       "function_traits<T2>::result_type *)",
       "elementwise_kernel_with_index", "elementwise_kernel_with_index<int, arange_cuda_out>"},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase "
       "&)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() "
       "const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>, (int)4, "
       "TrivialOffsetCalculator<(int)1, unsigned int>, TrivialOffsetCalculator<(int)1, unsigned int>, "
       "at::native::memory::LoadWithCast<(int)1>, at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, "
       "T4, T5, T6, T7)",
       "unrolled_elementwise_kernel", "unrolled_elementwise_kernel<direct_copy_kernel_cuda>"},
      {"void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)2>, "
       "at::native::<unnamed>::TernaryOpScalarFunctor<float, (int)2, (int)2, (int)0>, "
       "at::native::LerpFunctor<float>, float>(T1, T2, T3...)",
       "multi_tensor_apply_kernel", "multi_tensor_apply_kernel<TernaryOpScalarFunctor<float>, LerpFunctor<float>, float>"},
      {"void at::native::<unnamed>::cunn_SoftMaxForwardSmem<(int)4, float, float, float, "
       "at::native::<unnamed>::LogSoftMaxForwardEpilogue, long>(T4 *, const T2 *, T6)",
       "cunn_SoftMaxForwardSmem", "cunn_SoftMaxForwardSmem<float, LogSoftMaxForwardEpilogue, long>"},
      /* element types give way to the functor: MulFunctor, not BFloat16 */
      {"void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl_nocast<"
       "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
       "at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) "
       "(instance 1)]>(int, T3)",
       "elementwise_kernel", "elementwise_kernel<MulFunctor<float>>"},
      /* cub / thrust: policies and identity decomposers dropped */
      {"void at_cuda_detail::cub::DeviceRadixSortSingleTileKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<long, "
       "at::cuda::cub::detail::OpaqueType<(int)8>, unsigned long long>::Policy900, (bool)0, long, "
       "at::cuda::cub::detail::OpaqueType<(int)8>, unsigned long long, "
       "at_cuda_detail::cub::detail::identity_decomposer_t>(const T3 *, T3 *, const T4 *, T4 *, T5, int, int, T6)",
       "DeviceRadixSortSingleTileKernel", "DeviceRadixSortSingleTileKernel<long>"},
      {"void cub::DeviceScanKernel<cub::DeviceScanPolicy<float>::Policy600, float *, float *, "
       "cub::ScanTileState<float, (bool)1>, cub::Sum, cub::NullType, int, float>(T2, T3, T4, int, T5, T6, T7)",
       "DeviceScanKernel", "DeviceScanKernel<Sum, int, float>"},
      /* cuBLASLt: constants dropped, runs of one type folded */
      {"void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)0, float, "
       "float, float, (bool)1, (bool)0, (bool)0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T10 *, T9 *, "
       "T5 *, const T6 *, const T6 *, const T11 *, const T4 *, T11 *, void *, long long, T6 *, int *, T6 *, T6 *, "
       "const T6 *, const T6 *, const T6 *, const T6 *, const T6 *)",
       "splitKreduce_kernel", "splitKreduce_kernel<int, float>"},
      /* cutlass: the Kernel2 wrapper gives way to the kernel it runs */
      {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(T1::Params)", "Kernel2",
       "cutlass_80_simt_sgemm_128x256_8x4_nt_align1"},
      /* cuBLAS, NCCL, cupy: plain names stay as they are */
      {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_"
       "execute_kernel__5x_cublas",
       "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_"
       "execute_kernel__5x_cublas",
       "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_"
       "execute_kernel__5x_cublas"},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", "ncclDevKernel_SendRecv",
       "ncclDevKernel_SendRecv"},
      {"nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT", "nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT",
       "nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT"},
      {"[CUDA memcpy Device-to-Device]", "[CUDA memcpy Device-to-Device]", "[CUDA memcpy Device-to-Device]"},
      /* eliding deep arguments never makes a name longer */
      {"a<b<c<d>>>", "a", "a<b<c<d>>>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[NSYS_KNAME_DISPLAY_MAX + 8];
    nsys_kname_display(cases[i].full, cases[i].short_name, out, sizeof out);
    CHECK_STR(out, cases[i].want);
  }
}

typedef struct {
  int names, profiles;
  size_t saved; /* bytes saved over all names */
} nsys__stats;

static void check_name(const char *full, const char *short_name, nsys__stats *st) {
  char out[NSYS_KNAME_DISPLAY_MAX + 8], again[NSYS_KNAME_DISPLAY_MAX + 8];
  nsys_kname_display(full, short_name, out, sizeof out);
  nsys_kname_display(full, short_name, again, sizeof again);
  size_t n = strlen(out), fl = strlen(full);
  st->names++;
  st->saved += fl - (n < fl ? n : fl);
  CHECK_MSG(n > 0, "empty display name for %s", full);
  CHECK_MSG(n <= NSYS_KNAME_DISPLAY_MAX, "%zu bytes: %s", n, out);
  CHECK_MSG(n <= fl, "display '%s' longer than '%s'", out, full);
  CHECK_MSG(nsys_utf8_valid(out, n), "invalid UTF-8 from %s", full);
  CHECK_MSG(strcmp(out, again) == 0, "not deterministic: %s", full);
  CHECK_MSG(strncmp(out, "void ", 5) != 0, "return type kept: %s", out);
  /* a C++ name loses its argument list: no '(' unless the name had no template/namespace
   * structure to read (then it is kept as is) */
  if (full[0] != '[' && strstr(full, "::") && strchr(full, '('))
    CHECK_MSG(!strchr(out, '('), "argument list kept: '%s' from %s", out, full);
}

static void test_real_profiles(void) {
  const char *shared = getenv("NSYS_AI_SHARED");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/profiles", shared ? shared : "../shared");
  DIR *d = opendir(dir);
  if (!d) {
    nsys_check_skip("real profiles: %s is absent", dir);
    return;
  }
  nsys__stats st = {0, 0, 0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 7 || strcmp(e->d_name + l - 7, ".sqlite") != 0) continue;
    char uri[8192];
    snprintf(uri, sizeof uri, "file:%s/%s?mode=ro&immutable=1", dir, e->d_name);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
      sqlite3_close(db);
      continue;
    }
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT f.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                           "JOIN StringIds f ON f.id = k.demangledName JOIN StringIds s ON s.id = k.shortName",
                           -1, &q, NULL) == SQLITE_OK) {
      st.profiles++;
      while (sqlite3_step(q) == SQLITE_ROW) {
        const char *full = (const char *)sqlite3_column_text(q, 0);
        const char *sn = (const char *)sqlite3_column_text(q, 1);
        if (full && *full && nsys_utf8_valid(full, strlen(full))) check_name(full, sn, &st);
      }
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
  closedir(d);
  printf("real profiles: %d with kernels, %d distinct names, %zu bytes saved\n", st.profiles, st.names,
         st.saved);
  CHECK(st.profiles >= 10 && st.names >= 100);
}

int main(void) {
  test_table();
  test_real_profiles();
  return nsys_check_done("test_kname_display");
}
