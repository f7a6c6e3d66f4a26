"""One definition per number (issue 17): the statistics kernel/explain gives
for a kernel name are the numbers top_kernels gives for the same name
(short-name grouping, whole profile): count, total, median, p95, share of
kernel time and rank. Checked on a generated profile and the real exports."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import real_profiles
from nsys_rpc import Server

ROOT = Path(__file__).resolve().parents[2]


def profiles(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("num") / "gen.sqlite"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_profile.py"), "-o", str(out), "--preset", "small"],
                   check=True, capture_output=True)
    return [out] + real_profiles()


def test_explain_numbers_equal_top_kernels(tmp_path_factory):
    checked = 0
    with Server() as s:
        for path in profiles(tmp_path_factory):
            try:
                pid = s.request("profile/open", {"path": str(path)})["profileId"]
            except Exception:
                continue
            try:
                rows = s.request("analysis/run", {"profileId": pid, "name": "top_kernels",
                                                  "params": {"limit": 0, "names": "short"}})["rows"]
            except Exception:
                s.request("profile/close", {"profileId": pid})
                continue
            for pos, row in enumerate(rows[:8], start=1):
                res = s.request("kernel/explain", {"profileId": pid, "name": row["name"]})
                st = res["stats"]
                where = (path.name, row["name"])
                assert st["count"] == row["count"], where
                assert st["totalNs"] == row["totalNs"], where
                assert st["medianNs"] == row["medianNs"], where
                assert st["p95Ns"] == row["p95Ns"], where
                assert st["minNs"] == row["minNs"] and st["maxNs"] == row["maxNs"], where
                # top_kernels rounds the same share to 2 decimals
                assert abs(st["pctKernelTime"] - row["pctOfGpu"]) <= 0.005 + 1e-9, where
                assert st["rank"] == pos or rows[st["rank"] - 1]["totalNs"] == row["totalNs"], where
                # the markdown quotes the same share, named for what it is
                assert f"{st['pctKernelTime']:.1f}% of kernel time" in res["markdown"], where
                assert f"{st['pctGpuTime']:.1f}% of GPU operation time" in res["markdown"], where
                checked += 1
            s.request("profile/close", {"profileId": pid})
    assert checked >= 8
