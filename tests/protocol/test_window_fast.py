"""Windowed analyses: the O(k + log n) paths (server/src/analysis/window.h)
answer exactly what the whole-profile loops answer.

Two servers on the same profile: one as shipped, one with
NSYS_AI_WINDOW_FAST=0 (every windowed path takes its old whole-profile loop).
Both run the analyses that read windows through the fast paths (the range
panel's four, nccl_breakdown) on many windows: random ones, empty ones, one
op, edges on op starts and ends (read with independent SQL), windows past the
profile's ends, the whole span, with and without `device`; the replies must
be equal, every integer exact. Profiles: generated shapes (default, epoch
clock, negative clock, graphs, NCCL NVTX, many streams), a stream whose one
kernel outlasts hundreds of later ones (made with SQL from a generated one:
the ops still running at a window's start are found by running maxima, not a
walk back), the project's captured exports and a few real ones. Window edges
also fall on NVTX range edges (overlap's per-iteration rows).
"""
from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import PROFILES, captured_profiles, generate
from nsys_rpc import Server

ANALYSES = [("top_kernels", {"limit": 0, "names": "demangled"}), ("top_kernels", {"limit": 5}), ("overlap", {}), ("gpu_idle_gaps", {"limit": 100}), ("kernel_launch_overhead", {}),
            ("nccl_breakdown", {})]
REAL = ["nsys2026_4streams.sqlite", "nsys2022_windows_10streams.sqlite", "nsys2023_v100_julia.sqlite",
        "nsys2025_blackwell_3rows.sqlite"]


def marker_edges(path: Path) -> list[tuple[int, int]]:
    """Start and end of a few step-like NVTX ranges (the auto-detected
    iteration marker's kind), read with SQL."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "NVTX_EVENTS" not in tables:
            return []
        name = "coalesce(e.text, s.value)" if "StringIds" in tables else "e.text"
        join = "LEFT JOIN StringIds s ON e.textId = s.id" if "StringIds" in tables else ""
        return [(int(a), int(b)) for a, b in db.execute(
            f"SELECT e.start, e.end FROM NVTX_EVENTS e {join} WHERE e.end IS NOT NULL AND {name} LIKE '%step%' "
            "ORDER BY e.start LIMIT 3 OFFSET 1")]
    finally:
        db.close()


def op_edges(path: Path) -> list[int]:
    """Starts and ends of some GPU ops, read with SQL (not through the server)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        out: list[int] = []
        for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "NVTX_EVENTS"):
            if t in tables:  # NVTX: iteration markers' edges (overlap's per-iteration rows)
                for s, e in db.execute(f"SELECT start, end FROM {t} WHERE end IS NOT NULL ORDER BY start LIMIT 4000"):
                    out += [int(s), int(e)]
        return out
    finally:
        db.close()


