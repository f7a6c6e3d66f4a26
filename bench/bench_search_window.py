#!/usr/bin/env python3
"""Search per view change (the timelines' outlines: `search` with start/end and a page of
instances) and unwindowed, with the per-name instance index (index/search_index.c: counted per
name, the page by rank and merge), optionally the same with an earlier build (--before BIN: the
index that visited every match in the window), and without any index (NSYS_AI_SEARCH_INDEX=0: a
scan of every instance per request), side by side in one run.

    python3 bench/bench_search_window.py PROFILE [--query Q] [--steps N] [--before BIN] [--repeat R] [--json OUT]

Each server opens PROFILE (a cached index is used when there is one). The indexed server's first
windowed search builds the index: its time is the one-time build cost (minus one request), and the
growth of the server's RSS across it is the index's memory. Then one navigation trace
(bench_outlines.py's: a view 1/2000 of the span, 4 in 5 steps pan a fifth, 1 in 5 zoom 1.5x) asks
every server each view's matches (instances: 2000, the outlines' limit), plus wide views (1/20 and
1/2 of the span: 150k+ matches at 1M kernels), plus unwindowed requests (a page at a deep offset).
Reports p50/p90/max per request (until the reply's header arrives), the replies compared for equality, and
`uptime`'s load before and after.
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
    """ms from sending the request to its reply's header arriving (the server's work, the
    reply's JSON included; not the client's parse of it), and the result."""
    t0 = time.monotonic()
    rid = s.start("search", params)
    reply = s.wait_reply(rid, 3600)
    ms = (s.reply_header_at[rid] - t0) * 1e3
    assert "error" not in reply, reply
    return ms, reply["result"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def start_server(binary: str | None, env: dict | None = None) -> Server:
    old = os.environ.get("NSYS_AI_BIN")
    if binary:
        os.environ["NSYS_AI_BIN"] = binary
    try:
        return Server(env=env)
    finally:
        if binary:
            if old is None:
                del os.environ["NSYS_AI_BIN"]
            else:
                os.environ["NSYS_AI_BIN"] = old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile")
    ap.add_argument("--query", default="gemm")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--before", help="an earlier nsys-ai binary, asked the same requests (its index)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="ask each request this many times and keep the least time (a loaded machine)")
    ap.add_argument("--json")
    a = ap.parse_args()
    load0 = os.getloadavg()
    servers = {"indexed": start_server(None)}
    if a.before:
        servers["before"] = start_server(a.before)
    servers["scan"] = start_server(None, {"NSYS_AI_SEARCH_INDEX": "0"})
    pids = {}
    t0 = time.perf_counter()
    for name, s in servers.items():
        pids[name] = s.request("profile/open", {"path": a.profile}, timeout=3600)["profileId"]
        if name == "indexed":
            open_s = time.perf_counter() - t0
    idx, pi = servers["indexed"], pids["indexed"]
    info = idx.request("profile/info", {"profileId": pi})
    span = (int(info["span"]["start"]), int(info["span"]["end"])) if "span" in info else None
    if span is None:
        raise SystemExit("profile/info has no span")
    q = {"query": a.query, "instances": LIMIT}
    unwindowed_cold_ms, _ = ask(idx, {"profileId": pi, **q})  # before any windowed search: a scan
    rss0 = rss_mb(idx)
    first_ms, _ = ask(idx, {"profileId": pi, **q, "start": span[0], "end": span[0] + 1})
    again_ms, _ = ask(idx, {"profileId": pi, **q, "start": span[0], "end": span[0] + 1})
    rss1 = rss_mb(idx)
    before_first_ms = None
    if "before" in servers:  # its index built too (timed: its build), before the views
        before_first_ms, _ = ask(servers["before"], {"profileId": pids["before"], **q, "start": span[0],
                                                     "end": span[0] + 1})
    out = {"profile": os.path.basename(a.profile), "query": a.query, "repeat": a.repeat, "openS": round(open_s, 2),
           "unwindowedColdMs": round(unwindowed_cold_ms, 1), "firstWindowedMs": round(first_ms, 1),
           "secondMs": round(again_ms, 2),
           "beforeFirstWindowedMs": round(before_first_ms, 1) if before_first_ms is not None else None, "indexRssMb": round(rss1 - rss0, 1), "serverRssMb": round(rss1, 1),
           "views": {}}
    plans = [("view 1/2000", trace(span, a.steps, 1, 2000)), ("view 1/20", trace(span, max(a.steps // 4, 5), 1, 20)),
             ("view 1/2", trace(span, max(a.steps // 8, 5), 1, 2)),
             ("unwindowed", [(None, None)] * max(a.steps // 8, 5))]
    for label, views in plans:
        res = {name: [] for name in servers}
        matches = []
        for k, (lo, hi) in enumerate(views):
            params = {**q, **({"start": lo, "end": hi} if lo is not None else {"offset": 997 * k * k})}
            replies = {}
            best = {name: float("inf") for name in servers}
            for _ in range(max(a.repeat, 1)):  # interleaved: each server in turn
                for name, s in servers.items():
                    ms, replies[name] = ask(s, {"profileId": pids[name], **params})
                    best[name] = min(best[name], ms)
            for name in servers:
                res[name].append(best[name])
            first = next(iter(replies.values()))
            assert all(r == first for r in replies.values()), (label, lo, hi)
            matches.append(first["matches"])
        out["views"][label] = {k: {"p50": round(statistics.median(v), 2), "p90": round(pct(v, 0.9), 2),
                                   "max": round(max(v), 2)} for k, v in res.items()}
        out["views"][label]["matchesP50"] = int(statistics.median(matches))
        out["views"][label]["requests"] = len(matches)
    for s in servers.values():
        s.close()
    out["load"] = {"before": [round(x, 2) for x in load0], "after": [round(x, 2) for x in os.getloadavg()]}
    print(f"{out['profile']}  query {a.query!r}  open {out['openS']} s  unwindowed before any build (scan) "
          f"{out['unwindowedColdMs']} ms  first windowed search (builds) {out['firstWindowedMs']} ms, then "
          f"{out['secondMs']} ms (--before's build: {out['beforeFirstWindowedMs']} ms); "
          f"index memory (RSS growth) {out['indexRssMb']} MB")
    print(f"{'window':<12} {'matches p50':>11} " + " ".join(f"{n + ' p50/p90/max ms':>26}" for n in servers))
    for label, v in out["views"].items():
        cols = " ".join(f"{str(v[n]['p50']) + '/' + str(v[n]['p90']) + '/' + str(v[n]['max']):>26}" for n in servers)
        print(f"{label:<12} {v['matchesP50']:>11} {cols}")
    print(json.dumps(out))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
