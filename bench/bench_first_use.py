#!/usr/bin/env python3
"""First use of each area analysis and of kernel/explain after profile/open (issue 19).

For each binary (--before first, then --bin, same run, same profile, cached
index and memo files), each idle time between the open's reply and the first
request (--idle, default 0 and 2 s), and each area analysis with the
clients' params (bench_window.AREA) on a window of 1/1, 1/2, 1/4, 1/20 of
the span (centred): a fresh `nsys-ai serve`, profile/open, the idle time,
then that one request alone. Then, the same way, kernel/explain of the
--explain largest kernel names one after another, before any report (the
first is the first click). Prints the served ms (until the reply's header
arrived) and the server's CPU ms over the request (user + system of the
whole process, 10 ms ticks: a background warm-up running meanwhile counts).

usage: bench/bench_first_use.py --profile P [--bin build/nsys-ai] [--before OTHER] [--idle 0,2] [--explain 5]
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
sys.path.insert(0, str(REPO / "bench"))

from bench_window import AREA, server_cpu_ms  # noqa: E402
from nsys_rpc import Server  # noqa: E402

FRACTIONS = [("1/1", 1.0), ("1/2", 0.5), ("1/4", 0.25), ("1/20", 0.05)]


def timed(srv: Server, calls: list[tuple[str, dict]]) -> list[tuple[float, float]]:
    out = []
    for m, p in calls:
        c0, t0 = server_cpu_ms(srv), time.monotonic()
        rid = srv.start(m, p)
        r = srv.wait_reply(rid, timeout=600)
        if "error" in r:
            raise RuntimeError(r["error"])
        out.append(((srv.reply_header_at.get(rid, t0) - t0) * 1000, server_cpu_ms(srv) - c0))
    return out


def fresh(binary: str, profile: str, idle: float, make_calls) -> list[tuple[float, float]]:
    os.environ["NSYS_AI_BIN"] = binary
    srv = Server()
    try:
        info = srv.request("profile/open", {"path": profile}, timeout=3600)
        time.sleep(idle)
        return timed(srv, make_calls(info))
    finally:
        srv.close(timeout=60)


def window(info: dict, frac: float) -> tuple[int, int]:
    a, b = info["info"]["span"]["start"], info["info"]["span"]["end"]
    w = (b - a) if frac >= 1.0 else int((b - a) * frac)
    s = a + ((b - a) - w) // 2
    return s, s + w


def largest_names(profile: str, n: int) -> list[str]:
    db = sqlite3.connect(f"file:{profile}?mode=ro", uri=True)
    rows = db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                      "GROUP BY k.shortName ORDER BY SUM(k.end - k.start) DESC, s.value LIMIT ?", (n,)).fetchall()
    db.close()
    return [r[0] for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    ap.add_argument("--before")
    ap.add_argument("--idle", default="0,2")
    ap.add_argument("--explain", type=int, default=5)
    args = ap.parse_args()
    subprocess.run([args.bin, "info", args.profile], check=True, stdout=subprocess.DEVNULL)
    names = largest_names(args.profile, args.explain) if args.explain else []
    runs = ([("before", args.before)] if args.before else []) + [("after" if args.before else "this", args.bin)]
    idles = [float(x) for x in args.idle.split(",")]
    rows: dict[str, dict[str, str]] = {}
    for tag, binary in runs:
        for idle in idles:
            for name, params in AREA:
                for label, frac in FRACTIONS:
                    def calls(info, name=name, params=params, frac=frac):
                        a, b = window(info, frac)
                        return [("analysis/run", {"profileId": info["profileId"], "name": name,
                                                  "params": {"start": a, "end": b, **params}})]
                    (sv, cpu), = fresh(binary, args.profile, idle, calls)
                    rows.setdefault(f"idle {idle:g} s: {name} {label}", {})[tag] = f"{sv:.1f} ({cpu:.0f})"
            if names:
                res = fresh(binary, args.profile, idle,
                            lambda info: [("kernel/explain", {"profileId": info["profileId"], "name": n}) for n in names])
                rows.setdefault(f"idle {idle:g} s: kernel/explain first click", {})[tag] = \
                    f"{res[0][0]:.1f} ({res[0][1]:.0f})"
                rest = sorted(res[1:])
                if rest:
                    rows.setdefault(f"idle {idle:g} s: kernel/explain next {len(rest)} max", {})[tag] = \
                        f"{rest[-1][0]:.1f} ({max(c for _, c in rest):.0f})"
    print(f"# {Path(args.profile).name}; uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print("served ms (server CPU ms over the request), a fresh server per row and binary")
    print("| first request after open | " + " | ".join(t for t, _ in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for key, v in rows.items():
        print(f"| {key} | " + " | ".join(v.get(t, "") for t, _ in runs) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
