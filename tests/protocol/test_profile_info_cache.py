"""profile/open's summary cache (server/src/profile/info_cache.c): a second
open of the same file, by a fresh server sharing the cache directory, answers
the same info from the cache; a replaced, touched or modified file, and a
corrupt cache entry, are recomputed (checked against independent SQL)."""
from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from conftest import check_schema, need_real
from nsys_rpc import Server
from profile_ref import reference_info
from test_profile_real import compare


@pytest.fixture(autouse=True)
def _info_cache_enabled(monkeypatch):
    """These tests are about the cache: run them with it even when the suite is
    run with NSYS_AI_NO_INFO_CACHE=1 (to exercise the computing path elsewhere)."""
    monkeypatch.delenv("NSYS_AI_NO_INFO_CACHE", raising=False)


def open_info(path: Path, cache: Path) -> tuple[dict, str]:
    """profile/open in a fresh server; returns (info, server stderr)."""
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_VERBOSE": "1"})
    try:
        info = s.request("profile/open", {"path": str(path)})["info"]
        check_schema("profile/info", "result", info)
        again = s.request("profile/info", {"profileId": s.request("profile/list", {})["profiles"][0]["profileId"]})
        assert again == info
    finally:
        s.close()
    return info, s.stderr


def cached(stderr: str) -> bool:
    lines = [l for l in stderr.splitlines() if "opened " in l]
    assert lines, f"no open timing line in stderr:\n{stderr}"
    return lines[-1].endswith("(cached)")


def info_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("info-*.bin"))


def test_second_open_is_identical_and_cached(tmp_path):
    src = need_real("nsys2024_a100_lm_nvtx")
    cache = tmp_path / "cache"
    first, err1 = open_info(src, cache)
    assert not cached(err1)
    files = info_files(cache)
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    second, err2 = open_info(src, cache)
    assert cached(err2)
    assert second == first
    compare(second, reference_info(src), src.name)


def test_replaced_file_is_recomputed(tmp_path):
    a, b = need_real("nsys2026_tiny"), need_real("nsys2024_a100_lm_nvtx")
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    dst = work / "profile.sqlite"
    shutil.copyfile(a, dst)
    info_a, _ = open_info(dst, cache)
    compare(info_a, reference_info(dst), a.name)
    # same path, other content (and size, mtime)
    shutil.copyfile(b, dst)
    info_b, err = open_info(dst, cache)
    assert not cached(err)
    compare(info_b, reference_info(dst), b.name)
    assert info_b["counts"] != info_a["counts"]
    assert sorted(os.listdir(work)) == ["profile.sqlite"]  # nothing beside the profile


def test_touched_and_appended_file_is_recomputed(tmp_path):
    src = need_real("nsys2026_tiny")
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    dst = work / "p.sqlite"
    shutil.copyfile(src, dst)
    base, _ = open_info(dst, cache)
    _, err = open_info(dst, cache)
    assert cached(err)
    st = dst.stat()
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touch
    touched, err = open_info(dst, cache)
    assert not cached(err)
    assert touched == base
    with open(dst, "ab") as f:  # grown file: other size
        f.write(b"\0" * 4096)
    grown, err = open_info(dst, cache)
    assert not cached(err)
    compare(grown, reference_info(dst), src.name)
    assert len(info_files(cache)) == 3


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_cache_entry_is_recomputed(tmp_path, damage):
    src = need_real("nsys2024_a100_lm_nvtx")
    cache = tmp_path / "cache"
    base, _ = open_info(src, cache)
    (entry,) = info_files(cache)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) - 20] ^= 0x55  # inside the payload: the checksum catches it
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    again, err = open_info(src, cache)
    assert not cached(err)
    assert again == base
    time.sleep(0.01)
    # rewritten: the next open is cached again
    third, err = open_info(src, cache)
    assert cached(err) and third == base


def test_non_integer_times_fall_back_to_sql(tmp_path):
    """info's one-pass span aggregate reads integer columns; a REAL time (a
    hand-edited or foreign export) makes it fall back to SQL count/min/max, so
    the answer still equals the independent SQL."""
    import sqlite3

    src = need_real("nsys2024_a100_lm_nvtx")
    dst = tmp_path / "real_times.sqlite"
    shutil.copyfile(src, dst)
    with sqlite3.connect(dst) as db:
        for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
            n = db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            db.execute(f"UPDATE {t} SET start = start + 0.5 WHERE rowid = "
                       f"(SELECT rowid FROM {t} ORDER BY rowid LIMIT 1 OFFSET ?)", (n // 2,))
            assert db.execute(f"SELECT count(*) FROM {t} WHERE typeof(start) = 'real'").fetchone()[0] == 1
    info, _ = open_info(dst, tmp_path / "cache")
    compare(info, reference_info(dst), dst.name)


@pytest.mark.parametrize("mode", ["beside the index", "synchronous"])
def test_cancelled_first_open_leaves_no_partial_cache(tmp_path, generated_dir, mode):
    """The summary of a first open is computed beside the index build (or, with
    NSYS_AI_INFO_SYNC, before it); a cancel at any moment answers -32800 (or
    the open had finished) — never a read error from an interrupted statement —,
    leaves nothing open, and never leaves a partial summary in the cache: the
    next open equals the independent SQL."""
    from conftest import generate

    path = generate(generated_dir / "100k.sqlite", "--preset", "100k")
    ref = reference_info(path)
    env = {"NSYS_AI_INFO_SYNC": "1"} if mode == "synchronous" else {}
    assert "cancelled" in cancel_first_opens(path, ref, tmp_path, [0.0, 0.01, 0.03, 0.06, 0.1, 0.2, 0.4], env)


def cancel_first_opens(path: Path, ref: dict, tmp_path: Path, delays: list[float], env: dict[str, str],
                       params: dict | None = None) -> set[str]:
    """A first open of `path` cancelled after each delay, each in a server of its own with an empty
    cache: -32800 and nothing left open, or the open had finished with the summary `ref`; either
    way the next open (from whatever the cache holds) is `ref`. Returns the outcomes seen."""
    outcomes = set()
    for k, delay in enumerate(delays):
        cache = tmp_path / f"c{k}"
        s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), **env})
        try:
            rid = s.start("profile/open", {"path": str(path), **(params or {})})
            time.sleep(delay)
            s.notify("$/cancelRequest", {"id": rid})
            reply = s.wait_reply(rid, timeout=120)
            listed = [p["path"] for p in s.request("profile/list", {})["profiles"]]
            if "error" in reply:
                assert reply["error"]["code"] == -32800, reply
                assert str(path) not in listed
                outcomes.add("cancelled")
            else:
                assert str(path) in listed
                compare(reply["result"]["info"], ref, path.name)
                outcomes.add("finished")
        finally:
            s.close()
        info, _ = open_info(path, cache)
        compare(info, ref, path.name)
    return outcomes
