#!/usr/bin/env python3
"""Deterministic generator of nsys-faithful SQLite exports (a synthetic distributed
training run), for tests, benchmarks and the README's demo profile.

    python3 tools/gen_profile.py -o OUT.sqlite [--preset tiny|small|example|100k|1m|10m]
        [--gpus N] [--kernels N] [--iterations N] [--layers N] [--schema 3.25.0|3.1.2|3.0.0]
        [--seed S] [--source-tags] [--graphs] [--callchains] [--summary]
        [--epoch-clock] [--negative-ts]

Python 3.11 standard library only. Same arguments + seed => byte-identical file.

What it writes
--------------
Tables, column sets and ENUM rows of a real `nsys export --type=sqlite` of the chosen
schema (tools/gen/nsys_schemas.py): StringIds, META_DATA_EXPORT (3.25.0) or
EXPORT_META_DATA (3.1.2 / 3.0.0), TARGET_INFO_* (GPU, session start, CUDA device /
context / null stream / streams), ANALYSIS_DETAILS, PROCESSES, ThreadNames,
CUPTI_ACTIVITY_KIND_{KERNEL,RUNTIME,MEMCPY,MEMSET,SYNCHRONIZATION}, NVTX_EVENTS, and
with options CUDA_GRAPH_* and CUDA_CALLCHAINS.

One process per GPU (rank r drives device r), all in one file like a torchrun capture:
globalPid = (1<<48) | pid<<24, globalTid = globalPid | tid. Each rank has a main thread
("python3": NVTX ranges, compute launches, copies, syncs) and an NCCL thread
("pt_nccl_comm": NCCL ranges in the "NCCL" domain, collective launches). Streams per
rank: compute = null stream 7+8r, communication 7+8r+5, copy 7+8r+6.
correlationId restarts at 1 in every process, so the same values repeat across
processes (join on correlationId AND globalPid == globalTid & 0xFFFFFFFFFF000000).
Every kernel starts at least 1 us after its launch API call ends.

Per iteration and rank (NVTX push/pop, eventType 59, default domain, `text`):
  train_step N > [start/end range "batch N" (eventType 60) around the H2D copy]
               > forward > layer_K > attention, mlp ; loss
               > backward > layer_K > mlp, attention
               > optimizer_step
  then loss.item(): D2H copy + cudaStreamSynchronize.
With --source-tags every range text starts with a `FILE:LINE ` tag, e.g.
"train.py:42 forward" (see SOURCE_TAGS below for the files and lines).

Deliberate problems (what analyses must find; magnitudes hold for every preset
with >= 3 iterations; tests/generator/README.md has the same table):

  | id | problem           | where                                              | magnitude                                  |
  |----|-------------------|----------------------------------------------------|--------------------------------------------|
  | P1 | sync bubble       | after train_step 0 (iterations >= 2): NVTX range   | the largest GPU idle gap of every device:  |
  |    |                   | "save_checkpoint" holds cudaDeviceSynchronize (the | max(5 ms, 0.6 x median train_step); it     |
  |    |                   | CPU sits in it while the GPU drains), then host-   | starts inside the cudaDeviceSynchronize    |
  |    |                   | only work; train_step 0's own CPU range is short   | call; next-largest gap < half of it        |
  | P2 | outlier iteration | train_step O, O = iterations // 2 (iterations >= 3) | every GPU op 1.8x slower: the only         |
  |    |                   |                                                    | train_step > 1.5x median (about 1.8x)      |
  | P3 | exposed NCCL      | last AllReduce bucket of each backward (the        | 10-60% of NCCL time per device does not    |
  |    |                   | compute stream waits for it via cudaStreamWaitEvent)| overlap compute kernels (~25-30% small)    |
  | P4 | launch storm      | optimizer_step: un-fused foreach Adam, 4 names of  | >= 15% of kernels < 3 us; each storm name  |
  |    |                   | vectorized_elementwise_kernel, launch-bound        | >= 100 launches, avg < 10 us (small+)      |
  | P5 | pageable H2D copy | NVTX "setup" before training, one per rank         | cudaMemcpy_v3020, copyKind 1, srcKind 0    |
  |    |                   |                                                    | (pageable), 64 MiB, ~12 ms; API > copy     |
  | P6 | hotspot kernel    | MLP GEMM sm90_xmma_gemm_..._128x256x64_... (short  | >= 35% of total kernel time (~40-44%),     |
  |    |                   | and demangled name identical)                      | the top name by total time                 |

With --graphs the optimizer storm is replayed by one cudaGraphLaunch_v10000 per
iteration (kernels carry graphNodeId and the cudaGraphLaunch's correlationId); P4
then turns into a dense graph (that is the fix). With --callchains every runtime row
gets a callchainId into CUDA_CALLCHAINS (stacks shared between calls of the same site).

Clock options (apply_clock, after everything is written): --epoch-clock writes what
`nsys export --ts-normalize=true` writes, as multi-node captures keep: every event
timestamp (start / end / timestamp columns of every table) is on the absolute UTC
clock, t + TARGET_INFO_SESSION_START_TIME.utcEpochNs (~1.78e18, above 2^53), as are
ANALYSIS_DETAILS.startTime/stopTime where they are on the event timeline (schemas
before systemClockNs), and EXPORT_PARAM_TIME_NORMALIZE is "true". --negative-ts puts
session zero at train_step 0, as a capture started by cudaProfilerStart there: the
setup phase (NVTX "setup" and "epoch 0", the memset, the pageable copy, their API
calls) has negative timestamps. Both together: setup before utcEpochNs. The --summary
times move with the events.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import catalog  # noqa: E402
import nsys_schemas  # noqa: E402

PRESETS = {
    # name: (gpus, kernels, iterations or None)
    "tiny": (1, 96, 3),
    "small": (2, 2_000, 5),
    "example": (4, 20_000, 10),
    "100k": (8, 100_000, None),
    "1m": (8, 1_000_000, None),
    "10m": (8, 10_000_000, None),
}
TARGET_KERNELS_PER_ITERATION = 600     # used when --iterations is not given

SCHEMA_PRODUCT = {"3.25.0": ("2026.2.1.210", "2026.2", "306658267 182758"),
                  "3.1.2": ("2023.1.2.43", "2023.1", "3015401642 121024"),
                  "3.0.0": ("2022.4.2.1", "2022.4", "1583287013 113408")}

# source tags (--source-tags): label -> (file, line)
SOURCE_TAGS = {
    "setup": ("train.py", 31), "train_step": ("train.py", 42), "forward": ("train.py", 45),
    "loss": ("train.py", 47), "backward": ("train.py", 50), "optimizer_step": ("train.py", 53),
    "save_checkpoint": ("train.py", 58), "batch": ("data.py", 17), "epoch": ("train.py", 40),
    "layer": ("model.py", 88), "attention": ("model.py", 61), "mlp": ("model.py", 74),
}

SESSION_UTC_NS = 1_779_782_330_176_752_435          # 2026-05-26T07:58:50Z (fixed, not the clock)
SYSTEM_CLOCK_NS = 28_254_349_605
T0 = 1_500_000_000                                   # first event at 1.5 s on the session clock
GLOBAL_VM = 1 << 48
BASE_PID = 4_125                                     # torchrun launcher; ranks follow
BUBBLE_MIN_NS = 5_000_000
SLOW_FACTOR = 1.8
PAGEABLE_BYTES = 64 << 20
PAGEABLE_BW = 5.5e9                                   # B/s, pageable staging
PINNED_BW = 22e9
UINT32_MAX = 4_294_967_295


# ----------------------------------------------------------------------------------------
# schema helpers


def table_ddl(schema, table):
    cols, extra = nsys_schemas.TABLES[schema][table]
    parts = []
    for name, typ, cons in cols:
        parts.append("    %-27s %-9s %s" % (name, typ, cons) if cons else "    %-27s %s" % (name, typ))
    for e in extra:
        parts.append("    " + e)
    return "CREATE TABLE %s (\n%s\n)" % (table, ",\n".join(p.rstrip() for p in parts))


def insert_sql(schema, table, bound, consts=None):
    """INSERT with ?N placeholders for `bound` columns, literals for `consts`, NULL else."""
    consts = consts or {}
    cols = [c[0] for c in nsys_schemas.TABLES[schema][table][0]]
    vals = []
    for c in cols:
        if c in bound:
            vals.append("?%d" % (bound.index(c) + 1))
        elif c in consts:
            vals.append(consts[c])
        else:
            vals.append("NULL")
    missing = [b for b in bound if b not in cols]
    if missing:
        raise ValueError("%s lacks %s in schema %s" % (table, missing, schema))
    return "INSERT INTO %s (%s) VALUES (%s)" % (table, ", ".join('"%s"' % c for c in cols), ", ".join(vals))


def has_col(schema, table, col):
    return any(c[0] == col for c in nsys_schemas.TABLES[schema][table][0])


# ----------------------------------------------------------------------------------------
# stress shapes (--shape): profile shapes that stress each analysis's algorithm

SHAPES = {
    "stages": "per-layer NVTX ranges named 'layer_K forward' / 'layer_K backward' on every rank "
              "(thousands of ranges match stage_overlap's default pattern)",
    "nvtx-flat": "rank 0's main thread holds as many sibling NVTX ranges as the profile has kernels "
                 "(each launch wrapped in 'tick', plus GPUs-1 empty 'tick' ranges before it)",
    "nvtx-deep": "30 nested ranges 'block_D' around every layer's kernels (NVTX depth > 30)",
    "streams-many": "compute kernels round-robin over 512 streams per rank (thousands of streams)",
    "procs-many": "32 extra processes per GPU ('pt_data_worker', 256 at 8 GPUs), each launching one kernel "
                  "per iteration on its own stream inside a 'worker_step' range",
    "autograd": "every main-thread launch inside PyTorch autograd ranges "
                "'aten::OP, seq = S, op_id = O' > 'aten::INNER, op_id = O+1' (distinct names)",
    "nccl-nvtx": "one AllGather per forward layer (FSDP-style) and every NCCL-domain range with a "
                 "jsonText payload (message size, reduction, ranks)",
    "graphs": "--graphs, and every attention / MLP block replayed by one cudaGraphLaunch (node-level "
              "tracing: the kernels share the launch's correlationId)",
}
SHAPE_DEEP_DEPTH = 30
SHAPE_STREAMS_PER_RANK = 512
SHAPE_WORKERS_PER_RANK = 32
AUTOGRAD_OPS = (("linear", "addmm"), ("matmul", "mm"), ("layer_norm", "native_layer_norm"),
                ("gelu", "gelu"), ("scaled_dot_product_attention", "_flash_attention_forward"),
                ("add", "add"), ("mul", "mul"), ("cross_entropy_loss", "log_softmax"))


def parse_shapes(values):
    shapes = set()
    for v in values or ():
        for name in v.split(","):
            name = name.strip()
            if not name:
                continue
            if name not in SHAPES:
                raise SystemExit("unknown --shape %r (known: %s)" % (name, ", ".join(SHAPES)))
            shapes.add(name)
    return frozenset(shapes)


def shape_workers_per_rank(cfg):
    return SHAPE_WORKERS_PER_RANK


# ----------------------------------------------------------------------------------------
# configuration


class Config:
    def __init__(self, args):
        gpus, kernels, iterations = PRESETS[args.preset]
        self.preset = args.preset
        self.gpus = args.gpus if args.gpus is not None else gpus
        self.kernels = args.kernels if args.kernels is not None else kernels
        if args.iterations is not None:
            self.iterations = args.iterations
        elif args.kernels is not None or iterations is None:
            self.iterations = max(3, round(self.kernels / (self.gpus * TARGET_KERNELS_PER_ITERATION)))
        else:
            self.iterations = iterations
        self.schema = args.schema
        self.seed = args.seed
        self.source_tags = args.source_tags
        self.graphs = args.graphs
        self.callchains = args.callchains
        self.shapes = parse_shapes(args.shape)
        self.straggler_rank = getattr(args, "straggler_rank", None)
        self.straggler_every = getattr(args, "straggler_every", 7) or 7
        self.straggler_ns = getattr(args, "straggler_ns", 2_000_000)
        if "graphs" in self.shapes:
            self.graphs = True
        if self.gpus < 1 or self.gpus > 64:
            raise SystemExit("--gpus must be 1..64")
        if self.iterations < 1:
            raise SystemExit("--iterations must be >= 1")
        self.multi = self.gpus > 1
        cells = self.gpus * self.iterations
        if self.kernels < cells * 16:
            raise SystemExit("--kernels %d too small for %d GPUs x %d iterations (need >= %d)"
                             % (self.kernels, self.gpus, self.iterations, cells * 16))
        per_cell = self.kernels // cells
        if args.layers is not None:
            self.layers = args.layers
        else:
            storm_min = max(2, per_cell // 5)
            self.layers = max(1, (per_cell - 10 - storm_min - self.nccl_per_iter(0)) // 20)
            while self.layers > 1 and self.storm_for(per_cell) < storm_min:
                self.layers -= 1
        if self.storm_for(per_cell) < 1:
            need = cells * (per_cell - self.storm_for(per_cell) + 1)
            raise SystemExit("--kernels %d too small for %d GPUs x %d iterations x %d layers (need >= %d)"
                             % (self.kernels, self.gpus, self.iterations, self.layers, need))
        self.bubble_iter = 0 if self.iterations >= 2 else None
        self.outlier_iter = self.iterations // 2 if self.iterations >= 3 else None

    def nccl_buckets(self):
        return (self.layers + 1) // 2 + 1 if self.multi else 0

    def nccl_per_iter(self, layers=None):
        if not self.multi:
            return 0
        lay = self.layers if layers is None else layers
        # nccl-nvtx shape: one FSDP-style AllGather per forward layer
        return 1 + ((lay + 1) // 2 + 1) + 1 + (lay if "nccl-nvtx" in self.shapes else 0)

    def storm_for(self, cell_kernels):
        fixed = 1 + 8 * self.layers + 4 + 3 + 12 * self.layers + 1
        # procs-many shape: the worker processes' kernels come out of the storm
        workers = shape_workers_per_rank(self) if "procs-many" in self.shapes else 0
        return cell_kernels - fixed - self.nccl_per_iter() - workers

    def cell_kernels(self, rank, it):
        cells = self.gpus * self.iterations
        base, extra = divmod(self.kernels, cells)
        idx = it * self.gpus + rank
        return base + (1 if idx < extra else 0)


# ----------------------------------------------------------------------------------------
# string table


class Strings:
    def __init__(self):
        self.ids = {}
        self.rows = []

    def __call__(self, s):
        i = self.ids.get(s)
        if i is None:
            i = len(self.rows) + 1
            self.ids[s] = i
            self.rows.append((i, s))
        return i


# ----------------------------------------------------------------------------------------
# the simulation


class Rank:
    """Host and device clocks of one process (rank r on device r)."""

    def __init__(self, cfg, r, rng):
        self.r = r
        self.rng = rng
        self.pid = BASE_PID + 19 + r * 7
        self.gpid = GLOBAL_VM | (self.pid << 24)
        self.main_tid = self.gpid | self.pid
        self.comm_tid = self.gpid | (self.pid + 61)
        self.device = r
        self.context = r + 1
        self.s_compute = 7 + 8 * r
        self.s_comm = self.s_compute + 5
        self.s_copy = self.s_compute + 6
        self.corr = 0
        self.grid = 0
        self.range_id = 0
        self.cpu = T0 + r * 1_731        # main thread clock
        self.ccpu = T0 + r * 1_731       # NCCL thread clock
        self.free = {self.s_compute: 0, self.s_comm: 0, self.s_copy: 0}
        self.stack = {self.main_tid: [], self.comm_tid: []}


class Generator:
    def __init__(self, cfg):
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.S = Strings()
        self.schema = cfg.schema
        self.ranks = [Rank(cfg, r, random.Random(cfg.seed * 1_000_003 + r)) for r in range(cfg.gpus)]
        self.nvtx_textid = cfg.schema != "3.0.0"     # 3.0.0: NCCL ranges carry inline text too
        self.kt_index = {}
        self.kt_rows = []
        for key in catalog.KERNELS:
            self.kt_id(key)
        self.api = {}
        for name in ("cudaLaunchKernel_v7000", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync_v3020",
                     "cudaMemcpy_v3020", "cudaMemsetAsync_v3020", "cudaStreamSynchronize_v3020",
                     "cudaDeviceSynchronize_v3020", "cudaEventRecord_v3020", "cudaStreamWaitEvent_v3020",
                     "cudaGraphLaunch_v10000"):
            self.api[name] = self.S(name)
        # row buffers
        self.k_rows, self.rt_rows, self.nv_rows = [], [], []
        self.mc_rows, self.ms_rows, self.sy_rows = [], [], []
        self.counts = {"kernels": 0, "runtime": 0, "nvtx": 0, "memcpy": 0, "memset": 0, "syncs": 0}
        self.nccl_ns = 0
        self.callchain_ids = {}
        self.callchain_rows = []
        self.graph_nodes = []
        self.iter_spans = {}   # it -> [ (rank, cpu_start, cpu_end, gpu_start, gpu_end) ]
        self.bubbles = []
        self.last_end = 0
        self.shape_init()

    # -- helpers -------------------------------------------------------------------------

    def kt_id(self, key):
        i = self.kt_index.get(key)
        if i is None:
            short, dem, mang, api, regs, g, b, ss, ds, dur = catalog.KERNELS[key]
            i = len(self.kt_rows) + 1
            self.kt_index[key] = i
            sme = 0 if ss + ds == 0 else (233_472 if ds > 100_000 else 65_536 if ds > 0 else 32_768)
            self.kt_rows.append((i, self.S(dem), self.S(short), self.S(mang) if mang else None, regs,
                                 g[0], g[1], g[2], b[0], b[1], b[2], ss, ds, sme))
        return i

    def label(self, key, text):
        if not self.cfg.source_tags:
            return text
        f, line = SOURCE_TAGS[key]
        return "%s:%d %s" % (f, line, text)

    def callchain(self, site):
        if not self.cfg.callchains:
            return None
        i = self.callchain_ids.get(site)
        if i is None:
            i = len(self.callchain_ids) + 1
            self.callchain_ids[site] = i
            api, where = site
            frames = [("0x7f3a2c4%05x" % (i * 977 % 0xFFFFF), "libcuda.so.1", 1),
                      (api.rsplit("_v", 1)[0] if api.startswith("cuda") else api,
                       "libcudart.so.12" if api.startswith("cuda") else "libcuda.so.1", 0),
                      (where, "libtorch_cuda.so", 0),
                      ("_PyEval_EvalFrameDefault", "libpython3.11.so.1.0", 0),
                      ("Py_RunMain", "libpython3.11.so.1.0", 0),
                      ("main", "python3.11", 0)]
            for depth, (sym, mod, unres) in enumerate(frames):
                self.callchain_rows.append((i, self.S(sym), self.S(mod), unres,
                                            0x7F3A_0000_0000 + i * 4096 + depth * 64, depth))
        return i

    def jitter(self, rk, ns, spread=0.10):
        return int(ns * (1.0 + spread * (rk.rng.random() - 0.5)))

    def push(self, rk, tid, text, domain=0, text_is_id=False):
        row = [rk.cpu if tid == rk.main_tid else rk.ccpu, None, 59, None, None, None,
               None if text_is_id else text, tid, None, self.S(text) if text_is_id else None, domain]
        rk.stack[tid].append(row)
        self.nv_rows.append(row)
        self.advance(rk, tid, 600)

    def pop(self, rk, tid):
        row = rk.stack[tid].pop()
        row[1] = rk.cpu if tid == rk.main_tid else rk.ccpu
        self.advance(rk, tid, 500)

    def advance(self, rk, tid, ns):
        if tid == rk.main_tid:
            rk.cpu += ns
        else:
            rk.ccpu += ns

    def api_call(self, rk, tid, name, dur, cls=0, site="python"):
        """Appends one runtime row; returns (correlationId, start, end)."""
        rk.corr += 1
        start = rk.cpu if tid == rk.main_tid else rk.ccpu
        end = start + dur
        self.rt_rows.append((start, end, cls, tid, rk.corr, self.api[name], self.callchain((name, site))))
        if tid == rk.main_tid:
            rk.cpu = end
        else:
            rk.ccpu = end
        return rk.corr, start, end

    def gpu_start(self, rk, stream, api_end, dep=0):
        return max(api_end + 1_000 + int(rk.rng.random() * 2_000), rk.free[stream], dep)

    def launch(self, rk, key, slow, stream=None, tid=None, dep=0, gap=6_000, dur_override=None):
        """Launch API + kernel. Returns (kernel start, kernel end)."""
        tid = tid or rk.main_tid
        stream = stream or rk.s_compute
        if self.cfg.shapes and tid == rk.main_tid:
            return self.shape_launch(rk, key, slow, stream, tid, dep, gap, dur_override)
        return self.launch_plain(rk, key, slow, stream, tid, dep, gap, dur_override)

    def launch_plain(self, rk, key, slow, stream, tid, dep=0, gap=6_000, dur_override=None, row_stream=None):
        ent = catalog.KERNELS[key]
        api_name, cls = catalog.LAUNCH_API[ent[3]]
        api_dur = self.jitter(rk, 9_000 if cls and ent[3] == "nccl" else 3_500 if cls else 4_500, 0.6)
        corr, a0, a1 = self.api_call(rk, tid, api_name, api_dur, cls, site=key)
        s = self.gpu_start(rk, stream, a1, dep)
        d = dur_override if dur_override is not None else int(self.jitter(rk, ent[9]) * slow)
        rk.grid += 1
        self.k_rows.append((s, s + d, rk.device, rk.context, row_stream or stream, corr, rk.gpid,
                            self.kt_index[key], rk.grid, None))
        rk.free[stream] = s + d
        self.advance(rk, tid, self.jitter(rk, gap, 1.2))
        return s, s + d

    def memcpy(self, rk, api, nbytes, kind, src, dst, stream, bw, slow=1.0):
        dur_api = 6_000 if api.endswith("Async_v3020") else 0
        rk.corr += 1
        corr = rk.corr
        a0 = rk.cpu
        s = max(a0 + 4_000, rk.free[stream])
        d = int((2_000 + nbytes / bw * 1e9) * slow)
        if dur_api:
            a1 = a0 + self.jitter(rk, dur_api, 0.5)
            s = max(s, a1 + 1_000)
        else:   # synchronous cudaMemcpy: the call lasts until the copy is done
            a1 = s + d + 3_000
        self.rt_rows.append((a0, a1, 0, rk.main_tid, corr, self.api[api], self.callchain((api, "copy"))))
        self.mc_rows.append((s, s + d, rk.device, rk.context, stream, corr, rk.gpid, nbytes, kind, src, dst))
        rk.free[stream] = s + d
        rk.cpu = a1 + self.jitter(rk, 5_000)
        self.last_copy_start = s
        return s + d

    def memset(self, rk, nbytes):
        corr, a0, a1 = self.api_call(rk, rk.main_tid, "cudaMemsetAsync_v3020", self.jitter(rk, 4_000), 0, "memset")
        s = self.gpu_start(rk, rk.s_compute, a1)
        d = 1_500 + nbytes // 1_000_000
        self.ms_rows.append((s, s + d, rk.device, rk.context, rk.s_compute, corr, rk.gpid, 0, nbytes, 2))
        rk.free[rk.s_compute] = s + d
        rk.cpu += self.jitter(rk, 3_000)

    def sync(self, rk, tid, api, sync_type, stream, until, event_id=UINT32_MAX):
        """A blocking sync call that returns shortly after `until` (GPU time)."""
        corr, a0, a1 = self.api_call(rk, tid, api, 0, 0, "sync")
        end = max(a0 + 1_200, until + self.jitter(rk, 9_000))
        row = self.rt_rows[-1]
        self.rt_rows[-1] = (row[0], end, row[2], row[3], row[4], row[5], row[6])
        if tid == rk.main_tid:
            rk.cpu = end
        else:
            rk.ccpu = end
        self.sy_rows.append((a0 + 600, end - 400, rk.device, rk.context, stream, corr, rk.gpid, sync_type, event_id))
        return end

    def stream_wait(self, rk, tid, waiting_stream, event_time):
        """cudaStreamWaitEvent: `waiting_stream` can not run before `event_time`."""
        corr, a0, a1 = self.api_call(rk, tid, "cudaStreamWaitEvent_v3020", self.jitter(rk, 2_500), 0, "wait")
        self.sy_rows.append((a0 + 300, a1 - 200, rk.device, rk.context, waiting_stream, corr, rk.gpid, 2,
                             rk.corr % 1000 + 1))
        rk.free[waiting_stream] = max(rk.free[waiting_stream], event_time)
        self.advance(rk, tid, self.jitter(rk, 2_000))

    def event_record(self, rk, tid):
        self.api_call(rk, tid, "cudaEventRecord_v3020", self.jitter(rk, 2_000), 0, "event")
        self.advance(rk, tid, self.jitter(rk, 1_500))

    # -- stress shapes (--shape; SHAPES above) -----------------------------------------------

    def shape_init(self):
        cfg = self.cfg
        self.autograd_seq = {}
        self.workers = []
        self.many_streams = {}
        if "streams-many" in cfg.shapes:
            for rk in self.ranks:
                self.many_streams[rk.r] = [100_000 + rk.r * 10_000 + k for k in range(SHAPE_STREAMS_PER_RANK)]
        if "procs-many" in cfg.shapes:
            for w in range(cfg.gpus * SHAPE_WORKERS_PER_RANK):
                wk = Rank(cfg, 0, random.Random(cfg.seed * 7_000_003 + w))
                wk.r = w % cfg.gpus
                wk.pid = BASE_PID + 1_000 + w * 3
                wk.gpid = GLOBAL_VM | (wk.pid << 24)
                wk.main_tid = wk.gpid | wk.pid
                wk.comm_tid = wk.main_tid
                wk.device = wk.r
                wk.context = 1_000 + w
                wk.s_compute = 50_000 + w
                wk.free = {wk.s_compute: 0}
                wk.stack = {wk.main_tid: []}
                self.workers.append(wk)
        for name in ("tick", "worker_step", "ncclGroupStart", "ncclGroupEnd"):
            self.S(name)

    def shape_layer_text(self, layer, direction):
        if "stages" in self.cfg.shapes:
            return "layer_%d %s" % (layer, direction)
        return "layer_%d" % layer

    def shape_deep_push(self, rk):
        if "nvtx-deep" not in self.cfg.shapes:
            return 0
        for d in range(SHAPE_DEEP_DEPTH):
            self.push(rk, rk.main_tid, "block_%d" % d)
        return SHAPE_DEEP_DEPTH

    def shape_deep_pop(self, rk, depth):
        for _ in range(depth):
            self.pop(rk, rk.main_tid)

    def shape_launch(self, rk, key, slow, stream, tid, dep, gap, dur_override):
        """launch() of a main thread under --shape: NVTX wrappers and stream rotation."""
        shapes = self.cfg.shapes
        row_stream = None
        if "streams-many" in shapes and stream == rk.s_compute and rk.r in self.many_streams:
            lst = self.many_streams[rk.r]
            row_stream = lst[rk.grid % len(lst)]
        wraps = 0
        if "nvtx-flat" in shapes and rk.r == 0 and rk in self.ranks:
            for _ in range(self.cfg.gpus - 1):
                self.push(rk, tid, "tick")
                self.pop(rk, tid)
            self.push(rk, tid, "tick")
            wraps += 1
        if "autograd" in shapes:
            n = self.autograd_seq.get(rk.r, 0) + 1
            self.autograd_seq[rk.r] = n
            outer, inner = AUTOGRAD_OPS[self.kt_index[key] % len(AUTOGRAD_OPS)]
            op_id = n * 2 + 100_000
            self.push(rk, tid, "aten::%s, seq = %d, op_id = %d" % (outer, n, op_id))
            self.push(rk, tid, "aten::%s, op_id = %d" % (inner, op_id + 1))
            wraps += 2
        res = self.launch_plain(rk, key, slow, stream, tid, dep, gap, dur_override, row_stream=row_stream)
        for _ in range(wraps):
            self.pop(rk, tid)
        return res

    def launch_group(self, rk, keys, slow):
        """A layer block's kernels: one launch each, or one graph replay (graphs shape)."""
        if "graphs" not in self.cfg.shapes:
            for key in keys:
                self.launch(rk, key, slow)
            return
        corr, a0, a1 = self.api_call(rk, rk.main_tid, "cudaGraphLaunch_v10000", self.jitter(rk, 8_000), 0, "graph")
        t = max(a1 + 2_000, rk.free[rk.s_compute])
        for i, key in enumerate(keys):
            d = int(self.jitter(rk, catalog.KERNELS[key][9]) * slow)
            rk.grid += 1
            self.k_rows.append((t, t + d, rk.device, rk.context, rk.s_compute, corr, rk.gpid,
                                self.kt_index[key], rk.grid, 2_000 + i))
            t += d + 600
        rk.free[rk.s_compute] = t - 600
        rk.cpu += self.jitter(rk, 3_000)

    def shape_nccl_payload(self, rk, key, dur):
        """NCCL's extended payload as exported with --include-json=true (on the open NCCL range)."""
        row = rk.stack[rk.comm_tid][-1]
        coll = {"nccl_allreduce": "Sum", "nccl_reducescatter": "Sum"}.get(key)
        payload = {"NCCL communicator ID": 0x5EED0000 + self.cfg.seed, "No. of ranks": self.cfg.gpus,
                   "Rank": rk.r, "CUDA device": rk.device, "Message size [bytes]": max(4096, dur * 64) // 4096 * 4096}
        if coll:
            payload["Reduction operation"] = coll
        row.append(json.dumps(payload, separators=(", ", ": ")))
        self.push(rk, rk.comm_tid, "ncclGroupStart", domain=1, text_is_id=self.nvtx_textid)
        self.pop(rk, rk.comm_tid)

    def shape_workers_step(self, rk, cpu0):
        """procs-many: this rank's worker processes each launch one kernel inside 'worker_step'."""
        for wk in self.workers:
            if wk.r != rk.r:
                continue
            wk.cpu = max(wk.cpu, cpu0 + int(wk.rng.random() * 50_000))
            self.push(wk, wk.main_tid, "worker_step")
            self.launch_plain(wk, "gelu", 1.0, wk.s_compute, wk.main_tid)
            self.pop(wk, wk.main_tid)
            rk.grid += 1    # counted in the rank's cell (its storm is shorter by as many kernels)

    def shape_tables(self, tables):
        """Processes, threads, contexts and streams the shapes added (finish())."""
        S = self.S
        for wk in self.workers:
            tables["PROCESSES"][1].append((wk.gpid, wk.pid, "pt_data_worker"))
            tables["ThreadNames"][1].append((S("pt_data_worker"), 20, wk.main_tid))
            if "TARGET_INFO_CUDA_CONTEXT_INFO" in tables:
                tables["TARGET_INFO_CUDA_CONTEXT_INFO"][1].append(
                    (wk.s_compute, 0, 1, wk.pid, wk.device, wk.context, 0, 0))
            if "TARGET_INFO_CUDA_NULL_STREAM" in tables:
                tables["TARGET_INFO_CUDA_NULL_STREAM"][1].append(
                    (wk.s_compute, 0, 1, wk.pid, wk.device, wk.context))
            if "TARGET_INFO_CUDA_STREAM" in tables:
                tables["TARGET_INFO_CUDA_STREAM"][1].append((wk.s_compute, 0, 1, wk.pid, wk.context, 0, 3))
        if "TARGET_INFO_CUDA_STREAM" in tables:
            for rk in self.ranks:
                for st in self.many_streams.get(rk.r, ()):
                    tables["TARGET_INFO_CUDA_STREAM"][1].append((st, 0, 1, rk.pid, rk.context, 0, 2))


    # -- collectives: every rank yields (ready_time, duration); the driver aligns ends --

    def collective(self, rk, key, dur, slow, dep):
        """Coroutine step on rank rk: launches the NCCL kernel from the NCCL thread."""
        names = {"nccl_allreduce": "ncclAllReduce", "nccl_allgather": "ncclAllGather",
                 "nccl_reducescatter": "ncclReduceScatter"}
        rk.ccpu = max(rk.ccpu, rk.cpu + 4_000)
        self.push(rk, rk.comm_tid, names[key], domain=1, text_is_id=self.nvtx_textid)
        if "nccl-nvtx" in self.cfg.shapes:
            self.shape_nccl_payload(rk, key, dur)
        self.stream_wait(rk, rk.comm_tid, rk.s_comm, dep)
        ent = catalog.KERNELS[key]
        corr, a0, a1 = self.api_call(rk, rk.comm_tid, "cuLaunchKernelEx", self.jitter(rk, 9_000), 1, key)
        ready = self.gpu_start(rk, rk.s_comm, a1)
        end = yield ready
        d = max(end - ready, 1_000)
        rk.grid += 1
        self.k_rows.append((ready, ready + d, rk.device, rk.context, rk.s_comm, corr, rk.gpid,
                            self.kt_index[key], rk.grid, None))
        rk.free[rk.s_comm] = ready + d
        self.nccl_ns += d
        self.advance(rk, rk.comm_tid, self.jitter(rk, 3_000))
        self.pop(rk, rk.comm_tid)
        return ready + d

    # -- one iteration of one rank (a generator: yields at each collective) ----------------

    def iteration(self, rk, it):
        cfg = self.cfg
        main = rk.main_tid
        slow = SLOW_FACTOR if it == cfg.outlier_iter else 1.0
        n_cell = cfg.cell_kernels(rk.r, it)
        storm = cfg.storm_for(n_cell)
        grid_before = rk.grid
        L = cfg.layers
        it_cpu0 = rk.cpu
        self.push(rk, main, self.label("train_step", "train_step %d" % it))
        if cfg.straggler_rank == rk.r and it % cfg.straggler_every == 0:
            # rank sets: this rank's data loader stalls every straggler_every-th step
            self.push(rk, main, "DataLoader.__next__")
            self.advance(rk, main, cfg.straggler_ns)
            self.pop(rk, main)
        if PLANT["loader_ns"] is not None:   # planted: the host waits for the next batch, the GPU idles
            self.push(rk, main, self.label("data_loader", "data_loader"))
            self.advance(rk, main, PLANT["loader_ns"])
            self.pop(rk, main)
        # batch: pinned H2D on the copy stream inside a start/end range (eventType 60)
        rk.range_id += 1
        se = [rk.cpu, None, 60, rk.range_id, None, None, self.label("batch", "batch %d" % it), main, None, None, 0]
        self.nv_rows.append(se)
        h2d_end = self.memcpy(rk, "cudaMemcpyAsync_v3020", 8 << 20, 1, 1, 2, rk.s_copy, PINNED_BW, slow)
        gpu0 = self.last_copy_start
        self.event_record(rk, main)
        self.stream_wait(rk, main, rk.s_compute, h2d_end)
        se[1] = rk.cpu

        self.push(rk, main, self.label("forward", "forward"))
        if cfg.multi:
            ag_dur = int(catalog.KERNELS["nccl_allgather"][9] * slow)
            ready = yield from self.coll_step(rk, "nccl_allgather", ag_dur, slow, 0)
        self.launch(rk, "embedding", slow)
        for layer in range(L):
            self.push(rk, main, self.label("layer", self.shape_layer_text(layer, "forward")))
            if "nccl-nvtx" in cfg.shapes and cfg.multi:
                yield from self.coll_step(rk, "nccl_allgather", int(ag_dur * 0.25), slow, 0)
            depth = self.shape_deep_push(rk)
            self.push(rk, main, self.label("attention", "attention"))
            self.launch_group(rk, catalog.FWD_ATTN, slow)
            self.pop(rk, main)
            self.push(rk, main, self.label("mlp", "mlp"))
            self.launch_group(rk, catalog.FWD_MLP, slow)
            self.pop(rk, main)
            self.shape_deep_pop(rk, depth)
            self.pop(rk, main)
        self.push(rk, main, self.label("loss", "loss"))
        for key in catalog.FWD_HEAD:
            self.launch(rk, key, slow)
        self.pop(rk, main)
        self.pop(rk, main)

        self.push(rk, main, self.label("backward", "backward"))
        for key in catalog.BWD_HEAD:
            self.launch(rk, key, slow)
        bucket_t0 = rk.free[rk.s_compute]
        for n, layer in enumerate(reversed(range(L))):
            self.push(rk, main, self.label("layer", self.shape_layer_text(layer, "backward")))
            depth = self.shape_deep_push(rk)
            self.push(rk, main, self.label("mlp", "mlp"))
            self.launch_group(rk, catalog.BWD_MLP, slow)
            self.pop(rk, main)
            self.push(rk, main, self.label("attention", "attention"))
            self.launch_group(rk, catalog.BWD_ATTN, slow)
            self.pop(rk, main)
            self.shape_deep_pop(rk, depth)
            self.pop(rk, main)
            if cfg.multi and (n % 2 == 1 or layer == 0):
                self.event_record(rk, main)
                grads_ready = rk.free[rk.s_compute]
                dur = int(0.30 * (grads_ready - bucket_t0)) + 30_000
                bucket_t0 = grads_ready
                yield from self.coll_step(rk, "nccl_allreduce", dur, 1.0, grads_ready)
        self.launch(rk, "emb_bwd", slow)
        if cfg.multi:
            # last bucket (embedding + first layers' grads): nothing left to overlap -> exposed
            self.event_record(rk, main)
            grads_ready = rk.free[rk.s_compute]
            dur = int((400_000 + 40_000 * L) * slow)
            end = yield from self.coll_step(rk, "nccl_allreduce", dur, 1.0, grads_ready)
            self.stream_wait(rk, main, rk.s_compute, end)
        self.pop(rk, main)

        self.push(rk, main, self.label("optimizer_step", "optimizer_step"))
        self.memset(rk, 4)
        if cfg.multi:
            self.event_record(rk, main)
            rs_dur = int(catalog.KERNELS["nccl_reducescatter"][9] * slow)
            yield from self.coll_step(rk, "nccl_reducescatter", rs_dur, 1.0, rk.free[rk.s_compute])
        if cfg.graphs:
            self.graph_launch(rk, storm, slow)
        else:
            for i in range(storm):
                self.launch(rk, catalog.OPT_STORM[i % 4], slow, gap=2_500)
        self.pop(rk, main)
        # loss.item(): D2H + stream sync
        d2h_end = self.memcpy(rk, "cudaMemcpyAsync_v3020", 4, 2, 2, 0, rk.s_compute, PINNED_BW, slow)
        if it != cfg.bubble_iter:
            self.sync(rk, main, "cudaStreamSynchronize_v3020", 3, rk.s_compute, d2h_end)
        # (in the bubble iteration the D2H is left in flight: save_checkpoint's
        # cudaDeviceSynchronize waits for it)
        gpu1 = max(rk.free.values())
        self.pop(rk, main)
        if "procs-many" in cfg.shapes:
            self.shape_workers_step(rk, it_cpu0)
        self.iter_spans.setdefault(it, []).append((rk.r, it_cpu0, rk.cpu, gpu0, gpu1))
        assert rk.grid - grid_before == n_cell, (rk.grid - grid_before, n_cell)

    def coll_step(self, rk, key, dur, slow, dep):
        co = self.collective(rk, key, dur, slow, dep)
        ready = next(co)
        end = yield (ready, int(dur * PLANT["nccl"]))
        try:
            co.send(end)
        except StopIteration as stop:
            return stop.value
        raise AssertionError("collective did not finish")

    def graph_launch(self, rk, storm, slow):
        corr, a0, a1 = self.api_call(rk, rk.main_tid, "cudaGraphLaunch_v10000", self.jitter(rk, 12_000), 0,
                                     "graph")
        t = max(a1 + 2_000, rk.free[rk.s_compute])
        for i in range(storm):
            key = catalog.OPT_STORM[i % 4]
            d = int(self.jitter(rk, catalog.KERNELS[key][9]) * slow)
            rk.grid += 1
            node = 1_000 + i
            self.k_rows.append((t, t + d, rk.device, rk.context, rk.s_compute, corr, rk.gpid,
                                self.kt_index[key], rk.grid, node))
            t += d + 800
        rk.free[rk.s_compute] = t - 800
        rk.cpu += self.jitter(rk, 4_000)

    def bubble(self, rk, bubble_ns):
        main = rk.main_tid
        self.push(rk, main, self.label("save_checkpoint", "save_checkpoint"))
        # the CPU sits in cudaDeviceSynchronize while the GPU drains, then does host-only work
        drained = max(rk.free.values())
        end = self.sync(rk, main, "cudaDeviceSynchronize_v3020", 4, UINT32_MAX, drained)
        rk.cpu = end + bubble_ns
        self.nv_rows.append([rk.cpu, None, 34, None, None, None, "checkpoint saved", main, None, None, 0])
        self.pop(rk, main)
        self.bubbles.append((rk.device, drained, rk.cpu))

    def setup(self, rk):
        main = rk.main_tid
        self.push(rk, main, self.label("setup", "setup"))
        self.memset(rk, 256 << 20)
        self.memcpy(rk, "cudaMemcpy_v3020", PAGEABLE_BYTES, 1, 0, 2, rk.s_compute, PAGEABLE_BW)
        self.pop(rk, main)
        rk.cpu += 200_000
        rk.ccpu = rk.cpu

    # -- driver ---------------------------------------------------------------------------

    def run(self, db):
        cfg = self.cfg
        for rk in self.ranks:
            # NCCL domain (eventType 75) on the NCCL thread of every process
            self.nv_rows.append([rk.ccpu, None, 75, None, None, None, "NCCL", rk.comm_tid, None, None, 1])
            self.setup(rk)
        # a start/end range that ends on another thread (endGlobalTid set), per process
        cross = []
        for rk in self.ranks:
            rk.range_id += 1
            row = [rk.cpu, None, 60, rk.range_id, None, None, self.label("epoch", "epoch 0"), rk.main_tid, None, None, 0]
            self.nv_rows.append(row)
            cross.append(row)
        median_guess = None
        for it in range(cfg.iterations):
            gens = [self.iteration(rk, it) for rk in self.ranks]
            pending = [next_or_none(g, None) for g in gens]
            while any(p is not None for p in pending):
                assert all(p is not None for p in pending), "ranks out of step"
                ready = max(p[0] for p in pending)
                dur = pending[0][1]
                end = ready + dur
                pending = [next_or_none(g, end) for g in gens]
            # align ranks at the iteration end (the next iteration starts with a collective anyway)
            if it == cfg.bubble_iter:
                spans = [s[4] - s[3] for s in self.iter_spans[it]]
                median_guess = sorted(spans)[len(spans) // 2]
                bubble_ns = max(BUBBLE_MIN_NS, int(0.6 * median_guess))
                for rk in self.ranks:
                    self.bubble(rk, bubble_ns)
            self.flush(db)
        for rk, row in zip(self.ranks, cross):
            rk.ccpu = max(rk.ccpu, rk.cpu) + 10_000
            row[1] = rk.ccpu
            row[8] = rk.comm_tid
        self.last_end = max(max(rk.cpu, rk.ccpu, max(rk.free.values())) for rk in self.ranks)
        self.flush(db)

    # -- writing ----------------------------------------------------------------------------

    def prepare(self, db):
        sc = self.schema
        T = nsys_schemas.TABLES[sc]
        green = {"greenContextId": "0"} if has_col(sc, "CUPTI_ACTIVITY_KIND_KERNEL", "greenContextId") else {}
        db.execute("CREATE TEMP TABLE kt (id INTEGER PRIMARY KEY, dem, short, mang, regs, gx, gy, gz, bx, by, bz,"
                   " ss, ds, sme)")
        db.execute("CREATE TEMP TABLE kstage (start, \"end\", dev, ctx, stream, corr, gpid, kt, gridId, node)")
        db.executemany("INSERT INTO temp.kt VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", self.kt_rows)
        kcols = [c[0] for c in T["CUPTI_ACTIVITY_KIND_KERNEL"][0]]
        src = {"start": "s.start", "end": "s.\"end\"", "deviceId": "s.dev", "contextId": "s.ctx",
               "streamId": "s.stream", "correlationId": "s.corr", "globalPid": "s.gpid",
               "demangledName": "kt.dem", "shortName": "kt.short", "mangledName": "kt.mang",
               "launchType": "1", "cacheConfig": "1", "registersPerThread": "kt.regs",
               "gridX": "kt.gx", "gridY": "kt.gy", "gridZ": "kt.gz", "blockX": "kt.bx", "blockY": "kt.by",
               "blockZ": "kt.bz", "staticSharedMemory": "kt.ss", "dynamicSharedMemory": "kt.ds",
               "localMemoryPerThread": "0", "localMemoryTotal": str(catalog.GPU["localMemoryTotal"]),
               "gridId": "s.gridId", "sharedMemoryExecuted": "kt.sme", "graphNodeId": "s.node",
               "sharedMemoryLimitConfig": "0", "graphId": "CASE WHEN s.node IS NULL THEN NULL ELSE 1 END",
               "clusterX": "0", "clusterY": "0", "clusterZ": "0", "clusterSchedulingPolicy": "1",
               "maxPotentialClusterSize": "0", "maxActiveClusters": "0",
               "tensorSizeMinusOneElements": "'[]'"}
        src.update(green)
        self.k_flush_sql = ("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (%s) SELECT %s FROM temp.kstage s "
                            "JOIN temp.kt kt ON kt.id = s.kt ORDER BY s.rowid"
                            % (", ".join('"%s"' % c for c in kcols), ", ".join(src.get(c, "NULL") for c in kcols)))
        self.rt_sql = insert_sql(sc, "CUPTI_ACTIVITY_KIND_RUNTIME",
                                 ["start", "end", "eventClass", "globalTid", "correlationId", "nameId",
                                  "callchainId"], {"returnValue": "0"})
        self.nv_sql = insert_sql(sc, "NVTX_EVENTS", ["start", "end", "eventType", "rangeId", "category", "color",
                                                     "text", "globalTid", "endGlobalTid", "textId", "domainId"])
        self.nv_payload_sql = insert_sql(sc, "NVTX_EVENTS", ["start", "end", "eventType", "rangeId", "category",
                                                             "color", "text", "globalTid", "endGlobalTid", "textId",
                                                             "domainId", "jsonText"])
        self.mc_sql = insert_sql(sc, "CUPTI_ACTIVITY_KIND_MEMCPY",
                                 ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                  "bytes", "copyKind", "srcKind", "dstKind"],
                                 dict(green, copyCount="1"))
        self.ms_sql = insert_sql(sc, "CUPTI_ACTIVITY_KIND_MEMSET",
                                 ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                  "value", "bytes", "memKind"], green)
        self.sy_sql = insert_sql(sc, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                 ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                  "syncType", "eventId"], dict(green, eventSyncId="0"))
        for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
                  "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
            db.execute(table_ddl(sc, t))

    def flush(self, db):
        if self.k_rows:
            db.executemany("INSERT INTO temp.kstage VALUES (?,?,?,?,?,?,?,?,?,?)", self.k_rows)
            db.execute(self.k_flush_sql)
            db.execute("DELETE FROM temp.kstage")
            self.counts["kernels"] += len(self.k_rows)
            self.k_rows = []
        for attr, sql, key in (("rt_rows", self.rt_sql, "runtime"), ("mc_rows", self.mc_sql, "memcpy"),
                               ("ms_rows", self.ms_sql, "memset"), ("sy_rows", self.sy_sql, "syncs")):
            rows = getattr(self, attr)
            if rows:
                db.executemany(sql, rows)
                self.counts[key] += len(rows)
                setattr(self, attr, [])
        # NVTX rows are written once closed; open ranges stay buffered
        done = [r for r in self.nv_rows if r[1] is not None or r[2] in (34, 75)]
        if done:
            db.executemany(self.nv_sql, [r for r in done if len(r) == 11])
            db.executemany(self.nv_payload_sql, [r for r in done if len(r) == 12])
            self.counts["nvtx"] += len(done)
            self.nv_rows = [r for r in self.nv_rows if not (r[1] is not None or r[2] in (34, 75))]

    def finish(self, db):
        cfg, sc, S = self.cfg, self.schema, self.S
        T = nsys_schemas.TABLES[sc]
        assert not self.nv_rows, "unclosed NVTX ranges"
        # processes and threads
        launcher_pid = BASE_PID
        lgpid = GLOBAL_VM | (launcher_pid << 24)
        procs = [(lgpid, launcher_pid, "torchrun")] + [(rk.gpid, rk.pid, "python3") for rk in self.ranks]
        threads = [(S("torchrun"), 20, lgpid | launcher_pid)]
        for rk in self.ranks:
            threads.append((S("python3"), 20, rk.main_tid))
            threads.append((S("pt_nccl_comm"), 20, rk.comm_tid))
        tables = {"PROCESSES": (["globalPid", "pid", "name"], procs, {}),
                  "ThreadNames": (["nameId", "priority", "globalTid"], threads, {})}
        # GPUs
        g = catalog.GPU
        gcols = ["vmId", "id", "name", "busLocation", "isDiscrete", "l2CacheSize", "totalMemory",
                 "memoryBandwidth", "clockRate", "smCount", "pwGpuId", "uuid", "luid", "chipName", "cuDevice",
                 "ctxswDevPath", "ctrlDevPath", "revision", "nodeMask", "constantMemory", "maxIPC",
                 "maxRegistersPerBlock", "maxShmemPerBlock", "maxShmemPerBlockOptin", "maxShmemPerSm",
                 "maxRegistersPerSm", "threadsPerWarp", "asyncEngines", "maxWarpsPerSm", "maxBlocksPerSm",
                 "maxThreadsPerBlock", "maxBlockDimX", "maxBlockDimY", "maxBlockDimZ", "maxGridDimX",
                 "maxGridDimY", "maxGridDimZ", "computeMajor", "computeMinor", "smMajor", "smMinor"]
        urng = random.Random(cfg.seed ^ 0x5EED)
        gpus = []
        uuids = []
        for i in range(cfg.gpus):
            u = "%08x-%04x-%04x-%04x-%012x" % (urng.getrandbits(32), urng.getrandbits(16), urng.getrandbits(16),
                                                urng.getrandbits(16), urng.getrandbits(48))
            uuids.append(u)
            bus = "0000:%02x:00.0" % ((0x18 + 0x11 * i) % 0x100)
            gpus.append((GLOBAL_VM, i, g["name"], bus, 1, g["l2CacheSize"], g["totalMemory"], g["memoryBandwidth"],
                         g["clockRate"], g["smCount"], 0, u, 0, g["chipName"], i, "", "", 161, 0, 65536, 4, 65536,
                         49152, g["maxShmemPerBlockOptin"], g["maxShmemPerSm"], 65536, 32, g["asyncEngines"], 64, 32,
                         1024, 1024, 1024, 64, 2147483647, 65535, 65535, g["computeMajor"], g["computeMinor"],
                         g["computeMajor"], g["computeMinor"]))
        tables["TARGET_INFO_GPU"] = (gcols, gpus, {})
        if "TARGET_INFO_CUDA_DEVICE" in T:
            tables["TARGET_INFO_CUDA_DEVICE"] = (["gpuId", "cudaId", "pid", "uuid", "numMultiprocessors"],
                                                 [(rk.device, rk.device, rk.pid, uuids[rk.r], g["smCount"])
                                                  for rk in self.ranks], {})
        if "TARGET_INFO_CUDA_CONTEXT_INFO" in T:
            tables["TARGET_INFO_CUDA_CONTEXT_INFO"] = (
                ["nullStreamId", "hwId", "vmId", "processId", "deviceId", "contextId", "parentContextId",
                 "isGreenContext"],
                [(rk.s_compute, 0, 1, rk.pid, rk.device, rk.context, 0, 0) for rk in self.ranks], {})
        if "TARGET_INFO_CUDA_NULL_STREAM" in T:
            tables["TARGET_INFO_CUDA_NULL_STREAM"] = (
                ["streamId", "hwId", "vmId", "processId", "deviceId", "contextId"],
                [(rk.s_compute, 0, 1, rk.pid, rk.device, rk.context) for rk in self.ranks], {})
        if "TARGET_INFO_CUDA_STREAM" in T:
            rows = []
            for rk in self.ranks:
                rows += [(rk.s_compute, 0, 1, rk.pid, rk.context, 0, 3), (rk.s_comm, 0, 1, rk.pid, rk.context,
                                                                           UINT32_MAX, 2),
                         (rk.s_copy, 0, 1, rk.pid, rk.context, 0, 2)]
            tables["TARGET_INFO_CUDA_STREAM"] = (
                ["streamId", "hwId", "vmId", "processId", "contextId", "priority", "flag"], rows, {})
        # session / analysis
        duration = self.last_end + 100_000_000
        if "systemClockNs" in [c[0] for c in T["TARGET_INFO_SESSION_START_TIME"][0]]:
            tables["TARGET_INFO_SESSION_START_TIME"] = (
                ["utcEpochNs", "utcTime", "localTime", "systemClockNs"],
                [(SESSION_UTC_NS, "2026-05-26T07:58:50", "2026-05-26T07:58:50", SYSTEM_CLOCK_NS)], {})
            ad = (GLOBAL_VM, duration, SYSTEM_CLOCK_NS, SYSTEM_CLOCK_NS + duration)
        else:
            tables["TARGET_INFO_SESSION_START_TIME"] = (
                ["utcEpochNs", "utcTime", "localTime"],
                [(SESSION_UTC_NS, "2026-05-26T07:58:50", "2026-05-26T07:58:50")], {})
            ad = (GLOBAL_VM, duration, 251_976_078, 251_976_078 + duration)
        tables["ANALYSIS_DETAILS"] = (["globalVid", "duration", "startTime", "stopTime"], [ad], {})
        # metadata
        prod, date, cksum = SCHEMA_PRODUCT[sc]
        major, minor, micro = sc.split(".")
        meta = [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", prod),
                ("EXPORT_PRODUCT_DATE", date), ("EXPORT_SCHEMA_VERSION", sc),
                ("EXPORT_SCHEMA_VERSION_MAJOR", major), ("EXPORT_SCHEMA_VERSION_MINOR", minor),
                ("EXPORT_SCHEMA_VERSION_MICRO", micro), ("EXPORT_SCHEMA_VERSION_CKSUM", cksum),
                ("EXPORT_PLATFORM", "linux-desktop"), ("EXPORT_ARCH", "x64"),
                ("EXPORT_TIME_UTC", "2026-05-26T08:01:27"), ("EXPORT_HOST", "gen-profile"),
                ("EXPORT_PARAM_INPUT_FILE", "gen_profile.nsys-rep"),
                ("EXPORT_PARAM_%s_FILE" % ("OUTPUT" if sc == "3.25.0" else "OUTUPT"), "gen_profile.sqlite"),
                ("EXPORT_PARAM_LAZY", "true"), ("EXPORT_PARAM_TIME_NORMALIZE", "false"),
                ("EXPORT_PARAM_TIME_SHIFT", "0"),
                ("GENERATED_BY", "nsys-ai tools/gen_profile.py " + self.describe())]
        meta_table = "META_DATA_EXPORT" if "META_DATA_EXPORT" in T else "EXPORT_META_DATA"
        tables[meta_table] = (["name", "value"], meta, {})
        if "META_DATA_CAPTURE" in T:
            cap = [("DEVICE_ID", "Local (CLI)"), ("CAPTURE_EVENT_TYPE", "NvtxEvents"), ("CAPTURE_EVENT_TYPE", "Cuda"),
                   ("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Node" if cfg.graphs else "Graph"),
                   ("CUDA_TRACE_SCOPE", "ProcessTree"), ("PROCESS_0:COMMAND", "torchrun"),
                   ("PROCESS_0:ARGUMENT_0", "--nproc_per_node=%d" % cfg.gpus), ("PROCESS_0:ARGUMENT_1", "train.py")]
            tables["META_DATA_CAPTURE"] = (["name", "value"], cap, {})
        tables["TARGET_INFO_SYSTEM_ENV"] = (
            ["globalVid", "devStateName", "name", "nameEnum", "value"],
            [(GLOBAL_VM, "Local (CLI)", "Hostname", 0, "gen-profile"),
             (GLOBAL_VM, "Local (CLI)", "CpuCores", 1, "64"),
             (GLOBAL_VM, "Local (CLI)", "CpuArchitecture", 3, "x86_64"),
             (GLOBAL_VM, "Local (CLI)", "NvDriverVersion", 30, "580.95.05"),
             (GLOBAL_VM, "Local (CLI)", "CudaDriverVersion", 31, "13000")], {})
        # graphs
        if cfg.graphs:
            gapi = S("cudaGraphAddKernelNode_v10000")
            rk0 = self.ranks[0]
            storm_max = max(cfg.storm_for(cfg.cell_kernels(r, i)) for r in range(cfg.gpus)
                            for i in range(cfg.iterations))
            node_rows = [(T0 - 50_000 + i * 3_000, T0 - 50_000 + i * 3_000 + 2_000, 0, rk.main_tid, gapi, 1_000 + i,
                          None) for rk in self.ranks for i in range(storm_max)]
            node_rows.sort()
            node_table = "CUDA_GRAPH_NODE_EVENTS" if "CUDA_GRAPH_NODE_EVENTS" in T else "CUDA_GRAPH_EVENTS"
            tables[node_table] = (["start", "end", "eventClass", "globalTid", "nameId", "graphNodeId",
                                   "originalGraphNodeId"], node_rows, {})
            if node_table == "CUDA_GRAPH_NODE_EVENTS":
                ge = S("cudaGraphInstantiate_v12000")
                tables["CUDA_GRAPH_EVENTS"] = (["start", "end", "eventClass", "globalTid", "nameId", "graphId",
                                                "originalGraphId", "graphExecId"],
                                               [(T0 - 5_000, T0 - 1_000, 0, rk.main_tid, ge, 1, None, 1)
                                                for rk in self.ranks], {})
            del rk0
        if cfg.callchains:
            tables["CUDA_CALLCHAINS"] = (["id", "symbol", "module", "unresolved", "originalIP", "stackDepth"],
                                         self.callchain_rows, {})
        self.shape_tables(tables)
        # enums
        for et, rows in nsys_schemas.ENUMS[sc].items():
            tables[et] = (["id", "name", "label"], rows, {})
        # StringIds last (everything above interned its strings)
        tables["StringIds"] = (["id", "value"], S.rows, {})
        for name in sorted(tables):
            cols, rows, consts = tables[name]
            db.execute(table_ddl(sc, name))
            db.executemany(insert_sql(sc, name, cols, consts), rows)

    def describe(self):
        c = self.cfg
        s = "preset=%s gpus=%d kernels=%d iterations=%d layers=%d schema=%s seed=%d" % (
            c.preset, c.gpus, c.kernels, c.iterations, c.layers, c.schema, c.seed)
        for flag in ("source_tags", "graphs", "callchains"):
            if getattr(c, flag):
                s += " --" + flag.replace("_", "-")
        if c.shapes:
            s += " --shape " + ",".join(sorted(c.shapes))
        return s

    def summary(self):
        c = self.cfg
        spans = {}
        for it, lst in sorted(self.iter_spans.items()):
            spans[it] = {"cpu": [[r, a, b] for r, a, b, _, _ in lst], "gpu": [[r, g0, g1] for r, _, _, g0, g1 in lst]}
        return {"config": {"gpus": c.gpus, "kernels": c.kernels, "iterations": c.iterations, "layers": c.layers,
                           "schema": c.schema, "seed": c.seed, "graphs": c.graphs, "callchains": c.callchains,
                           "sourceTags": c.source_tags, "shapes": sorted(c.shapes)},
                "counts": self.counts,
                "problems": {"bubbleIteration": c.bubble_iter, "outlierIteration": c.outlier_iter,
                             "bubbles": [{"device": d, "start": a, "end": b} for d, a, b in self.bubbles],
                             "slowFactor": SLOW_FACTOR, "pageableBytes": PAGEABLE_BYTES,
                             "hotspotKernel": catalog.KERNELS["gemm_hot"][0]}}


