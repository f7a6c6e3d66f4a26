"""Every real export in ../shared/profiles opens, and its info matches
independent SQL (profile_ref.py). Runs through the CLI (`nsys-ai info
--format json`, the same handler as profile/info) and, when the server is
available, through profile/open over JSON-RPC."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROFILES, check_schema, real_path, real_profiles
from nsys_rpc import server_binary
from profile_ref import reference_info

EXPECTED_REAL = 24
NAMES = [p.name for p in real_profiles()] or ["<absent>"]

# Known partial profiles: what must be missing (and no error).
PARTIAL = {
    "nsys_failed_capture_no_meta.sqlite": dict(nsysVersion=None, span=None, kernels=0),
    "nsys2021_a100_cuda_callchains.sqlite": dict(nsysVersion=None, schemaGeneration="pre-2022"),
    "nsys2025_no_cuda_non_utf8.sqlite": dict(kernels=0, runtime=0),
    "nsys2025_runtime_no_kernels.sqlite": dict(kernels=0),
    "nsys2023_hetero_4gpu_no_kernels.sqlite": dict(kernels=0),
    "nsys2023_sampling_only.sqlite": dict(kernels=0),
    "nsys2026_sampling_only.sqlite": dict(kernels=0),
    "nsys2022_nvtx_only_negative_ts.sqlite": dict(kernels=0),
}


def cli_info(path: Path) -> dict:
    r = subprocess.run([server_binary(), "info", "--format", "json", str(path)], capture_output=True,
                       timeout=120, env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    assert r.returncode == 0, f"nsys-ai info {path.name} failed ({r.returncode}): {r.stderr.decode()}"
    return json.loads(r.stdout)


def serve_available() -> bool:
    r = subprocess.run([server_binary(), "--help"], capture_output=True, timeout=30)
    return any(line.split()[:1] == [b"serve"] for line in r.stdout.splitlines())


def profile_path(name: str) -> Path:
    return real_path(name)


def test_all_24_real_profiles_present():
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    assert len([p for p in real_profiles() if p.parent == PROFILES]) == EXPECTED_REAL


def compare(info: dict, ref: dict, name: str) -> None:
    assert info["nsysVersion"] == ref["nsysVersion"]
    assert info["schemaVersion"] == ref["schemaVersion"]
    assert info["utcEpochNs"] == ref["utcEpochNs"]
    for k, v in ref["counts"].items():
        assert info["counts"][k] == v, f"{name}: counts.{k}"
    assert info["span"] == ref["span"], f"{name}: span"
    assert info["gpus"] == ref["gpus"], f"{name}: gpus"
    assert info["devices"] == ref["devices"], f"{name}: devices"
    assert info["features"] == ref["features"], f"{name}: features"
    assert info["processes"] == ref["processes"], f"{name}: processes"


@pytest.mark.parametrize("name", NAMES)
def test_real_profile_info_matches_sql(name):
    path = profile_path(name)
    info = cli_info(path)
    check_schema("profile/info", "result", info)
    assert info["path"] == str(path.resolve())
    compare(info, reference_info(path), name)
    for key, want in PARTIAL.get(name, {}).items():
        got = info["counts"][key] if key in info["counts"] else info[key]
        assert got == want, f"{name}: {key}"


def test_partial_profiles_are_partial_not_errors():
    p = profile_path("nsys_failed_capture_no_meta.sqlite" if PROFILES.is_dir() else "<absent>")
    info = cli_info(p)
    assert info["schemaGeneration"] == "unknown"
    assert info["span"] is None and info["nsysVersion"] is None
    assert info["gpus"] and info["gpus"][0]["name"] == "NVIDIA RTX A2000 12GB"
    assert len(info["processes"]) > 0


def test_non_utf8_strings_are_valid_utf8():
    for name in ("nsys2022_windows_10streams.sqlite", "nsys2025_no_cuda_non_utf8.sqlite"):
        path = profile_path(name if PROFILES.is_dir() else "<absent>")
        r = subprocess.run([server_binary(), "info", "--format", "json", str(path)],
                           capture_output=True, timeout=60)
        assert r.returncode == 0
        r.stdout.decode("utf-8")  # strict: raises on invalid UTF-8


def test_pre2022_gpu_units():
    path = profile_path("nsys2021_a100_cuda_callchains.sqlite" if PROFILES.is_dir() else "<absent>")
    g = cli_info(path)["gpus"][0]
    # A100-PCIE-40GB: 1555 GB/s, 1.41 GHz, 108 SMs, sm_80
    assert g["bandwidthBytesPerSec"] == 1_555_200_000_000
    assert g["clockHz"] == 1_410_000_000
    assert g["smCount"] == 108 and g["computeCapability"] == "8.0"


def _fingerprint(path: Path):
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


def test_read_only_guarantee_on_every_real_profile():
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    before = {p: _fingerprint(p) for p in real_profiles()}
    listing = sorted(os.listdir(PROFILES))
    for p in real_profiles():
        cli_info(p)
        cli_info(p)  # open/close repeated
    assert {p: _fingerprint(p) for p in real_profiles()} == before
    assert sorted(os.listdir(PROFILES)) == listing


def test_read_only_in_a_writable_directory(tmp_path):
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    src = PROFILES / "nsys2026_tiny.sqlite"
    dst = tmp_path / "copy.sqlite"
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)
    before = _fingerprint(dst)
    cli_info(dst)
    assert _fingerprint(dst) == before
    assert sorted(os.listdir(tmp_path)) == ["copy.sqlite"]  # no -journal / -wal / -shm


@pytest.mark.parametrize("name", NAMES)
def test_real_profile_open_over_rpc(name, request):
    path = profile_path(name)
    if not serve_available():
        pytest.skip("nsys-ai serve is not available yet (rpc helper)")
    server = request.getfixturevalue("server")
    res = server.request("profile/open", {"path": str(path)})
    check_schema("profile/open", "result", res)
    compare(res["info"], reference_info(path), name)
    pid = res["profileId"]
    again = server.request("profile/open", {"path": str(path)})
    assert again["profileId"] == pid
    info = server.request("profile/info", {"profileId": pid})
    check_schema("profile/info", "result", info)
    assert info == res["info"]
    lst = server.request("profile/list", {})
    check_schema("profile/list", "result", lst)
    assert {"profileId": pid, "path": str(path.resolve())} in lst["profiles"]
    closed = server.request("profile/close", {"profileId": pid})
    check_schema("profile/close", "result", closed)
    assert closed == {"closed": True}


def test_read_only_on_a_wal_mode_database(tmp_path):
    """A WAL-mode database opened mode=ro alone would get -wal/-shm files
    beside it; immutable=1 must prevent that."""
    import sqlite3
    dst = tmp_path / "wal.sqlite"
    con = sqlite3.connect(dst)
    con.executescript("""
        PRAGMA journal_mode=WAL;
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES(0,'x');
        CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
                                 text TEXT, globalTid INTEGER, domainId INTEGER);
        INSERT INTO NVTX_EVENTS VALUES(1, 5, 59, 'r', 281479271677953, 0);
    """)
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for side in ("wal.sqlite-wal", "wal.sqlite-shm"):
        (tmp_path / side).unlink(missing_ok=True)
    assert dst.read_bytes()[18:20] == b"\x02\x02"  # header: WAL mode
    assert sorted(os.listdir(tmp_path)) == ["wal.sqlite"]
    before = _fingerprint(dst)
    info = cli_info(dst)
    assert info["counts"]["nvtx"] == 1
    assert _fingerprint(dst) == before
    assert sorted(os.listdir(tmp_path)) == ["wal.sqlite"]
