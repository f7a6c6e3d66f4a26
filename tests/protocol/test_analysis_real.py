"""Every analysis checked against an independent Python/SQL computation
(analysis_ref.py) on real exports: an NCCL one, an NVTX one and one without
NVTX, plus others where the data lives (sampling, memcpy). Runs through the
CLI (`nsys-ai analyze NAME FILE --format json`, the same handler as
analysis/run) and validates every result against its schema."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import analysis_ref as ref
from conftest import check_schema, need_real
from nsys_rpc import server_binary

NCCL = "nsys2026_2gpu_nccl_before"
NVTX = "nsys2024_a100_lm_nvtx"
PLAIN = "nsys2023_rtx3060_23k"
THREE = [NCCL, NVTX, PLAIN]


def analyze(name: str, path: Path, **params) -> dict:
    cmd = [server_binary(), "analyze", name, str(path), "--format", "json"]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode()}"
    res = json.loads(r.stdout)
    check_schema("analysis/run", "result", res)
    assert res["name"] == name
    assert res["window"]["start"] <= res["window"]["end"]
    return res


@pytest.mark.parametrize("prof", THREE)
def test_top_kernels(prof):
    path = need_real(prof)
    want = ref.top_kernels(ref.connect(path))
    res = analyze("top_kernels", path, limit=0)
    assert len(res["rows"]) == len(want)
    assert res["summary"]["kernelCount"] == sum(w["count"] for w in want.values())
    totals = [r["totalNs"] for r in res["rows"]]
    assert totals == sorted(totals, reverse=True)
    for r in res["rows"]:
        w = want[r["name"]]
        for k in ("count", "totalNs", "minNs", "maxNs"):
            assert r[k] == w[k], (prof, r["name"], k)
        assert abs(r["medianNs"] - w["medianNs"]) <= 0.5
        assert abs(r["p95Ns"] - w["p95Ns"]) <= 0.5
        assert abs(r["pctOfGpu"] - w["pctOfGpu"]) <= 0.01
    assert abs(sum(r["pctOfGpu"] for r in res["rows"]) - 100) < 0.5


def test_top_kernels_demangled():
    path = need_real(NCCL)
    db = ref.connect(path)
    n = db.execute("SELECT COUNT(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    res = analyze("top_kernels", path, limit=0, names="demangled")
    assert len(res["rows"]) == n


@pytest.mark.parametrize("prof", THREE + ["nsys2024_a100_cudagraph"])
def test_overlap(prof):
    path = need_real(prof)
    want = ref.overlap(ref.connect(path))
    res = analyze("overlap", path)
    got = {d["device"]: d for d in res["summary"]["devices"]}
    assert set(got) == set(want)
    for d, w in want.items():
        for k, v in w.items():
            assert got[d][k] == v, (prof, d, k)
        comm = got[d]["commNs"]
        if comm:
            assert abs(got[d]["commHiddenPct"] - 100 * got[d]["overlapNs"] / comm) < 0.01
        else:
            assert got[d]["commHiddenPct"] is None


@pytest.mark.parametrize("prof", THREE)
def test_gpu_idle_gaps(prof):
    path = need_real(prof)
    want = ref.device_gaps(ref.connect(path), 1_000_000)
    res = analyze("gpu_idle_gaps", path, scope="device", limit=0)
    got = {}
    for r in res["rows"]:
        assert r["stream"] is None and r["durationNs"] == r["end"] - r["start"] >= 1_000_000
        got.setdefault(r["device"], []).append(r["durationNs"])
    for d, w in want.items():
        assert sorted(got.get(d, []), reverse=True) == w, (prof, d)
    for d in res["summary"]["devices"]:
        assert d["gapCount"] == len(want.get(d["device"], []))
        split = d["streamIdleSplit"]
        assert min(split.values()) >= 0


def test_gpu_idle_gaps_stream_scope():
    path = need_real(NCCL)
    res = analyze("gpu_idle_gaps", path, scope="stream", limit=0, minGapNs=500000)
    db = ref.connect(path)
    # independent per-stream gaps on compute/mixed streams (all streams here carry compute)
    by = {}
    for s, e, d, st in ref.gpu_ops(db):
        by.setdefault((d, st), []).append((s, e))
    want = []
    for key, iv in by.items():
        iv.sort()
        end = None
        for s, e in iv:
            if end is not None and s - end >= 500000:
                want.append((key, s - end))
            end = e if end is None else max(end, e)
    dev = {(r["device"], r["stream"]): 0 for r in res["rows"]}
    assert all(r["stream"] is not None for r in res["rows"])
    # a stream gap equal to a device gap is reported once, as the device gap
    assert len(res["rows"]) <= len(want)
    assert {(k, g) for k, g in want} >= {((r["device"], r["stream"]), r["durationNs"]) for r in res["rows"]}
    assert dev is not None


@pytest.mark.parametrize("prof", [NCCL, "nsys2026_2gpu_nccl_after"])
def test_nccl_breakdown(prof):
    path = need_real(prof)
    want = ref.nccl_by_collective(ref.connect(path))
    res = analyze("nccl_breakdown", path)
    got = {}
    for r in res["rows"]:
        c, t = got.get(r["collective"], (0, 0))
        got[r["collective"]] = (c + r["count"], t + r["totalNs"])
    assert got == want
    assert res["summary"]["totalNs"] == sum(t for _, t in want.values())
    assert sum(s["count"] for s in res["summary"]["byStream"]) == sum(c for c, _ in want.values())


def test_nccl_breakdown_none():
    res = analyze("nccl_breakdown", need_real(PLAIN))
    assert res["rows"] == [] and res["summary"]["totalNs"] == 0


@pytest.mark.parametrize("prof", THREE + ["nsys2025_t4_memcpy"])
def test_memory_transfers(prof):
    path = need_real(prof)
    want = ref.memcpy_groups(ref.connect(path))
    res = analyze("memory_transfers", path)
    assert len(res["rows"]) == len(want)
    assert res["summary"]["count"] == sum(v[0] for v in want.values())
    assert res["summary"]["bytes"] == sum(v[1] for v in want.values())
    assert res["summary"]["totalNs"] == sum(v[2] for v in want.values())
    pageable_h2d = sum(v[1] for k, v in want.items() if k[0] == 1 and k[1] == 0)
    assert res["summary"]["pageableH2dBytes"] == pageable_h2d


@pytest.mark.parametrize("prof", THREE)
def test_kernel_launch_overhead(prof):
    path = need_real(prof)
    pairs = ref.launch_pairs(ref.connect(path))
    res = analyze("kernel_launch_overhead", path, limit=0)
    s = res["summary"]
    assert s["launchedKernels"] == len(pairs)
    assert s["kernelsShorterThanLaunch"] == sum(1 for a, b, ks, ke in pairs if ke - ks < b - a)
    assert s["totalApiNs"] == sum(b - a for a, b, _, _ in pairs)
    assert sum(r["count"] for r in res["rows"]) == len(pairs)
    small = sum(1 for s_, e, *_ in ref.kernels(ref.connect(path)) if e - s_ < 10000)
    assert s["smallKernels"] == small


@pytest.mark.parametrize("prof", THREE + ["nsys2021_a100_cuda_callchains"])
def test_sync_cost(prof):
    path = need_real(prof)
    want = ref.sync_calls(ref.connect(path))
    res = analyze("sync_cost", path)
    got = {r["api"]: (r["count"], r["totalNs"]) for r in res["rows"]}
    assert got == want
    for r in res["rows"]:
        assert 0 <= r["gpuIdleNs"]


@pytest.mark.parametrize("prof", THREE)
def test_stream_classification(prof):
    path = need_real(prof)
    db = ref.connect(path)
    want = {}
    for s, e, d, st, n in ref.kernels(db):
        k = want.setdefault((d, st), [0, 0, 0])
        k[0] += 1
        k[1] += ref.is_nccl(n)
    for s, e, d, st in ref.gpu_ops(db):
        want.setdefault((d, st), [0, 0, 0])
    for tbl in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if tbl in ref.tables(db):
            for d, st, c in db.execute(f"SELECT deviceId, streamId, COUNT(*) FROM {tbl} GROUP BY 1,2"):
                want[(d, st)][2] += c
    res = analyze("stream_classification", path)
    got = {(r["device"], r["stream"]): r for r in res["rows"]}
    assert set(got) == set(want)
    for key, (k, c, cp) in want.items():
        r = got[key]
        assert (r["kernels"], r["commKernels"], r["copies"]) == (k, c, cp)
        expect = "copy" if k == 0 else "compute" if c == 0 else ("comm", "mixed") if c == k else "mixed"
        assert r["class"] in (expect if isinstance(expect, tuple) else (expect,))


@pytest.mark.parametrize("prof", THREE + ["nsys2026_h100_2gpu_1s"])
def test_nvtx_summary(prof):
    path = need_real(prof)
    ranges = ref.nvtx_ranges(ref.connect(path))
    want = {}
    for n, s, e in ranges:
        c, t = want.get(n, (0, 0))
        want[n] = (c + 1, t + e - s)
    res = analyze("nvtx_summary", path, limit=0)
    assert res["summary"]["ranges"] == len(ranges)
    got = {r["name"]: (r["count"], r["cpuNs"]) for r in res["rows"]}
    assert got == want
    assert 0 <= res["summary"]["kernelsInNvtxPct"] <= 100
    if not ranges:
        assert res["summary"]["kernelsInNvtx"] == 0


def test_nvtx_projection_nccl():
    """Projected GPU time of one NVTX name, recomputed with the attribution rule."""
    path = need_real(NVTX)
    db = ref.connect(path)
    name = "scaled dot product attention"
    rt = db.execute("SELECT r.start, r.end, r.globalTid, k.start, k.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                    "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId "
                    "AND k.globalPid = (r.globalTid & ~0xFFFFFF)").fetchall()
    nv = db.execute("SELECT start, end, globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND text = ?", (name,)).fetchall()
    proj = kern = 0
    for s, e, g in nv:
        ks = [(a, b) for rs, re_, rg, a, b in rt if rg == g and rs >= s and re_ <= e]
        if ks:
            proj += max(b for _, b in ks) - min(a for a, _ in ks)
            kern += sum(b - a for a, b in ks)
    res = analyze("nvtx_summary", path, limit=0)
    row = next(r for r in res["rows"] if r["name"] == name)
    assert row["gpuProjectedNs"] == proj and row["kernelNs"] == kern and proj > 0


@pytest.mark.parametrize("prof", [NVTX, "nsys2025_rtx3070_lm"])
def test_iterations_marker(prof):
    path = need_real(prof)
    marker = {"nsys2024_a100_lm_nvtx": "scaled dot product attention", "nsys2025_rtx3070_lm": "Forward"}[prof]
    db = ref.connect(path)
    rt = ref.launched_ops(db)
    want = []
    for g, in db.execute("SELECT DISTINCT globalTid FROM NVTX_EVENTS"):
        last = None
        for s, e in db.execute("SELECT start, end FROM NVTX_EVENTS WHERE globalTid = ? AND eventType = 59 "
                               "AND instr(lower(text), lower(?)) > 0 AND end > start ORDER BY start, end DESC",
                               (g, marker)):
            if last is not None and s < last:
                continue
            last = e
            ks = [(a, b) for rs, re_, rg, a, b in rt if rg == g and rs >= s and re_ <= e]
            if ks:
                want.append(max(b for _, b in ks) - min(a for a, _ in ks))
    res = analyze("iterations", path, marker=marker)
    assert res["summary"]["method"] == "nvtx"
    got = [r["durationNs"] for r in res["rows"]]
    assert sorted(got) == sorted(want)
    med = ref.percentile(sorted(want), 0.5)
    assert res["summary"]["outliers"] == sum(1 for d in want if d > 1.5 * med)


def test_iterations_gap_fallback():
    path = need_real(PLAIN)
    res = analyze("iterations", path, gapNs=5_000_000)
    assert res["summary"]["method"] == "gap"
    # independent: split each device's kernels where the gap to the running max end exceeds 5 ms
    by = {}
    for s, e, d, _st, _n in ref.kernels(ref.connect(path)):
        by.setdefault(d, []).append((s, e))
    n = 0
    for iv in by.values():
        iv.sort()
        n += 1
        end = iv[0][1]
        for s, e in iv[1:]:
            if s - end > 5_000_000:
                n += 1
            end = max(end, e)
    assert res["summary"]["count"] == n


def test_thread_utilization_sampling():
    path = need_real("nsys2025_rtx3070_lm")
    db = ref.connect(path)
    want = dict(db.execute("SELECT globalTid, COUNT(*) FROM COMPOSITE_EVENTS GROUP BY 1").fetchall())
    res = analyze("thread_utilization", path, limit=0)
    assert res["summary"]["source"] == "cpu_sampling"
    got = {(r["pid"], r["tid"]): r["samples"] for r in res["rows"] if r["samples"]}
    assert got == {(g >> 24 & 0xFFFFFF, g & 0xFFFFFF): c for g, c in want.items()}
    assert abs(sum(r["cpuPct"] for r in res["rows"]) - 100) < 0.5


def test_thread_utilization_osrt():
    """OS runtime time per thread: outermost calls starting in the window,
    clipped at its end, so osrtPct <= 100."""
    path = need_real(NVTX)
    res = analyze("thread_utilization", path, limit=0)
    assert res["summary"]["source"] == "osrt"
    w0, w1 = res["window"]["start"], res["window"]["end"]
    want = {}
    for g, s, e in ref.connect(path).execute("SELECT globalTid, start, end FROM OSRT_API WHERE nestingLevel = 0"):
        if w0 <= s < w1 and e >= s:
            k = (g >> 24 & 0xFFFFFF, g & 0xFFFFFF)
            want[k] = want.get(k, 0) + min(e, w1) - s
    got = {(r["pid"], r["tid"]): r["osrtNs"] for r in res["rows"] if "osrtNs" in r and r["osrtNs"]}
    assert got == {k: v for k, v in want.items() if v}
    assert all(0 <= r["osrtPct"] <= 100 for r in res["rows"])


@pytest.mark.parametrize("prof", THREE + ["nsys2021_a100_cuda_callchains"])
def test_thread_utilization_api(prof):
    path = need_real(prof)
    api = {}
    for s, e, g, _c, _n in ref.runtime(ref.connect(path)):
        api.setdefault((g >> 24 & 0xFFFFFF, g & 0xFFFFFF), []).append((s, max(s, e)))
    res = analyze("thread_utilization", path, limit=0)
    got = {(r["pid"], r["tid"]): r["cudaApiNs"] for r in res["rows"] if r["cudaApiNs"]}
    assert got == {k: ref.union_len(v) for k, v in api.items() if ref.union_len(v)}
    win = res["window"]["end"] - res["window"]["start"]
    for r in res["rows"]:
        assert abs(r["cudaApiPct"] - 100 * r["cudaApiNs"] / win) <= 0.006 and r["cudaApiPct"] <= 100


@pytest.mark.parametrize("prof", THREE)
def test_schema_inspect(prof):
    path = need_real(prof)
    db = ref.connect(path)
    names = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    res = analyze("schema_inspect", path)
    assert sorted(r["table"] for r in res["rows"]) == names
    for r in res["rows"]:
        cols = [c[1] for c in db.execute(f'PRAGMA table_info("{r["table"]}")')]
        assert [c["name"] for c in r["columns"]] == cols
        assert r["rowCount"] == db.execute(f'SELECT COUNT(*) FROM "{r["table"]}"').fetchone()[0]


def test_stage_overlap_nccl():
    path = need_real("nsys2026_h100_2gpu_1s")
    res = analyze("stage_overlap", path, stagePattern="aten::")
    for r in res["rows"]:
        assert 0 <= r["exposedCommNs"] <= r["commNs"]
        if r["commNs"]:
            assert abs(r["overlapPct"] - 100 * (r["commNs"] - r["exposedCommNs"]) / r["commNs"]) < 0.01
            assert r["minKernelOverlapPct"] <= r["maxKernelOverlapPct"]


def test_mfu():
    path = need_real(NVTX)
    it = analyze("iterations", path, marker="scaled dot product attention")
    res = analyze("mfu", path, marker="scaled dot product attention", modelFlops=1e12)
    # A100-SXM4-80GB: 312 TFLOP/s dense BF16
    assert res["summary"]["peakTflops"] == 312
    assert len(res["rows"]) == len(it["rows"])
    for r, i in zip(res["rows"], it["rows"]):
        tf = 1e12 / (i["durationNs"] / 1e9) / 1e12
        assert abs(r["achievedTflops"] - round(tf, 2)) < 0.01
        assert abs(r["mfuPct"] - round(100 * tf / 312, 2)) < 0.01
    res = analyze("mfu", path, params=1e9, tokens=1000, peakTflops=100)
    assert res["summary"]["modelFlops"] == 6e12 and res["summary"]["peakTflops"] == 100


def test_mfu_needs_flops():
    path = need_real(NVTX)
    r = subprocess.run([server_binary(), "analyze", "mfu", str(path), "--format", "json"], capture_output=True)
    assert r.returncode == 1 and b"modelFlops" in r.stderr


@pytest.mark.parametrize("prof,pattern", [(NCCL, "ncclGroupEnd"), ("nsys2026_h100_2gpu_1s", "aten::add")])
def test_stage_overlap_independent(prof, pattern):
    """Per (device, stage): comm and exposed comm over each range's projected GPU window."""
    path = need_real(prof)
    db = ref.connect(path)
    ks = ref.kernels(db)
    rt = db.execute("SELECT r.start, r.end, r.globalTid, k.start, k.end, k.deviceId FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                    "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId "
                    "AND k.globalPid = (r.globalTid & ~0xFFFFFF)").fetchall()
    for tbl in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        rt += db.execute(f"SELECT r.start, r.end, r.globalTid, k.start, k.end, k.deviceId FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                         f"JOIN {tbl} k ON k.correlationId = r.correlationId "
                         f"AND k.globalPid = (r.globalTid & ~0xFFFFFF)").fetchall()
    by_tid = {}
    for row in rt:
        by_tid.setdefault(row[2], []).append(row)
    cols = {r[1] for r in db.execute("PRAGMA table_info(NVTX_EVENTS)")}
    txt = "COALESCE(n.text, s.value)" if "textId" in cols else "n.text"
    nv = db.execute(f"SELECT {txt}, n.start, n.end, n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s "
                    f"ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.end >= n.start").fetchall()
    want = {}
    for name, s, e, g in nv:
        if not name or pattern.lower() not in name.lower():
            continue
        inside = sorted((r for r in by_tid.get(g, []) if r[0] >= s and r[1] <= e), key=lambda r: (r[0], r[3]))
        if not inside:
            continue
        gs, ge = min(r[3] for r in inside), max(r[4] for r in inside)
        dev = inside[0][5]
        clip = lambda iv: [(max(a, gs), min(b, ge)) for a, b in iv if b > gs and a < ge]
        comp = ref.union(clip([(a, b) for a, b, d, _st, n in ks if d == dev and not ref.is_nccl(n)]))
        comm = ref.union(clip([(a, b) for a, b, d, _st, n in ks if d == dev and ref.is_nccl(n)]))
        ov = ref.intersect_len(comp, comm)
        w = want.setdefault((dev, name), [0, 0, 0])
        w[0] += 1
        w[1] += ref.total(comm)
        w[2] += ref.total(comm) - ov
    res = analyze("stage_overlap", path, stagePattern=pattern)
    got = {(r["device"], r["stage"]): [r["ranges"], r["commNs"], r["exposedCommNs"]] for r in res["rows"]}
    assert got == want
    assert any(v[1] > 0 for v in want.values()) or prof != NCCL


def test_stream_of_graph_launches_is_compute(tmp_path):
    """Under graph-level tracing a stream may hold only CUDA graph launches: it is a
    compute stream in stream_classification, as its time is compute in overlap."""
    import shutil
    import sqlite3
    src = need_real("nsys2024_a100_cudagraph")
    path = tmp_path / "graphs_on_own_stream.sqlite"
    shutil.copyfile(src, path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET streamId = 9")
        n_graph, graph_ns = db.execute("SELECT COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchone()
    rows = {(r["device"], r["stream"]): r for r in analyze("stream_classification", path)["rows"]}
    assert (0, 9) in rows, rows
    assert rows[(0, 9)]["class"] == "compute"
    assert rows[(0, 9)]["busyNs"] == graph_ns
    assert ref.overlap(ref.connect(path))[0]["computeOnlyNs"] == \
        analyze("overlap", path)["summary"]["devices"][0]["computeOnlyNs"]
