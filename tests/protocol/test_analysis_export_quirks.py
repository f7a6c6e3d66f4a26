"""Numbers that were wrong on real exports, each reproduced on a real export
(skipped when ../shared/profiles is absent) or on a generated profile copied
and changed with SQL, and checked against an independent computation:
CUDA-backtrace API rows (`--cudabacktrace`), gap causes beyond
sync/memcpy/launch, the HtoD copy count of excessive_h2d, exports whose clock
is already UTC (`--ts-normalize`), exact GPU names and SM scaling in mfu, the
sample stddev of top_kernels, and sync_cost without a traced GPU."""
from __future__ import annotations

import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest

import analysis_ref as ref
from conftest import check_schema, generate, need_real
from nsys_rpc import RpcError
from test_analysis_real import analyze

RT = "CUPTI_ACTIVITY_KIND_RUNTIME"


@pytest.fixture(scope="module")
def tiny(generated_dir) -> Path:
    return generate(generated_dir / "tiny.sqlite", "--preset", "tiny")


def copy_of(src: Path, dst: Path) -> sqlite3.Connection:
    """A writable copy of src (real exports are read-only files)."""
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    return sqlite3.connect(dst)


def string_id(db, text: str) -> int:
    row = db.execute("SELECT id FROM StringIds WHERE value = ?", (text,)).fetchone()
    if row:
        return row[0]
    i = db.execute("SELECT MAX(id) + 1 FROM StringIds").fetchone()[0]
    db.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (i, text))
    return i


# ---- CUDA-backtrace rows ------------------------------------------------------

def test_backtrace_rows_real_export_counted_once():
    """nsys2021_a100_cuda_callchains: every call has a second, wider row of
    eventClass 67 with the same correlationId."""
    path = need_real("nsys2021_a100_cuda_callchains")
    db = ref.connect(path)
    assert db.execute(f"SELECT COUNT(*) FROM {RT} WHERE eventClass = 67").fetchone()[0] > 0
    syncs = db.execute(f"SELECT COUNT(*) FROM {RT} r JOIN StringIds s ON s.id = r.nameId "
                       "WHERE s.value LIKE 'cudaDeviceSynchronize%' AND eventClass <> 67").fetchone()[0]
    res = analyze("sync_cost", path)
    got = {r["api"]: r["count"] for r in res["rows"]}
    assert got["cudaDeviceSynchronize"] == syncs == 7
    launches = analyze("kernel_launch_overhead", path)["summary"]["launchedKernels"]
    assert launches == len(ref.launch_pairs(db)) == 6
    for g in analyze("gpu_idle_gaps", path, limit=0)["rows"]:
        assert all(v <= g["durationNs"] for v in g["cpuNs"].values()), g


def with_backtrace_rows(src: Path, dst: Path) -> tuple[int, int, int]:
    """Adds a backtrace row (eventClass 67, interval widened) for every call of
    src, and one backtrace-only cudaDeviceSynchronize after everything (no
    ordinary row: it is the only record of its call). Returns (gtid, start,
    end) of that call."""
    db = copy_of(src, dst)
    db.execute(f"INSERT INTO {RT} (start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
               f"SELECT start - 70, end + 90, 67, globalTid, correlationId, nameId, 0 FROM {RT}")
    gtid, corr, end = db.execute(f"SELECT globalTid, MAX(correlationId) + 1, MAX(end) FROM {RT}").fetchone()
    s, e = end + 1000, end + 5000
    db.execute(f"INSERT INTO {RT} (start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
               "VALUES (?, ?, 67, ?, ?, ?, 0)", (s, e, gtid, corr, string_id(db, "cudaDeviceSynchronize")))
    db.commit()
    db.close()
    return gtid, s, e


