#!/usr/bin/env python3
"""Window queries as the timeline clients send them (issues 16 and 19).

1. Area selection: the four analyses the clients' range panel runs over a
   selected window (clients/vscode/src/webview/rangePanel.ts: top_kernels with
   limit 5, overlap without per-iteration rows, gpu_idle_gaps and
   kernel_launch_overhead with limit 1, each with start/end), sent together as the panel sends them, on windows of 1/1000,
   1/20, 1/2 of the profile and the whole span: p50/p90 of the time until the
   last of the four answers (client wall clock through `nsys-ai serve`) and
   the server's CPU time for the four.
2. Zoom/expand: the timeline/range requests a Ctrl+wheel zoom step sends
   (clients/vscode/src/client/timelineModel.ts: the visible 512-px tiles at
   the view's power-of-two resolution plus one prefetch tile each side,
   width 512, maxEvents 256, format columns, one request per tile with the
   tracks of the visible row blocks) and a row expand (the same tiles for the
   tracks of one GPU's streams): p50/p90 until every visible tile has
   answered, reply bytes, server CPU.

Each binary (--before first, then --bin) runs in its own server in the same
run, on the same profile, after the index cache and the analysis memo are
warm (one whole-profile analysis first: what an open timeline has done). The
first area selection after that is its own row: it builds what the analyses
keep per profile (window index, gap phases, iteration markers).
"served" is until the last reply's header arrived (the server had answered),
"parsed" until the client had parsed the last reply (Python json).

usage: bench/bench_window.py [--profile /tmp/nsys-ai-bench/default-10000000-s1.sqlite]
                             [--bin build/nsys-ai] [--before OTHER] [--repeat 10]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

from nsys_rpc import Server  # noqa: E402

# the clients' params (rangePanel.ts AREA_ANALYSES, nav_ui.ts AREA_PARAMS): summaries only
AREA = [("top_kernels", {"limit": 5}), ("overlap", {"perIteration": False}), ("gpu_idle_gaps", {"limit": 1}),
        ("kernel_launch_overhead", {"limit": 1})]
FRACTIONS = [("1/1000", 1e-3), ("1/20", 0.05), ("1/2", 0.5), ("full", 1.0)]
TILE_PX = 512


def server_cpu_ms(srv: Server) -> float:
    f = Path(f"/proc/{srv.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def pct(v: list[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def batch(srv: Server, calls: list[tuple[str, dict]]) -> tuple[float, float, float, int]:
    """Sends every call at once; wall ms until the last reply's header arrived
    (the server had written it), until the last reply was parsed, server CPU
    ms, reply bytes."""
    c0 = server_cpu_ms(srv)
    t0 = time.monotonic()
    ids = [srv.start(m, p) for m, p in calls]
    replies = [srv.wait_reply(i, timeout=600) for i in ids]
    wall, cpu = (time.monotonic() - t0) * 1000, server_cpu_ms(srv) - c0
    served = (max(srv.reply_header_at.get(i, t0) for i in ids) - t0) * 1000
    size = 0
    for r in replies:
        if "error" in r:
            raise RuntimeError(f"{r['error']}")
        size += len(json.dumps(r["result"], separators=(",", ":")))
    return served, wall, cpu, size


def windows(span: tuple[int, int], frac: float, n: int, rng: random.Random,
            at: float | None = None) -> list[tuple[int, int]]:
    """n windows of frac of the span: at random places, or all from `at` (a fraction of the span)."""
    a, b = span
    w = max(1, int((b - a) * frac))
    if frac >= 1.0:
        return [(a, b)] * n
    if at is not None:
        s = a + min(int((b - a) * at), (b - a) - w)
        return [(s, s + w)] * n
    return [(s, s + w) for s in (a + rng.randrange(0, (b - a) - w) for _ in range(n))]


def parse_fractions(spec: str) -> list[tuple[str, float, float | None]]:
    """"1/2@0.1,1/3,full": (label, fraction, start as a fraction of the span or None: random)."""
    out = []
    for item in spec.split(","):
        size, _, at = item.strip().partition("@")
        frac = 1.0 if size == "full" else (lambda x, y: float(x) / float(y))(*size.split("/"))
        out.append((item.strip(), frac, float(at) if at else None))
    return out


def settle(srv: Server, quiet_s: float = 1.0, limit_s: float = 120.0) -> float:
    """Waits until the server's CPU stops moving for quiet_s (its background
    warm-up done); returns the seconds waited."""
    t0, last = time.monotonic(), server_cpu_ms(srv)
    while time.monotonic() - t0 < limit_s:
        time.sleep(quiet_s)
        now = server_cpu_ms(srv)
        if now == last:
            break
        last = now
    return time.monotonic() - t0


def tiles(view_start: int, view_end: int, bounds: tuple[int, int]) -> list[tuple[int, int, int]]:
    """timelineModel.tilesFor(view, 1, bounds) for a 1000-px view."""
    per = max(1.0, (view_end - view_start) / 1000)
    res = 2 ** math.ceil(math.log2(per) - 1e-9)
    span = res * TILE_PX
    out = []
    for i in range(math.floor(view_start / span) - 1, math.floor((view_end - 1) / span) + 2):
        s, e = i * span, i * span + span
        if e <= bounds[0] or s >= bounds[1]:
            continue
        out.append((res, s, e))
    return out


Row = tuple[float, float, float, float, float, float]  # served p50, p90, parsed p50, p90, CPU p50, bytes


def summarize(served: list[float], wall: list[float], cpu: list[float], size: float) -> Row:
    return (statistics.median(served), pct(served, 0.9), statistics.median(wall), pct(wall, 0.9),
            statistics.mean(cpu), size)


def bench(binary: str, profile: str, repeat: int, seed: int, per_analysis: bool = False,
          fractions: list[tuple[str, float, float | None]] | None = None, wait: bool = False,
          no_zoom: bool = False) -> dict[str, Row]:
    os.environ["NSYS_AI_BIN"] = binary
    srv = Server()
    rng = random.Random(seed)
    out: dict[str, Row] = {}
    try:
        info = srv.request("profile/open", {"path": profile}, timeout=3600)
        pid = info["profileId"]
        span = (info["info"]["span"]["start"], info["info"]["span"]["end"])
        srv.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 5}}, timeout=3600)
        if wait:
            settle(srv)
        tracks = srv.request("timeline/tracks", {"profileId": pid})["tracks"]
        # the first selection after open builds what the analyses keep per profile
        a, b = windows(span, 0.05, 1, rng)[0]
        first = [("analysis/run", {"profileId": pid, "name": n, "params": {"start": a, "end": b, **p}}) for n, p in AREA]
        sv, w, c, size = batch(srv, first)
        out["area first (1/20)"] = summarize([sv], [w], [c], size)
        for label, frac, at in fractions or [(lb, f, None) for lb, f in FRACTIONS]:
            served, wall, cpu, size = [], [], [], 0
            for a, b in windows(span, frac, repeat, rng, at):
                calls = [("analysis/run", {"profileId": pid, "name": n,
                                           "params": {"start": a, "end": b, **p}})
                         for n, p in AREA]
                sv, w, c, size = batch(srv, calls)
                served.append(sv)
                wall.append(w)
                cpu.append(c)
            out[f"area {label}"] = summarize(served, wall, cpu, size)
            for n, p in AREA if per_analysis else []:  # each of the four alone, on windows of the same size
                served, wall, cpu, size = [], [], [], 0
                for a, b in windows(span, frac, repeat, rng, at):
                    sv, w, c, size = batch(srv, [("analysis/run", {"profileId": pid, "name": n,
                                                                   "params": {"start": a, "end": b, **p}})])
                    served.append(sv)
                    wall.append(w)
                    cpu.append(c)
                out[f"area {label}: {n}"] = summarize(served, wall, cpu, size)
        # zoom: views of 1/8 .. 1/4096 of the span around random anchors; the rows
        # first in view (the first 16 tracks, as blocks of 4 rows: one request per tile)
        gpu = [t["id"] for t in tracks if t["kind"] == "gpu"]
        first_rows = [t["id"] for t in tracks][:16]
        for label, ids in () if no_zoom else (("zoom (16 rows in view)", first_rows),
                                               ("expand (one GPU's streams)", [i for i in gpu if i.startswith("gpu:0:")])):
            served, wall, cpu, sizes = [], [], [], []
            for _ in range(repeat):
                frac = 2.0 ** -rng.randrange(3, 13)
                w = int((span[1] - span[0]) * frac)
                s = span[0] + rng.randrange(0, (span[1] - span[0]) - w)
                calls = [("timeline/range", {"profileId": pid, "start": ts, "end": te, "width": TILE_PX, "maxEvents": TILE_PX // 2,
                                             "format": "columns", "tracks": ids}) for _, ts, te in tiles(s, s + w, span)]
                sv, wv, c, size = batch(srv, calls)
                served.append(sv)
                wall.append(wv)
                cpu.append(c)
                sizes.append(size)
            out[label] = summarize(served, wall, cpu, statistics.median(sizes))
    finally:
        srv.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="/tmp/nsys-ai-bench/default-10000000-s1.sqlite")
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    ap.add_argument("--before", help="another binary (main's, built in another dir), run first in the same run")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-analysis", action="store_true", help="also time each area analysis alone per window size")
    ap.add_argument("--fractions", help="window sizes instead of 1/1000,1/20,1/2,full: e.g. 1/2@0.1,1/2@0.5,1/3,full "
                    "(@: the window's start as a fraction of the span, else random places)")
    ap.add_argument("--wait-warm", action="store_true",
                    help="after the open, wait until the server's CPU stops moving (its background warm-up done)")
    ap.add_argument("--no-zoom", action="store_true", help="skip the zoom/expand rows")
    args = ap.parse_args()
    subprocess.run([args.bin, "info", args.profile], check=True, stdout=subprocess.DEVNULL)
    runs = ([("before", args.before)] if args.before else []) + [("after" if args.before else "this", args.bin)]
    fr = parse_fractions(args.fractions) if args.fractions else None
    res = {tag: bench(b, args.profile, args.repeat, args.seed, args.per_analysis, fr, args.wait_warm, args.no_zoom)
           for tag, b in runs}
    print(f"# {Path(args.profile).name}, {args.repeat} windows each; "
          f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print("served: until the last reply's header arrived (the server had answered); parsed: until the client "
          "had parsed the last reply (Python json); CPU: the server's, user + system, mean (10 ms ticks)")
    print("| request | " + " | ".join(f"{t} served p50 / p90 ms | {t} parsed p50 / p90 ms | {t} server CPU ms"
                                     for t, _ in runs) + " | reply bytes |")
    print("|" + "---|" * (3 * len(runs) + 2))
    for key in res[runs[0][0]]:
        cells = [f"{res[t][key][0]:.1f} / {res[t][key][1]:.1f} | {res[t][key][2]:.1f} / {res[t][key][3]:.1f} | "
                 f"{res[t][key][4]:.0f}" for t, _ in runs]
        print(f"| {key} | " + " | ".join(cells) + f" | {int(res[runs[-1][0]][key][5])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
