#!/usr/bin/env python3
"""Times every analysis (and the report) from a built index: the profile is
opened once through `nsys-ai serve` (index built or loaded from cache), then
each analysis/run is timed as seen by the client (JSON encoding and transport
included, so this is an upper bound on the analysis itself).

usage: bench/bench_analyses.py PROFILE.sqlite [--repeat N] [--bin build/nsys-ai]
       (make one with: tools/gen_profile.py -o /tmp/1m.sqlite --preset 1m)
Target (issue 4): each analysis <= 500 ms on the 10M-kernel profile.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

from nsys_rpc import Server  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    args = ap.parse_args()
    os.environ["NSYS_AI_BIN"] = args.bin
    srv = Server()
    try:
        t = time.perf_counter()
        res = srv.request("profile/open", {"path": args.profile}, timeout=3600)
        open_s = time.perf_counter() - t
        pid = res["profileId"]
        kernels = res["info"]["counts"]["kernels"]
        print(f"profile: {args.profile}  kernels: {kernels:,}  open+index: {open_s:.2f} s")
        names = [a["name"] for a in srv.request("analysis/list", {})["analyses"]]
        print(f"{'analysis':26} {'best ms':>9} {'median ms':>10}  rows")
        worst = 0.0
        for name in names + ["report/generate"]:
            params = {"modelFlops": 1e15, "peakTflops": 989} if name == "mfu" else {}
            times = []
            rows = 0
            for _ in range(args.repeat):
                t = time.perf_counter()
                if name == "report/generate":
                    r = srv.request("report/generate", {"profileId": pid}, timeout=3600)
                    rows = len(r["findings"])
                else:
                    r = srv.request("analysis/run", {"profileId": pid, "name": name, "params": params}, timeout=3600)
                    rows = len(r["rows"])
                times.append((time.perf_counter() - t) * 1000)
            times.sort()
            worst = max(worst, times[0]) if name != "report/generate" else worst
            print(f"{name:26} {times[0]:9.1f} {times[len(times) // 2]:10.1f}  {rows}")
        print(f"slowest analysis (best of {args.repeat}): {worst:.1f} ms")
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
