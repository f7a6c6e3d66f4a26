"""The cold index build may read the kernel table in K rowid ranges on K
threads (index/index_read_ranges.c), then intern names and number tracks in
one sequential pass in rowid order. Whatever K, profile/open's answer and
every cache file it writes (index-*.bin, info-*.bin) are byte-identical to
the single reader's: on generated shapes, on sparse rowids, on a kernel table
whose rowid order is not its start order, on rows with NULL device / stream /
end, and on tables no rowid range can split (WITHOUT ROWID, a view), which
one reader reads whatever K asks.

NSYS_AI_INDEX_READERS forces K on these small profiles (by default only
tables of more than 200k rowids are split, on machines of 3+ cores)."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import generate
from nsys_rpc import RpcError, Server
from profile_ref import reference_info
from test_profile_info_cache import cancel_first_opens, open_info
from test_profile_real import compare

K = "CUPTI_ACTIVITY_KIND_KERNEL"


def cold_open(path: Path, cache: Path, readers: int) -> tuple[str, dict[str, bytes], int]:
    """profile/open on an empty cache: (its result as JSON text, the cache
    files by name, the kernel readers the build used)"""
    shutil.rmtree(cache, ignore_errors=True)
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_VERBOSE": "1", "NSYS_AI_INDEX_TIMING": "1",
                    "NSYS_AI_INDEX_READERS": str(readers)})
    try:
        reply = json.dumps(s.request("profile/open", {"path": str(path)}))
    except RpcError as e:  # the single reader's error, whatever K
        reply = f"error {e}"
    finally:
        s.close()
    used = [int(m) for m in re.findall(r"kernel table readers (\d+)", s.stderr)]
    # the index and the summary (a memo-*.bin of analyses a warm-up may save is another matter)
    files = {f.name: f.read_bytes() for f in sorted(cache.glob("*.bin")) if f.name.startswith(("index-", "info-"))}
    return reply, files, used[-1] if used else 0


def same_for_readers(path: Path, tmp: Path, readers: int = 4, expect_split: bool = True) -> None:
    one, files1, used1 = cold_open(path, tmp / "k1", 1)
    many, files_k, used_k = cold_open(path, tmp / f"k{readers}", readers)
    assert used1 == 1
    assert used_k == (readers if expect_split else 1), f"{path.name}: {used_k} readers"
    assert many == one, f"{path.name}: profile/open differs with {readers} readers"
    if not one.startswith("error"):
        assert any(n.startswith("index-") for n in files1) and any(n.startswith("info-") for n in files1), files1
    assert sorted(files_k) == sorted(files1)
    for name in files1:
        assert files_k[name] == files1[name], f"{path.name}: {name} differs with {readers} readers"


@pytest.mark.parametrize("shape", ["default", "streams-many", "procs-many", "graphs"])
def test_generated_shapes_identical(shape, generated_dir, tmp_path):
    args = ["--kernels", "6000", "--seed", "3"] + ([] if shape == "default" else ["--shape", shape])
    if shape == "graphs":
        args = ["--kernels", "6000", "--seed", "3", "--graphs"]
    path = generate(generated_dir / f"readers-{shape}.sqlite", *args)
    same_for_readers(path, tmp_path, 3 if shape == "procs-many" else 4)


@pytest.fixture(scope="module")
def small(generated_dir) -> Path:
    return generate(generated_dir / "small.sqlite", "--preset", "small")


def edited(small: Path, tmp: Path, name: str, *sql: str) -> Path:
    dst = tmp / name
    shutil.copyfile(small, dst)
    with sqlite3.connect(dst) as db:
        for q in sql:
            db.execute(q)
    return dst


def test_sparse_rowids_and_unordered_starts(small, tmp_path):
    """names first seen in every range, holes in the rowids (a whole range
    empty), rowid order unlike start order, NULL streams/devices/ends: one
    sequential pass in rowid order"""
    db = sqlite3.connect(small)
    n = db.execute(f"SELECT max(rowid) FROM {K}").fetchone()[0]
    m = db.execute("SELECT max(id) FROM StringIds").fetchone()[0] + 1
    db.close()
    path = edited(small, tmp_path, "sparse.sqlite",
                  # names first seen in every range, a kernel's full name the
                  # short name of a later one: interning order is rowid order
                  f"INSERT INTO StringIds (id, value) SELECT {m} + rowid, 'late_' || rowid FROM {K}"
                  f" WHERE rowid % 3 = 0",
                  f"UPDATE {K} SET shortName = {m} + rowid, demangledName = {m} + rowid + 3 WHERE rowid % 3 = 0",
                  f"CREATE TABLE loose AS SELECT rowid AS rid, * FROM {K} ORDER BY rowid",
                  f"DROP TABLE {K}",
                  # reversed rowid order against start, sparse rowids (x 7), a hole of a quarter
                  f"CREATE TABLE {K} AS SELECT * FROM loose ORDER BY rid DESC",
                  f"UPDATE {K} SET rowid = rowid * 7 + 1000000",
                  f"DELETE FROM {K} WHERE rowid BETWEEN 1000000 + {n} * 7 / 4 AND 1000000 + {n} * 7 / 2",
                  "DROP TABLE loose",
                  f"UPDATE {K} SET streamId = NULL WHERE rowid % 5 = 0",
                  f"UPDATE {K} SET deviceId = NULL WHERE rowid % 11 = 0",
                  f'UPDATE {K} SET "end" = NULL WHERE rowid % 13 = 0')
    same_for_readers(path, tmp_path, 4)


def test_unsplittable_tables_read_once(small, tmp_path):
    """WITHOUT ROWID (the single reader's error) and a column named rowid:
    whatever K asks, one reader"""
    cols = [r[1] for r in sqlite3.connect(small).execute(f"PRAGMA table_info({K})")]
    decl = ", ".join(f'"{c}"' for c in cols)
    no_rowid = edited(small, tmp_path, "no_rowid.sqlite",
                      f"CREATE TABLE loose AS SELECT rowid AS rid, * FROM {K}",
                      f"DROP TABLE {K}",
                      f"CREATE TABLE {K} (rid INTEGER PRIMARY KEY, {decl}) WITHOUT ROWID",
                      f"INSERT INTO {K} SELECT * FROM loose",
                      "DROP TABLE loose")
    shadow = edited(small, tmp_path, "shadow.sqlite", f"ALTER TABLE {K} ADD COLUMN rowid INTEGER",
                    f"UPDATE {K} SET rowid = -_rowid_")
    for p in (no_rowid, shadow):
        same_for_readers(p, tmp_path / p.stem, 4, expect_split=False)



def test_cancelled_first_open_with_range_readers(tmp_path, generated_dir):
    """A cancel while 4 readers read the kernel table of a first open:
    -32800 (or the open had finished), nothing left open, no partial cache
    (the next open is the independent SQL's summary); as with one reader
    (test_profile_info_cache.py, whose checks these are, at fewer delays)."""
    path = generate(generated_dir / "100k.sqlite", "--preset", "100k")
    ref = reference_info(path)
    outcomes = cancel_first_opens(path, ref, tmp_path, [0.0, 0.03, 0.1], {"NSYS_AI_INDEX_READERS": "4"},
                                  {"workDoneToken": "open"})
    assert "cancelled" in outcomes
