"""NVTX nesting of any depth: a kernel launched inside a range whose nearest
enclosing range is thousands of levels up its thread's parent chain is still
attributed to that range (analyses once walked at most 1024 ancestors and
then silently dropped, or misattributed, the kernel).

A generated profile is copied and changed with SQL: one more launch, on a
thread of its own, inside 'outer_deep'; inside 'outer_deep' but before the
launch, a chain of DEPTH nested ranges that all end before the call starts.
The last range starting before the call is the innermost of that chain, so
the innermost range holding the call is DEPTH levels up from it."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import generate
from test_analysis_real import analyze

DEPTH = 3000
K = "CUPTI_ACTIVITY_KIND_KERNEL"
RT = "CUPTI_ACTIVITY_KIND_RUNTIME"


@pytest.fixture(scope="module")
def deep(generated_dir) -> tuple[Path, Path, int, str]:
    """(original, modified, duration of the added kernel, its short name)."""
    src = generate(generated_dir / "tiny.sqlite", "--preset", "tiny")
    dst = generated_dir / "nvtx_deep_chain.sqlite"
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    db = sqlite3.connect(dst)
    corr_old, ks, ke, gpid, short = db.execute(
        f"SELECT k.correlationId, k.start, k.end, k.globalPid, s.value FROM {K} k "
        "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start LIMIT 1").fetchone()
    s, e, gtid = db.execute(f"SELECT start, end, globalTid FROM {RT} WHERE correlationId = ? "
                            "AND (globalTid & ~0xFFFFFF) = ?", (corr_old, gpid)).fetchone()
    new_tid = (gtid & ~0xFFFFFF) | 0xABCDE  # a thread of the same process with no other activity
    corr = db.execute(f"SELECT MAX(correlationId) + 1 FROM {RT}").fetchone()[0]
    for tbl, cond in ((RT, "globalTid = ?"), (K, "globalPid = (? & ~0xFFFFFF)")):
        db.execute(f"CREATE TEMP TABLE c AS SELECT * FROM {tbl} WHERE correlationId = ? AND {cond}", (corr_old, gtid))
        db.execute("UPDATE c SET correlationId = ?", (corr,))
        if tbl == RT:
            db.execute("UPDATE c SET globalTid = ?", (new_tid,))
        db.execute(f"INSERT INTO {tbl} SELECT * FROM c")
        db.execute("DROP TABLE c")
    rows = [(s - 2 * DEPTH - 1000, e + 1000, "outer_deep")]
    rows += [(s - 2 * DEPTH + i, s - 1 - i, f"deep_{i}") for i in range(DEPTH)]
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid) "
                   "VALUES (?, ?, 59, ?, ?, NULL)", [(a, b, t, new_tid) for a, b, t in rows])
    db.commit()
    db.close()
    return src, dst, ke - ks, short


def test_kernel_attributed_through_a_deep_chain(deep):
    src, dst, dur, short = deep
    before = analyze("nvtx_summary", src, limit=0)["summary"]
    res = analyze("nvtx_summary", dst, limit=0)
    rows = {r["name"]: r for r in res["rows"]}
    assert rows["outer_deep"]["count"] == 1
    assert rows["outer_deep"]["kernelNs"] == dur > 0
    assert rows["outer_deep"]["gpuProjectedNs"] == dur
    assert rows["outer_deep"]["rangesWithGpuWork"] == 1
    assert all(rows[f"deep_{i}"]["kernelNs"] == 0 for i in range(DEPTH))
    assert res["summary"]["ranges"] == before["ranges"] + DEPTH + 1
    assert res["summary"]["kernels"] == before["kernels"] + 1
    assert res["summary"]["kernelsInNvtx"] == before["kernelsInNvtx"] + 1
    pairs = {(m["kernel"], m["nvtx"]): m["count"] for m in res["summary"]["kernelToNvtx"]}
    assert not any(n.startswith("deep_") for _, n in pairs)
    if len(res["summary"]["kernelToNvtx"]) < 50:
        assert pairs[(short, "outer_deep")] == 1

