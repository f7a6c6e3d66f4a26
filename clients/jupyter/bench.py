#!/usr/bin/env python3
"""Speed of the Jupyter client on a 1M-kernel generated profile (index warm).

    python bench.py [--profile PATH] [--server PATH] [--runs N] [--json OUT]

Figures (all measured in this run, client included):
  top_kernels   `Profile.top_kernels()` -> DataFrame: request, JSON decode, DataFrame build
  zoom          one widget zoom on the Python side: the front end's range message (its
                columns, DRAW_FIELDS) -> `timeline/range` -> the reply deflated, over random
                windows at every zoom level, at 1,500 px, for the tracks a view shows
                (the first 24 rows) and for every track
  kernel        (--kernel) the same zoom requests sent as the front end sends them, as comm
                messages over zmq to a real ipykernel showing `p.show()` (jupyter_client, no
                browser): the kernel leg (request received -> reply sent, as the widget stamps
                it) and the round trip over zmq
Target (issue 8): top_kernels <= 200 ms. The zoom's target (one round trip <= 30 ms) is measured
in the browser by bench_widget.py; the figures here are its Python and kernel parts.
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

import nsys_ai_native  # noqa: E402
from nsys_ai_native.widget import DRAW_FIELDS  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "p50": round(statistics.median(xs), 3), "p90": round(pct(xs, 90), 3),
            "p99": round(pct(xs, 99), 3), "max": round(max(xs), 3)}


def kernel_round_trips(path: Path, n: int) -> dict[str, dict[str, float]]:
    """Zoom requests as comm messages to a real kernel showing `p.show()`, answered by the widget
    (its default "jsonz" layout): per request, the kernel leg and the round trip over zmq."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        def run(code: str) -> str:
            mid = kc.execute(code)
            out: list[str] = []
            while True:
                m = kc.get_iopub_msg(timeout=120)
                if m["parent_header"].get("msg_id") != mid:
                    continue
                if m["msg_type"] == "stream":
                    out.append(m["content"]["text"])
                elif m["msg_type"] == "error":
                    raise RuntimeError("\n".join(m["content"]["traceback"]))
                elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                    return "".join(out)

        head = json.loads(run(f"import json, sys; sys.path.insert(0, {str(HERE / 'src')!r})\n"
                              "import nsys_ai_native\n"
                              f"p = nsys_ai_native.open({str(path)!r}); w = p.show()\n"
                              "print(json.dumps({'comm': w.comm.comm_id, 'span': p.span(), "
                              "'tracks': [t['id'] for t in w.tracks][:24]}))"))
        s, e = head["span"]
        fields = list(DRAW_FIELDS)
        rng = random.Random(2)
        kernel, trip = [], []
        for i in range(n + 5):
            length = max(1000, (e - s) >> (i % 12))
            a = s + rng.randrange(0, max(1, e - s - length))
            t0 = time.time() * 1e3
            content = {"id": i + 1, "kind": "range", "start": a, "end": a + length, "width": 1500,
                       "tracks": head["tracks"], "fields": fields, "inflate": True}
            kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": head["comm"],
                                                              "data": {"method": "custom", "content": content}}))
            while True:
                m = kc.get_iopub_msg(timeout=60)
                c = m["content"].get("data", {}).get("content", {}) if m["msg_type"] == "comm_msg" else {}
                if c.get("id") == i + 1:
                    break
            if "error" in c:
                raise RuntimeError(f"range request failed: {c['error']}")
            if i >= 5:  # the first few warm the kernel's threads
                kernel.append(c["sentAt"] - c["recvAt"])
                trip.append(time.time() * 1e3 - t0)
            time.sleep(0.02)
        return {"kernel_leg_ms": summary(kernel), "kernel_round_trip_ms": summary(trip)}
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--server")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--zooms", type=int, default=200)
    ap.add_argument("--kernel", action="store_true", help="also the zoom through a real kernel (jupyter_client)")
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
    p = nsys_ai_native.open(path)
    results["open_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    info = p.info()
    results["kernels"] = info["counts"]["kernels"]

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

    w = p.show()
    s, e = p.span()
    span = e - s
    rng = random.Random(1)
    tracks_all = [t["id"] for t in w.tracks]
    visible = tracks_all[:24]
    for label, tracks in (("zoom_visible_tracks_ms", visible), ("zoom_all_tracks_ms", None)):
        times = []
        w.answer_range({"start": s, "end": e, "width": 1500, "tracks": tracks, "fields": list(DRAW_FIELDS),
                        "inflate": True})  # warm
        for i in range(args.zooms):
            level = i % 12                       # 1x .. 2048x zoom
            length = max(1000, span >> level)
            a = s + rng.randrange(0, max(1, span - length))
            t = time.perf_counter()
            w.answer_range({"start": a, "end": a + length, "width": 1500, "tracks": tracks,
                            "fields": list(DRAW_FIELDS), "inflate": True})  # as the front end asks
            times.append((time.perf_counter() - t) * 1e3)
        results[label] = summary(times)
    results["tracks"] = len(tracks_all)

    if args.kernel:
        results.update(kernel_round_trips(Path(path).resolve(), args.zooms // 2))

    targets = {"top_kernels_ms": 200.0}
    print(f"\nnsys_ai_native client bench: {path.name}, {results['kernels']:,} kernels, open {results['open_ms']} ms")
    print(f"{'figure':28} {'p50':>9} {'p90':>9} {'p99':>9} {'max':>9}  target")
    for k, v in results.items():
        if isinstance(v, dict):
            tgt = targets.get(k)
            ok = "" if tgt is None else (f"<= {tgt:.0f} ms p50 " + ("OK" if v["p50"] <= tgt else "MISSED"))
            print(f"{k:28} {v['p50']:9.2f} {v['p90']:9.2f} {v['p99']:9.2f} {v['max']:9.2f}  {ok}")
    print(json.dumps(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    nsys_ai_native.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
