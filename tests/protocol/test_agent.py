"""agent/ask without an LLM: routing by question, the deterministic evidence
answer with numbers checked against independent SQL, and that a server with
no LLM configured opens no network socket (strace)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import check_schema, need_real
from nsys_rpc import RpcError, Server, server_binary

NO_LLM = {"NSYS_AI_LLM_BASE_URL": "", "NSYS_AI_LLM_MODEL": "", "NSYS_AI_LLM_PROVIDER": "",
          "NSYS_AI_CONFIG": "/nonexistent/config.json"}


@pytest.fixture()
def plain(cache_dir):
    s = Server(env={**NO_LLM, "NSYS_AI_CACHE_DIR": str(cache_dir)})
    yield s
    s.close()


def union_len(iv):
    iv = sorted(iv)
    total, cs, ce = 0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                total += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    if cs is not None:
        total += ce - cs
    return total, (iv[0][0] if iv else 0), max((e for _, e in iv), default=0)


def test_routing_and_schema(plain, small_profile):
    pid = plain.request("profile/open", {"path": str(small_profile)})["profileId"]
    r = plain.request("agent/ask", {"profileId": pid, "question": "Is NCCL communication overlapped with compute?"})
    check_schema("agent/ask", "result", r)
    assert r["mode"] == "evidence" and r["llm"] is None
    assert "communication" in r["analyses"] and "gpu_utilization" in r["analyses"]
    r = plain.request("agent/ask", {"profileId": pid, "question": "How much time goes to memcpy transfers?"})
    assert "memory_copies" in r["analyses"]
    r = plain.request("agent/ask", {"profileId": pid, "question": "hello"})
    assert {"gpu_utilization", "top_kernels", "communication", "launch_overhead"} <= set(r["analyses"])
    with pytest.raises(RpcError) as e:
        plain.request("agent/ask", {"profileId": pid, "question": ""})
    assert e.value.code == -32602
    with pytest.raises(RpcError) as e:
        plain.request("agent/ask", {"profileId": pid, "question": "x", "llm": True})
    assert e.value.code == -32014
    with pytest.raises(RpcError) as e:
        plain.request("agent/ask", {"question": "x"})
    assert e.value.code == -32602


def test_evidence_numbers_match_sql(plain):
    path = need_real("nsys2024_a100_lm_nvtx")
    pid = plain.request("profile/open", {"path": str(path)})["profileId"]
    r = plain.request("agent/ask", {"profileId": pid, "question": "What is the slowest kernel and is the GPU idle?"})
    check_schema("agent/ask", "result", r)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    top = db.execute(
        "SELECT s.value, SUM(k.end - k.start), COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.shortName GROUP BY s.value ORDER BY 2 DESC LIMIT 1").fetchone()
    all_k = db.execute("SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    iv = [tuple(x) for x in db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0")]
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        try:
            iv += [tuple(x) for x in db.execute(f"SELECT start, end FROM {t} WHERE deviceId = 0")]
        except sqlite3.Error:
            pass
    db.close()
    kernels = next(e for e in r["evidence"] if e["id"] == "top_kernels")["data"]["kernels"]
    assert kernels[0]["name"] == top[0] and kernels[0]["totalNs"] == top[1] and kernels[0]["count"] == top[2]
    assert kernels[0]["pctKernelTime"] == pytest.approx(100.0 * top[1] / all_k)
    assert top[0] in r["answer"]
    busy, s0, e0 = union_len(iv)
    dev = next(e for e in r["evidence"] if e["id"] == "gpu_utilization")["data"]["devices"][0]
    assert dev["busyNs"] == busy and dev["spanNs"] == e0 - s0
    assert f"{100.0 * busy / (e0 - s0):.1f}%" in r["answer"]


def test_nccl_overlap_matches_sql(plain):
    path = need_real("nsys2026_2gpu_nccl_before")
    pid = plain.request("profile/open", {"path": str(path)})["profileId"]
    r = plain.request("agent/ask", {"profileId": pid, "question": "How much NCCL time is overlapped?"})
    comm = next(e for e in r["evidence"] if e["id"] == "communication")["data"]
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                      "JOIN StringIds s ON s.id = k.shortName").fetchall()
    db.close()
    nccl = [r_ for r_ in rows if r_[3].startswith("nccl")]
    assert comm["commKernels"] == len(nccl)
    assert comm["commSumNs"] == sum(e - s for _, s, e, _ in nccl)
    union = 0
    for dev in {r_[0] for r_ in rows}:
        union += union_len([(s, e) for d, s, e, n in nccl if d == dev])[0]
    assert comm["commUnionNs"] == union


def have_strace() -> bool:
    if not shutil.which("strace"):
        return False
    return subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not have_strace(), reason="strace is not installed or ptrace is not permitted")
def test_no_network_socket_without_llm(tmp_path, small_profile):
    # LeakSanitizer cannot run under ptrace: sanitizer builds skip leak checks here
    asan = (os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    env = dict(os.environ, **NO_LLM, NSYS_AI_CACHE_DIR=str(tmp_path), NSYS_AI_NO_PROGRESS="1", ASAN_OPTIONS=asan)
    trace = tmp_path / "trace.txt"
    for args in (["explain", str(small_profile), "flash_fwd_kernel"],
                 ["ask", str(small_profile), "Which kernel is slow and is NCCL overlapped?"]):
        p = subprocess.run(["strace", "-f", "-e", "trace=network", "-o", str(trace), server_binary(), *args],
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        text = trace.read_text()
        assert "AF_INET" not in text and "connect(" not in text, text[:2000]
    # the server too: a wrapper runs `nsys-ai serve` under strace
    wrapper = tmp_path / "nsys-ai-traced"
    wrapper.write_text(f"#!/bin/sh\nexec strace -f -e trace=network -o {trace} {server_binary()} \"$@\"\n")
    wrapper.chmod(0o755)
    old = os.environ.get("NSYS_AI_BIN")
    os.environ["NSYS_AI_BIN"] = str(wrapper)
    try:
        s = Server(env={**NO_LLM, "NSYS_AI_CACHE_DIR": str(tmp_path), "ASAN_OPTIONS": asan})
        pid = s.request("profile/open", {"path": str(small_profile)})["profileId"]
        s.request("kernel/explain", {"profileId": pid, "name": "flash_fwd_kernel"})
        s.request("agent/ask", {"profileId": pid, "question": "what is slow?"})
        s.close()
    finally:
        if old is None:
            del os.environ["NSYS_AI_BIN"]
        else:
            os.environ["NSYS_AI_BIN"] = old
    text = trace.read_text()
    assert "AF_INET" not in text and "connect(" not in text, text[:2000]


def test_cli_ask(tmp_path, small_profile):
    env = dict(os.environ, **NO_LLM, NSYS_AI_CACHE_DIR=str(tmp_path), NSYS_AI_NO_PROGRESS="1")
    p = subprocess.run([server_binary(), "ask", str(small_profile), "what is slow?"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0 and "Evidence from the profile" in p.stdout
    p = subprocess.run([server_binary(), "ask", str(small_profile), "what is slow?", "--llm"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 2 and "LLM" in p.stderr


def test_runs_registered_analyses(plain, small_profile):
    """Questions about sync/overlap also run the analysis module's analyses,
    and the evidence carries exactly their analysis/run summaries."""
    pid = plain.request("profile/open", {"path": str(small_profile)})["profileId"]
    listed = {a["name"] for a in plain.request("analysis/list", {})["analyses"]}
    if not {"overlap", "sync_cost"} <= listed:
        pytest.skip("analysis module without overlap/sync_cost")
    r = plain.request("agent/ask", {"profileId": pid, "question": "Is NCCL overlapped, and do syncs block the GPU?"})
    check_schema("agent/ask", "result", r)
    assert "analysis:overlap" in r["analyses"] and "analysis:sync_cost" in r["analyses"]
    for name in ("overlap", "sync_cost"):
        ev = next(e for e in r["evidence"] if e["id"] == f"analysis:{name}")
        direct = plain.request("analysis/run", {"profileId": pid, "name": name})
        assert ev["data"] == direct["summary"]
        assert ev["facts"]
