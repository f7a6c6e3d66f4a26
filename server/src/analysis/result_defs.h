/* The record types of every analysis result and of the report, declared once: for each, the
 * columns in JSON key order (X(HANDLE, "key", type, sub), analysis/result.h).
 * The definitions are in result_defs.c; docs/analyses.md defines the numbers.
 * Handles are prefixed by their record type, so a column of one analysis
 * cannot be read from another's by a typo that compiles. */
#ifndef NSYS_ANALYSIS_RESULT_DEFS_H
#define NSYS_ANALYSIS_RESULT_DEFS_H

#include "analysis/result.h"

/* ---- shared */
#define NSYS_RD_WINDOW(X) \
  X(WIN_START, "start", i64, NULL) \
  X(WIN_END, "end", i64, NULL)
#define NSYS__REC nsys_rd_window
NSYS_RDECL(NSYS_RD_WINDOW)
#undef NSYS__REC
/* lists of scalars (one column, written bare) */
#define NSYS_RD_STRLIST(X) X(STRLIST_V, "", str, NULL)
#define NSYS__REC nsys_rd_strlist
NSYS_RDECL(NSYS_RD_STRLIST)
#undef NSYS__REC
#define NSYS_RD_NUMLIST(X) X(NUMLIST_V, "", f64, NULL)
#define NSYS__REC nsys_rd_numlist
NSYS_RDECL(NSYS_RD_NUMLIST)
#undef NSYS__REC

/* ---- top_kernels */
#define NSYS_RD_TK_STREAM(X) \
  X(TKST_DEVICE, "device", i64, NULL) \
  X(TKST_STREAM, "stream", i64, NULL)
#define NSYS__REC nsys_rd_tk_stream
NSYS_RDECL(NSYS_RD_TK_STREAM)
#undef NSYS__REC
#define NSYS_RD_TK_ROW(X) \
  X(TK_NAME, "name", str, NULL) \
  X(TK_COUNT, "count", i64, NULL) \
  X(TK_TOTAL_NS, "totalNs", i64, NULL) \
  X(TK_AVG_NS, "avgNs", f64, NULL) \
  X(TK_MIN_NS, "minNs", i64, NULL) \
  X(TK_MAX_NS, "maxNs", i64, NULL) \
  X(TK_MEDIAN_NS, "medianNs", f64, NULL) \
  X(TK_P95_NS, "p95Ns", f64, NULL) \
  X(TK_STDDEV_NS, "stddevNs", f64, NULL) \
  X(TK_PCT_OF_GPU, "pctOfGpu", f64, NULL) \
  X(TK_NCCL, "nccl", bool, NULL) \
  X(TK_STREAMS, "streams", arr, &nsys_rd_tk_stream)
#define NSYS__REC nsys_rd_tk_row
NSYS_RDECL(NSYS_RD_TK_ROW)
#undef NSYS__REC
#define NSYS_RD_TK_SUM(X) \
  X(TKS_KERNEL_COUNT, "kernelCount", i64, NULL) \
  X(TKS_DISTINCT_NAMES, "distinctNames", i64, NULL) \
  X(TKS_TOTAL_KERNEL_NS, "totalKernelNs", i64, NULL) \
  X(TKS_GPU_BUSY_NS, "gpuBusyNs", i64, NULL) \
  X(TKS_NAMES, "names", str, NULL) \
  X(TKS_PCT_BASIS, "pctOfGpuBasis", str, NULL)
#define NSYS__REC nsys_rd_tk_sum
NSYS_RDECL(NSYS_RD_TK_SUM)
#undef NSYS__REC

/* ---- kernel_launch_overhead */
#define NSYS_RD_KL_ROW(X) \
  X(KL_NAME, "name", str, NULL) \
  X(KL_COUNT, "count", i64, NULL) \
  X(KL_AVG_KERNEL_NS, "avgKernelNs", f64, NULL) \
  X(KL_AVG_API_NS, "avgApiNs", f64, NULL) \
  X(KL_AVG_QUEUE_NS, "avgQueueNs", f64, NULL) \
  X(KL_MAX_QUEUE_NS, "maxQueueNs", i64, NULL) \
  X(KL_TOTAL_API_NS, "totalApiNs", i64, NULL) \
  X(KL_SHORTER, "shorterThanLaunch", i64, NULL) \
  X(KL_LAUNCH_BOUND, "launchBound", bool, NULL)
#define NSYS__REC nsys_rd_kl_row
NSYS_RDECL(NSYS_RD_KL_ROW)
#undef NSYS__REC
#define NSYS_RD_KL_STORM(X) \
  X(KLST_DEVICE, "device", i64, NULL) \
  X(KLST_START, "start", i64, NULL) \
  X(KLST_END, "end", i64, NULL) \
  X(KLST_KERNELS, "kernels", i64, NULL) \
  X(KLST_PER_MS, "kernelsPerMs", f64, NULL)
#define NSYS__REC nsys_rd_kl_storm
NSYS_RDECL(NSYS_RD_KL_STORM)
#undef NSYS__REC
#define NSYS_RD_KL_SUM(X) \
  X(KLS_KERNELS, "kernels", i64, NULL) \
  X(KLS_LAUNCHED, "launchedKernels", i64, NULL) \
  X(KLS_SHORTER, "kernelsShorterThanLaunch", i64, NULL) \
  X(KLS_PCT_SHORTER, "pctShorterThanLaunch", f64, NULL) \
  X(KLS_SMALL, "smallKernels", i64, NULL) \
  X(KLS_PCT_SMALL, "pctSmallKernels", f64, NULL) \
  X(KLS_TOTAL_API_NS, "totalApiNs", i64, NULL) \
  X(KLS_AVG_API_NS, "avgApiNs", f64, NULL) \
  X(KLS_AVG_QUEUE_NS, "avgQueueNs", f64, NULL) \
  X(KLS_EXPOSED_NS, "exposedLaunchNs", i64, NULL) \
  X(KLS_STORM_COUNT, "stormCount", i64, NULL) \
  X(KLS_STORMS, "storms", arr, &nsys_rd_kl_storm)