# ----------------------------------------------------------------------------------------
# clock options (--epoch-clock, --negative-ts)


def clock_shift(args, gen):
    """ns added to every event timestamp: utcEpochNs for --epoch-clock, minus the first
    train_step's start for --negative-ts (session zero there)."""
    shift = 0
    if args.epoch_clock:
        shift += SESSION_UTC_NS
    if args.negative_ts:
        shift -= min(span[1] for span in gen.iter_spans[0])
    return shift


def apply_clock(db, args, gen):
    shift = clock_shift(args, gen)
    if not shift:
        return 0
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    meta = "META_DATA_EXPORT" if "META_DATA_EXPORT" in tables else "EXPORT_META_DATA"
    flags = "".join(" --" + f for f, on in (("epoch-clock", args.epoch_clock), ("negative-ts", args.negative_ts)) if on)
    db.execute("UPDATE %s SET value = value || ? WHERE name = 'GENERATED_BY'" % meta, (flags,))
    for t in tables:
        cols = [r[1] for r in db.execute('PRAGMA table_info("%s")' % t)]
        moved = [c for c in ("start", "end", "timestamp") if c in cols]
        if moved:
            db.execute('UPDATE "%s" SET %s' % (t, ", ".join('"%s" = "%s" + %d' % (c, c, shift) for c in moved)))
    if args.epoch_clock:
        on_event_clock = "systemClockNs" not in [r[1] for r in db.execute(
            "PRAGMA table_info(TARGET_INFO_SESSION_START_TIME)")]
        if on_event_clock:
            db.execute("UPDATE ANALYSIS_DETAILS SET startTime = startTime + ?, stopTime = stopTime + ?",
                       (SESSION_UTC_NS, SESSION_UTC_NS))
        db.execute("UPDATE %s SET value = 'true' WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE'" % meta)
    return shift


