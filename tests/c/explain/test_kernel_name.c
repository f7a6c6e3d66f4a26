/* Kernel-name analysis: display names and inferred facts, table-driven on
 * real names from ../shared/profiles and the peer's lists. */
#include <stdlib.h>

#include "../common/nsys_check.h"
#include "explain/kernel_name.h"

static void test_display(void) {
  static const struct {
    const char *full, *short_name, *want;
  } cases[] = {
      {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
       "vectorized_elementwise_kernel", "vectorized_elementwise_kernel<FillFunctor<float>>"},
      {"void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::<unnamed>::masked_fill_kernel(at::TensorIterator &, const c10::Scalar &)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float, bool) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
       "elementwise_kernel", "elementwise_kernel<masked_fill_kernel>"},
      {"void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4>>(T3)",
       "reduce_kernel", "reduce_kernel<sum_functor<float>>"},
      {"void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, (int)4>>(T3)",
       "reduce_kernel", "reduce_kernel<MaxOps<float>>"},
      {"void at::native::vectorized_elementwise_kernel<(int)4, void at::native::<unnamed>::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase &, T2)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
       "vectorized_elementwise_kernel", "vectorized_elementwise_kernel<pow_tensor_scalar_kernel_impl<float>>"},
      {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)", "Kernel2",
       "cutlass_80_simt_sgemm_128x128_8x4_nn_align1"},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", "ncclDevKernel_SendRecv", "ncclDevKernel_SendRecv"},
      {"<unnamed>::nvfuser_pointwise_f0_c1_r0_g0(<unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<float, (int)2, (int)2>)",
       "nvfuser_pointwise_f0_c1_r0_g0", "nvfuser_pointwise_f0_c1_r0_g0"},
      {"void <unnamed>::softmax_warp_forward<float, float, float, (int)7, (bool)0, (bool)0>(T2 *, const T1 *, int, int, int, const bool *, int, bool)",
       "softmax_warp_forward", "softmax_warp_forward<float>"},
      {"void cub::DeviceReduceKernel<cub::DeviceReducePolicy<float, int, cub::Sum>::Policy600, float *, int, cub::Sum, float>(T2, T5 *, T3, cub::GridEvenShare<T3>, T4)",
       "DeviceReduceKernel", "DeviceReduceKernel<int, Sum, float>"},
      {"add_arrays_(CuDeviceArray<Int64, (int)3, (int)1>, CuDeviceArray<Int64, (int)3, (int)1>)", "add_arrays_", "add_arrays_"},
      {"ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn"},
      {"", "ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn"},
      {NULL, "flash_fwd_kernel", "flash_fwd_kernel"},
      {"[CUDA memcpy HtoD]", "[CUDA memcpy HtoD]", "[CUDA memcpy HtoD]"},
      {"void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
       "vectorized_elementwise_kernel", "vectorized_elementwise_kernel<CUDAFunctor_add<BFloat16>>"},
      /* hostile input: unbalanced brackets, lone operators, empties */
      {"void f<<<<<<", "f", "f"},
      {">>>>", "x", ">>>>"},
      {"(", "", "("},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[256];
    nsys_kname_display(cases[i].full, cases[i].short_name, out, sizeof out);
    CHECK_STR(out, cases[i].want);
  }
  /* long names are capped on a UTF-8 boundary and end with an ellipsis */
  char big[4000];
  memset(big, 'a', sizeof big);
  memcpy(big + 150, "\xC3\xA9\xC3\xA9\xC3\xA9", 6);
  big[sizeof big - 1] = '\0';
  char out[256];
  nsys_kname_display(big, NULL, out, sizeof out);
  CHECK(strlen(out) <= NSYS_KNAME_DISPLAY_MAX);
  CHECK(strcmp(out + strlen(out) - 3, "\xE2\x80\xA6") == 0);
  char tiny[4];
  nsys_kname_display("vectorized_elementwise_kernel", NULL, tiny, sizeof tiny);
  CHECK(strlen(tiny) < sizeof tiny);
  nsys_kname_display(NULL, NULL, out, sizeof out);
  CHECK_STR(out, "");
}