def test_backtrace_rows_generated(tiny, tmp_path):
    fx = tmp_path / "backtrace.sqlite"
    gtid, s, e = with_backtrace_rows(tiny, fx)
    base = {r["api"]: (r["count"], r["totalNs"]) for r in analyze("sync_cost", tiny)["rows"]}
    got = {r["api"]: (r["count"], r["totalNs"]) for r in analyze("sync_cost", fx)["rows"]}
    n, t = base["cudaDeviceSynchronize"]
    base["cudaDeviceSynchronize"] = (n + 1, t + e - s)  # the backtrace-only call is kept
    assert got == base
    assert (analyze("kernel_launch_overhead", fx)["summary"]["launchedKernels"]
            == analyze("kernel_launch_overhead", tiny)["summary"]["launchedKernels"])
    # per-thread CUDA API time: the ordinary calls once, plus the kept one
    base = {(r["pid"], r["tid"]): r["cudaApiNs"] for r in analyze("thread_utilization", tiny, limit=0)["rows"]}
    got = {(r["pid"], r["tid"]): r["cudaApiNs"] for r in analyze("thread_utilization", fx, limit=0)["rows"]}
    base[(gtid >> 24 & 0xFFFFFF, gtid & 0xFFFFFF)] += e - s
    assert got == base
    # the index: one call per (thread, correlationId)
    info = analyze("gpu_idle_gaps", fx, limit=0)
    for g in info["rows"]:
        assert all(v <= g["durationNs"] for v in g["cpuNs"].values()), g


# ---- gap causes ----------------------------------------------------------------

ALLOC = ("cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuMemCreate",
         "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemAddressReserve", "cuMemAddressFree")


def api_class(name: str) -> str:
    """The documented API classes (docs/analyses.md), written out again."""
    n = ref.api_name(name)
    if n.startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")):
        return "launch"
    if "Synchronize" in n or n.startswith(("cudaStreamWaitEvent", "cuStreamWaitEvent")):
        return "sync"
    if n.startswith(("cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset")):
        return "memcpy"
    if n.startswith(("cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad", "cuLink")):
        return "moduleLoad"
    if n.startswith(("cudaHostRegister", "cudaHostUnregister", "cuMemHostRegister", "cuMemHostUnregister")):
        return "hostRegister"
    if n.startswith(ALLOC):
        return "alloc"
    return "otherApi"


CAUSE = {"sync": "sync", "memcpy": "memcpy", "launch": "launch", "moduleLoad": "module_load", "alloc": "alloc",
         "hostRegister": "host_register"}


def check_gap_causes(path: Path) -> list[str]:
    """Every device gap's cpuNs and cause against the calls of the export's
    (single) process, recomputed here; returns the causes."""
    calls = ref.runtime(ref.connect(path))
    assert len({g >> 24 for _, _, g, _, _ in calls}) == 1, "one process: every thread is on the device"
    res = analyze("gpu_idle_gaps", path, scope="device", limit=0)
    causes = []
    for gap in res["rows"]:
        a, b = gap["start"], gap["end"]
        by = {}
        for s, e, _g, _c, n in calls:
            if e > a and s < b:
                by.setdefault(api_class(n), []).append((max(s, a), min(e, b)))
        want = {k: ref.union_len(by.get(k, [])) for k in gap["cpuNs"]}
        assert gap["cpuNs"] == want, gap
        best = max(CAUSE, key=lambda k: (want[k], -list(CAUSE).index(k)))
        cause = CAUSE[best] if want[best] * 4 >= b - a else "cpu_stall"
        assert gap["cause"] == cause, gap
        causes.append(cause)
    return causes


def test_gap_causes_real_alloc():
    """nsys2022_windows_10streams: cudaHostAlloc fills two gaps (they were CPU stalls)."""
    causes = check_gap_causes(need_real("nsys2022_windows_10streams"))
    assert causes.count("alloc") >= 1


@pytest.mark.parametrize("api,cause", [("cuModuleLoadDataEx", "module_load"), ("cuLibraryLoadData", "module_load"),
                                       ("cudaFree_v3020", "alloc"), ("cudaHostRegister_v4000", "host_register")])
def test_gap_causes_generated(tiny, tmp_path, api, cause):
    """The longest device gap of the tiny profile, filled by one call of `api`
    on the launching thread: the gap is that cause, not a CPU stall."""
    gap = analyze("gpu_idle_gaps", tiny, scope="device", limit=1)["rows"][0]
    fx = tmp_path / "gap.sqlite"
    db = copy_of(tiny, fx)
    gtid, corr = db.execute(f"SELECT globalTid, MAX(correlationId) + 1 FROM {RT}").fetchone()
    db.execute(f"INSERT INTO {RT} (start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
               "VALUES (?, ?, 1, ?, ?, ?, 0)", (gap["start"] - 10, gap["end"] + 10, gtid, corr, string_id(db, api)))
    db.commit()
    db.close()
    assert cause in check_gap_causes(fx)
    got = next(g for g in analyze("gpu_idle_gaps", fx, scope="device", limit=0)["rows"] if g["start"] == gap["start"])
    assert got["cause"] == cause


