/* The registry table: every analysis with its params and defaults. The
 * definitions are documented in docs/analyses.md. */
#include "analysis/analyses.h"

static const nsys_aparam nsys__p_top_kernels[] = {
    {"limit", NSYS_AP_INT, "20", "rows to return (0: all)"},
    {"names", NSYS_AP_STR, "short", "group by short or demangled kernel name"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_gaps[] = {
    {"minGapNs", NSYS_AP_INT, "1000000", "report gaps at least this long"},
    {"limit", NSYS_AP_INT, "20", "rows to return, longest first (0: all)"},
    {"scope", NSYS_AP_STR, "both", "device (union of all streams), stream, or both"},
    {"kernelWaitNs", NSYS_AP_INT, "30", "HTA's consecutive-kernel delay: shorter stream gaps are kernel wait"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_launch[] = {
    {"smallKernelNs", NSYS_AP_INT, "10000", "kernels shorter than this are small"},
    {"stormMinKernels", NSYS_AP_INT, "100", "a storm is a run of at least this many consecutive small kernels"},
    {"stormMaxGapNs", NSYS_AP_INT, "100000", "a GPU pause longer than this ends a storm"},
    {"limit", NSYS_AP_INT, "20", "rows to return (0: all)"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_overlap[] = {
    {"perIteration", NSYS_AP_BOOL, "true", "also split per iteration (see iterations)"},
    {"marker", NSYS_AP_STR, "", "iteration NVTX name substring (empty: auto-detect)"},
    {"gapNs", NSYS_AP_INT, "2000000", "gap-based iteration fallback: a GPU gap longer than this ends an iteration"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_iterations[] = {
    {"marker", NSYS_AP_STR, "", "NVTX range name substring marking one iteration (empty: auto-detect step/iter/batch names)"},
    {"gapNs", NSYS_AP_INT, "2000000", "fallback without markers: a GPU gap longer than this ends an iteration"},
    {"outlierFactor", NSYS_AP_NUM, "1.5", "an iteration longer than this times the median is an outlier"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_limit[] = {
    {"limit", NSYS_AP_INT, "30", "rows to return (0: all)"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_schema[] = {
    {"rowCounts", NSYS_AP_BOOL, "true", "count the rows of every table"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_stage[] = {
    {"stagePattern", NSYS_AP_STR, "", "NVTX stage name substrings separated by | (empty: forward|backward|fwd|bwd|stage)"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_mfu[] = {
    {"modelFlops", NSYS_AP_NUM, "0", "model FLOPs per iteration"},
    {"params", NSYS_AP_NUM, "0", "model parameters N (with tokens: FLOPs = 6*N*T)"},
    {"tokens", NSYS_AP_NUM, "0", "tokens per iteration T"},
    {"peakTflops", NSYS_AP_NUM, "0", "override the GPU peak (TFLOP/s)"},
    {"dtype", NSYS_AP_STR, "bf16", "peak to use: bf16, fp16, fp8 or tf32"},
    {"marker", NSYS_AP_STR, "", "iteration NVTX marker (see iterations)"},
    {"gapNs", NSYS_AP_INT, "2000000", "gap-based iteration fallback"},
    {NULL, 0, NULL, NULL},
};
static const nsys_aparam nsys__p_none[] = {
    {NULL, 0, NULL, NULL},
};

const nsys_analysis nsys_analyses[] = {
    {"top_kernels", "Kernels grouped by name: count, total, avg, min, max, median, p95, stddev, share of kernel time, streams",
     nsys__p_top_kernels, nsys_an_top_kernels, &nsys_rd_tk_row, &nsys_rd_tk_sum},
    {"gpu_idle_gaps", "GPU idle gaps per device (union of all streams) and per stream, with the CPU activity during each gap and HTA's host/kernel/other split",
     nsys__p_gaps, nsys_an_gpu_idle_gaps, &nsys_rd_gap_row, &nsys_rd_gap_sum},
    {"kernel_launch_overhead", "Launch API time and queue delay per kernel name; kernels shorter than their launch; small-kernel storms; exposed launch time",
     nsys__p_launch, nsys_an_kernel_launch_overhead, &nsys_rd_kl_row, &nsys_rd_kl_sum},
    {"sync_cost", "Synchronisation APIs (device, stream, event, blocking memcpy) and the GPU idle time during them",
     nsys__p_none, nsys_an_sync_cost, &nsys_rd_sync_row, &nsys_rd_sync_sum},
    {"overlap", "Compute vs communication (NCCL) on interval unions per device: compute-only, comm-only, overlapped, idle, % of communication hidden; per iteration",
     nsys__p_overlap, nsys_an_overlap, &nsys_rd_ov_row, &nsys_rd_ov_sum},
    {"nccl_breakdown", "NCCL kernels by collective, algorithm, protocol, dtype and reduction (old and new NCCL names); per stream and per rank",
     nsys__p_none, nsys_an_nccl_breakdown, &nsys_rd_nc_row, &nsys_rd_nc_sum},
    {"iterations", "Training/inference iterations from NVTX markers (or GPU gaps): duration, compute, NCCL, idle; outliers above 1.5x the median",
     nsys__p_iterations, nsys_an_iterations, &nsys_rd_it_row, &nsys_rd_it_sum},
    {"memory_transfers", "Memory copies by copy kind and source/destination memory: count, bytes, time, GB/s; pageable and synchronous copies",
     nsys__p_none, nsys_an_memory_transfers, &nsys_rd_mem_row, &nsys_rd_mem_sum},
    {"stream_classification", "Streams classified compute, comm, copy or mixed (one-sided purity); comm purpose from the enclosing NVTX",
     nsys__p_none, nsys_an_stream_classification, &nsys_rd_sc_row, &nsys_rd_sc_sum},
    {"nvtx_summary", "Per NVTX name: count, CPU time, projected GPU time, kernel time; the kernel -> innermost NVTX map",
     nsys__p_limit, nsys_an_nvtx_summary, &nsys_rd_nv_row, &nsys_rd_nv_sum},
    {"thread_utilization", "CPU time per thread from CPU sampling or OS runtime traces, with CUDA API time",
     nsys__p_limit, nsys_an_thread_utilization, &nsys_rd_tu_row, &nsys_rd_tu_sum},
    {"schema_inspect", "Tables, columns and row counts of the export",
     nsys__p_schema, nsys_an_schema_inspect, &nsys_rd_sch_row, &nsys_rd_sch_sum},
    {"stage_overlap", "Per (rank, NVTX stage): exposed communication, time-weighted overlap and per-kernel min/max overlap",
     nsys__p_stage, nsys_an_stage_overlap, &nsys_rd_st_row, &nsys_rd_st_sum},
    {"mfu", "Achieved TFLOP/s and MFU per iteration from model FLOPs (or 6*params*tokens) and the GPU peak",
     nsys__p_mfu, nsys_an_mfu, &nsys_rd_mfu_row, &nsys_rd_mfu_sum},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};
