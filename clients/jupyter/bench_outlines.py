#!/usr/bin/env python3
"""What the search outlines cost per view change, before and after the window cache.

    python bench_outlines.py PROFILE [PROFILE ...] [--query Q] [--steps N] [--json OUT]

Both timelines outline the matches in view after each view change (debounced). Before, each
change asked `search` for the view's matches (one windowed search, a scan of the index);
now the matches of a window three views wide are kept (timelineNav.ts `WindowCache`) and a
change inside it asks nothing. This replays one navigation trace per profile (zoom to 1/2000
of the span around a random point, then N steps: 4 in 5 pans of a fifth of the view, mostly
forward as when reading along a timeline, 1 in 5 a zoom step of 1.5x in or out) through the widget's own search handler (`search_page`: the
Python side of the request both clients send) and reports, side by side in one run:

  asks        view changes that asked search (before: every one)
  total ms    their summed time (Python side + server)
  per change  p50 / p90 of the time a view change waits for its outlines (0 when cached)

The cache rule replayed here is WindowCache's (a view inside the window fetched reuses it; a
miss asks for [start - len, end + len], kept up to its last match's start when it holds more
than the limit, else the view alone, and the view alone at once while the query stays that
dense). Prints a table and one JSON line with `uptime`'s load averages before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))
import nsys_ai_native  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from nav_trace import trace as nav_trace  # noqa: E402

LIMIT = 2000  # the outlines' limit (searchBar.ts IN_VIEW, nav_ui.ts WindowCache default)


def ask(w, query: str, start: int, end: int) -> tuple[float, int, int, Optional[int]]:
    """One outline request: (ms, matches in the window, items returned, the last item's start)."""
    o = w._origin
    t0 = time.perf_counter()
    page = w.search_page({"query": query, "instances": LIMIT, "start": start - o, "end": end - o})
    items = page["items"]
    return (time.perf_counter() - t0) * 1e3, int(page["total"]), len(items), int(items[-1]["start"]) + o if items else None


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def run(path: str, query: str, steps: int) -> dict:
    p = nsys_ai_native.open(path)
    w = p.show()
    views = nav_trace(p.span(), steps, 1, 2000)
    ask(w, query, *p.span())  # warm: the first search of a profile pays for its first touch of the index
    before: list[float] = []
    after: list[float] = []
    win = None
    dense = False
    for a, b in views:  # side by side: each view change asked both ways
        before.append(ask(w, query, a, b)[0])
        if win and win[0] <= a and b <= win[1]:
            after.append(0.0)
            continue
        n = max(b - a, 1)
        ms, complete = 0.0, False
        if not dense:
            t, total, got, last = ask(w, query, a - n, b + n)
            ms += t
            s_, e_ = a - n, b + n
            complete = got >= total
            if not complete and last is not None and last >= b:
                e_, complete = last, True
        if not complete:
            t, total, got, _ = ask(w, query, a, b)
            ms += t
            s_, e_ = a, b
            complete = got >= total
        dense = not complete
        win = (s_, e_) if complete else None
        after.append(ms)
    asks_after = sum(1 for x in after if x > 0)
    return {"profile": os.path.basename(path), "query": query, "changes": len(views),
            "before": {"asks": len(views), "totalMs": round(sum(before), 1), "p50": round(statistics.median(before), 2),
                       "p90": round(pct(before, 0.9), 2)},
            "after": {"asks": asks_after, "totalMs": round(sum(after), 1), "p50": round(statistics.median(after), 2),
                      "p90": round(pct(after, 0.9), 2)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profiles", nargs="+")
    ap.add_argument("--query", default="gemm")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--json")
    a = ap.parse_args()
    load0 = os.getloadavg()
    rows = [run(path, a.query, a.steps) for path in a.profiles]
    load1 = os.getloadavg()
    print(f"{'profile':32} {'':7} {'asks':>5} {'total ms':>9} {'p50 ms':>7} {'p90 ms':>7}")
    for r in rows:
        for k in ("before", "after"):
            x = r[k]
            print(f"{r['profile'][:32]:32} {k:7} {x['asks']:5} {x['totalMs']:9} {x['p50']:7} {x['p90']:7}")
    out = {"rows": rows, "loadBefore": load0, "loadAfter": load1}
    print(json.dumps(out))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
