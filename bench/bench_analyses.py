#!/usr/bin/env python3
"""Times every analysis, report/generate and profile/diff on generated profiles
of each stress shape (tools/gen_profile.py --shape), and prints ONE table:
rows are methods, columns are shapes, cells are milliseconds as seen by the
client through `nsys-ai serve` (JSON encoding and transport included).

Each profile is opened once after its index cache was built (a cold build is
not what this measures: bench/run.py does), then every method is called in
turn; the first call after open is timed (lazy per-profile caches included),
then `--repeat - 1` more calls, and the cell is the first call's time unless
`--best` is given. profile/diff compares the shape's profile with the same
shape generated with another seed (or, with --diff-self, with itself).

usage: bench/bench_analyses.py [--scale 1m|10m|N] [--shapes default,stages,...]
                               [--dir /tmp/nsys-ai-bench] [--repeat N] [--best] [--cpu]
                               [--before OTHER_BINARY]   (side by side: OTHER's column, then --bin's)
                               [--explain N] [--first-open]
       bench/bench_analyses.py --profile FILE.sqlite   (one existing profile)
Target (issue 16): each method <= 300 ms at 10M kernels, report <= 1 s.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
sys.path.insert(0, str(REPO / "tools"))

from nsys_rpc import Server  # noqa: E402
import gen_profile  # noqa: E402

SCALES = {"1m": 1_000_000, "10m": 10_000_000}
MFU_PARAMS = {"modelFlops": 1e15, "peakTflops": 989}


def scale_kernels(s: str) -> int:
    if s in SCALES:
        return SCALES[s]
    return int(s.replace("k", "000").replace("_", ""))


def profile_path(d: Path, shape: str, kernels: int, seed: int) -> Path:
    return d / f"{shape}-{kernels}-s{seed}.sqlite"


def ensure_profile(d: Path, shape: str, kernels: int, seed: int) -> Path:
    p = profile_path(d, shape, kernels, seed)
    if p.exists():
        return p
    args = [sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(p), "--preset", "1m",
            "--kernels", str(kernels), "--seed", str(seed)]
    if shape != "default":
        args += ["--shape", shape]
    t = time.perf_counter()
    subprocess.run(args, check=True)
    print(f"  generated {p.name} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return p


def warm_index(binary: str, p: Path) -> None:
    """Builds the index cache (one-shot CLI run waits for the save), then runs
    one analysis so that a binary that saves the analysis memo beside it
    (memo-*.bin) has saved it: "cached open" is then index + memo."""
    subprocess.run([binary, "info", str(p)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([binary, "analyze", "nccl_breakdown", str(p), "--format", "json"], check=True,
                   stdout=subprocess.DEVNULL)


EXPLAIN = 0  # --explain N: kernel/explain of the N largest kernel names, after the report


def explain_rows(srv: Server, pid: str, out: dict[str, float]) -> None:
    """kernel/explain of the EXPLAIN largest names (each a first click on that
    name; the context is built by the report before): p50, p90, max."""
    rows = srv.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": EXPLAIN}},
                       timeout=3600)["rows"]
    ts = sorted(time_call(srv, "kernel/explain", {"profileId": pid, "name": r["name"]})[0] for r in rows)
    if ts:
        out[f"kernel/explain p50 ({len(ts)} names)"] = ts[len(ts) // 2]
        out["kernel/explain p90"] = ts[min(len(ts) - 1, (len(ts) * 9 + 9) // 10 - 1)]
        out["kernel/explain max"] = ts[-1]


def server_cpu_ms(srv: Server) -> float:
    """CPU time (user + system, every thread) the server process has used."""
    f = Path(f"/proc/{srv.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")


CACHE_DIR = os.environ.get("NSYS_AI_CACHE_DIR")  # the caller's cache directory (cached opens)
CPU = False  # --cpu: cells are the server's CPU ms, not the client's wall clock


def time_call(srv: Server, method: str, params: dict) -> tuple[float, object]:
    c = server_cpu_ms(srv) if CPU else 0.0
    t = time.perf_counter()
    r = srv.request(method, params, timeout=3600)
    if CPU:
        return server_cpu_ms(srv) - c, r
    return (time.perf_counter() - t) * 1000, r


def bench_shape(binary: str, p: Path, p2: Path | None, repeat: int, best: bool) -> dict[str, float]:
    os.environ["NSYS_AI_BIN"] = binary
    srv = Server()
    out: dict[str, float] = {}
    try:
        t_open, res = time_call(srv, "profile/open", {"path": str(p)})
        out["profile/open" if "nsys-ai-bench-cache-" in os.environ.get("NSYS_AI_CACHE_DIR", "")
            else "profile/open (cached)"] = t_open
        pid = res["profileId"]
        names = [a["name"] for a in srv.request("analysis/list", {})["analyses"]]
        calls = [(n, "analysis/run", {"profileId": pid, "name": n,
                                      "params": MFU_PARAMS if n == "mfu" else {}}) for n in names]
        calls.append(("report/generate", "report/generate", {"profileId": pid}))
        if p2 is not None:
            pid2 = srv.request("profile/open", {"path": str(p2)}, timeout=3600)["profileId"]
            calls.append(("profile/diff", "profile/diff", {"base": pid, "compare": pid2}))
        for label, method, params in calls:
            times = [time_call(srv, method, params)[0] for _ in range(max(1, repeat))]
            out[label] = min(times) if best else times[0]
        if EXPLAIN:
            explain_rows(srv, pid, out)
    finally:
        srv.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="1m", help="kernels: 1m, 10m or a number (e.g. 200k)")
    ap.add_argument("--shapes", default="default," + ",".join(gen_profile.SHAPES),
                    help="comma list: default and/or tools/gen_profile.py shapes")
    ap.add_argument("--dir", default="/tmp/nsys-ai-bench", help="where generated profiles are kept")
    ap.add_argument("--profile", help="bench one existing profile instead (no diff)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--best", action="store_true", help="cells are the best of --repeat, not the first call")
    ap.add_argument("--diff-self", action="store_true",
                    help="profile/diff compares each profile with itself (no second seed to generate: 10m)")
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    ap.add_argument("--before", help="another binary (e.g. main's, built in another dir) timed in the same run, "
                                     "each shape with it first, then with --bin: columns 'SHAPE before', 'SHAPE'")
    ap.add_argument("--cpu", action="store_true",
                    help="cells are the server's CPU ms (user + system, /proc; 10 ms ticks): steadier than "
                         "wall clock on a loaded machine")
    ap.add_argument("--explain", type=int, default=0, metavar="N",
                    help="also kernel/explain of the N largest kernel names (first click on each), p50/p90/max")
    ap.add_argument("--first-open", action="store_true",
                    help="first-ever open: each binary runs with an empty cache directory of its own (the "
                         "index and the analysis memo are built, not read); default: cached open")
    args = ap.parse_args()
    global CPU, EXPLAIN
    CPU = args.cpu
    EXPLAIN = args.explain
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, float]] = {}
    bins = ([(" before", args.before)] if args.before else []) + [("", args.bin)]
    if args.profile:
        for tag, b in bins:
            warm_index(b, Path(args.profile))
            results[Path(args.profile).stem + tag] = bench_shape(b, Path(args.profile), None, args.repeat, args.best)
    else:
        kernels = scale_kernels(args.scale)
        for shape in [s for s in args.shapes.split(",") if s]:
            p = ensure_profile(d, shape, kernels, 1)
            p2 = p if args.diff_self else ensure_profile(d, shape, kernels, 2)
            for tag, b in bins:
                if args.first_open:
                    os.environ["NSYS_AI_CACHE_DIR"] = tempfile.mkdtemp(prefix="nsys-ai-bench-cache-")
                else:
                    if CACHE_DIR is None:
                        os.environ.pop("NSYS_AI_CACHE_DIR", None)
                    else:
                        os.environ["NSYS_AI_CACHE_DIR"] = CACHE_DIR
                    warm_index(b, p)
                    if p2 != p:
                        warm_index(b, p2)
                print(f"  {shape}{tag}: timing", file=sys.stderr)
                try:
                    results[shape + tag] = bench_shape(b, p, p2, args.repeat, args.best)
                finally:
                    if args.first_open:
                        shutil.rmtree(os.environ["NSYS_AI_CACHE_DIR"], ignore_errors=True)
    cols = list(results)
    rows = list(dict.fromkeys(k for r in results.values() for k in r))
    load = os.getloadavg()
    print(f"{'first-ever open (empty cache)' if args.first_open else 'cached open (index + memo)'}  "
          f"scale: {args.profile or args.scale}  cell: {'best of %d' % args.repeat if args.best else 'first call'}"
          f" {'server CPU' if CPU else 'wall'} ms  load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}  cores: {os.cpu_count()}")
    w = max(12, *(len(c) for c in cols))
    print(f"{'method':28}" + "".join(f"{c:>{w + 1}}" for c in cols))
    for r in rows:
        print(f"{r:28}" + "".join(f"{results[c][r]:{w + 1}.1f}" if r in results[c] else f"{'-':>{w + 1}}"
                                  for c in cols))
    worst = {c: max((v, k) for k, v in results[c].items()
                    if k not in ("report/generate", "profile/open (cached)", "profile/open")
                    and not k.startswith("kernel/explain"))
             for c in cols}
    print("slowest method per shape: " + ", ".join(f"{c}: {k} {v:.0f} ms" for c, (v, k) in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
