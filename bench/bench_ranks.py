#!/usr/bin/env python3
"""Rank sets at scale (issue 23): a generated job of R rank files (tools/gen_profile.py
--rank-files, K kernels per rank, NCCL payloads, a planted straggler and node clock
offsets), then through `nsys-ai serve`:

  open cold     profile/openSet with an empty cache directory (every file indexed)
  open cached   profile/openSet in a new server on the same cache directory
  stragglers    set/stragglers (all event pages), collectives (set/collectives, all
                pages), nccl (set/nccl)
  peak RSS      the server's VmHWM after each open
  per rank      `nsys-ai rank-summary FILE` cold and cached (one worker's map task),
                set/reduce of the R gathered summaries, as JSON columns (up to 100k kernels
                per rank: past that the JSON does not fit this machine's memory in Python)
                and packed (--packed) in one request (a server with a 1 GiB frame limit), and
                packed in pieces under the default 64 MiB frame limit (set/reduce partial/
                partialId, as the Python client sends them): the same set (checked)

and prints ONE table, plus a projection of R' ranks on a Dask cluster of W workers
from the measured per-rank costs: ceil(R'/W) x map task + reduce x (R'/R) (the reduce
is O(n log n) in the set's collectives: linear is the honest bound to state), with the
share of the reduce that is carrying and parsing the summaries' JSON (measured by
sending the same bytes to set/close, which ignores them).

usage: bench/bench_ranks.py [--ranks 64] [--kernels-per-rank 20000] [--dir /tmp/nsys-ai-ranks]
                            [--project 1024] [--workers 64] [--threads N] [--budget-mb N]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
sys.path.insert(0, str(REPO / "clients" / "jupyter" / "src"))

from nsys_rpc import Server, server_binary  # noqa: E402
from nsys_ai_native.ranks import _pieces  # noqa: E402  (the client's own piecing)


def vm_hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def generate(d: Path, ranks: int, kpr: int) -> list[str]:
    out = d / f"r{ranks}-k{kpr}"
    files = [str(out / f"rank{r}.sqlite") for r in range(ranks)]
    if all(os.path.exists(f) for f in files):
        return files
    iters = max(8, min(60, kpr // 1500))
    t = time.perf_counter()
    # the generator's fast path: 2 simulated ranks, the others copied from them in SQL (derive_ranks)
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(d / f"all-{ranks}-{kpr}.sqlite"),
                    "--preset", "small", "--kernels", str(kpr * 2), "--iterations", str(iters), "--shape", "nccl-nvtx",
                    "--rank-files", str(out), "--derive-ranks", str(ranks), "--ranks-per-node", "8",
                    "--node-offset-ns", "1500000", "--straggler-rank", str(ranks // 3)], check=True)
    os.remove(d / f"all-{ranks}-{kpr}.sqlite")
    print(f"  generated {ranks} rank files (2 simulated, {ranks - 2} derived) in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    return files


def call(srv: Server, method: str, params: dict, timeout: float = 3600) -> dict:
    """A request without the test client's schema validation (not what is measured)."""
    reply = srv.wait_reply(srv.start(method, params), timeout)
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']}")
    return reply["result"]


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, (time.perf_counter() - t) * 1000