def shift_summary(summary, shift):
    """The --summary's event times on the written clock."""
    for b in summary["problems"]["bubbles"]:
        b["start"] += shift
        b["end"] += shift
    summary["clockShiftNs"] = shift
    return summary


def next_or_none(gen, value):
    try:
        return gen.send(value)
    except StopIteration:
        return None


def generate(cfg, out, args=None):
    tmp = out + ".tmp-%d" % os.getpid()
    for p in (tmp, tmp + "-journal"):
        if os.path.exists(p):
            os.remove(p)
    db = sqlite3.connect(tmp, isolation_level=None)
    db.execute("PRAGMA page_size=4096")
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA temp_store=MEMORY")
    db.execute("PRAGMA cache_size=-65536")
    db.execute("BEGIN")
    gen = Generator(cfg)
    gen.prepare(db)
    gen.run(db)
    gen.finish(db)
    gen.clock_shift = apply_clock(db, args, gen) if args is not None else 0
    db.execute("COMMIT")
    db.close()
    os.replace(tmp, out)
    return gen


def split_ranks(src, out_dir, gen, per_node, node_offset):
    """One export per rank: rank r's process only (rows of other processes, devices and
    threads left out), TARGET_INFO_SYSTEM_ENV Hostname node<k> (k = r // per_node), and
    node k's session start moved by k x node_offset (a node clock that is off: every event
    of the file lands that much earlier on the session-aligned clock). The kept times are
    the run's, so the rank files line up like the ranks did."""
    os.makedirs(out_dir, exist_ok=True)
    src_db = sqlite3.connect(src)
    ddl = src_db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                         "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index'").fetchall()
    cols = {n: {r[1] for r in src_db.execute('PRAGMA table_info("%s")' % n)} for t, n, _ in ddl if t == "table"}
    src_db.close()
    for rk in gen.ranks:
        dst = os.path.join(out_dir, "rank%d.sqlite" % rk.r)
        tmp = dst + ".tmp"
        if os.path.exists(tmp):
            os.remove(tmp)
        db = sqlite3.connect(tmp)
        db.execute("ATTACH DATABASE ? AS src", (src,))
        db.execute("BEGIN")
        for kind, name, sql in ddl:
            if kind != "table":
                continue
            db.execute(sql)
            c = cols[name]
            where = []
            if "globalPid" in c:
                where.append("(globalPid IS NULL OR globalPid = %d)" % rk.gpid)
            elif "globalTid" in c:
                where.append("(globalTid IS NULL OR (globalTid >> 24) = %d)" % (rk.gpid >> 24))
            if "deviceId" in c and name.startswith("CUPTI"):
                where.append("deviceId = %d" % rk.device)
            db.execute('INSERT INTO main."%s" SELECT * FROM src."%s"%s'
                       % (name, name, (" WHERE " + " AND ".join(where)) if where else ""))
        for kind, name, sql in ddl:
            if kind == "index":
                db.execute(sql)
        node = rk.r // max(1, per_node)
        if "TARGET_INFO_SYSTEM_ENV" not in cols:
            db.execute("CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, "
                       "name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL)")
        db.execute("DELETE FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'")
        db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, 'Local (CLI)', 'Hostname', 619, ?)",
                   (GLOBAL_VM, "node%d" % node))
        if node_offset and "TARGET_INFO_SESSION_START_TIME" in cols:
            db.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs - ?", (node * node_offset,))
        db.execute("COMMIT")
        db.execute("DETACH DATABASE src")
        db.close()
        os.replace(tmp, dst)


