#!/usr/bin/env python3
"""Windowed search (the timelines' outlines: `search` with start/end and a page of instances) per
view change, with the per-name instance index (index/search_index.c) and without it
(NSYS_AI_SEARCH_INDEX=0: a scan of every instance per request), side by side in one run.

    python3 bench/bench_search_window.py PROFILE [--query Q] [--steps N] [--json OUT]

Two `nsys-ai serve` processes open PROFILE (a cached index is used when there is one). The
indexed server's first windowed search builds the index: its time is the one-time build cost
(minus one request), and the growth of the server's RSS across it is the index's memory. Then
one navigation trace (bench_outlines.py's: a view 1/2000 of the span, 4 in 5 steps pan a fifth,
1 in 5 zoom 1.5x) asks both servers each view's matches (instances: 2000, the outlines' limit),
plus a wide view (1/20 of the span) for how the cost follows the matches in the window. Reports
p50/p90/max per request (client round trip), the replies compared for equality, and `uptime`'s
load before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
from nsys_rpc import Server  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from nav_trace import trace  # noqa: E402

LIMIT = 2000


def rss_mb(s: Server) -> float:
    with open(f"/proc/{s.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def ask(s: Server, params: dict) -> tuple[float, dict]:
    t0 = time.perf_counter()
    reply = s.wait_reply(s.start("search", params), 3600)
    ms = (time.perf_counter() - t0) * 1e3
    assert "error" not in reply, reply
    return ms, reply["result"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile")
    ap.add_argument("--query", default="gemm")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--json")
    a = ap.parse_args()
    load0 = os.getloadavg()
    idx, scan = Server(), Server(env={"NSYS_AI_SEARCH_INDEX": "0"})
    t0 = time.perf_counter()
    pi = idx.request("profile/open", {"path": a.profile}, timeout=3600)["profileId"]
    open_s = time.perf_counter() - t0
    ps = scan.request("profile/open", {"path": a.profile}, timeout=3600)["profileId"]
    info = idx.request("profile/info", {"profileId": pi})
    span = (int(info["span"]["start"]), int(info["span"]["end"])) if "span" in info else None
    if span is None:
        raise SystemExit("profile/info has no span")
    rss0 = rss_mb(idx)
    q = {"query": a.query, "instances": LIMIT}
    first_ms, _ = ask(idx, {"profileId": pi, **q, "start": span[0], "end": span[0] + 1})
    again_ms, _ = ask(idx, {"profileId": pi, **q, "start": span[0], "end": span[0] + 1})
    rss1 = rss_mb(idx)
    out = {"profile": os.path.basename(a.profile), "query": a.query, "openS": round(open_s, 2),
           "firstWindowedMs": round(first_ms, 1), "secondMs": round(again_ms, 2),
           "indexRssMb": round(rss1 - rss0, 1), "serverRssMb": round(rss1, 1), "views": {}}
    for label, frac in (("view 1/2000", 2000), ("view 1/20", 20)):
        res = {"indexed": [], "scan": []}
        matches = []
        for lo, hi in trace(span, a.steps if frac == 2000 else max(a.steps // 4, 5), 1, frac):
            ti, ri = ask(idx, {"profileId": pi, **q, "start": lo, "end": hi})
            ts, rs = ask(scan, {"profileId": ps, **q, "start": lo, "end": hi})
            assert ri == rs, (lo, hi)
            res["indexed"].append(ti)
            res["scan"].append(ts)
            matches.append(ri["matches"])
        out["views"][label] = {k: {"p50": round(statistics.median(v), 2), "p90": round(pct(v, 0.9), 2),
                                   "max": round(max(v), 2)} for k, v in res.items()}
        out["views"][label]["matchesP50"] = int(statistics.median(matches))
        out["views"][label]["requests"] = len(matches)
    idx.close()
    scan.close()
    out["load"] = {"before": [round(x, 2) for x in load0], "after": [round(x, 2) for x in os.getloadavg()]}
    print(f"{out['profile']}  query {a.query!r}  open {out['openS']} s  first windowed search (builds) "
          f"{out['firstWindowedMs']} ms, then {out['secondMs']} ms; index memory (RSS growth) {out['indexRssMb']} MB")
    print(f"{'window':<12} {'matches p50':>11} {'indexed p50/p90/max ms':>26} {'scan p50/p90/max ms':>24}")
    for label, v in out["views"].items():
        i, s = v["indexed"], v["scan"]
        print(f"{label:<12} {v['matchesP50']:>11} {i['p50']:>9}/{i['p90']}/{i['max']:<8} {s['p50']:>9}/{s['p90']}/{s['max']}")
    print(json.dumps(out))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
