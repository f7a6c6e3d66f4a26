"""Kernel catalog for the generator: realistic H100 training kernels.

Each entry: key -> (shortName, demangledName, mangledName or None, launch API key,
registersPerThread, grid (x, y, z), block (x, y, z), staticSharedMemory,
dynamicSharedMemory, nominal duration in ns).

Names follow what PyTorch 2.x / cuBLAS / FlashAttention 2 / Triton (Inductor) /
NCCL >= 2.19 kernels look like in real Nsight Systems exports. Launch configs and
durations are plausible for a bf16 transformer on an H100, not measurements.
"""

# launch API per kernel family (runtime name, eventClass)
LAUNCH_API = {
    "rt": ("cudaLaunchKernel_v7000", 0),     # aten / cuBLAS / cutlass / flash-attn
    "drv": ("cuLaunchKernel", 1),            # Triton kernels go through the driver API
    "nccl": ("cuLaunchKernelEx", 1),         # NCCL >= 2.19 launches with cuLaunchKernelEx
}

_SM90_GEMM_HOT = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
_SM90_GEMM_QKV = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
_CUTLASS_PROJ = "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8"
_LOGITS_GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"


def _nccl(coll):
    short = "ncclDevKernel_" + coll
    return (short, short + "(ncclDevKernelArgsStorage<(unsigned long)4096>)",
            "_Z%d%s24ncclDevKernelArgsStorageILm4096EE" % (len(short), short))