static void test_analyze(void) {
  static const struct {
    const char *short_name, *full;
    const char *precision;
    int tc;
    const char *mma, *tile;
    int arch;
  } cases[] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", NULL,
       "bf16", 1, "wgmma", "128x256x64", 90},
      {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", NULL,
       "fp32", 0, "ffma", "128x128x8", 80},
      {"ampere_sgemm_128x64_tn", NULL, "fp32", 0, "ffma", "128x64", 80},
      {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn", NULL, "bf16", 1, "hmma", "128x64", 80},
      {"ampere_tf32_s1688gemm_tf32_128x128_32x3_nn", NULL, "tf32", 1, "hmma", "128x128", 80},
      {"volta_h884gemm_64x64_ldg8_nn", NULL, "f16", 1, "hmma", "64x64", 70},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", NULL, "bf16", 1, "", "192x192", 0},
      /* no tensor cores: TensorRT pooling, kernels built for sm_50, legacy fp32 scudnn */
      {"sm50_xmma_pooling_coalescedC_NHWC_kMAX_2_False_execute_kernel_trt", NULL, "", 0, "", "", 50},
      {"sm50_xmma_fprop_conv2d_c1_k1_f32f32_f32_f32_nchwkcrs_nchw_tilesize10x40x8_threadsize4x4_r3s3_u1v1_xcorr_zerobeta_execute_kernel_trt",
       NULL, "fp32", 0, "ffma", "10x40x8", 50},
      {"volta_scudnn_128x64_relu_interior_nn_v1", NULL, "", 0, "ffma", "128x64", 70},
      {"trt_turing_h1688cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1", NULL, "f16", 1, "hmma", "256x64", 0},
      {"nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NNT", NULL, "f16", 1, "", "256x128", 0},
      {"Kernel2", "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)", "fp32", 0, "ffma", "128x128", 80},
      {"cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma", NULL,
       "bf16", 1, "wgmma", "128x256x64", 90},
      {"flash_fwd_kernel",
       "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0>(flash::Flash_fwd_params)",
       "bf16", 1, "hmma", "128x64", 0},
      {"vectorized_elementwise_kernel",
       "void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
       "bf16", -1, "", "", 0},
      {"sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_stage4_warpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn", NULL,
       "f16", 1, "hmma", "128x128x64", 80},
      {"ampere_fp8_e4m3_gemm_example", NULL, "fp8", 1, "hmma", "", 80},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nsys_kname_info in;
    nsys_kname_analyze(cases[i].short_name, cases[i].full, &in);
    CHECK_MSG(!strcmp(in.precision, cases[i].precision) && in.tensor_cores == cases[i].tc &&
                  !strcmp(in.mma, cases[i].mma) && !strcmp(in.tile, cases[i].tile) && in.sm_arch == cases[i].arch,
              "analyze %s: got %s tc=%d mma=%s tile=%s sm=%d", cases[i].short_name, in.precision, in.tensor_cores,
              in.mma, in.tile, in.sm_arch);
  }
}

static void test_nccl(void) {
  static const struct {
    const char *name, *coll, *algo, *proto, *op, *dtype;
  } cases[] = {
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "AllReduce", "RING", "LL", "Sum", "fp32"},
      {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "ReduceScatter", "RING", "LL", "Sum", "bf16"},
      {"ncclDevKernel_AllReduce_Sum_bf16_TREE_LL128", "AllReduce", "TREE", "LL128", "Sum", "bf16"},
      {"ncclDevKernel_AllGather_RING_LL", "AllGather", "RING", "LL", "", ""},
      {"ncclDevKernel_AllReduce_Sum_f16_NVLS_SIMPLE", "AllReduce", "NVLS", "SIMPLE", "Sum", "f16"},
      {"ncclKernel_AllReduce_RING_LL_Sum_float", "AllReduce", "RING", "LL", "Sum", "fp32"},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "SendRecv", "RING", "SIMPLE", "Sum", "int8"},
      {"ncclAllReduceRingLLKernel_sum_f32", "AllReduce", "RING", "LL", "Sum", "fp32"},
      {"ncclAllReduceTreeLL128Kernel_sum_f16", "AllReduce", "TREE", "LL128", "Sum", "f16"},
      {"ncclDevKernel_SendRecv", "SendRecv", "", "", "", ""},
      {"ncclDevKernel_Generic_4", "Generic", "", "", "", ""},
      {"ncclDevKernel_Reduce_Max_u64_RING_LL", "Reduce", "RING", "LL", "Max", "uint64"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nsys_kname_info in;
    nsys_kname_analyze(cases[i].name, NULL, &in);
    CHECK(in.is_nccl);
    CHECK_MSG(!strcmp(in.nccl_collective, cases[i].coll) && !strcmp(in.nccl_algorithm, cases[i].algo) &&
                  !strcmp(in.nccl_protocol, cases[i].proto) && !strcmp(in.nccl_op, cases[i].op) &&
                  !strcmp(in.nccl_dtype, cases[i].dtype),
              "nccl %s: got %s/%s/%s/%s/%s", cases[i].name, in.nccl_collective, in.nccl_algorithm, in.nccl_protocol,
              in.nccl_op, in.nccl_dtype);
  }
  nsys_kname_info in;
  nsys_kname_analyze(NULL, NULL, &in);
  CHECK(!in.is_nccl && in.precision[0] == '\0');
}

int main(void) {
  test_display();
  test_analyze();
  test_nccl();
  return nsys_check_done("explain_kernel_name");
}