#define NSYS__REC nsys_rd_kl_sum
NSYS_RDECL(NSYS_RD_KL_SUM)
#undef NSYS__REC

/* ---- gpu_idle_gaps */
#define NSYS_RD_GAP_BUCKETS(X) \
  X(GB_LT5MS, "lt5ms", i64, NULL) \
  X(GB_5TO50MS, "5to50ms", i64, NULL) \
  X(GB_GE50MS, "ge50ms", i64, NULL)
#define NSYS__REC nsys_rd_gap_buckets
NSYS_RDECL(NSYS_RD_GAP_BUCKETS)
#undef NSYS__REC
/* the gap causes, in gaps.c's order (a cause's column is its index) */
#define NSYS_RD_GAP_CAUSES(X) \
  X(GC_SYNC, "sync", i64, NULL) \
  X(GC_MEMCPY, "memcpy", i64, NULL) \
  X(GC_LAUNCH, "launch", i64, NULL) \
  X(GC_MODULE_LOAD, "module_load", i64, NULL) \
  X(GC_ALLOC, "alloc", i64, NULL) \
  X(GC_HOST_REGISTER, "host_register", i64, NULL) \
  X(GC_CPU_STALL, "cpu_stall", i64, NULL)
#define NSYS__REC nsys_rd_gap_causes
NSYS_RDECL(NSYS_RD_GAP_CAUSES)
#undef NSYS__REC
/* CPU time by API class during a gap: the causes but cpu_stall, then otherApi */
#define NSYS_RD_GAP_CPU(X) \
  X(GCPU_SYNC, "sync", i64, NULL) \
  X(GCPU_MEMCPY, "memcpy", i64, NULL) \
  X(GCPU_LAUNCH, "launch", i64, NULL) \
  X(GCPU_MODULE_LOAD, "moduleLoad", i64, NULL) \
  X(GCPU_ALLOC, "alloc", i64, NULL) \
  X(GCPU_HOST_REGISTER, "hostRegister", i64, NULL) \
  X(GCPU_OTHER_API, "otherApi", i64, NULL)
#define NSYS__REC nsys_rd_gap_cpu
NSYS_RDECL(NSYS_RD_GAP_CPU)
#undef NSYS__REC
#define NSYS_RD_GAP_SPLIT(X) \
  X(GSPL_HOST_WAIT_NS, "hostWaitNs", i64, NULL) \
  X(GSPL_KERNEL_WAIT_NS, "kernelWaitNs", i64, NULL) \
  X(GSPL_OTHER_NS, "otherNs", i64, NULL)
#define NSYS__REC nsys_rd_gap_split
NSYS_RDECL(NSYS_RD_GAP_SPLIT)
#undef NSYS__REC
/* the gap phases, in analysis/gap_phase.h's order (a phase's column is its value) */
#define NSYS_RD_GAP_PHASES(X) \
  X(GPH_STEADY, "steady", i64, NULL) \
  X(GPH_PROCESS_SWITCH, "process_switch", i64, NULL) \
  X(GPH_STARTUP, "startup", i64, NULL) \
  X(GPH_FIRST_LAUNCH, "first_launch", i64, NULL)
#define NSYS__REC nsys_rd_gap_phases
NSYS_RDECL(NSYS_RD_GAP_PHASES)
#undef NSYS__REC
#define NSYS_RD_GAP_DEV(X) \
  X(GD_DEVICE, "device", i64, NULL) \
  X(GD_START, "start", i64, NULL) \
  X(GD_END, "end", i64, NULL) \
  X(GD_BUSY_NS, "busyNs", i64, NULL) \
  X(GD_IDLE_NS, "idleNs", i64, NULL) \
  X(GD_IDLE_PCT, "idlePct", f64, NULL) \
  X(GD_GAP_COUNT, "gapCount", i64, NULL) \
  X(GD_GAP_IDLE_NS, "gapIdleNs", i64, NULL) \
  X(GD_BUCKETS, "buckets", obj, &nsys_rd_gap_buckets) \
  X(GD_CAUSE_NS, "causeNs", obj, &nsys_rd_gap_causes) \
  X(GD_PHASE_NS, "phaseNs", obj, &nsys_rd_gap_phases) \
  X(GD_PHASE_GAPS, "phaseGaps", obj, &nsys_rd_gap_phases) \
  X(GD_SPLIT, "streamIdleSplit", obj, &nsys_rd_gap_split)
#define NSYS__REC nsys_rd_gap_dev
NSYS_RDECL(NSYS_RD_GAP_DEV)
#undef NSYS__REC
#define NSYS_RD_GAP_ROW(X) \
  X(GAP_DEVICE, "device", i64, NULL) \
  X(GAP_STREAM, "stream", i64, NULL) \
  X(GAP_START, "start", i64, NULL) \
  X(GAP_END, "end", i64, NULL) \
  X(GAP_DURATION_NS, "durationNs", i64, NULL) \
  X(GAP_CAUSE, "cause", str, NULL) \
  X(GAP_CPU_NS, "cpuNs", obj, &nsys_rd_gap_cpu) \
  X(GAP_TOP_API, "topApi", str, NULL) \
  X(GAP_AFTER_SYNC, "afterSync", str, NULL) \
  X(GAP_CPU_NVTX, "cpuNvtx", str, NULL) \
  X(GAP_PHASE, "phase", str, NULL) \
  X(GAP_PHASE_PID, "phasePid", i64, NULL) \
  X(GAP_FIRST_LAUNCH, "firstLaunch", str, NULL) \
  X(GAP_FIRST_ITERATION, "firstIterationStart", i64, NULL) \
  X(GAP_STREAM_SPLIT, "streamSplit", str, NULL) \
  X(GAP_NEXT_OP, "nextOp", str, NULL)
