"""sync_cost's gpuSyncEvents (the synchronization table grouped by syncType)
and wallSyncNs against independent SQL and Python, on a tiny generated
profile copied and changed with SQL: the usual integer types (summed in C),
NULL types and NULL ends, types beyond the fast path's range, negative types
and REAL times (grouped by SQL), with and without a window and a device."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import analysis_ref as ref
from conftest import generate
from test_analysis_real import analyze

SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
LABELS = ["unknown", "event_sync", "stream_wait_event", "stream_sync", "context_sync"]


@pytest.fixture(scope="module")
def tiny(generated_dir) -> Path:
    return generate(generated_dir / "tiny.sqlite", "--preset", "tiny")


@pytest.fixture(scope="module")
def four_gpus(generated_dir) -> Path:
    """4 processes, each with a thread of sync calls."""
    return generate(generated_dir / "sync-4gpu.sqlite", "--preset", "tiny", "--gpus", "4", "--kernels", "2000")


def loose_copy(src: Path, dst: Path, extra: list[tuple]) -> Path:
    """src with its synchronization table re-created without NOT NULL and
    `extra` rows (syncType, start, end, deviceId) appended."""
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    db = sqlite3.connect(dst)
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({SYNC})")]
    db.execute(f"ALTER TABLE {SYNC} RENAME TO old_sync")
    db.execute(f"CREATE TABLE {SYNC} ({', '.join(cols)})")
    db.execute(f"INSERT INTO {SYNC} SELECT * FROM old_sync")
    db.execute("DROP TABLE old_sync")
    fill = {c: 0 for c in cols}
    for t, s, e, dev in extra:
        row = {**fill, "syncType": t, "start": s, "end": e, "deviceId": dev}
        db.execute(f"INSERT INTO {SYNC} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                   [row[c] for c in cols])
    db.commit()
    db.close()
    return dst


def expected_events(path: Path, t0: int, t1: int, device: int | None) -> list[dict]:
    """The groups as SQL's GROUP BY syncType makes them; a NULL type reads as 0."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    where = "start >= ? AND start < ?" + (" AND deviceId = ?" if device is not None else "")
    args = [t0, t1] + ([device] if device is not None else [])
    out = []
    for t, n, total in db.execute(f'SELECT syncType, COUNT(*), SUM("end" - start) FROM {SYNC} WHERE {where} '
                                  "GROUP BY syncType ORDER BY syncType", args):
        t = int(t or 0)
        out.append({"syncType": t, "label": LABELS[t] if 0 <= t < 5 else "unknown", "count": n,
                    "totalNs": int(total or 0)})
    db.close()
    return out


def check(path: Path, **params) -> dict:
    res = analyze("sync_cost", path, **params)
    w = res["window"]
    got = res["summary"]["gpuSyncEvents"]
    assert got == expected_events(path, w["start"], w["end"], params.get("device")), params
    return res


def test_integer_types_and_window(tiny):
    res = check(tiny)
    assert res["summary"]["gpuSyncEvents"], "the tiny profile has synchronization rows"
    w = res["window"]
    mid = (w["start"] + w["end"]) // 2
    check(tiny, start=w["start"], end=mid)
    check(tiny, device=0)


@pytest.mark.parametrize("case,extra", [
    ("null-type-and-end", [(None, 10, 20, 0), (None, 30, 35, 0), (3, 40, None, 0), (7, 50, 90, 0), (63, 1, 2, 0)]),
    ("type-64", [(64, 10, 20, 0), (2, 30, 31, 0), (None, 5, 6, 0)]),
    ("negative-type", [(-1, 10, 20, 0), (4, 30, 40, 0)]),
    ("real-end", [(2, 10, 20.5, 0), (2, 30, 40, 0)]),
    ("text-type", [("3", 10, 20, 0)]),
])
def test_odd_rows(tiny, tmp_path, case, extra):
    base = check(tiny)["window"]
    # the extra rows inside the window
    at = base["start"]
    rows = [(t, None if s is None else at + s, e if e is None else at + e, d) for t, s, e, d in extra]
    fx = loose_copy(tiny, tmp_path / f"{case}.sqlite", rows)
    check(fx)
    check(fx, device=0)


def test_wall_time_is_the_union_of_the_calls(four_gpus):
    """wallSyncNs: the length of the union of every thread's sync calls
    (clipped to the window), computed here from the runtime table's rows of
    the reply's API names."""
    tiny = four_gpus
    check(tiny)
    res = analyze("sync_cost", tiny)
    names = {r["api"] for r in res["rows"]}
    w = res["window"]
    db = sqlite3.connect(f"file:{tiny}?mode=ro", uri=True)
    iv = []
    for s, e, n in db.execute("SELECT r.start, r.\"end\", s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                              "JOIN StringIds s ON s.id = r.nameId WHERE r.start >= ? AND r.start < ?",
                              (w["start"], w["end"])):
        base = ref.api_name(n)
        if base in names:
            iv.append((s, min(e, w["end"])))
    db.close()
    total = ref.union_len([(a, b) for a, b in iv if b > a])
    assert res["summary"]["wallSyncNs"] == total
    assert sum(r["count"] for r in res["rows"]) == len(iv) == res["summary"]["calls"]
    assert len({t for t, in sqlite3.connect(f"file:{tiny}?mode=ro", uri=True).execute(
        "SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME")}) >= 4
