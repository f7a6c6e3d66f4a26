#!/usr/bin/env python3
"""The timeline widget's first frame and interactions, measured in a real JupyterLab 4 (or Notebook 7).

    python bench_widget_ux.py [--app lab|notebook] [--first PROFILE] [--interact PROFILE]
                              [--runs N] [--rounds N] [--skip first|interact] [--json OUT]

first frame (default PROFILE /tmp/nsys-ai-bench/default-1000000-s1.sqlite): per run a fresh kernel,
then the cell `nsys_ai_native.open(P).show()` (open included) and, in the same kernel, the cell
`p.show()` (p opened by the cell before): from just before the cell's execute request to the end of
the widget's first complete frame (every visible row drawn from data answered for that view at that
width). One clock: wall-clock ms in the page (performance.timeOrigin + now()) and in the kernel
(time.time()), one machine. "cached": the index in NSYS_AI_CACHE_DIR (default ~/.cache/nsys-ai;
an untimed warm-up run builds it if needed); "cold": a fresh NSYS_AI_CACHE_DIR per run (the index
is built). The stages: execute request -> open starts (messaging, kernel), open, show's
timeline/tracks, -> the widget renders (comm open, display, widget module load), -> first range
request sent (layout), -> its reply decoded, -> drawn.

interactions (default PROFILE /tmp/nsys-ai-bench/default-10000000-s1.sqlite, index cached): real
input events (Playwright) on the widget, from the event's timeStamp to the moment the widget's DOM
shows the result: zoom (Ctrl+wheel, W/S, +/- buttons) and pan (A/D, wheel, drag) -> the new view
drawn with its data; hover -> the tooltip with its details; click on a GPU op -> its details panel;
a drag on the time axis -> the window's analyses; a click on a row group's label -> the rows drawn,
every one with its data. p50/p90 per kind. A benchmark, not a test. Prints a table and one JSON line.
A wheel sent over CDP waits in the browser for the renderer's next frame before it is forwarded (a
person's does not): each wheel input also gives that hold ([CDP hold]) and its figures as a person's
wheel ([dispatch, a person's wheel], (shown) [a person's wheel]), read from a small trace kept on
while the interactions run (BENCH_WHEEL_TRACE=0: off); `floor: ctrl+wheel, trivial listener` is the
same input on a plain element over JupyterLab's page (README.md, benchmark section).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE / "tests" / "browser"))

import run as browser  # noqa: E402  (tests/browser/run.py: the jupyter server helper)
from bench_widget import summary  # noqa: E402

BENCH = Path(os.environ.get("NSYS_AI_BENCH_DIR", "/tmp/nsys-ai-bench"))
STAGES = (("request -> open", None, "open"), ("open", "open", "opened"), ("-> show (widget module import)", "opened", "show"),
          ("show: span + tracks", "show", "tracks"), ("show: first view answered (sent with the widget)", "tracks", "first"),
          ("-> widget rendered", "tracks", "render"), ("  (module loaded)", "tracks", "module"),
          ("rendered -> drawn", "render", "drawn"), ("  (first view decoded)", "render", "initial"),
          ("  (laid out)", "render", "layout"),
          ("-> range sent", "render", "sent"), ("range round trip", "sent", "decoded"), ("-> drawn", "decoded", "drawn"))


def first_notebook(profile: Path) -> dict:
    return _nb(["import nsys_ai_native",  # the page sets it per run (cold: a fresh cache; preload on/off)
                f"nsys_ai_native.open({str(profile)!r}).show(height=420)",
                f"p = nsys_ai_native.open({str(profile)!r})",
                "p.show(height=420)",
                FLOOR_CLASS,
                "_Floor()"])


# JupyterLab's own floor for a widget's first frame: a trivial anywidget (no data, no messages),
# shown the same way; its front end stamps the module's evaluation, its render and the next frame
FLOOR_ESM = """const at = () => performance.timeOrigin + performance.now();
const module = at();
export default { render({ el }) {
  el.className = "nsys-floor"; el.textContent = "floor"; el.dataset.module = module; el.dataset.render = at();
  requestAnimationFrame(() => { el.dataset.drawn = at(); });
} };"""
FLOOR_CLASS = f"import anywidget\nclass _Floor(anywidget.AnyWidget):\n    _esm = {FLOOR_ESM!r}\n"


def interact_notebook(profile: Path, before: bool = False) -> dict:
    return _nb([("import os, sys\nsys.path.insert(0, os.environ['BENCH_BEFORE'])\n" if before else "") +
                "import nsys_ai_native\n"
                f"p = nsys_ai_native.open({str(profile)!r})\n"
                "w = p.show(height=420)\n"
                "w"])


def _nb(cells: list[str]) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": src} for i, src in enumerate(cells)]}


def drive(app: str, nb: dict, out: Path, mode: str, n: int, extra: dict | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env_extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(HERE / "src"), os.environ.get("PYTHONPATH")])),
                 **(extra or {})}
    with browser.jupyter(app, nb, out, env_extra) as (url, env):
        rc = subprocess.run(["node", str(HERE / "tests" / "browser" / "bench_ux.mjs"), url, str(out), mode, str(n)],
                            env={**env, "CHROMIUM": os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                 "NODE_MODULES_DIR": str(browser.NODE_MODULES)}, timeout=3600).returncode
    res = json.loads((out / "bench-ux.json").read_text())
    if rc != 0 or not res.get("ok"):
        raise RuntimeError(f"browser bench ({mode}) failed: {res.get('error')}")
    return res


def first_figures(runs: list[dict]) -> dict:
    """p50/p90 of the first frame and its stages per variant and cell (ms from the execute request)."""
    out: dict = {}
    for variant in dict.fromkeys(r["variant"] for r in runs):
        for cell, key, stages in (("open+show", "openShow", STAGES), ("show", "show", (("request -> show", None, "show"),) + STAGES[3:])):
            rs = [r[key] for r in runs if r["variant"] == variant and r.get(key)]
            if not rs:
                continue
            fig = {"first_frame_ms": summary([x["drawn"] for x in rs])}
            for label, a, b in stages:
                vals = [x[b] - (x[a] if a else 0) for x in rs if x.get(b) is not None and (a is None or x.get(a) is not None)]
                if vals:
                    fig[label] = summary(vals)
            out[f"{cell} {variant}"] = fig
        floors = [r["floor"] for r in runs if r["variant"] == variant and r.get("floor")]
        if floors:
            out[f"trivial anywidget {variant}"] = {"first_frame_ms": summary([f["drawn"] for f in floors]),
                                                   "(module loaded)": summary([f["module"] for f in floors]),
                                                   "(rendered)": summary([f["render"] for f in floors])}
    return out


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", choices=("lab", "notebook"), default="lab")
    ap.add_argument("--first", type=Path, default=BENCH / "default-1000000-s1.sqlite")
    ap.add_argument("--interact", type=Path, default=BENCH / "default-10000000-s1.sqlite")
    ap.add_argument("--runs", type=int, default=5, help="first-frame runs per scenario (cached and cold)")
    ap.add_argument("--variants", default="cached,cold,cached-nopreload,cold-nopreload",
                    help="first-frame variants, alternated run by run: cached / cold index; -nopreload: the widget "
                         "module imported by show() (NSYS_AI_WIDGET_PRELOAD=0), the comparison; -nofirst: the first "
                         "view not sent with the widget (NSYS_AI_WIDGET_FIRST=0: asked by the page); -firstz: the first "
                         "view deflated (NSYS_AI_WIDGET_FIRST_WIRE=jsonz); @before: the client in --before")
    ap.add_argument("--before", type=Path, help="the `src` folder of another checkout's client (its widget bundle built): "
                    "first-frame variants with '@before' import it, and the interactions run with it first, then with "
                    "this one (the comparison, in one run)")
    ap.add_argument("--rounds", type=int, default=12, help="interaction rounds (each: every kind of input)")
    ap.add_argument("--skip", choices=("first", "interact"))
    ap.add_argument("--out", type=Path, default=HERE / "test-output" / "bench-widget-ux")
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
    res: dict = {"bench": "widget_ux", "app": args.app, "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    t0 = time.time()
    before_env = {"BENCH_BEFORE": str(args.before.resolve())} if args.before else {}
    if args.skip != "first":
        if not args.first.exists():
            print(f"no profile {args.first}: tools/gen_profile.py --kernels 1000000 -o {args.first}")
            return 2
        cold_root = Path(tempfile.mkdtemp(prefix="nsys-ai-cold-"))
        try:
            r = drive(args.app, first_notebook(args.first.resolve()), args.out / "first", "first", args.runs,
                      {"BENCH_COLD_ROOT": str(cold_root), "VARIANTS": args.variants, **before_env})
        finally:
            shutil.rmtree(cold_root, ignore_errors=True)
        res["first"] = {"profile": str(args.first), "runs": r["runs"], "figures": first_figures(r["runs"])}
        res["loadavg_after_first"] = [round(x, 2) for x in os.getloadavg()]
    if args.skip != "interact":
        if not args.interact.exists():
            print(f"no profile {args.interact}: tools/gen_profile.py --kernels 10000000 -o {args.interact}")
            return 2
        if args.before:
            r = drive(args.app, interact_notebook(args.interact.resolve(), True), args.out / "interact-before", "interact",
                      args.rounds, before_env)
            res["interact_before"] = {"profile": str(args.interact), "src": str(args.before), "misses": r.get("misses") or {},
                                      "figures": {k: summary(v) for k, v in sorted(r["samples"].items())}}
            res["loadavg_after_before"] = [round(x, 2) for x in os.getloadavg()]
        r = drive(args.app, interact_notebook(args.interact.resolve()), args.out / "interact", "interact", args.rounds)
        res["interact"] = {"profile": str(args.interact), "misses": r.get("misses") or {},
                           "figures": {k: summary(v) for k, v in sorted(r["samples"].items())}}
    res["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    res["wall_s"] = round(time.time() - t0, 1)

    print(f"\nJupyter{'Lab' if args.app == 'lab' else ' Notebook 7'} timeline widget, ms "
          f"(load {res['loadavg_before']} -> {res['loadavg_after']})")
    print(f"{'':38} {'n':>3} {'p50':>8} {'p90':>8} {'max':>8}")
    for scen, fig in (res.get("first") or {}).get("figures", {}).items():
        for k, v in fig.items():
            label = f"{scen}: first frame" if k == "first_frame_ms" else f"  {k}"
            print(f"{label:38} {v['n']:3d} {v['p50']:8.1f} {v['p90']:8.1f} {v['max']:8.1f}")
    old = (res.get("interact_before") or {}).get("figures", {})
    if old:
        print(f"{'interactions (before | after)':38} {'n':>3} {'p50':>8} {'p90':>8} | {'n':>3} {'p50':>8} {'p90':>8}")
    for k in sorted(set((res.get("interact") or {}).get("figures", {})) | set(old)):
        v = (res.get("interact") or {}).get("figures", {}).get(k)
        after = f"{v['n']:3d} {v['p50']:8.1f} {v['p90']:8.1f}" if v else f"{'-':>3} {'-':>8} {'-':>8}"
        if old:
            o = old.get(k)
            print(f"{k:38} " + (f"{o['n']:3d} {o['p50']:8.1f} {o['p90']:8.1f}" if o else f"{'-':>3} {'-':>8} {'-':>8}") + f" | {after}")
        else:
            print(f"{k:38} {after} {v['max'] if v else 0:8.1f}")
    if (res.get("interact") or {}).get("misses"):
        print(f"inputs that showed nothing (timed out, not counted): {res['interact']['misses']}")
    print(json.dumps({k: v for k, v in res.items() if k != "first"} | {"first": {k: v for k, v in (res.get("first") or {}).items()
                                                                               if k != "runs"}}))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
