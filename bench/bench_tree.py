#!/usr/bin/env python3
"""nvtx/tree round trips as a UI makes them, through a real `nsys-ai serve`:
the root level, expanding the node with the most children, expanding a node
at depth 30, and the aggregate tree's first level and largest expansion,
each repeated and printed as percentiles (ms, client round trip), with the
reply sizes and the first call (which precomputes the tree once per open).

Profiles: the 1M preset (tools/gen_profile.py --preset 1m), and a worst
shape made from it with SQL (the generator is not changed): a thread with
30 nested ranges over the whole span, the innermost holding 1,000,000
back-to-back children, beside the preset's own ~25k roots.

    python3 bench/bench_tree.py [--data DIR] [--repeat N] [--bin build/nsys-ai]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
from nsys_rpc import Server  # noqa: E402

DEPTH = 30
CHILDREN = 1_000_000


def worst_shape(src: Path, dst: Path) -> Path:
    if dst.exists():
        return dst
    tmp = dst.with_suffix(".tmp")
    shutil.copy(src, tmp)
    with sqlite3.connect(tmp) as db:
        gtid, = db.execute("SELECT globalTid FROM NVTX_EVENTS GROUP BY globalTid ORDER BY count(*) DESC").fetchone()
        lo, hi = db.execute("SELECT min(start), max(end) FROM NVTX_EVENTS").fetchone()
        fake = (gtid >> 24 << 24) | 0xABCDE  # a thread of the same process with no other range
        for d in range(DEPTH):
            db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)",
                       (lo - DEPTH + d, hi + DEPTH - d, f"nest_{d}", fake))
        step = max(1, (hi - lo) // CHILDREN)
        db.execute("WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?) "
                   "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
                   "SELECT ? + i * ?, ? + i * ? + ? - 1, 59, 'tick', ? FROM k",
                   (CHILDREN, lo, step, lo, step, step, fake))
    tmp.rename(dst)
    return dst


def fake_thread(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        g, = db.execute("SELECT globalTid FROM NVTX_EVENTS WHERE text = 'nest_0'").fetchone()
    return f"{(g >> 24) & 0xFFFFFF}:{g & 0xFFFFFF}"


def pct(v: list[float], q: float) -> float:
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def timed(s: Server, params: dict, repeat: int) -> tuple[list[float], int, dict]:
    times, res = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        res = s.request("nvtx/tree", params, timeout=600)
        times.append((time.perf_counter() - t) * 1e3)
    size = len(json.dumps(res, separators=(",", ":"), ensure_ascii=False).encode())
    return times, size, res


def bench(path: Path, repeat: int, cache: str, thread: str | None) -> list[tuple[str, str]]:
    s = Server(env={"NSYS_AI_CACHE_DIR": cache})
    pid = s.request("profile/open", {"path": str(path)}, timeout=900)["profileId"]
    rows = []

    def run(label: str, params: dict) -> dict:
        first = time.perf_counter()
        s.request("nvtx/tree", {"profileId": pid, **params}, timeout=600)
        first = (time.perf_counter() - first) * 1e3
        t, size, res = timed(s, {"profileId": pid, **params}, repeat)
        rows.append((label, f"first {first:7.1f}  p50 {statistics.median(t):6.2f}  p90 {pct(t, 0.9):6.2f}  "
                            f"max {max(t):6.2f} ms  {size / 1e3:8.1f} KB  ({len(res['nodes'])} of {res['total']})"))
        return res

    roots = run("ranges: root level", {})
    run("ranges: root level, topKernels 0", {"topKernels": 0})
    if thread:  # the worst shape's own thread: 30 nested ranges, then 1M children
        roots = s.request("nvtx/tree", {"profileId": pid, "thread": thread}, timeout=600)
    # the node with the most children: walk down the largest child counts
    node, depth = max(roots["nodes"], key=lambda n: n["childCount"]), 0
    big = node
    while node["childCount"] and depth < DEPTH + 5:
        kids = s.request("nvtx/tree", {"profileId": pid, "parent": node["id"], "topKernels": 0}, timeout=600)
        if not kids["nodes"]:
            break
        nxt = max(kids["nodes"], key=lambda n: n["childCount"])
        if node["childCount"] > big["childCount"]:
            big = node
        node, depth = nxt, depth + 1
        if node["depth"] == DEPTH - 1:
            run(f"ranges: expand at depth {node['depth']} ({node['childCount']} children)", {"parent": node["id"]})
    if node["childCount"] > big["childCount"]:
        big = node
    run(f"ranges: expand the largest node ({big['childCount']} children)", {"parent": big["id"]})
    agg = run("aggregate: level 1", {"mode": "aggregate"})
    run("aggregate: level 1, topKernels 0", {"mode": "aggregate", "topKernels": 0})
    a = max(agg["nodes"], key=lambda n: n["childCount"])
    run(f"aggregate: expand the largest ({a['childCount']} children)", {"mode": "aggregate", "parent": a["id"]})
    s.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--bin", default=os.environ.get("NSYS_AI_BIN", str(REPO / "build" / "nsys-ai")))
    args = ap.parse_args()
    os.environ["NSYS_AI_BIN"] = args.bin
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    base = data / "1m.sqlite"
    if not base.exists():
        subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(base), "--preset", "1m"],
                       check=True)
    worst = worst_shape(base, data / "1m-worst-tree.sqlite")
    print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} round trips each after the first")
    with tempfile.TemporaryDirectory() as cache:
        for p, thread in ((base, None), (worst, fake_thread(worst))):
            print(f"\n{p.name}")
            for label, text in bench(p, args.repeat, cache, thread):
                print(f"  {label:<48} {text}")


if __name__ == "__main__":
    main()
