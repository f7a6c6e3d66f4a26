"""profile/* error paths, change detection and .nsys-rep conversion.

Over JSON-RPC when `nsys-ai serve` exists (error codes), and always through
the CLI (exit code 2 and a one-line message)."""
from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PROFILES, check_schema
from nsys_rpc import RpcError, server_binary

TINY = "nsys2026_tiny.sqlite"


def serve_available() -> bool:
    r = subprocess.run([server_binary(), "--help"], capture_output=True, timeout=30)
    return any(line.split()[:1] == [b"serve"] for line in r.stdout.splitlines())


@pytest.fixture()
def rpc(request):
    if not serve_available():
        pytest.skip("nsys-ai serve is not available yet (rpc helper)")
    return request.getfixturevalue("server")


def make_minimal_export(path: Path, version: str = "2026.2.1.210") -> Path:
    """A tiny but genuine-looking export (generated here, no real data)."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.executescript(f"""
        CREATE TABLE META_DATA_EXPORT(name TEXT NOT NULL, value TEXT);
        INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','{version}'),
                                           ('EXPORT_SCHEMA_VERSION','3.25.0');
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES(0,'k');
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
            contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
            demangledName INTEGER, shortName INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(10,20,0,1,7,1,281479271677952,0,0);
    """)
    con.commit()
    con.close()
    return path


def cli(*args: str, env=None):
    return subprocess.run([server_binary(), *args], capture_output=True, timeout=120,
                          env={**os.environ, "NSYS_AI_NO_PROGRESS": "1", **(env or {})})


# ---- CLI: exit code 2 with one line on stderr ---------------------------------

@pytest.mark.parametrize("kind", ["missing", "text", "empty", "unrelated", "directory"])
def test_cli_input_errors(tmp_path, kind):
    p = tmp_path / "x.sqlite"
    if kind == "text":
        p.write_text("just text\n")
    elif kind == "empty":
        p.write_bytes(b"")
    elif kind == "unrelated":
        con = sqlite3.connect(p)
        con.execute("CREATE TABLE users(id)")
        con.commit()
        con.close()
    elif kind == "directory":
        p = tmp_path
    r = cli("info", str(p))
    assert r.returncode == 2
    err = r.stderr.decode().strip()
    assert err.startswith("nsys-ai: ") and "\n" not in err
    assert r.stdout == b""


def test_cli_usage_error():
    assert cli("info").returncode == 1
    assert cli("info", "a", "b").returncode == 1
    assert cli("info", "x", "--format", "yaml").returncode == 1


def test_cli_text_output_is_a_summary():
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    r = cli("info", str(PROFILES / "nsys2026_2gpu_nccl_before.sqlite"))
    assert r.returncode == 0
    out = r.stdout.decode()
    for needle in ("2026.2.1.210", "3.25.0", "span", "device 0", "device 1", "kernels=4010", "nccl"):
        assert needle in out
    assert len(out.splitlines()) < 40  # long process lists are truncated


# ---- .nsys-rep conversion (fake nsys: the real one needs a real report) -------

FAKE_NSYS = """#!/bin/sh
# fake `nsys export`: copies the SQLite named in the report file to -o OUT
echo "$@" >> "{log}"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
rep="$a"
src=$(cat "$rep")
[ -f "$src" ] || {{ echo "cannot read report $rep" >&2; exit 3; }}
cp "$src" "$out"
"""


def test_nsys_rep_converted_once_and_cached(tmp_path):
    src = make_minimal_export(tmp_path / "export.sqlite")
    rep = tmp_path / "run.nsys-rep"
    rep.write_text(str(src))
    log = tmp_path / "nsys.log"
    fake = tmp_path / "nsys"
    fake.write_text(FAKE_NSYS.format(log=log))
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    env = {"NSYS_AI_NSYS": str(fake), "NSYS_AI_CACHE_DIR": str(cache)}
    import json
    r1 = cli("info", "--format", "json", str(rep), env=env)
    assert r1.returncode == 0, r1.stderr
    info = json.loads(r1.stdout)
    check_schema("profile/info", "result", info)
    assert info["path"] == str(rep.resolve())
    assert info["sqlitePath"].startswith(str(cache))
    assert info["counts"]["kernels"] == 1 and info["nsysVersion"] == "2026.2.1.210"
    args = log.read_text().split()
    assert args[:4] == ["export", "--type=sqlite", "--force-overwrite=true", "-o"]
    # second open reuses the cached export: nsys not run again
    r2 = cli("info", "--format", "json", str(rep), env=env)
    assert r2.returncode == 0
    assert len(log.read_text().splitlines()) == 1
    # cache dir 0700, files 0600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    for f in cache.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    # a changed report is converted again
    time.sleep(0.01)
    rep.write_text(str(src) + "\n")
    assert cli("info", str(rep), env=env).returncode == 0
    assert len(log.read_text().splitlines()) == 2


def test_nsys_rep_export_failure_is_reported(tmp_path):
    rep = tmp_path / "bad.nsys-rep"
    rep.write_text(str(tmp_path / "nothing-here.sqlite"))
    fake = tmp_path / "nsys"
    fake.write_text(FAKE_NSYS.format(log=tmp_path / "log"))
    fake.chmod(0o755)
    r = cli("info", str(rep), env={"NSYS_AI_NSYS": str(fake), "NSYS_AI_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2
    assert "nsys export" in r.stderr.decode() and "cannot read report" in r.stderr.decode()


def test_nsys_rep_without_nsys_says_how_to_export(tmp_path):
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"\x00report")
    r = cli("info", str(rep), env={"NSYS_AI_NSYS": str(tmp_path / "no-nsys"),
                                    "NSYS_AI_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2
    msg = r.stderr.decode()
    assert "nsys export --type=sqlite -o run.sqlite" in msg and str(rep) in msg


# ---- JSON-RPC error codes --------------------------------------------------------

def test_rpc_error_codes(rpc, tmp_path):
    def code_of(method, params):
        with pytest.raises(RpcError) as e:
            rpc.request(method, params)
        return e.value.code

    assert code_of("profile/open", {"path": str(tmp_path / "missing.sqlite")}) == -32001
    text = tmp_path / "t.txt"
    text.write_text("hello")
    assert code_of("profile/open", {"path": str(text)}) == -32003
    unrelated = tmp_path / "u.sqlite"
    con = sqlite3.connect(unrelated)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    assert code_of("profile/open", {"path": str(unrelated)}) == -32004
    assert code_of("profile/close", {"profileId": "p999"}) == -32005
    assert code_of("profile/info", {"profileId": "p999"}) == -32005
    assert code_of("profile/open", {}) == -32602
    assert code_of("profile/open", {"path": 3}) == -32602


def test_rpc_file_replaced_while_open(rpc, tmp_path):
    path = make_minimal_export(tmp_path / "live.sqlite")
    res = rpc.request("profile/open", {"path": str(path)})
    pid = res["profileId"]
    assert rpc.request("profile/info", {"profileId": pid})["counts"]["kernels"] == 1
    newer = make_minimal_export(tmp_path / "newer.sqlite", version="2026.4.0.1")
    os.replace(newer, path)
    with pytest.raises(RpcError) as e:
        rpc.request("profile/info", {"profileId": pid})
    assert e.value.code == -32013
    # reopening gives a new profile with the new contents
    res2 = rpc.request("profile/open", {"path": str(path)})
    assert res2["profileId"] != pid and res2["info"]["nsysVersion"] == "2026.4.0.1"
    assert rpc.request("profile/close", {"profileId": pid}) == {"closed": True}
    path.unlink()
    with pytest.raises(RpcError) as e:
        rpc.request("profile/info", {"profileId": res2["profileId"]})
    assert e.value.code == -32013


def test_rpc_open_close_every_real_profile_repeatedly(rpc):
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    for _ in range(2):
        ids = []
        for p in sorted(PROFILES.glob("*.sqlite")):
            ids.append(rpc.request("profile/open", {"path": str(p)})["profileId"])
        assert len(set(ids)) == len(ids)
        assert len(rpc.request("profile/list", {})["profiles"]) == len(ids)
        for i in ids:
            assert rpc.request("profile/close", {"profileId": i}) == {"closed": True}
        assert rpc.request("profile/list", {})["profiles"] == []


def test_rpc_open_reports_progress(rpc):
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    path = PROFILES / "nsys2023_rtx3060_23k.sqlite"
    res = rpc.request("profile/open", {"path": str(path), "workDoneToken": "open-1"})
    assert res["info"]["counts"]["kernels"] == 23419
    kinds = [n["params"]["value"]["kind"] for n in rpc.notifications
             if n.get("method") == "$/progress" and n["params"].get("token") == "open-1"]
    assert kinds and kinds[0] == "begin" and kinds[-1] == "end"


def test_rpc_cancelled_open_leaves_nothing_open(rpc, tmp_path):
    """Cancel profile/open right away: either it finished first (then it is
    listed) or it answers -32800 and nothing stays open."""
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    path = PROFILES / "nsys2026_h100_2gpu_1s.sqlite"
    rid = rpc.start("profile/open", {"path": str(path)})
    rpc.notify("$/cancelRequest", {"id": rid})
    reply = rpc.wait_reply(rid)
    listed = [p["path"] for p in rpc.request("profile/list", {})["profiles"]]
    if "error" in reply:
        assert reply["error"]["code"] == -32800
        assert str(path) not in listed
    else:
        assert str(path) in listed


def make_times_export(path: Path, kernels: list[tuple[int, int]]) -> Path:
    """make_minimal_export with the given kernel [start, end] pairs."""
    make_minimal_export(path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,0,1,7,?,281479271677952,0,0)",
                    [(s, e, i + 1) for i, (s, e) in enumerate(kernels)])
    con.commit()
    con.close()
    return path


def test_rpc_clocks_out_of_range(rpc, tmp_path):
    """Times past the protocol's range (+-2^61 ns) are clamped to it; an export
    whose op durations add up past 2^61 ns is refused as corrupt (-32016) with
    a message saying so, the server keeps serving, and the CLI exits 2 with the
    same message (index/index_bounds.h)."""
    lo, hi = -(1 << 61), (1 << 61) - 1
    bad = make_times_export(tmp_path / "bad.sqlite", [(-(1 << 63), (1 << 63) - 1), (10, 20)])
    with pytest.raises(RpcError) as e:
        rpc.request("profile/open", {"path": str(bad)})
    assert e.value.code == -32016 and "add up to more than 2^61 ns" in str(e.value), e.value
    r = subprocess.run([server_binary(), "analyze", "top_kernels", str(bad)], capture_output=True, timeout=60)
    assert r.returncode == 2 and b"GPU op durations add up to more than 2^61 ns" in r.stderr, r.stderr
    # clamped, inside the bounds: answered, with the clamped times
    ok = make_times_export(tmp_path / "ok.sqlite", [(-(1 << 63), -(1 << 63) + 5), ((1 << 61) - 100, 1 << 62)])
    pid2 = rpc.request("profile/open", {"path": str(ok)})["profileId"]
    top = rpc.request("analysis/run", {"profileId": pid2, "name": "top_kernels"})
    assert top["rows"] and sum(int(r["count"]) for r in top["rows"]) == 2
    tl = rpc.request("timeline/range", {"profileId": pid2, "start": lo, "end": hi, "width": 100})
    assert tl is not None
    info = rpc.request("profile/info", {"profileId": pid2})
    assert int(info["span"]["start"]) == lo and int(info["span"]["end"]) == hi, info["span"]
