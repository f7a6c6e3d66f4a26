#!/usr/bin/env python3
"""The timeline widget's zoom round trip, measured in the browser in a real JupyterLab 4.

    python bench_widget.py [--profile PATH ...] [--app lab|notebook] [--zooms N] [--bursts N]
                           [--wire jsonz,json,...] [--ab jsonz,json+all] [--json OUT]

For each profile: starts `jupyter lab` (this Python's environment; the nsys_ai_native package
from ./src), runs a notebook showing `p.show()` in headless Chromium, and zooms with the
mouse wheel, one notch at a time (11 notches in, 11 out, around random points). The
widget measures each step itself (performance.now()):

  input->draw    the wheel event -> the end of the frame drawn with the data answered
                 for that view: 1, 2 or 3 animation frames (the "frames" line), since wheel
                 events come at the start of a frame and the widget draws in the next one
  round trip     the range message sent -> its reply decoded in the browser (the issue-8
                 figure, "one widget zoom round trip", target <= 30 ms)
  python         the kernel's time for it (timeline/range + forwarding)
  decode, draw   the browser's decoding of the reply, the frame's drawing
  empty message  an empty custom message's round trip (ping), sent after every zoom step:
                 the notebook's own messaging cost under the same load
  padded message (--pad N) a ping answered with N bytes and no work: the messaging cost per byte
  burst last     5 notches 8 ms apart: the last notch -> its view drawn (coalescing)
  search         Enter in the search box -> the first match's counter shown (a query
                 scanning every kernel and NVTX range), then Enter / Shift+Enter -> the next
                 match shown (search_step_ms; a page of 500 matches per request)

Prints a table and one JSON line (p50/p99 per figure, load averages before/after).
Default profiles: /tmp/vs-1m.sqlite and /tmp/vs-10m.sqlite when present, else a generated
1M-kernel profile. Needs what the browser test needs (scripts/test.sh sets it up):
jupyterlab, anywidget, Chromium, js/node_modules (playwright-core), a built widget bundle.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE / "tests" / "browser"))

import run as browser  # noqa: E402  (tests/browser/run.py: the jupyter server helper)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def summary(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "p50": round(statistics.median(xs), 2), "p90": round(pct(xs, 90), 2),
            "p99": round(pct(xs, 99), 2), "max": round(max(xs), 2)}


def notebook(profile: Path) -> dict:
    src = ("import nsys_ai_native\n"
           f"p = nsys_ai_native.open({str(profile)!r})\n"
           "w = p.show(height=420)\n"
           "w")
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "cells": [{"cell_type": "code", "id": "c0", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": src}]}


def figures(s: list[dict], pings: list[dict], bursts: list[dict], padded: list[dict] = [],
            concurrent: list[dict] = []) -> dict:
    return {
        "input_to_draw_ms": summary([x["inputToDrawMs"] for x in s]),
        "round_trip_ms": summary([x["roundTripMs"] for x in s]),
        "python_ms": summary([x["pythonMs"] for x in s]),
        "  rpc_ms": summary([x["rpcMs"] for x in s if x.get("rpcMs") is not None]),
        "  py_decode_ms": summary([x["pyDecodeMs"] for x in s if x.get("pyDecodeMs") is not None]),
        "  pack_ms": summary([x["packMs"] for x in s if x.get("packMs") is not None]),
        "decode_ms": summary([x["decodeMs"] for x in s]),
        "draw_ms": summary([x["drawMs"] for x in s]),
        "  up_ms": summary([x["upMs"] for x in s]),
        "  kernel_ms": summary([x["kernelMs"] for x in s]),
        "  down_ms": summary([x["downMs"] for x in s]),
        "empty_message_ms": summary([x["ms"] for x in pings]),
        "  empty_up_ms": summary([x["upMs"] for x in pings]),
        "  empty_down_ms": summary([x["downMs"] for x in pings]),
        "padded_message_ms": summary([x["ms"] for x in padded]),
        "concurrent_message_ms": summary([x["ms"] for x in concurrent]),
        "  concurrent_up_ms": summary([x["upMs"] for x in concurrent]),
        "  concurrent_down_ms": summary([x["downMs"] for x in concurrent]),
        "burst_last_input_to_draw_ms": summary([b["lastInputToDrawMs"] for b in bursts]),
    }


FRAME_MS = 1000 / 60  # headless Chromium's begin-frame interval


def frames_after_input(s: list[dict]) -> dict:
    """The share of steps drawn 1, 2, 3 or more animation frames after the input. Wheel events
    are dispatched at the start of a frame and the widget draws in the next frame after the
    answer, so input -> drawn is about k frames + the drawing: 18-20 ms when the answer comes
    within the first frame, 35-37 in the second, 52-54 in the third."""
    ks = [max(1, round((x["inputToDrawMs"] - x["drawMs"]) / FRAME_MS)) for x in s]
    return {str(k): round(sum(1 for v in ks if min(v, 3) == k) / len(ks), 2) for k in (1, 2, 3)} if ks else {}


def hop_figures(trace_dir: Path, ws_log: list) -> dict:
    """Joins the hop trace (tests/browser/hop_trace) with the browser's websocket arrivals, by
    each message's "sentAt": where a reply's kernel -> browser time goes, for replies over
    64 KB and for small messages (the pings)."""
    k: dict[str, list[float]] = {}
    srv: dict[str, list[float]] = {}
    for f in trace_dir.glob("hops-*.txt"):
        for line in f.read_text().splitlines():
            p = line.split()
            if p and p[0] == "K":
                k[p[1]] = [float(x) for x in p[2:6]]
            elif p and p[0] == "S":
                srv[p[1]] = [float(x) for x in p[2:5]]
    rows: dict[str, dict[str, list[float]]] = {"over_64k": {}, "small": {}}
    for sent, arrived, nbytes in ws_log:
        if sent not in k or sent not in srv:
            continue
        t = float(sent)
        queued, io0, io1, _ = k[sent]
        s_in, s_out, _ = srv[sent]
        r = rows["over_64k" if nbytes > 65536 else "small"]
        for name, v in (("serialize_ms", queued - t), ("iopub_thread_wait_ms", io0 - queued),
                        ("zmq_send_ms", io1 - io0), ("zmq_to_server_ms", s_in - io1),
                        ("server_ws_write_ms", s_out - s_in), ("server_to_browser_event_ms", arrived - s_in),
                        ("sent_to_browser_event_ms", arrived - t), ("bytes", nbytes)):
            r.setdefault(name, []).append(v)
    return {kind: {name: summary(v) for name, v in r.items()} for kind, r in rows.items() if r}


def bench_one(profile: Path, app: str, out: Path, zooms: int, bursts: int, wire: str, ab: str = "",
              hops: bool = False, pad: int = 0, concurrent: bool = False) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    trace_dir = out / "hops"
    if hops:
        trace_dir.mkdir(exist_ok=True)
        for f in trace_dir.glob("hops-*.txt"):
            f.unlink()
    env_extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(HERE / "src"), os.environ.get("PYTHONPATH")]
                                                      + ([str(HERE / "tests" / "browser" / "hop_trace")] if hops else []))),
                 **({"NSYS_AI_HOP_TRACE": str(trace_dir)} if hops else {}),
                 "NSYS_AI_WIDGET_WIRE": wire.split("-")[0],
                 "NSYS_AI_NODELAY": "0" if "nagle" in wire else "1",
                 "NSYS_AI_WIDGET_THREADS": "0" if "-inline" in wire else "1", "AB": ab,
                 "PAD_BYTES": str(pad), **({"CONCURRENT_PING": "1"} if concurrent else {})}
    load0 = os.getloadavg()
    cpu0 = os.times()
    t0 = time.time()
    with browser.jupyter(app, notebook(profile), out, env_extra) as (url, env):
        rc = subprocess.run(["node", str(HERE / "tests" / "browser" / "bench.mjs"), url, str(out), str(zooms),
                             str(bursts)],
                            env={**env, "CHROMIUM": os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                 "NODE_MODULES_DIR": str(browser.NODE_MODULES),
                                 **({"NSYS_AI_WS_TRACE": "1"} if hops else {})}, timeout=1800).returncode
    res = json.loads((out / "bench-result.json").read_text())
    if rc != 0 or not res.get("ok"):
        raise RuntimeError(f"{profile.name}: browser bench failed: {res.get('error')}")
    cpu1 = os.times()
    s = res["samples"]
    figs = figures(s, res["pings"], res["bursts"], res.get("padded") or [], res.get("concurrent") or [])
    if res.get("searchSteps"):  # the search box: Enter -> first match shown, then next/previous steps
        figs["search_first_match_ms"] = summary([float(x) for x in res.get("searchFirst") or []])
        figs["search_step_ms"] = summary([float(x) for x in res["searchSteps"]])
    p50 = figs["input_to_draw_ms"]["p50"]
    ping = figs["empty_message_ms"]["p50"]
    return {
        "profile": str(profile), "app": app, "wire": wire, "figures": figs,
        "frames_after_input": frames_after_input(s),
        "reply_bytes_p50": statistics.median([x["bytes"] for x in s]),
        "reply_bytes_mean": round(statistics.mean([x["bytes"] for x in s])),
        "previewed_frac": round(statistics.mean([bool(x.get("previewed")) for x in s]), 2),
        "reply_items_p50": statistics.median([x["items"] for x in s]),
        "reply_json_bytes_p50": statistics.median([x.get("rawBytes", x["bytes"]) for x in s]),
        "requests_per_burst_of_5": statistics.median([b["requests"] for b in res["bursts"]]),
        "input_to_draw_over_empty_message_p50": round(p50 / ping, 2) if ping else None,
        "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "children_cpu_s": round((cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system), 1),
        "wall_s": round(time.time() - t0, 1),
        **({"hops": hop_figures(trace_dir, res.get("wsLog") or [])} if hops else {}),
        **({"ab": {w: {**figures([x for x in s if str(x.get("format", "")).startswith(w + "/")], [], []),
                       "bytes": summary([x["bytes"] for x in s if str(x.get("format", "")).startswith(w + "/")]),
                       "frames_after_input": frames_after_input([x for x in s if str(x.get("format", "")).startswith(w + "/")]),
                       "previewed_frac": round(statistics.mean([bool(x.get("previewed")) for x in s
                                                                if str(x.get("format", "")).startswith(w + "/")] or [0]), 2),
                       "json_bytes": summary([x.get("rawBytes", x["bytes"]) for x in s
                                              if str(x.get("format", "")).startswith(w + "/")])}
                   for w in ab.split(",")}} if ab else {}),
    }


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop jupyter on `timeout` too
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, action="append")
    ap.add_argument("--app", choices=("lab", "notebook"), default="lab")
    ap.add_argument("--zooms", type=int, default=60)
    ap.add_argument("--bursts", type=int, default=10)
    ap.add_argument("--out", type=Path, default=HERE / "test-output" / "bench-widget")
    ap.add_argument("--wire", default="jsonz",
                    help="comma-separated variants, one session each: jsonz (the server's columns JSON deflated in Python, "
                         "inflated in the browser; default), json (forwarded as is); "
                         "a suffix -inline serves in the kernel's message handler instead of a worker thread, "
                         "-nagle leaves the server extension (TCP_NODELAY on kernel websockets) off")
    ap.add_argument("--ab", default="",
                    help="e.g. jsonz,json: alternate reply layouts within one page, a 22-step zoom cycle each "
                         "(the fairest comparison: same page, kernel and time); figures per layout. A suffix "
                         "+all asks for every column instead of the ones drawing needs (e.g. jsonz,json+all)")
    ap.add_argument("--hops", action="store_true",
                    help="also time each hop of the kernel -> browser leg (IOPub thread, zmq, jupyter_server, "
                         "websocket to the page) with tests/browser/hop_trace; adds a little overhead")
    ap.add_argument("--pad", type=int, default=0,
                    help="also time, after every zoom step, a ping answered with PAD bytes (no work): what the "
                         "notebook's messaging costs per byte, apart from the zoom's own work")
    ap.add_argument("--concurrent", action="store_true",
                    help="also send an empty ping right after each wheel notch, while the zoom is under way: "
                         "the messaging cost at that moment, apart from the reply's size")
    ap.add_argument("--server", help="nsys-ai binary (default $NSYS_AI_SERVER, else <repo>/build/nsys-ai)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.server:
        os.environ["NSYS_AI_SERVER"] = os.path.abspath(args.server)
    why = browser.prerequisites()
    if why:
        print(f"cannot run the widget bench: {why}")
        return 2
    if not os.environ.get("NSYS_AI_SERVER") and (REPO / "build" / "nsys-ai").exists():
        os.environ["NSYS_AI_SERVER"] = str(REPO / "build" / "nsys-ai")
    profiles = args.profile or [p for p in (Path("/tmp/vs-1m.sqlite"), Path("/tmp/vs-10m.sqlite")) if p.exists()]
    if not profiles:
        d = Path(os.environ.get("NSYS_AI_BENCH_DIR", "/tmp/nsys-ai-bench"))
        d.mkdir(parents=True, exist_ok=True)
        gen = d / "1m.sqlite"
        if not gen.exists():
            subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "--preset", "1m", "-o", str(gen)],
                           check=True)
        profiles = [gen]
    results = []
    for prof in profiles:
        for wire in args.wire.split(","):
            print(f"== {prof} ({args.app}, wire {wire}, {args.zooms} zoom steps)", flush=True)
            results.append(bench_one(prof.resolve(), args.app, args.out / f"{prof.stem}-{wire}", args.zooms,
                                     args.bursts, wire, args.ab, args.hops, args.pad, args.concurrent))

    print(f"\nwidget zoom in the browser (JupyterLab {args.app}), ms; target: one zoom round trip (round_trip_ms) "
          f"<= 30 ms; input_to_draw_ms adds the wait for the animation frame and the drawing")
    print(f"{'profile':21} {'figure':30} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    for r in results:
        name = f"{Path(r['profile']).name} {r['wire']}"
        for k, v in r["figures"].items():
            if v.get("n"):
                print(f"{name:21} {k:30} {v['p50']:8.2f} {v['p90']:8.2f} {v['p99']:8.2f} {v['max']:8.2f}")
        for w, f in (r.get("ab") or {}).items():
            for k in ("input_to_draw_ms", "round_trip_ms", "python_ms", "  pack_ms", "decode_ms", "draw_ms", "  up_ms",
                      "  kernel_ms", "  down_ms", "bytes", "json_bytes"):
                v = f[k]
                if v.get("n"):
                    print(f"{name:21} {'[' + w + '] ' + k.strip():30} {v['p50']:8.2f} {v['p90']:8.2f} {v['p99']:8.2f} {v['max']:8.2f}")
        for w, f in (r.get("ab") or {}).items():
            print(f"{name:21} [{w}] steps drawn after a stretched preview: {f['previewed_frac']:.0%}")
        for w, f in [("", r)] + list((r.get("ab") or {}).items()):
            fr = f.get("frames_after_input") or {}
            print(f"{name:21} {'[' + w + '] ' if w else ''}steps drawn 1 / 2 / 3+ frames after the input: "
                  + " / ".join(f"{fr.get(k, 0):.0%}" for k in ("1", "2", "3")))
        for kind, f in (r.get("hops") or {}).items():
            for k, v in f.items():
                if v.get("n") and k != "bytes":
                    print(f"{name:21} {'<' + kind + '> ' + k:30} {v['p50']:8.2f} {v['p90']:8.2f} {v['p99']:8.2f} {v['max']:8.2f}")
        print(f"{name:21} input->draw / empty message p50: {r['input_to_draw_over_empty_message_p50']}x; "
              f"reply {r['reply_bytes_p50']:.0f} B p50, {r['reply_bytes_mean']:.0f} B mean "
              f"({r['reply_json_bytes_p50']:.0f} B of JSON p50), previewed {r['previewed_frac']:.0%}, "
              f"{r['reply_items_p50']:.0f} items (p50); "
              f"{r['requests_per_burst_of_5']:.0f} requests per burst of 5; "
              f"load {r['loadavg_before']} -> {r['loadavg_after']}")
    line = json.dumps({"bench": "widget_zoom", "results": results})
    print(line)
    if args.json:
        args.json.write_text(json.dumps({"bench": "widget_zoom", "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