def windows(span: tuple[int, int], edges: list[int], rng: random.Random) -> list[tuple[int, int]]:
    a, b = span
    w = [(a, b), (a - 10**9, b + 10**9), (a, a), (b, b), (a - 5, a), (b, b + 7), ((a + b) // 2, (a + b) // 2 + 1)]
    for _ in range(4):
        x, y = sorted(rng.randrange(a, b + 1) for _ in range(2))
        w.append((x, y))
    if edges:
        for _ in range(5):
            x, y = sorted(rng.choice(edges) for _ in range(2))
            w.append((x, y))  # starts and ends of ops: equal, one op, touching edges
        e = rng.choice(edges)
        w += [(e, e), (e, e + 1), (e - 1, e)]
    for f in (1e-3, 0.05, 0.5):
        s = a + rng.randrange(0, max(1, int((b - a) * (1 - f))))
        w.append((s, s + int((b - a) * f)))
    return w


def compare(path: Path, cache_dir: Path, seed: int, devices: bool = True) -> int:
    env = {"NSYS_AI_CACHE_DIR": str(cache_dir)}
    fast, slow = Server(env=env), Server(env={**env, "NSYS_AI_WINDOW_FAST": "0"})
    try:
        infos = [s.request("profile/open", {"path": str(path)}, timeout=600) for s in (fast, slow)]
        span = (infos[0]["info"]["span"]["start"], infos[0]["info"]["span"]["end"])
        rng = random.Random(seed)
        wins = windows(span, op_edges(path), rng)
        for ms, me in marker_edges(path):  # a window from a marker's end, one from its start
            wins += [(me, me + (span[1] - span[0]) // 8), (ms, me), (ms + 1, me)]
        gpus = sorted({g["id"] for g in infos[0]["info"].get("gpus", [])})
        n = 0
        for i, (a, b) in enumerate(wins):
            extra = {"device": gpus[i % len(gpus)]} if devices and gpus and i % 4 == 3 else {}
            for name, params in ANALYSES:
                req = {"name": name, "params": {**params, "start": a, "end": b, **extra}}
                got = fast.request("analysis/run", {"profileId": infos[0]["profileId"], **req})
                want = slow.request("analysis/run", {"profileId": infos[1]["profileId"], **req})
                assert got == want, f"{path.name} {name} window [{a}, {b}) {extra}"
                n += 1
        return n
    finally:
        fast.close()
        slow.close()


GENERATED = {
    "small": ["--preset", "small"],
    "epoch": ["--preset", "small", "--epoch-clock"],
    "negative": ["--preset", "small", "--negative-ts"],
    "graphs-nccl": ["--preset", "small", "--shape", "graphs,nccl-nvtx", "--kernels", "3000"],
    "streams": ["--preset", "tiny", "--shape", "streams-many", "--kernels", "3000"],
}


@pytest.mark.parametrize("shape", sorted(GENERATED))
def test_generated_shapes(shape, generated_dir, cache_dir):
    p = generate(generated_dir / f"window-{shape}.sqlite", *GENERATED[shape])
    assert compare(p, cache_dir, seed=len(shape)) > 50


def union_len(ivs: list[tuple[int, int]], a: int, b: int) -> int:
    """Length of the union of the intervals clipped to [a, b)."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted((max(s, a), min(e, b)) for s, e in ivs if e > a and s < b):
        if cur_e is None or s > cur_e:
            total += (cur_e - cur_s) if cur_e is not None else 0
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + ((cur_e - cur_s) if cur_e is not None else 0)


def test_long_op_outlasting_its_stream(generated_dir, cache_dir):
    """One kernel whose end passes hundreds of later kernels of its stream:
    a window starting inside it sees it (overlap's span, the busy unions),
    against SQL (the old windowed unions walked back 64 ops and missed it)."""
    src = generate(generated_dir / "window-small.sqlite", *GENERATED["small"])
    p = generated_dir / "window-long-op.sqlite"
    if not p.exists():
        shutil.copy(src, p)
        db = sqlite3.connect(p)
        dev, stream = db.execute("SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                 "GROUP BY deviceId, streamId ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
        rows = db.execute("SELECT rowid, start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId=? AND streamId=? "
                          "ORDER BY start", (dev, stream)).fetchall()
        assert len(rows) > 400
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end=? WHERE rowid=?", (rows[300][1] + 5, rows[10][0]))
        db.commit()
        db.close()
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    (s, e, dev), = db.execute("SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY end - start DESC LIMIT 1")
    kernels = db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId=?", (dev,)).fetchall()
    db.close()
    with Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)}) as srv:
        pid = srv.request("profile/open", {"path": str(p)})["profileId"]
        for a, b in (((s + e) // 2, e + 1000), (s + 1, (s + e) // 2), (e - 1, e + 10**7)):
            params = {"start": a, "end": b, "device": dev}
            ov = srv.request("analysis/run", {"profileId": pid, "name": "overlap", "params": params})
            assert ov["rows"][0]["start"] == a
            tk = srv.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": params})
            assert tk["summary"]["gpuBusyNs"] == union_len(kernels, a, b)
            gaps = srv.request("analysis/run", {"profileId": pid, "name": "gpu_idle_gaps", "params": params})
            assert gaps["summary"]["devices"][0]["start"] == a


@pytest.mark.parametrize("name", ["captured"] + REAL)
def test_real_exports(name, cache_dir):
    if name == "captured":
        paths = captured_profiles()[:2]
    else:
        if not PROFILES.is_dir():
            pytest.skip(f"real profiles not available: {PROFILES} is absent")
        if not (PROFILES / name).exists():
            pytest.skip(f"real profile {name} not found in {PROFILES}")
        paths = [PROFILES / name]
    for p in paths:
        compare(p, cache_dir, seed=3)