DERIVED_CLOCK_STEP_NS = 997_003  # derived rank r's file clock starts r x this later (its own session start)


def derive_ranks(base_dir, out_dir, n, straggler, per_node, node_offset):
    """The fast path for large rank sets (--derive-ranks): instead of simulating N ranks, the
    2-GPU run's rank files (split_ranks: rank 0 a plain rank, rank 1 the one whose data loader
    stalled, both waiting on each other at every collective) are copied in SQL, one pass per
    derived file (INSERT ... SELECT, indexes built after). Rank r of N is a copy of base rank 0,
    rank `straggler` of base rank 1, with:
      - its own process: pid BASE_PID + 1 + r in PROCESSES, TARGET_INFO_CUDA_* and the pid
        bits (24..47) of every globalPid / globalTid / endGlobalTid;
      - its NCCL payloads (NVTX jsonText): "Rank" r, "No. of ranks" N (the communicator id kept);
      - its own clock: every start/end/timestamp r x DERIVED_CLOCK_STEP_NS earlier and its
        session start (utcEpochNs) that much later, as a process started later sees it: the
        session start puts it back exactly;
      - its node: Hostname node<k> (k = r // per_node) and node k's session start moved by
        k x node_offset, as split_ranks does (the clock offset the set must recover).
    The ranks are copies, so every collective ends at the same set time on every rank and the
    straggler is the only late arriver: what split_ranks' files of an N-GPU run look like, at
    the cost of copying N files instead of simulating N ranks."""
    os.makedirs(out_dir, exist_ok=True)
    templates = [os.path.join(base_dir, "rank%d.sqlite" % r) for r in (0, 1)]
    src_db = sqlite3.connect(templates[0])
    ddl = src_db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                         "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index'").fetchall()
    cols = {n_: [r[1] for r in src_db.execute('PRAGMA table_info("%s")' % n_)] for t, n_, _ in ddl if t == "table"}
    src_db.close()
    pid_mask = 0xFFFFFF << 24
    for r in range(n):
        pid, shift = BASE_PID + 1 + r, r * DERIVED_CLOCK_STEP_NS
        gpid_bits = pid << 24

        def expr(table, c):
            q = '"%s"' % c
            if c in ("start", "end", "timestamp"):
                return "%s - %d" % (q, shift)
            if c in ("globalPid", "globalTid", "endGlobalTid"):
                return "((%s & ~%d) | %d)" % (q, pid_mask, gpid_bits)
            if (table, c) in (("PROCESSES", "pid"), ("TARGET_INFO_CUDA_DEVICE", "pid"),
                              ("TARGET_INFO_CUDA_CONTEXT_INFO", "processId"), ("TARGET_INFO_CUDA_STREAM", "processId")):
                return "%d" % pid
            if (table, c) == ("NVTX_EVENTS", "jsonText"):
                return ("CASE WHEN %s LIKE '%%NCCL communicator ID%%' THEN json_set(%s, '$.\"Rank\"', %d, "
                        "'$.\"No. of ranks\"', %d) ELSE %s END" % (q, q, r, n, q))
            return q
        dst = os.path.join(out_dir, "rank%d.sqlite" % r)
        tmp = dst + ".tmp"
        if os.path.exists(tmp):
            os.remove(tmp)
        db = sqlite3.connect(tmp)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("ATTACH DATABASE ? AS src", (templates[1 if r == straggler else 0],))
        db.execute("BEGIN")
        for kind, name, sql in ddl:
            if kind == "table":
                db.execute(sql)
                db.execute('INSERT INTO main."%s" SELECT %s FROM src."%s"'
                           % (name, ", ".join(expr(name, c) for c in cols[name]), name))
        for kind, name, sql in ddl:
            if kind == "index":
                db.execute(sql)
        node = r // max(1, per_node)
        db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'Hostname'", ("node%d" % node,))
        if "TARGET_INFO_SESSION_START_TIME" in cols:
            db.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + ?", (shift - node * node_offset,))
        db.execute("COMMIT")
        db.execute("DETACH DATABASE src")
        db.close()
        os.replace(tmp, dst)


