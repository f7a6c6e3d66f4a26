"""Gap phases (analysis/gap_phase.c, docs/analyses.md "gpu_idle_gaps"): on the
project's own H200 captures, the long idle gaps that are not steady-state
bubbles get their phase, checked against independent SQL, and the report
gives the phase's advice instead of the bubble's. The generated example's
planted bubbles stay bubbles."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import check_schema, generate, real_path
from nsys_rpc import server_binary

ENV = {**os.environ, "NSYS_AI_NO_PROGRESS": "1"}


def run(*args: str):
    r = subprocess.run([server_binary(), *args, "--format", "json"], capture_output=True, timeout=300, env=ENV)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


def device_gaps(path: Path) -> list[dict]:
    rows = run("analyze", "gpu_idle_gaps", str(path))["rows"]
    return [r for r in rows if r["stream"] is None]


def sql(path: Path, q: str, *args):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(q, args).fetchall()
    finally:
        con.close()


def ops_sql(path: Path, cols: str = "start, globalPid, correlationId") -> str:
    """Every GPU op (kernels, copies, sets: whichever tables the export has)."""
    have = {r[0] for r in sql(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    parts = [f"SELECT {cols} FROM {t}" for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                                   "CUPTI_ACTIVITY_KIND_MEMSET") if t in have]
    return "(" + " UNION ALL ".join(parts) + ")"


def test_two_executables_gap_is_a_process_switch():
    p = real_path("h200_vecadd_two_exes.sqlite")
    big = max(device_gaps(p), key=lambda r: r["durationNs"])
    assert big["phase"] == "process_switch", big
    # independent: the gap ends where the second process's first GPU op starts
    firsts = sql(p, f"SELECT globalPid, MIN(start) FROM {ops_sql(p)} GROUP BY globalPid ORDER BY 2")
    assert len(firsts) == 2
    assert big["end"] == firsts[1][1]
    assert big["phasePid"] == firsts[1][0] >> 24 & 0xFFFFFF
    rep = run("report", str(p))
    ids = [f["id"] for f in rep["findings"]]
    assert "gpu_idle_process_switch" in ids and "gpu_bubbles" not in ids, ids
    check_schema("report/generate", "result", rep)


def test_jit_gaps_are_first_launches():
    p = real_path("h200_pykernels.sqlite")
    gaps = device_gaps(p)
    first = dict((name, start) for name, start in sql(
        p, "SELECT s.value, MIN(k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
           " GROUP BY s.value"))
    long_ = [g for g in gaps if g["durationNs"] >= 10_000_000]
    assert len(long_) >= 3
    for g in long_:
        assert g["phase"] == "first_launch", g
        assert first[g["firstLaunch"]] == g["end"], g  # its kernel's first launch ends the gap
    assert any(g["firstLaunch"].startswith("triton_") for g in long_)
    rep = run("report", str(p))
    f = [x for x in rep["findings"] if x["id"] == "gpu_idle_first_launch"]
    assert f and "JIT" in f[0]["recommendation"]
    jit_ns = sum(g["durationNs"] for g in gaps if g["phase"] == "first_launch")
    for x in rep["findings"]:  # what is left of the idle time is not the compilation's
        if x["id"] == "gpu_bubbles":
            assert x["evidence"]["idleNs"] < jit_ns / 100 and "largestGap" not in x["evidence"], x
            assert "data loading" not in x["recommendation"].lower()


def test_setup_before_first_step_is_startup():
    p = real_path("h200_gpt_train.sqlite")
    big = max(device_gaps(p), key=lambda r: r["durationNs"])
    assert big["phase"] == "startup", big
    # independent: the first train_step range and the first GPU op launched inside it
    (s0, e0), = sql(p, "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
                       " WHERE COALESCE(n.text, s.value) LIKE 'train_step%' ORDER BY n.start LIMIT 1")
    (gpu0,), = sql(p, f"SELECT MIN(k.start) FROM {ops_sql(p)} k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
                      " ON r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> 24"
                      " WHERE r.start >= ? AND r.end <= ?", s0, e0)
    assert big["end"] <= gpu0 == big["firstIterationStart"]
    rep = run("report", str(p))
    f = [x for x in rep["findings"] if x["id"] == "gpu_idle_startup"]
    assert f and f[0]["evidence"]["window"]["end"] == big["end"]
    for x in rep["findings"]:  # the set-up gap is nowhere called a checkpoint stall
        if x["id"] == "gpu_bubbles":
            assert x["evidence"]["largestGap"]["start"] != big["start"]


def test_planted_bubbles_stay_steady(generated_dir):
    """The generator's data-loader stalls and checkpoint stall come after its
    first train_step: steady bubbles, reported as before."""
    p = generate(generated_dir / "phases.sqlite", "--preset", "small")
    gaps = device_gaps(p)
    assert gaps
    longest = max(gaps, key=lambda r: r["durationNs"])
    assert longest["phase"] == "steady", longest
    assert "gpu_bubbles" in [f["id"] for f in run("report", str(p))["findings"]]


@pytest.mark.parametrize("name", ["h200_cudawork.sqlite"])
def test_phase_totals_match_rows(name):
    p = real_path(name)
    res = run("analyze", "gpu_idle_gaps", str(p), "--param", "limit=0")
    for d in res["summary"]["devices"]:
        rows = [r for r in res["rows"] if r["device"] == d["device"] and r["stream"] is None]
        for phase, ns in d["phaseNs"].items():
            assert ns == sum(r["durationNs"] for r in rows if r["phase"] == phase)
            assert d["phaseGaps"][phase] == sum(1 for r in rows if r["phase"] == phase)
