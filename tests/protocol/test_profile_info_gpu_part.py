"""profile/open's summary on a first open takes its GPU-table part (kernel,
memcpy, memset rows: counts, span, devices/streams, NCCL and graph flags)
from the index build's GPU reader, which reads those tables anyway
(server/src/profile/info.c nsys_info_gpu_acc_*, index/index_read_gpu.c).
Whichever path computed it — the index build, the summary's own scan after
an index loaded from its cache, or the synchronous summary — the answer is
the same and equals the independent SQL, also on rows with NULL device,
stream or end, ends before starts, graph node ids and an NCCL kernel."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import generate, need_real
from nsys_rpc import Server
from profile_ref import reference_info
from test_profile_real import compare


def open_info(path: Path, cache: Path, **env: str) -> tuple[dict, str]:
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_VERBOSE": "1",
                    **env})
    try:
        info = s.request("profile/open", {"path": str(path)})["info"]
    finally:
        s.close()
    return info, s.stderr


def gpu_part_line(stderr: str) -> str:
    """how the GPU tables' part came: "read by the index build" or "scanned after it" ("" if no line)"""
    lines = [l for l in stderr.splitlines() if "GPU tables' part" in l]
    return lines[-1].split("GPU tables' part ")[1].split(",")[0] if lines else ""


def three_ways(path: Path, tmp: Path) -> None:
    ref = reference_info(path)
    cache = tmp / "cache"
    cold, err = open_info(path, cache)
    assert "read by the index build" in gpu_part_line(err), err
    compare(cold, ref, path.name)
    for f in cache.glob("info-*.bin"):  # the index stays cached: the summary scans the GPU tables itself
        f.unlink()
    assert list(cache.glob("index-*.bin")), "the index cache was not saved"
    after_cached_index, err = open_info(path, cache)
    assert "scanned after it" in gpu_part_line(err), err
    assert after_cached_index == cold
    sync, err = open_info(path, tmp / "cache-sync", NSYS_AI_INFO_SYNC="1")
    assert gpu_part_line(err) == ""
    assert sync == cold


@pytest.fixture(scope="module")
def odd_rows(generated_dir, tmp_path_factory) -> Path:
    """A small generated profile whose GPU rows hold what a summary must
    handle: NULL deviceId / streamId / end, ends before starts, one kernel
    with a graph node id, an NCCL kernel name, huge and negative clocks."""
    src = generate(generated_dir / "small.sqlite", "--preset", "small")
    dst = tmp_path_factory.mktemp("gpu_part") / "odd_rows.sqlite"
    shutil.copyfile(src, dst)
    with sqlite3.connect(dst) as db:
        k = "CUPTI_ACTIVITY_KIND_KERNEL"
        # the same rows without the NOT NULL constraints, in the same rowid order
        db.execute(f"CREATE TABLE loose AS SELECT rowid AS rid, * FROM {k} ORDER BY rowid")
        db.execute(f"DROP TABLE {k}")
        db.execute(f"CREATE TABLE {k} AS SELECT * FROM loose ORDER BY rid")
        db.execute("DROP TABLE loose")
        db.execute(f"ALTER TABLE {k} DROP COLUMN rid")
        db.execute(f"UPDATE {k} SET streamId = NULL WHERE rowid % 7 = 0")
        db.execute(f"UPDATE {k} SET deviceId = NULL WHERE rowid % 11 = 0")
        db.execute(f'UPDATE {k} SET "end" = NULL WHERE rowid % 13 = 0')
        db.execute(f'UPDATE {k} SET "end" = start - 5 WHERE rowid % 17 = 0')
        db.execute(f"UPDATE {k} SET start = 9007199254740993, \"end\" = 9007199254740995 WHERE rowid = "
                   f"(SELECT max(rowid) FROM {k})")
        db.execute(f"UPDATE {k} SET start = -3, \"end\" = 1 WHERE rowid = (SELECT min(rowid) FROM {k})")
        cols = {r[1] for r in db.execute(f"PRAGMA table_info({k})")}
        assert "graphNodeId" in cols
        db.execute(f"UPDATE {k} SET graphNodeId = NULL")
        db.execute(f"UPDATE {k} SET graphNodeId = 42 WHERE rowid = (SELECT max(rowid) FROM {k}) - 1")
        assert db.execute(f"SELECT count(*) FROM {k} WHERE graphNodeId = 42").fetchone()[0] == 1
    return dst


def test_odd_rows_three_ways(odd_rows, tmp_path):
    ref = reference_info(odd_rows)
    assert ref["features"]["cudaGraphs"], "the kernel's graph node id must set the flag"
    three_ways(odd_rows, tmp_path)


def test_empty_gpu_tables_three_ways(odd_rows, tmp_path):
    """GPU tables present but empty: zero counts, no devices."""
    dst = tmp_path / "empty_gpu.sqlite"
    shutil.copyfile(odd_rows, dst)
    with sqlite3.connect(dst) as db:
        for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            db.execute(f"DELETE FROM {t}")
    three_ways(dst, tmp_path)


REAL = ["nsys2024_a100_cudagraph", "nsys2026_2gpu_nccl_after", "nsys2023_hetero_4gpu_no_kernels",
        "nsys2025_t4_memcpy"]


@pytest.mark.parametrize("name", REAL)
def test_real_three_ways(name, tmp_path):
    three_ways(need_real(name), tmp_path)
