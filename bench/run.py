#!/usr/bin/env python3
"""Index benchmark of issue 3: one command, a table plus JSON, every figure a
ratio or percentile measured in this run.

    python3 bench/run.py [--scale 100k|1m|10m] [--windows N] [--out FILE] [--profile EXPORT]

Needs build/nsys-ai and build/bench/nsys-ai-bench (meson setup build &&
ninja -C build). Generated profiles (tools/gen_profile.py) and caches go to
$NSYS_AI_BENCH_DIR (default: a private directory under /tmp). Each figure runs
in its own process so RSS and caches are measured cleanly:

  cold/scan    cold index build (kernels, memcpy, memset, runtime join, NVTX,
               summaries) / a bare C scan of start, end, streamId, deviceId of
               the kernel table (best of 5 alternating rounds each, file in the page
               cache; the per-round median beside it); with NSYS_AI_INDEX_MMAP=1
               (the build's opt-in mmap reads) also over the scan with PRAGMA mmap_size
  warm/cold    reopen from the index cache / cold build
  range p99    timeline/range, 2000 px, --windows random windows at every zoom
               level (window = span / 2^k down to 20 us), GPU stream tracks;
               server side = handler + JSON serialisation, wall and thread-CPU;
               format "objects" (the target) and, same windows, "columns"; and
               the index's share alone (same grid, callbacks that do nothing)
  tree         nvtx/tree over the whole profile (handler + serialisation)
  bytes/op     index bytes per GPU op (ops arrays + summaries) and per NVTX
               range (arrays + depth rows + projection + summaries); RSS delta
  cheap req    latency of timeline/tracks on a small open profile while
               `nsys-ai serve` cold-builds the big profile's index
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

TARGETS = {  # figure -> (target, lower is better)
    "cold_over_scan": 2.0,
    "warm_over_cold": 0.05,
    "range_p99_ms": 5.0,
    "tree_ms": 300.0,
    "bytes_per_op": 48.0,
    "bytes_per_nvtx": 64.0,
    "cheap_request_max_ms": 50.0,
}


def run_json(args: list[str], env: dict | None = None, timeout: int = 3600) -> dict:
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def ensure_profile(data: Path, preset: str) -> Path:
    path = data / f"{preset}.sqlite"
    if not path.exists():
        print(f"generating {path} (tools/gen_profile.py --preset {preset}) ...", file=sys.stderr)
        subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(path), "--preset", preset],
                       check=True)
    return path


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return -1.0


def cheap_request_during_build(nsys_ai: str, big: Path, small: Path, cache: Path) -> dict:
    from nsys_rpc import Server

    os.environ["NSYS_AI_BIN"] = nsys_ai
    lat: list[float] = []
    with Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_NO_INDEX_CACHE": "1"}) as s:
        small_id = s.request("profile/open", {"path": str(small)}, timeout=600)["profileId"]
        s.request("timeline/tracks", {"profileId": small_id})
        t0 = time.perf_counter()
        rid = s.start("profile/open", {"path": str(big)})
        # cheap requests every 20 ms until the open (and its index build) replies
        while rid not in s.replies and time.perf_counter() - t0 < 3600:
            q0 = time.perf_counter()
            s.request("timeline/tracks", {"profileId": small_id}, timeout=600)
            lat.append((time.perf_counter() - q0) * 1e3)
            time.sleep(0.02)
        reply = s.wait_reply(rid, timeout=3600)
        if "error" in reply:
            raise SystemExit(f"profile/open failed: {reply['error']}")
        build_s = time.perf_counter() - t0
    lat.sort()
    pick = lambda q: lat[min(len(lat) - 1, int(q * (len(lat) - 1) + 0.5))] if lat else 0.0
    return {"requests": len(lat), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": lat[-1] if lat else 0.0,
            "open_seconds": build_s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="1m", choices=["100k", "1m", "10m"])
    ap.add_argument("--windows", type=int, default=None, help="random windows per zoom level (default 1000, 200 at 10m)")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    ap.add_argument("--skip-concurrency", action="store_true")
    ap.add_argument("--cold-rounds", type=int, default=5, help="alternating scan / cold-build rounds (default 5)")
    ap.add_argument("--profile", type=Path, default=None,
                    help="an existing export of that scale to measure instead of generating one (read only)")
    a = ap.parse_args()
    nsys_ai = str(REPO / "build" / "nsys-ai")
    bench = str(REPO / "build" / "bench" / "nsys-ai-bench")
    for b in (nsys_ai, bench):
        if not Path(b).exists():
            raise SystemExit(f"{b} missing: meson setup build && ninja -C build")
    data = Path(os.environ.get("NSYS_AI_BENCH_DIR", Path(tempfile.gettempdir()) / f"nsys-ai-bench-{os.getuid()}"))
    data.mkdir(parents=True, exist_ok=True)
    big = a.profile.resolve() if a.profile else ensure_profile(data, a.scale)
    if not big.exists():
        raise SystemExit(f"{big}: no such profile")
    small = ensure_profile(data, "small")
    windows = a.windows or (200 if a.scale == "10m" else 1000)
    load0 = loadavg()
    res: dict = {"scale": a.scale, "profile": str(big), "windowsPerLevel": windows}

    # scans and cold builds alternate, so a burst of load on a shared machine hits both sides; the
    # figure is best of each (min / min), with the per-round median of cold / scan beside it
    scan_runs, scan_mmap_runs, colds, warms = [], [], [], []
    mmap_build = os.environ.get("NSYS_AI_INDEX_MMAP") == "1"  # the build's opt-in mmap I/O
    cache = data / "cache"
    for i in range(a.cold_rounds):
        scan_runs.append(run_json([bench, "scan", str(big)]))
        if mmap_build:  # the same scan with the build's opt-in I/O setting: the fair baseline for it
            scan_mmap_runs.append(run_json([bench, "scan", str(big), "mmap"]))
        for f in cache.glob("index-*"):
            f.unlink()
        colds.append(run_json([bench, "cold", str(big)], env={"NSYS_AI_CACHE_DIR": str(cache)}))
    scans = [r["seconds"] for r in scan_runs]
    for _ in range(3):
        warms.append(run_json([bench, "warm", str(big)], env={"NSYS_AI_CACHE_DIR": str(cache)}))
    cold = min(colds, key=lambda c: c["seconds"])
    warm = min(w["seconds"] for w in warms)
    res["scan_seconds"] = min(scans)
    res["cold_seconds"] = cold["seconds"]
    res["warm_seconds"] = warm
    res["cold_over_scan"] = cold["seconds"] / min(scans)
    res["cold_rounds"] = a.cold_rounds
    res["cold_over_scan_round_median"] = statistics.median(c["seconds"] / s["seconds"] for c, s in zip(colds, scan_runs))
    if mmap_build:
        res["scan_mmap_seconds"] = min(r["seconds"] for r in scan_mmap_runs)
        res["cold_over_scan_mmap"] = cold["seconds"] / res["scan_mmap_seconds"]
        res["scan_mmap_cpu_seconds"] = min(r["cpuSeconds"] for r in scan_mmap_runs)
    res["scan_cpu_seconds"] = min(r["cpuSeconds"] for r in scan_runs)
    res["cold_cpu_seconds"] = cold["cpuSeconds"]
    res["cold_cpu_over_scan_cpu"] = cold["cpuSeconds"] / res["scan_cpu_seconds"]
    res["scan_sys_seconds"] = min(r.get("sysSeconds", 0.0) for r in scan_runs)
    res["cold_sys_seconds"] = cold.get("sysSeconds", 0.0)
    res["cold_minor_faults"] = cold.get("minorFaults", 0)
    # the build thread's CPU (reads runtime + NVTX, joins, derives) is the critical path when the GPU
    # reader thread has a core of its own: a load-robust estimate of cold/scan on an idle machine
    res["cold_thread_cpu_seconds"] = min(c.get("threadCpuSeconds", c["cpuSeconds"]) for c in colds)
    res["cold_thread_cpu_over_scan_cpu"] = res["cold_thread_cpu_seconds"] / res["scan_cpu_seconds"]
    res["warm_over_cold"] = warm / cold["seconds"]
    res["cache_write_seconds"] = cold["cacheWriteSeconds"]
    res["counts"] = {k: cold[k] for k in ("ops", "api", "nvtx", "tracks", "threads", "strings")}
    res["bytes_per_op"] = cold["bytesPerOp"]
    res["bytes_per_nvtx"] = cold["bytesPerNvtx"]
    res["bytes_per_api_call"] = cold["bytesPerApi"]
    res["rss_delta_bytes"] = cold["rssDeltaBytes"]
    res["rss_bytes_per_op_all_included"] = cold["rssBytesPerOp"]

    rg = run_json([bench, "range-gpu", str(big), str(windows), "1"], env={"NSYS_AI_CACHE_DIR": str(cache)})
    res["range_gpu_tracks"] = rg
    res["range_p99_ms"] = rg["p99ms"]
    res["range_cpu_p99_ms"] = rg["cpuP99ms"]
    rc = run_json([bench, "range-gpu", str(big), str(windows), "1", "columns"], env={"NSYS_AI_CACHE_DIR": str(cache)})
    res["range_gpu_tracks_columns"] = rc
    res["range_columns_p99_ms"] = rc["p99ms"]
    res["range_columns_cpu_p99_ms"] = rc["cpuP99ms"]
    ra = run_json([bench, "range", str(big), str(max(10, windows // 10)), "2"], env={"NSYS_AI_CACHE_DIR": str(cache)})
    res["range_all_tracks"] = ra
    tr = run_json([bench, "tree", str(big)], env={"NSYS_AI_CACHE_DIR": str(cache)})
    res["tree"] = tr
    res["tree_ms"] = tr["seconds"] * 1e3
    if not a.skip_concurrency:
        cc = cheap_request_during_build(nsys_ai, big, small, data / "cache-serve")
        res["cheap_request_during_build"] = cc
        res["cheap_request_max_ms"] = cc["max_ms"]
    res["loadavg"] = {"start": load0, "end": loadavg(), "cpus": os.cpu_count()}

    rows = [
        ("cold build / bare kernel scan", f"{res['cold_over_scan']:.2f}x",
         f"({res['cold_seconds']:.2f} s / {res['scan_seconds']:.2f} s)", "cold_over_scan"),
        ("  median over rounds of cold / scan", f"{res['cold_over_scan_round_median']:.2f}x",
         f"({res['cold_rounds']} alternating rounds)", None),
    ] + ([
        ("  same / scan with mmap I/O (NSYS_AI_INDEX_MMAP=1)", f"{res['cold_over_scan_mmap']:.2f}x",
         f"({res['scan_mmap_seconds']:.2f} s)", None),
    ] if mmap_build else []) + [
        ("  same, CPU seconds (all threads) / scan CPU", f"{res['cold_cpu_over_scan_cpu']:.2f}x",
         f"({res['cold_cpu_seconds']:.2f} s / {res['scan_cpu_seconds']:.2f} s)", None),
        ("  build thread CPU (critical path) / scan CPU", f"{res['cold_thread_cpu_over_scan_cpu']:.2f}x",
         f"({res['cold_thread_cpu_seconds']:.2f} s; idle-machine estimate of the ratio)", None),
        ("  of which system CPU (page faults, reads)", f"{res['cold_sys_seconds']:.2f} s",
         f"({res['cold_minor_faults']} minor faults; scan {res['scan_sys_seconds']:.2f} s)", None),
        ("warm open (cache) / cold", f"{res['warm_over_cold'] * 100:.1f}%", f"({res['warm_seconds'] * 1e3:.0f} ms)",
         "warm_over_cold"),
        (f"timeline/range p99, 2000 px, {rg['tracks']} GPU tracks", f"{rg['p99ms']:.2f} ms",
         f"(CPU p99 {rg['cpuP99ms']:.2f} ms, p50 {rg['p50ms']:.2f} ms, {rg['requests']} requests)", "range_p99_ms"),
        ("  of which the index (summaries, no JSON), CPU", f"{rg['indexCpuP99ms']:.2f} ms",
         f"(p50 {rg['indexCpuP50ms']:.3f} ms; the rest is writing the JSON)", None),
        ("  same windows, format \"columns\" (VS Code client)", f"{rc['p99ms']:.2f} ms",
         f"(CPU p99 {rc['cpuP99ms']:.2f} ms, p50 {rc['p50ms']:.2f} ms; {rc['avgBytes'] / 1e3:.0f} kB avg vs "
         f"{rg['avgBytes'] / 1e3:.0f} kB)", None),
        (f"timeline/range p99, all {ra['tracks']} tracks", f"{ra['p99ms']:.2f} ms", f"(CPU p99 {ra['cpuP99ms']:.2f} ms)",
         None),
        ("nvtx/tree, whole profile", f"{res['tree_ms']:.0f} ms",
         f"(compute {tr['computeSeconds'] * 1e3:.0f} ms + JSON of {tr['bytes'] / 1e6:.0f} MB; aggregate "
         f"{tr['aggregateSeconds'] * 1e3:.0f} ms, {tr['aggregateBytes'] / 1e6:.1f} MB; {tr['nvtx']} ranges)", "tree_ms"),
        ("index bytes per GPU op", f"{res['bytes_per_op']:.1f} B", "", "bytes_per_op"),
        ("index bytes per NVTX range", f"{res['bytes_per_nvtx']:.1f} B", "", "bytes_per_nvtx"),
        ("index bytes per CUDA API call", f"{res['bytes_per_api_call']:.1f} B", "(no target)", None),
        ("RSS delta per GPU op (everything)", f"{res['rss_bytes_per_op_all_included']:.1f} B", "(no target)", None),
    ]
    if "cheap_request_during_build" in res:
        cc = res["cheap_request_during_build"]
        rows.append(("cheap request while the index builds", f"{cc['max_ms']:.1f} ms max",
                     f"(p50 {cc['p50_ms']:.1f} ms, {cc['requests']} requests)", "cheap_request_max_ms"))
    verdict = {}
    print(f"\nnsys-ai index bench, {a.scale} ({res['counts']['ops']} GPU ops, {res['counts']['api']} API calls, "
          f"{res['counts']['nvtx']} NVTX ranges), load average {load0:.1f} on {os.cpu_count()} CPUs")
    print(f"{'figure':<48} {'value':>14}  {'target':>8}  ok   detail")
    for label, val, detail, key in rows:
        tgt = ""
        ok = ""
        if key:
            t = TARGETS[key]
            tgt = f"{t * 100:.0f}%" if key == "warm_over_cold" else f"{t:g}"
            passed = res[key] <= t
            verdict[key] = passed
            ok = "yes" if passed else "NO"
        print(f"{label:<48} {val:>14}  {tgt:>8}  {ok:<4} {detail}")
    res["targets"] = TARGETS
    res["met"] = verdict
    out = json.dumps(res, indent=1)
    print(out)
    if a.out:
        a.out.write_text(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