#define NSYS__REC nsys_rd_gap_row
NSYS_RDECL(NSYS_RD_GAP_ROW)
#undef NSYS__REC
#define NSYS_RD_GAP_SUM(X) \
  X(GS_DEVICES, "devices", arr, &nsys_rd_gap_dev) \
  X(GS_GAP_COUNT, "gapCount", i64, NULL) \
  X(GS_MIN_GAP_NS, "minGapNs", i64, NULL) \
  X(GS_DEVICE_IDLE_NS, "deviceIdleNs", i64, NULL) \
  X(GS_SPLIT, "streamIdleSplit", obj, &nsys_rd_gap_split)
#define NSYS__REC nsys_rd_gap_sum
NSYS_RDECL(NSYS_RD_GAP_SUM)
#undef NSYS__REC

/* ---- sync_cost */
#define NSYS_RD_SYNC_EVENT(X) \
  X(SE_SYNC_TYPE, "syncType", i64, NULL) \
  X(SE_LABEL, "label", str, NULL) \
  X(SE_COUNT, "count", i64, NULL) \
  X(SE_TOTAL_NS, "totalNs", i64, NULL)
#define NSYS__REC nsys_rd_sync_event
NSYS_RDECL(NSYS_RD_SYNC_EVENT)
#undef NSYS__REC
#define NSYS_RD_SYNC_ROW(X) \
  X(SY_API, "api", str, NULL) \
  X(SY_KIND, "kind", str, NULL) \
  X(SY_COUNT, "count", i64, NULL) \
  X(SY_TOTAL_NS, "totalNs", i64, NULL) \
  X(SY_AVG_NS, "avgNs", f64, NULL) \
  X(SY_MAX_NS, "maxNs", i64, NULL) \
  X(SY_GPU_IDLE_NS, "gpuIdleNs", i64, NULL)
#define NSYS__REC nsys_rd_sync_row
NSYS_RDECL(NSYS_RD_SYNC_ROW)
#undef NSYS__REC
#define NSYS_RD_SYNC_SUM(X) \
  X(SYS_CALLS, "calls", i64, NULL) \
  X(SYS_TOTAL_NS, "totalSyncNs", i64, NULL) \
  X(SYS_WALL_NS, "wallSyncNs", i64, NULL) \
  X(SYS_PCT_OF_WINDOW, "pctOfWindow", f64, NULL) \
  X(SYS_GPU_IDLE_NS, "gpuIdleDuringSyncNs", i64, NULL) \
  X(SYS_EVENTS, "gpuSyncEvents", arr, &nsys_rd_sync_event)
#define NSYS__REC nsys_rd_sync_sum
NSYS_RDECL(NSYS_RD_SYNC_SUM)
#undef NSYS__REC

/* ---- overlap (rows, summary.devices and summary.iterations: one record
 * type; summary.total leaves device/start/end absent, only iterations set
 * `iteration`) */
#define NSYS_RD_OV_ROW(X) \
  X(OV_DEVICE, "device", i64, NULL) \
  X(OV_START, "start", i64, NULL) \
  X(OV_END, "end", i64, NULL) \
  X(OV_COMPUTE_ONLY_NS, "computeOnlyNs", i64, NULL) \
  X(OV_COMM_ONLY_NS, "commOnlyNs", i64, NULL) \
  X(OV_OVERLAP_NS, "overlapNs", i64, NULL) \
  X(OV_IDLE_NS, "idleNs", i64, NULL) \
  X(OV_COMPUTE_NS, "computeNs", i64, NULL) \
  X(OV_COMM_NS, "commNs", i64, NULL) \
  X(OV_COMM_HIDDEN_PCT, "commHiddenPct", f64, NULL) \
  X(OV_IDLE_PCT, "idlePct", f64, NULL) \
  X(OV_ITERATION, "iteration", i64, NULL)
#define NSYS__REC nsys_rd_ov_row
NSYS_RDECL(NSYS_RD_OV_ROW)
#undef NSYS__REC
#define NSYS_RD_OV_SUM(X) \
  X(OVS_DEVICES, "devices", arr, &nsys_rd_ov_row) \
  X(OVS_TOTAL, "total", obj, &nsys_rd_ov_row) \
  X(OVS_ITERATIONS, "iterations", arr, &nsys_rd_ov_row) \
  X(OVS_ITERATION_METHOD, "iterationMethod", str, NULL) \
  X(OVS_COMM_RULE, "commRule", str, NULL)
#define NSYS__REC nsys_rd_ov_sum
NSYS_RDECL(NSYS_RD_OV_SUM)
#undef NSYS__REC

/* ---- stream_classification (summary keys: the classes, in overlap.c's order) */
#define NSYS_RD_SC_ROW(X) \
  X(SC_DEVICE, "device", i64, NULL) \
  X(SC_STREAM, "stream", i64, NULL) \
  X(SC_CLASS, "class", str, NULL) \
  X(SC_KERNELS, "kernels", i64, NULL) \
  X(SC_COMM_KERNELS, "commKernels", i64, NULL) \
  X(SC_COPIES, "copies", i64, NULL) \
  X(SC_BUSY_NS, "busyNs", i64, NULL) \
  X(SC_PURPOSE, "purpose", str, NULL)
#define NSYS__REC nsys_rd_sc_row
NSYS_RDECL(NSYS_RD_SC_ROW)
#undef NSYS__REC
#define NSYS_RD_SC_SUM(X) \
  X(SCS_COMPUTE, "compute", i64, NULL) \
  X(SCS_COMM, "comm", i64, NULL) \
  X(SCS_COPY, "copy", i64, NULL) \
  X(SCS_MIXED, "mixed", i64, NULL) \
  X(SCS_RULE, "rule", str, NULL)
#define NSYS__REC nsys_rd_sc_sum
NSYS_RDECL(NSYS_RD_SC_SUM)
#undef NSYS__REC