KERNELS = {
    # ---- forward ----
    "embedding": ("indexSelectLargeIndex",
                  "void at::native::<unnamed>::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, (int)2, (int)2, (int)-2, (bool)1>(at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<const T1, T3>, at::cuda::detail::TensorInfo<const T2, T3>, int, int, T3, T3, long)",
                  "_ZN2at6native57_GLOBAL__N__d3a2a8a4_19_Indexing_cu_89862edb21indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS7_IKS8_S9_EENS7_IKT0_S9_EEiiS9_S9_l",
                  "rt", 32, (2048, 1, 1), (128, 1, 1), 0, 0, 15_000),
    "ln_attn": ("triton_per_fused_add_native_layer_norm_0", "triton_per_fused_add_native_layer_norm_0", None,
                "drv", 24, (4096, 1, 1), (256, 1, 1), 0, 16, 18_000),
    "gemm_qkv": (_SM90_GEMM_QKV, _SM90_GEMM_QKV, _SM90_GEMM_QKV,
                 "rt", 168, (96, 8, 1), (128, 1, 1), 0, 213_504, 180_000),
    "flash_fwd": ("flash_fwd_kernel",
                  "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, (bool)1, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)",
                  "_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi128ELi64ELi4ES3_EELb0ELb1ELb0ELb0ELb0ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE",
                  "rt", 255, (16, 32, 8), (128, 1, 1), 0, 49_152, 210_000),
    "gemm_proj": (_CUTLASS_PROJ,
                  "void cutlass::Kernel2<" + _CUTLASS_PROJ + ">(T1::Params)",
                  "_ZN7cutlass7Kernel2I" + str(len(_CUTLASS_PROJ)) + _CUTLASS_PROJ + "EEvNT_6ParamsE",
                  "rt", 128, (64, 16, 1), (128, 1, 1), 0, 65_536, 70_000),
    "ln_mlp": ("triton_per_fused_add_native_layer_norm_1", "triton_per_fused_add_native_layer_norm_1", None,
               "drv", 24, (4096, 1, 1), (256, 1, 1), 0, 16, 18_000),
    "gemm_hot": (_SM90_GEMM_HOT, _SM90_GEMM_HOT, _SM90_GEMM_HOT,
                 "rt", 168, (132, 1, 1), (384, 1, 1), 0, 232_448, 340_000),
    "gelu": ("triton_poi_fused_gelu_2", "triton_poi_fused_gelu_2", None,
             "drv", 20, (16384, 1, 1), (512, 1, 1), 0, 0, 25_000),
    "final_ln": ("vectorized_layer_norm_kernel",
                 "void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
                 "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIN3c108BFloat16EfLb0EEEviT0_PKT_S8_S8_PS5_S9_PS6_",
                 "rt", 32, (4096, 1, 1), (128, 1, 1), 0, 0, 20_000),
    "logits": (_LOGITS_GEMM, _LOGITS_GEMM, _LOGITS_GEMM,
               "rt", 230, (250, 16, 1), (256, 1, 1), 0, 98_304, 600_000),
    "softmax": ("cunn_SoftMaxForward",
                "void at::native::<unnamed>::cunn_SoftMaxForward<(int)8, c10::BFloat16, float, c10::BFloat16, at::native::<unnamed>::LogSoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
                "_ZN2at6native43_GLOBAL__N__8b5e2a4f_10_SoftMax_cu_9f978f6319cunn_SoftMaxForwardILi8EN3c108BFloat16EfS4_NS1_25LogSoftMaxForwardEpilogueEEEvPT2_PKT0_i",
                "rt", 38, (4096, 1, 1), (1024, 1, 1), 0, 0, 90_000),
    "loss": ("reduce_kernel",
             "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, (int)4, (int)4>>(T3)",
             "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_",
             "rt", 32, (1, 1, 1), (32, 16, 1), 0, 16, 12_000),
    # ---- backward ----
    "softmax_bwd": ("cunn_SoftMaxBackward",
                    "void at::native::<unnamed>::cunn_SoftMaxBackward<(int)8, c10::BFloat16, float, c10::BFloat16, at::native::<unnamed>::LogSoftMaxBackwardEpilogue>(T2 *, const T4 *, const T4 *, int)",
                    "_ZN2at6native43_GLOBAL__N__8b5e2a4f_10_SoftMax_cu_9f978f6320cunn_SoftMaxBackwardILi8EN3c108BFloat16EfS4_NS1_26LogSoftMaxBackwardEpilogueEEEvPT2_PKT0_S9_i",
                    "rt", 40, (4096, 1, 1), (1024, 1, 1), 0, 0, 90_000),
    "gelu_bwd": ("triton_poi_fused_gelu_backward_3", "triton_poi_fused_gelu_backward_3", None,
                 "drv", 22, (16384, 1, 1), (512, 1, 1), 0, 0, 30_000),
    "ln_bwd": ("layer_norm_grad_input_kernel_vectorized",
               "void at::native::<unnamed>::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(const T1 *, const T1 *, const T2 *, const T2 *, const T1 *, T1 *, int)",
               "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a39layer_norm_grad_input_kernel_vectorizedIN3c108BFloat16EfEEvPKT_S7_PKT0_SA_S7_PS5_i",
               "rt", 40, (4096, 1, 1), (128, 1, 1), 0, 0, 35_000),
    "flash_bwd": ("flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
                  "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<(int)128, (int)64, (int)128, (int)8, (int)2, (int)4, (int)2, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)64, (int)128, (int)8, cutlass::bfloat16_t>>, (bool)0, (bool)1, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0>(flash::Flash_bwd_params)",
                  "_ZN5flash44flash_bwd_dq_dk_dv_loop_seqk_parallel_kernelI23Flash_bwd_kernel_traitsILi128ELi64ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi8ES3_EELb0ELb1ELb0ELb0ELb0ELb1ELb0EEEvNS_16Flash_bwd_paramsE",
                  "rt", 255, (32, 8, 32), (256, 1, 1), 0, 114_688, 480_000),
    "emb_bwd": ("embedding_backward_feature_kernel",
                "void at::native::<unnamed>::embedding_backward_feature_kernel<c10::BFloat16, float, long>(const T3 *, const T1 *, T1 *, int, long, int, int)",
                "_ZN2at6native54_GLOBAL__N__8a1bd9f1_21_Embedding_cu_6c8fd2a533embedding_backward_feature_kernelIN3c108BFloat16EflEEvPKT1_PKT_PS8_ilii",
                "rt", 40, (256, 1, 1), (32, 32, 1), 8_448, 0, 40_000),
    # ---- optimizer (small-kernel storm: un-fused foreach Adam) ----
    "opt_mul": ("vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)",
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
                "rt", 16, (120, 1, 1), (128, 1, 1), 0, 0, 2_400),
    "opt_add": ("vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
                "rt", 16, (120, 1, 1), (128, 1, 1), 0, 0, 2_600),
    "opt_sqrt": ("vectorized_elementwise_kernel",
                 "void at::native::vectorized_elementwise_kernel<(int)4, at::native::sqrt_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
                 "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_16sqrt_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
                 "rt", 16, (120, 1, 1), (128, 1, 1), 0, 0, 2_200),
    "opt_div": ("vectorized_elementwise_kernel",
                "void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float>>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10DivFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_",
                "rt", 16, (120, 1, 1), (128, 1, 1), 0, 0, 2_500),
    # ---- NCCL (communication stream) ----
    "nccl_allgather": _nccl("AllGather_RING_LL") + ("nccl", 96, (8, 1, 1), (512, 1, 1), 0, 0, 150_000),
    "nccl_allreduce": _nccl("AllReduce_Sum_bf16_RING_LL") + ("nccl", 96, (16, 1, 1), (640, 1, 1), 0, 0, 0),
    "nccl_reducescatter": _nccl("ReduceScatter_Sum_bf16_RING_LL") + ("nccl", 96, (16, 1, 1), (640, 1, 1), 0, 0, 220_000),
}

OPT_STORM = ("opt_mul", "opt_add", "opt_sqrt", "opt_div")

# per-layer kernel sequences
FWD_ATTN = ("ln_attn", "gemm_qkv", "flash_fwd", "gemm_proj")
FWD_MLP = ("ln_mlp", "gemm_hot", "gelu", "gemm_hot")
BWD_MLP = ("gemm_hot", "gemm_hot", "gelu_bwd", "gemm_hot", "gemm_hot", "ln_bwd")
BWD_ATTN = ("gemm_proj", "gemm_proj", "flash_bwd", "gemm_qkv", "gemm_qkv", "ln_bwd")
FWD_HEAD = ("final_ln", "logits", "softmax", "loss")
BWD_HEAD = ("softmax_bwd", "logits", "logits")

GPU = {
    "name": "NVIDIA H100 80GB HBM3", "chipName": "GH100", "l2CacheSize": 52_428_800,
    "totalMemory": 85_045_772_288, "memoryBandwidth": 3_352_320_000_000, "clockRate": 1_980_000_000,
    "smCount": 132, "computeMajor": 9, "computeMinor": 0, "asyncEngines": 3,
    "maxShmemPerBlockOptin": 232_448, "maxShmemPerSm": 233_472, "localMemoryTotal": 250_871_808,
}
