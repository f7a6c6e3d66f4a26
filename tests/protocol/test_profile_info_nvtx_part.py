"""profile/open's summary on a first open takes the NVTX table's count and
span from the index build's host reader, which then reads every row of that
table (the range test `eventType BETWEEN 59 AND 75` moves from its WHERE to a
column; server/src/index/index_read_host.c, profile/info.c
nsys_info_nvtx_*). Two things must not change:

- the summary: equal to the independent SQL and to the summary computed the
  other ways (after an index loaded from its cache, synchronously), table
  list order included;
- the index: the cache file the fused read writes is byte-identical to the
  one the plain read (WHERE, no summary: the summary was cached) writes, also
  on rows the WHERE drops that the C filter alone would keep ('59abc').
"""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import PROFILES, generate
from nsys_rpc import Server
from profile_ref import reference_info
from test_profile_real import compare

NVTX = "NVTX_EVENTS"


def open_all(paths: list[Path], cache: Path, **env: str) -> tuple[list[dict], str]:
    """profile/open of each path in one server; its stderr (NSYS_AI_VERBOSE)."""
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_VERBOSE": "1", **env})
    try:
        infos = [s.request("profile/open", {"path": str(p)}, timeout=600)["info"] for p in paths]
    finally:
        s.close(timeout=600)  # finishes the index cache files
    return infos, s.stderr


def nvtx_parts(stderr: str) -> list[str]:
    """per open that had the summary computed beside the index: how the NVTX part came"""
    out = []
    for line in stderr.splitlines():
        if "the NVTX table's" in line:
            out.append(line.split("the NVTX table's ")[1].strip())
    return out


def index_files(cache: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(cache.glob("index-*.bin"))}


def check(paths: list[Path], tmp: Path, expect_fused: list[bool]) -> None:
    cache = tmp / "cache"
    cold, err = open_all(paths, cache)
    assert nvtx_parts(err) == ["read by the index build" if f else "scanned after it" for f in expect_fused], err
    for p, info in zip(paths, cold):
        compare(info, reference_info(p), p.name)
    fused_index = index_files(cache)
    assert len(fused_index) == len(paths), "an index cache was not saved"

    # index cached, summary not: the summary scans NVTX itself after it
    for f in cache.glob("info-*.bin"):
        f.unlink()
    again, err = open_all(paths, cache)
    assert nvtx_parts(err) == ["scanned after it"] * len(paths), err
    assert again == cold

    # summary cached, index not: the index reads NVTX with the WHERE, no summary
    for f in cache.glob("index-*.bin"):
        f.unlink()
    plain, err = open_all(paths, cache)
    assert nvtx_parts(err) == [], err
    assert plain == cold
    plain_index = index_files(cache)
    assert plain_index.keys() == fused_index.keys()
    for k in fused_index:
        assert plain_index[k] == fused_index[k], f"{k}: the fused NVTX read built another index"

    sync, _ = open_all(paths, tmp / "cache-sync", NSYS_AI_INFO_SYNC="1")
    assert sync == cold


def loosen(db: sqlite3.Connection, table: str) -> None:
    """the same rows without the NOT NULL constraints, in the same rowid order"""
    db.execute(f"CREATE TABLE loose AS SELECT rowid AS rid, * FROM {table} ORDER BY rowid")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"CREATE TABLE {table} AS SELECT * FROM loose ORDER BY rid")
    db.execute("DROP TABLE loose")
    db.execute(f"ALTER TABLE {table} DROP COLUMN rid")


@pytest.fixture(scope="module")
def shapes(generated_dir, tmp_path_factory) -> dict[str, Path]:
    src = generate(generated_dir / "small.sqlite", "--preset", "small")
    d = tmp_path_factory.mktemp("nvtx_part")
    out = {}

    def variant(name: str, *sql: str) -> None:
        dst = d / f"{name}.sqlite"
        shutil.copyfile(src, dst)
        with sqlite3.connect(dst) as db:
            loosen(db, NVTX)
            for q in sql:
                db.execute(q)
        out[name] = dst

    # rows the range test drops that the C type filter alone would keep
    # ('59abc' reads as 59 in C), and the other odd rows of a summary
    variant("odd", f"UPDATE {NVTX} SET eventType = '59abc' WHERE rowid % 5 = 0",
            f"UPDATE {NVTX} SET eventType = 59.5 WHERE rowid % 7 = 0",
            f"UPDATE {NVTX} SET eventType = NULL WHERE rowid % 11 = 0",
            f"UPDATE {NVTX} SET eventType = 34, \"end\" = NULL WHERE rowid % 13 = 0",
            f"UPDATE {NVTX} SET \"end\" = start - 5 WHERE rowid % 17 = 0",
            f"UPDATE {NVTX} SET textId = 987654321, text = NULL WHERE rowid % 19 = 0",
            f"UPDATE {NVTX} SET start = 9007199254740993, \"end\" = 9007199254740995 "
            f"WHERE rowid = (SELECT max(rowid) FROM {NVTX})",
            f"UPDATE {NVTX} SET start = -3 WHERE rowid = (SELECT min(rowid) FROM {NVTX})")
    # a non-integer time: the summary's SQL decides (scanned after the build)
    variant("real_time", f"UPDATE {NVTX} SET start = start + 0.5 WHERE rowid = 3")
    variant("empty", f"DELETE FROM {NVTX}")
    variant("one_row", f"DELETE FROM {NVTX} WHERE rowid <> (SELECT min(rowid) FROM {NVTX} WHERE eventType = 59)")
    variant("rowid_gaps", f"DELETE FROM {NVTX} WHERE rowid % 3 <> 0")
    return out


def test_generated_shapes(shapes, tmp_path):
    names = ["odd", "real_time", "empty", "one_row", "rowid_gaps"]
    check([shapes[n] for n in names], tmp_path, [n != "real_time" for n in names])


def test_real_exports(tmp_path):
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    paths = sorted(PROFILES.glob("*.sqlite"))
    has = []
    for p in paths:
        con = sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True)
        try:
            cols = {r[1] for r in con.execute(f"PRAGMA table_info({NVTX})")}
        finally:
            con.close()
        has.append({"start", "end", "eventType", "globalTid"} <= cols)
    check(paths, tmp_path, has)