/* ---- nccl_breakdown */
#define NSYS_RD_NC_ROW(X) \
  X(NC_COLLECTIVE, "collective", str, NULL) \
  X(NC_ALGORITHM, "algorithm", str, NULL) \
  X(NC_PROTOCOL, "protocol", str, NULL) \
  X(NC_DTYPE, "dtype", str, NULL) \
  X(NC_REDOP, "redop", str, NULL) \
  X(NC_COUNT, "count", i64, NULL) \
  X(NC_TOTAL_NS, "totalNs", i64, NULL) \
  X(NC_AVG_NS, "avgNs", f64, NULL) \
  X(NC_MIN_NS, "minNs", i64, NULL) \
  X(NC_MAX_NS, "maxNs", i64, NULL) \
  X(NC_PCT_OF_NCCL, "pctOfNccl", f64, NULL)
#define NSYS__REC nsys_rd_nc_row
NSYS_RDECL(NSYS_RD_NC_ROW)
#undef NSYS__REC
#define NSYS_RD_NC_STREAM(X) \
  X(NCST_DEVICE, "device", i64, NULL) \
  X(NCST_STREAM, "stream", i64, NULL) \
  X(NCST_COUNT, "count", i64, NULL) \
  X(NCST_TOTAL_NS, "totalNs", i64, NULL) \
  X(NCST_COLLECTIVES, "collectives", list, &nsys_rd_strlist)
#define NSYS__REC nsys_rd_nc_stream
NSYS_RDECL(NSYS_RD_NC_STREAM)
#undef NSYS__REC
#define NSYS_RD_NC_RANK(X) \
  X(NCR_DEVICE, "device", i64, NULL) \
  X(NCR_COUNT, "count", i64, NULL) \
  X(NCR_TOTAL_NS, "totalNs", i64, NULL) \
  X(NCR_UNION_NS, "unionNs", i64, NULL)
#define NSYS__REC nsys_rd_nc_rank
NSYS_RDECL(NSYS_RD_NC_RANK)
#undef NSYS__REC
#define NSYS_RD_NC_SUM(X) \
  X(NCS_BY_STREAM, "byStream", arr, &nsys_rd_nc_stream) \
  X(NCS_BY_RANK, "byRank", arr, &nsys_rd_nc_rank) \
  X(NCS_KERNELS, "kernels", i64, NULL) \
  X(NCS_TOTAL_NS, "totalNs", i64, NULL) \
  X(NCS_DOMINANT, "dominantCollective", str, NULL)
#define NSYS__REC nsys_rd_nc_sum
NSYS_RDECL(NSYS_RD_NC_SUM)
#undef NSYS__REC

/* ---- iterations */
#define NSYS_RD_IT_ROW(X) \
  X(IT_INDEX, "index", i64, NULL) \
  X(IT_DEVICE, "device", i64, NULL) \
  X(IT_NAME, "name", str, NULL) \
  X(IT_START, "start", i64, NULL) \
  X(IT_END, "end", i64, NULL) \
  X(IT_DURATION_NS, "durationNs", i64, NULL) \
  X(IT_KERNELS, "kernels", i64, NULL) \
  X(IT_COMPUTE_NS, "computeNs", i64, NULL) \
  X(IT_NCCL_NS, "ncclNs", i64, NULL) \
  X(IT_OVERLAP_NS, "overlapNs", i64, NULL) \
  X(IT_IDLE_NS, "idleNs", i64, NULL) \
  X(IT_VS_MEDIAN, "vsMedian", f64, NULL) \
  X(IT_OUTLIER, "outlier", bool, NULL)
#define NSYS__REC nsys_rd_it_row
NSYS_RDECL(NSYS_RD_IT_ROW)
#undef NSYS__REC
#define NSYS_RD_IT_DEV(X) \
  X(ITD_DEVICE, "device", i64, NULL) \
  X(ITD_MEDIAN_NS, "medianNs", f64, NULL)
#define NSYS__REC nsys_rd_it_dev
NSYS_RDECL(NSYS_RD_IT_DEV)
#undef NSYS__REC
#define NSYS_RD_IT_SUM(X) \
  X(ITS_METHOD, "method", str, NULL) \
  X(ITS_COUNT, "count", i64, NULL) \
  X(ITS_OUTLIERS, "outliers", i64, NULL) \
  X(ITS_OUTLIER_FACTOR, "outlierFactor", f64, NULL) \
  X(ITS_DEVICES, "devices", arr, &nsys_rd_it_dev)
#define NSYS__REC nsys_rd_it_sum
NSYS_RDECL(NSYS_RD_IT_SUM)
#undef NSYS__REC

/* ---- mfu */
#define NSYS_RD_MFU_ROW(X) \
  X(MFU_INDEX, "index", i64, NULL) \
  X(MFU_DEVICE, "device", i64, NULL) \
  X(MFU_START, "start", i64, NULL) \
  X(MFU_END, "end", i64, NULL) \
  X(MFU_DURATION_NS, "durationNs", i64, NULL) \
  X(MFU_TFLOPS, "achievedTflops", f64, NULL) \
  X(MFU_PCT, "mfuPct", f64, NULL)
#define NSYS__REC nsys_rd_mfu_row
NSYS_RDECL(NSYS_RD_MFU_ROW)
#undef NSYS__REC
#define NSYS_RD_MFU_SUM(X) \
  X(MFUS_MODEL_FLOPS, "modelFlops", f64, NULL) \
  X(MFUS_FLOPS_BASIS, "flopsBasis", str, NULL) \
  X(MFUS_GPU, "gpu", str, NULL) \
  X(MFUS_SPEC_MATCHED, "specMatched", str, NULL) \
  X(MFUS_GPU_KNOWN, "gpuKnown", bool, NULL) \
  X(MFUS_MIG, "mig", bool, NULL) \
  X(MFUS_SM_COUNT, "smCount", i64, NULL) \
  X(MFUS_SPEC_SM_COUNT, "specSmCount", i64, NULL) \
  X(MFUS_PEAK_TFLOPS, "peakTflops", f64, NULL) \
  X(MFUS_PEAK_SOURCE, "peakSource", str, NULL) \
  X(MFUS_DTYPE, "dtype", str, NULL) \
  X(MFUS_ITERATION_METHOD, "iterationMethod", str, NULL) \
  X(MFUS_ITERATIONS, "iterations", i64, NULL) \
  X(MFUS_AVG_TFLOPS, "avgAchievedTflops", f64, NULL) \
  X(MFUS_AVG_MFU_PCT, "avgMfuPct", f64, NULL) \
  X(MFUS_IMPLAUSIBLE, "implausible", bool, NULL)