def all_pages(srv: Server, method: str, params: dict, key: str) -> int:
    res = call(srv, method, {**params, "limit": 100000})
    n = len(res[key])
    while res.get("next"):
        res = call(srv, method, {**params, "limit": 100000, "cursor": res["next"]})
        n += len(res[key])
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--kernels-per-rank", type=int, default=20000)
    ap.add_argument("--dir", default="/tmp/nsys-ai-ranks")
    ap.add_argument("--project", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--budget-mb", type=int)
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    files = generate(d, a.ranks, a.kernels_per_rank)
    size_mb = sum(os.path.getsize(f) for f in files) / 2**20
    params: dict = {"paths": files}
    if a.threads:
        params["threads"] = a.threads
    if a.budget_mb:
        params["memoryBudgetMb"] = a.budget_mb
    cache = Path(tempfile.mkdtemp(prefix="nsys-ai-ranks-cache-"))
    env = {"NSYS_AI_CACHE_DIR": str(cache)}
    rows = []
    try:
        with Server(env=env) as srv:
            info, t_cold = timed(lambda: call(srv, "profile/openSet", params))
            rss_cold = vm_hwm_mb(srv.proc.pid)
            sid = info["setId"]
            n_ev, t_st = timed(lambda: all_pages(srv, "set/stragglers", {"setId": sid}, "events"))
            n_co, t_co = timed(lambda: all_pages(srv, "set/collectives", {"setId": sid}, "rows"))
            nc, t_nc = timed(lambda: call(srv, "set/nccl", {"setId": sid}))
        time.sleep(0.5)  # index cache saves are waited for at exit
        with Server(env=env) as srv:
            info2, t_warm = timed(lambda: call(srv, "profile/openSet", params))
            rss_warm = vm_hwm_mb(srv.proc.pid)
            assert all(f["cached"] for f in info2["files"]), "cached open did not read the caches"
        # one worker's map task, cold then cached, and the reduce of every summary
        bin_ = server_binary()
        one = files[0]
        cold_cache = Path(tempfile.mkdtemp(prefix="nsys-ai-ranks-one-"))
        e1 = {**os.environ, "NSYS_AI_CACHE_DIR": str(cold_cache)}
        _, t_map_cold = timed(lambda: subprocess.run([bin_, "rank-summary", one], env=e1, check=True,
                                                     capture_output=True))
        _, t_map_warm = timed(lambda: subprocess.run([bin_, "rank-summary", one], env=e1, check=True,
                                                     capture_output=True))
        shutil.rmtree(cold_cache, ignore_errors=True)
        def gather(*flags: str) -> list:
            out = []
            for f in files:
                text = subprocess.run([bin_, "rank-summary", f, *flags], env={**os.environ, **env}, check=True,
                                      capture_output=True, text=True).stdout
                out += json.loads(text)["summaries"]
            return out
        with_json = a.kernels_per_rank <= 100_000
        sums, packed = gather() if with_json else [], gather("--packed")
        t_carry = t_red = sum_mb = float("nan")
        # at 64 x 1M the summaries (hundreds of MB of JSON) exceed the default 64 MiB frame
        with Server("--max-frame-bytes", str(1 << 30), env=env) as srv:
            # the same bytes to a method that ignores them: what carrying and parsing the JSON costs
            if with_json:
                _, t_carry = timed(lambda: call(srv, "set/close", {"setId": "none", "summaries": sums}))
                _, t_red = timed(lambda: call(srv, "set/reduce", {"summaries": sums}))
                sum_mb = len(json.dumps(sums)) / 2**20
            _, t_pcarry = timed(lambda: call(srv, "set/close", {"setId": "none", "summaries": packed}))
            red_p, t_pred = timed(lambda: call(srv, "set/reduce", {"summaries": packed}))
            rss_red = vm_hwm_mb(srv.proc.pid)
            assert red_p["collectives"] == info["collectives"], "the packed summaries reduce to another set"
        del sums
        # the same summaries in pieces under the default frame limit, as the Python client sends them
        with Server(env=env, initialize=False) as srv:
            limit = call(srv, "initialize", {"processId": os.getpid(), "capabilities": {}})["capabilities"]["maxFrameBytes"]
            srv.notify("initialized", {})
            def in_pieces() -> tuple[dict, int]:
                pid = None
                pieces = _pieces(packed, limit)
                for piece in pieces[:-1]:
                    pid = call(srv, "set/reduce", {"summaries": piece, "partial": True,
                                                   **({"partialId": pid} if pid else {})})["partialId"]
                return call(srv, "set/reduce", {"summaries": pieces[-1], **({"partialId": pid} if pid else {})}), \
                    len(pieces)
            (red_pieces, n_pieces), t_pieces = timed(in_pieces)
            rss_pieces = vm_hwm_mb(srv.proc.pid)
            assert {**red_pieces, "setId": None} == {**red_p, "setId": None}, "the pieces reduce to another set"
        psum_mb = len(json.dumps(packed)) / 2**20
        del packed
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    colls = info["collectives"]["count"]
    rows = [
        ("rank files", f"{a.ranks} x {a.kernels_per_rank} kernels ({size_mb:.0f} MB)"),
        ("threads / budget", f"{info['parallel']['threads']} / {info['parallel']['memoryBudgetMb']} MB"
                             f" (kept open: {info['parallel']['keptOpen']})"),
        ("collectives matched", f"{colls} by {info['collectives']['matchedBy']}, {n_ev} late events, "
                                f"straggler {info['stragglers']['straggler']}, clock {info['clock']['method']}"),
        ("open cold", f"{t_cold:.0f} ms, peak RSS {rss_cold:.0f} MB"),
        ("open cached", f"{t_warm:.0f} ms, peak RSS {rss_warm:.0f} MB"),
        ("set/stragglers (all pages)", f"{t_st:.0f} ms"),
        ("set/collectives (all pages)", f"{t_co:.0f} ms ({n_co} rows)"),
        ("set/nccl", f"{t_nc:.0f} ms ({len(nc['rows'])} rows)"),
        ("map task (rank-summary) cold / cached", f"{t_map_cold:.0f} / {t_map_warm:.0f} ms"),
        ("set/reduce of all summaries", f"{t_red:.0f} ms ({sum_mb:.1f} MB of JSON; the same bytes to set/close: "
                                        f"{t_carry:.0f} ms)" if with_json else "not measured (over 100k kernels per rank)"),
        ("set/reduce of all summaries, packed", f"{t_pred:.0f} ms ({psum_mb:.1f} MB of JSON; the same bytes to "
                                                f"set/close: {t_pcarry:.0f} ms), peak RSS {rss_red:.0f} MB"),
        ("set/reduce packed, in pieces under 64 MiB", f"{t_pieces:.0f} ms in {n_pieces} requests, peak RSS "
                                                      f"{rss_pieces:.0f} MB (the same set)"),
    ]
    waves = math.ceil(a.project / a.workers)
    scale = a.project / a.ranks
    t_red, t_carry, sum_mb = t_pred, t_pcarry, psum_mb  # the projection: the packed form Dask sends
    proj = waves * t_map_cold + t_red * scale
    rows.append((f"projection: {a.project} ranks on {a.workers} Dask workers",
                 f"{proj / 1000:.1f} s cold ({waves} waves x {t_map_cold:.0f} ms map + reduce {t_red * scale / 1000:.1f} s, "
                 f"of which {t_carry * scale / 1000:.1f} s carrying {sum_mb * scale:.0f} MB of summaries), "
                 f"at {a.kernels_per_rank} kernels per rank"))
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  value")
    for k, v in rows:
        print(f"{k:<{w}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