# Planted changes (main's "planted changes" options): what a before/after pair
# differs by, for profile/diff's tests. Defaults change nothing.
PLANT = {"nccl": 1.0, "loader_ns": None}


def plant_changes(args):
    """Applies the planted changes to the catalog and PLANT; returns an undo function."""
    saved = dict(catalog.KERNELS), dict(PLANT)
    if args.plant_slow_kernels:
        pat = args.plant_slow_kernels.lower()
        for key, ent in catalog.KERNELS.items():
            if pat in ent[0].lower():
                catalog.KERNELS[key] = ent[:9] + (int(ent[9] * args.plant_factor),)
    if args.plant_launch_config:
        ent = catalog.KERNELS[args.plant_launch_config]
        g, b = ent[5], ent[6]
        catalog.KERNELS[args.plant_launch_config] = ent[:4] + (
            ent[4] + 8, (g[0] * 2, g[1], g[2]), (max(1, b[0] // 2), b[1], b[2])) + ent[7:9] + (int(ent[9] * 1.3),)
    PLANT["nccl"] = args.plant_nccl_factor
    PLANT["loader_ns"] = args.plant_loader_stall

    def undo():
        catalog.KERNELS.clear()
        catalog.KERNELS.update(saved[0])
        PLANT.update(saved[1])
    return undo


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True, help="output .sqlite path (replaced atomically)")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--gpus", type=int)
    ap.add_argument("--kernels", type=int, help="total kernel rows (all GPUs)")
    ap.add_argument("--iterations", type=int)
    ap.add_argument("--layers", type=int, help="transformer layers (default: derived from kernels/iteration)")
    ap.add_argument("--schema", choices=sorted(nsys_schemas.TABLES), default="3.25.0")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--source-tags", action="store_true", help="NVTX texts start with FILE:LINE")
    ap.add_argument("--graphs", action="store_true", help="optimizer replayed as a CUDA graph")
    ap.add_argument("--callchains", action="store_true", help="CUDA_CALLCHAINS + runtime callchainId")
    ap.add_argument("--summary", action="store_true", help="print a JSON summary (counts, problems) on stdout")
    ap.add_argument("--shape", action="append", default=[], metavar="NAME[,NAME]",
                    help="stress shapes (repeatable or comma list): " + ", ".join(SHAPES))
    clock = ap.add_argument_group("clock (see apply_clock)")
    clock.add_argument("--epoch-clock", action="store_true",
                       help="absolute UTC ns timestamps (~1.78e18), as nsys export --ts-normalize=true")
    clock.add_argument("--negative-ts", action="store_true",
                       help="session zero at train_step 0: the setup phase has negative timestamps")
    ranks = ap.add_argument_group("rank sets (see split_ranks): one file per rank of a multi-GPU run")
    ranks.add_argument("--rank-files", metavar="DIR",
                       help="also write DIR/rank<R>.sqlite per GPU (its process only; -o keeps the whole run)")
    ranks.add_argument("--ranks-per-node", type=int, default=8, help="ranks sharing a host name and clock")
    ranks.add_argument("--node-offset-ns", type=int, default=0,
                       help="node k's session start (its clock) is off by k x this many ns")
    ranks.add_argument("--straggler-rank", type=int, help="this rank's data loader stalls (DataLoader.__next__)")
    ranks.add_argument("--straggler-every", type=int, default=7, help="... every N-th step (it %% N == 0)")
    ranks.add_argument("--straggler-ns", type=int, default=2_000_000, help="... for this long")
    ranks.add_argument("--derive-ranks", type=int, metavar="N",
                       help="fast path (see derive_ranks): simulate 2 GPUs (--kernels: theirs, both), write N rank "
                            "files to --rank-files copied from those two in SQL (needs --rank-files)")
    plant = ap.add_argument_group("planted changes (before/after pairs for profile/diff; same seed = same jitter)")
    plant.add_argument("--plant-slow-kernels", metavar="SUBSTRING",
                       help="kernels whose short name contains SUBSTRING (case-insensitive) run --plant-factor longer")
    plant.add_argument("--plant-factor", type=float, default=1.3, help="duration factor of --plant-slow-kernels")
    plant.add_argument("--plant-nccl-factor", type=float, default=1.0,
                       help="NCCL collectives last this factor longer (more of them exposed)")
    plant.add_argument("--plant-loader-stall", type=int, metavar="NS",
                       help="a data_loader NVTX range of NS host ns at each train_step start (the GPU idles)")
    plant.add_argument("--plant-launch-config", metavar="KEY", choices=sorted(catalog.KERNELS),
                       help="catalog kernel launched with twice the grid, half the block, 8 more registers, 1.3x longer")
    args = ap.parse_args(argv)
    derived = None
    if args.derive_ranks:
        if not args.rank_files or args.derive_ranks < 2:
            ap.error("--derive-ranks N needs --rank-files and N >= 2")
        if args.straggler_rank is not None and not 0 <= args.straggler_rank < args.derive_ranks:
            ap.error("--straggler-rank must be a rank of the derived set")
        # the simulated run: 2 GPUs, its rank 1 the straggler's template
        derived = (args.derive_ranks, args.straggler_rank, args.rank_files)
        args.gpus, args.straggler_rank = 2, (1 if args.straggler_rank is not None else None)
        args.rank_files = args.rank_files.rstrip("/") + ".base"
    undo = plant_changes(args)
    try:
        cfg = Config(args)
        gen = generate(cfg, args.output, args)
    finally:
        undo()
    if derived:
        split_ranks(args.output, args.rank_files, gen, 2, 0)
        derive_ranks(args.rank_files, derived[2], derived[0], derived[1], args.ranks_per_node, args.node_offset_ns)
        shutil.rmtree(args.rank_files)
    elif args.rank_files:
        split_ranks(args.output, args.rank_files, gen, args.ranks_per_node, args.node_offset_ns)
    if args.summary:
        json.dump(shift_summary(gen.summary(), gen.clock_shift), sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