#define NSYS__REC nsys_rd_mfu_sum
NSYS_RDECL(NSYS_RD_MFU_SUM)
#undef NSYS__REC

/* ---- memory_transfers */
#define NSYS_RD_MEM_ROW(X) \
  X(MEM_COPY_KIND, "copyKind", str, NULL) \
  X(MEM_SRC_KIND, "srcKind", str, NULL) \
  X(MEM_DST_KIND, "dstKind", str, NULL) \
  X(MEM_COUNT, "count", i64, NULL) \
  X(MEM_BYTES, "bytes", i64, NULL) \
  X(MEM_TOTAL_NS, "totalNs", i64, NULL) \
  X(MEM_GB_PER_SEC, "gbPerSec", f64, NULL) \
  X(MEM_AVG_BYTES, "avgBytes", f64, NULL) \
  X(MEM_PAGEABLE, "pageable", bool, NULL)
#define NSYS__REC nsys_rd_mem_row
NSYS_RDECL(NSYS_RD_MEM_ROW)
#undef NSYS__REC
#define NSYS_RD_MEM_SUM(X) \
  X(MEMS_COUNT, "count", i64, NULL) \
  X(MEMS_BYTES, "bytes", i64, NULL) \
  X(MEMS_TOTAL_NS, "totalNs", i64, NULL) \
  X(MEMS_H2D_COUNT, "h2dCount", i64, NULL) \
  X(MEMS_H2D_BYTES, "h2dBytes", i64, NULL) \
  X(MEMS_H2D_NS, "h2dNs", i64, NULL) \
  X(MEMS_PAGEABLE_COUNT, "pageableCount", i64, NULL) \
  X(MEMS_PAGEABLE_BYTES, "pageableBytes", i64, NULL) \
  X(MEMS_PH2D_COUNT, "pageableH2dCount", i64, NULL) \
  X(MEMS_PH2D_BYTES, "pageableH2dBytes", i64, NULL) \
  X(MEMS_PH2D_NS, "pageableH2dNs", i64, NULL) \
  X(MEMS_PH2D_WINDOW, "pageableH2dWindow", obj, &nsys_rd_window) \
  X(MEMS_SYNC_COPIES, "syncCopies", i64, NULL) \
  X(MEMS_H2D_BUSIEST_DEVICE, "h2dBusiestDevice", i64, NULL) \
  X(MEMS_H2D_BUSIEST_NS, "h2dBusiestDeviceNs", i64, NULL) \
  X(MEMS_H2D_PCT_OF_WINDOW, "h2dPctOfWindow", f64, NULL) \
  X(MEMS_MEMCPY_TABLE, "memcpyTable", bool, NULL)
#define NSYS__REC nsys_rd_mem_sum
NSYS_RDECL(NSYS_RD_MEM_SUM)
#undef NSYS__REC

/* ---- thread_utilization (samples/cpuPct with CPU sampling, else osrtNs/osrtPct with OSRT, else neither) */
#define NSYS_RD_TU_ROW(X) \
  X(TU_PID, "pid", i64, NULL) \
  X(TU_TID, "tid", i64, NULL) \
  X(TU_NAME, "name", str, NULL) \
  X(TU_SAMPLES, "samples", i64, NULL) \
  X(TU_CPU_PCT, "cpuPct", f64, NULL) \
  X(TU_OSRT_NS, "osrtNs", i64, NULL) \
  X(TU_OSRT_PCT, "osrtPct", f64, NULL) \
  X(TU_CUDA_API_NS, "cudaApiNs", i64, NULL) \
  X(TU_CUDA_API_PCT, "cudaApiPct", f64, NULL)
#define NSYS__REC nsys_rd_tu_row
NSYS_RDECL(NSYS_RD_TU_ROW)
#undef NSYS__REC
#define NSYS_RD_TU_SUM(X) \
  X(TUS_SOURCE, "source", str, NULL) \
  X(TUS_THREADS, "threads", i64, NULL) \
  X(TUS_SAMPLES, "samples", i64, NULL) \
  X(TUS_CPU_PCT_BASIS, "cpuPctBasis", str, NULL)
#define NSYS__REC nsys_rd_tu_sum
NSYS_RDECL(NSYS_RD_TU_SUM)
#undef NSYS__REC

/* ---- schema_inspect */
#define NSYS_RD_SCH_COL(X) \
  X(SCHC_NAME, "name", str, NULL) \
  X(SCHC_TYPE, "type", str, NULL)
#define NSYS__REC nsys_rd_sch_col
NSYS_RDECL(NSYS_RD_SCH_COL)
#undef NSYS__REC
#define NSYS_RD_SCH_ROW(X) \
  X(SCH_TABLE, "table", str, NULL) \
  X(SCH_COLUMNS, "columns", arr, &nsys_rd_sch_col) \
  X(SCH_ROW_COUNT, "rowCount", i64, NULL)
#define NSYS__REC nsys_rd_sch_row
NSYS_RDECL(NSYS_RD_SCH_ROW)
#undef NSYS__REC
#define NSYS_RD_SCH_SUM(X) \
  X(SCHS_TABLES, "tables", i64, NULL) \
  X(SCHS_ROWS, "rows", i64, NULL) \
  X(SCHS_SCHEMA_VERSION, "exportSchemaVersion", str, NULL) \
  X(SCHS_NSYS_VERSION, "nsysVersion", str, NULL)
