"""nsys_ai_native.runs(), note(), compare_runs(), profile() and `%nsys profile` against the real
server, with a stand-in `nsys` that writes a report (the real one is tested end to end
in tests/protocol/test_capture.py)."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import nsys_ai_native
from nsys_ai_native import NsysAIError
from nsys_ai_native.magic import nsys_magic


@pytest.fixture()
def fake_nsys(tmp_path: Path, small_profile: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`nsys profile ... --output BASE` writes BASE.nsys-rep; `nsys export ... --output OUT REP`
    copies the generated small profile to OUT."""
    f = tmp_path / "nsys"
    f.write_text("#!/bin/sh\ncmd=$1; out=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
                 "if [ \"$cmd\" = profile ]; then echo rep > \"$out.nsys-rep\"; exit 0; fi\n"
                 f"if [ \"$cmd\" = export ]; then cp '{small_profile}' \"$out\"; exit 0; fi\nexit 9\n")
    f.chmod(0o755)
    monkeypatch.setenv("NSYS_AI_NSYS", str(f))
    return f


def test_profile_runs_note_compare(tmp_path: Path, fake_nsys: Path, small_profile: Path,
                                   methods: frozenset[str]) -> None:
    if "runs/list" not in methods:
        pytest.skip("server without runs/*")
    ws = tmp_path / "ws"
    ws.mkdir()
    assert nsys_ai_native.runs(ws).empty
    p = nsys_ai_native.profile("python3 train.py --steps 3", root=ws, note="the loader stalls")
    assert p.run["name"] == "r1" and p.run["status"] == "ok"
    assert p.run["command"] == ["python3", "train.py", "--steps", "3"]
    assert p.run["nsysFlags"][0] == "--trace=cuda,nvtx,osrt"
    assert p.doctor["verdict"] in ("healthy", "warnings")
    assert Path(p.run["report"]) == ws / ".nsys-ai" / "runs" / "r1" / "report.sqlite"
    con = sqlite3.connect(f"file:{small_profile}?mode=ro", uri=True)
    n = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    con.close()
    assert p.info()["counts"]["kernels"] == n
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        q = nsys_magic("profile python3 train.py --steps 4")  # the magic, in the current directory
    finally:
        os.chdir(cwd)
    assert q.run["name"] == "r2"
    nsys_ai_native.note("latest", "2 ms faster", kind="decision", root=ws)
    df = nsys_ai_native.runs(ws)
    assert isinstance(df, pd.DataFrame) and list(df["name"]) == ["r2", "r1"]
    assert df.attrs["historyPath"] == str(ws / ".nsys-ai" / "runs.db")
    assert df.iloc[0]["notes"][0]["text"] == "2 ms faster"
    assert df.iloc[1]["notes"][0]["kind"] == "hypothesis"
    c = nsys_ai_native.compare_runs(root=ws)
    assert (c["before"]["run"], c["after"]["run"]) == ("r1", "r2")
    sub = ws / "notebooks" / "exp"  # a notebook below the workspace: the history above it
    sub.mkdir(parents=True)
    os.chdir(sub)
    try:
        assert list(nsys_ai_native.runs(frames=False)[i]["name"] for i in range(2)) == ["r2", "r1"]
    finally:
        os.chdir(cwd)
    assert not (sub / ".nsys-ai").exists()
    assert c["rangesAdded"] == [] and [h["run"] for h in c["history"]] == ["r1", "r2"]


def test_profile_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("NSYS_AI_NSYS", str(tmp_path / "absent"))
    with pytest.raises(NsysAIError, match="nsys is not installed") as e:
        nsys_ai_native.profile(["python3", "x.py"], root=ws)
    assert e.value.code == nsys_ai_native.errors.NSYS_UNAVAILABLE and e.value.data["run"] == "r1"
    with pytest.raises(ValueError):
        nsys_ai_native.profile("", root=ws)
    runs = nsys_ai_native.runs(ws, frames=False)
    assert runs[0]["status"] == "failed"
