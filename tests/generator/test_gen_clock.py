"""Tests of tools/gen_profile.py's clock options: --epoch-clock (absolute UTC
nanoseconds, as `nsys export --ts-normalize=true`) and --negative-ts (session
zero at train_step 0, the setup phase before it).

Every event of a shifted profile is the same row as in the plain profile, its
timestamps moved by exactly one constant; nothing else changes but the
documented metadata.

Run: python3 -m pytest tests/generator -q
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GEN = REPO / "tools" / "gen_profile.py"
TIME_COLUMNS = ("start", "end", "timestamp")
TWO_53 = 1 << 53


def run_gen(out: Path, *args: str) -> dict:
    res = subprocess.run([sys.executable, str(GEN), "-o", str(out), "--summary", *args],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """(path, summary) per (schema, flags), generated once."""
    d = tmp_path_factory.mktemp("clock")
    cache = {}

    def get(schema: str, *flags: str):
        key = (schema, flags)
        if key not in cache:
            p = d / ("%s%s.sqlite" % (schema, "".join(flags).replace("-", "_")))
            cache[key] = (p, run_gen(p, "--preset", "tiny", "--gpus", "2", "--kernels", "300",
                                     "--schema", schema, "--graphs", *flags))
        return cache[key]
    return get


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def tables(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]


def columns(db, t) -> list[str]:
    return [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]


def meta(db, name):
    t = "META_DATA_EXPORT" if "META_DATA_EXPORT" in tables(db) else "EXPORT_META_DATA"
    return db.execute(f"SELECT value FROM {t} WHERE name = ?", (name,)).fetchone()[0]


def check_shifted(plain: Path, shifted: Path, shift: int) -> int:
    """Every table: same rows, time columns moved by `shift`, the rest equal
    (but the documented metadata). Returns the number of timestamps compared."""
    a, b = connect(plain), connect(shifted)
    assert tables(a) == tables(b)
    moved = 0
    for t in tables(a):
        cols = columns(a, t)
        assert cols == columns(b, t), t
        ra = a.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall()
        rb = b.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall()
        assert len(ra) == len(rb), t
        for x, y in zip(ra, rb):
            for c, u, v in zip(cols, x, y):
                if c in TIME_COLUMNS and u is not None:
                    assert isinstance(v, int) and v == u + shift, (t, c, u, v)
                    moved += 1
                elif t in ("META_DATA_EXPORT", "EXPORT_META_DATA") and c == "value" and x[0] in (
                        "GENERATED_BY", "EXPORT_PARAM_TIME_NORMALIZE"):
                    continue
                elif t == "ANALYSIS_DETAILS" and c in ("startTime", "stopTime"):
                    continue
                else:
                    assert u == v, (t, c, u, v)
    return moved


@pytest.mark.parametrize("schema", ["3.25.0", "3.1.2", "3.0.0"])
def test_epoch_clock(made, schema):
    plain, s0 = made(schema)
    ep, s1 = made(schema, "--epoch-clock")
    db = connect(ep)
    utc = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    assert utc > TWO_53
    assert s1["clockShiftNs"] == utc
    assert check_shifted(plain, ep, utc) > 1000
    # every event on the absolute clock, beyond what a double holds exactly
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
              "CUPTI_ACTIVITY_KIND_MEMCPY"):
        lo = db.execute(f'SELECT min(start) FROM "{t}"').fetchone()[0]
        assert lo > TWO_53 and lo >= utc, t
    assert meta(db, "EXPORT_PARAM_TIME_NORMALIZE") == "true"
    assert meta(db, "GENERATED_BY").endswith(" --epoch-clock")
    ad0 = connect(plain).execute("SELECT startTime, stopTime, duration FROM ANALYSIS_DETAILS").fetchone()
    ad1 = db.execute("SELECT startTime, stopTime, duration FROM ANALYSIS_DETAILS").fetchone()
    on_event_clock = "systemClockNs" not in columns(db, "TARGET_INFO_SESSION_START_TIME")
    want = (ad0[0] + utc, ad0[1] + utc, ad0[2]) if on_event_clock else ad0
    assert ad1 == want
    # the summary's times move with the events
    assert [b["start"] - utc for b in s1["problems"]["bubbles"]] == [b["start"] for b in s0["problems"]["bubbles"]]


def test_negative_ts(made):
    plain, s0 = made("3.25.0")
    neg, s1 = made("3.25.0", "--negative-ts")
    shift = s1["clockShiftNs"]
    assert shift < 0
    assert check_shifted(plain, neg, shift) > 1000
    db = connect(neg)
    # session zero is where train_step 0 starts; the setup phase is before it
    first_step = db.execute("SELECT min(start) FROM NVTX_EVENTS WHERE text LIKE 'train_step 0%'").fetchone()[0]
    assert first_step == 0
    for t, where in (("NVTX_EVENTS", "text IN ('setup', 'epoch 0')"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "1"),
                     ("CUPTI_ACTIVITY_KIND_MEMSET", "1"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "1")):
        n = db.execute(f'SELECT count(*) FROM "{t}" WHERE {where} AND start < 0').fetchone()[0]
        assert n >= 2, t  # one per rank at least
    assert db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= 0").fetchone()[0] > 0
    assert meta(db, "EXPORT_PARAM_TIME_NORMALIZE") == "false"


def test_both(made):
    plain, _ = made("3.1.2")
    both, s = made("3.1.2", "--epoch-clock", "--negative-ts")
    _, neg = made("3.1.2", "--negative-ts")
    utc = connect(both).execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    assert s["clockShiftNs"] == utc + neg["clockShiftNs"]
    check_shifted(plain, both, s["clockShiftNs"])
    lo = connect(both).execute("SELECT min(start) FROM NVTX_EVENTS").fetchone()[0]
    assert TWO_53 < lo < utc


def test_deterministic(made, tmp_path):
    p, _ = made("3.25.0", "--epoch-clock")
    again = tmp_path / "again.sqlite"
    run_gen(again, "--preset", "tiny", "--gpus", "2", "--kernels", "300", "--schema", "3.25.0", "--graphs",
            "--epoch-clock")
    assert again.read_bytes() == p.read_bytes()
