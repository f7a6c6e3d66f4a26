"""The analysis memo file (server/src/analysis/amemo_file.c): the first
analysis on a profile builds the per-profile memo and saves it beside the
index cache; a second server process on the same cache directory reads it
instead of building it (its NSYS_AI_VERBOSE log says so) and answers every
analysis, the report and kernel/explain exactly as the first did, and as a
server without the memo does (NSYS_AI_ANALYSIS_MEMO=0). A truncated or
corrupt file is ignored: the same answers, and a good file is saved again."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import generate
from nsys_rpc import Server

MFU = {"modelFlops": 1e15, "peakTflops": 989}


@pytest.fixture(scope="module")
def profile(generated_dir) -> Path:
    """Two GPUs, NCCL, NVTX, copies; a few thousand kernels."""
    return generate(generated_dir / "small-seed3.sqlite", "--preset", "small", "--seed", "3")


def answers(path: Path, cache: Path, **env: str) -> tuple[dict, str]:
    """Every analysis, the report and kernel/explain of the three largest
    kernels, in a fresh server; (answers by method, server stderr)."""
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache), "NSYS_AI_VERBOSE": "1", **env})
    out: dict = {}
    try:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        for a in s.request("analysis/list", {})["analyses"]:
            name = a["name"]
            out[name] = s.request("analysis/run", {"profileId": pid, "name": name,
                                                   "params": MFU if name == "mfu" else {}})
        out["report"] = s.request("report/generate", {"profileId": pid})
        for row in out["top_kernels"]["rows"][:3]:
            out["explain " + row["name"]] = s.request("kernel/explain", {"profileId": pid, "name": row["name"]})
    finally:
        s.close()
    return out, s.stderr


def memo_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("memo-*.bin"))


def test_second_process_reads_the_memo(profile, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    first, log1 = answers(profile, cache)
    assert "analysis memo: saved" in log1 and "analysis memo: read" not in log1, log1
    files = memo_files(cache)
    assert len(files) == 1, files
    assert not list(profile.parent.glob("memo-*.bin")), "a memo file beside the profile"
    saved = files[0].read_bytes()

    second, log2 = answers(profile, cache)
    assert "analysis memo: read" in log2 and "analysis memo: saved" not in log2, log2
    assert second == first
    assert files[0].read_bytes() == saved

    without, _ = answers(profile, tmp_path / "other-cache", NSYS_AI_ANALYSIS_MEMO="0")
    assert without == first


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_bad_memo_file_is_ignored(profile, tmp_path, damage):
    cache = tmp_path / "cache"
    cache.mkdir()
    first, _ = answers(profile, cache)
    f = memo_files(cache)[0]
    good = f.read_bytes()
    if damage == "truncate":
        f.write_bytes(good[: len(good) // 2])
    else:
        b = bytearray(good)
        b[len(b) - 9] ^= 0x10
        f.write_bytes(bytes(b))
    again, log = answers(profile, cache)
    assert "ignored" in log and "analysis memo: read" not in log, log
    assert again == first
    assert f.read_bytes() == good