# ---- HtoD copies ---------------------------------------------------------------

def test_excessive_h2d_counts_htod_copies():
    """nsys2026_h100_2gpu_1s: 450 of its 904 copies are HtoD."""
    path = need_real("nsys2026_h100_2gpu_1s")
    db = ref.connect(path)
    n, by = db.execute("SELECT COUNT(*), SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (1, 11)").fetchone()
    res = analyze("memory_transfers", path)
    s = res["summary"]
    assert (s["h2dCount"], s["h2dBytes"]) == (n, by)
    assert s["count"] > n
    w0, w1 = res["window"]["start"], res["window"]["end"]
    per_dev = {}
    for d, a, b in db.execute("SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (1, 11)"):
        if w0 <= a < w1:
            per_dev.setdefault(d, []).append((a, min(b, w1)))
    assert s["h2dBusiestDeviceNs"] == max(ref.union_len(v) for v in per_dev.values())
    assert s["h2dPctOfWindow"] <= 100
    import json
    import os
    import subprocess

    from nsys_rpc import server_binary
    r = subprocess.run([server_binary(), "report", str(path), "--format", "json"], capture_output=True, timeout=300,
                       env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    assert r.returncode == 0, r.stderr.decode()
    f = next(f for f in json.loads(r.stdout)["findings"] if f["id"] == "excessive_h2d")
    assert f"in {n} host-to-device copies" in f["title"]
    assert f["evidence"]["h2dCount"] == n


# ---- UTC clocks ----------------------------------------------------------------

def normalised_copy(src: Path, dst: Path, keep_key: bool) -> int:
    """What `nsys export --ts-normalize=true` writes: every event time plus
    utcEpochNs, and EXPORT_PARAM_TIME_NORMALIZE=true (or no such key)."""
    db = copy_of(src, dst)
    utc = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        cols = {r[1] for r in db.execute(f'PRAGMA table_info("{t}")')}
        sets = [f'"{c}" = "{c}" + {utc}' for c in ("start", "end", "timestamp") if c in cols]
        if sets:
            db.execute(f'UPDATE "{t}" SET {", ".join(sets)}')
    if keep_key:
        db.execute("UPDATE META_DATA_EXPORT SET value = 'true' WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE'")
    else:
        db.execute("DELETE FROM META_DATA_EXPORT WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE'")
    db.commit()
    db.close()
    return utc


@pytest.mark.parametrize("keep_key", [True, False])
def test_openset_utc_clock_not_shifted_twice(server, tmp_path, keep_key):
    """A rank exported with --ts-normalize is aligned like its plain export:
    same stragglers, same lateness, same set window."""
    a, b = need_real("nsys2026_2gpu_nccl_before"), need_real("nsys2026_2gpu_nccl_after")
    nb = tmp_path / f"after_utc_{keep_key}.sqlite"
    utc_b = normalised_copy(b, nb, keep_key)
    plain = server.request("profile/openSet", {"paths": [str(a), str(b)]})
    norm = server.request("profile/openSet", {"paths": [str(a), str(nb)]})
    check_schema("profile/openSet", "result", norm)
    m = min(plain["files"][0]["utcEpochNs"], utc_b)
    assert [f["utcClock"] for f in plain["files"]] == [False, False]
    assert [f["utcClock"] for f in norm["files"]] == [False, True]
    # exact to the nanosecond (offsets near -1.8e18 included); the bug this
    # catches is an offset of utcEpochNs - m, 1.8e18 away
    close = lambda x, y: x == y  # noqa: E731
    assert close(norm["files"][1]["offsetNs"], -m)
    assert norm["aligned"]
    assert all(close(norm["window"][k], plain["window"][k]) for k in ("start", "end"))
    assert norm["stragglers"] == plain["stragglers"]
    for x, y in zip(norm["overlap"], plain["overlap"], strict=True):
        assert close(x["start"], y["start"]) and close(x["end"], y["end"])


# ---- GPU names in mfu ------------------------------------------------------------

def gpu_renamed(src: Path, dst: Path, name: str, sms: int | None) -> Path:
    db = copy_of(src, dst)
    db.execute("UPDATE TARGET_INFO_GPU SET name = ?, smCount = ?", (name, sms))
    db.commit()
    db.close()
    return dst


@pytest.mark.parametrize("name,sms,matched,peak,source", [
    ("NVIDIA GeForce RTX 4070 SUPER", 56, "RTX 4070 SUPER", 71, "table"),
    ("NVIDIA GeForce RTX 4070", 46, "RTX 4070", 58.3, "table"),
    ("NVIDIA A30 MIG 2g.12gb", 28, "A30", 165 * 28 / 56, "table_scaled_by_sm"),
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 16, "H100 SXM", 989 * 16 / 132, "table_scaled_by_sm"),
    ("NVIDIA H100 80GB HBM3", 132, "H100 SXM", 989, "table"),
])
def test_mfu_gpu_match(tiny, tmp_path, name, sms, matched, peak, source):
    fx = gpu_renamed(tiny, tmp_path / "gpu.sqlite", name, sms)
    s = analyze("mfu", fx, modelFlops=1e12)["summary"]
    assert s["specMatched"] == matched and s["gpuKnown"]
    assert abs(s["peakTflops"] - peak) < 1e-9
    assert s["peakSource"] == source
    assert s["smCount"] == sms
    assert s["mig"] == ("MIG" in name)


