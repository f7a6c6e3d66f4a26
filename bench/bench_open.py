#!/usr/bin/env python3
"""Cold and cached open until the first frame (issue 19).

For each profile and each binary (--before first, then --bin, runs
interleaved so both see the same load): a server on an empty cache directory
answers profile/open, timeline/tracks and one timeline/range over the whole
span (the first frame a client draws: width 1024, maxEvents 512, format
columns, every track): "cold" is the wall time until that reply's header
arrived, "cpu" the server process's CPU time (user + system, every thread)
by then. The server is then closed (it finishes the index cache file first)
and a second server on the same cache directory does the same: "cached".
The profile file is read once beforehand so it is in the page cache.
Columns: p50/p90 over --repeat runs, the mean CPU, and the 1-minute load
average before and after.

--readers 1,2 runs --bin once per K with NSYS_AI_INDEX_READERS=K (the kernel
table's readers, branch cold15), a row each.

usage: bench/bench_open.py [--bin build/nsys-ai] [--before OTHER] [--readers K,...] [--repeat 5] PROFILE...
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

from nsys_rpc import Server  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from bench_window import pct, server_cpu_ms  # noqa: E402  (one definition of each)


def first_frame(binary: str, profile: str, cache: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall ms until the first frame's reply, server CPU ms then)"""
    os.environ["NSYS_AI_BIN"] = binary
    srv = Server(env={"XDG_CACHE_HOME": cache, **(env or {})})
    try:
        t0 = time.monotonic()
        info = srv.request("profile/open", {"path": profile}, timeout=3600)
        pid = info["profileId"]
        span = info["info"]["span"]
        tracks = [t["id"] for t in srv.request("timeline/tracks", {"profileId": pid})["tracks"]]
        rid = srv.start("timeline/range", {"profileId": pid, "start": span["start"], "end": span["end"],
                                           "width": 1024, "maxEvents": 512, "format": "columns",
                                           "tracks": tracks})
        srv.wait_reply(rid, timeout=3600)
        wall = (srv.reply_header_at[rid] - t0) * 1000
        return wall, server_cpu_ms(srv)
    finally:
        srv.close(timeout=600)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    ap.add_argument("--before")
    ap.add_argument("--readers", help="comma-separated K: --bin once per NSYS_AI_INDEX_READERS=K")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    after = ([(f"after K={k}", a.bin, {"NSYS_AI_INDEX_READERS": k}) for k in a.readers.split(",")]
             if a.readers else [("after", a.bin, {})])
    bins = ([("before", a.before, {})] if a.before else []) + after
    load0 = os.getloadavg()[0]
    print(f"| profile | binary | cold p50/p90 ms | cold CPU ms | cached p50/p90 ms | cached CPU ms |")
    print("|---|---|---|---|---|---|")
    for prof in a.profiles:
        with open(prof, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass
        res = {name: {"cold": [], "ccpu": [], "cached": [], "hcpu": []} for name, _, _ in bins}
        for _ in range(a.repeat):
            for name, binary, env in bins:
                cache = tempfile.mkdtemp(prefix="nsys-ai-bench-open-")
                try:
                    w, c = first_frame(binary, prof, cache, env)
                    res[name]["cold"].append(w)
                    res[name]["ccpu"].append(c)
                    w, c = first_frame(binary, prof, cache, env)
                    res[name]["cached"].append(w)
                    res[name]["hcpu"].append(c)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
        for name, _, _ in bins:
            r = res[name]
            print(f"| {Path(prof).name} | {name} | {statistics.median(r['cold']):.0f} / {pct(r['cold'], 0.9):.0f} | "
                  f"{statistics.mean(r['ccpu']):.0f} | {statistics.median(r['cached']):.0f} / {pct(r['cached'], 0.9):.0f} | "
                  f"{statistics.mean(r['hcpu']):.0f} |", flush=True)
    print(f"\nload average (1 min): {load0:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