#define NSYS__REC nsys_rd_sch_sum
NSYS_RDECL(NSYS_RD_SCH_SUM)
#undef NSYS__REC

/* ---- nvtx_summary */
#define NSYS_RD_NV_ROW(X) \
  X(NV_NAME, "name", str, NULL) \
  X(NV_COUNT, "count", i64, NULL) \
  X(NV_CPU_NS, "cpuNs", i64, NULL) \
  X(NV_GPU_PROJECTED_NS, "gpuProjectedNs", i64, NULL) \
  X(NV_KERNEL_NS, "kernelNs", i64, NULL) \
  X(NV_WITH_GPU, "rangesWithGpuWork", i64, NULL)
#define NSYS__REC nsys_rd_nv_row
NSYS_RDECL(NSYS_RD_NV_ROW)
#undef NSYS__REC
#define NSYS_RD_NV_MAP(X) \
  X(NVM_KERNEL, "kernel", str, NULL) \
  X(NVM_NVTX, "nvtx", str, NULL) \
  X(NVM_COUNT, "count", i64, NULL) \
  X(NVM_KERNEL_NS, "kernelNs", i64, NULL)
#define NSYS__REC nsys_rd_nv_map
NSYS_RDECL(NSYS_RD_NV_MAP)
#undef NSYS__REC
#define NSYS_RD_NV_SUM(X) \
  X(NVS_KERNEL_TO_NVTX, "kernelToNvtx", arr, &nsys_rd_nv_map) \
  X(NVS_RANGES, "ranges", i64, NULL) \
  X(NVS_DISTINCT_NAMES, "distinctNames", i64, NULL) \
  X(NVS_KERNELS, "kernels", i64, NULL) \
  X(NVS_KERNELS_IN_NVTX, "kernelsInNvtx", i64, NULL) \
  X(NVS_KERNELS_IN_NVTX_PCT, "kernelsInNvtxPct", f64, NULL)
#define NSYS__REC nsys_rd_nv_sum
NSYS_RDECL(NSYS_RD_NV_SUM)
#undef NSYS__REC

/* ---- stage_overlap */
#define NSYS_RD_ST_ROW(X) \
  X(ST_DEVICE, "device", i64, NULL) \
  X(ST_STAGE, "stage", str, NULL) \
  X(ST_RANGES, "ranges", i64, NULL) \
  X(ST_GPU_NS, "gpuNs", i64, NULL) \
  X(ST_COMM_NS, "commNs", i64, NULL) \
  X(ST_EXPOSED_COMM_NS, "exposedCommNs", i64, NULL) \
  X(ST_OVERLAP_PCT, "overlapPct", f64, NULL) \
  X(ST_COMM_KERNELS, "commKernels", i64, NULL) \
  X(ST_MIN_KERNEL_OVERLAP_PCT, "minKernelOverlapPct", f64, NULL) \
  X(ST_MAX_KERNEL_OVERLAP_PCT, "maxKernelOverlapPct", f64, NULL)
#define NSYS__REC nsys_rd_st_row
NSYS_RDECL(NSYS_RD_ST_ROW)
#undef NSYS__REC
#define NSYS_RD_ST_SUM(X) \
  X(STS_STAGES, "stages", i64, NULL) \
  X(STS_EXPOSED_COMM_NS, "exposedCommNs", i64, NULL) \
  X(STS_STAGE_PATTERN, "stagePattern", str, NULL)
#define NSYS__REC nsys_rd_st_sum
NSYS_RDECL(NSYS_RD_ST_SUM)
#undef NSYS__REC

/* ---- report/generate (analysis/report.c): the findings' evidence, one
 * record type per rule, and the report itself */