@pytest.mark.parametrize("name,sms", [("NVIDIA GeForce RTX 4060 Laptop GPU", 24), ("NVIDIA A30 MIG 1g.6gb", None),
                                      ("NVIDIA GeForce RTX 4070 Ti SUPER D", 66)])
def test_mfu_unknown_gpu(tiny, tmp_path, name, sms):
    """An unknown part (or a MIG slice of unknown size) has no peak: an error
    without peakTflops, peakSource params with it."""
    import os
    import subprocess

    from nsys_rpc import server_binary
    fx = gpu_renamed(tiny, tmp_path / "gpu.sqlite", name, sms)
    r = subprocess.run([server_binary(), "analyze", "mfu", str(fx), "--param", "modelFlops=1e12", "--format", "json"],
                       capture_output=True, timeout=120, env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    assert r.returncode != 0 and b"GPU peak unknown" in r.stderr
    s = analyze("mfu", fx, modelFlops=1e12, peakTflops=100)["summary"]
    assert s["peakSource"] == "params" and s["peakTflops"] == 100
    assert s["gpuKnown"] == ("MIG" in name)


def test_mfu_real_laptop_gpu():
    path = need_real("nsys2026_windows_ada")
    s = analyze("mfu", path, modelFlops=1e12)["summary"]
    assert s["specMatched"] == "RTX 5000 Ada Laptop" and s["peakSource"] == "table" and s["smCount"] == 76


# ---- top_kernels stddev, sync_cost without a GPU -----------------------------------

def test_top_kernels_sample_stddev():
    """stddevNs is the sample standard deviation, as nsys stats prints it."""
    path = need_real("nsys2023_rtx3060_23k")
    by = {}
    for s, e, _d, _st, n in ref.kernels(ref.connect(path)):
        by.setdefault(n, []).append(e - s)
    res = analyze("top_kernels", path, limit=0)
    assert any(r["count"] > 2 for r in res["rows"])
    for r in res["rows"]:
        d = by[r["name"]]
        want = statistics.stdev(d) if len(d) > 1 else 0
        assert abs(r["stddevNs"] - want) <= 0.5 + 1e-9 * want, r["name"]


def test_sync_cost_without_gpu_is_null(tiny, tmp_path):
    fx = tmp_path / "nogpu.sqlite"
    db = copy_of(tiny, fx)
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        db.execute(f"DELETE FROM {t}")
    db.commit()
    db.close()
    res = analyze("sync_cost", fx)
    assert res["rows"] and all(r["gpuIdleNs"] is None for r in res["rows"])
    assert res["summary"]["gpuIdleDuringSyncNs"] is None
    traced = analyze("sync_cost", tiny)
    assert all(isinstance(r["gpuIdleNs"], int) for r in traced["rows"])
    s = traced["summary"]
    assert s["wallSyncNs"] <= s["totalSyncNs"] and s["pctOfWindow"] <= 100
