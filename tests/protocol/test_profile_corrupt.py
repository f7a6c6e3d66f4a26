"""Corrupt and hostile profiles: truncations, bit flips, garbage and zeroed
pages of real exports. Each must give partial info (exit 0) or a clear input
error (exit 2, one valid-UTF-8 line): never a crash, a hang or invalid JSON.
Deterministic (fixed seeds). Prints `corrupt profiles: K tried, 0 crashes`."""
from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import PROFILES, check_schema, record_summary
from nsys_rpc import server_binary

SOURCES = ["nsys2023_rtx3060_23k.sqlite", "nsys2026_2gpu_nccl_before.sqlite",
           "nsys2021_a100_cuda_callchains.sqlite", "nsys2022_windows_10streams.sqlite"]
TRIALS_PER_SOURCE = 40


def mutate(data: bytes, rng: random.Random, mode: int) -> bytes:
    d = bytearray(data)
    if mode == 0:  # bit flips anywhere past the header magic
        for _ in range(50):
            i = rng.randrange(100, len(d))
            d[i] ^= 1 << rng.randrange(8)
    elif mode == 1:  # truncation
        d = d[:rng.randrange(100, len(d))]
    elif mode == 2:  # one page of garbage
        p = rng.randrange(1, len(d) // 4096) * 4096
        d[p:p + 4096] = bytes(rng.randrange(256) for _ in range(4096))
    else:  # one zeroed page
        p = rng.randrange(1, len(d) // 4096) * 4096
        d[p:p + 4096] = b"\0" * 4096
    return bytes(d)


def test_corrupt_real_profiles_never_crash(tmp_path):
    if not PROFILES.is_dir():
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    tried = crashes = partial = errors = 0
    target = tmp_path / "mutant.sqlite"
    for name in SOURCES:
        data = (PROFILES / name).read_bytes()
        rng = random.Random(1)  # trial 32 of rtx3060 once produced a non-UTF-8 error message
        for trial in range(TRIALS_PER_SOURCE):
            target.write_bytes(mutate(data, rng, trial % 4))
            r = subprocess.run([server_binary(), "info", "--format", "json", str(target)],
                               capture_output=True, timeout=60,
                               env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
            tried += 1
            out, err = r.stdout.decode("utf-8"), r.stderr.decode("utf-8")  # strict UTF-8
            if r.returncode == 0:
                partial += 1
                check_schema("profile/info", "result", json.loads(out))
            elif r.returncode == 2:
                errors += 1
                assert err.startswith("nsys-ai: ") and err.count("\n") == 1, err
            else:
                crashes += 1
                print(f"{name} trial {trial}: exit {r.returncode}: {err[-400:]}")
    print(f"corrupt profiles: {tried} tried, {crashes} crashes ({partial} partial, {errors} errors)")
    record_summary("corrupt", f"corrupt profiles: {tried} tried, {crashes} crashes")
    assert crashes == 0


def test_hostile_generated_profile(tmp_path):
    """NULLs everywhere, wrong types, non-UTF-8 and huge strings in the tables
    the loader reads (generated here). profile/info must still answer."""
    import sqlite3
    p = tmp_path / "hostile.sqlite"
    con = sqlite3.connect(p)
    con.executescript("""
        CREATE TABLE StringIds(id, value);
        INSERT INTO StringIds VALUES(NULL,'x'),(1,NULL),('abc',X'00FF'),(-5,X'C0AF'),
                                    (9223372036854775807,'max');
        CREATE TABLE META_DATA_EXPORT(name, value);
        INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION',X'FFFE'),(NULL,NULL);
        CREATE TABLE TARGET_INFO_GPU(id, name, smCount, computeMajor, computeMinor, totalMemory);
        INSERT INTO TARGET_INFO_GPU VALUES(NULL,NULL,NULL,NULL,NULL,NULL),(0,X'FF',-1,100,-1,-1);
        CREATE TABLE ThreadNames(nameId, priority, globalTid);
        INSERT INTO ThreadNames VALUES(NULL,NULL,NULL),(1,1,-1),(2,'x','y');
        CREATE TABLE PROCESSES(globalPid, pid, name);
        INSERT INTO PROCESSES VALUES(NULL,NULL,NULL),(-1,-1,X'E9');
    """)
    con.execute("INSERT INTO StringIds VALUES(2, ?)", ("y" * (3 << 20),))
    con.commit()
    con.close()
    r = subprocess.run([server_binary(), "info", "--format", "json", str(p)], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout.decode("utf-8"))
    check_schema("profile/info", "result", info)
    assert info["nsysVersion"] == "\u00ff\u00fe"
    assert info["gpus"] == [{"id": 0, "name": "\u00ff", "smCount": None, "memoryBytes": None,
                             "bandwidthBytesPerSec": None, "clockHz": None,
                             "computeCapability": None}]
    assert info["span"] is None
    names = [t["name"] for pr in info["processes"] for t in pr["threads"]]
    assert any(n and len(n) == 1 << 20 for n in names)  # huge strings are cut at 1 MiB