#define NSYS_RD_EV_SHORT0(X) \
  X(EVS0_KERNELS, "kernels", i64, NULL) \
  X(EVS0_SPAN_NS, "spanNs", i64, NULL) \
  X(EVS0_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_short0
NSYS_RDECL(NSYS_RD_EV_SHORT0)
#undef NSYS__REC
#define NSYS_RD_EV_SHORT(X) \
  X(EVSH_SPAN_NS, "spanNs", i64, NULL) \
  X(EVSH_KERNELS, "kernels", i64, NULL) \
  X(EVSH_ITERATIONS, "iterations", i64, NULL) \
  X(EVSH_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_short
NSYS_RDECL(NSYS_RD_EV_SHORT)
#undef NSYS__REC
#define NSYS_RD_EV_GAP(X) \
  X(EVG_START, "start", i64, NULL) \
  X(EVG_END, "end", i64, NULL) \
  X(EVG_DURATION_NS, "durationNs", i64, NULL) \
  X(EVG_CAUSE, "cause", str, NULL) \
  X(EVG_TOP_API, "topApi", str, NULL) \
  X(EVG_AFTER_SYNC, "afterSync", str, NULL) \
  X(EVG_CPU_NVTX, "cpuNvtx", str, NULL)
#define NSYS__REC nsys_rd_ev_gap
NSYS_RDECL(NSYS_RD_EV_GAP)
#undef NSYS__REC
/* per-device findings (bubbles, exposed NCCL) end with devices and
 * perDevice when merged over several GPUs */
#define NSYS_RD_EV_BUBBLES(X) \
  X(EVB_DEVICE, "device", i64, NULL) \
  X(EVB_IDLE_PCT, "idlePct", f64, NULL) \
  X(EVB_IDLE_NS, "idleNs", i64, NULL) \
  X(EVB_GAPS_OVER_1MS, "gapsOver1ms", i64, NULL) \
  X(EVB_GAP_IDLE_NS, "gapIdleNs", i64, NULL) \
  X(EVB_CAUSE_NS, "causeNs", obj, &nsys_rd_gap_causes) \
  X(EVB_SPLIT, "streamIdleSplit", obj, &nsys_rd_gap_split) \
  X(EVB_LARGEST_GAP, "largestGap", obj, &nsys_rd_ev_gap) \
  X(EVB_WINDOW, "window", obj, &nsys_rd_window) \
  X(EVB_DEVICES, "devices", list, &nsys_rd_numlist) \
  X(EVB_PER_DEVICE, "perDevice", arr, &nsys_rd_ev_bubbles)
#define NSYS__REC nsys_rd_ev_bubbles
NSYS_RDECL(NSYS_RD_EV_BUBBLES)
#undef NSYS__REC
/* the non-steady idle findings (gpu_idle_startup, _first_launch, _process_switch) */
#define NSYS_RD_EV_PHASE_GAP(X) \
  X(EVQG_START, "start", i64, NULL) \
  X(EVQG_END, "end", i64, NULL) \
  X(EVQG_DURATION_NS, "durationNs", i64, NULL) \
  X(EVQG_PID, "pid", i64, NULL) \
  X(EVQG_FIRST_ITERATION, "firstIterationStart", i64, NULL)
#define NSYS__REC nsys_rd_ev_phase_gap
NSYS_RDECL(NSYS_RD_EV_PHASE_GAP)
#undef NSYS__REC
#define NSYS_RD_EV_PHASE(X) \
  X(EVQ_DEVICE, "device", i64, NULL) \
  X(EVQ_PHASE, "phase", str, NULL) \
  X(EVQ_IDLE_NS, "idleNs", i64, NULL) \
  X(EVQ_PCT_OF_SPAN, "pctOfSpan", f64, NULL) \
  X(EVQ_LARGEST_GAP, "largestGap", obj, &nsys_rd_ev_phase_gap) \
  X(EVQ_WINDOW, "window", obj, &nsys_rd_window) \
  X(EVQ_FIRST_LAUNCHED, "firstLaunched", list, &nsys_rd_strlist)
#define NSYS__REC nsys_rd_ev_phase
NSYS_RDECL(NSYS_RD_EV_PHASE)
#undef NSYS__REC
#define NSYS_RD_EV_LAUNCH(X) \
  X(EVL_LAUNCHED, "launchedKernels", i64, NULL) \
  X(EVL_PCT_SHORTER, "pctShorterThanLaunch", f64, NULL) \
  X(EVL_AVG_API_NS, "avgApiNs", f64, NULL) \
  X(EVL_EXPOSED_NS, "exposedLaunchNs", i64, NULL) \
  X(EVL_HOST_WAIT_NS, "hostWaitNs", i64, NULL) \
  X(EVL_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_launch
NSYS_RDECL(NSYS_RD_EV_LAUNCH)
#undef NSYS__REC
#define NSYS_RD_EV_NCCL(X) \
  X(EVN_DEVICE, "device", i64, NULL) \
  X(EVN_COMM_NS, "commNs", i64, NULL) \
  X(EVN_COMM_ONLY_NS, "commOnlyNs", i64, NULL) \
  X(EVN_COMM_ONLY_PCT, "commOnlyPct", f64, NULL) \
  X(EVN_COMM_HIDDEN_PCT, "commHiddenPct", f64, NULL) \
  X(EVN_EXPOSED_SHARE_PCT, "exposedShareOfCommPct", f64, NULL) \
  X(EVN_DOMINANT, "dominantCollective", str, NULL) \
  X(EVN_WINDOW, "window", obj, &nsys_rd_window) \
  X(EVN_DEVICES, "devices", list, &nsys_rd_numlist) \
  X(EVN_PER_DEVICE, "perDevice", arr, &nsys_rd_ev_nccl)
#define NSYS__REC nsys_rd_ev_nccl
NSYS_RDECL(NSYS_RD_EV_NCCL)
#undef NSYS__REC
#define NSYS_RD_EV_PAGEABLE(X) \
  X(EVP_COPIES, "pageableH2dCopies", i64, NULL) \
  X(EVP_BYTES, "pageableH2dBytes", i64, NULL) \
  X(EVP_NS, "pageableH2dNs", i64, NULL) \
  X(EVP_GB_PER_SEC, "gbPerSec", f64, NULL) \
  X(EVP_SYNC_COPIES, "syncCopies", i64, NULL) \
  X(EVP_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_pageable
NSYS_RDECL(NSYS_RD_EV_PAGEABLE)
#undef NSYS__REC
#define NSYS_RD_EV_H2D(X) \
  X(EVH_NS, "h2dNs", i64, NULL) \
  X(EVH_BYTES, "h2dBytes", i64, NULL) \
  X(EVH_COUNT, "h2dCount", i64, NULL) \
  X(EVH_BUSIEST_DEVICE, "busiestDevice", i64, NULL) \
  X(EVH_BUSIEST_NS, "busiestDeviceH2dNs", i64, NULL) \
  X(EVH_PCT_OF_WINDOW, "h2dPctOfWindow", f64, NULL) \
  X(EVH_GB_PER_SEC, "gbPerSec", f64, NULL) \
  X(EVH_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_h2d
NSYS_RDECL(NSYS_RD_EV_H2D)
#undef NSYS__REC
/* the window is the largest storm's (before shortKernels), else the
 * profile's (after it) */
#define NSYS_RD_EV_SMALL(X) \
  X(EVK_SMALL, "smallKernels", i64, NULL) \
  X(EVK_PCT_SMALL, "pctSmallKernels", f64, NULL) \
  X(EVK_STORMS, "storms", i64, NULL) \
  X(EVK_LARGEST_STORM, "largestStorm", obj, &nsys_rd_kl_storm) \
  X(EVK_STORM_WINDOW, "window", obj, &nsys_rd_window) \
  X(EVK_SHORT_KERNELS, "shortKernels", list, &nsys_rd_strlist) \
  X(EVK_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_small
NSYS_RDECL(NSYS_RD_EV_SMALL)
#undef NSYS__REC
#define NSYS_RD_EV_HOTSPOT(X) \
  X(EVT_KERNEL, "kernel", str, NULL) \
  X(EVT_PCT_OF_GPU, "pctOfGpu", f64, NULL) \
  X(EVT_TOTAL_NS, "totalNs", i64, NULL) \
  X(EVT_COUNT, "count", i64, NULL) \
  X(EVT_AVG_NS, "avgNs", f64, NULL) \
  X(EVT_P95_NS, "p95Ns", f64, NULL) \
  X(EVT_CAUSE, "cause", str, NULL) \
  X(EVT_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_hotspot
NSYS_RDECL(NSYS_RD_EV_HOTSPOT)
#undef NSYS__REC
#define NSYS_RD_EV_NVTX(X) \
  X(EVX_RANGES, "nvtxRanges", i64, NULL) \
  X(EVX_KERNELS, "kernels", i64, NULL) \
  X(EVX_PCT, "kernelsInNvtxPct", f64, NULL) \
  X(EVX_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_nvtx
NSYS_RDECL(NSYS_RD_EV_NVTX)
#undef NSYS__REC
#define NSYS_RD_EV_SYNC(X) \
  X(EVY_TOTAL_NS, "totalSyncNs", i64, NULL) \
  X(EVY_GPU_IDLE_NS, "gpuIdleDuringSyncNs", i64, NULL) \
  X(EVY_CALLS, "calls", i64, NULL) \
  X(EVY_TOP_API, "topApi", str, NULL) \
  X(EVY_TOP_API_COUNT, "topApiCount", i64, NULL) \
  X(EVY_TOP_API_NS, "topApiNs", i64, NULL) \
  X(EVY_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_sync
NSYS_RDECL(NSYS_RD_EV_SYNC)
#undef NSYS__REC
#define NSYS_RD_EV_OUTLIER(X) \
  X(EVO_INDEX, "index", i64, NULL) \
  X(EVO_NAME, "name", str, NULL) \
  X(EVO_DEVICE, "device", i64, NULL) \
  X(EVO_START, "start", i64, NULL) \
  X(EVO_END, "end", i64, NULL) \
  X(EVO_DURATION_NS, "durationNs", i64, NULL) \
  X(EVO_VS_MEDIAN, "vsMedian", f64, NULL)
#define NSYS__REC nsys_rd_ev_outlier
NSYS_RDECL(NSYS_RD_EV_OUTLIER)
#undef NSYS__REC
#define NSYS_RD_EV_ITERS(X) \
  X(EVI_PER_DEVICE, "iterationsPerDevice", f64, NULL) \
  X(EVI_OUTLIERS, "outliers", i64, NULL) \
  X(EVI_METHOD, "method", str, NULL) \
  X(EVI_LIST, "outlierIterations", arr, &nsys_rd_ev_outlier) \
  X(EVI_WINDOW, "window", obj, &nsys_rd_window)
#define NSYS__REC nsys_rd_ev_iters
NSYS_RDECL(NSYS_RD_EV_ITERS)
#undef NSYS__REC
/* a finding; its evidence is one of the nsys_rd_ev_* types */
#define NSYS_RD_FINDING(X) \
  X(FND_ID, "id", str, NULL) \
  X(FND_SEVERITY, "severity", str, NULL) \
  X(FND_TITLE, "title", str, NULL) \
  X(FND_EVIDENCE, "evidence", obj, NULL) \
  X(FND_RECOMMENDATION, "recommendation", str, NULL) \
  X(FND_IMPACT_NS, "impactNs", f64, NULL)
#define NSYS__REC nsys_rd_finding
NSYS_RDECL(NSYS_RD_FINDING)
#undef NSYS__REC
#define NSYS_RD_REP_GPU(X) \
  X(RG_ID, "id", i64, NULL) \
  X(RG_NAME, "name", str, NULL) \
  X(RG_SM_COUNT, "smCount", i64, NULL)
#define NSYS__REC nsys_rd_rep_gpu
NSYS_RDECL(NSYS_RD_REP_GPU)
#undef NSYS__REC
#define NSYS_RD_REP_TOTALS(X) \
  X(RT_DURATION_NS, "durationNs", i64, NULL) \
  X(RT_KERNELS, "kernels", i64, NULL) \
  X(RT_KERNEL_NS, "kernelNs", i64, NULL) \
  X(RT_GPU_BUSY_NS, "gpuBusyNs", i64, NULL) \
  X(RT_MEMCPYS, "memcpys", i64, NULL) \
  X(RT_NVTX_RANGES, "nvtxRanges", i64, NULL) \
  X(RT_ITERATIONS, "iterations", i64, NULL) \
  X(RT_ITERATION_METHOD, "iterationMethod", str, NULL) \
  X(RT_DEVICES, "devices", i64, NULL)
#define NSYS__REC nsys_rd_rep_totals
NSYS_RDECL(NSYS_RD_REP_TOTALS)
#undef NSYS__REC
#define NSYS_RD_REP_COUNTS(X) \
  X(RC_CRITICAL, "critical", i64, NULL) \
  X(RC_WARNING, "warning", i64, NULL) \
  X(RC_INFO, "info", i64, NULL)
#define NSYS__REC nsys_rd_rep_counts
NSYS_RDECL(NSYS_RD_REP_COUNTS)
#undef NSYS__REC
/* the report (report.h adds analyses:{name: result} after these) */
#define NSYS_RD_REPORT(X) \
  X(REP_FILE, "file", str, NULL) \
  X(REP_GPUS, "gpus", arr, &nsys_rd_rep_gpu) \
  X(REP_WINDOW, "window", obj, &nsys_rd_window) \
  X(REP_TOTALS, "totals", obj, &nsys_rd_rep_totals) \
  X(REP_COUNTS, "counts", obj, &nsys_rd_rep_counts) \
  X(REP_FINDINGS, "findings", arr, &nsys_rd_finding)
#define NSYS__REC nsys_rd_report
NSYS_RDECL(NSYS_RD_REPORT)
#undef NSYS__REC

#endif
