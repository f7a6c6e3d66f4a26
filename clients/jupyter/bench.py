#!/usr/bin/env python3
"""Speed of the Jupyter client on a 1M-kernel generated profile (index warm).

    python bench.py [--profile PATH] [--server PATH] [--runs N] [--json OUT]

Figures (all measured in this run, client included):
  top_kernels   `Profile.top_kernels()` -> DataFrame: request, JSON decode, DataFrame build
  zoom          one widget zoom round trip on the Python side: the front end's range
                message -> `timeline/range` -> binary encoding of the reply, over random
                windows at every zoom level, at 1,500 px, for the tracks a view shows
                (the first 24 rows) and for every track
Targets (issue 8): top_kernels <= 200 ms; zoom <= 30 ms.
Without --profile it generates tools/gen_profile.py --preset 1m into $NSYS_AI_BENCH_DIR
(default /tmp/nsys-ai-bench), once.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE / "src"))

import nsys_ai  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "p50": round(statistics.median(xs), 3), "p90": round(pct(xs, 90), 3),
            "p99": round(pct(xs, 99), 3), "max": round(max(xs), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--server")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--zooms", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.server:
        os.environ["NSYS_AI_SERVER"] = args.server
    elif not os.environ.get("NSYS_AI_SERVER") and (REPO / "build" / "nsys-ai").exists():
        os.environ["NSYS_AI_SERVER"] = str(REPO / "build" / "nsys-ai")
    path = args.profile
    if path is None:
        d = Path(os.environ.get("NSYS_AI_BENCH_DIR", "/tmp/nsys-ai-bench"))
        d.mkdir(parents=True, exist_ok=True)
        path = d / "1m.sqlite"
        if not path.exists():
            print(f"generating {path} (1M kernels) ...", flush=True)
            subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "--preset", "1m", "-o", str(path)],
                           check=True)
    results: dict[str, object] = {"profile": str(path)}

    t0 = time.perf_counter()
    p = nsys_ai.open(path)
    results["open_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    info = p.info()
    results["kernels"] = info["counts"]["kernels"]
    methods = p.server.methods

    if "analysis/run" in methods:
        p.top_kernels()  # warm: index built, first analysis run
        times, raw_times = [], []
        rows = 0
        for _ in range(args.runs):
            t = time.perf_counter()
            df = p.top_kernels()
            times.append((time.perf_counter() - t) * 1e3)
            rows = len(df)
            t = time.perf_counter()
            p.request("analysis/run", {"name": "top_kernels", "params": {}})
            raw_times.append((time.perf_counter() - t) * 1e3)
        results["top_kernels_ms"] = summary(times)
        results["top_kernels_request_only_ms"] = summary(raw_times)
        results["top_kernels_rows"] = rows
    else:
        results["top_kernels_ms"] = "server lacks analysis/run"

    if {"timeline/tracks", "timeline/range"} <= methods:
        w = p.show()
        s, e = p.span()
        span = e - s
        rng = random.Random(1)
        tracks_all = [t["id"] for t in w.tracks]
        visible = tracks_all[:24]
        for label, tracks in (("zoom_visible_tracks_ms", visible), ("zoom_all_tracks_ms", None)):
            times = []
            w.answer_range({"start": s, "end": e, "width": 1500, "tracks": tracks})  # warm
            for i in range(args.zooms):
                level = i % 12                       # 1x .. 2048x zoom
                length = max(1000, span >> level)
                a = s + rng.randrange(0, max(1, span - length))
                t = time.perf_counter()
                w.answer_range({"start": a, "end": a + length, "width": 1500, "tracks": tracks})
                times.append((time.perf_counter() - t) * 1e3)
            results[label] = summary(times)
        results["tracks"] = len(tracks_all)

    targets = {"top_kernels_ms": 200.0, "zoom_visible_tracks_ms": 30.0}
    print(f"\nnsys_ai client bench: {path.name}, {results['kernels']:,} kernels, open {results['open_ms']} ms")
    print(f"{'figure':28} {'p50':>9} {'p90':>9} {'p99':>9} {'max':>9}  target")
    for k, v in results.items():
        if isinstance(v, dict):
            tgt = targets.get(k)
            ok = "" if tgt is None else (f"<= {tgt:.0f} ms p50 " + ("OK" if v["p50"] <= tgt else "MISSED"))
            print(f"{k:28} {v['p50']:9.2f} {v['p90']:9.2f} {v['p99']:9.2f} {v['max']:9.2f}  {ok}")
    print(json.dumps(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    nsys_ai.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
